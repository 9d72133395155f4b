"""The metric registry: a metric is one module, and everything that lists metrics comes from it.

The toy metric below is registered here, in this one file, and shows up in ``evaluate``,
the Markdown and JSON report, ``to_frame()`` and ``embdebias score --tests`` with no
other edit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

import embdebias.metrics as metrics
from embdebias.errors import EmbdebiasError
from embdebias.evaluate import DEFAULT_SUITE, evaluate, suite_options, tests_help
from embdebias.metrics import METRICS, Metric, Option, describe_metrics, get_metric, register
from embdebias.metrics.base import N_SCORED, positive_int
from embdebias.metrics._common import MetricResult, lookup
from embdebias.metrics._resample import Sample, mean_of
from embdebias.report import Report

# -- a toy metric, all of it --------------------------------------------------------------------


@dataclass
class NormResult(MetricResult):
    mean_norm: float
    n_scored: int
    missing: dict = field(default_factory=dict)

    value_field = "mean_norm"


class ToyNorm(Metric):
    name, title, function = "toy_norm", "Toy mean norm", ""
    legend = "Mean vector norm of the first words of the vocabulary; a toy, lower is 'fairer'."
    statistics = {"mean_norm": "mean norm", N_SCORED: "words"}
    options = {"n_words": Option(20, "how many of the first words", positive_int)}

    def data(self, ctx):
        return f"the first {ctx.opts(self.name)['n_words']} words of each column"

    def score(self, emb, unit, ctx):
        words = list(emb.words[:ctx.opts(self.name)["n_words"]])
        rows = lookup(emb, words, name="toy words").rows
        norms = np.linalg.norm(emb.take(rows, np.float64), axis=1)
        result = NormResult(float(norms.mean()), len(words))
        sample = Sample({"items": words}, mean_of(norms))
        return result, {unit: {"mean_norm": result.mean_norm, N_SCORED: result.n_scored}}, \
            {(unit, "mean_norm"): sample}


@pytest.fixture
def toy_metric():
    register(ToyNorm)
    yield METRICS["toy_norm"]
    del METRICS["toy_norm"]


def test_a_toy_metric_registered_in_one_file_runs_everywhere(toy_metric, tmp_path, capsys):
    emb = synthetic_embedding()
    scaled = emb.with_vectors(emb.vectors * 0.5, name="half")
    report = evaluate({"original": emb, "half": scaled}, ["toy_norm"], bootstrap=200,
                      options={"toy_norm": {"n_words": 30}})
    value = report.value("toy_norm", "toy_norm", "mean_norm", "original")
    norms = np.linalg.norm(emb.take(np.arange(30), np.float64), axis=1)
    assert value == pytest.approx(norms.mean())
    lo, hi = report.interval("toy_norm", "toy_norm", "mean_norm", "original")
    assert lo <= value <= hi
    assert report.value("toy_norm", "toy_norm", "mean_norm", "half") == pytest.approx(value / 2)
    # halving every vector halves the norm: a paired comparison finds the improvement
    [change] = report.comparisons
    assert change["outcome"] == "improved" and change["change"] == pytest.approx(-value / 2)
    assert report.params["options"]["toy_norm"] == {"n_words": 30}

    md = report.to_markdown()
    assert "### Toy mean norm" in md and "How to read: Mean vector norm" in md
    assert "Data: the first 30 words of each column" in md
    assert f"| toy_norm | mean norm | {value:.3f} [" in md and "| words | 30 | 30 |" in md

    path = tmp_path / "report.json"
    report.to_json(path)
    back = Report.from_json(path)
    assert back.cell("toy_norm", "toy_norm", "mean_norm", "half") == report.cell("toy_norm", "toy_norm",
                                                                                 "mean_norm", "half")
    assert back.to_markdown() == md

    frame = report.to_frame()
    row = frame[(frame.metric == "toy_norm") & (frame.statistic == "mean_norm") & (frame.embedding == "original")]
    assert row.value.item() == pytest.approx(value) and row.ci_low.item() == pytest.approx(lo)

    # the CLI: --tests takes any registered metric, and its help lists them from the registry
    from embdebias.cli import main

    assert "toy_norm" in tests_help() and "toy_norm: Toy mean norm" in describe_metrics()
    file = tmp_path / "e.txt"
    write_word2vec_text(emb, file)
    assert main(["score", str(file), "--tests", "toy_norm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["metric"], r["statistic"]) for r in data["rows"]] == [("toy_norm", "mean_norm"),
                                                                      ("toy_norm", N_SCORED)]


def test_metric_options_are_checked_by_the_metric(toy_metric):
    emb = synthetic_embedding()
    with pytest.raises(EmbdebiasError, match=r"metric 'toy_norm': unknown option\(s\) 'words'; known: n_words"):
        evaluate(emb, ["toy_norm"], options={"toy_norm": {"words": 3}})
    with pytest.raises(EmbdebiasError, match=r"metric 'toy_norm', option 'n_words': expected an integer >= 1"):
        evaluate(emb, ["toy_norm"], options={"toy_norm": {"n_words": "3"}})
    assert toy_metric.check_options({}) == {"n_words": 20}


def test_a_metric_needs_a_name():
    class Nameless(Metric):
        pass

    with pytest.raises(EmbdebiasError, match="Nameless needs a name"):
        register(Nameless)


# -- everything that lists metrics agrees with the registry --------------------------------------


def test_lists_of_metrics_come_from_the_registry():
    assert set(DEFAULT_SUITE) <= set(METRICS)
    assert "occupation_bias" in METRICS and "occupation_bias" in tests_help()
    assert [line.split(":")[0] for line in describe_metrics()] == list(METRICS)
    for name, metric in METRICS.items():
        assert get_metric(name.upper()) is metric
        # every metric's function is public, documented in the package's table, and callable
        assert metric.function in metrics.__all__, name
        assert callable(getattr(metrics, metric.function))
        assert f":func:`{metric.function}`" in metrics.__doc__, name
        assert metric.title and metric.legend and N_SCORED in metric.statistics
        assert suite_options([name])["suite"] == (name,)
    for name in DEFAULT_SUITE:
        assert f"{name} ({METRICS[name].title})" in evaluate.__doc__


def test_options_of_every_metric_have_defaults_that_pass_their_checks():
    for metric in METRICS.values():
        opts = metric.check_options({})
        assert set(opts) == set(metric.options)
        json.dumps(metric.params(opts))  # the report's params are JSON
        for key, opt in metric.options.items():
            if opt.check is not None and opt.default is not None:
                opt.check(opt.default)


def test_every_moved_evaluate_keyword_names_a_real_option():
    from embdebias.evaluate import MOVED_OPTIONS

    for old, (metric, option) in MOVED_OPTIONS.items():
        assert option in get_metric(metric).options, old
    for metric in ("direct_bias", "ect", "indirect_bias", "residual"):
        assert "neutral_words" in METRICS[metric].options


def test_readme_metric_table_is_the_registry():
    """The README's metric table is what the registry makes (regenerate with metrics_table())."""
    from pathlib import Path

    from embdebias.evaluate import metrics_table

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert metrics_table() in readme


def test_registry_is_the_old_name_of_metrics():
    import embdebias.metrics as metrics

    with pytest.warns(FutureWarning, match="REGISTRY is now called embdebias.metrics.METRICS"):
        assert metrics.REGISTRY is metrics.METRICS
    assert "REGISTRY" not in metrics.__all__ and "METRICS" in metrics.__all__
