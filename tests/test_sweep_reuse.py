"""A sweep scores each baseline once per process: the points beside it reuse its scores and
their rows are those of points that score it again."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("pandas")

import embdebias  # noqa: E402
from embdebias.sweep import run  # noqa: E402

from synthetic import synthetic_embedding  # noqa: E402

evaluation = importlib.import_module("embdebias.evaluate")  # the module (embdebias.evaluate is the function)


def test_a_serial_sweep_scores_its_baseline_once_with_the_same_rows(tmp_path, monkeypatch):
    path = tmp_path / "small"
    embdebias.save(synthetic_embedding(n_filler=300, dim=16), path)
    cfg = {"embeddings": [{"path": str(path), "label": "small"}], "suite": ["direct_bias", "ect"], "bootstrap": 20,
           "methods": {"hard": {}, "soft": {"lam": [0.1, 1.0]}}}
    columns = []
    score_column = evaluation._score_column
    monkeypatch.setattr(evaluation, "_score_column",
                        lambda metrics, name, *a: columns.append(name) or score_column(metrics, name, *a))
    monkeypatch.setattr(run, "_REFERENCES", run.OrderedDict())
    reused = embdebias.sweep(cfg, tmp_path / "reused", serial=True, log=lambda *a: None)
    assert columns.count(run.ORIGINAL) == 1 and len(columns) == 4  # the baseline once, then each method

    columns.clear()
    monkeypatch.setattr(run, "reference_cache", lambda point: {})  # nothing kept: scored at every point
    fresh = embdebias.sweep(cfg, tmp_path / "fresh", serial=True, log=lambda *a: None)
    assert columns.count(run.ORIGINAL) == 4
    keep = ["key", "metric", "test", "statistic", "value", "ci_low", "ci_high", "n_scored", "outcome", "share", "reference"]
    assert reused[keep].sort_values(keep[:4]).reset_index(drop=True).equals(
        fresh[keep].sort_values(keep[:4]).reset_index(drop=True))
