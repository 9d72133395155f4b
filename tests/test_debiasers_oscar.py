"""OSCaR: the properties the paper proves, measured."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias.debias import make_debiaser
from embdebias.debias.oscar import OSCaR, graded_angles, rectify


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=800, dim=16)


def test_graded_angles():
    theta = 1.0
    phi = np.array([0.0, theta, np.pi, -np.pi + 1e-12, theta - np.pi, 0.5, -0.5])
    psi = graded_angles(phi, theta)
    assert np.allclose(psi[:3], [0, np.pi / 2, np.pi])
    assert np.isclose(psi[4], -np.pi / 2)
    grid = np.linspace(-np.pi + 1e-9, np.pi, 1001)
    assert np.all(np.diff(graded_angles(grid, theta)) > 0)  # monotone, so one-to-one


def test_properties(emb):
    est = OSCaR().fit(emb)
    v1, v2 = est.gender_direction_, est.occupation_direction_
    X = emb.vectors.astype(np.float64)
    Y = rectify(X, v1, v2)
    assert np.allclose(np.linalg.norm(Y, axis=1), np.linalg.norm(X, axis=1))  # norms kept
    assert np.allclose(rectify(v1[None], v1, v2)[0], v1)  # v1 fixed
    assert abs(rectify(v2[None], v1, v2)[0] @ v1) < 1e-12  # v2 made orthogonal to v1
    # far from both directions: nearly unchanged, by at most twice the part in the plane
    basis = np.linalg.qr(np.vstack([v1, v2]).T)[0].T
    inplane = np.linalg.norm(X @ basis.T, axis=1)
    moved = np.linalg.norm(Y - X, axis=1)
    assert np.all(moved <= 2 * inplane + 1e-9)
    out = est.transform(emb)
    assert np.allclose(np.linalg.norm(out.vectors, axis=1), 1, atol=1e-5)


def test_registered_and_chunked(emb, tmp_path):
    est = make_debiaser("oscar", chunk_rows=77).fit(emb)
    assert isinstance(est, OSCaR)
    assert np.allclose(np.asarray(est.transform(emb, out=tmp_path / "o.embd").vectors), est.transform(emb).vectors)


def authors_upper_amount(phi, first, second):
    """The authors' rotation amount for a point of the upper half-plane at angle ``phi`` from v1,
    with their two angles ``first`` (they call it theta) and ``second`` (thetaP) as given."""
    return np.where(phi < second, first * phi / second, first * (np.pi - phi) / (np.pi - second))


@pytest.mark.parametrize("theta", [0.3, 0.6, 1.1, 1.4])
def test_the_authors_amounts_read_with_their_names_are_another_map(theta):
    """Read with its own names (theta between the directions, thetaP = pi/2 - theta) the code's
    map does not turn v2 onto the orthogonal direction; with the names swapped, it is ours."""
    theta_p = np.pi / 2 - theta
    phi = np.linspace(1e-6, np.pi - 1e-6, 2001)
    ours = graded_angles(phi, theta) - phi
    assert np.allclose(authors_upper_amount(phi, theta_p, theta), ours)  # names swapped: the same map
    as_named = authors_upper_amount(np.array([theta]), theta, theta_p)[0]
    assert not np.isclose(theta + as_named, np.pi / 2)  # v2 would not end at pi/2
    assert np.isclose(graded_angles(np.array([theta]), theta)[0], np.pi / 2)
