"""The ``embdebias`` command: a thin layer over the Python API.

Every subcommand parses its arguments, calls one API function and prints the result.
Errors from bad input (:class:`embdebias.errors.EmbdebiasError`, missing files) become
one line on stderr and exit status 2, without a traceback.

Interrupts: Ctrl-C (SIGINT) and SIGTERM unwind the command like an exception, so every
temporary file is removed and every output is either complete or untouched; the exit
status is then 130 (SIGINT) or 143 (SIGTERM), as a shell reports for a killed process.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import warnings

from .errors import EmbdebiasError

DEFAULT = "glove-6b-50d"


def _seed(text: str) -> int:
    """argparse type of --seed: what numpy's generators accept."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**32 - 1, got {value}")
    return value


def _count(text: str, least: int = 0) -> int:
    """argparse type of counts that must be >= ``least``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
    return value


def _positive(text: str) -> int:
    return _count(text, 1)


def _rate(text: str) -> float:
    """argparse type of --sample: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _fraction(text: str) -> float:
    """argparse type of --max-missing: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _precision_target(text: str):
    """argparse type of --target-precision: a number in (0, 1], or "none"."""
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1] or 'none', got {text}")
    return value


def _max_rank(text: str):
    """argparse type of --max-rank: a positive count, "n_train" or "all"."""
    if text in ("n_train", "all"):
        return None if text == "all" else text
    return _positive(text)


class _Printer:
    def __init__(self, quiet: bool):
        self.quiet = quiet

    def __call__(self, *args):
        if not self.quiet:
            print(*args, file=sys.stderr, flush=True)


def _prepare_output(args, target, say, *, vectors: bool = False, **kwargs):
    """Every command that writes checks its output here first (see ``_atomic.prepare_output``).

    ``vectors``: the output is a vector file in ``args.format`` (or the format its name asks
    for), whose companion files (gensim-kv's ``.vectors.npy``) are checked with it.
    """
    from ._atomic import prepare_output

    if vectors:
        from .io import guess_format_from_path, output_companions

        for companion in output_companions(target, args.format or guess_format_from_path(target)):
            prepare_output(companion, force=args.force, **kwargs)
    return prepare_output(target, force=args.force, log=say, **kwargs)


# --------------------------------------------------------------------------- commands
def cmd_debias(args, say) -> int:
    from .debias.api import debias_file

    _prepare_output(args, args.out, say, vectors=True, inputs=(args.input,))
    t0 = time.perf_counter()
    params = dict(definitional=args.definitional, n_components=args.components,
                  gender_specific=args.specific, lists=args.lists)
    if args.method == "hard":
        params["equalize"] = args.equalize
        given = [opt for opt, value in (("--expand", args.expand), ("--seeds", args.seeds),
                                        ("--lambda", args.lam), ("--seed", args.seed)) if value]
        if given:
            raise EmbdebiasError(f"{' and '.join(given)} apply to --method soft only "
                                 "(hard debias has no weight, no randomness and keeps the "
                                 "gender-specific list as given)")
    else:
        params.update(lam=0.2 if args.lam is None else args.lam,
                      random_state=0 if args.seed is None else args.seed)
        if args.equalize:
            raise EmbdebiasError("--equalize applies to --method hard only")
        if args.seeds and not args.expand:
            raise EmbdebiasError("--seeds needs --expand")
        if args.expand:
            if args.specific:
                raise EmbdebiasError("--specific and --expand exclude each other: give the seeds "
                                     "of the expansion with --seeds")
            from .debias.expand import GenderSpecificExpander

            params["gender_specific"] = GenderSpecificExpander(args.seeds, lists=args.lists,
                                                               random_state=params["random_state"])
    result, debiaser = debias_file(args.input, args.out, method=args.method, format=args.format,
                                   input_format=args.input_format, limit=args.limit,
                                   unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle,
                                   progress=not args.quiet, **params)
    sub = debiaser.subspace_
    say(f"bias subspace: {len(sub.pairs_used_)} definitional pairs, k={sub.components_.shape[0]}, "
        f"explained variance {', '.join(f'{r:.3f}' for r in sub.explained_variance_ratio_[:sub.components_.shape[0]])}")
    if hasattr(debiaser, "report"):  # soft: solver, status, objective terms, expansion
        say(debiaser.report())
    say(f"{args.method}-debiased {len(result)} x {result.dim} -> {args.out} "
        f"({time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_convert(args, say) -> int:
    from . import io

    _prepare_output(args, args.output, say, vectors=True, inputs=(args.input,))
    t0 = time.perf_counter()
    io.convert(args.input, args.output, format=args.format, src_format=args.input_format, limit=args.limit,
               unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle)
    say(f"wrote {args.output} ({time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_info(args, say) -> int:
    from . import io

    desc = io.describe(args.input, format=args.input_format, limit=args.limit,
                       unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle)
    if args.json:
        print(json.dumps(desc, indent=2, default=str))
    else:
        width = max(map(len, desc))
        for k, v in desc.items():
            if isinstance(v, float):
                v = f"{v:.6g}"
            print(f"{k:<{width}}  {v}")
    return 0


def cmd_expand(args, say) -> int:
    from . import io
    from .debias.expand import expand_gender_specific

    _prepare_output(args, args.out, say, inputs=(args.input,))
    emb = io.load(args.input, format=args.input_format, limit=args.limit, unicode_errors=args.unicode_errors,
                  trust_pickle=args.trust_pickle)
    result = expand_gender_specific(emb, seed=args.seeds, lists=args.lists, n_train=args.n_train,
                                    target_precision=args.target_precision,
                                    max_rank=args.max_rank, random_state=args.seed)
    result.save(args.out, inputs=(args.input,))
    say(result.summary())
    return 0


def cmd_score(args, say) -> int:
    from .evaluation import evaluate, suite_options

    if args.out:
        _prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = _load_many(args)
    options = suite_options(args.tests) if args.tests else {}
    # the metric options go through options= (issue 19); BAT's SemBias file is one
    options.setdefault("options", {}).setdefault("bat", {})["sembias"] = args.sembias
    report = evaluate(embeddings, random_state=args.seed, strict=args.strict,
                      max_missing=args.max_missing, lists=args.lists, **options)
    text = json.dumps(report.to_dict(), indent=2) if args.json else report.to_markdown()
    if args.out:
        from ._atomic import atomic_file

        with atomic_file(args.out, inputs=args.inputs) as tmp:
            tmp.write_text(text + "\n", encoding="utf-8")
        say(f"wrote {args.out}")
    else:
        print(text)
    return 0


def cmd_plot(args, say) -> int:
    from .plot import plot_occupations

    _prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = _load_many(args)
    path = plot_occupations(embeddings, args.out, words=args.words, top=args.top, lists=args.lists,
                            max_missing=args.max_missing)
    say(f"wrote {path}")
    return 0


def cmd_run(args, say) -> int:
    from .run import MARKER, STATE, run_pipeline

    # Re-running into the same directory resumes it: no --force needed. run_pipeline then
    # checks every file of its output plan before any work.
    _prepare_output(args, args.out_dir, say, resumable=(MARKER, STATE))
    report = run_pipeline(args.input, args.out_dir, format=args.format, input_format=args.input_format,
                          limit=args.limit, lam=args.lam, n_components=args.components,
                          n_train=args.n_train, random_state=args.seed, lists=args.lists,
                          definitional=args.definitional, equalize=args.equalize,
                          gender_specific=args.specific, expand=args.expand, seeds=args.seeds,
                          unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle,
                          force=args.force, log=say,
                          progress=not args.quiet,
                          evaluate_kwargs={"max_missing": args.max_missing, "sembias": args.sembias,
                                           "strict": args.strict})
    say(f"done: {report}")
    return 0


def cmd_cda(args, say) -> int:
    from .cda import CounterfactualAugmenter

    _prepare_output(args, args.out, say, inputs=(args.corpus,))
    if args.json_stats:
        _prepare_output(args, args.json_stats, say, inputs=(args.corpus, args.out))
    cda = CounterfactualAugmenter(pairs=args.pairs, names=args.names_file or args.names, mode=args.mode,
                                  intervention=args.intervention, unicode_errors=args.unicode_errors)
    stats = cda.augment_file(args.corpus, args.out, progress=not args.quiet)
    say(stats.summary(top=args.top))
    say(f"wrote {args.out} ({args.mode}, {args.intervention} intervention)")
    if args.json_stats:
        from ._atomic import atomic_file

        report = {"corpus": str(args.corpus), "out": str(args.out), "mode": args.mode,
                  "intervention": args.intervention, **cda.lexicon_.sources, **stats.to_dict()}
        with atomic_file(args.json_stats, inputs=(args.corpus, args.out)) as tmp:
            tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        say(f"wrote {args.json_stats}")
    return 0


def cmd_train(args, say) -> int:
    from .corpus import check_corpus_path
    from .train import train_embedding

    check_corpus_path(args.corpus)  # a missing corpus or a directory is named first
    _prepare_output(args, args.out, say, vectors=True, inputs=(args.corpus,))
    params = {"sg": int(args.arch == "skipgram"), "vector_size": args.dim, "window": args.window,
              "min_count": args.min_count, "epochs": args.epochs, "negative": args.negative,
              "sample": args.sample, "workers": args.workers, "seed": args.seed,
              "lowercase": not args.keep_case, "unicode_errors": args.unicode_errors}
    if args.token_pattern is not None:
        params["token_pattern"] = args.token_pattern
    fasttext = {name: value for name, value in (("min_n", args.min_n), ("max_n", args.max_n),
                                                ("bucket", args.bucket)) if value is not None}
    if fasttext and args.model != "fasttext":
        given = " and ".join(f"--{name.replace('_', '-')}" for name in fasttext)
        raise EmbdebiasError(f"{given} appl{'ies' if len(fasttext) == 1 else 'y'} to --model fasttext only")
    t0 = time.perf_counter()
    emb = train_embedding(args.corpus, args.out, args.model, format=args.format, transform=_cda_transform(args),
                          progress=not args.quiet, log=say, **params, **fasttext)
    say(f"wrote {len(emb)} x {emb.dim} {args.model} vectors -> {args.out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _cda_transform(args):
    """``--cda``: the counterfactual augmenter's ``augment`` (lines -> lines), or None without it."""
    options = dict(_key_value(item) for item in args.cda_option or ())
    if args.cda_mode is not None:
        options["mode"] = args.cda_mode
    if not args.cda:
        if options:
            raise EmbdebiasError("--cda-mode and --cda-option need --cda")
        return None
    from .cda import CounterfactualAugmenter

    try:
        augmenter = CounterfactualAugmenter(**options).fit()
    except (TypeError, ValueError) as exc:
        raise EmbdebiasError(f"--cda options not accepted: {exc}") from None
    return augmenter.augment


def _key_value(text: str) -> tuple[str, str]:
    from .errors import quote

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise EmbdebiasError(f"--cda-option takes KEY=VALUE, got {quote(text)}")
    return key.strip().replace("-", "_"), value


def cmd_fairness(args, say) -> int:
    from . import fairness
    from .fairness.scores_file import audit_dict, audit_text

    names = args.metric or []
    if args.list_metrics or any(n.strip().lower() == "list" for n in names):
        return _list_metrics(args.json)
    specs = _fairness_specs(args, names)
    table = fairness.read_scores_csv(args.scores, id_col=args.id_col, group_col=args.group_col,
                                     score_col=args.score_col, template_col=args.template_col,
                                     label_col=args.label_col, unicode_errors=args.unicode_errors,
                                     metrics=[spec.name for spec in specs])
    options = {"group_order": args.group_order, "threshold": args.threshold, "true_class": args.true_class}
    if args.background_group is not None:
        options["background"] = fairness.background(group=args.background_group)
    results = {spec.name: table.metric(spec.name, **options) for spec in specs}
    report = audit_dict(table, results, true_class=args.true_class)
    print(json.dumps(report, indent=2) if args.json else audit_text(report))
    return 0


def _fairness_specs(args, names: list[str]) -> list:
    """The registry entries of ``--metric`` (each once), checked before the file is read."""
    from .fairness import get_metric
    from .fairness.registry import SOURCE

    if not names:
        raise EmbdebiasError("give at least one --metric NAME ('--metric list' shows them)")
    if args.scores is None:
        raise EmbdebiasError("give the scores file: embdebias fairness SCORES.csv --metric NAME")
    specs = list({spec.name: spec for spec in map(get_metric, names)}.values())
    for spec in specs:
        if spec.background == SOURCE and args.background_group is None:
            raise EmbdebiasError(
                f"{spec.name} compares every counterfactual with the unperturbed source example of its "
                "template: give those examples a group of their own and name it with --background-group, "
                f"or use {spec.name}_pcm for templates without a source example")
    return specs


def _list_metrics(as_json: bool) -> int:
    """``embdebias fairness --metric list``: the registry, one metric a line."""
    from .fairness import METRICS

    if as_json:
        print(json.dumps([{"name": s.name, "title": s.title, "description": s.describe(), "form": s.form,
                           "generalized": s.generalized, "needs_labels": s.needs_labels,
                           "aliases": list(s.aliases)} for _, s in sorted(METRICS.items())], indent=2))
        return 0
    width = max(map(len, METRICS))
    for name in sorted(METRICS):
        spec = METRICS[name]
        needs = [what for what, needed in (("labels", spec.needs_labels),
                                           ("templates", spec.form == "counterfactual")) if needed]
        print(f"{name:<{width}}  {spec.describe()}" + (f" [needs {' and '.join(needs)}]" if needs else ""))
    return 0


def _load_many(args) -> dict:
    """The inputs of ``score``/``plot`` by name (repeated names get " (2)", " (3)", ...)."""
    from . import io

    embeddings = {}
    for src in args.inputs or [DEFAULT]:
        emb = io.load(src, format=args.input_format, limit=args.limit, unicode_errors=args.unicode_errors,
                      trust_pickle=args.trust_pickle)
        name, i = emb.name, 2
        while name in embeddings:
            name, i = f"{emb.name} ({i})", i + 1
        embeddings[name] = emb
    return embeddings


# --------------------------------------------------------------------------- parser
def _input_opts(p):
    """Options of every command that reads vector files."""
    p.add_argument("--input-format", default="auto", metavar="FMT",
                   help="format of the input (default: detected from the content); a format the file "
                        "cannot be is an error naming the line or byte offset")
    p.add_argument("--limit", type=_positive, default=None, metavar="N",
                   help="keep only the first N words (file order is frequency order)")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8 in the words of a word2vec, fastText or GloVe file: an error "
                        "naming the byte offset (strict, default), drop the bytes (ignore) or put U+FFFD "
                        "in their place (replace), as gensim's unicode_errors")
    p.add_argument("--trust-pickle", action="store_true",
                   help="load gensim .kv/.model pickles with gensim's own unpickler, which runs any code the "
                        "file names: only for files you trust (default: a restricted reader that admits only "
                        "what a KeyedVectors file needs; fastText KeyedVectors and gensim 3 files need this)")


def _force_opt(p):
    p.add_argument("--force", action="store_true",
                   help="replace an existing output (by default it is kept and the command fails)")


def _lists_opt(p):
    p.add_argument("--lists", choices=["published", "curated"], default="published",
                   help="bundled list set for every list not given: 'published' (Bolukbasi et al. 2016, "
                        "SemBias of Zhao et al. 2018; comparable with the literature; default) or "
                        "'curated' (the embdebias authors' lists)")


def _scoring_opts(p, *, max_missing: float = 0.2, strict: bool = True):
    p.add_argument("--max-missing", type=_fraction, default=max_missing, metavar="F",
                   help="a word set that loses more than this fraction of its words to the vocabulary "
                        f"is not scored (default {max_missing})")
    if strict:
        p.add_argument("--strict", action="store_true",
                       help="stop with an error on the first test that cannot be scored (default: leave "
                            "its cells empty, say why in the report and go on)")


def _list_file_opts(p, *, equalize=True, expand=True):
    p.add_argument("--definitional", metavar="FILE",
                   help="definitional pairs file (default: the list set's ten pairs)")
    if equalize:
        p.add_argument("--equalize", metavar="FILE", help="equalize pairs file (hard only; default: the list set's)")
    p.add_argument("--specific", metavar="FILE",
                   help="gender-specific words kept by debiasing (default: the list set's; published: "
                        "Bolukbasi et al.'s full list of 1,441 words)")
    if expand:
        p.add_argument("--expand", action="store_true",
                       help="soft debias keeps the SVM expansion of the seed words instead of the "
                            "gender-specific list (opt-in; see 'embdebias expand')")
        p.add_argument("--seeds", metavar="FILE", help="seed words of --expand (default: the list set's; "
                                                       "published: Bolukbasi et al.'s 218)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    formats = "native, word2vec-bin, word2vec-text, glove, fasttext-vec, fasttext-bin, gensim-kv"
    parser = argparse.ArgumentParser(
        prog="embdebias",
        description="Measure and remove gender bias in static word embeddings. "
                    f"INPUT is a vector file ({formats}) or '{DEFAULT}' (the built-in GloVe 6B 50d).")
    parser.add_argument("--version", action="version", version=f"embdebias {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")
    # --quiet is accepted before or after the subcommand; SUPPRESS keeps a subcommand
    # that was not given it from resetting the top-level value.
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bars or messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("debias", parents=[quiet], help="debias a vector file (hard or soft)",
                       description="Debias an embedding and write the result atomically.")
    p.add_argument("input", nargs="?", default=DEFAULT, help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--method", choices=["hard", "soft"], default="hard",
                   help="hard: neutralize + equalize (default); soft: the soft-debias SDP")
    p.add_argument("--out", required=True, help="output path (a native-format directory unless --format "
                                                "or the extension says otherwise)")
    p.add_argument("--format", default=None, metavar="FMT", help=f"output format: {formats}")
    _list_file_opts(p)
    _lists_opt(p)
    p.add_argument("--components", type=_positive, default=1, metavar="K", help="dimension of the bias subspace")
    p.add_argument("--lambda", dest="lam", type=float, default=None, metavar="L",
                   help="soft only: weight of the bias term (default 0.2)")
    p.add_argument("--seed", type=_seed, default=None, help="soft only: seed of the --expand SVM (default 0)")
    _input_opts(p)
    _force_opt(p)
    p.set_defaults(func=cmd_debias)

    p = sub.add_parser("convert", parents=[quiet], help="convert a vector file to another format")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--format", default=None, metavar="FMT", help=f"output format: {formats}")
    _input_opts(p)
    _force_opt(p)
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("info", parents=[quiet], help="format, size, dimension and norms of a vector file")
    p.add_argument("input", nargs="?", default=DEFAULT)
    p.add_argument("--json", action="store_true")
    _input_opts(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("expand", parents=[quiet], help="expand the gender-specific word list with a linear SVM")
    p.add_argument("input", nargs="?", default=DEFAULT)
    p.add_argument("--out", required=True, help="output word list (one word per line)")
    p.add_argument("--seeds", metavar="FILE", help="seed words (default: the list set's; published: "
                                                   "Bolukbasi et al.'s 218)")
    _lists_opt(p)
    p.add_argument("--n-train", type=_positive, default=50_000, metavar="N",
                   help="train on the N most frequent words (default 50000)")
    p.add_argument("--target-precision", type=_precision_target, default=0.8, metavar="P",
                   help="choose the SVM threshold for this cross-validated precision on held-out "
                        "seeds (default 0.8; 'none': the SVM's own rule, decision > 0)")
    p.add_argument("--max-rank", type=_max_rank, default="n_train", metavar="N",
                   help="label only the N most frequent words (default: n_train, the training "
                        "words; 'all': the whole vocabulary)")
    p.add_argument("--seed", type=_seed, default=0)
    _input_opts(p)
    _force_opt(p)
    p.set_defaults(func=cmd_expand)

    p = sub.add_parser("score", parents=[quiet], help="bias and quality metrics for one or more embeddings")
    p.add_argument("inputs", nargs="*", metavar="INPUT")
    p.add_argument("--json", action="store_true", help="JSON instead of Markdown tables")
    p.add_argument("--tests", nargs="+", metavar="TEST",
                   help="what to run: metric names (weat rnsb ect bat direct_bias indirect_bias residual analogies "
                        "extrinsic similarity analogy; analogies is not in the default suite), "
                        "WEAT groups (gender caliskan) or WEAT test ids (default: the full suite)")
    p.add_argument("--sembias", metavar="FILE",
                   help="SemBias-format file for BAT (default: the list set's; published: Zhao et al.'s 440 lines)")
    _lists_opt(p)
    p.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    _scoring_opts(p)
    p.add_argument("--seed", type=_seed, default=0, help="seed of every random step (default 0)")
    _input_opts(p)
    _force_opt(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("plot", parents=[quiet],
                       help="occupations projected on the gender direction, one panel per input")
    p.add_argument("inputs", nargs="*", metavar="INPUT")
    p.add_argument("--out", required=True, help="figure path (.png, .svg or .pdf)")
    p.add_argument("--words", metavar="FILE", help="occupation list (default: the list set's professions)")
    _lists_opt(p)
    p.add_argument("--top", type=_count, default=20, metavar="N",
                   help="show the N most she-leaning and N most he-leaning occupations (default 20)")
    _scoring_opts(p, max_missing=0.5, strict=False)
    _input_opts(p)
    _force_opt(p)
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("run", parents=[quiet], help="the main job: debias both ways, evaluate, plot, report")
    p.add_argument("input", nargs="?", default=DEFAULT, help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--out-dir", required=True,
                   help="directory for every output (a re-run into it reuses the finished steps)")
    p.add_argument("--format", default="native", metavar="FMT",
                   help=f"format of the debiased embeddings: {formats} (default native)")
    p.add_argument("--components", type=_positive, default=1, metavar="K",
                   help="dimension of the bias subspace (default 1)")
    p.add_argument("--lambda", dest="lam", type=float, default=0.2, metavar="L",
                   help="soft debias: weight of the bias term (default 0.2)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of every random step (default 0)")
    p.add_argument("--n-train", type=_positive, default=50_000, metavar="N",
                   help="--expand: train the SVM on the N most frequent words (default 50000)")
    _scoring_opts(p)
    p.add_argument("--sembias", metavar="FILE",
                   help="SemBias-format file for BAT (default: the list set's; published: Zhao et al.'s 440 lines)")
    _lists_opt(p)
    _list_file_opts(p)
    p.add_argument("--force", action="store_true",
                   help="recompute every step, and write into an existing directory that is not an "
                        "earlier run's output, replacing only files named as the run's outputs "
                        "(re-running into the same directory resumes it)")
    _input_opts(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("cda", parents=[quiet], help="counterfactual data augmentation of a text corpus",
                       description="Swap gendered words (he/she, king/queen, ...; Lu et al.'s pairs) in a "
                                   "text corpus, one sentence a line, plain or gzip. Two-sided by default: "
                                   "every line is kept and each line with a gendered word is followed by "
                                   "its counterfactual. The output is written atomically (gzip if its "
                                   "name ends in .gz); the input is never changed.")
    p.add_argument("corpus", metavar="CORPUS", help="UTF-8 text file (gzip detected by its magic bytes)")
    p.add_argument("--out", required=True, metavar="AUGMENTED", help="output text file (.gz: compressed)")
    p.add_argument("--mode", choices=["two-sided", "replace"], default="two-sided",
                   help="two-sided: keep each line and add its counterfactual (default); replace: "
                        "write the counterfactual instead")
    p.add_argument("--intervention", choices=["grammatical", "naive"], default="grammatical",
                   help="grammatical: her -> him/his by the next word, words beside a proper noun kept "
                        "(default); naive: every dictionary word swapped, her -> his")
    p.add_argument("--pairs", metavar="FILE",
                   help="gender pairs, one 'male female' pair a line (default: Lu et al.'s 124 pairs, "
                        "her:him/his and himself:herself)")
    p.add_argument("--names", action="store_true", help="swap first names too (the bundled 60 pairs)")
    p.add_argument("--names-file", metavar="FILE", help="swap first names from this pair file instead")
    p.add_argument("--top", type=_count, default=10, metavar="N",
                   help="the report lists the N most swapped pairs (default 10)")
    p.add_argument("--json-stats", metavar="FILE", help="also write the statistics as JSON")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8: an error naming the line and byte offset (strict, default), "
                        "drop the bytes (ignore) or put U+FFFD in their place (replace), as gensim's")
    _force_opt(p)
    p.set_defaults(func=cmd_cda)
    p = sub.add_parser("train", parents=[quiet], help="train word2vec or fastText vectors on a text corpus",
                       description="Train word vectors on a text corpus with gensim, streamed from disk (one "
                                   "pass for the vocabulary, one per epoch), on every core, seeded, and write "
                                   "them atomically at the end. CORPUS is UTF-8 text, plain or gzip, one "
                                   "sentence or paragraph a line; it is lower-cased and split into runs of "
                                   "letters, digits and underscores with inner ' or - (punctuation dropped).")
    p.add_argument("corpus", metavar="CORPUS", help="text file (UTF-8, plain or gzip)")
    p.add_argument("--model", default="word2vec", metavar="NAME", help="word2vec (default) or fasttext")
    p.add_argument("--out", required=True, help="output path (a native-format directory unless --format or "
                                                "the extension says otherwise; a fastText model written as "
                                                ".ft.bin keeps its sub-word n-grams)")
    p.add_argument("--format", default=None, metavar="FMT", help=f"output format: {formats}")
    p.add_argument("--arch", choices=["skipgram", "cbow"], default="skipgram",
                   help="skip-gram (default: better on small corpora and rare words) or CBOW (faster)")
    p.add_argument("--dim", type=_positive, default=100, metavar="D", help="vector dimension (default 100)")
    p.add_argument("--window", type=_positive, default=5, metavar="N", help="context window (default 5)")
    p.add_argument("--min-count", type=_positive, default=5, metavar="N",
                   help="ignore words with fewer occurrences (default 5)")
    p.add_argument("--epochs", type=_positive, default=5, metavar="N", help="passes over the corpus (default 5)")
    p.add_argument("--negative", type=_positive, default=5, metavar="N", help="negative samples (default 5)")
    p.add_argument("--sample", type=_rate, default=1e-3, metavar="T",
                   help="down-sampling threshold of frequent words (default 0.001; 0: off)")
    p.add_argument("--workers", type=_positive, default=None, metavar="N",
                   help="training threads (default: every core; 1: bit-for-bit reproducible)")
    p.add_argument("--seed", type=_seed, default=0, help="gensim's seed (default 0)")
    p.add_argument("--min-n", type=_positive, default=None, metavar="N",
                   help="fastText: shortest character n-gram (default 3)")
    p.add_argument("--max-n", type=_positive, default=None, metavar="N",
                   help="fastText: longest character n-gram (default 6)")
    p.add_argument("--bucket", type=_positive, default=None, metavar="N",
                   help="fastText: n-gram hash buckets (default 2000000; a .ft.bin output holds N x D floats)")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the corpus")
    p.add_argument("--token-pattern", default=None, metavar="REGEX",
                   help="Python regular expression of a token (default: runs of letters, digits and "
                        "underscores with inner ' or -, embdebias.corpus.TOKEN_PATTERN)")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8 in the corpus: an error naming the line and byte offset (strict, "
                        "default), drop the bytes (ignore) or put U+FFFD in their place (replace)")
    p.add_argument("--cda", action="store_true",
                   help="train on the counterfactually augmented stream (embdebias.cda), never written to disk")
    p.add_argument("--cda-mode", metavar="MODE", help="--cda: the augmenter's mode (e.g. two-sided, replace)")
    p.add_argument("--cda-option", action="append", metavar="KEY=VALUE",
                   help="--cda: another option of the augmenter, passed on as a string (repeatable)")
    _force_opt(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("fairness", parents=[quiet], help="extrinsic fairness metrics of a classifier's scores (CSV)",
                       description="Compute fairness metrics of embdebias.fairness's registry on the scores "
                                   "a classifier gave: a CSV file with a header row and one example a row. "
                                   "Columns (names in any case): example id (id, example_id, example), "
                                   "group (group, protected_group, identity), score (score, prob, "
                                   "probability), optionally the counterfactual template (template, "
                                   "template_id; the counterfactual metrics need it) and the gold label "
                                   "(label, gold, y; 0 or 1). Other columns are ignored.")
    p.add_argument("scores", nargs="?", metavar="SCORES.csv", help="the scores file")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="a registry metric (repeat for several); 'list' lists them")
    p.add_argument("--list-metrics", action="store_true", help="list the registry's metrics and exit")
    p.add_argument("--json", action="store_true", help="JSON instead of text tables")
    p.add_argument("--group-order", nargs="+", metavar="G",
                   help="the groups in this order (default sorted); the first is x in the two-group "
                        "metrics' x - y and x / y")
    p.add_argument("--background-group", metavar="G",
                   help="BCM/VBCM metrics: compare every group with this group's examples (for cf_gap "
                        "and pert_ss, the unperturbed source examples)")
    p.add_argument("--true-class", type=int, choices=[0, 1], default=None,
                   help="the '(TC)' variant: only examples of this gold label, scored by its probability")
    p.add_argument("--threshold", type=float, default=0.5, metavar="T",
                   help="predicted positive means score >= T (default 0.5)")
    for role in ("id", "group", "score", "template", "label"):
        p.add_argument(f"--{role}-col", metavar="NAME", help=f"name of the {role} column")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8: an error naming the line (strict, default), drop the bytes "
                        "(ignore) or put U+FFFD in their place (replace)")
    p.set_defaults(func=cmd_fairness)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that cleanup runs as for Ctrl-C (exit status 143)."""


def _on_sigterm(signum, frame):
    # A second SIGTERM must not cut the cleanup of the first short (SIGKILL still works).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def _handle_sigterm():
    """Install :func:`_on_sigterm` and return the handler it replaces (None: not installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _on_sigterm)


def main(argv=None) -> int:
    try:  # Ctrl-C while the arguments are parsed ends like one later: one line, no traceback
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    say = _Printer(args.quiet)
    previous = _handle_sigterm()
    try:
        # Warnings become one line each (or nothing with --quiet) inside this call only:
        # catch_warnings restores the caller's filters and showwarning afterwards.
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore")
            else:
                warnings.showwarning = lambda msg, cat, *a, **k: say(f"warning: {msg}")
            return _run(args, say)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _one_line(message: str, limit: int = 600) -> str:
    """An error message as one line of bounded length, whatever input it quotes."""
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return message if len(message) <= limit else f"{message[:limit]}... ({len(message) - limit:,} more characters)"


def _run(args, say) -> int:
    try:
        return args.func(args, say)
    except EmbdebiasError as exc:
        print(f"embdebias: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``embdebias info x | head``): not an error of ours.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # missing files, permissions, a full disk, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"embdebias: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return _interrupted(exc)


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Say how the command was stopped; its exit status (143 for SIGTERM, 130 for Ctrl-C)."""
    terminated = isinstance(exc, Terminated)
    print(f"embdebias: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130


if __name__ == "__main__":
    sys.exit(main())
