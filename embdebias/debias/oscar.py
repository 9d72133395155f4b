"""OSCaR: Orthogonal Subspace Correction and Rectification (Dev, Li, Phillips & Srikumar, EMNLP 2021)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import EmbdebiasError
from ..subspace import resolve_subspace
from ._base import Debiaser, unit_rows
from ._params import NUMBER, Array
from .hsr import check_missing


def graded_angles(phi: np.ndarray, theta: float) -> np.ndarray:
    """OSCaR's graded rotation of angles in the plane of the two directions.

    ``phi`` is a point's angle from ``v1`` (``(-pi, pi]``, ``v2`` at ``theta``). The
    upper half-plane's wedge ``[0, theta]`` is stretched to ``[0, pi/2]`` and
    ``[theta, pi]`` squeezed to ``[pi/2, pi]``; the lower half is the point reflection
    (``psi(phi - pi) = psi(phi) - pi``). So ``v1`` stays, ``v2`` goes to ``pi/2`` (orthogonal
    to ``v1``), and the map is continuous and monotone.
    """
    up = np.where(phi >= 0, phi, phi + np.pi)
    half = np.pi / 2
    psi = np.where(up <= theta, up * half / theta, half + (up - theta) * half / (np.pi - theta))
    return np.where(phi >= 0, psi, psi - np.pi)


def rectify(X: np.ndarray, v1: np.ndarray, v2: np.ndarray) -> np.ndarray:
    """Rows of ``X`` (float) rotated in ``span(v1, v2)`` by OSCaR's graded rotation; the rest unchanged."""
    v1 = v1 / np.linalg.norm(v1)
    cos = float(np.clip(v1 @ v2 / np.linalg.norm(v2), -1, 1))
    theta = float(np.arccos(cos))
    v2p = v2 - (v1 @ v2) * v1
    v2p /= np.linalg.norm(v2p)
    basis = np.vstack([v1, v2p])
    coords = X @ basis.T
    r = np.hypot(coords[:, 0], coords[:, 1])
    psi = graded_angles(np.arctan2(coords[:, 1], coords[:, 0]), theta)
    new = np.stack([r * np.cos(psi), r * np.sin(psi)], axis=1)
    return X + (new - coords) @ basis


class OSCaR(Debiaser):
    """OSCaR (Dev et al. 2021): make the gender and occupation directions orthogonal.

    Instead of removing gender, OSCaR rotates the plane spanned by the gender
    direction ``v1`` and a second concept's direction ``v2`` (occupations) so that
    ``v2`` becomes orthogonal to ``v1``, grading the rotation by each point's angle
    (:func:`graded_angles`); every coordinate outside the plane is kept. Norms are
    kept, ``v1`` is fixed, and a word far from the plane (small coordinates in it)
    barely moves. Every output row is unit length.

    Directions (documented choices, tested in ``tests/test_debiasers_oscar.py``):

    * ``v1``: the first component of the run's bias subspace (Bolukbasi et al.'s
      definitional pairs); the paper's ``he - she`` is ``definitional=[("she", "he")]``;
    * ``v2``: the first principal direction (uncentred) of the unit vectors of the
      ``occupations`` words (default: the professions list of ``lists``), signed so that the
      occupations project positively.

    The rotation is the paper's piecewise-linear map of angles, written here as
    stretching ``[0, theta]`` onto ``[0, pi/2]`` (and the rest accordingly). The authors'
    code (``oscar.py``) gives case-by-case rotation amounts in two angles it names
    ``theta`` (between the directions) and ``thetaP`` (``pi/2 - theta``); read with those
    names it is a **different map**: a point at ``phi < thetaP`` in the upper half-plane
    turns by ``theta * phi / thetaP``, and ``v2`` (at ``phi = theta``) does not end
    orthogonal to ``v1`` unless ``theta = pi/4`` (below it, it turns by
    ``theta**2 / thetaP`` instead of ``thetaP``). With its two angle names swapped, its upper half-plane
    amounts (``thetaP * phi / theta``, ``thetaP * (pi - phi) / (pi - theta)``) are this
    map's, the paper's. Tested in ``tests/test_debiasers_oscar.py``.

    Parameters
    ----------
    occupations : list of str or str, optional
    subspace, definitional, n_components, lists : the gender direction (see
        :class:`~embdebias.debias.hard.HardDebias`); only its first component is used.
    max_missing : float, default 0.5
    chunk_rows : int

    Attributes
    ----------
    gender_direction_, occupation_direction_ : ndarray (d,)
    theta_ : float
        The angle between them before (radians).
    n_features_in_ : int
    """

    _suffix = "oscar"
    _params_schema = {"gender_direction_": Array(("d",)), "occupation_direction_": Array(("d",)),
                      "theta_": NUMBER}
    _parameter_constraints = {
        "occupations": [list, tuple, str, None],
        "subspace": "no_validation",
        "definitional": "no_validation",
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "max_missing": [Interval(Real, 0, 1, closed="both")],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, occupations=None, *, subspace=None, definitional=None, n_components: int = 1,
                 lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.5,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.occupations = occupations
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.lists = lists
        self.max_missing = max_missing
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "OSCaR":
        """Find the two directions of ``embedding``."""
        self._validate()
        emb = as_embedding(embedding)
        sub = resolve_subspace(self.subspace, emb, pairs=self.definitional, n_components=self.n_components,
                               lists=self.lists)
        v1 = np.asarray(sub.components_[0], dtype=np.float64)
        words = list(dict.fromkeys(wordlists.resolve_words(self.occupations, "professions", self.lists)))
        rows = emb.words.rows(words)
        check_missing([w for w, r in zip(words, rows) if r < 0], len(words), self.max_missing, emb,
                      "OSCaR occupations")
        occ = unit_rows(emb.take(rows[rows >= 0], np.float64))
        _, _, vt = np.linalg.svd(occ, full_matrices=False)
        v2 = vt[0] if (occ @ vt[0]).sum() >= 0 else -vt[0]
        if abs(abs(v1 @ v2) - 1) < 1e-9:
            raise EmbdebiasError("OSCaR: the gender and occupation directions are parallel; nothing to rectify")
        self.gender_direction_, self.occupation_direction_ = v1, v2
        self.theta_ = float(np.arccos(np.clip(v1 @ v2, -1, 1)))
        self.n_features_in_ = emb.dim
        return self

    def _prepare(self, emb: Embedding):
        v1, v2 = self.gender_direction_, self.occupation_direction_

        def apply(rows, block, out):
            out[:] = rectify(np.asarray(block, dtype=np.float64), v1, v2)
            unit_rows(out)

        return apply

    def run_info(self, embedding: Embedding) -> dict:
        return {"angle_before_degrees": float(np.degrees(self.theta_))}
