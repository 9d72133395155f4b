"""The word sets of the multi-group metrics (MAC, RND, RIPA, the generalized WEAT, SAME).

The functions take their sets in WEFE's *query* order: the embedding, then the target
sets (the social groups: female and male terms, the words of each religion), then the
attribute sets (what the groups are measured against: stereotype words, professions).
Each argument is a sequence of word lists (or :class:`~embdebias.wordlists.WordSet`) or
a dict ``name -> words``; unnamed sets are numbered. The keys of a result's ``words`` and
``missing`` dicts are the role and the name: ``"target female"``, ``"attribute 1"``
(a group and its stereotype set often share a name).

As registered metrics (:func:`~embdebias.evaluate.evaluate`), their sets come from the
evaluation's attribute (``ctx.attribute``, an :class:`~embdebias.data.attributes.Attribute`;
gender when none is given): the targets are its groups' words in group order, the
attribute sets its named ``attribute_sets`` and, as one more set, its ``neutral_words``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..errors import EmbdebiasError, quote
from ..wordlists import WordSet
from .base import Metric
from ._common import lookup, unit_vectors

#: The name of the attribute set made of the attribute's neutral words (gender: the professions).
NEUTRAL_SET = "neutral words"


class SetWordCounts:
    """``n_scored`` and ``n_missing`` of a result with ``words`` and ``missing`` by set
    (``{set: [words]}``): the query metrics' and WEAT's."""

    @property
    def n_scored(self) -> int:
        """Target and attribute words used (all sets)."""
        return sum(len(v) for v in self.words.values())

    @property
    def n_missing(self) -> int:
        """Words of the sets that are not in the vocabulary (all sets)."""
        return sum(len(v) for v in self.missing.values())


@dataclass(kw_only=True)
class QueryResult(SetWordCounts):
    """What the results of the query metrics share: the interval, the set names and the words
    kept and lost per set (keyword-only fields, after each metric's own).

    Fields: ``ci`` (the bootstrap interval, None without ``bootstrap``) at ``ci_level``;
    ``targets`` and ``attributes`` (the set names in order); ``words`` (``{set: [words
    used]}``), ``missing`` (``{set: [out-of-vocabulary words]}``) and ``lowercased``
    (``{set: {word: lowercase form used}}``).
    """

    ci: tuple[float, float] | None
    targets: list[str]
    attributes: list[str]
    words: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    ci_level: float = 0.95


def _one_set(value, name: str, metric: str, role: str) -> tuple[str, tuple[str, ...]]:
    if isinstance(value, WordSet):
        return value.name or name, tuple(value.words)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise EmbdebiasError(f"{metric}: {role} set {name!r} must be a list of words, got {quote(value)}")
    words = tuple(value)
    if not all(isinstance(w, str) for w in words):
        raise EmbdebiasError(f"{metric}: {role} set {name!r} must hold words (strings), got {quote(list(words))}")
    return name, words


def named_sets(value, role: str, metric: str) -> dict[str, tuple[str, ...]]:
    """``{name: words}`` of a ``targets`` or ``attributes`` argument (see the module docstring).

    A flat list of words is one set (convenient for attributes: ``["doctor", "nurse"]``).
    """
    if value is None:
        raise EmbdebiasError(f"{metric}: the {role} sets are required")
    if isinstance(value, Mapping):
        items = [_one_set(v, str(k), metric, role) for k, v in value.items()]
    elif isinstance(value, WordSet):
        items = [_one_set(value, "1", metric, role)]
    else:
        seq = list(value) if not isinstance(value, (str, bytes)) else None
        if seq is None:
            raise EmbdebiasError(f"{metric}: the {role} sets must be a list of word lists or a dict "
                                 f"name -> words, got the string {quote(value)}")
        if seq and all(isinstance(w, str) for w in seq):
            seq = [seq]
        items = [_one_set(v, str(i + 1), metric, role) for i, v in enumerate(seq)]
    out: dict = {}
    for name, words in items:
        if name in out:
            raise EmbdebiasError(f"{metric}: two {role} sets are called {name!r}")
        out[name] = words
    if not out:
        raise EmbdebiasError(f"{metric}: no {role} sets given")
    return out


def query_sets(metric: str, targets, attributes, *, n_targets: int | None = None,
               min_targets: int = 2) -> tuple[dict, dict]:
    """``(target sets, attribute sets)``, each ``{name: words}``, checked for their number."""
    t_sets, a_sets = named_sets(targets, "target", metric), named_sets(attributes, "attribute", metric)
    if n_targets is not None and len(t_sets) != n_targets:
        raise EmbdebiasError(f"{metric}: expected {n_targets} target sets, got {len(t_sets)} "
                             f"({', '.join(t_sets)})" + (
                                 "; for more groups compare them two at a time (the registered metric "
                                 "reports every pair of an attribute's groups)" if n_targets == 2 else ""))
    if len(t_sets) < min_targets:
        raise EmbdebiasError(f"{metric}: expected at least {min_targets} target sets (groups), got {len(t_sets)}")
    return t_sets, a_sets


def look_up(emb, sets: dict, metric: str, role: str, *, max_missing: float, lowercase: bool,
            min_size: int = 1) -> dict:
    """``{name: WordLookup}`` of named sets (a set losing more than ``max_missing`` raises
    :class:`~embdebias.errors.MissingWordsError` naming the metric, the role and the set)."""
    return {name: lookup(emb, words, name=f"{metric}: {role} set {name!r}", lowercase=lowercase,
                         max_missing=max_missing, min_size=min_size) for name, words in sets.items()}


def unit_sets(emb, looks: dict) -> dict:
    """``{name: unit float64 vectors}`` of looked-up sets."""
    return {name: unit_vectors(emb, lk.rows) for name, lk in looks.items()}


def raw_sets(emb, looks: dict) -> dict:
    """``{name: float64 vectors as they are}`` of looked-up sets."""
    return {name: emb.take(lk.rows, np.float64) for name, lk in looks.items()}


def key(role: str, name: str) -> str:
    """The key of a set in a result's ``words`` and ``missing`` and in a resampling Sample."""
    return f"{role} {name}"


def query_fields(targets: dict, attributes: dict) -> dict:
    """:class:`QueryResult`'s fields from the lookups of a result's target and attribute sets
    (``{set name: WordLookup}``): no interval yet, the set names, the words kept, lost and
    lower-cased."""
    merged = {key("target", k): v for k, v in targets.items()}
    merged.update({key("attribute", k): v for k, v in attributes.items()})
    return {"ci": None, "targets": list(targets), "attributes": list(attributes),
            "words": {k: list(lk.words) for k, lk in merged.items()},
            "missing": {k: list(lk.missing) for k, lk in merged.items()},
            "lowercased": {k: dict(lk.lowercased) for k, lk in merged.items() if lk.lowercased}}


def pooled(looks: dict, vectors: dict) -> tuple[list, np.ndarray]:
    """The words of several sets as one (first occurrence kept) and their vectors."""
    seen: dict = {}
    for name, lk in looks.items():
        for i, w in enumerate(lk.words):
            seen.setdefault(w, vectors[name][i])
    words = list(seen)
    dim = next(iter(vectors.values())).shape[1]
    return words, (np.stack([seen[w] for w in words]) if words else np.zeros((0, dim)))


def weights(idx: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` resampling weights of the items of a set, each row summing to 1."""
    from ._resample import counts

    return counts(idx, n) / max(idx.shape[1], 1)




def group_sets(attr) -> dict:
    """``{group: target words}`` of an attribute, in group order."""
    return {g: tuple(attr.group_words[g]) for g in attr.groups}


def neutral_word_set(ctx, value) -> list[str]:
    """The words that should carry no attribute: the ``neutral_words`` option, else the
    attribute's neutral words (gender: the professions of ``ctx.lists``)."""
    attr = ctx.attribute_or_default()
    if value is None and attr.neutral_words:
        return list(attr.neutral_words)
    if value is None:  # never gender's professions under another name
        raise EmbdebiasError(f"the attribute {attr.name!r} ({attr.path}) has no neutral_words: give them in its file "
                             f"or as the metric's neutral_words option")
    return ctx.neutral(value)


def attribute_word_sets(attr) -> dict:
    """The attribute sets of an attribute's metrics: its named sets, then its neutral words."""
    out = {str(k): tuple(v) for k, v in dict(attr.attribute_sets).items()}
    if attr.neutral_words:
        out[NEUTRAL_SET] = tuple(attr.neutral_words)
    return out


def pair_units(attr) -> dict:
    """``{unit: (attribute set, (i, j))}`` of a two-group metric: one unit per attribute set,
    and per pair of groups when the attribute has more than two (``"set: g_i vs g_j"``)."""
    sets = attribute_word_sets(attr)
    if attr.k == 2:
        return {name: (name, (0, 1)) for name in sets}
    return {f"{name}: {attr.groups[i]} vs {attr.groups[j]}": (name, (i, j))
            for name in sets for i, j in combinations(range(attr.k), 2)}


def shown_path(path: str) -> str:
    """A bundled file as ``wordlists/...`` (the same in a checkout and a wheel), another path as given."""
    from pathlib import Path

    from ..data.wordlists import data_dir

    try:
        return f"wordlists/{Path(path).resolve().relative_to(data_dir().resolve()).as_posix()}"
    except ValueError:
        return str(path)


def attribute_text(attr) -> str:
    """``attribute NAME (groups ...; file)``, for a metric's data line."""
    where = f", `{shown_path(attr.path)}`" if getattr(attr, "path", "") else ""
    sets = attribute_word_sets(attr)
    sizes = "; ".join(f"{name} ({len(words)})" for name, words in sets.items()) or "none"
    groups = ", ".join(f"{g} ({len(attr.group_words[g])} words)" for g in attr.groups)
    empty = "" if sets else " (nothing to score: the attribute names no attribute_sets and no neutral_words)"
    return f"attribute {attr.name}{where}: groups {groups}; attribute sets {sizes}{empty}"


def function_interval(sample, bootstrap: int, random_state, level: float, *key: str):
    """The bootstrap interval a metric function reports (None when ``bootstrap`` is 0), drawn
    from the generator of the row ``key`` (metric, test, statistic) as evaluate draws it."""
    if not bootstrap:
        return None
    from ._resample import bootstrap_interval, resample_rng

    if isinstance(bootstrap, bool) or int(bootstrap) < 0:
        raise EmbdebiasError(f"bootstrap must be an integer >= 0 (0: no interval), got {bootstrap!r}")
    return bootstrap_interval(sample, int(bootstrap), resample_rng(random_state, *key), float(level))


class QueryMetric(Metric):
    """What the registered query metrics (MAC, RND, RIPA, the generalized WEAT, SAME) share: they
    measure any attribute of k groups, their data line names its sets, and their legend its groups."""

    scope = "any"

    def legend_for(self, ctx):
        attr = ctx.attribute_or_default()
        return f"{self.legend} Attribute: {attr.name} (groups {', '.join(attr.groups)})."

    def data(self, ctx):
        return attribute_text(ctx.attribute_or_default())
