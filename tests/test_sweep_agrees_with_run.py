"""A sweep point is scored as `embdebias run` scores its column (issue 31, item 2): beside its
embedding's baseline, with the baseline's words and direction. For hard, soft, INLP and RAN, every
value of every metric of the default suite is the run's, and the sweep ranks the fairer method
first for the bias metrics."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("pandas")

import embdebias  # noqa: E402
from embdebias.pipeline.run import run_pipeline  # noqa: E402
from embdebias.report import Report  # noqa: E402

from synthetic import synthetic_embedding, write_word2vec_text  # noqa: E402

METHODS = ("hard", "soft", "inlp", "ran")


def _same(a, b) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return (a is None or a != a) and (b is None or b != b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _sweep_and_run(path, tmp_path, bootstrap: int, methods=METHODS, suite=None):
    cfg = {"embeddings": [{"path": str(path), "label": "e"}], "bootstrap": bootstrap,
           "methods": {m: {} for m in methods}, **({"suite": list(suite)} if suite else {})}
    frame = embdebias.sweep(cfg, tmp_path / "sweep", serial=True, log=lambda *a: None)
    run_pipeline(str(path), tmp_path / "run", methods=",".join(methods), save="none",
                 evaluate_kwargs={"bootstrap": bootstrap}, log=lambda *a: None,
                 **({"tests": ",".join(suite)} if suite else {}))
    return frame, Report.from_json(tmp_path / "run" / "evaluation.json")


def _differences(frame, report) -> tuple[list, int]:
    from embdebias.sweep.run import ORIGINAL

    differ, compared = [], 0
    for r in frame.itertuples():
        column = ORIGINAL if r.method == "none" else r.method
        cell = report.cells.get((r.metric, r.test, r.statistic), {}).get(column)
        want = None if cell is None else cell.value
        compared += want is not None
        if not _same(r.value, want):
            differ.append(f"{r.method} {r.metric}/{r.test}/{r.statistic}: sweep {r.value} run {want}")
    return differ, compared


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agree")
    path = tmp / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    with pytest.warns(UserWarning):  # the synthetic vocabulary misses words of some lists
        return (*_sweep_and_run(path, tmp, bootstrap=50), tmp)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agree-tiny")
    path = tmp / "tiny.txt"
    write_word2vec_text(synthetic_embedding(n_filler=300, dim=16), path)
    return _sweep_and_run(path, tmp, bootstrap=20, methods=("hard", "soft"), suite=("direct_bias", "ect"))


def test_a_points_values_are_the_runs_column(tiny):
    """The fast check: two methods, two metrics, a tiny embedding."""
    frame, report = tiny
    differ, compared = _differences(frame, report)
    assert compared > 10 and not differ, "\n".join(differ[:20])
    shares = frame[(frame["method"] == "hard") & (frame["metric"] == "direct_bias")
                   & (frame["statistic"] == "direct_bias_original")]["share"]
    run_share = next(c["share"] for c in report.comparisons if (c["embedding"], c["metric"], c["statistic"])
                     == ("hard", "direct_bias", "direct_bias_original"))
    assert shares.iloc[0] == pytest.approx(run_share)


def test_every_value_of_the_default_suite_is_the_runs(small):
    frame, report, _ = small
    from embdebias.evaluate import DEFAULT_SUITE

    assert set(frame["method"]) == {"none", *METHODS} and frame["error"].isna().all()
    assert set(frame["metric"]) == set(DEFAULT_SUITE) & set(report.metrics())
    differ, compared = _differences(frame, report)
    assert compared > 100 and not differ, "\n".join(differ[:20])
    # and every point says what it was scored against
    debiased = frame[frame["method"] != "none"]
    assert (debiased["reference"] == "its embedding's baseline ('original' column)").all()


def test_the_sweep_ranks_the_fairer_method_first(small):
    from embdebias.sweep.summary import headlines, rankings

    frame, report, _ = small
    heads = headlines(frame)
    ranks, tau = rankings(heads)
    method = dict(zip(heads["key"], heads["method"]))
    for metric in ("direct_bias", "weat", "ect"):
        mine = heads[heads["metric"] == metric].set_index("key")["value"]
        fairest = mine.idxmin()  # the least bias: its distance from the fair value
        assert ranks[metric][fairest] == 1, (metric, method[fairest])
    # ECT's fair value is 1: a method with a larger rho is fairer and ranks better
    ect = report.cells[("ect", "professions", "spearman")]
    best = max(METHODS, key=lambda m: ect[m].value)
    key = next(k for k, m in method.items() if m == best)
    worst = next(k for k, m in method.items() if m == min(METHODS, key=lambda m: ect[m].value))
    assert ranks["ect"][key] < ranks["ect"][worst]
    # quality: rank 1 is the best
    sim = heads[heads["metric"] == "similarity"].set_index("key")["value"]
    assert ranks["similarity"][sim.idxmax()] == 1
    assert tau.loc["direct_bias", "direct_bias"] == pytest.approx(1.0)


def test_a_sweep_without_order_draws_its_tradeoff(small):
    from embdebias.sweep.summary import tradeoff_points

    frame, _, tmp = small
    assert frame["order"].isna().all()
    points, bias_name, quality_name = tradeoff_points(frame)
    assert {p["method"] for p in points} == set(METHODS) and bias_name and quality_name
    assert all(p["quality_kept"] is not None and p["quality_test"] for p in points)
    summary = (tmp / "sweep" / "summary.md").read_text(encoding="utf-8")
    assert "quality kept (worst test)" in summary and "| yes |" in summary  # a Pareto front


