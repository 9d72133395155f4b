"""The extrinsic metric: a sentiment probe trained on the embedding scores counterfactual
sentences, and Czarnowska et al.'s generalized fairness metrics compare its scores.

* :mod:`.bias`: the statistics of one template family, :func:`extrinsic_bias` and the
  registered metric;
* :mod:`.probe`: the :class:`SentimentProbe`;
* :mod:`.templates`: the counterfactual templates and their reader;
* :mod:`._grid`: the statistics on bootstrap resamples of the (template x term) grid.
"""

from __future__ import annotations

from .bias import (
                   STATISTICS,
                   Extrinsic,
                   ExtrinsicResult,
                   ExtrinsicStatistic,
                   FamilyScores,
                   extrinsic_bias,
                   extrinsic_result,
                   fit_probe,
                   grid_keys,
                   grid_statistic,
                   grid_statistics,
                   library_statistics,
                   resolve_threshold,
                   sample_items,
                   score_family,
)
from .templates import PERSON, TemplateFamily, TemplateSet, TemplateUnit, load_templates, tokenize

__all__ = ["PERSON", "STATISTICS", "Extrinsic", "ExtrinsicResult", "ExtrinsicStatistic", "FamilyScores",
           "SentimentProbe", "TemplateFamily", "TemplateSet", "TemplateUnit", "extrinsic_bias", "extrinsic_result",
           "fit_probe", "grid_keys", "grid_statistic", "grid_statistics", "library_statistics", "load_templates",
           "resolve_threshold", "sample_items", "score_family", "tokenize"]


def __getattr__(name):
    # The probe is a scikit-learn estimator: importing it here would make every import of
    # the metric registry (the CLI's ``--help`` included) pay for scikit-learn.
    if name == "SentimentProbe":
        from .probe import SentimentProbe

        return SentimentProbe
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
