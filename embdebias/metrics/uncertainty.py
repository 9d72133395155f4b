"""Uncertainty of every bias number: seeded bootstrap intervals and paired comparisons.

A metric's value is a function of a few word sets (or SemBias lines, or classifier
runs). A :class:`Sample` holds, for one statistic, the items of each set (their keys:
words or line numbers) and a function that recomputes the statistic from resampled
item indices -- for ``B`` resamples at once, as ``(B, n)`` index arrays, so a thousand
resamples cost a few vectorized operations.

* :func:`bootstrap_interval`: each set is resampled with replacement, independently
  (Delobelle et al. 2022 show bias scores move with the choice of words; the interval
  says how far). The percentile interval at ``level`` (default 95%).
* :func:`paired_change`: the change of the *bias* (see :data:`FAIRER`) from a reference
  embedding to another, on the items both have, each resample drawing the SAME items for
  both embeddings, so the noise of the word choice cancels. The change is significant
  when its interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._extrinsic_grid import counts

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


def bootstrap_interval(sample: Sample, n_boot: int, rng: np.random.Generator,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the statistic over ``n_boot`` resamples of every set."""
    idx = {g: _draw(rng, len(keys), n_boot) for g, keys in sample.groups.items()}
    with np.errstate(all="ignore"):
        return _interval(np.asarray(sample.stat(idx), dtype=np.float64), level)


def paired_change(reference: Sample, other: Sample, n_boot: int, rng: np.random.Generator,
                  level: float = 0.95) -> dict:
    """Change of the bias from ``reference`` to ``other`` on the items both have.

    Returns ``{"change", "ci_low", "ci_high", "outcome", "n_items"}``: the change of the
    bias magnitude (negative: fairer), its paired-bootstrap interval, and ``outcome``
    "improved", "worse" or "no significant change" (the interval contains 0).
    """
    pos_ref, pos_other, n_items = {}, {}, 0
    for g, keys in reference.groups.items():
        where = {k: i for i, k in enumerate(other.groups.get(g, []))}
        common = [(i, where[k]) for i, k in enumerate(keys) if k in where]
        pos_ref[g] = np.array([i for i, _ in common], dtype=np.int64)
        pos_other[g] = np.array([j for _, j in common], dtype=np.int64)
        n_items += len(common)
    full = {g: np.arange(len(p))[None, :] for g, p in pos_ref.items()}
    draws = {g: _draw(rng, len(p), n_boot) for g, p in pos_ref.items()}
    with np.errstate(all="ignore"):
        change = _bias_change(reference, other, pos_ref, pos_other, full)[0]
        diffs = _bias_change(reference, other, pos_ref, pos_other, draws)
    lo, hi = _interval(diffs, level)
    outcome = ("improved" if hi < 0 else "worse" if lo > 0 else "no significant change") \
        if np.isfinite(lo) else "not comparable"
    return {"change": float(change), "ci_low": lo, "ci_high": hi, "outcome": outcome, "n_items": n_items}


def _bias_change(reference: Sample, other: Sample, pos_ref: dict, pos_other: dict, idx: dict) -> np.ndarray:
    ref_vals = reference.stat({g: pos_ref[g][i] for g, i in idx.items()})
    other_vals = other.stat({g: pos_other[g][i] for g, i in idx.items()})
    return bias_of(np.asarray(other_vals, float), other.fairer) - bias_of(np.asarray(ref_vals, float),
                                                                        reference.fairer)


# -- statistics on resampled items, vectorized over the resamples --------------------------------


def mean_of(values) -> Callable[[dict], np.ndarray]:
    """``stat`` of a mean of per-item values (one set named "items")."""
    values = np.asarray(values, dtype=np.float64)
    return lambda idx: values[idx["items"]].mean(axis=1)


def weat_effect_sizes(cos: dict, ddof: int = 1) -> Callable[[dict], np.ndarray]:
    """``stat`` of WEAT's effect size from the cosine matrices ``{"XA", "XB", "YA", "YB"}``.

    Each of X, Y, A and B is resampled: ``s(w) = mean_A cos - mean_B cos`` over the
    resampled attribute columns, then d over the resampled targets. A target's mean
    over the resampled attributes is its cosines weighted by how often each attribute
    was drawn, for every resample at once (one small matrix product, no gather of
    ``(B, targets, attributes)``).
    """
    def stat(idx):
        ix, iy, ia, ib = idx["X"], idx["Y"], idx["A"], idx["B"]
        wa = counts(ia, cos["XA"].shape[1]) / ia.shape[1]      # (B, A): weight of each attribute
        wb = counts(ib, cos["XB"].shape[1]) / ib.shape[1]

        def assoc(t_idx, m_a, m_b):
            s = cos[m_a] @ wa.T - cos[m_b] @ wb.T                # (targets, B)
            return np.take_along_axis(s.T, t_idx, axis=1)        # (B, resampled targets)

        s_x, s_y = assoc(ix, "XA", "XB"), assoc(iy, "YA", "YB")
        pooled = np.concatenate([s_x, s_y], axis=1)
        return (s_x.mean(axis=1) - s_y.mean(axis=1)) / pooled.std(axis=1, ddof=ddof)
    return stat


def ect_correlations(unit_x: np.ndarray, unit_y: np.ndarray, attr: np.ndarray) -> Callable[[dict], np.ndarray]:
    """``stat`` of ECT's Spearman rho with X, Y and the attributes resampled.

    An attribute's similarity to the (normalized) mean of the resampled X vectors is,
    up to a positive factor per resample that leaves the ranks unchanged, its summed
    dot product with them: the attribute-by-X dot products weighted by how often each
    X word was drawn. So no resample gathers vectors, only numbers.
    """
    from scipy.stats import rankdata

    dots_x, dots_y = attr @ unit_x.T, attr @ unit_y.T        # (attributes, X), (attributes, Y)

    def stat(idx):
        sim_x = counts(idx["X"], dots_x.shape[1]) @ dots_x.T    # (B, attributes)
        sim_y = counts(idx["Y"], dots_y.shape[1]) @ dots_y.T
        a = idx["attributes"]
        rx = rankdata(np.take_along_axis(sim_x, a, axis=1), axis=1)
        ry = rankdata(np.take_along_axis(sim_y, a, axis=1), axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        return (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    return stat


def rnsb_values(probabilities) -> Callable[[dict], np.ndarray]:
    """``stat`` of RNSB with the identity terms and the classifier runs both resampled.

    ``probabilities`` is ``(runs, terms)``: each run's P(negative) of every term. RNSB is
    the mean over the (resampled) runs of the KL divergence of the (resampled) terms.
    """
    probs = np.asarray(probabilities, dtype=np.float64)

    def stat(idx):
        terms, runs = idx["identity"], idx["runs"]
        p = probs[runs[:, :, None], terms[:, None, :]]          # (B, runs, terms)
        return _kl(p.reshape(-1, p.shape[2])).reshape(p.shape[:2]).mean(axis=1)
    return stat


def _kl(p: np.ndarray) -> np.ndarray:
    """Row-wise ``KL(p / sum p || uniform)``."""
    q = p / p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, q * np.log(q * q.shape[1]), 0.0)
    return terms.sum(axis=1)
