"""The fast paths of evaluation give the numbers of the direct computations they replace.

Each test recomputes a result the plain way (the way the code used to do it, or by
brute force in float64) and compares: exactly where the fast path only reorders exact
operations, within float rounding where it sums in another order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pytest
from scipy.stats import rankdata

from embdebias.embedding import Embedding
from embdebias.io.native import read_native, write_native
from embdebias.metrics._common import MetricResult, to_builtin
from embdebias.metrics._resample import Sample, mean_of, paired_change, paired_changes, resample_rng
from embdebias.metrics.ect import ect_correlations
from embdebias.metrics.indirect import _pair_dots
from embdebias.metrics.quality import analogy_answers, rounding_margin
from embdebias.metrics.residual import neighbour_fractions, neighbour_label_fractions
from embdebias.metrics.weat import weat_effect_sizes
from embdebias.vocab import Vocabulary

# -- native vocabulary: lookups and slices without decoding it ----------------------------------


@pytest.fixture(scope="module")
def big_native(tmp_path_factory):
    """A native file of 60,000 words: few enough lookups binary-search, never decode."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60_000)]
    words[7], words[8], words[9], words[10] = "naïve", "日本", "", "Zürich"
    order = rng.permutation(len(words))                 # the file is not in sorted order
    words = [words[i] for i in order]
    path = tmp_path_factory.mktemp("native") / "big.embd"
    write_native(Embedding(words, rng.normal(size=(len(words), 3)).astype(np.float32)), path)
    return path, words


def test_native_lookups_binary_search_many_words_without_decoding(big_native):
    path, words = big_native
    v = read_native(path).words
    rng = np.random.default_rng(1)
    query = [words[i] for i in rng.choice(len(words), 3000, replace=False)]
    query += ["naïve", "日本", "", "Zürich", "absent", "w", "w600000", "\ud800", 5, None]
    expected = {w: i for i, w in enumerate(words)}
    assert v.rows(query).tolist() == [expected.get(w, -1) if isinstance(w, str) else -1 for w in query]
    assert v.index("日本") == expected["日本"] and "w59999" in v and "zzz" not in v
    assert v._words is None and v._index is None      # nothing decoded, no dict built


def test_native_lookups_are_remembered(big_native, monkeypatch):
    path, words = big_native
    v = read_native(path).words
    searched = []
    search = type(v)._search
    monkeypatch.setattr(type(v), "_search", lambda self, ws: searched.append(list(ws)) or search(self, ws))
    first = v.rows(words[:500] + ["absent"])
    assert v.rows(words[:500] + ["absent"]).tolist() == first.tolist() == list(range(500)) + [-1]
    assert v.get(words[3]) == 3 and v.rows([words[600], words[0]]).tolist() == [600, 0]
    assert [len(s) for s in searched] == [501, 1]       # only words not searched before


def test_native_slices_decode_only_their_rows(big_native):
    path, words = big_native
    v = read_native(path).words
    assert v[:5] == words[:5] and v[100:103] == words[100:103] and v[59_998:] == words[59_998:]
    assert v[5:5] == [] and v[-3:] == words[-3:]
    assert v._words is None
    assert v[::20_000] == words[::20_000]               # a strided slice may decode everything
    assert read_native(path).head(4).words.tolist() == words[:4]


def test_a_lookup_of_most_of_a_small_vocabulary_builds_the_dict(tmp_path):
    words = [f"w{i}" for i in range(3000)]
    write_native(Embedding(words, np.zeros((3000, 2), np.float32)), tmp_path / "e.embd")
    v = Vocabulary.from_native(tmp_path / "e.embd")
    assert v.rows(words[::-1]).tolist() == list(range(2999, -1, -1))
    assert v._index is not None                       # cheaper than 3,000 binary searches


# -- residual bias: the k-th largest without partitioning whole rows ------------------------------


def _fractions_by_sorting(cand: np.ndarray, queries, marked, k: int) -> np.ndarray:
    """Each query's marked share of its k nearest, ties at the boundary shared in proportion."""
    sims = cand[queries] @ cand.T
    sims[np.arange(len(queries)), queries] = -np.inf
    out = []
    for row in sims:
        kth = np.sort(row)[-k]
        above, equal = row > kth, row == kth
        share = (k - above.sum()) / equal.sum()
        out.append((marked[above].sum() + share * marked[equal].sum()) / k)
    return np.array(out)


@pytest.mark.parametrize("block_rows", [None, 3])
def test_neighbour_fractions_with_many_ties_match_a_sort(block_rows):
    rng = np.random.default_rng(3)
    # 25 distinct directions repeated: every row has long runs of equal cosines
    base = rng.normal(size=(25, 5))
    cand = base[rng.integers(0, 25, 3000)]
    cand[:40] = rng.normal(size=(40, 5))
    cand = (cand / np.linalg.norm(cand, axis=1, keepdims=True)).astype(np.float32)
    marked = rng.random(3000) < 0.4
    queries = rng.choice(3000, 60, replace=False)
    expected = _fractions_by_sorting(cand, queries, marked, 50)
    got = neighbour_fractions(cand, queries, marked, 50, block_rows=block_rows)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_neighbour_fractions_find_neighbours_outside_the_sampled_columns():
    """The lower bound reads half of the columns (every other run of them): a query whose nearest
    candidates are a few dozen near-duplicates, most of them in runs it skips, still gets exactly
    the fraction a full sort gives (5,011 columns: a tail past the last whole run)."""
    rng = np.random.default_rng(4)
    n, k = 5_011, 40                                   # 5,011 = 313 runs of 16 + a tail of 3
    cand = rng.normal(size=(n, 8))
    query = cand[0] / np.linalg.norm(cand[0])
    near = np.r_[np.arange(17, 31), np.arange(4_900, 4_930), n - 3, n - 2, n - 1]
    cand[near] = query + 0.01 * rng.normal(size=(near.size, 8))
    cand = (cand / np.linalg.norm(cand, axis=1, keepdims=True)).astype(np.float32)
    marked = rng.random(n) < 0.5
    expected = _fractions_by_sorting(cand, np.array([0]), marked, k)
    got = neighbour_fractions(cand, np.array([0]), marked, k)
    assert got[0] == expected[0]


@pytest.mark.parametrize("block_rows", [None, 4])
def test_label_fractions_in_one_pass_are_each_labels_fraction(block_rows):
    """k groups: one pass counts every label; each is the marked fraction of that label alone,
    ties at the boundary (repeated directions) shared in proportion as a sort gives them."""
    rng = np.random.default_rng(6)
    base = rng.normal(size=(30, 5))
    cand = base[rng.integers(0, 30, 2000)]
    cand[:50] = rng.normal(size=(50, 5))
    cand = (cand / np.linalg.norm(cand, axis=1, keepdims=True)).astype(np.float32)
    labels = rng.integers(0, 3, 2000)
    queries = rng.choice(2000, 45, replace=False)
    got = neighbour_label_fractions(cand, queries, labels, 3, 30, block_rows=block_rows)
    for j in range(3):
        np.testing.assert_allclose(got[:, j], _fractions_by_sorting(cand, queries, labels == j, 30), rtol=0,
                                   atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# -- analogy: pair-sum scores, near ties decided in float64 ---------------------------------------


def _answers_float64(vocab: np.ndarray, abc: np.ndarray) -> np.ndarray:
    v = vocab.astype(np.float64)
    scores = (v[abc[:, 1]] - v[abc[:, 0]] + v[abc[:, 2]]) @ v.T
    scores[np.arange(len(abc))[:, None], abc] = -np.inf
    return scores.argmax(axis=1)


def _answers_float32(vocab: np.ndarray, abc: np.ndarray) -> np.ndarray:
    """The former implementation: one float32 product per question."""
    scores = (vocab[abc[:, 1]] - vocab[abc[:, 0]] + vocab[abc[:, 2]]) @ vocab.T
    scores[np.arange(len(abc))[:, None], abc] = -np.inf
    return scores.argmax(axis=1)


@pytest.mark.parametrize("batch, columns", [(512, 1024), (7, 33), (1, 5000)])
def test_analogy_answers_match_the_float64_argmax(batch, columns):
    rng = np.random.default_rng(4)
    vocab = rng.normal(size=(3000, 20)).astype(np.float32)
    # a : b :: c : ? with a and c the same vector asks for b's direction; b is excluded, so
    # the answer is a copy of b: rows 100 and 2000 exactly alike (the first row wins), and
    # rows 101 and 102 alike up to float32 rounding (float64 decides)
    vocab[6], vocab[100], vocab[2000] = vocab[5], vocab[7], vocab[7]
    vocab[9], vocab[101], vocab[102] = vocab[8], vocab[10], vocab[10] * (1 + 3e-7)
    vocab /= np.linalg.norm(vocab, axis=1, keepdims=True)
    words = rng.choice(np.arange(200, 3000), 60, replace=False)
    abc = words[rng.integers(0, 60, (900, 3))]
    abc = abc[(abc[:, 0] != abc[:, 1]) & (abc[:, 1] != abc[:, 2]) & (abc[:, 0] != abc[:, 2])]
    abc = np.vstack([abc, [[5, 7, 6], [8, 10, 9]]])
    got = analogy_answers(vocab, abc, batch_size=batch, columns=columns)
    assert np.array_equal(got, _answers_float64(vocab, abc))
    assert got[-2] == 100 and got[-1] in (101, 102)
    # and the float32 products agree wherever their best is clear of rounding
    old = _answers_float32(vocab, abc)
    assert (got != old).sum() <= 3


@pytest.mark.parametrize("batch, columns", [(512, 1024), (5, 40)])
def test_analogy_near_ties_in_far_apart_blocks_are_decided_in_float64(batch, columns):
    """Only rows whose block maximum comes within the margin of their best so far are searched for
    contenders. Questions ``a : b :: a' : ?`` (``a'`` a copy of ``a``) ask for ``b``: an exact copy
    of ``b`` in an early block and, thousands of rows later, ``b`` moved by two float32 steps in
    one component, enough to win in float64 and far too little for float32 scores to see (they
    come out equal or in either order). The late copy must reach the float64 decision every time;
    and where the two copies are exactly equal, the first row wins."""
    rng = np.random.default_rng(8)
    vocab = rng.normal(size=(3000, 20)).astype(np.float32)
    vocab /= np.linalg.norm(vocab, axis=1, keepdims=True)
    questions, expected = [], []
    for j in range(12):
        a, a_copy, b, early, late = 300 + 3 * j, 301 + 3 * j, 302 + 3 * j, 40 + j, 2900 + j
        vocab[a_copy], vocab[early], vocab[late] = vocab[a], vocab[b], vocab[b]
        i = int(np.argmax(np.abs(vocab[b])))
        toward = np.float32(np.sign(vocab[b, i]) * np.inf)
        vocab[late, i] = np.nextafter(np.nextafter(vocab[late, i], toward), toward)
        questions.append([a, b, a_copy])
        expected.append(late)
    vocab[100], vocab[2990] = vocab[350], vocab[350]                   # an exact tie
    questions.append([360, 350, 361])
    vocab[361] = vocab[360]
    expected.append(100)
    others = rng.choice(np.arange(400, 2800), 40, replace=False)
    abc = others[rng.integers(0, 40, (300, 3))]
    abc = np.vstack([questions, abc[(abc[:, 0] != abc[:, 1]) & (abc[:, 1] != abc[:, 2]) & (abc[:, 0] != abc[:, 2])]])
    got = analogy_answers(vocab, abc, batch_size=batch, columns=columns)
    assert np.array_equal(got, _answers_float64(vocab, abc))
    assert got[:len(expected)].tolist() == expected


def test_analogy_rounding_margin_bounds_float32_scores():
    rng = np.random.default_rng(5)
    for dim in (10, 300):
        v = rng.normal(size=(2000, dim)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        q = v[:50]
        err = np.abs((q @ v.T).astype(np.float64) - q.astype(np.float64) @ v.astype(np.float64).T).max()
        assert 3 * err < rounding_margin(dim) / 4


# -- bootstrap statistics by draw counts --------------------------------------------------------


def _draws(rng, sizes: dict, b: int) -> dict:
    return {k: rng.integers(0, n, size=(b, n)) for k, n in sizes.items()}


def test_ect_resamples_equal_the_gathered_vectors():
    rng = np.random.default_rng(6)

    def unit(n):
        x = rng.normal(size=(n, 30))
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    x, y, attr = unit(12), unit(15), unit(80)
    attr[3] = attr[40]                                 # a tie between two attributes
    idx = _draws(rng, {"X": 12, "Y": 15, "attributes": 80}, 300)

    def gathered(i):
        mx, my = x[i["X"]].mean(axis=1), y[i["Y"]].mean(axis=1)
        mx /= np.linalg.norm(mx, axis=1, keepdims=True)
        my /= np.linalg.norm(my, axis=1, keepdims=True)
        a = attr[i["attributes"]]
        rx = rankdata(np.einsum("bad,bd->ba", a, mx), axis=1)
        ry = rankdata(np.einsum("bad,bd->ba", a, my), axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        return (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))

    np.testing.assert_allclose(ect_correlations(x, y, attr)(idx), gathered(idx), rtol=0, atol=1e-12)


def test_weat_resamples_equal_the_gathered_cosines():
    rng = np.random.default_rng(7)
    sizes = {"X": 8, "Y": 9, "A": 10, "B": 11}
    cos = {t + a: rng.uniform(-1, 1, (sizes[t], sizes[a])) for t in "XY" for a in "AB"}
    idx = _draws(rng, sizes, 400)

    def gathered(i):
        def assoc(t, ma, mb):
            return (cos[ma][i[t][:, :, None], i["A"][:, None, :]].mean(axis=2)
                    - cos[mb][i[t][:, :, None], i["B"][:, None, :]].mean(axis=2))
        sx, sy = assoc("X", "XA", "XB"), assoc("Y", "YA", "YB")
        return (sx.mean(axis=1) - sy.mean(axis=1)) / np.concatenate([sx, sy], axis=1).std(axis=1, ddof=1)

    np.testing.assert_allclose(weat_effect_sizes(cos)(idx), gathered(idx), rtol=1e-12, atol=1e-13)


# -- pair cosines and result dictionaries -------------------------------------------------------------


def test_pair_dots_by_gram_matrix_and_by_rows_agree():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(40, 6))
    left, right = np.triu_indices(40, 1)               # every pair: the Gram matrix path
    direct = np.einsum("ij,ij->i", x[left], x[right])
    np.testing.assert_allclose(_pair_dots(x, left, right), direct, rtol=1e-12, atol=1e-14)
    few = np.arange(5)                                 # five pairs of 40 words: row by row
    assert np.array_equal(_pair_dots(x, left[few], right[few]), direct[few])


@dataclass
class _Inner:
    value: float
    items: tuple


@dataclass
class _Result(MetricResult):
    score: float
    numbers: list
    words: list
    pairs: list
    nested: dict
    inner: _Inner
    array: np.ndarray
    lowercased: dict = field(default_factory=dict)

    value_field = "score"

    @property
    def n_scored(self) -> int:
        return len(self.numbers)


def test_result_to_dict_equals_the_asdict_conversion():
    numbers = [float(i) / 7 for i in range(50)] + [float("nan"), float("inf")]
    r = _Result(score=np.float64(0.5), numbers=numbers, words=[f"w{i}" for i in range(40)],
                pairs=[("a", "b")] * 30, nested={"k": [np.int64(3), np.float32(2.5), None, True]},
                inner=_Inner(float("-inf"), (1, "x")), array=np.arange(4.0))
    old = to_builtin(asdict(r))
    old.setdefault("lowercased", {})
    old.update(value=0.5, n_scored=52)
    assert r.to_dict() == old
    assert r.to_dict()["numbers"][-2:] == [None, None] and r.to_dict()["inner"] == {"value": None, "items": [1, "x"]}


def test_to_builtin_tables_of_rows_are_converted_as_value_by_value():
    """A long list of rows (word pairs, an array's rows) takes the one-pass path with the same result:
    non-finite floats None, numpy scalars converted, tuples lists, mixed rows left to the slow path."""
    import math

    def slow(obj):  # the definition: value by value
        if isinstance(obj, (list, tuple)):
            return [slow(v) for v in obj]
        if isinstance(obj, np.generic):
            return slow(obj.item())
        return None if isinstance(obj, float) and not math.isfinite(obj) else obj

    tables = [[("a", "b")] * 20, [[1.0, float("nan"), "x", True, None]] * 20,
              [(1, np.float64(2.0))] * 20, [[float("inf")], ["w", [1, 2]]] * 10, np.arange(40.0).reshape(20, 2)]
    for table in tables:
        out = to_builtin(table)
        assert out == slow(table.tolist() if isinstance(table, np.ndarray) else table)
        assert all(type(row) is list for row in out)
    assert to_builtin([(1, np.float64(2.0))] * 20)[0][1].__class__ is float
    assert to_builtin([[1.0, float("nan")]] * 20)[3] == [1.0, None]


@pytest.mark.parametrize("decimals", [None, 1])  # distinct values; many ties
def test_ranks_in_resamples_are_rankdatas_exactly(decimals):
    from scipy.stats import rankdata

    from embdebias.metrics._resample import ranks_in_resamples

    rng = np.random.default_rng(7)
    values = rng.standard_normal(200)
    values = values if decimals is None else np.round(values, decimals)
    idx = rng.integers(0, values.size, (64, values.size))
    assert np.array_equal(ranks_in_resamples(values)(idx), rankdata(values[idx], axis=1))


# -- evaluation reads only the rows it needs ------------------------------------------------------


def test_evaluate_never_passes_over_a_memory_mapped_embedding(tmp_path, monkeypatch):
    """No metric reads every row, decodes the whole vocabulary or builds its dict."""
    from synthetic import synthetic_embedding

    from embdebias.evaluate import evaluate

    emb = synthetic_embedding(n_filler=110_000, dim=8, seed=4)
    for name in ("original", "debiased"):
        emb.with_vectors(emb.vectors * (1.0 if name == "original" else 0.5)).save(tmp_path / name, format="native")
    columns = {name: read_native(tmp_path / name) for name in ("original", "debiased")}

    def refuse(*args, **kwargs):
        raise AssertionError("a pass over every row")

    for method in ("iter_chunks", "norms", "normalize", "__array__"):
        monkeypatch.setattr(Embedding, method, refuse)
    with pytest.warns(UserWarning):                     # some units cannot be scored on random fillers
        report = evaluate(columns, options={"weat": {"n_permutations": 200}}, bootstrap=50)
    assert report.value("analogy", "google_analogy", "n_scored", "debiased") is not None
    assert report.value("rnsb", "identity terms", "rnsb", "debiased") is not None
    for emb in columns.values():
        assert emb.words._words is None and emb.words._index is None


# -- paired comparisons: one draw and one reference statistic for the columns sharing the items ------


def test_paired_changes_are_each_columns_paired_change_with_the_reference_computed_once():
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(40)]
    calls = []

    def sample(values, keys=words, name="ref"):
        stat = mean_of(values)
        return Sample({"items": list(keys)}, lambda idx: calls.append(name) or stat(idx), fairer="zero")

    reference = sample(rng.normal(size=40))
    others = {"a": sample(rng.normal(size=40), name="a"), "b": sample(rng.normal(size=40), name="b"),
              "fewer": sample(rng.normal(size=30), words[5:35], name="fewer")}   # other common items
    expected = {name: paired_change(reference, s, 300, resample_rng(0, "x"), fair_value=0.0)
                for name, s in others.items()}
    calls.clear()
    got = paired_changes(reference, others, 300, lambda: resample_rng(0, "x"), fair_values=dict.fromkeys(others, 0.0))
    assert got == expected and list(got) == list(others)
    assert calls.count("ref") == 2 * 2                  # (all items + resamples) x two sets of common items
    assert calls.count("a") == calls.count("b") == calls.count("fewer") == 2
