"""Bias and quality metrics for word embeddings.

Every metric takes an :class:`~embdebias.embedding.Embedding` (or gensim
``KeyedVectors``), returns a small result dataclass with ``to_dict()``, and reports the
out-of-vocabulary words of each word set it used (``result.missing``).  A set losing
more than ``max_missing`` (default 20 %) of its words raises
:class:`~embdebias.errors.MissingWordsError` naming them.

=====================  ===============================================================
:func:`weat`           Caliskan et al. (2017) effect size and permutation p-value
:func:`rnsb`           Sweeney & Najafian (2019) relative negative sentiment bias
:func:`ect`            Dev & Phillips (2019) embedding coherence test
:func:`bat`            Zhao et al. (2018) bias analogy test on SemBias
:func:`projections`    cosine of words with the gender direction
:func:`direct_bias`    Bolukbasi et al. (2016) DirectBias_c
:func:`word_similarity` WordSim353 / SimLex-999 Spearman correlation
:func:`analogy`        Google analogy accuracy (3CosAdd)
=====================  ===============================================================
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "weat": ".weat", "WeatResult": ".weat",
    "rnsb": ".rnsb", "RnsbResult": ".rnsb", "sentiment_lexicon": ".rnsb",
    "ect": ".ect", "EctResult": ".ect",
    "bat": ".bat", "BatResult": ".bat", "read_sembias": ".bat",
    "projections": ".projection", "direct_bias": ".projection",
    "ProjectionResult": ".projection", "DirectBiasResult": ".projection",
    "word_similarity": ".quality", "analogy": ".quality",
    "SimilarityResult": ".quality", "AnalogyResult": ".quality",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'embdebias.metrics' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
