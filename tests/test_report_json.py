"""The report's JSON: cells with their intervals, and the bulk arrays in Parquet beside it."""

from __future__ import annotations

import json

import pytest

from embdebias.errors import EmbdebiasError
from embdebias.report import Cell, Report
from embdebias.report import json as report_json


def _report(n_pairs: int) -> Report:
    r = Report(["a", "b"])
    for emb, scale in (("a", 1.0), ("b", 0.5)):
        r.add(emb, "indirect_bias", "professions", "mean_beta", (0.1 * scale, 0.05 * scale, 0.15 * scale))
        r.add(emb, "indirect_bias", "professions", "n_scored", n_pairs)
        r.details[emb] = {"indirect_bias/professions": {
            "pairs": [[f"w{i}", f"v{i}"] for i in range(n_pairs)],
            "beta": [None if i == 3 else i * scale for i in range(n_pairs)],
            "mean_beta": 0.1 * scale, "missing": {"words": [f"z{i}" for i in range(1200)]},
            "groups": {"male": [f"m{i}" for i in range(n_pairs // 2)], "female": ["f"] * (n_pairs // 2)}}}
    r.params = {"bootstrap_resamples": 10}
    return r


def test_long_lists_go_to_parquet_and_come_back(tmp_path):
    r = _report(2500)
    path = tmp_path / "evaluation.json"
    r.to_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["bulk"] == "evaluation.parquet" and (tmp_path / "evaluation.parquet").exists()
    res = data["details"]["b"]["indirect_bias/professions"]
    assert res["beta"] == {"bulk": "indirect_bias/professions/beta", "length": 2500}
    assert len(res["missing"]["words"]) == 1200 and res["mean_beta"] == 0.05   # the summary stays
    assert res["groups"] == {"bulk": {"male": "indirect_bias/professions/groups/male",
                                      "female": "indirect_bias/professions/groups/female"},
                             "length": {"male": 1250, "female": 1250}}
    assert path.stat().st_size < 80_000  # the missing words stay (1,200 of them, one a line)
    back = Report.from_json(path)
    assert back.details == r.details
    assert back.cell("indirect_bias", "professions", "mean_beta", "b") == Cell(0.05, 0.025, 0.075)
    assert back.to_markdown() == r.to_markdown()


def test_a_short_report_is_one_file_and_intervals_are_cells(tmp_path):
    r = _report(3)
    path = tmp_path / "r.json"
    r.to_json(path)
    assert not (tmp_path / "r.parquet").exists()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "bulk" not in data
    row = data["rows"][0]
    assert row["values"] == {"a": 0.1, "b": 0.05} and row["intervals"] == {"a": [0.05, 0.15], "b": [0.025, 0.075]}
    assert "intervals" not in data["rows"][1]  # n_scored has none
    assert Report.from_json(path).details == r.details


def test_version_2_reports_with_sibling_interval_rows_are_read():
    old = {"version": 2, "embeddings": ["a"], "rows": [
        {"metric": "weat", "test": "t", "statistic": "effect_size", "values": {"a": 0.5}},
        {"metric": "weat", "test": "t", "statistic": "effect_size_ci_low", "values": {"a": 0.1}},
        {"metric": "weat", "test": "t", "statistic": "effect_size_ci_high", "values": {"a": 0.9}}]}
    r = Report.from_dict(old)
    assert r.rows == [("weat", "t", "effect_size")] and r.cell("weat", "t", "effect_size") == Cell(0.5, 0.1, 0.9)


def test_bad_report_files_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(EmbdebiasError, match="bad.json: line 1: invalid JSON"):
        Report.from_json(bad)
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(EmbdebiasError, match="not an embdebias report"):
        Report.from_json(bad)
    r = _report(2500)
    path = tmp_path / "e.json"
    r.to_json(path)
    (tmp_path / "e.parquet").write_bytes(b"not parquet")
    with pytest.raises(EmbdebiasError, match="e.parquet: cannot read the report's bulk arrays"):
        Report.from_json(path)
    assert report_json.BULK_MIN_ITEMS == 1000
