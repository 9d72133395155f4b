"""Helpers shared by the metrics: word lookup with out-of-vocabulary accounting.

Every metric resolves its word sets through :func:`lookup`, which

* keeps the words that are in the vocabulary, in the given order;
* optionally falls back to the lowercase form of a word whose exact form is missing
  (``lowercase=True``, the default) and records that mapping, because GloVe 6B and many
  other vocabularies are lowercase while published stimuli (Caliskan et al.'s names,
  the Google analogy questions) are capitalised.  The exact form always wins when it is
  present, so for a cased vocabulary the fallback only rescues words that would
  otherwise be lost;
* raises :class:`~embdebias.errors.MissingWordsError` naming the set and its missing
  words when more than ``max_missing`` of the set is lost (or the set ends up smaller
  than ``min_size``).
"""

from __future__ import annotations

import math
from itertools import chain
from dataclasses import dataclass, field, fields, is_dataclass

import numpy as np

from .._case import rows_with_lowercase
from .._rows import unit_rows
from ..embedding import Embedding, as_embedding
from ..errors import EmbdebiasError, MissingWordsError

#: Default largest fraction of a word set that may be out of vocabulary.
DEFAULT_MAX_MISSING = 0.2


@dataclass
class WordLookup:
    """The in-vocabulary part of a word set.

    Attributes
    ----------
    name : str
        Name of the set (used in messages).
    words : list of str
        The requested words that were found (original spelling), in order.
    rows : ndarray of int64
        Their rows in the embedding.
    missing : list of str
        The requested words that were not found.
    lowercased : dict
        ``{requested word: lowercase form used}`` for the words found only in lowercase.
    """

    name: str
    words: list[str]
    rows: np.ndarray
    missing: list[str] = field(default_factory=list)
    lowercased: dict[str, str] = field(default_factory=dict)

    @property
    def n_requested(self) -> int:
        return len(self.words) + len(self.missing)


def check_max_missing(max_missing: float) -> float:
    max_missing = float(max_missing)
    if not 0.0 <= max_missing <= 1.0:
        raise EmbdebiasError(f"max_missing must be a fraction in [0, 1], got {max_missing}")
    return max_missing


def lookup(emb: Embedding, words, *, name: str = "words", lowercase: bool = True,
           max_missing: float = DEFAULT_MAX_MISSING, min_size: int = 1) -> WordLookup:
    """Resolve ``words`` in ``emb``; see the module docstring.

    Raises
    ------
    MissingWordsError
        If more than ``max_missing`` of the (deduplicated) words are missing, or fewer
        than ``min_size`` words are left.  The message names the set, the embedding and
        the missing words.
    """
    max_missing = check_max_missing(max_missing)
    words = list(dict.fromkeys(str(w) for w in words))
    rows, lowered = rows_with_lowercase(emb.words, words, lowercase)
    found = rows >= 0
    kept = [w for w, f in zip(words, found) if f]
    missing = [w for w, f in zip(words, found) if not f]
    if words and (len(missing) / len(words) > max_missing or len(kept) < min_size):
        shown = ", ".join(map(repr, missing[:30])) + (f" and {len(missing) - 30} more" if len(missing) > 30 else "")
        raise MissingWordsError(
            f"{name}: {len(missing)} of {len(words)} word(s) are not in the vocabulary of "
            f"{emb.name} (more than the allowed {max_missing:.0%}"
            f"{'' if len(kept) >= min_size else f', or fewer than {min_size} left'}): {shown}",
            missing)
    if not words and min_size > 0:
        raise MissingWordsError(f"{name}: the word set is empty", [])
    return WordLookup(name, kept, rows[found].astype(np.int64), missing, lowered)


def unit_vectors(emb: Embedding, rows) -> np.ndarray:
    """Rows of ``emb`` as unit-length float64 vectors (zero rows stay zero)."""
    return unit_rows(emb.take(np.asarray(rows, dtype=np.int64), np.float64))


class MetricResult:
    """What every metric's result offers, whatever the metric.

    ``value`` (the headline number, a property), ``n_scored`` (how many items -- words,
    pairs, lines or questions -- the value was computed from), ``missing`` (``{set:
    [out-of-vocabulary words]}``), ``lowercased`` (``{set: {word: lower-case form
    used}}``) and ``to_dict()`` (every field, JSON-ready, with ``value`` and
    ``n_scored``). Subclasses are dataclasses naming their headline field in
    ``value_field``; ``n_scored`` is a field or a property of each.
    """

    value_field = ""

    @property
    def value(self) -> float:
        """The headline number of the result (e.g. WEAT's effect size)."""
        return float(getattr(self, self.value_field))

    def to_dict(self) -> dict:
        """A JSON-serialisable dict of every field, with ``value`` and ``n_scored``."""
        out = to_builtin(self)
        out.setdefault("lowercased", {})
        out.update(value=to_builtin(self.value), n_scored=int(self.n_scored))
        return out


def missing_report(*lookups: WordLookup) -> dict[str, list[str]]:
    """``{set name: missing words}`` for the result objects."""
    return {lk.name: list(lk.missing) for lk in lookups}


def lowercase_report(*lookups: WordLookup) -> dict[str, dict[str, str]]:
    """``{set name: {word: lowercase form}}`` for the sets where the fallback was used."""
    return {lk.name: dict(lk.lowercased) for lk in lookups if lk.lowercased}


def as_emb(embedding) -> Embedding:
    return as_embedding(embedding)


def to_builtin(obj):
    """Convert ``obj`` to JSON-serialisable Python values: numpy scalars and arrays,
    tuples and dataclasses become numbers, lists and dicts; NaN and infinity become None.

    Results hold lists of tens of thousands of numbers or words (every pair of
    professions, say): a list of plain floats or strings is converted in one
    comprehension, not one call per item.
    """
    kind = type(obj)
    if kind is float:
        return obj if math.isfinite(obj) else None  # strict JSON has no NaN / Infinity
    if kind in _PLAIN:
        return obj
    if isinstance(obj, dict):
        return {str(k): to_builtin(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return _list_to_builtin(obj)
    if isinstance(obj, np.ndarray):
        return to_builtin(obj.tolist())
    return _scalar_to_builtin(obj)


_PLAIN = frozenset((str, int, bool, type(None)))


_ROWS = frozenset((list, tuple))


def _list_to_builtin(items) -> list:
    if len(items) > 16:  # a column of plain values: one pass, no call per item
        kinds = set(map(type, items))
        if kinds == {float}:
            if math.isfinite(sum(items)):  # a NaN or an infinity makes the sum NaN or infinite
                return list(items)
            return [v if math.isfinite(v) else None for v in items]
        if kinds <= _PLAIN:
            return list(items)
        if kinds <= _ROWS:  # a table of plain values (word pairs, an array's rows): one pass per row
            rows = _plain_rows(items)
            if rows is not None:
                return rows
    return [to_builtin(v) for v in items]


def _plain_rows(items) -> list | None:
    """``items`` (lists or tuples) as lists when every value is plain or a float, else None."""
    kinds = set(map(type, chain.from_iterable(items)))
    if kinds <= _PLAIN:
        return list(map(list, items))
    if kinds <= _PLAIN | {float}:
        return [[None if type(v) is float and not math.isfinite(v) else v for v in row] for row in items]
    return None


def _scalar_to_builtin(obj):
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return to_builtin(float(obj))
    if is_dataclass(obj) and not isinstance(obj, type):
        # a result's own fields first, then the keyword-only ones it shares (QueryResult's)
        return {f.name: to_builtin(getattr(obj, f.name)) for f in sorted(fields(obj), key=lambda f: f.kw_only)}
    return obj


def spawn_seeds(random_state, n: int) -> list[int]:
    """``n`` independent integer seeds derived from ``random_state`` (reproducibly)."""
    ss = np.random.SeedSequence(None if random_state is None else int(random_state))
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in ss.spawn(n)]
