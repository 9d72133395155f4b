"""Bias and quality metrics for word embeddings.

Every metric takes an :class:`~embdebias.embedding.Embedding` (or gensim
``KeyedVectors``), returns a small result dataclass with ``to_dict()``, and reports the
out-of-vocabulary words of each word set it used (``result.missing``).  A set losing
more than ``max_missing`` (default 20 %) of its words raises
:class:`~embdebias.errors.MissingWordsError` naming them.

============================  =============================================================
:func:`weat`                  Caliskan et al. (2017) effect size and permutation p-value
:func:`rnsb`                  Sweeney & Najafian (2019) relative negative sentiment bias
:func:`ect`                   Dev & Phillips (2019) embedding coherence test
:func:`bat`                   Zhao et al. (2018) bias analogy test on SemBias
:func:`projections`           cosine of words with the gender direction
:func:`direct_bias`           Bolukbasi et al. (2016) DirectBias_c
:func:`word_similarity`       WordSim353 / SimLex-999 Spearman correlation
:func:`analogy`               Google analogy accuracy (3CosAdd)
:func:`residual_bias`         Gonen & Goldberg (2019) clustering, SVM and neighbour tests
:func:`refit_direction_bias`  direct bias along the direction re-fitted in the tested space
:func:`indirect_bias`         Bolukbasi et al. (2016) indirect bias of word pairs
:func:`gender_analogies`      Bolukbasi et al. (2016) generated she:he :: x:y analogies
============================  =============================================================
"""

from __future__ import annotations

# Imported eagerly (they are light: scipy and scikit-learn are imported inside the
# functions) so that the names below are the functions, not the same-named submodules.
from .bat import BatResult, bat, read_sembias
from .ect import EctResult, ect
from .projection import DirectBiasResult, ProjectionResult, direct_bias, projections
from .quality import AnalogyResult, SimilarityResult, analogy, word_similarity
from .residual import (IndirectBiasResult, RefitDirectionResult, ResidualBiasResult, gender_analogies,
                       indirect_bias, refit_direction_bias, residual_bias)
from .rnsb import RnsbResult, rnsb, sentiment_lexicon
from .weat import WeatResult, weat

__all__ = ["AnalogyResult", "BatResult", "DirectBiasResult", "EctResult", "IndirectBiasResult",
           "ProjectionResult", "RefitDirectionResult", "ResidualBiasResult", "RnsbResult",
           "SimilarityResult", "WeatResult", "analogy", "bat", "direct_bias", "ect", "gender_analogies",
           "indirect_bias", "projections", "read_sembias", "refit_direction_bias", "residual_bias", "rnsb",
           "sentiment_lexicon", "weat", "word_similarity"]
