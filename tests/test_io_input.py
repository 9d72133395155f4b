"""How inputs are read: forced formats that do not fit, built-in names, undecodable words, `info` options."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embdebias.cli import main
from embdebias.embedding import DuplicateWordWarning, Embedding
from embdebias.errors import EmbdebiasError, VectorFileError
from embdebias.io import BUILTIN_NAMES, FORMATS, describe, load, save

SAME = {"word2vec-text", "fasttext-vec"}  # one format under two names


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One file of every format, holding the same small embedding."""
    d = tmp_path_factory.mktemp("formats")
    rng = np.random.default_rng(3)
    emb = Embedding([f"w{i}" for i in range(30)], rng.standard_normal((30, 5)).astype(np.float32))
    names = {"native": "e.embd", "word2vec-bin": "e.bin", "word2vec-text": "e.txt", "fasttext-vec": "e.vec",
             "glove": "e.glove.txt", "fasttext-bin": "e.ft.bin", "gensim-kv": "e.kv"}
    for fmt, name in names.items():
        save(emb, d / name, format=fmt)
    return {fmt: d / name for fmt, name in names.items()}


# -- friction 8: a forced format that does not fit is an error naming file, place and expectation ----------
def test_vec_read_as_glove_is_an_error_not_a_1763_x_1_embedding(files, tmp_path, capsys):
    out = tmp_path / "y.embd"
    assert main(["convert", str(files["fasttext-vec"]), str(out), "--input-format", "glove"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(files["fasttext-vec"]) in err[0]
    assert "(line 1, byte offset 0)" in err[0] and "'30 5'" in err[0] and "expected lines 'word v1 ... vd'" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("actual", FORMATS)
@pytest.mark.parametrize("forced", FORMATS)
def test_every_forced_format_that_does_not_fit_is_refused(files, actual, forced):
    path = files[actual]
    if forced == actual or {forced, actual} <= SAME:
        assert len(load(path, format=forced)) == 30
        return
    with pytest.raises(VectorFileError) as info:
        load(path, format=forced)
    err = info.value
    assert err.path == str(path) and str(path) in str(err)
    assert "expected" in str(err)
    if "directory" not in str(err):  # a directory has no line or byte to point at
        assert err.line is not None or err.offset is not None, str(err)


def test_text_read_as_binary_names_the_text_line(tmp_path):
    path = tmp_path / "t.vec"
    path.write_bytes(b"2 2\nab 0.5 1\ncd 0.25 2\n")
    with pytest.raises(VectorFileError, match="text line 'ab 0.5 1'") as info:
        load(path, format="word2vec-bin")
    assert info.value.offset == 4


def test_a_file_valid_both_ways_follows_the_extension_or_the_forced_format(tmp_path):
    from embdebias.io import detect_format

    data = b"2 1\nab 0.5\ncd 0.25\n"  # text, and also two binary records of 4 bytes each
    for name, fmt in (("x.vec", "fasttext-vec"), ("x.txt", "word2vec-text"), ("x.bin", "word2vec-bin")):
        (tmp_path / name).write_bytes(data)
        assert detect_format(tmp_path / name) == fmt
    assert load(tmp_path / "x.vec")["cd"].tolist() == [0.25]
    binary = load(tmp_path / "x.vec", format="word2vec-bin")
    assert binary.words.tolist() == ["ab", "cd"]
    assert binary["cd"].tolist() == np.frombuffer(b"0.25", "<f4").tolist()


def test_glove_line_with_more_values_than_the_first_is_an_error(tmp_path):
    path = tmp_path / "g.txt"
    path.write_bytes(b"a 1 2\nb c 3 4\nd 5 6 7\n")  # "b c" is a word with a space; "d 5" is not
    with pytest.raises(VectorFileError, match="expected 2 values .* found 3") as info:
        load(path)
    assert info.value.line == 3 and info.value.offset == 14


def test_glove_writer_refuses_what_its_reader_would_misread(tmp_path):
    with pytest.raises(EmbdebiasError, match="word2vec header"):
        save(Embedding(["5", "a"], np.array([[3.0], [1.0]])), tmp_path / "h.glove")
    with pytest.raises(EmbdebiasError, match="followed by a number") as info:
        save(Embedding(["a", "b 1"], np.ones((2, 2))), tmp_path / "n.glove")
    assert "'b 1'" in str(info.value)
    assert list(tmp_path.iterdir()) == []
    save(Embedding(["b 1x", "5"], np.array([[3.0], [1.0]])), tmp_path / "ok.glove")
    assert load(tmp_path / "ok.glove").words.tolist() == ["b 1x", "5"]


# -- friction 11: unknown built-in names ----------------------------------------------------------------
def test_unknown_builtin_name_lists_the_builtin_names(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(VectorFileError, match="no such file") as info:
        load("glove-6b-100d")
    assert "built-in: " + ", ".join(BUILTIN_NAMES) in str(info.value)
    assert main(["info", "glove-6b-100d"]) == 2
    assert "glove-6b-50d" in capsys.readouterr().err
    with pytest.raises(VectorFileError) as info:  # a path is plainly a file: no list
        load(tmp_path / "missing" / "x.bin")
    assert "built-in" not in str(info.value)


# -- friction 12: info --input-format / --limit ---------------------------------------------------------
def test_info_takes_input_format_and_limit(files, capsys):
    assert main(["info", str(files["fasttext-vec"]), "--json", "--limit", "7"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["count"] == 7 and info["format"] == "fasttext-vec"
    assert main(["info", str(files["fasttext-vec"]), "--json", "--input-format", "word2vec-text"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "word2vec-text"
    assert main(["info", str(files["fasttext-vec"]), "--input-format", "glove"]) == 2
    assert "line 1" in capsys.readouterr().err
    assert describe(files["native"], limit=3)["count"] == 3


# -- friction 13: unicode_errors with gensim's meaning ------------------------------------------------------
BAD = b"b\xffc"  # "b", an undecodable byte, "c"


def _text_file(tmp_path, fmt):
    lines = [b"aa 1 2", BAD + b" 3 4", b"d 5 6"]
    header = b"3 2\n" if fmt != "glove" else b""
    path = tmp_path / {"glove": "u.glove", "word2vec-text": "u.txt", "fasttext-vec": "u.vec"}[fmt]
    path.write_bytes(header + b"\n".join(lines) + b"\n")
    return path


def _binary_file(tmp_path):
    rec = [w + b" " + np.array(v, "<f4").tobytes() + b"\n" for w, v in ((b"aa", [1, 2]), (BAD, [3, 4]),
                                                                      (b"d", [5, 6]))]
    path = tmp_path / "u.bin"
    path.write_bytes(b"3 2\n" + b"".join(rec))
    return path


def _fasttext_file(tmp_path):
    path = tmp_path / "u.ft.bin"
    save(Embedding(["aa", "bXc", "d"], np.arange(6.0).reshape(3, 2)), path)
    data = path.read_bytes()
    assert data.count(b"bXc\x00") == 1
    path.write_bytes(data.replace(b"bXc\x00", BAD + b"\x00"))
    return path


@pytest.fixture(params=["word2vec-text", "fasttext-vec", "glove", "word2vec-bin", "fasttext-bin"])
def undecodable(request, tmp_path):
    fmt = request.param
    if fmt == "word2vec-bin":
        return _binary_file(tmp_path)
    if fmt == "fasttext-bin":
        return _fasttext_file(tmp_path)
    return _text_file(tmp_path, fmt)


def test_strict_names_the_file_and_the_byte_offset(undecodable):
    with pytest.raises(VectorFileError, match="undecodable UTF-8") as info:
        load(undecodable)
    err = info.value
    assert err.path == str(undecodable) and err.offset == undecodable.read_bytes().index(BAD) + 1
    assert f"byte offset {err.offset}" in str(err)


@pytest.mark.parametrize("errors,word", [("ignore", "bc"), ("replace", "b\ufffdc")])
def test_ignore_and_replace(undecodable, errors, word):
    emb = load(undecodable, unicode_errors=errors)
    assert emb.words.tolist() == ["aa", word, "d"]
    if undecodable.suffix != ".bin" or undecodable.name.endswith(".ft.bin"):
        return
    np.testing.assert_array_equal(emb[word], [3, 4])


@pytest.mark.parametrize("errors", ["strict", "ignore", "replace"])
def test_same_words_as_gensim(tmp_path, errors):
    from gensim.models import KeyedVectors

    for path, binary in ((_text_file(tmp_path, "word2vec-text"), False), (_binary_file(tmp_path), True)):
        if errors == "strict":
            with pytest.raises(UnicodeDecodeError):
                KeyedVectors.load_word2vec_format(str(path), binary=binary, unicode_errors=errors)
            with pytest.raises(VectorFileError):
                load(path, unicode_errors=errors)
            continue
        kv = KeyedVectors.load_word2vec_format(str(path), binary=binary, unicode_errors=errors)
        assert load(path, unicode_errors=errors).words.tolist() == kv.index_to_key


def test_words_made_equal_by_replace_keep_the_first_row(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(b"2 1\na\xff 1\na\xfe 2\n")
    with pytest.warns(DuplicateWordWarning):
        emb = load(path, unicode_errors="replace")
    assert emb.words.tolist() == ["a\ufffd"] and emb["a\ufffd"][0] == 1.0
    (tmp_path / "e.txt").write_bytes(b"1 1\n\xff 1\n")
    with pytest.raises(VectorFileError, match="empty once") as info:
        load(tmp_path / "e.txt", unicode_errors="ignore")
    assert info.value.line == 2


def test_unicode_errors_on_the_command_line(tmp_path, capsys):
    src = _text_file(tmp_path, "word2vec-text")
    assert main(["-q", "convert", str(src), str(tmp_path / "o.embd")]) == 2
    err = capsys.readouterr().err
    assert "(line 3, byte offset 12)" in err and str(src) in err  # 4 + 7 bytes, then "b"
    assert main(["-q", "convert", str(src), str(tmp_path / "o.embd"), "--unicode-errors", "replace"]) == 0
    assert load(tmp_path / "o.embd").words.tolist() == ["aa", "b\ufffdc", "d"]
    assert main(["info", str(src), "--json", "--unicode-errors", "ignore"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 3
    for command in (["debias", "--out", "x"], ["expand", "--out", "x"], ["score"], ["plot", "--out", "x.png"],
                    ["run", "--out-dir", "x"], ["convert", "a", "b"], ["info"]):
        with pytest.raises(SystemExit):
            main([command[0], "--unicode-errors", "bogus", *command[1:]])
        assert "--unicode-errors" in capsys.readouterr().err
    with pytest.raises(EmbdebiasError, match="unicode_errors"):
        load(src, unicode_errors="bogus")


def test_binary_whose_first_vector_starts_like_a_number_is_still_binary(tmp_path):
    from embdebias.io import detect_format

    vectors = np.ones((3, 3), dtype=np.float32)
    vectors[0, 0] = np.frombuffer(b"5\n\x00\x40", "<f4")[0]  # the first "line" would read "w0 5"
    emb = Embedding(["w0", "w1", "w2"], vectors)
    save(emb, tmp_path / "x.dat", format="word2vec-bin")
    assert (tmp_path / "x.dat").read_bytes().startswith(b"3 3\nw0 5\n")
    assert detect_format(tmp_path / "x.dat") == "word2vec-bin"
    np.testing.assert_array_equal(load(tmp_path / "x.dat").vectors, vectors)


@pytest.mark.parametrize("argv", [["debias", "{f}", "--out", "{d}/o.embd"], ["expand", "{f}", "--out", "{d}/o.txt"],
                                  ["score", "{f}"], ["plot", "{f}", "--out", "{d}/o.png"],
                                  ["run", "{f}", "--out-dir", "{d}/run"], ["convert", "{f}", "{d}/o.embd"],
                                  ["info", "{f}"]], ids=lambda a: a[0])
def test_every_reading_command_passes_unicode_errors_on(tmp_path, capsys, argv):
    src = _text_file(tmp_path, "word2vec-text")
    argv = [a.format(f=src, d=tmp_path) for a in argv]
    main(["-q", *argv])
    assert "undecodable UTF-8" in capsys.readouterr().err
    main(["-q", *argv, "--unicode-errors", "replace"])  # read fine; the tiny vocabulary may fail later
    assert "undecodable" not in capsys.readouterr().err
