"""``embdebias benchmark``: every eraser on the shared split, fresh probes over seeds (:mod:`embdebias.benchmark`)."""

from __future__ import annotations

from .. import _validation


def add_parser(sub, parents) -> None:
    from ..benchmark import ERASERS, FILES, PROTOCOLS
    from ._common import DEFAULT, attribute_opt, force_opt, lists_opt
    from ..pipeline.options import add_arguments

    p = sub.add_parser("benchmark", parents=parents,
                       help="run every eraser on the shared split and probe what is left (linear, RBF-SVM, MLP)",
                       description="Fit every eraser (or those of --methods) on Ravfogel et al.'s split of "
                                   "EMBEDDING's most male-, female-biased and neutral words by he - she, for each "
                                   "seed, then train fresh probes (logistic regression, RBF-SVM, MLP) and measure "
                                   "the certificate, the V-measure of 2-means, the distortion, the rank removed and "
                                   "the quality tests. Writes " + ", ".join(FILES) + " into --out-dir (all at "
                                   "once) and prints the table, with the published GloVe 42B figures beside it.")
    p.add_argument("embedding", nargs="?", default=DEFAULT, metavar="EMBEDDING",
                   help=f"a vector file or '{DEFAULT}' (default: the built-in GloVe 6B 50d)")
    p.add_argument("--methods", default="all", metavar="NAME[,...]",
                   help=f"erasers to run (default all: {', '.join(ERASERS)}; any method of 'embdebias debias' "
                        "may be named too)")
    p.add_argument("--seeds", type=_validation.POSITIVE.parse, default=5, metavar="N",
                   help="seeds 0 .. N-1: each draws the split and seeds the erasers and probes (default 5)")
    p.add_argument("--protocol", choices=PROTOCOLS, default="split",
                   help="split: probes train on the split's train words and are scored on its test words (the "
                        "published evaluation); heldout: both on words the eraser never saw (default split)")
    p.add_argument("--out-dir", default="embdebias-benchmark", metavar="DIR",
                   help="where the table, its per-seed values and the figure go (default: embdebias-benchmark)")
    p.add_argument("--no-quality", dest="quality", action="store_false",
                   help="skip the quality tests (word similarity, analogies), which run by default")
    p.add_argument("--dask", action="store_true", help="run the (method, seed) measurements on a local Dask "
                                                        "cluster (or --scheduler's), as 'embdebias sweep' does")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a running Dask scheduler (tcp://host:8786); its workers must see EMBEDDING at the same "
                        "path (implies --dask)")
    p.add_argument("--workers", type=_validation.POSITIVE.parse, default=None, metavar="N",
                   help="worker processes of the local Dask cluster (default: one per core)")
    add_arguments(p, names=("limit",))
    attribute_opt(p)
    lists_opt(p)
    force_opt(p)
    p.set_defaults(func=run_benchmark)


def run_benchmark(args, say) -> int:
    from ..benchmark import erasure_benchmark
    from ._common import one_attribute

    done = []

    def progress(task):
        done.append(task)
        say(f"[benchmark] {task.method}, seed {task.seed} done ({len(done)})")

    result = erasure_benchmark(args.embedding, methods=args.methods, seeds=args.seeds, protocol=args.protocol,
                               attribute=one_attribute(args), lists=args.lists, limit=args.limit,
                               quality=args.quality, out_dir=args.out_dir, force=args.force,
                               dask=args.dask, scheduler=args.scheduler, workers=args.workers,
                               progress=progress, log=say)
    print(result.to_markdown(), end="")
    say(f"wrote {args.out_dir}")
    return 0
