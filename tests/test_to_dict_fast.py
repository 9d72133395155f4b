"""``to_builtin`` and ``Report.to_dict`` on results of tens of thousands of items: the short paths
give what the value-by-value conversion gives, and a report's details are converted once."""

import json
import math

import numpy as np

from embdebias.metrics import _common
from embdebias.metrics._common import to_builtin
from embdebias.report import Report


def test_a_column_of_floats_keeps_finite_values_and_turns_the_others_to_none():
    """The one-pass check (a finite sum) never hides a non-finite value, and finite values whose
    sum overflows are kept as they are."""
    finite = [i / 7 for i in range(40)]
    assert to_builtin(finite) == finite and to_builtin(finite) is not finite
    for bad in (float("nan"), float("inf"), float("-inf")):
        assert to_builtin(finite + [bad]) == finite + [None]
    huge = [1e308] * 20 + [-1e308] * 20 + [float("nan")]
    assert to_builtin(huge[:-1]) == huge[:-1]            # the sum overflows; every value is finite
    assert to_builtin(huge) == huge[:-1] + [None]
    assert to_builtin([float("inf"), float("-inf")] * 10) == [None] * 20   # inf - inf: a NaN sum


def _report() -> Report:
    report = Report(["original", "hard"])
    pairs = [("a", "b"), ("a", "c")] * 600
    for emb in report.embeddings:
        report.details[emb] = {"indirect_bias/professions": {
            "pairs": pairs, "beta": [0.5] * 1199 + [float("nan")], "score": np.float64(0.25),
            "counts": np.arange(3), "missing": {"words": []}}}
    return report


def test_report_details_are_converted_once_and_the_dict_is_the_same(monkeypatch):
    report = _report()
    calls = []
    plain_rows = _common._plain_rows
    monkeypatch.setattr(_common, "_plain_rows", lambda items: calls.append(len(items)) or plain_rows(items))
    data = report.to_dict()
    assert calls == [1200, 1200]                          # each column's pairs, once
    assert list(data)[:4] == ["version", "embeddings", "rows", "details"]
    detail = data["details"]["hard"]["indirect_bias/professions"]
    assert detail["pairs"][0] == ["a", "b"] and detail["beta"][-1] is None and detail["beta"][0] == 0.5
    assert type(detail["score"]) is float and detail["counts"] == [0, 1, 2]
    json.dumps(data, allow_nan=False)
    bulk = report.to_dict(bulk="report.parquet")
    assert bulk["details"]["hard"]["indirect_bias/professions"]["pairs"] == {
        "bulk": "indirect_bias/professions/pairs", "length": 1200}
    assert bulk["bulk"] == "report.parquet" and list(bulk)[:4] == list(data)[:4]
    assert math.isclose(bulk["details"]["original"]["indirect_bias/professions"]["score"], 0.25)


def test_to_json_converts_the_details_once_for_the_json_and_the_parquet_file(monkeypatch, tmp_path):
    from embdebias.report.json import from_json

    report = _report()
    calls = []
    plain_rows = _common._plain_rows
    monkeypatch.setattr(_common, "_plain_rows", lambda items: calls.append(len(items)) or plain_rows(items))
    report.to_json(tmp_path / "report.json")
    assert calls == [1200, 1200]
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["bulk"] == "report.parquet" and (tmp_path / "report.parquet").is_file()
    back = from_json(tmp_path / "report.json")
    detail = back.details["hard"]["indirect_bias/professions"]
    assert [tuple(p) for p in detail["pairs"]] == [("a", "b"), ("a", "c")] * 600
    assert detail["beta"][:2] == [0.5, 0.5] and detail["beta"][-1] is None
