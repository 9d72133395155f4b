"""The command line's traps (issue 20, section 5): each class, with what now happens."""

import argparse
import errno
import json
import shutil

import numpy as np
import pytest

from embdebias import io
from embdebias.cli import build_parser, main
from embdebias.embedding import Embedding
from embdebias.errors import (
    CorpusError,
    EmbdebiasError,
    MissingFileError,
    VectorFileError,
    VectorFileNotFoundError,
    WordListError,
)
from synthetic import synthetic_embedding, write_word2vec_text


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("traps") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


def _binary_with_lone_cr(path):
    """A word2vec binary file whose float bytes hold a CR not followed by LF (what a text reader trips on)."""
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((50, 8)).astype(np.float32)
    raw = vectors.view(np.uint8)
    raw[3, 1], raw[3, 2] = 0x0D, 0x41
    io.save(Embedding([f"w{i}" for i in range(50)], vectors), path)
    assert b"\r" in path.read_bytes() and b"\r\n" not in path.read_bytes()[:200]
    return path


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# -- a wrong hint is worse than none ------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["word2vec-text", "glove"])
def test_binary_read_as_text_gets_no_line_end_advice(tmp_path, capsys, fmt):
    path = _binary_with_lone_cr(tmp_path / "v.bin")
    assert main(["info", str(path), "--input-format", fmt]) == 2
    err = _error(capsys)
    assert "tr '" not in err  # would corrupt the binary file
    assert "the content is word2vec-bin (detected)" in err and "--input-format word2vec-bin" in err


def test_text_file_with_cr_line_ends_keeps_its_advice(tmp_path, capsys):
    path = tmp_path / "cr.txt"
    path.write_bytes(b"2 2\ra 1 2\rb 3 4\r")
    assert main(["info", str(path)]) == 2
    assert "(convert with: tr '\\r' '\\n')" in _error(capsys)


def test_gzip_text_with_cr_line_ends_is_told_to_decompress_first(tmp_path, capsys):
    import gzip

    path = tmp_path / "cr.txt.gz"
    path.write_bytes(gzip.compress(b"2 2\ra 1 2\rb 3 4\r"))
    assert main(["info", str(path)]) == 2
    assert "convert the decompressed text with: tr" in _error(capsys)


def test_a_format_that_fits_gets_no_detected_format_note(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("3 4\na 1 2 3 4\nb 1 2 3\nc 1 2 3 4\n", encoding="utf-8")
    with pytest.raises(VectorFileError) as info:
        io.load(path, format="word2vec-text")
    assert "detected" not in str(info.value)


# -- --format contradicting the output's name ------------------------------------------------------
@pytest.mark.parametrize("name, fmt, named", [("out.txt", "word2vec-bin", "word2vec-text"),
                                              ("out.vec", "native", "fasttext-vec"),
                                              ("out.kv", "glove", "gensim-kv")])
def test_format_contradicting_the_name_is_an_error_unless_force(small, tmp_path, capsys, name, fmt, named):
    out = tmp_path / name
    assert main(["convert", str(small), str(out), "--format", fmt]) == 2
    err = _error(capsys)
    assert f"--format {fmt} contradicts the name, which asks for {named}" in err and "--force" in err
    assert not out.exists()
    assert main(["convert", str(small), str(out), "--format", fmt, "--force"]) == 0
    assert capsys.readouterr().err.count("warning:") == 1  # said once, though the output is checked twice
    assert io.detect_format(out) == fmt


@pytest.mark.parametrize("name, fmt", [("out.vec", "word2vec-text"), ("out.w2v.txt", "fasttext-vec"),
                                       ("out", "word2vec-bin"), ("out.bin", "word2vec-bin")])
def test_format_agreeing_with_or_free_of_the_name_is_accepted(small, tmp_path, name, fmt):
    assert main(["--quiet", "convert", str(small), str(tmp_path / name), "--format", fmt]) == 0


def test_debias_and_train_check_the_name_too(small, tmp_path, capsys):
    assert main(["debias", str(small), "--out", str(tmp_path / "x.txt"), "--format", "native"]) == 2
    assert "contradicts the name" in _error(capsys)
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n" * 20, encoding="utf-8")
    assert main(["train", str(corpus), "--out", str(tmp_path / "y.bin"), "--format", "glove"]) == 2
    assert "contradicts the name" in _error(capsys)


# -- run into a directory holding another input's results -------------------------------------
def test_run_into_another_inputs_results_needs_force(small, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--methods", "hard"]) == 0
    before = (out / "report.json").read_bytes()
    other = tmp_path / "other.txt"
    shutil.copy(small, other)
    assert main(["run", str(other), "--out-dir", str(out), "--methods", "hard"]) == 2
    err = _error(capsys)
    assert "holds the results of another input" in err and str(small.resolve()) in err and "--force" in err
    assert (out / "report.json").read_bytes() == before  # untouched
    # the same input resumes without --force; another one replaces with it
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--methods", "hard"]) == 0
    assert main(["--quiet", "run", str(other), "--out-dir", str(out), "--methods", "hard", "--force"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["input"]["source"] == str(other.resolve())


# -- Ctrl-C during run names the resume ---------------------------------------------------------
def test_ctrl_c_during_run_says_how_to_resume(small, tmp_path, capsys, monkeypatch):
    from embdebias.pipeline import run as pipeline_run

    out = tmp_path / "out"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline_run, "_plot_step", interrupted)
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--methods", "hard"]) == 130
    partial = out / "embdebias-partial"
    assert capsys.readouterr().err == (f"embdebias: interrupted; run the same command again to resume from "
                                       f"{partial}\n")
    monkeypatch.undo()
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--methods", "hard"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert "hard" in report["reused_steps"]  # it did resume


def test_ctrl_c_before_anything_to_resume_says_only_interrupted(small, tmp_path, capsys, monkeypatch):
    from embdebias import io as embio

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(embio, "load", interrupted)
    assert main(["--quiet", "run", str(small), "--out-dir", str(tmp_path / "out")]) == 130
    assert capsys.readouterr().err == "embdebias: interrupted\n"


# -- train refuses a vector file; warns about fastText's buckets ---------------------------------
@pytest.mark.parametrize("name, fmt", [("v.txt", "word2vec-text"), ("v.bin", "word2vec-bin"),
                                       ("v.glove.txt", "glove")])
def test_train_refuses_a_vector_file(small, tmp_path, capsys, name, fmt):
    vectors = tmp_path / name
    io.convert(small, vectors)
    out = tmp_path / "trained.bin"
    assert main(["train", str(vectors), "--out", str(out)]) == 2
    err = _error(capsys)
    assert f"a {fmt} vector file, not a text corpus" in err and "embdebias run" in err
    assert not out.exists()
    from embdebias.train import train_model

    with pytest.raises(CorpusError):
        train_model(vectors)


def test_fasttext_bucket_size_is_warned_before_training(tmp_path, capsys, monkeypatch):
    from embdebias import train

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 50, encoding="utf-8")

    def stop(*args, **kwargs):  # the warning must come before any training
        raise EmbdebiasError("stopped before training")

    monkeypatch.setattr(train, "LineCorpus", stop)
    assert main(["train", str(corpus), "--model", "fasttext", "--out", str(tmp_path / "v.bin")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("warning: fastText's 2,000,000 n-gram buckets x 100 dimensions take 800 MB of memory, and of "
                      "a .ft.bin output; a small corpus needs far fewer (bucket=100000, on the command line "
                      "--bucket 100000: 40 MB)")
    assert err[1] == "embdebias: error: stopped before training"
    assert main(["train", str(corpus), "--model", "fasttext", "--bucket", "100000", "--out",
                 str(tmp_path / "v.bin")]) == 2
    assert "warning" not in capsys.readouterr().err  # 40 MB: no warning


# -- a missing file is also a FileNotFoundError -------------------------------------------------
def test_missing_files_are_file_not_found_errors(tmp_path):
    import pickle

    from embdebias.data import wordlists
    from embdebias.text import check_corpus_path

    missing = tmp_path / "nope.bin"
    for call, kind in [(lambda: io.load(missing), VectorFileError),
                       (lambda: io.load(missing, format="word2vec-bin"), VectorFileError),
                       (lambda: io.detect_format(missing), VectorFileError),
                       (lambda: check_corpus_path(missing), CorpusError),
                       (lambda: wordlists.wordlist_path(missing), WordListError)]:
        with pytest.raises(FileNotFoundError) as info:
            call()
        exc = info.value
        assert isinstance(exc, kind) and isinstance(exc, MissingFileError) and isinstance(exc, EmbdebiasError)
        assert exc.errno == errno.ENOENT and exc.filename == str(missing)
        assert str(exc).startswith(f"{missing}: ") and "[Errno" not in str(exc)
        again = pickle.loads(pickle.dumps(exc))
        assert type(again) is type(exc) and str(again) == str(exc)
    assert isinstance(VectorFileNotFoundError(missing), ValueError)  # what `except ValueError` caught before


def test_missing_file_on_the_command_line_is_one_line(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nope.bin")]) == 2
    assert _error(capsys) == f"embdebias: error: {tmp_path / 'nope.bin'}: no such file or directory"


# -- usage errors are one line plus --help advice ---------------------------------------------
@pytest.mark.parametrize("argv, prog", [([], "embdebias"), (["nope"], "embdebias"), (["run"], "embdebias run"),
                                        (["info", "--bogus"], "embdebias"), (["plot", "--top", "x", "--out", "p.png"],
                                                                            "embdebias plot"),
                                        (["convert", "a"], "embdebias convert")])
def test_usage_errors_are_one_line_with_help_advice(argv, prog, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = _error(capsys)
    assert err.startswith(f"{prog}: error: ") and err.endswith(f"(see '{prog} --help')")


# -- --help: a description, help for every argument, shown defaults ----------------------------
def _subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_every_subcommand_has_a_description_and_help_for_every_argument():
    problems = []
    for name, sub in _subparsers().items():
        if not sub.description:
            problems.append(f"{name}: no description")
        for action in sub._actions:
            if action.help is argparse.SUPPRESS:
                continue
            if not action.help:
                problems.append(f"{name} {action.dest}: no help")
                continue
            shown = action.default in (None, False, argparse.SUPPRESS) or isinstance(action, argparse._HelpAction)
            if not shown and "default" not in action.help.lower():
                problems.append(f"{name} {action.dest}: default {action.default!r} not shown")
    assert not problems, problems


def test_one_max_missing_default_everywhere():
    from embdebias.pipeline import RunOptions

    defaults = {name: action.default for name, sub in _subparsers().items() for action in sub._actions
                if action.dest == "max_missing"}
    assert set(defaults) >= {"score", "plot", "run"}
    assert set(defaults.values()) == {RunOptions().max_missing} == {0.2}


# -- fairness: one way to list metrics, and an alias that says so ------------------------------
def test_fairness_list_metrics_is_an_alias_of_metric_list(capsys):
    assert main(["fairness", "--metric", "list"]) == 0
    listed = capsys.readouterr().out
    assert main(["fairness", "--list-metrics"]) == 0
    assert capsys.readouterr().out == listed
    help_text = next(a.help for a in _subparsers()["fairness"]._actions if a.dest == "list_metrics")
    assert "the same as '--metric list'" in help_text


# -- full-disk and other OS errors name their file ------------------------------------------------
def test_full_disk_error_names_the_output(small, tmp_path, capsys, monkeypatch):
    """A write that fails with ENOSPC (no file name of its own) is reported with the output's name."""
    from embdebias._atomic import atomic_file

    def save_full(emb, path, *args, **kwargs):
        with atomic_file(path) as tmp:
            tmp.write_bytes(b"partial")
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(io, "save", save_full)
    out = tmp_path / "out.bin"
    assert main(["convert", str(small), str(out)]) == 2
    assert _error(capsys).startswith(f"embdebias: error: {out}: No space left on device")
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_os_error_without_a_file_name_names_the_commands_files(small, tmp_path, capsys, monkeypatch):
    """An OSError that carries no file name (EIO deep in a reader) still says which files were in play."""
    def broken(*args, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(io, "convert", broken)
    out = tmp_path / "out.bin"
    assert main(["convert", str(small), str(out)]) == 2
    assert _error(capsys) == (f"embdebias: error: Input/output error (the command's files: {small}, {out})")


def test_a_damaged_text_file_is_not_called_binary(tmp_path):
    """Detection guesses word2vec-bin for a text row longer than its sniff: the bytes are text, so no note."""
    path = tmp_path / "v.txt"
    path.write_bytes(b"1 3\na 1 " + b"9" * 100_000 + b"x 3\n")
    assert io.detect_format(path) == "word2vec-bin"  # the guess the note must not repeat
    with pytest.raises(VectorFileError) as info:
        io.load(path, format="word2vec-text")
    assert "detected" not in str(info.value)


def test_a_text_file_read_as_binary_is_told_it_is_text(small, tmp_path):
    with pytest.raises(VectorFileError) as info:
        io.load(small, format="word2vec-bin")
    assert "the content is word2vec-text (detected)" in str(info.value)
