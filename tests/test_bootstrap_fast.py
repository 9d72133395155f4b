"""The bootstrap's shortcuts give the numbers of the plain computation (issue 35)."""

import numpy as np

from embdebias.metrics._resample import Sample, _common_positions, _positions, counts, mean_of, paired_change, per_draw, resample_rng


def test_positions_of_all_items_in_order_are_the_drawn_indices_themselves():
    idx = {"items": np.array([[2, 0, 1]]), "other": np.array([[1, 1, 0]])}
    got = _positions({"items": np.arange(3), "other": np.array([4, 7])}, idx)
    assert got["items"] is idx["items"]                              # not gathered again
    assert got["other"].tolist() == [[7, 7, 4]]
    assert _positions({"items": np.arange(5)}, {"items": np.array([[4, 3]])})["items"].tolist() == [[4, 3]]


def test_paired_change_without_the_gather_is_the_gathered_one():
    # the same words in the same order: identity positions, skipped; a shuffled column still pairs by key
    rng = np.random.default_rng(4)
    keys = [f"w{i}" for i in range(200)]
    ref_values, other_values = rng.normal(size=200), rng.normal(0.1, 1.0, size=200)
    ref = Sample({"items": keys}, mean_of(ref_values))
    same_order = paired_change(ref, Sample({"items": keys}, mean_of(other_values)), 400, resample_rng(0, "t"))
    order = rng.permutation(200)
    shuffled = Sample({"items": [keys[i] for i in order]}, mean_of(other_values[order]))
    assert paired_change(ref, shuffled, 400, resample_rng(0, "t")) == same_order


def test_common_positions_of_the_same_distinct_keys_skip_the_loop_and_match_it():
    def looped(ref_keys, other_keys):      # the per-item matching, written out
        where = {k: i for i, k in enumerate(other_keys)}
        common = [(i, where[k]) for i, k in enumerate(ref_keys) if k in where]
        return [i for i, _ in common], [j for _, j in common]

    def stat(idx):
        return np.zeros(1)
    for ref_keys, other_keys in ((["a", "b", "c"], ["a", "b", "c"]), (["a", "b", "a"], ["a", "b", "a"]),
                                 (["a", "b", "c"], ["c", "a"]), ([], []), ([3, 1], [3, 1])):
        pos_ref, pos_other, n = _common_positions(Sample({"s": ref_keys}, stat), Sample({"s": other_keys}, stat))
        want_ref, want_other = looped(ref_keys, other_keys)
        assert pos_ref["s"].tolist() == want_ref and pos_other["s"].tolist() == want_other and n == len(want_ref)
        assert pos_ref["s"].dtype == pos_other["s"].dtype == np.int64
    # a repeated key: the other's last place of it (the loop's answer), not the identity
    assert _common_positions(Sample({"s": ["a", "b", "a"]}, stat),
                             Sample({"s": ["a", "b", "a"]}, stat))[1]["s"].tolist() == [2, 1, 2]


def test_mean_of_zeros_and_ones_counted_as_bytes_is_the_float_mean():
    rng = np.random.default_rng(9)
    for values in ((rng.random(3001) < 0.37).astype(float), rng.normal(size=500), np.ones(7), np.zeros(4)):
        idx = rng.integers(0, values.size, size=(50, values.size))
        assert np.array_equal(mean_of(values)({"items": idx}), values[idx].mean(axis=1))
    assert np.array_equal(mean_of([1.0, 0.0, 0.5])({"items": np.array([[2, 2, 0]])}), [2.0 / 3.0])


def test_per_draw_computes_once_per_live_draw_and_forgets_it_when_freed():
    import gc

    calls = []
    remembered = per_draw(lambda drawn, n: calls.append(n) or counts(drawn, n))
    drawn = np.random.default_rng(1).integers(0, 5, size=(20, 5))
    first = remembered(drawn, 5)
    assert remembered(drawn, 5) is first and np.array_equal(first, counts(drawn, 5)) and calls == [5]
    assert not first.flags.writeable                                   # shared: nobody may change it
    assert remembered(drawn.copy(), 5) is not first                    # another array: computed afresh
    assert np.array_equal(remembered(drawn, 7), counts(drawn, 7))      # other arguments: another entry
    del drawn
    gc.collect()
    assert not remembered.kept                                         # nothing held after the draws


def test_similarity_resamples_share_the_human_ranks_and_equal_the_plain_spearman():
    from scipy.stats import spearmanr

    from embdebias.metrics.quality import _shared_centred_ranks, spearman_of

    rng = np.random.default_rng(2)
    human = np.round(rng.random(60) * 10, 1)                             # ties, as in the data sets
    sims = [rng.random(60) for _ in range(3)]                            # three columns
    idx = {"items": rng.integers(0, 60, size=(40, 60))}
    got = [spearman_of(x, human)(idx) for x in sims]
    assert len(_shared_centred_ranks(human).kept) == 1                  # the human ranks: once for the draw
    for x, values in zip(sims, got):
        expected = [spearmanr(x[row], human[row]).statistic for row in idx["items"]]
        np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_similarity_rho_from_the_exact_centre_and_sums_is_the_plain_forms_float():
    # the centre (n + 1) / 2 and einsum's sums against the per-row mean and (a * b).sum: bit for bit
    from scipy.stats import rankdata

    from embdebias.metrics.quality import _centred_ranks, spearman_of

    rng = np.random.default_rng(8)
    for n in (1, 2, 59, 60, 999):
        human, sims = np.round(rng.random(n) * 10, 1), np.round(rng.normal(size=n), 2)   # ties in both
        idx = rng.integers(0, n, size=(70, n))
        rx, ry = rankdata(sims[idx], axis=1), rankdata(human[idx], axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        with np.errstate(all="ignore"):
            plain = (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
            got = spearman_of(sims, human)({"items": idx})
        centred, squares = _centred_ranks(sims)(idx)
        assert np.array_equal(centred, rx) and np.array_equal(squares, (rx * rx).sum(axis=1))
        assert np.array_equal(got, plain, equal_nan=True)


def test_rank_row_dot_of_centred_ranks_is_the_plain_sum_in_either_branch(monkeypatch):
    from scipy.stats import rankdata

    from embdebias.metrics import _resample

    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=(30, 301)), 1)                       # ties
    a, b = rankdata(values, axis=1) - 151.0, rankdata(values[::-1], axis=1) - 151.0
    weighted = rng.integers(0, 4, size=a.shape) * a
    for limit in (_resample.EXACT_RANK_SUMS, 10):                          # einsum, then the plain form
        monkeypatch.setattr(_resample, "EXACT_RANK_SUMS", limit)
        assert np.array_equal(_resample.rank_row_dot(a, b), (a * b).sum(axis=1))
        assert np.array_equal(_resample.rank_row_dot(weighted, b), (weighted * b).sum(axis=1))


def test_ect_rho_summed_by_rank_row_dot_is_the_plain_sums_float():
    from embdebias.metrics.ect import drawn_ranks, ect_correlations

    rng = np.random.default_rng(6)
    x, y, attr = (rng.normal(size=(k, 8)) for k in (5, 6, 40))
    idx = {"X": rng.integers(0, 5, (60, 5)), "Y": rng.integers(0, 6, (60, 6)), "attributes": rng.integers(0, 40, (60, 40))}
    sim_x, sim_y = counts(idx["X"], 5) @ (attr @ x.T).T, counts(idx["Y"], 6) @ (attr @ y.T).T
    drawn = counts(idx["attributes"], 40)
    rx, ry = drawn_ranks(sim_x, drawn) - 20.5, drawn_ranks(sim_y, drawn) - 20.5
    wx = drawn * rx
    plain = (wx * ry).sum(axis=1) / np.sqrt((wx * rx).sum(axis=1) * (drawn * ry * ry).sum(axis=1))
    assert np.array_equal(ect_correlations(x, y, attr)(idx), plain)
