"""
The one resampling engine of the metrics: seeded bootstrap intervals, paired comparisons,
and the analytic intervals (Wilson, Fisher z, normal interval of a mean) of the statistics a
bootstrap cannot redo cheaply.

A metric's value is a function of a few word sets (or SemBias lines, or classifier
runs). A :class:`Sample` holds, for one statistic, the items of each set (their keys:
words or line numbers) and a function that recomputes the statistic from resampled
item indices -- for ``B`` resamples at once, as ``(B, n)`` index arrays, so a thousand
resamples cost a few vectorized operations. Each metric module defines its own such
function next to the metric (e.g. :func:`embdebias.metrics.weat.weat_effect_sizes`).

* :func:`bootstrap_interval`: each set is resampled with replacement, independently
  (Delobelle et al. 2022 show bias scores move with the choice of words; the interval
  says how far). The percentile interval at ``level`` (default 95%).
* :func:`paired_change`: the change of the *bias* (see :data:`FAIRER`) from a reference
  embedding to another, on the items both have, each resample drawing the SAME items for
  both embeddings, so the noise of the word choice cancels. The change is significant
  when its interval excludes 0.
* :func:`resample_rng`: the generator of one interval or comparison, derived from the
  seed and the row's key (metric, test, statistic) -- never from the embedding's name, its
  column position or the other columns -- so that the function API
  (``weat(..., bootstrap=...)``) and :func:`~embdebias.evaluate.evaluate` draw the same
  resamples, a column's numbers do not depend on the company it keeps, and the reference
  and every other column of a row are compared on common resamples.
"""

from __future__ import annotations

import weakref
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: How a statistic's bias is read: "lower" (smaller is fairer), "higher" (larger is
#: fairer), "zero" (closer to 0 is fairer: the bias is the absolute value).
FAIRER = ("lower", "higher", "zero")


@dataclass
class Sample:
    """The items a statistic was computed from, and how to recompute it.

    Attributes
    ----------
    groups : dict
        ``{set name: [item keys]}`` in the order of the data ``stat`` uses.
    stat : callable
        ``stat({set name: (B, n_set) int array}) -> (B,) array``: the statistic on ``B``
        resamples, each index array selecting items of its set.
    fairer : {"lower", "higher", "zero"}
        Which way is fairer (for :func:`paired_change`).
    """

    groups: dict
    stat: Callable[[dict], np.ndarray]
    fairer: str = "lower"

    def value(self) -> float:
        """The statistic on all items (no resampling)."""
        full = {g: np.arange(len(keys))[None, :] for g, keys in self.groups.items()}
        return float(self.stat(full)[0])


def bias_of(values: np.ndarray, fairer: str) -> np.ndarray:
    """The bias magnitude of statistic values: larger is always less fair."""
    if fairer == "zero":
        return np.abs(values)
    return -values if fairer == "higher" else values


def _draw(rng: np.random.Generator, n_items: int, n_boot: int) -> np.ndarray:
    return rng.integers(0, n_items, size=(n_boot, n_items)) if n_items else np.zeros((n_boot, 0), int)


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if finite.size < max(10, values.size // 2):
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(finite, [tail, 1.0 - tail])
    return float(lo), float(hi)


#: Most resampled item indices held at once; larger item sets (the analogy questions) are
#: resampled in blocks of rows, drawn one after the other from the same generator.
_MAX_DRAWN = 4_000_000


def _resampled(sizes: dict, n_boot: int, rng: np.random.Generator, fn) -> np.ndarray:
    """``fn(draws)`` over ``n_boot`` resamples of sets of ``sizes``, in blocks when they are large
    (small sets, every metric but the analogy questions, are drawn in one block as before)."""
    total = max(1, sum(sizes.values()))
    block = n_boot if total * n_boot <= _MAX_DRAWN else max(1, _MAX_DRAWN // total)
    out = []
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        with np.errstate(all="ignore"):
            out.append(np.asarray(fn({g: _draw(rng, n, b) for g, n in sizes.items()}), dtype=np.float64))
    return np.concatenate(out) if out else np.zeros(0)


def bootstrap_interval(sample: Sample, n_boot: int, rng: np.random.Generator,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the statistic over ``n_boot`` resamples of every set."""
    return bootstrap_intervals({None: sample}, n_boot, lambda: rng, level)[None]


def bootstrap_intervals(samples: dict, n_boot: int, rng: Callable[[], np.random.Generator],
                        level: float = 0.95) -> dict:
    """:func:`bootstrap_interval` of each of ``samples`` (``{name: Sample}``, one row's columns),
    ``{name: (low, high)}``; ``rng()`` makes the row's generator afresh.

    Each interval is the one :func:`bootstrap_interval` gives with a fresh generator; the
    samples with sets of the same sizes (the usual case: every column found the same words)
    would draw the same resamples, so these are drawn once and every such column's statistic
    computed on them."""
    by_sizes: dict = {}
    for name, sample in samples.items():
        sizes = tuple((g, len(keys)) for g, keys in sample.groups.items())
        by_sizes.setdefault(sizes, {})[name] = sample
    out = {}
    for sizes, group in by_sizes.items():
        stats = [s.stat for s in group.values()]
        values = _resampled(dict(sizes), n_boot, rng(), lambda draws, stats=stats: np.stack(
            [np.asarray(stat(draws), dtype=np.float64) for stat in stats], axis=1)).reshape(-1, len(group))
        out.update({name: _interval(values[:, j], level) for j, name in enumerate(group)})
    return {name: out[name] for name in samples}


def paired_change(reference: Sample, other: Sample, n_boot: int, rng: np.random.Generator,
                  level: float = 0.95, fair_value: float | None = None) -> dict:
    """Change of the bias from ``reference`` to ``other`` on the items both have.

    Returns ``{"change", "ci_low", "ci_high", "outcome", "n_items"}``: the change of the
    bias magnitude (negative: fairer), its paired-bootstrap interval, and ``outcome``
    "improved", "worse" or "no significant change" (the interval contains 0).

    With ``fair_value`` (the value of no bias: 0 for a "lower" or "zero" statistic, ECT's 1 for
    its "higher" correlation), also ``"share"``, ``"share_ci_low"``, ``"share_ci_high"``: the share
    of the reference's bias removed, ``-change / bias(reference)`` with the bias measured from
    ``fair_value`` (1: all of it; negative: bias added), and its interval over the SAME resamples
    as the change's, each resample's change divided by that resample's reference bias (so the
    change's interval and outcome are those without ``fair_value``).
    """
    return paired_changes(reference, {None: other}, n_boot, lambda: rng, level, {None: fair_value})[None]


def _common_positions(reference: Sample, other: Sample) -> tuple[dict, dict, int]:
    """``(positions in reference, positions in other, n)`` of the items both have, per set.

    A set whose keys are the other's, in the same order and all distinct (the usual case: every
    column found the same words or answered the same questions), is matched whole, without the
    Python loop over its items (the analogy test's 15,000 questions: 0.8 ms, not 9 ms per column
    and statistic); with a repeated key the loop's answer (the other's last place of it) differs,
    so such a set takes the loop."""
    pos_ref, pos_other, n_items = {}, {}, 0
    for g, keys in reference.groups.items():
        other_keys = other.groups.get(g, [])
        if _same_distinct_keys(keys, other_keys):
            pos_ref[g] = pos_other[g] = np.arange(len(keys), dtype=np.int64)
            n_items += len(keys)
            continue
        where = {k: i for i, k in enumerate(other_keys)}
        common = [(i, where[k]) for i, k in enumerate(keys) if k in where]
        pos_ref[g] = np.array([i for i, _ in common], dtype=np.int64)
        pos_other[g] = np.array([j for _, j in common], dtype=np.int64)
        n_items += len(common)
    return pos_ref, pos_other, n_items


def _same_distinct_keys(keys, other_keys) -> bool:
    """Whether ``keys`` and ``other_keys`` are the same sequence of distinct keys."""
    keys, other_keys = list(keys), list(other_keys)
    return keys == other_keys and len(set(keys)) == len(keys)


def _positions(positions: dict, idx: dict) -> dict:
    """``{set: positions[set][idx[set]]}``: the resampled common items' places in one sample. Where
    the common items are all of that sample's, in its order (the usual case: every column found
    the same words), the places are the drawn indices themselves, not gathered again."""
    return {g: i if _is_identity(positions[g]) else positions[g][i] for g, i in idx.items()}


def _is_identity(positions: np.ndarray) -> bool:
    return bool(positions.size == 0 or (positions[0] == 0 and positions[-1] == positions.size - 1
                                        and np.array_equal(positions, np.arange(positions.size))))


def paired_changes(reference: Sample, others: dict, n_boot: int, rng: Callable[[], np.random.Generator],
                   level: float = 0.95, fair_values: dict | None = None) -> dict:
    """:func:`paired_change` of ``reference`` against each of ``others`` (``{name: Sample}``),
    ``{name: change}``; ``rng()`` makes the row's generator afresh, ``fair_values[name]`` as
    :func:`paired_change`'s ``fair_value``.

    Each comparison draws from its own fresh generator, so each is the one
    :func:`paired_change` gives; the columns whose common items sit at the same places of the
    reference (the usual case: the same words found) draw the same resamples, so these are
    drawn once and the reference's statistic on them computed once for all of them.
    """
    fair_values = fair_values or {}
    by_items: dict = {}
    for name, other in others.items():
        pos_ref, pos_other, n_items = _common_positions(reference, other)
        signature = tuple((g, p.tobytes()) for g, p in pos_ref.items())
        by_items.setdefault(signature, (pos_ref, n_items, {}))[2][name] = (other, pos_other)
    out = {}
    for pos_ref, n_items, group in by_items.values():
        def changes(idx, pos_ref=pos_ref, group=group):
            ref_bias = bias_of(np.asarray(reference.stat(_positions(pos_ref, idx)), float), reference.fairer)
            return np.stack([np.stack([bias_of(np.asarray(other.stat(_positions(pos, idx)), float), other.fairer)
                                       - ref_bias, ref_bias], axis=1)
                             for other, pos in group.values()], axis=1)          # (B, columns, 2)

        full = {g: np.arange(len(p))[None, :] for g, p in pos_ref.items()}
        with np.errstate(all="ignore"):
            at_full = changes(full)[0]
        both = _resampled({g: len(p) for g, p in pos_ref.items()}, n_boot, rng(), changes)
        both = both.reshape(-1, len(group), 2)
        for j, name in enumerate(group):
            out[name] = _change_entry(at_full[j], both[:, j], n_items, reference.fairer, level, fair_values.get(name))
    return {name: out[name] for name in others}


def _change_entry(at_full: np.ndarray, both: np.ndarray, n_items: int, fairer: str, level: float,
                  fair_value: float | None) -> dict:
    """One comparison's entry from its change and reference bias on all items (``at_full``) and on
    each resample (``both``, ``(B, 2)``)."""
    change, ref_bias = at_full
    lo, hi = _interval(both[:, 0], level)
    outcome = ("improved" if hi < 0 else "worse" if lo > 0 else "no significant change") \
        if np.isfinite(lo) else "not comparable"
    out = {"change": float(change), "ci_low": lo, "ci_high": hi, "outcome": outcome, "n_items": n_items}
    if fair_value is not None:
        offset = _magnitude_offset(fairer, fair_value)
        with np.errstate(all="ignore"):
            shares = -both[:, 0] / (both[:, 1] + offset)
            share = -change / (ref_bias + offset)
        s_lo, s_hi = _interval(np.where(np.isfinite(shares), shares, np.nan), level)
        out.update(share=float(share) if np.isfinite(share) else float("nan"), share_ci_low=s_lo, share_ci_high=s_hi)
    return out


def _magnitude_offset(fairer: str, fair_value: float) -> float:
    """What turns :func:`bias_of` into the distance from the fair value: ``fair - v`` for a
    "higher" statistic is ``bias_of(v) + fair``; "lower" is measured from 0 (its values are
    magnitudes), "zero" is ``|v|``."""
    return float(fair_value) if fairer == "higher" else 0.0


#: Two-sided 95% normal quantile.
Z95 = 1.959964


def resample_rng(seed, *key: str) -> np.random.Generator:
    """The generator of the resamples of the row ``key``, from the run's ``seed`` (None: 0)."""
    return np.random.default_rng([0 if seed is None else int(seed), zlib.crc32("/".join(key).encode())])


def counts(idx: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` multiplicities of the items drawn in each row of ``idx``."""
    return _flat_counts(idx, n)[1].astype(np.float64)


def _flat_counts(idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(each drawn item's place in a flat (B, n) table, the (B, n) whole-number counts)``."""
    b = idx.shape[0]
    flat = idx + (np.arange(b) * n)[:, None]
    return flat, np.bincount(flat.ravel(), minlength=b * n).reshape(b, n)


def per_draw(fn: Callable) -> Callable:
    """``fn(drawn, *args)`` (``drawn``: an index array of a draw), remembered while that very array
    lives: a row's columns are computed on the same draws (:func:`bootstrap_intervals`,
    :func:`paired_changes`), so what depends only on the draw (counts, the ranks of values
    every column shares) is computed once for all of them. An entry is dropped when its
    array is freed (a weak reference; an array's id is not reused while it lives), so
    nothing is held after the row. The answer is read-only: a caller changing it in place
    would change every column's."""
    kept: dict = {}

    def remembered(drawn: np.ndarray, *args):
        key = (id(drawn), *args)
        hit = kept.get(key)
        if hit is not None and hit[0]() is drawn:
            return hit[1]
        value = fn(drawn, *args)
        for part in value if isinstance(value, tuple) else (value,):
            if isinstance(part, np.ndarray):
                part.flags.writeable = False
        kept[key] = (weakref.ref(drawn, lambda _, key=key: kept.pop(key, None)), value)
        return value
    remembered.kept = kept
    return remembered


#: :func:`counts` of a draw, taken once for all the columns (and statistics) computed on it.
drawn_counts = per_draw(counts)


def ranks_in_resamples(values) -> Callable[[np.ndarray], np.ndarray]:
    """``ranks(idx)``: the ranks of ``values[idx]`` within each row of a ``(B, n)`` index array,
    ties averaged -- exactly :func:`scipy.stats.rankdata` ``(values[idx], axis=1)``.

    Why not rankdata: it sorts every resample (``B n log n``). The values are fixed and only
    their multiplicities change, so the values are sorted once; in a resample, an item's rank
    is the number of drawn values below its own plus half the number equal to it, plus one
    half -- sums of whole counts, exact in float64, so the ranks are the same numbers. Twice the
    rank, ``2 (below) + (equal) + 1``, is counted in whole numbers and halved once (exact), and
    each drawn copy's rank gathered from the flat ``(B, classes)`` table at the flat places the
    counting used (not ``take_along_axis``, which builds its index again): 1.4x faster.
    """
    classes, of_item = np.unique(np.asarray(values, np.float64), return_inverse=True)
    of_item = of_item.reshape(-1)
    n_classes = classes.size

    def ranks(idx: np.ndarray) -> np.ndarray:
        # each drawn value's class, and its place in a flat (B, classes) table of counts
        flat, per_class = _flat_counts(np.take(of_item, idx), n_classes)
        twice = np.cumsum(per_class, axis=1)                 # twice the rank: 2 (below) + (equal) + 1
        twice *= 2
        twice -= per_class
        twice += 1
        rank_of = twice.astype(np.float64).ravel()
        rank_of /= 2.0
        return np.take(rank_of, flat)
    return ranks


#: Most items per resample for which the sums of :func:`rank_row_dot` are exact in any order.
EXACT_RANK_SUMS = 2**17


def rank_row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a * b).sum(axis=1)`` of centred ranks (or ranks weighted by whole draw counts) of ``n``
    items per row. Ranks are whole numbers and halves, centred by ``(n + 1) / 2``: every product
    is a multiple of 1/4 and so is every partial sum, below ``n**3 / 4`` -- exact in float64 up
    to :data:`EXACT_RANK_SUMS` items, so any order of summation gives the same float, and
    ``einsum`` sums without the ``(B, n)`` product array (the plain form above that size)."""
    if a.shape[1] > EXACT_RANK_SUMS:
        return (a * b).sum(axis=1)
    return np.einsum("ij,ij->i", a, b)


def mean_of(values) -> Callable[[dict], np.ndarray]:
    """``stat`` of a mean of per-item values (one set named "items").

    Values that are all 0 or 1 (the analogy questions answered right: thousands of items)
    are gathered as bytes and counted: a sum of whole numbers is exact in any order, so the
    mean is the same number as the float mean's, for an eighth of the memory traffic."""
    values = np.asarray(values, dtype=np.float64)
    if values.size and values.size < 2**32 and bool(np.all((values == 0) | (values == 1))):
        hits = values.astype(np.uint8)

        def share(idx):
            drawn = idx["items"]
            if not drawn.shape[1]:
                return np.take(values, drawn).mean(axis=1)
            return np.take(hits, drawn).sum(axis=1, dtype=np.uint32) / drawn.shape[1]
        return share
    return lambda idx: np.take(values, idx["items"]).mean(axis=1)


# -- analytic intervals, for statistics a bootstrap would have to refit ----------------------------


def wilson_interval(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` over ``n`` items."""
    if not n or not np.isfinite(p):
        return float("nan"), float("nan")
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def fisher_z_interval(r: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Fisher-z interval of a Pearson correlation over ``n`` pairs."""
    if n <= 3 or not np.isfinite(r):
        return float("nan"), float("nan")
    f = np.arctanh(np.clip(r, -0.999999, 0.999999))
    return float(np.tanh(f - z / np.sqrt(n - 3))), float(np.tanh(f + z / np.sqrt(n - 3)))


def normal_mean_interval(values, mean: float | None = None, z: float = Z95) -> tuple[float, float]:
    """Normal interval of the mean of ``values`` (the finite ones), treated as independent;
    ``mean``: the centre when the caller already has it."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    mean = float(values.mean()) if mean is None else float(mean)
    half = z * values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else float("nan")
    return mean - half, mean + half
