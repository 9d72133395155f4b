"""Bias and quality metrics for word embeddings.

Every metric takes an :class:`~embdebias.embedding.Embedding` (or gensim
``KeyedVectors``), returns a small result dataclass with ``to_dict()``, and reports the
out-of-vocabulary words of each word set it used (``result.missing``).  A set losing
more than ``max_missing`` (default 20 %) of its words raises
:class:`~embdebias.errors.MissingWordsError` naming them.

Each metric is one module: its function, its resampling statistic and its registered
:class:`~embdebias.metrics.base.Metric` (what :func:`~embdebias.evaluate.evaluate` runs;
see :data:`METRICS` and :func:`describe_metrics`). The public module
:mod:`embdebias.metrics.base` is the extension point (``Metric``, ``register``,
``METRICS``; see the contributing guide); ``REGISTRY`` is the old name of ``METRICS``.

==============================  ===============================================================
:func:`weat`                    Caliskan et al. (2017) effect size and permutation p-value
:func:`wefat`                   Caliskan et al. (2017) per-word association (WEFAT)
:func:`factual_association`     correlation of occupations' gender scores with the BLS share of women
:func:`rnsb`                    Sweeney & Najafian (2019) relative negative sentiment bias
:func:`ect`                     Dev & Phillips (2019) embedding coherence test
:func:`bat`                     Zhao et al. (2018) bias analogy test on SemBias
:func:`projections`             cosine of words with the gender direction
:func:`direct_bias`             Bolukbasi et al. (2016) DirectBias_c
:func:`indirect_bias`           Bolukbasi et al. (2016) indirect bias of word pairs
:func:`residual_bias`           Gonen & Goldberg (2019) clustering, SVM and neighbour tests
:func:`refit_direction_bias`    direct bias along the direction re-fitted in the tested space
:func:`gipe`                    Kumar et al. (2020) gender-based illicit proximity estimate (GIPE)
:func:`gender_analogies`        Bolukbasi et al. (2016) generated she:he :: x:y analogies
:func:`occupation_bias`         Lu et al. (2020) aggregate occupation bias
:func:`extrinsic_bias`          Czarnowska et al. (2021) generalized metrics over a sentiment probe
:func:`word_similarity`         WordSim353 / SimLex-999 Spearman correlation
:func:`analogy`                 Google analogy accuracy (3CosAdd)
:func:`mac`                     Manzini et al. (2019) mean average cosine distance, k groups
:func:`rnd`                     Garg et al. (2018) relative norm distance of two groups
:func:`ripa`                    Ethayarajh et al. (2019) relational inner product association
:func:`generalized_weat`        Swinger et al. (2019) WEAT for k groups, with a permutation p-value
:func:`same`                    Schröder et al. (2021) SAME score, k groups, with skew and stereotype
:func:`valnorm`                 Toney & Caliskan (2021) agreement with human valence norms (user's lexicon)
:func:`wat`                     Du et al. (2019) agreement with human gender associations (user's file)
==============================  ===============================================================
"""

from __future__ import annotations

from .._warn import warn

# The metric modules are imported in report order: importing one registers its metric.
# (They are light: scipy and scikit-learn are imported inside the functions.)
from .base import METRICS, EvalContext, Metric, MetricResult, Option, describe_metrics, get_metric, register

# isort: off
from .weat import WeatResult, weat
from .wefat import WefatResult, wefat
from .factual import FactualAssociationResult, factual_association
from .rnsb import RnsbResult, rnsb, sentiment_lexicon
from .ect import EctResult, ect
from .bat import BatResult, bat, read_sembias
from .projection import DirectBiasResult, ProjectionResult, direct_bias, projections
from .indirect import IndirectBiasResult, indirect_bias
from .residual import ResidualBiasResult, residual_bias
from .refit import RefitDirectionResult, refit_direction_bias
from .gipe import GipeResult, gipe
from .analogies import gender_analogies
from .occupation import OccupationBiasResult, occupation_bias
from .extrinsic import ExtrinsicResult, extrinsic_bias
from .quality import AnalogyResult, SimilarityResult, analogy, word_similarity
from .mac import MacResult, mac
from .rnd import RndResult, rnd
from .ripa import RipaResult, ripa
from .generalized_weat import GeneralizedWeatResult, generalized_weat
from .same import SameResult, same
from .validity import ValidityResult, valnorm, wat
# isort: on

#: The functions of the metrics and their results (checked against :data:`METRICS` by the tests).
__all__ = ["AnalogyResult", "BatResult", "DirectBiasResult", "EctResult", "EvalContext", "ExtrinsicResult",
           "FactualAssociationResult", "IndirectBiasResult", "Metric", "MetricResult", "OccupationBiasResult",
           "Option", "ProjectionResult", "METRICS", "RefitDirectionResult", "ResidualBiasResult", "RnsbResult",
           "SimilarityResult", "WeatResult", "WefatResult", "analogy", "bat", "describe_metrics", "direct_bias",
           "ect", "extrinsic_bias", "factual_association", "gender_analogies", "get_metric", "indirect_bias",
           "occupation_bias", "projections", "read_sembias", "refit_direction_bias", "register", "residual_bias",
           "rnsb", "sentiment_lexicon", "weat", "wefat", "word_similarity",
           # the query metrics of issue 23 (WEFE's order: embedding, targets, attributes)
           "GeneralizedWeatResult", "MacResult", "RipaResult", "RndResult", "SameResult", "generalized_weat", "mac",
           "ripa", "rnd", "same",
           # RAN-Debias's companion metric (Kumar et al. 2020)
           "GipeResult", "gipe",
           # validity against human norms (issue 34): the user's lexicon, never bundled
           "ValidityResult", "valnorm", "wat"]


def __getattr__(name):
    # METRICS was called REGISTRY before issue 30; the old name keeps working for one release.
    if name == "REGISTRY":
        warn("embdebias.metrics.REGISTRY is now called embdebias.metrics.METRICS; the old name "
             "will be removed in the next release", FutureWarning)
        return METRICS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
