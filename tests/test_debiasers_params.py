"""save_params / load_params: every debiaser's fit travels in an npz without pickle."""

import json
import zipfile

import numpy as np
import pytest
from debiaser_data import QUICK_FIT, gendered_embedding

from embdebias.debias import DEBIASERS, make_debiaser
from embdebias.embedding import Embedding
from embdebias.errors import DimensionError, ParamsFileError



@pytest.fixture(scope="module")
def emb():
    return gendered_embedding()


def fitted(name, emb):
    return make_debiaser(name, **QUICK_FIT.get(name, {})).fit(emb)


@pytest.mark.parametrize("name", list(DEBIASERS))
def test_round_trip_gives_the_same_vectors(name, emb, tmp_path):
    est = fitted(name, emb)
    path = est.save_params(tmp_path / "p.npz")
    with zipfile.ZipFile(path) as z:
        assert "__meta__.npy" in z.namelist()
    loaded = type(est)().load_params(path)
    assert np.array_equal(loaded.transform(emb).vectors, est.transform(emb).vectors)
    # no pickle needed: numpy refuses object arrays with allow_pickle=False
    with np.load(path, allow_pickle=False) as npz:
        json.loads(npz["__meta__"].tobytes())


def test_refused_files(emb, tmp_path):
    est = fitted("hsr", emb)
    path = est.save_params(tmp_path / "hsr.npz")
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(path.read_bytes()[:200] if hasattr(path, "read_bytes") else open(path, "rb").read()[:200])
    with pytest.raises(ParamsFileError, match="damaged"):
        type(est)().load_params(damaged)
    other = fitted("hard", emb).save_params(tmp_path / "hard.npz")
    with pytest.raises(ParamsFileError, match="not of 'embdebias.debias.hsr:HalfSiblingRegression'"):
        type(est)().load_params(other)
    with pytest.raises(DimensionError, match="16-d vectors, expected 8-d"):
        type(est)().load_params(path, dim=8)
    small = Embedding(emb.words, emb.vectors[:, :8], name="small")
    with pytest.raises(DimensionError):
        type(est)().load_params(path).transform(small)
    np.savez(tmp_path / "plain.npz", a=np.zeros(3))
    with pytest.raises(ParamsFileError, match="not an embdebias parameter file"):
        type(est)().load_params(tmp_path / "plain.npz")


def test_a_map_of_the_wrong_shape_is_refused(emb, tmp_path):
    est = fitted("hsr", emb)
    est.map_ = est.map_[:, :3]
    path = est.save_params(tmp_path / "bad.npz")
    with pytest.raises(ParamsFileError, match="map_ has shape"):
        type(est)().load_params(path)
