"""Reproduce the original / soft / hard bias tables for any embeddings.

For every input (a Word2Vec, GloVe or fastText file, a native directory; none: the
built-in GloVe 6B 50d) this runs the main job, :func:`embdebias.pipeline.run_pipeline`, into
``<out-dir>/<input name>/`` (a re-run reuses its finished steps) and prints Markdown
tables with the columns original / soft / hard:

* WEAT for the seven gender tests: effect size and p-value (from the run's report);
* RNSB per gender test: identity terms = the test's target sets ``X u Y`` (the male and
  female terms), sentiment classifier trained on the VADER lexicon, seeded.  The seven
  bundled tests share the same target sets, so these seven values coincide (it is
  computed once per distinct target set and said so under the table).  To give each
  test a figure of its own there is a second statistic, "RNSB (A vs B)": the same
  identity terms scored by a classifier trained on the test's own attribute sets (``A``
  as the positive, ``B`` as the "negative" class, the WEFE convention of using a query's
  attribute sets as the classifier's classes); it needs 10 in-vocabulary words per
  attribute set, so the 8-word tests show n/a;
* ECT per attribute set: male vs female terms over each distinct attribute set of the
  gender tests, and over the professions (the report's ECT rows are per test, over the
  union of a test's two attribute sets);
* BAT on the bundled SemBias-format set: Definition / Stereotype / None over all
  instances and over the held-out Sub subset (from the run's report);
* the path of the occupation plot.

With ``--families word2vec=FILE fasttext=FILE glove=FILE`` (any of the three; ``glove``
may be ``glove-6b-50d``) it lays out paper 004's Tables 1-4 instead, our numbers beside
Fersini et al.'s (see ``paper004.py``).

Usage::

    python benchmarks/reproduce.py                                  # the default GloVe 6B 50d
    python benchmarks/reproduce.py GoogleNews-vectors-negative300.bin glove.840B.300d.txt \
        wiki-news-300d-1M.vec --out-dir repro --limit 500000
    python benchmarks/reproduce.py --families word2vec=w2v.bin fasttext=ft.vec glove=glove-6b-50d
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _table import markdown_table  # noqa: E402

COLUMNS = ("original", "soft", "hard")
BAT_STATS = ("Definition", "Stereotype", "None")


def input_name(source) -> str:
    """The sub-directory name of an input: the default's name or the file's name."""
    from embdebias.io import DEFAULT_NAME

    if source is None or str(source) == DEFAULT_NAME:
        return DEFAULT_NAME
    return Path(source).name.rstrip("/") or "input"


def _fmt(v, p_value=False) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.3g}" if p_value else f"{v:.3f}"


def _load_run(out_dir: Path, source, limit):
    """The run's report.json and the three embeddings (originals loaded as the run did)."""
    from embdebias import io

    meta = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    fmt = meta["parameters"]["output_format"]
    embs = {"original": io.load(source, format=meta["parameters"]["input_format"], limit=limit),
            "soft": io.load(out_dir / meta["outputs"]["soft"], format=fmt, name="soft"),
            "hard": io.load(out_dir / meta["outputs"]["hard"], format=fmt, name="hard")}
    return meta, embs


def rnsb_values(embs: dict, tests, *, random_state: int = 0, n_runs: int = 10, max_missing: float = 0.2) -> dict:
    """``{test id: {"vader": {column: RNSB}, "ab": {column: RNSB or None}}}`` (see the module docstring)."""
    from embdebias import metrics
    from embdebias.errors import EmbdebiasError

    cache: dict = {}
    out = {}
    for t in tests:
        identity = list(dict.fromkeys(t.X.words + t.Y.words))
        key = tuple(identity)
        if key not in cache:
            cache[key] = {n: metrics.rnsb(e, identity_terms=identity, n_runs=n_runs, random_state=random_state,
                                          max_missing=max_missing).rnsb for n, e in embs.items()}
        ab = {}
        for n, e in embs.items():
            try:
                ab[n] = metrics.rnsb(e, identity_terms=identity, positive=list(t.A.words), negative=list(t.B.words),
                                     n_runs=n_runs, random_state=random_state, max_missing=max_missing).rnsb
            except EmbdebiasError:  # fewer than 10 in-vocabulary words in A or B
                ab[n] = None
        out[t.id] = {"vader": cache[key], "ab": ab, "distinct": len(cache)}
    return out


def rnsb_per_test(embs: dict, tests, *, random_state: int = 0, n_runs: int = 10) -> tuple[list[list[str]], int]:
    """Rows (test, statistic, original, soft, hard) of RNSB per test, and the number of distinct X u Y."""
    values = rnsb_values(embs, tests, random_state=random_state, n_runs=n_runs)
    rows = []
    for t in tests:
        v = values[t.id]
        rows.append([t.id, "RNSB (VADER)", *(_fmt(v["vader"][n]) for n in COLUMNS)])
        rows.append(["", f"RNSB ({t.A.name} vs {t.B.name})", *(_fmt(v["ab"][n]) for n in COLUMNS)])
    return rows, max((v["distinct"] for v in values.values()), default=0)


def _ect(emb, x, y, words, max_missing: float):
    from embdebias import metrics
    from embdebias.errors import EmbdebiasError

    try:
        return metrics.ect(emb, x, y, words, max_missing=max_missing).correlation
    except EmbdebiasError:  # too many words of the set out of vocabulary
        return None


def ect_values(embs: dict, tests, lists: str = "published", max_missing: float = 0.2) -> list[tuple[str, str, dict]]:
    """``(attribute set (words), targets, {column: rho})`` of X vs Y over each attribute set."""
    from embdebias import wordlists

    seen: dict = {}
    for t in tests:
        for ws in (t.A, t.B):
            seen.setdefault(ws.words, (ws.name, t.id, t.X, t.Y))
    names = [name for name, *_ in seen.values()]
    # Two different sets of one name (e.g. "arts" of two tests) are told apart by their test.
    items = [(name if names.count(name) == 1 else f"{name}, {test_id}", x, y, list(words))
             for words, (name, test_id, x, y) in seen.items()]
    if tests:
        items.append(("professions", tests[0].X, tests[0].Y, wordlists.professions(lists)))
    return [(f"{name} ({len(words)})", f"{x.name} vs {y.name}",
             {n: _ect(e, x, y, words, max_missing) for n, e in embs.items()})
            for name, x, y, words in items]


def ect_per_attribute_set(embs: dict, tests, lists: str = "published") -> list[list[str]]:
    """Rows (attribute set, targets, original, soft, hard): ECT of X vs Y over each attribute set."""
    return [[name, targets, *(_fmt(v[n]) for n in COLUMNS)] for name, targets, v in ect_values(embs, tests, lists)]


def tables(out_dir, source=None, *, limit=None, random_state: int = 0, rnsb_runs: int = 10,
           lists: str = "published") -> str:
    """The Markdown tables for a finished run in ``out_dir`` (see the module docstring)."""
    from embdebias import wordlists
    from embdebias.report import Report

    out_dir = Path(out_dir)
    meta, embs = _load_run(out_dir, source, limit)
    report = Report.from_dict(meta["evaluation"])
    tests = wordlists.weat_tests("gender")
    e = meta["embedding"]
    parts = [f"## {e['name']}: {e['words']:,} words x {e['dim']} dimensions "
             f"(lambda = {meta['parameters']['lambda']}, seed = {meta['seeds']['random_state']})", ""]

    def cells(metric, test, stat, p_value=False):
        return [_fmt(report.values.get((metric, test, stat), {}).get(n), p_value) for n in COLUMNS]

    body = []
    for t in tests:
        body.append([t.id, "effect size", *cells("weat", t.id, "effect_size")])
        body.append(["", "p-value", *cells("weat", t.id, "p_value", True)])
    parts += ["### WEAT (seven gender tests)", "", markdown_table(["test", "statistic", *COLUMNS], body), ""]

    body, distinct = rnsb_per_test(embs, tests, random_state=random_state, n_runs=rnsb_runs)
    parts += ["### RNSB per test", "", markdown_table(["test", "statistic", *COLUMNS], body), ""]
    if distinct < len(tests):
        parts += [f"The {len(tests)} tests have {distinct} distinct target set(s) X u Y, so their "
                  f"RNSB (VADER) values coincide; RNSB (A vs B) trains the classifier on the test's "
                  f"attribute sets instead (n/a: fewer than 10 of their words in the vocabulary).", ""]

    body = ect_per_attribute_set(embs, tests, lists)
    parts += ["### ECT per attribute set (Spearman rho; 1 = no bias)", "",
              markdown_table(["attribute set (words)", "targets", *COLUMNS], body), ""]

    body = []
    for subset in ("all", "sub"):
        n = report.values.get(("bat", subset, "n_scored"), {}).get("original")
        label = f"{'all' if subset == 'all' else 'Sub'} ({_fmt(n)} instances)"
        for i, stat in enumerate(BAT_STATS):
            body.append([label if i == 0 else "", stat, *cells("bat", subset, stat.lower())])
    parts += [f"### BAT ({report.data.get('bat', 'SemBias')})", "",
              markdown_table(["instances", "answer", *COLUMNS], body), ""]

    plot = meta["outputs"].get("plot")
    parts += ["### Occupation plot", "", f"{(out_dir / plot).resolve()}" if plot else
              f"not drawn: {meta.get('plot_error')}", "",
              f"Full report (every metric, out-of-vocabulary words, timings): {(out_dir / 'report.md').resolve()}",
              ""]
    return "\n".join(parts)


def reproduce(source=None, out_root="reproduce-out", *, limit=None, lam: float = 0.2, seed: int = 0,
              n_train: int = 50_000, force: bool = False, evaluate_kwargs=None, rnsb_runs: int = 10,
              lists: str = "published", log=print) -> str:
    """Run the main job on ``source`` into ``<out_root>/<input name>/`` and return the tables."""
    from embdebias.pipeline import run_pipeline

    out_dir = Path(out_root) / input_name(source)
    run_pipeline(source, out_dir, limit=limit, lam=lam, n_train=n_train, random_state=seed, force=force,
                 lists=lists, log=log, evaluate_kwargs=evaluate_kwargs)
    return tables(out_dir, source, limit=limit, random_state=seed, rnsb_runs=rnsb_runs, lists=lists)


def family_inputs(specs) -> dict:
    """``{family: input}`` from ``FAMILY=INPUT`` strings (families of paper004.FAMILIES)."""
    from paper004 import FAMILIES

    out = {}
    for spec in specs:
        family, sep, source = spec.partition("=")
        if not sep or family not in FAMILIES or not source:
            raise SystemExit(f"reproduce: --families takes FAMILY=INPUT with FAMILY one of {', '.join(FAMILIES)}; "
                             f"got {spec!r}")
        out[family] = source
    return out


def families_main(args) -> int:
    """Run the main job per family and print paper 004's tables, ours beside theirs."""
    import paper004
    from embdebias.pipeline import run_pipeline

    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    values = {}
    for family, source in family_inputs(args.families).items():
        out_dir = Path(args.out_dir) / f"{family}-{input_name(source)}"
        run_pipeline(source, out_dir, lam=args.lam, random_state=args.seed, force=args.force, lists=args.lists,
                     log=log, evaluate_kwargs={"max_missing": args.max_missing})
        values[family] = paper004.family_values(out_dir, source, random_state=args.seed, lists=args.lists,
                                                max_missing=args.max_missing)
    print(paper004.tables(values), flush=True)
    if args.json:
        paper004.write_json(values, args.json)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Each input's outputs go to <out-dir>/<input name>/.")
    ap.add_argument("inputs", nargs="*", help="vector files (Word2Vec, GloVe, fastText, native); "
                                              "none: the built-in GloVe 6B 50d")
    ap.add_argument("--out-dir", default="reproduce-out")
    ap.add_argument("--limit", type=int, default=None, help="read only the first N words of each input")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.2, help="soft-debias weight (default 0.2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--force", action="store_true", help="recompute every step of the runs")
    ap.add_argument("--lists", choices=["published", "curated"], default="published",
                    help="bundled word lists (default: the published ones)")
    ap.add_argument("--quiet", action="store_true", help="print only the tables")
    ap.add_argument("--families", nargs="+", metavar="FAMILY=INPUT",
                    help="lay out paper 004's tables for word2vec=, fasttext= and glove= inputs")
    ap.add_argument("--json", metavar="FILE", help="with --families: also write the numbers as JSON")
    ap.add_argument("--max-missing", type=float, default=0.2,
                    help="with --families: largest share of a word set that may be out of vocabulary")
    args = ap.parse_args(argv)
    if args.families:
        return families_main(args)

    from embdebias.errors import EmbdebiasError

    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    status = 0
    for source in args.inputs or [None]:
        try:
            print(reproduce(source, args.out_dir, limit=args.limit, lam=args.lam, seed=args.seed,
                            force=args.force, lists=args.lists, log=log), flush=True)
        except EmbdebiasError as exc:
            print(f"reproduce: {input_name(source)}: {exc}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
