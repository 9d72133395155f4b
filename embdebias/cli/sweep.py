"""``embdebias sweep``: many embeddings, attributes, methods and settings at once, on Dask."""

from __future__ import annotations

import sys

from .. import _validation


def add_parser(sub, parents) -> None:
    p = sub.add_parser("sweep", parents=parents,
                       help="run a grid of embeddings x attributes x methods x parameters (on Dask when installed)",
                       description="Run every point of CONFIG.toml (embedding x attribute x method x parameters): "
                                   "fit, evaluate, store each point as it finishes, then write sweep.parquet, "
                                   "sweep.csv and summary.md with its figures into --out-dir. A re-run skips "
                                   "finished points and runs the failed ones again. Exit status: 0 when every "
                                   "point succeeded, 1 when some failed (the table and summary are written all "
                                   "the same; stderr says how many, one line per reason), 2 for a bad "
                                   "configuration or option (nothing is run).")
    p.add_argument("config", metavar="CONFIG.toml", help="the sweep's configuration (see embdebias.sweep.config)")
    p.add_argument("--out-dir", default="embdebias-sweep", metavar="DIR",
                   help="where the points, the table and summary go (default: embdebias-sweep)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a running Dask scheduler (tcp://host:8786); its workers must see the embeddings "
                        "at the same paths (default: a local cluster)")
    p.add_argument("--workers", type=_validation.POSITIVE.parse, default=None,
                   metavar="N", help="worker processes of the local cluster (default: one per core)")
    p.add_argument("--serial", action="store_true", help="run the points one after another in this process")
    p.add_argument("--attribute", metavar="NAME|FILE[,...]", default=None,
                   help="audit these attributes instead of the configuration's: bundled names (gender, race, "
                        "religion) or JSON attribute files, comma-separated")
    p.set_defaults(func=run_sweep)


#: The exit status of a sweep some of whose points failed (their errors are in the table).
FAILED_POINTS = 1


def run_sweep(args, say) -> int:
    from ..sweep import sweep
    from ..sweep.summary import failure_reasons
    from ._common import one_line as _one_line

    frame = sweep(args.config, args.out_dir, scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                  progress=not args.quiet, log=say, attributes=args.attribute)
    reasons = failure_reasons(frame)
    if not reasons:
        return 0
    # A failure is the command's outcome, not progress: said even with --quiet.
    failed, total = sum(n for n, _ in reasons), frame["key"].nunique()
    print(f"embdebias: sweep: {failed} of {total} point(s) failed ({len(reasons)} reason(s) below; every "
          f"error is in sweep.csv and summary.md)", file=sys.stderr)
    for n, reason in reasons:
        print(f"embdebias: sweep: {n} point(s): {_one_line(reason)}", file=sys.stderr)
    return FAILED_POINTS
