"""The erasure benchmark (embdebias.benchmark and ``embdebias benchmark``) on a small synthetic embedding."""

import itertools
import json
import string

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from synthetic import write_word2vec_text

from embdebias.benchmark import (ERASERS, FILES, PUBLISHED, REPRODUCE_42B, erasure_benchmark, markdown)
from embdebias.benchmark.output import interval
from embdebias.benchmark.protocol import MIN_WORDS_PER_GROUP, probe_words
from embdebias.benchmark.run import labelled_words, resolve_methods, resolve_seeds
from embdebias.cli import main
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError


def letter_words(n):
    """``n`` distinct words of letters only (the published filter keeps them)."""
    return ["".join(t) for t in itertools.islice(itertools.product(string.ascii_lowercase, repeat=3), n)]


def planted_embedding(n=3000, dim=8, seed=0):
    """Words leaning along a gender direction, plus a nonlinear trace of the lean that a linear eraser
    leaves (male-leaning words spread wider in two other dimensions: equal means, unequal variances):
    linear probes fall to chance after erasure, RBF and MLP probes keep some."""
    rng = np.random.default_rng(seed)
    words = ["he", "she", *letter_words(n)]
    lean = np.concatenate([[2.0, -2.0], rng.normal(size=n)])
    vecs = rng.normal(size=(len(words), dim))
    vecs[:, 0] += 2.0 * lean
    vecs[:, 2:4] *= np.where(lean > 0, 3.0, 0.5)[:, None]
    return Embedding(words, vecs.astype(np.float32), name="planted")


@pytest.fixture(scope="module")
def emb():
    return planted_embedding()


@pytest.fixture(scope="module")
def result(emb):
    return erasure_benchmark(emb, methods="leace,orth", seeds=2, quality=False)


def test_the_split_gives_the_eraser_train_and_dev_and_the_probes_test_words(emb):
    labelled = labelled_words(emb, "gender", "published", 0)
    split = probe_words(labelled, "split", 0)
    groups = labelled.labels >= 0
    train_dev = np.concatenate([labelled.train, labelled.dev])
    assert set(split.fit_rows) == set(labelled.rows[train_dev[groups[train_dev]]])
    assert set(split.train_rows) == set(labelled.rows[labelled.train[groups[labelled.train]]])
    assert set(split.test_rows) == set(labelled.rows[labelled.test[groups[labelled.test]]])
    assert not set(split.test_rows) & set(split.fit_rows)
    held = probe_words(labelled, "heldout", 0)
    # held-out: both halves are test words, which the eraser never saw; the halves are disjoint and stratified
    assert not (set(held.train_rows) | set(held.test_rows)) & set(held.fit_rows)
    assert not set(held.train_rows) & set(held.test_rows)
    assert set(held.train_rows) | set(held.test_rows) == set(split.test_rows)
    assert abs(held.train_labels.mean() - held.test_labels.mean()) < 0.05
    assert -1 not in set(split.train_labels) | set(split.test_labels)  # neutral words dropped
    assert held.chance == max(np.mean(held.test_labels == c) for c in (0, 1))


def test_linear_leakage_falls_to_chance_and_nonlinear_remains(result):
    s = result.summary.set_index("method")
    assert list(s.index) == ["none", "leace", "orth"]
    assert s.loc["none", "linear"] > 0.95
    for method in ("leace", "orth"):
        assert s.loc[method, "certificate"] < 1e-10  # float64, the fitting words
        assert s.loc[method, "certificate_unit"] > 1e-6  # unit scaling lets some back
        # at chance, up to the noise of ~90 test words (and the split's train words, on which the class means
        # are exactly equal, teach a probe only the train words' majority: below chance is no leak)
        assert s.loc[method, "linear"] < s.loc[method, "chance"] + 0.06
        assert s.loc["none", "linear"] - s.loc[method, "linear"] > 0.4
        assert s.loc[method, "rbf"] > s.loc[method, "linear"] + 0.1  # the planted square is still there
        assert s.loc[method, "rank_removed"] == 1
        assert s.loc[method, "distortion"] > 0
        assert s.loc[method, "v_measure"] < s.loc["none", "v_measure"]
    assert s.loc["none", "distortion"] == 0 and s.loc["none", "rank_removed"] == 0
    assert len(result.seeds) == 6 and set(result.seeds["seed"]) == {0, 1}


def test_the_summary_is_the_mean_and_t_interval_of_the_seeds(result):
    seeds = result.seeds[result.seeds["method"] == "leace"]["rbf"].to_numpy()
    row = result.summary.set_index("method").loc["leace"]
    half = stats.t.ppf(0.975, 1) * seeds.std(ddof=1) / np.sqrt(2)
    assert row["rbf"] == pytest.approx(seeds.mean())
    assert row["rbf_low"] == pytest.approx(seeds.mean() - half)
    assert row["rbf_high"] == pytest.approx(seeds.mean() + half)
    mean, low, high = interval([1.0, 2.0, 3.0, float("nan")])
    assert mean == 2.0 and high - mean == pytest.approx(stats.t.ppf(0.975, 2) / np.sqrt(3))
    assert np.isnan(interval([0.5])[1])


def test_the_same_seeds_give_the_same_table(emb, result):
    again = erasure_benchmark(emb, methods=["leace", "orth"], seeds=[0, 1], quality=False)
    cols = ["linear", "rbf", "mlp", "v_measure", "distortion"]
    pd.testing.assert_frame_equal(again.summary[cols], result.summary[cols])


def test_markdown_names_the_published_figures_and_their_data(result):
    text = markdown(result.summary, result.settings)
    assert "| leace | " in text and "heldout" not in text.split("\n")[2]
    for p in PUBLISHED:
        assert p["name"] in text and p["source"] in text
    assert "0.494" in text and "0.525" in text and "0.507" in text
    assert REPRODUCE_42B in text and "42B" in text


def test_the_methods_seeds_and_protocol_are_checked():
    assert list(resolve_methods(None)) == list(ERASERS)
    assert resolve_methods("orth,hard") == {"orth": ("leace", {"eraser": "orth"}), "hard": ("hard", {})}
    assert resolve_seeds(3) == (0, 1, 2) and resolve_seeds([4, 7]) == (4, 7)
    for bad in ("nope", "leace,leace", "", [], ["leace", 3]):
        with pytest.raises(EmbdebiasError, match="benchmark"):
            resolve_methods(bad)
    for bad in (0, -2, [1, 1], ["1"], [True], "x", 2.5, [-1]):
        with pytest.raises(EmbdebiasError, match="seed"):
            resolve_seeds(bad)


@pytest.mark.parametrize("kw, message", [
    ({"methods": "lease"}, "unknown method 'lease'"),
    ({"seeds": 0}, "seeds must be"),
    ({"protocol": "both"}, "unknown protocol"),
    ({"methods": "hsr", "attribute": "race"}, "race"),
])
def test_bad_input_writes_nothing(emb, tmp_path, kw, message):
    out = tmp_path / "bench"
    with pytest.raises(EmbdebiasError, match=message):
        erasure_benchmark(emb, **{"quality": False, "out_dir": out, **kw})
    assert not out.exists()


def test_too_few_words_for_the_split_is_one_clear_error(tmp_path):
    small = planted_embedding(n=300)  # 5 % of 300 words: 15 a group, 4 or 5 of them test words
    out = tmp_path / "bench"
    with pytest.raises(EmbdebiasError, match=f"too few labelled words.*at least {MIN_WORDS_PER_GROUP}"):
        erasure_benchmark(small, methods="leace", seeds=1, quality=False, out_dir=out)
    assert not out.exists()


def test_command_writes_the_table_parquet_figure_at_once(emb, tmp_path, capsys):
    src = tmp_path / "planted.txt"
    write_word2vec_text(emb, src)
    out = tmp_path / "bench"
    assert main(["-q", "benchmark", str(src), "--methods", "leace", "--seeds", "2", "--protocol", "heldout",
                 "--no-quality", "--out-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert (out / "benchmark.md").read_text() == printed
    table = pd.read_parquet(out / "benchmark.parquet")
    assert list(table["method"]) == ["none", "leace"] and table["n_seeds"].tolist() == [2, 2]
    assert len(pd.read_parquet(out / "benchmark_seeds.parquet")) == 4
    assert (out / "benchmark.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "benchmark.json").read_text())["protocol"] == "heldout"
    # a second run needs --force, and says so in one line
    assert main(["-q", "benchmark", str(src), "--methods", "leace", "--seeds", "1", "--no-quality",
                 "--out-dir", str(out)]) == 2
    assert "exists; use --force" in capsys.readouterr().err


def test_command_bad_input_is_one_line_exit_2_nothing_written(emb, tmp_path, capsys):
    src = tmp_path / "planted.txt"
    write_word2vec_text(emb, src)
    out = tmp_path / "bench"
    for args in (["--methods", "nope"], ["--seeds", "0"], ["--seeds", "x"], ["--protocol", "both"]):
        try:
            status = main(["-q", "benchmark", str(src), "--no-quality", "--out-dir", str(out), *args])
        except SystemExit as exc:  # a usage error: argparse's exit, one line
            status = exc.code
        assert status == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err
        assert not out.exists()


def test_quality_tests_unscored_on_a_foreign_vocabulary_are_nan_with_the_reason(emb):
    r = erasure_benchmark(emb, methods="orth", seeds=1)
    row = r.seeds.set_index("method").loc["orth"]
    assert np.isnan(row["wordsim353"]) and np.isnan(row["analogy"])
    assert "wordsim353" in row["warnings"] or "missing" in row["warnings"]


def test_bench_erasure_rewrites_only_its_benchmark_section(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import bench_erasure as be

    page = tmp_path / "erasure.md"
    section = f"{be.BENCH_BEGIN}\n\n## Benchmark table\n\n| a |\n\n{be.BENCH_END}\n"
    page.write_text("# Fidelity\n\ntext\n\n" + section + "\n## After\n", encoding="utf-8")
    assert be._kept_benchmark(page) == section
    assert be._without_benchmark(page.read_text()) == "# Fidelity\n\ntext\n\n\n\n## After\n"
    assert be._kept_benchmark(tmp_path / "none.md") == ""
    assert be._without_benchmark("# Page\n\n") == "# Page\n"
