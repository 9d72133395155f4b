"""The erasure certificate: how far a debiaser's edited vectors are from linear guardedness.

Belrose et al. (2023, LEACE, theorem 3.1 and its corollaries) show that no linear
classifier of a concept ``Z`` (one-hot labels) from the vectors ``X`` does better than a
constant predictor, for the usual convex losses, exactly when the class-conditional
means of ``X`` are equal, that is when the cross-covariance ``Cov(X, Z)`` is zero. The
certificate of a fitted debiaser on labelled words is therefore the largest absolute
entry of ``Cov(r(X), Z)``, with ``r(X)`` the words' edited vectors: zero (to rounding)
means the debiaser is linearly guarded on those words, anything else measures how far
it is. It is computed twice, on the edited vectors before any normalization and on the
same vectors scaled to unit length, since unit length is a nonlinear edit of its own.

The covariances are population ones (divided by ``n``) and accumulated in float64
chunk by chunk (:class:`Moments`), so the words can be any number of rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._rows import unit_rows
from .._threads import one_thread
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding

__all__ = ["CERTIFICATE_TOL", "Certificate", "Moments", "cross_covariance", "edited_rows", "erasure_certificate",
           "max_cross_covariance", "one_hot", "run_certificate"]

#: Largest certificate of a guarded map, relative to the largest absolute cross-covariance before
#: erasure (a full-rank eraser above it is refused; a run calls a method linearly guarded below it).
CERTIFICATE_TOL = 1e-8


class Moments:
    """Means, scatter and cross-scatter of paired rows ``(x, z)``, accumulated chunk by chunk.

    Each chunk's centred sums are merged into the running ones with the pairwise update
    of Chan, Golub & LeVeque (1979), so the result equals the two-pass centred sums to
    rounding, whatever the chunking, and no chunk is kept.

    Parameters
    ----------
    dim : int
        Dimension of ``x``.
    n_columns : int
        Dimension of ``z``.
    scatter : bool, default True
        Accumulate ``x``'s own ``d x d`` scatter (the covariance); False: the means and
        the cross-scatter only (all a certificate needs).
    """

    def __init__(self, dim: int, n_columns: int, *, scatter: bool = True):
        self.n = 0
        self.mean_x = np.zeros(dim)
        self.mean_z = np.zeros(n_columns)
        self.scatter = np.zeros((dim, dim)) if scatter else None
        self.cross = np.zeros((dim, n_columns))

    def add(self, x: np.ndarray, z: np.ndarray) -> "Moments":
        """Add the rows ``x`` (``(m, d)``) with their ``z`` (``(m, c)``); returns ``self``."""
        m = len(x)
        if m == 0:
            return self
        x = np.asarray(x, dtype=np.float64)
        z = np.asarray(z, dtype=np.float64)
        mx, mz = x.mean(axis=0), z.mean(axis=0)
        xc = x - mx
        self._merge(m, mx, mz, xc.T @ xc if self.scatter is not None else None, xc.T @ (z - mz))
        return self

    def merge(self, other: "Moments") -> "Moments":
        """Add another accumulator's rows (as if they had been added here); returns ``self``."""
        if other.n:
            self._merge(other.n, other.mean_x, other.mean_z, other.scatter, other.cross)
        return self

    def _merge(self, m, mx, mz, scatter, cross) -> None:
        n = self.n + m
        dx, dz = mx - self.mean_x, mz - self.mean_z
        weight = self.n * m / n
        if self.scatter is not None:
            self.scatter += scatter + weight * np.outer(dx, dx)
        self.cross += cross + weight * np.outer(dx, dz)
        self.mean_x += dx * (m / n)
        self.mean_z += dz * (m / n)
        self.n = n

    @property
    def covariance(self) -> np.ndarray:
        """``Cov(x)`` (population: divided by ``n``), symmetrized."""
        s = self.scatter / self.n
        return (s + s.T) / 2

    @property
    def cross_covariance(self) -> np.ndarray:
        """``Cov(x, z)``, ``(d, c)`` (population)."""
        return self.cross / self.n


def one_hot(labels: np.ndarray, classes=None) -> np.ndarray:
    """``(n, k)`` float64 one-hot rows of ``labels`` over ``classes`` (default: the sorted distinct labels)."""
    labels = np.asarray(labels)
    classes = np.unique(labels) if classes is None else np.asarray(classes)
    return (labels[:, None] == classes[None, :]).astype(np.float64)


def cross_covariance(x: np.ndarray, labels: np.ndarray, classes=None) -> np.ndarray:
    """``Cov(x, one_hot(labels))``: ``(d, k)``, population, float64."""
    z = one_hot(labels, classes)
    return Moments(x.shape[1], z.shape[1], scatter=False).add(x, z).cross_covariance


def max_cross_covariance(x: np.ndarray, labels: np.ndarray) -> float:
    """The largest absolute entry of :func:`cross_covariance` (0 for fewer than two classes)."""
    return float(np.abs(cross_covariance(x, labels)).max(initial=0.0))


@dataclass(frozen=True)
class Certificate:
    """The certificate of a debiaser on labelled words.

    Attributes
    ----------
    edited : float or None
        Largest ``|Cov(r(x), z)|`` of the edited vectors before any normalization; None
        for a debiaser that only shows its unit-length output (no edit before it).
    normalized : float
        The same for the edited vectors scaled to unit length (what a debiaser that
        normalizes outputs, and what a user who normalizes sees).
    before : float
        The same for the original vectors: the scale the two others compare with.
    n_words : int
        Labelled words it was computed on.
    n_groups : int
        Classes of the labels.
    """

    edited: float | None
    normalized: float
    before: float
    n_words: int
    n_groups: int

    def to_dict(self) -> dict:
        return asdict(self)


def edited_rows(debiaser, embedding: Embedding, rows: np.ndarray) -> np.ndarray | None:
    """The float64 rows ``rows`` of a fitted debiaser's edit before it scales rows to unit length.

    That is its ``edit_rows(embedding, rows)``, which every
    :class:`~embdebias.debias._linear.LinearDebiaser` has; None for a debiaser without
    one (its output is all it shows).
    """
    edit = getattr(debiaser, "edit_rows", None)
    return None if edit is None else edit(embedding, rows)


def erasure_certificate(debiaser, embedding: Embedding, rows, labels, *,
                        chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Certificate:
    """The :class:`Certificate` of the fitted ``debiaser`` on the words ``rows`` labelled ``labels``.

    Works for any fitted debiaser of the table: for one with ``edit_rows`` (hard's
    rivals that are one linear or affine map: INLP, RLACE, HSR, the LEACE family) both
    figures are computed; for another the normalized one only, from its output.

    Parameters
    ----------
    debiaser : Debiaser
        Fitted.
    embedding : Embedding
        The vectors it was fitted on (or any with the same words).
    rows : array of int
        Rows of the labelled words in ``embedding``.
    labels : array
        Their labels, one per row (any hashable values; each distinct value is a class,
        a neutral label included if it is there).
    chunk_rows : int
        Rows read and edited at a time.
    """
    with one_thread():  # small products (a chunk of rows by d x d): threads only wait for each other
        return _certificate(debiaser, embedding, np.asarray(rows, dtype=np.int64), np.asarray(labels), chunk_rows)


def _certificate(debiaser, embedding: Embedding, rows: np.ndarray, labels: np.ndarray, chunk_rows: int):
    classes = np.unique(labels)
    acc = {key: Moments(embedding.dim, len(classes), scatter=False) for key in ("before", "edited", "normalized")}
    shows_edit = True
    for start in range(0, len(rows), chunk_rows):
        part = rows[start:start + chunk_rows]
        z = one_hot(labels[start:start + chunk_rows], classes)
        edited = edited_rows(debiaser, embedding, part)
        if edited is None:
            shows_edit = False
            edited = debiaser.lazy_transform(embedding).take(part, dtype=np.float64)
        acc["before"].add(embedding.take(part, dtype=np.float64), z)
        acc["edited"].add(edited, z)
        acc["normalized"].add(unit_rows(edited, copy=True), z)
    worst = {key: float(np.abs(m.cross_covariance).max(initial=0.0)) for key, m in acc.items()}
    return Certificate(edited=worst["edited"] if shows_edit else None, normalized=worst["normalized"],
                       before=worst["before"], n_words=len(rows), n_groups=len(classes))


def run_certificate(debiaser, embedding: Embedding, attribute, *, lists: str = "published", random_state: int = 0,
                    sample=None) -> dict:
    """The certificate ``embdebias run`` reports for a fitted linear method (``debiaser.linear``).

    Every linear method of a run is certified on the same words: the projection labels' fitting
    words of ``attribute`` with the run's seed (:func:`~embdebias.debias._labels.projection_sample`:
    for gender the male- and female-biased words by ``he - she``, the train and dev parts), the
    words LEACE, INLP and RLACE are fitted on; hard debias and HSR are fitted on other words
    (their definition words), and are shown on these for comparison.

    Parameters
    ----------
    debiaser : Debiaser
        Fitted.
    embedding : Embedding
    attribute : Attribute
    lists, random_state
        The run's list set and seed (they choose the words).
    sample : optional
        The words, already labelled (``projection_sample``'s result), so that a run labels once.

    Returns
    -------
    dict
        :class:`Certificate`'s fields, plus ``output`` (``"edited"`` for a method whose output
        rows are the edit as it is, ``"normalized"`` for one that scales them to unit length)
        and ``guarded`` (that figure is at most :data:`CERTIFICATE_TOL` times ``before``: no
        linear classifier does better than a constant on these words).
    """
    if sample is None:
        from ._labels import projection_sample

        sample = projection_sample(embedding, attribute, lists=lists, random_state=random_state)
    cert = erasure_certificate(debiaser, embedding, sample.rows, sample.labels)
    output = "edited" if cert.edited is not None and getattr(debiaser, "normalize", True) is False else "normalized"
    shown = cert.edited if output == "edited" else cert.normalized
    return {**cert.to_dict(), "output": output, "guarded": bool(shown <= CERTIFICATE_TOL * cert.before)}
