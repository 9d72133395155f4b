r"""Embedding Coherence Test (Dev & Phillips, 2019).

The two target sets (e.g. male and female terms) are each summarised by the mean of
their unit-normalized vectors, :math:`\mu_X` and :math:`\mu_Y`; every attribute word
``a`` (e.g. professions) gets the two similarities :math:`\cos(\mu_X, a)` and
:math:`\cos(\mu_Y, a)`, and ECT is the Spearman rank correlation of the two similarity
vectors.  1 means both groups rank the attribute words the same way (no bias in the
ordering); lower values mean more bias.  Ties get average ranks (``scipy.stats.spearmanr``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import EmbdebiasError
from ..wordlists import WeatTest, WordSet
from .._rows import unit_rows
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors


@dataclass
class EctResult(MetricResult):
    """Result of :func:`ect`.

    Attributes
    ----------
    correlation : float
        Spearman's rho between the two similarity vectors (NaN if one is constant).
    p_value : float
        scipy's two-sided p-value for rho (against no correlation; informative only).
    sim_X, sim_Y : list of float
        ``cos(mean X, a)`` and ``cos(mean Y, a)`` for the attribute words in ``words``.
    words, missing : dict
        Words used / out-of-vocabulary words per set ("X", "Y", "attributes").
    """

    correlation: float
    p_value: float
    sim_X: list[float]
    sim_Y: list[float]
    words: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    set_names: dict[str, str] = field(default_factory=dict)

    value_field = "correlation"

    @property
    def n_scored(self) -> int:
        """Attribute words scored."""
        return len(self.words.get("attributes", ()))


def _words(obj, name):
    if obj is None:
        raise EmbdebiasError(f"ect: set {name} is required")
    if isinstance(obj, WordSet):
        return obj.name, list(obj.words)
    if isinstance(obj, str):
        raise EmbdebiasError(f"ect: set {name} must be a list of words, got the string {obj!r}")
    return name, list(obj)


def ect(embedding, X, Y=None, attributes=None, *, max_missing: float = DEFAULT_MAX_MISSING,
        lowercase: bool = True) -> EctResult:
    """Embedding Coherence Test of targets ``X``, ``Y`` over ``attributes``.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    X, Y : list of str or WordSet
        The two target groups.  ``X`` may be a WeatTest: then ``X``/``Y`` are its target
        sets and the attributes default to the union of its ``A`` and ``B``.
    attributes : list of str or WordSet
        The words both groups are compared on (at least 3).
    max_missing, lowercase
        As for every metric (see :mod:`embdebias.metrics._common`).
    """
    from scipy.stats import spearmanr

    emb = as_emb(embedding)
    if isinstance(X, WeatTest):
        test = X
        X, Y = test.X, test.Y
        if attributes is None:
            attributes = WordSet(f"{test.A.name} + {test.B.name}",
                                 tuple(dict.fromkeys(test.A.words + test.B.words)))
    names_words = {"X": _words(X, "X"), "Y": _words(Y, "Y"), "attributes": _words(attributes, "attributes")}
    looks = {k: lookup(emb, w, name=f"ECT: set {k} ({n})" if n != k else f"ECT: set {k}",
                       lowercase=lowercase, max_missing=max_missing,
                       min_size=3 if k == "attributes" else 1)
             for k, (n, w) in names_words.items()}
    mean_x = unit_vectors(emb, looks["X"].rows).mean(axis=0)
    mean_y = unit_vectors(emb, looks["Y"].rows).mean(axis=0)
    attr = unit_vectors(emb, looks["attributes"].rows)
    sim_x = attr @ unit_rows(mean_x)
    sim_y = attr @ unit_rows(mean_y)
    if np.ptp(sim_x) == 0 or np.ptp(sim_y) == 0:
        rho, p = float("nan"), float("nan")
    else:
        res = spearmanr(sim_x, sim_y)
        rho, p = float(res.statistic), float(res.pvalue)
    return EctResult(
        correlation=rho, p_value=p, sim_X=sim_x.tolist(), sim_Y=sim_y.tolist(),
        words={k: list(lk.words) for k, lk in looks.items()},
        missing={k: list(lk.missing) for k, lk in looks.items()},
        lowercased={k: dict(lk.lowercased) for k, lk in looks.items() if lk.lowercased},
        set_names={k: n for k, (n, _) in names_words.items()})
