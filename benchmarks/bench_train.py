"""Training through ``embdebias train`` against plain gensim on the same corpus: the wrapper's overhead.

Measures, in one invocation, Word2Vec with the same parameters (skip-gram, 100
dimensions, window 5, min_count 5, negative 5, sample 1e-3, seed 0, every core)
trained three ways on the same tokens:

1. **ours**: :func:`embdebias.train.train_model` on the raw text, streamed by
   :class:`embdebias.text.LineCorpus` (reading, UTF-8 checks, lower-casing and
   tokenization all inside the timed run);
2. **gensim LineSentence** (the baseline): ``gensim.models.Word2Vec`` on a
   ``LineSentence`` over a copy of the corpus tokenized beforehand (untimed) into
   exactly our tokens, space-separated, one sentence a line: what a gensim user
   streams from disk;
3. **gensim in memory**: the same token lists held in a Python list (gensim's fastest
   input, and the memory of the whole corpus).

The three are checked to see the same corpus (sentence and token counts, the same
vocabulary in the same order). Ours and the baseline are timed ``--repeats`` times,
interleaved in alternating order (A B, B A, ...), after one untimed read of both
files (warm page cache); the in-memory case follows. The table gives the median and
the spread of the wall time and of the CPU time of the process (all threads; steadier
when other programs share the cores), and the overhead is ours / LineSentence - 1 on
the medians of each. Timings on a
shared machine vary by a few per cent from run to run: the spread says how much.

Corpus: ``--corpus FILE`` (UTF-8 text, plain or gzip), else GCIDE, the 1913 Webster
dictionary with its quotations as plain sentences (``benchmarks/gcide.py``: Debian's
``dict-gcide``, installed with apt-get when missing and this runs as root), else
generated Zipf-distributed text. The GCIDE text is extracted into a temporary
directory and deleted at the end; it is never committed.

Usage::

    python benchmarks/bench_train.py                      # GCIDE, 1 epoch, 3 repeats: about 3 minutes on 2 cores
    python benchmarks/bench_train.py --epochs 5 --repeats 2
    python benchmarks/bench_train.py --corpus my.txt.gz --json train.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from embdebias.text import LineCorpus  # noqa: E402
from embdebias.train import default_workers, train_model  # noqa: E402

PARAMS = dict(sg=1, vector_size=100, window=5, min_count=5, negative=5, sample=1e-3, seed=0)


def generate(dst: Path, words: int = 3_000_000, seed: int = 0) -> None:
    """Zipf-distributed words over a 50,000-word vocabulary, 5 to 30 words a line, some punctuation."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    ids = np.minimum(rng.zipf(1.2, words) - 1, len(vocab) - 1)
    tokens = vocab[ids]
    with open(dst, "w", encoding="utf-8") as fh:
        at = 0
        while at < words:
            n = int(rng.integers(5, 31))
            fh.write(" ".join(tokens[at:at + n]) + ".\n")
            at += n


def _gcide_or_generated(workdir: Path, log) -> Path:
    """GCIDE as plain text (benchmarks/gcide.py, installing dict-gcide if missing), else generated text."""
    import gcide

    try:
        log(f"extracting GCIDE into {workdir}")
        return gcide.corpus(workdir)
    except SystemExit as exc:  # not installed and not installable here
        log(f"{exc}: generating a corpus instead")
        path = workdir / "generated.txt"
        generate(path)
        return path


def pretokenize(corpus: LineCorpus, dst: Path) -> tuple[int, int]:
    """Our tokens, space-separated, one sentence a line (what LineSentence reads); (sentences, tokens)."""
    sentences = tokens = 0
    with open(dst, "w", encoding="utf-8") as fh:
        for sentence in corpus:
            fh.write(" ".join(sentence) + "\n")
            sentences += 1
            tokens += len(sentence)
    return sentences, tokens


def _gensim(corpus, epochs: int, workers: int):
    from gensim.models import Word2Vec

    return Word2Vec(corpus, epochs=epochs, workers=workers, **PARAMS)


def _timed(make):
    """``((wall seconds, CPU seconds of every thread of this process), result)``."""
    t0, c0 = time.perf_counter(), time.process_time()
    model = make()
    return (time.perf_counter() - t0, time.process_time() - c0), model


def _summary(name: str, times: list[tuple[float, float]], model, baseline: tuple[float, float] | None) -> dict:
    wall = [t for t, _ in times]
    cpu = [c for _, c in times]
    median, median_cpu = statistics.median(wall), statistics.median(cpu)
    return {"case": name, "median_s": median, "min_s": min(wall), "max_s": max(wall), "times_s": wall,
            "median_cpu_s": median_cpu, "min_cpu_s": min(cpu), "max_cpu_s": max(cpu), "cpu_s": cpu,
            "sentences": model.corpus_count, "tokens": model.corpus_total_words, "vocabulary": len(model.wv),
            "overhead": None if baseline is None else median / baseline[0] - 1,
            "overhead_cpu": None if baseline is None else median_cpu / baseline[1] - 1}


def run(corpus: Path | None = None, epochs: int = 1, repeats: int = 3, workers: int | None = None,
        in_memory: bool = True, workdir=None, log=print) -> dict:
    """Run the comparison; returns the corpus description and one row per case."""
    from gensim.models.word2vec import LineSentence

    workers = workers or default_workers()
    with tempfile.TemporaryDirectory(prefix="bench_train.", dir=workdir) as tmp:
        tmp = Path(tmp)
        if corpus is None:
            corpus = _gcide_or_generated(tmp, log)
        stream = LineCorpus(corpus)
        tokenized = tmp / "tokenized.txt"
        sentences, tokens = pretokenize(stream, tokenized)
        log(f"corpus {corpus.name}: {corpus.stat().st_size / 2**20:.1f} MiB, {sentences:,} sentences, "
            f"{tokens:,} tokens; Word2Vec {PARAMS}, {epochs} epoch(s), {workers} workers, {repeats} repeats")
        for _ in LineSentence(str(tokenized)):  # warm the page cache for both files
            pass
        corpus.read_bytes()
        cases = {"ours (embdebias train_model, raw text)":
                 lambda: train_model(corpus, epochs=epochs, workers=workers, **PARAMS),
                 "gensim Word2Vec(LineSentence(pre-tokenized file))":
                 lambda: _gensim(LineSentence(str(tokenized)), epochs, workers)}
        times = {name: [] for name in cases}
        models = {}
        for r in range(repeats):
            order = list(cases) if r % 2 == 0 else list(cases)[::-1]  # A B, B A, ...: no order effect
            for name in order:
                seconds, models[name] = _timed(cases[name])
                times[name].append(seconds)
                log(f"  repeat {r + 1}/{repeats}: {name}: {seconds[0]:.2f} s ({seconds[1]:.2f} s CPU)")
        if in_memory:
            sentences_list = list(LineSentence(str(tokenized)))
            name = "gensim Word2Vec(list of token lists in memory)"
            times[name] = []
            for r in range(repeats):
                seconds, models[name] = _timed(lambda: _gensim(sentences_list, epochs, workers))
                times[name].append(seconds)
                log(f"  repeat {r + 1}/{repeats}: {name}: {seconds[0]:.2f} s ({seconds[1]:.2f} s CPU)")
            del sentences_list
    ours, base = list(cases)
    vocabularies = {name: model.wv.index_to_key for name, model in models.items()}
    same = all(v == vocabularies[ours] for v in vocabularies.values()) \
        and len({(m.corpus_count, m.corpus_total_words) for m in models.values()}) == 1
    baseline = (statistics.median(t for t, _ in times[base]), statistics.median(c for _, c in times[base]))
    rows = [_summary(name, times[name], models[name], None if name == base else baseline) for name in times]
    return {"corpus": corpus.name, "size_mib": corpus.stat().st_size / 2**20 if corpus.exists() else None,
            "sentences": sentences, "tokens": tokens, "epochs": epochs, "workers": workers, "repeats": repeats,
            "params": PARAMS, "same_corpus_and_vocabulary": same, "rows": rows}


def format_result(result: dict) -> str:
    from _table import markdown_table

    body = []
    for row in result["rows"]:
        base = row["overhead"] is None
        words_s = result["epochs"] * row["tokens"] / row["median_s"]
        body.append([row["case"], f"{row['median_s']:.2f} s", f"{row['min_s']:.2f} - {row['max_s']:.2f} s",
                     "baseline" if base else f"{100 * row['overhead']:+.1f}%",
                     f"{row['median_cpu_s']:.2f} s", f"{row['min_cpu_s']:.2f} - {row['max_cpu_s']:.2f} s",
                     "baseline" if base else f"{100 * row['overhead_cpu']:+.1f}%", f"{words_s:,.0f}"])
    table = markdown_table(["case", "wall, median", "wall, min - max", "wall vs LineSentence", "CPU, median",
                            "CPU, min - max", "CPU vs LineSentence", "words/s (wall)"], body, left=1)
    check = "yes" if result["same_corpus_and_vocabulary"] else "NO"
    return (f"{table}\n\nWord2Vec skip-gram, {result['epochs']} epoch(s), {result['workers']} workers, "
            f"{result['tokens']:,} tokens in {result['sentences']:,} sentences of {result['corpus']}; "
            f"times include the vocabulary scan; CPU is the time of every thread of the process (steadier than "
            f"wall time when other programs share the cores); same sentences, tokens and vocabulary in every "
            f"case: {check}.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=None, help="a UTF-8 text file (default: GCIDE, else generated)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="default: every core")
    ap.add_argument("--no-in-memory", action="store_true", help="skip the in-memory gensim case")
    ap.add_argument("--workdir", default=None, help="where the temporary extracted corpus goes")
    ap.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    args = ap.parse_args(argv)
    result = run(args.corpus, args.epochs, args.repeats, args.workers, not args.no_in_memory, args.workdir)
    print(format_result(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["same_corpus_and_vocabulary"] else 1


if __name__ == "__main__":
    sys.exit(main())
