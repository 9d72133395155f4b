"""scikit-learn's 2-means (``KMeans(n_clusters=2, n_init, random_state)``), restarts and data sets run side by side.

Double-Hard's component search clusters the same 2,000 words under 21 linear maps
(remove a candidate component, then the re-fitted gender direction), with 10 restarts
each. scikit-learn runs the 210 restarts one after the other, each paying its
validation, thread set-up and per-iteration calls on a 2,000-row matrix: 0.45 s on
GloVe 6B 50d. :func:`two_means` runs the same algorithm on the same random draws with
every restart of every data set stacked: the data sets are ``W @ M_c`` for one
matrix ``W`` and maps ``M_c``, so one Lloyd step of all the restarts still running is
two matrix products with ``W`` (``(W M_c) v = W (M_c v)``).

The same algorithm, step for step (scikit-learn 1.9, ``algorithm="lloyd"``):

* each data set is centred on its mean (scikit-learn does, for accurate distances);
* k-means++ seeding with ``2 + int(log 2) = 2`` local trials, from a
  ``RandomState(random_state)`` whose draws (``choice`` of the first centre, two
  ``uniform`` for the trials, per restart) do not depend on the data: they are drawn
  once, in scikit-learn's order, and serve every data set (scikit-learn starts each
  fit from a fresh ``RandomState(random_state)``);
* Lloyd's iterations: a point goes to centre 1 only if strictly nearer
  (``x . (c_1 - c_0) > (|c_1|^2 - |c_0|^2) / 2``, scikit-learn's ``argmin`` of
  ``|c|^2 - 2 x . c`` with ties to 0); stop when the labels repeat (strict convergence)
  or when the squared centre shift is at most ``tol`` times the mean variance of the
  features, then one more assignment unless strict; at most ``max_iter`` iterations;
* of the restarts, a later one replaces the best so far only if its inertia is lower
  and its clustering differs (scikit-learn's rule).

Products are taken in another order than scikit-learn's, so distances agree to
rounding (1e-16 relative): labels could differ only for a point equidistant from both
centres to that precision, which real-valued embeddings practically never hold but data
with exact ties (small integers, say) do: there it is not a drop-in ``KMeans``.
``tests/test_two_means.py`` compares the labels with scikit-learn's on many data sets and
seeds. A restart that empties a cluster
(scikit-learn then relocates a far point there; it takes duplicate points) marks its
data set as not done, and the caller runs scikit-learn on it.
"""

from __future__ import annotations

import numpy as np

N_LOCAL_TRIALS = 2  # scikit-learn's 2 + int(log(n_clusters)) for two clusters
#: Below one changed label in this many, a Lloyd step updates the cluster sums from the
#: changed rows only; above, it recomputes them with one matrix product.
INCREMENTAL_RATIO = 32


def seeding_draws(n_samples: int, n_init: int, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's k-means++ random draws for two clusters, in its order.

    Parameters
    ----------
    n_samples : int
        Points clustered (all of weight 1).
    n_init : int
        Restarts.
    random_state : int
        The seed of the ``RandomState`` that ``KMeans(random_state=...)`` creates.

    Returns
    -------
    first : ndarray (n_init,) of int
        Each restart's first centre (``choice`` with uniform weights).
    uniforms : ndarray (n_init, 2)
        Each restart's two ``uniform`` draws, which pick the trial centres of the second.
    """
    rng = np.random.RandomState(random_state)
    weights = np.ones(n_samples)
    p = weights / weights.sum()
    first = np.empty(n_init, dtype=np.int64)
    uniforms = np.empty((n_init, N_LOCAL_TRIALS))
    for r in range(n_init):
        first[r] = rng.choice(n_samples, p=p)
        uniforms[r] = rng.uniform(size=N_LOCAL_TRIALS)
    return first, uniforms


def _squared_distances(points: np.ndarray, X: np.ndarray, x_sq: np.ndarray) -> np.ndarray:
    """``|p - x|^2`` (C, m, n) of points (C, m, d) to the rows of X (C, n, d), as scikit-learn writes it."""
    p_sq = np.einsum("cmj,cmj->cm", points, points)
    dist = -2 * (points @ X.transpose(0, 2, 1))
    dist += p_sq[:, :, None]
    dist += x_sq[:, None, :]
    return np.maximum(dist, 0, out=dist)


def _seed(X: np.ndarray, x_sq: np.ndarray, first: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """k-means++ centres ``(C, R, 2, d)`` of every restart of every data set ``X`` (C, n, d)."""
    n_sets, n, _ = X.shape
    closest = _squared_distances(X[:, first], X, x_sq)                    # (C, R, n)
    targets = uniforms * closest.sum(axis=2)[:, :, None]                  # (C, R, trials)
    cumulative = np.cumsum(closest, axis=2)
    pairs = zip(cumulative.reshape(-1, n), targets.reshape(-1, N_LOCAL_TRIALS))
    trials = np.array([np.searchsorted(c, t) for c, t in pairs]).reshape(targets.shape)
    np.minimum(trials, n - 1, out=trials)
    sets = np.arange(n_sets)[:, None, None]
    n_init = len(first)
    to_trials = _squared_distances(X[sets, trials].reshape(n_sets, -1, X.shape[2]), X, x_sq)
    to_trials = np.minimum(to_trials.reshape(n_sets, n_init, N_LOCAL_TRIALS, n), closest[:, :, None, :])
    best = np.argmin(to_trials.sum(axis=3), axis=2)                        # (C, R)
    second = np.take_along_axis(trials, best[:, :, None], axis=2)[:, :, 0]
    return np.stack([X[sets[:, :, 0], first[None, :]], X[sets[:, :, 0], second]], axis=2)


class _Runs:
    """Every restart of every data set, flattened (``set_of[r]`` is restart ``r``'s data set), with
    each restart's centres, labels and cluster-1 sum in ``W``'s coordinates."""

    def __init__(self, W, maps, centres):
        n_sets, n_init = centres.shape[:2]
        self.W, self.maps, self.n = W, maps, len(W)
        self.Wt = np.ascontiguousarray(W.T)  # labels come out (restarts, rows), contiguous
        self.set_of = np.repeat(np.arange(n_sets), n_init)
        self.centres = centres.reshape(n_sets * n_init, 2, -1).copy()
        self.totals = W.sum(axis=0) @ maps                                  # (C, d'): each set's sum (0 but rounding)
        self.labels = np.zeros((len(self.set_of), self.n), dtype=bool)
        self.sum1 = np.zeros((len(self.set_of), W.shape[1]))               # in W's coordinates
        self.n1 = np.zeros(len(self.set_of))
        self.margins = np.empty((len(self.set_of), self.n))

    def assign(self, runs: np.ndarray) -> np.ndarray:
        """Labels (len(runs), n) of the rows for those restarts' current centres."""
        c = self.centres[runs]
        v = c[:, 1] - c[:, 0]
        threshold = (np.einsum("rj,rj->r", c[:, 1], c[:, 1]) - np.einsum("rj,rj->r", c[:, 0], c[:, 0])) / 2
        mapped = np.matmul(self.maps[self.set_of[runs]], v[:, :, None])[:, :, 0]   # M_c v
        margins = np.matmul(mapped, self.Wt, out=self.margins[:len(runs)])  # a reused buffer: no page faults
        return margins > threshold[:, None]

    def relabel(self, runs: np.ndarray, labels: np.ndarray, changed: np.ndarray | None = None) -> None:
        """Set those restarts' labels and their cluster-1 sums: from the rows that ``changed``
        (``labels != self.labels[runs]``) when few did, else (or if None) from every row."""
        flat = None if changed is None else np.flatnonzero(changed)
        # a gathered row costs about 30 times a row of the matrix product
        if flat is None or flat.size * INCREMENTAL_RATIO > changed.size:
            ones = self.margins[:len(runs)]  # the margins are spent: their buffer takes the 0/1 labels
            np.copyto(ones, labels)
            self.sum1[runs], self.n1[runs] = ones @ self.W, ones.sum(axis=1)
        elif flat.size:
            which, rows = np.divmod(flat, self.n)  # 2-d np.nonzero is 10 times slower
            sign = np.where(labels[which, rows], 1.0, -1.0)
            starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
            moved = runs[which[starts]]
            self.sum1[moved] += np.add.reduceat(sign[:, None] * self.W[rows], starts, axis=0)
            self.n1[moved] += np.add.reduceat(sign, starts)
        self.labels[runs] = labels

    def sums(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sums (a, 2, d'), counts (a, 2))`` of the two clusters, in the data sets' coordinates."""
        sets = self.set_of[runs]
        sum1 = np.matmul(self.sum1[runs][:, None, :], self.maps[sets])[:, 0]
        n1 = self.n1[runs]
        return np.stack([self.totals[sets] - sum1, sum1], axis=1), np.stack([self.n - n1, n1], axis=1)


def _lloyd(runs: _Runs, tol: np.ndarray, max_iter: int) -> np.ndarray:
    """Lloyd's iterations from the seeded centres (``runs`` holds the result); returns ``failed`` (R,) bool."""
    n_runs = len(runs.set_of)
    strict, failed = np.zeros(n_runs, dtype=bool), np.zeros(n_runs, dtype=bool)
    active = np.arange(n_runs)
    for i in range(max_iter):
        current = runs.assign(active)
        changed = None if i == 0 else current != runs.labels[active]
        repeated = np.zeros(len(active), dtype=bool) if i == 0 else ~changed.any(axis=1)
        runs.relabel(active, current, changed)
        sums, counts = runs.sums(active)
        empty = (counts == 0).any(axis=1)
        failed[active[empty]] = True
        new = sums / np.where(counts > 0, counts, 1)[:, :, None]
        shift = (np.sqrt(((new - runs.centres[active]) ** 2).sum(axis=2)) ** 2).sum(axis=1)
        runs.centres[active] = new
        strict[active[repeated]] = True
        active = active[~(repeated | (shift <= tol[runs.set_of[active]]) | empty)]
        if not active.size:
            break
    rest = np.flatnonzero(~strict & ~failed)
    if rest.size:  # the last assignment, with the final centres
        runs.relabel(rest, runs.assign(rest))
    return failed


def _best_restarts(runs: _Runs, x_sq: np.ndarray, n_init: int) -> np.ndarray:
    """Each data set's labels of scikit-learn's pick: a later restart wins if its inertia is
    lower and its clustering differs."""
    labels = runs.labels
    sums, counts = runs.sums(np.arange(len(labels)))
    c = runs.centres
    # sum over the points of |x - c|^2, expanded over each cluster's sum and count
    inertia = (x_sq.sum(axis=1)[runs.set_of] - 2 * np.einsum("rkj,rkj->r", c, sums)
               + np.einsum("rk,rk->r", counts, np.einsum("rkj,rkj->rk", c, c)))
    chosen = []
    for start in range(0, len(labels), n_init):
        best = start
        for r in range(start + 1, start + n_init):
            same = np.array_equal(labels[r], labels[best]) or np.array_equal(labels[r], ~labels[best])
            if inertia[r] < inertia[best] and not same:
                best = r
        chosen.append(labels[best])
    return np.array(chosen, dtype=np.int64)


def two_means(W: np.ndarray, random_state: int, *, maps: np.ndarray | None = None, n_init: int = 10,
              max_iter: int = 300, tol: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Labels (0/1) of ``KMeans(n_clusters=2, n_init, random_state=random_state).fit(W @ M)`` for each map ``M``.

    Parameters
    ----------
    W : ndarray (n, d), float64
        The points (n >= 2).
    random_state : int
        scikit-learn's seed (one fresh ``RandomState`` per data set, as scikit-learn).
    maps : ndarray (C, d, d'), optional
        The data sets are ``W @ maps[c]``; default: ``W`` itself (one set).
    n_init, max_iter, tol :
        scikit-learn's defaults (10, 300, 1e-4; ``tol`` relative to the mean variance
        of the features).

    Returns
    -------
    labels : ndarray (C, n) of int64
        Each data set's labels.
    done : ndarray (C,) of bool
        False where a restart emptied a cluster (scikit-learn then relocates a point
        there): the caller runs scikit-learn on that set; its labels here are not valid.
    """
    W = np.asarray(W, dtype=np.float64)
    W = W - W.mean(axis=0)
    maps = np.eye(W.shape[1])[None] if maps is None else np.asarray(maps, dtype=np.float64)
    X = W @ maps                                                            # (C, n, d')
    x_sq = np.einsum("cij,cij->ci", X, X)
    # scikit-learn's tolerance: tol times the mean variance of the features
    tols = (x_sq.sum(axis=1) / len(W) - ((W.sum(axis=0) @ maps / len(W)) ** 2).sum(axis=1)) / X.shape[2] * tol
    first, uniforms = seeding_draws(len(W), n_init, random_state)
    runs = _Runs(W, maps, _seed(X, x_sq, first, uniforms))
    failed = _lloyd(runs, tols, max_iter)
    done = ~failed.reshape(len(maps), n_init).any(axis=1)
    return _best_restarts(runs, x_sq, n_init), done
