"""Half-Sibling Regression (Yang & Feng, AAAI 2020) as the fixed ``d x d`` map it is."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._warn import warn
from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import MissingWordsError
from ..subspace import MissingWordsWarning
from ._linear import LinearDebiaser
from ._params import WORDS

#: The bundled definition words of the published setting (Zhao et al. 2018, 222 + 222).
DEFINITION_LISTS = ("zhao2018_male", "zhao2018_female")


def definition_words(words=None) -> list[str]:
    """``words`` as a list, or Zhao et al.'s male then female words (each word once, file order)."""
    if words is None:
        words = [w for name in DEFINITION_LISTS for w in wordlists.load_words(name)]
    elif isinstance(words, str):
        words = wordlists.load_words(words)
    return list(dict.fromkeys(words))


def hsr_map(definition: np.ndarray, alpha: float) -> np.ndarray:
    """The ``(d, d)`` map ``M`` with ``x @ M`` = HSR's debiased ``x`` of a non-definition row.

    With ``V_d`` the definition vectors as columns (``d x n_d``), Yang & Feng predict the
    gender part of a word ``v`` by ridge regression across the ``d`` dimensions:
    ``G = V_d (V_d^T V_d + alpha I)^-1 V_d^T v``. That operator equals
    ``H = (V_d V_d^T + alpha I)^-1 V_d V_d^T`` (push-through identity), a ``d x d``
    matrix, so ``v' = (I - H) v`` and, for rows, ``x' = x (I - H)^T``.
    """
    V = np.asarray(definition, dtype=np.float64).T  # d x n_d
    gram = V @ V.T
    H = np.linalg.solve(gram + alpha * np.eye(gram.shape[0]), gram)
    return (np.eye(gram.shape[0]) - H).T


class HalfSiblingRegression(LinearDebiaser):
    """Half-Sibling Regression debiasing (Yang & Feng 2020).

    Every word that is not a gender-definition word loses the part of its vector that
    a ridge regression on the definition words' vectors predicts (the "half-sibling"
    confounder); definition words are kept. As published: Zhao et al.'s 222 + 222
    definition words, ``alpha = 60``, on the raw (not normalized) vectors.

    The published code and WEFE's port build one regression per word from per-word
    dictionaries; here the same operator is the fixed ``d x d`` map of
    :func:`hsr_map`, so ``transform`` is one matrix product per chunk (bounded memory).
    Given each definition word once, it equals WEFE 1.0.1's ``HalfSiblingRegression``
    to 3.5e-7 after unit normalization (3.3e-7 on GloVe 6B 50d, ``benchmarks/bench_debiasers.py``).

    Deliberate differences, tested in ``tests/test_debiasers_hsr.py``:

    * every output row is unit length (the :class:`~embdebias.debias._base.Debiaser`
      contract); the paper's vectors are not normalized, so the comparison is after
      normalization;
    * a definition word listed twice (Zhao et al.'s files repeat some, such as
      "bachelor") counts once, as in the authors' code (its notebook intersects the
      vocabulary with the set of the words); WEFE counts repeats (1.0.1 builds its
      regression from the list as given, so a repeated word weighs twice there). With
      each word once embdebias equals WEFE to 3.5e-7; given the files as released,
      WEFE differs from it (and from the authors' code) by up to 6.0e-2.

    Parameters
    ----------
    alpha : float, default 60
        Ridge penalty of the regression.
    definition_words : list of str or str, optional
        Gender-definition words (a list, or a bundled list name or path); default: Zhao
        et al.'s male and female word files.
    subspace : ignored
        Accepted so ``embdebias run`` can pass its bias subspace; HSR regresses on the
        definition words, not on a direction.
    lists : str, default "published"
        Accepted for the run's interface (the definition words are not a list role).
    max_missing : float, default 0.5
        Largest share of the definition words that may be out of the vocabulary
        (more raises :class:`~embdebias.errors.MissingWordsError`).
    chunk_rows : int
        Rows per chunk in :meth:`transform`.

    Attributes
    ----------
    map_ : ndarray (d, d)
        ``x' = x @ map_`` for every non-definition row.
    kept_words_ : list of str
        The definition words found (left as they are).
    missing_words_ : list of str
        Definition words not in the vocabulary.
    n_features_in_ : int
    """

    _suffix = "hsr"
    _params_schema = {**LinearDebiaser._params_schema, "kept_words_": WORDS, "missing_words_": WORDS}
    _parameter_constraints = {
        "alpha": [Interval(Real, 0, np.inf, closed="left")],  # [0, inf): finite
        "definition_words": [list, tuple, str, None],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "max_missing": [Interval(Real, 0, 1, closed="both")],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, alpha: float = 60.0, *, definition_words=None, subspace=None,
                 lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.5,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.alpha = alpha
        self.definition_words = definition_words
        self.subspace = subspace
        self.lists = lists
        self.max_missing = max_missing
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "HalfSiblingRegression":
        """Fit the map on the raw vectors of the definition words of ``embedding``."""
        self._validate()
        emb = as_embedding(embedding)
        words = definition_words(self.definition_words)
        rows = emb.words.rows(words)
        found = [w for w, r in zip(words, rows) if r >= 0]
        missing = [w for w, r in zip(words, rows) if r < 0]
        check_missing(missing, len(words), self.max_missing, emb, "HSR definition words")
        self.map_ = hsr_map(emb.take(rows[rows >= 0], dtype=np.float64), float(self.alpha))
        self.kept_words_ = found
        self.missing_words_ = missing
        self.n_features_in_ = emb.dim
        return self

    def run_info(self, embedding: Embedding) -> dict:
        return {"alpha": float(self.alpha), "definition_words": len(self.kept_words_),
                "definition_words_missing": len(self.missing_words_)}


def check_missing(missing: list, total: int, max_missing: float, emb: Embedding, what: str,
                  at_least: int = 2) -> None:
    """Raise when more than ``max_missing`` of ``total`` words are missing (or fewer than ``at_least``
    found); else warn about the missing ones."""
    if total - len(missing) < at_least or len(missing) > max_missing * total:
        raise MissingWordsError(f"{what}: {len(missing)} of {total} not in {emb.name} (at most "
                                f"{max_missing:.0%} may be missing): {', '.join(missing[:10])}"
                                + (" ..." if len(missing) > 10 else ""), missing)
    if missing:
        warn(f"{what}: {len(missing)} of {total} not in {emb.name}: {', '.join(missing[:10])}"
             + (" ..." if len(missing) > 10 else ""), MissingWordsWarning)
