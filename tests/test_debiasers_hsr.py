"""Half-Sibling Regression: the d x d map equals the published per-word regression."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias.cli import main
from embdebias.debias import DEBIASERS, make_debiaser
from embdebias.debias.hsr import HalfSiblingRegression, definition_words
from embdebias.errors import MissingWordsError


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding()


def published_hsr(emb, words, alpha):
    """Yang & Feng's algorithm as written: V_d, V_n columns; W = (V_d^T V_d + a I)^-1 V_d^T V_n."""
    rows = emb.words.rows(words)
    defn = set(np.asarray(words)[rows >= 0])
    Vd = emb.take(rows[rows >= 0], dtype=np.float64).T
    others = [w for w in emb.words if w not in defn]
    Vn = emb.take(emb.words.rows(others), dtype=np.float64).T
    W = np.linalg.solve(Vd.T @ Vd + alpha * np.eye(Vd.shape[1]), Vd.T @ Vn)
    return others, (Vn - Vd @ W).T


def test_map_equals_the_published_regression(emb):
    words = definition_words()
    hsr = HalfSiblingRegression().fit(emb)
    others, expected = published_hsr(emb, words, 60.0)
    got = emb.take(emb.words.rows(others), dtype=np.float64) @ hsr.map_
    assert np.abs(got - expected).max() < 1e-8
    out = hsr.transform(emb)
    unit = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.abs(out.take(out.words.rows(others)) - unit).max() < 1e-5
    # definition words are kept (only scaled to unit length)
    kept = hsr.kept_words_
    raw = emb.take(emb.words.rows(kept), dtype=np.float64)
    assert np.allclose(out.take(out.words.rows(kept)), raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-6)


def test_duplicates_count_once_and_alpha_matters(emb):
    words = definition_words()
    assert len(words) == len(set(words)) < 444  # the files repeat some words
    a = HalfSiblingRegression(alpha=60).fit(emb).map_
    b = HalfSiblingRegression(definition_words=words + words[:20]).fit(emb).map_
    assert np.allclose(a, b)
    assert not np.allclose(a, HalfSiblingRegression(alpha=1).fit(emb).map_)


def test_hsr_removes_the_gender_part_of_neutral_words(emb):
    out = HalfSiblingRegression().fit_transform(emb)
    he_she = emb["he"] - emb["she"]
    filler = [w for w in emb.words if w.startswith("filler")]
    before = np.abs(emb[filler] @ he_she / np.linalg.norm(emb[filler], axis=1)).mean()
    after = np.abs(out[filler] @ (out["he"] - out["she"])).mean()
    assert after < 0.5 * before


def test_chunked_file_output_equals_memory(emb, tmp_path):
    hsr = HalfSiblingRegression(chunk_rows=97).fit(emb)
    on_disk = hsr.transform(emb, out=tmp_path / "hsr.embd")
    assert np.array_equal(np.asarray(on_disk.vectors), hsr.transform(emb).vectors)


def test_missing_definition_words_beyond_the_limit(emb):
    with pytest.raises(MissingWordsError, match="at most 10% may be missing"):
        HalfSiblingRegression(definition_words=["he", "she"] + [f"nope{i}" for i in range(5)],
                              max_missing=0.1).fit(emb)
    with pytest.warns(UserWarning, match="1 of 3 not in"):
        HalfSiblingRegression(definition_words=["he", "she", "nope"]).fit(emb)


def test_registered_and_on_the_command_line(emb, tmp_path, capsys):
    from synthetic import write_word2vec_text

    assert "hsr" in DEBIASERS and isinstance(make_debiaser("hsr"), HalfSiblingRegression)
    src = tmp_path / "in.txt"
    write_word2vec_text(emb, src)
    assert main(["-q", "debias", str(src), "--method", "hsr", "--out", str(tmp_path / "o.embd")]) == 0
    assert main(["-q", "debias", str(src), "--method", "hsr", "--components", "2",
                 "--out", str(tmp_path / "p.embd")]) == 2
    assert "--components does not apply to --method hsr" in capsys.readouterr().err
    assert not (tmp_path / "p.embd").exists()
