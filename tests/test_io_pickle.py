"""gensim .kv pickles: no code from a file runs, bad content is a clean error, torn pairs are caught.

Each hostile file below would create a marker file if it were unpickled normally (checked
with ``pickle.loads`` where that is safe to do); embdebias must refuse it and the marker
must not exist afterwards.
"""

from __future__ import annotations

import copyreg
import gzip
import os
import pickle
import shutil
import struct
import subprocess

import numpy as np
import pytest
from gensim.models import FastText, KeyedVectors, Word2Vec
from gensim.test.utils import common_texts, datapath

import embdebias.io.gensim_kv as gensim_kv
from embdebias import Embedding
from embdebias.cli import main
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import describe, detect_format, load, save


# -- helpers --------------------------------------------------------------------------------------
def _gensim_kv(n=5, d=3, seed=0) -> KeyedVectors:
    kv = KeyedVectors(d, count=0, dtype=np.float32)
    kv.add_vectors([f"w{i}" for i in range(n)], np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32))
    return kv


def _emb(n=6, d=4, seed=0) -> Embedding:
    rng = np.random.default_rng(seed)
    return Embedding([f"w{i}" for i in range(n)], rng.standard_normal((n, d)).astype(np.float32))


def _unicode_op(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


class _Reduce:
    """Pickles as ``func(*args)``: what a hostile file calls while it loads."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _touch(marker) -> str:
    return f"touch {marker}"


def _payloads(marker) -> dict:
    """Hostile pickles, each of which creates ``marker`` when unpickled normally."""
    cmd = _unicode_op(_touch(marker))
    code = f"open({os.fspath(marker)!r}, 'w').close()"
    return {
        "GLOBAL os.system": b"\x80\x02cos\nsystem\n" + cmd + b"\x85R.",
        "STACK_GLOBAL builtins.eval": pickle.dumps(_Reduce(eval, code), protocol=4),
        "builtins.exec protocol 5": pickle.dumps(_Reduce(exec, code), protocol=5),
        "subprocess.call": pickle.dumps(_Reduce(subprocess.call, ["touch", os.fspath(marker)]), protocol=4),
        "INST os.system": b"\x80\x02(" + cmd + b"ios\nsystem\n.",
        "OBJ os.system": b"\x80\x02(cos\nsystem\n" + cmd + b"o.",
        "posix.system protocol 2": pickle.dumps(_Reduce(os.system, _touch(marker)), protocol=2),
    }


def _nested(marker) -> KeyedVectors:
    """A working KeyedVectors with a payload in one of its attributes."""
    kv = _gensim_kv()
    kv.innocent_looking = {"note": [_Reduce(os.system, _touch(marker))]}
    return kv


def _assert_refused(path, marker, match=None, **kwargs) -> VectorFileError:
    with pytest.raises(VectorFileError) as info:
        load(path, **kwargs)
    assert path.name in str(info.value)
    if match:
        assert match in str(info.value), str(info.value)
    assert not marker.exists()
    return info.value


# -- no code runs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("style", list(_payloads("m")))
@pytest.mark.parametrize("gz", [False, True])
def test_payload_is_refused_and_does_not_run(tmp_path, style, gz):
    marker = tmp_path / "marker"
    data = _payloads(marker)[style]
    pickle.loads(data)  # the payload works: unpickled normally, it creates the marker
    assert marker.exists()
    marker.unlink()
    path = tmp_path / ("evil.kv.gz" if gz else "evil.kv")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert detect_format(path) == "gensim-kv"
    err = _assert_refused(path, marker, match="--trust-pickle")
    assert "system" in str(err) or "eval" in str(err) or "exec" in str(err) or "call" in str(err)


@pytest.mark.parametrize("protocol", [2, 4, 5])
@pytest.mark.parametrize("separately", [False, True])
def test_payload_nested_in_a_working_keyedvectors_is_refused(tmp_path, protocol, separately):
    marker = tmp_path / "marker"
    path = tmp_path / "evil.kv"
    _nested(marker).save(str(path), pickle_protocol=protocol, separately=["vectors"] if separately else None)
    assert not marker.exists()
    KeyedVectors.load(str(path))  # gensim's loader runs it
    assert marker.exists()
    marker.unlink()
    err = _assert_refused(path, marker)
    assert "'posix.system'" in str(err) or "'os.system'" in str(err)
    for mmap in (True, False):
        _assert_refused(path, marker, mmap=mmap)


def test_payload_in_a_word2vec_model_is_refused(tmp_path):
    marker = tmp_path / "marker"
    model = Word2Vec(common_texts, vector_size=8, min_count=1, workers=1, seed=1)
    model.comment = _Reduce(os.system, _touch(marker))
    path = tmp_path / "evil.model"
    model.save(str(path))
    _assert_refused(path, marker, match="system")


def test_cli_refuses_payload_in_one_line(tmp_path, capsys):
    marker = tmp_path / "marker"
    path = tmp_path / "evil.kv"
    path.write_bytes(_payloads(marker)["GLOBAL os.system"])
    for command in (["info", str(path)], ["convert", str(path), str(tmp_path / "out.bin")],
                    ["score", str(path)], ["debias", str(path), "--out", str(tmp_path / "d.embd")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert "'os.system'" in err and "--trust-pickle" in err
    assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.kv"]


def test_extension_registry_goes_through_the_same_check(tmp_path):
    marker = tmp_path / "marker"
    code = 0x7FF0
    copyreg.add_extension("os", "system", code)
    try:
        data = b"\x80\x02\x83" + struct.pack("<H", code) + _unicode_op(_touch(marker)) + b"\x85R."
        pickle.loads(data)
        assert marker.exists()
        marker.unlink()
        path = tmp_path / "ext.kv"
        path.write_bytes(data)
        _assert_refused(path, marker, match="extension code")
    finally:
        copyreg.remove_extension("os", "system", code)
    with pytest.raises(VectorFileError, match="extension code"):  # no registry: the C unpickler refuses it
        load(path)
    assert not marker.exists()


def _kv_pickle_with(vectors_ops: bytes) -> bytes:
    """A KeyedVectors pickle (protocol 2) whose ``vectors`` value is built by ``vectors_ops``."""
    return (b"\x80\x02cgensim.models.keyedvectors\nKeyedVectors\n)\x81}(" + _unicode_op("vectors") + vectors_ops
            + _unicode_op("index_to_key") + b"]" + _unicode_op("key_to_index") + b"}" + b"ub.")


@pytest.mark.parametrize("ops,match", [
    # numpy.ndarray is only ever _reconstruct's argument: calling it (a 1e12 x 1e12 array) is refused
    (b"cnumpy\nndarray\n" + (b"J" + struct.pack("<i", 10 ** 6)) * 2 + b"\x86\x85R", "not callable"),
    # _reconstruct with a huge shape instead of numpy's (0,)
    (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nJ\x00\xca\x9a;\x85C\x01b\x87R", "_reconstruct"),
    # an object dtype (its elements would be arbitrary objects)
    (b"cnumpy\ndtype\n" + _unicode_op("O8") + b"\x89\x88\x87R", "'O8'"),
    # a float dtype whose state adds fields (numpy would trust the flags and offsets)
    (b"cnumpy\ndtype\n" + _unicode_op("f4") + b"\x89\x88\x87R(K\x03" + _unicode_op("<")
     + b"N}N\x4a\x04\x00\x00\x00K\x01K\x3ftb", "state numpy never writes"),
    # array data shorter than its shape says
    (b"cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R(K\x01J\x40\x42\x0f\x00K\x03\x86"
     b"cnumpy\ndtype\n" + _unicode_op("f4") + b"\x89\x88\x87R\x89C\x04\x00\x00\x00\x00tb", "bytes of data"),
    # a persistent id
    (b"P1\n", "persistent id"),
    # BUILD on an admitted function (a state could set its __defaults__) or on numpy.ndarray
    (b"cnumpy._core.multiarray\n_reconstruct\n}b", "given a state"),
    (b"cnumpy\nndarray\nN}\x86b", "given a state of its own"),
    # a gensim object given a (dict, slots) state instead of its attribute dict
    (b"cgensim.models.keyedvectors\nKeyedVectors\n)\x81N}\x86b", "not a dict of attribute names"),
])
def test_calls_and_states_numpy_never_writes_are_refused(tmp_path, ops, match):
    path = tmp_path / "crafted.kv"
    path.write_bytes(_kv_pickle_with(ops))
    with pytest.raises(VectorFileError, match=match):
        load(path)


# -- what real gensim files need still loads --------------------------------------------------------
def _same(emb, kv):
    assert emb.words.tolist() == list(kv.index_to_key)
    np.testing.assert_array_equal(emb.vectors, np.asarray(kv.vectors[:len(emb)], dtype=np.float32))


@pytest.mark.parametrize("name,options", [
    ("inline.kv", {}), ("sep.kv", {"separately": ["vectors"]}), ("p2.kv", {"pickle_protocol": 2}),
    ("p5.kv", {"pickle_protocol": 5}), ("p5sep.kv", {"pickle_protocol": 5, "separately": ["vectors"]}),
    ("vectors.kv.gz", {"separately": ["vectors"]}), ("inline.kv.gz", {}), ("model.wv", {}),
])
def test_keyedvectors_saved_by_gensim_load_without_trust(tmp_path, name, options):
    kv = _gensim_kv(n=7, d=5)
    kv.fill_norms()
    path = tmp_path / name
    kv.save(str(path), **options)
    emb = load(path)
    _same(emb, kv)
    assert detect_format(path) == "gensim-kv"
    assert describe(path)["count"] == 7


@pytest.mark.parametrize("separately", [False, True])
def test_word2vec_model_saved_by_gensim_loads_without_trust(tmp_path, separately):
    model = Word2Vec(common_texts, vector_size=8, min_count=1, workers=1, seed=1)
    path = tmp_path / "w.model"
    model.save(str(path), **({"separately": ["vectors"], "sep_limit": 0} if separately else {}))
    assert (tmp_path / "w.model.wv.vectors.npy").exists() == separately
    _same(load(path), model.wv)


def test_float64_and_big_endian_vectors(tmp_path):
    kv = _gensim_kv()
    kv.vectors = kv.vectors.astype(">f8")
    kv.save(str(tmp_path / "be.kv"))
    emb = load(tmp_path / "be.kv")
    np.testing.assert_array_equal(emb.vectors, kv.vectors.astype(np.float32))


# -- trust_pickle ------------------------------------------------------------------------------------
@pytest.fixture
def fasttext_kv(tmp_path):
    model = FastText(common_texts, vector_size=6, min_count=1, workers=1, bucket=50, seed=1)
    path = tmp_path / "ft.kv"
    model.wv.save(str(path))
    return path, model.wv


def test_fasttext_keyedvectors_need_trust_pickle(tmp_path, fasttext_kv, capsys):
    path, wv = fasttext_kv
    with pytest.raises(VectorFileError, match="FastTextKeyedVectors.*--trust-pickle"):
        load(path)
    _same(load(path, trust_pickle=True), wv)
    assert main(["info", str(path)]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
    assert main(["info", "--trust-pickle", "--json", str(path)]) == 0
    assert '"count": 12' in capsys.readouterr().out
    assert main(["convert", "--trust-pickle", str(path), str(tmp_path / "ft.bin")]) == 0
    np.testing.assert_array_equal(load(tmp_path / "ft.bin").vectors, np.asarray(wv.vectors, np.float32))


def test_gensim_3_file_needs_trust_pickle(tmp_path):
    src = datapath("old_keyedvectors_320.dat")
    with pytest.raises(VectorFileError, match="not unpickled on content alone"):
        detect_format(src)
    with pytest.raises(VectorFileError, match="--trust-pickle"):
        load(src, format="gensim-kv")
    emb = load(src, format="gensim-kv", trust_pickle=True)
    _same(emb, KeyedVectors.load(src))


def test_other_gensim_pickles_are_refused(tmp_path):
    path = tmp_path / "lda.model"
    shutil.copy(datapath("ldamodel_python_3_5"), path)
    with pytest.raises(VectorFileError, match="ldamodel"):
        load(path)


# -- detection by content never unpickles a file named like another format ---------------------------
def test_pickle_named_like_text_is_not_detected(tmp_path, capsys):
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.txt"
    evil.write_bytes(_payloads(marker)["GLOBAL os.system"])
    with pytest.raises(VectorFileError, match="evil.txt.*not unpickled on content alone"):
        detect_format(evil)
    with pytest.raises(VectorFileError, match="--input-format gensim-kv"):
        load(evil)
    assert main(["info", str(evil)]) == 2
    assert "not unpickled" in capsys.readouterr().err
    _assert_refused(evil, marker, format="gensim-kv")  # named explicitly: still the restricted reader
    good = tmp_path / "looks.txt"
    _gensim_kv().save(str(good))
    with pytest.raises(VectorFileError):
        load(good)
    _same(load(good, format="gensim-kv"), _gensim_kv())
    assert main(["info", "--input-format", "gensim-kv", str(good)]) == 0


# -- malformed KeyedVectors content ----------------------------------------------------------------
def _crafted(tmp_path, name="bad.kv", **changes):
    """A KeyedVectors pickle with some attributes replaced (pickled as they are, as gensim would)."""
    kv = _gensim_kv(n=3, d=3)
    state = dict(vars(kv), **changes)
    obj = KeyedVectors.__new__(KeyedVectors)
    obj.__dict__.update({k: v for k, v in state.items() if v is not _DROP})
    path = tmp_path / name
    path.write_bytes(pickle.dumps(obj, protocol=4))
    return path


_DROP = object()
_V = np.ones((3, 3), np.float32)


@pytest.mark.parametrize("changes,match", [
    ({"index_to_key": None}, "index_to_key is a NoneType"),
    ({"index_to_key": "w0w1w2"}, "index_to_key is a str"),
    ({"index_to_key": ("w0", "w1", "w2")}, "index_to_key is a tuple"),
    ({"index_to_key": ["w0", 1, "w2"]}, "word 1 of index_to_key is a int"),
    ({"index_to_key": ["w0", None, "w2"]}, "word 1 of index_to_key is a NoneType"),
    ({"index_to_key": [b"w0", "w1", "w2"]}, "word 0 of index_to_key is a bytes"),
    ({"index_to_key": ["w0", "w1"]}, "3 keys for 2 words"),
    ({"index_to_key": ["w0", "w1", "w2", "w3"], "key_to_index": {"w0": 0, "w1": 1, "w2": 2, "w3": 3}},
     "at least 4 rows"),
    ({"index_to_key": ["w0", "w0", "w2"], "key_to_index": {"w0": 0, "w2": 2}}, "'w0' \\(row 1\\)"),
    ({"key_to_index": None}, "key_to_index is a NoneType"),
    ({"key_to_index": _DROP}, "key_to_index is a NoneType"),
    ({"key_to_index": {"w0": 0, "w1": 2, "w2": 1}}, "'w1' \\(row 1\\) to 2;"),
    ({"key_to_index": {"w0": "0", "w1": 1, "w2": 2}}, "'w0' \\(row 0\\) to '0'"),
    ({"key_to_index": {"w0": 0, "w1": 1, "w2": 2, "x": None}}, "4 keys for 3 words"),
    ({"key_to_index": {"w0": 0, "w1": 1, "w2": 2, "w3": 3}}, "4 keys for 3 words"),
    ({"key_to_index": {"w0": 0, "w1": 1, "w2": 2 ** 70}}, "row 2"),
    ({"vectors": None}, "vectors are a NoneType"),
    ({"vectors": "abc"}, "vectors are a str"),
    ({"vectors": _V.tolist()}, "vectors are a list"),
    ({"vectors": np.ones(9, np.float32)}, "shape \\(9,\\)"),
    ({"vectors": np.ones((3, 3), np.int64)}, "int64 array"),
    ({"vectors": np.ones((3, 3), np.complex64)}, "complex64 array"),
    ({"vectors": np.ones((2, 3), np.float32)}, "at least 3 rows"),
    ({"vectors": np.ones((3, 0), np.float32), "vector_size": 0}, "at least one column"),
    ({"vectors": np.array([[1, np.nan, 0]] * 3, np.float32)}, "NaN or infinite"),
    ({"vectors": np.ones((3, 3), "f4,f4")}, "numpy.dtype"),
    ({"vectors": np.ones((3, 3), object)}, "numpy.dtype"),
    ({"vector_size": 4}, "vector_size is 4"),
    ({"vector_size": "3"}, "vector_size is '3'"),
    ({"__numpys": "vectors"}, "__numpys is a str"),
    ({"__numpys": ["vectors"]}, "does not exist"),
    ({"__ignoreds": ["vectors"], "vectors": None}, "left out"),
    ({gensim_kv.FINGERPRINT: "x"}, "damaged"),
])
def test_malformed_keyedvectors_is_a_clean_error(tmp_path, changes, match):
    path = _crafted(tmp_path, **changes)
    with pytest.raises(VectorFileError, match=match) as info:
        load(path)
    assert str(info.value).startswith(str(path))
    with pytest.raises(VectorFileError) as info:  # gensim's loader fails on some first, in its own words
        load(path, trust_pickle=True)
    assert str(info.value).startswith(str(path))


@pytest.mark.parametrize("root", [[1, 2, 3], {"index_to_key": ["a"]}, 42, "kv"])
def test_pickle_of_something_else_is_refused(tmp_path, root):
    path = tmp_path / "other.kv"
    path.write_bytes(pickle.dumps(root, protocol=4))
    with pytest.raises(VectorFileError, match="expected gensim KeyedVectors"):
        load(path)


def test_damaged_pickles_are_clean_errors(tmp_path):
    good = pickle.dumps(_gensim_kv(), protocol=4)
    path = tmp_path / "cut.kv"
    for data in (good[:len(good) // 2], good[:-1], b"\x80\x04\x95" + b"\xff" * 8 + b"B\xff\xff\xff\x7f",
                 b"\x80\x05\x8e" + struct.pack("<Q", 2 ** 62)):
        path.write_bytes(data)
        with pytest.raises(VectorFileError, match="not a loadable gensim KeyedVectors pickle"):
            load(path)


# -- the companion .npy ------------------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "e.kv"
    save(_emb(), path)
    return path, tmp_path / "e.kv.vectors.npy"


def test_companion_header_is_checked_before_loading(saved):
    path, npy = saved
    data = npy.read_bytes()
    npy.write_bytes(data[:-4])
    with pytest.raises(VectorFileError, match="truncated or damaged"):
        load(path)
    header_end = data.index(b"\n") + 1
    npy.write_bytes(data[:header_end].replace(b"(6, 4)", b"(999999999, 4)") + data[header_end:])
    with pytest.raises(VectorFileError, match="e.kv.vectors.npy.*truncated"):
        load(path)
    np.save(npy, np.ones((6, 5), np.float32))
    with pytest.raises(VectorFileError, match=r"shape \(6, 4\)"):
        load(path)
    np.save(npy, np.array([[{"a": 1}] * 4] * 6, dtype=object))
    with pytest.raises(VectorFileError, match="object array"):
        load(path)
    npy.write_bytes(b"not an npy file")
    with pytest.raises(VectorFileError, match="not a readable .npy"):
        load(path)


def test_companion_must_be_a_regular_file(saved):
    path, npy = saved
    npy.unlink()
    os.mkfifo(npy)  # opening a FIFO would block: never opened
    with pytest.raises(VectorFileError, match="not a regular file"):
        load(path)
    npy.unlink()
    npy.mkdir()
    with pytest.raises(VectorFileError, match="not a regular file"):
        load(path)


# -- the writer: fingerprint, torn pairs, gensim compatibility ---------------------------------------
def test_written_file_loads_in_gensim(tmp_path):
    emb = _emb(n=50, d=7)
    save(emb, tmp_path / "e.kv")
    for mmap in ("r", None):
        kv = KeyedVectors.load(str(tmp_path / "e.kv"), mmap=mmap)
        _same(emb, kv)
    assert load(tmp_path / "e.kv").words.tolist() == emb.words.tolist()


def test_swapped_companion_is_detected(tmp_path):
    save(_emb(seed=1), tmp_path / "a.kv")
    save(_emb(seed=2), tmp_path / "b.kv")  # same words, same shape, other vectors
    shutil.copy(tmp_path / "b.kv.vectors.npy", tmp_path / "a.kv.vectors.npy")
    for trust in (False, True):
        with pytest.raises(VectorFileError, match="a.kv: the vectors file .* is not the one this pickle was saved"):
            load(tmp_path / "a.kv", trust_pickle=trust)


def test_companion_of_another_shape_is_detected(tmp_path):
    save(_emb(n=6), tmp_path / "a.kv")
    save(_emb(n=9), tmp_path / "b.kv")
    shutil.copy(tmp_path / "b.kv.vectors.npy", tmp_path / "a.kv.vectors.npy")
    with pytest.raises(VectorFileError, match="not the one this pickle was saved with"):
        load(tmp_path / "a.kv")


def test_save_killed_between_the_two_renames_is_detected(tmp_path, monkeypatch):
    path = tmp_path / "x.kv"
    old, new = _emb(seed=1), _emb(seed=2)
    save(old, path)
    real_replace = os.replace
    calls = []

    def replace_then_die(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the pickle's rename: the process dies first
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        save(new, path)
    monkeypatch.undo()
    assert [os.fspath(c) for c in calls] == [os.fspath(tmp_path / "x.kv.vectors.npy"), os.fspath(path)]
    with pytest.raises(VectorFileError, match="torn by an interrupted save"):
        load(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.kv", "x.kv.vectors.npy"]  # no temporaries left
    save(new, path)  # saving again repairs it
    np.testing.assert_array_equal(load(path).vectors, new.vectors)


@pytest.mark.parametrize("separately", [False, True])
def test_file_resaved_by_gensim_is_not_held_to_the_old_fingerprint(tmp_path, separately):
    path = tmp_path / "e.kv"
    save(_emb(), path)
    kv = KeyedVectors.load(str(path))
    kv.vectors = kv.vectors * 2
    kv.save(str(path), separately=["vectors"] if separately else None)
    np.testing.assert_array_equal(load(path).vectors, _emb().vectors * 2)


def test_writer_refuses_dimension_zero_and_non_finite(tmp_path):
    with pytest.raises(EmbdebiasError, match="dimension 0"):
        save(Embedding(["a", "b"], np.zeros((2, 0), np.float32)), tmp_path / "z.kv")
    with pytest.raises(EmbdebiasError, match="NaN"):
        save(Embedding(["a", "b"], np.array([[1, np.inf], [0, 0]], np.float32)), tmp_path / "n.kv")
    assert list(tmp_path.iterdir()) == []


def test_words_other_formats_cannot_store_round_trip(tmp_path):
    words = ["a", "b\ud800", "c\nd", "e f", ""]  # a lone surrogate, a newline, a space, the empty word
    save(Embedding(words, np.eye(5, dtype=np.float32)), tmp_path / "w.kv")
    assert load(tmp_path / "w.kv").words.tolist() == words
    assert KeyedVectors.load(str(tmp_path / "w.kv")).index_to_key == words


def test_empty_vocabulary_round_trips(tmp_path):
    save(Embedding([], np.zeros((0, 3), np.float32)), tmp_path / "e.kv")
    emb = load(tmp_path / "e.kv")
    assert len(emb) == 0 and emb.dim == 3


# -- companion files of an input are never outputs ------------------------------------------------
@pytest.mark.parametrize("force", [False, True])
def test_convert_refuses_to_overwrite_an_input_companion(saved, capsys, force):
    path, npy = saved
    before = npy.read_bytes()
    assert main(["convert", str(path), str(npy), *(["--force"] if force else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "companion file of the input" in err and "Traceback" not in err
    assert npy.read_bytes() == before
    np.testing.assert_array_equal(load(path).vectors, _emb().vectors)


def test_companion_of_a_model_input_is_refused(tmp_path):
    model = Word2Vec(common_texts, vector_size=8, min_count=1, workers=1, seed=1)
    model.save(str(tmp_path / "w.model"), separately=["vectors"], sep_limit=0)
    with pytest.raises(EmbdebiasError, match="companion"):
        from embdebias.io import convert

        convert(tmp_path / "w.model", tmp_path / "w.model.wv.vectors.npy", format="word2vec-bin")


def test_symlinked_input_companion_is_refused(saved, tmp_path):
    path, npy = saved
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "l.kv").symlink_to(path)
    (link_dir / "l.kv.vectors.npy").symlink_to(npy)
    from embdebias.io import convert

    for target in (link_dir / "l.kv.vectors.npy", npy):
        with pytest.raises(EmbdebiasError, match="companion"):
            convert(link_dir / "l.kv", target, format="word2vec-bin")


def test_gzip_pickle_with_unreadable_gzip_is_a_clean_error(tmp_path):
    path = tmp_path / "d.kv.gz"
    path.write_bytes(gzip.compress(pickle.dumps(_gensim_kv(), protocol=4))[:-12])
    with pytest.raises(VectorFileError, match="d.kv.gz"):
        load(path)


# -- a small seeded mutation fuzz: clean errors only ------------------------------------------------
def _mutate(rng, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.integers(1, 4)):
        if not data:
            break
        i, op = int(rng.integers(len(data))), rng.random()
        if op < 0.5:
            data[i] = int(rng.integers(256))
        elif op < 0.7:
            del data[i:i + int(rng.integers(1, 16))]
        elif op < 0.9:
            data[i:i] = rng.bytes(int(rng.integers(1, 8)))
        else:
            del data[i:]
    return bytes(data)


def test_mutated_pickles_and_companions_give_clean_errors(tmp_path):
    """Every mutant either loads or raises a project error: no traceback, no hang, nothing runs."""
    kv = _gensim_kv(n=30, d=4)
    seeds = {}
    for protocol in (2, 4, 5):
        kv.save(str(tmp_path / "seed.kv"), pickle_protocol=protocol)
        seeds[protocol] = (tmp_path / "seed.kv").read_bytes()
    save(_emb(n=30), tmp_path / "pair.kv")
    pair = (tmp_path / "pair.kv").read_bytes(), (tmp_path / "pair.kv.vectors.npy").read_bytes()
    rng = np.random.default_rng(13)
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(240):
        path = tmp_path / "m.kv"
        if i % 3 == 2:  # the separately stored pair: mutate either file
            pickled, npy = pair
            if rng.random() < 0.5:
                pickled = _mutate(rng, pickled)
            else:
                npy = _mutate(rng, npy[:160]) + npy[160:]
            (tmp_path / "m.kv.vectors.npy").write_bytes(npy)
        else:
            pickled = _mutate(rng, seeds[(2, 4, 5)[i % 3]])
        path.write_bytes(pickled)
        try:
            load(path, mmap=bool(i % 2)).norms()
            outcomes["loaded"] += 1
        except EmbdebiasError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 150 and sum(outcomes.values()) == 240
