r"""Generalized extrinsic fairness metrics (Czarnowska, Vyas & Shah, 2021).

Extrinsic fairness metrics compare how a downstream model (e.g. a classifier built on
the embeddings) behaves for different protected groups.  Czarnowska et al. show that
most published metrics are one of three generalized metrics, each parametrized by a
scoring function :math:`\varphi` (the base measurement of a set of examples), a
comparison function :math:`d`, a normalizer :math:`N` and, for BCM, a background
:math:`\beta`:

======================  ================================================================
:func:`pcm`             Pairwise Comparison Metric: every pair of groups (Eq. 1-2)
:func:`bcm`             Background Comparison Metric: each group vs. a background (Eq. 3-4)
:func:`vbcm`            vector-valued BCM: the per-group values, not aggregated
:func:`mcm`             Multi-group Comparison Metric: all groups at once (Eq. 5-6)
:func:`fairness_metric` a named metric from the literature (:func:`available_metrics`)
:func:`read_scores_csv` a classifier's scores from a CSV file (``embdebias fairness``)
======================  ================================================================

All of them take parallel arrays ``scores`` and ``groups`` (one entry per example),
optionally ``labels`` (gold 0/1 labels) and ``templates`` (the counterfactual template
of each example; given, the metric is computed within each template and averaged over
templates: the counterfactual form).  Bad input raises
:class:`~embdebias.errors.FairnessInputError`.

>>> from embdebias import fairness
>>> scores = [0.9, 0.7, 0.4, 0.2]
>>> groups = ["f", "f", "m", "m"]
>>> round(fairness.pcm(scores, groups).value, 10)  # |mean(f) - mean(m)| = |0.8 - 0.3|
0.5
>>> round(fairness.bcm(scores, groups).value, 10)  # (|0.55 - 0.8| + |0.55 - 0.3|) / 2
0.25
>>> result = fairness.fairness_metric("fped", scores, groups, labels=[1, 0, 1, 0])
>>> round(result.value, 10)  # FPR: all 1/2, f 1/1, m 0/1 -> |1/2 - 1| + |1/2 - 0|
1.0
"""

from __future__ import annotations

from ._data import FairnessData, prepare
from .background import Background, background
from .comparison import ComparisonFunction, available_comparisons, distance
from .generalized import bcm, mcm, pcm, vbcm
from .normalizer import normalizer
from .registry import METRICS, MetricSpec, available_metrics, fairness_metric, get_metric
from .result import FairnessResult, VectorResult
from .scores_file import ScoresTable, read_scores_csv
from .scoring import ScoringFunction, available_scoring_functions, phi

__all__ = ["METRICS", "Background", "ComparisonFunction", "FairnessData", "FairnessResult",
           "MetricSpec", "ScoresTable", "ScoringFunction", "VectorResult", "available_comparisons",
           "available_metrics", "available_scoring_functions", "background", "bcm", "distance",
           "fairness_metric", "get_metric", "mcm", "normalizer", "pcm", "phi", "prepare", "read_scores_csv",
           "vbcm"]
