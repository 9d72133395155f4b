"""The neighbour step's search for the few kept values (residual._true_positions)."""

import numpy as np
import pytest

from embdebias.metrics.residual import _true_positions


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 63, 64, 4095, 4096, 4097, 32_775, 40_000, 1_500_001])
@pytest.mark.parametrize("density", [0.0, 0.001, 0.3, 1.0])
def test_true_positions_are_flatnonzeros(size, density):
    rng = np.random.default_rng(size)
    mask = rng.random(size) < density
    mask[-1:] = density > 0                                    # the last value (in a partial word)
    got = _true_positions(mask)
    np.testing.assert_array_equal(got, np.flatnonzero(mask))
    assert got.dtype.kind == "i"


def test_true_positions_of_a_slice_of_a_reused_buffer():
    """The mask is the first rows of a larger reused buffer: what lies past it is never read."""
    buffer = np.ones((32, 5_003), dtype=bool)
    mask = buffer[:5]
    mask[...] = False
    mask[[0, 2, 4], [5_002, 0, 77]] = True
    np.testing.assert_array_equal(_true_positions(mask.reshape(-1)), [5_002, 2 * 5_003, 4 * 5_003 + 77])


def test_candidates_already_in_label_order_give_the_same_fractions_bit_for_bit():
    """residual_bias takes the candidates male first, which the neighbour step then uses without a
    copy: the same cosines, so the same fractions as from any other order of the same candidates."""
    from embdebias.metrics.residual import neighbour_fractions

    rng = np.random.default_rng(13)
    cand = rng.normal(size=(3_001, 24)).astype(np.float32)
    cand /= np.linalg.norm(cand, axis=1, keepdims=True)
    marked = rng.random(3_001) < 0.4
    queries = rng.choice(3_001, 300, replace=False)
    order = np.argsort(~marked, kind="stable")
    where = np.empty(3_001, dtype=np.int64)
    where[order] = np.arange(3_001)
    for block_rows in (None, 37):
        scattered = neighbour_fractions(cand, queries, marked, 25, block_rows=block_rows)
        in_order = neighbour_fractions(cand[order], where[queries], marked[order], 25, block_rows=block_rows)
        np.testing.assert_array_equal(in_order, scattered)
