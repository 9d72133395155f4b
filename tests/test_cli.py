"""The command line end to end on small generated files."""

import json
import subprocess
import sys

import numpy as np
import pytest

from embdebias import io
from embdebias.cli import main
from embdebias.subspace import BiasSubspace
from synthetic import synthetic_embedding, write_word2vec_text


@pytest.fixture(scope="module")
def w2v_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


@pytest.fixture
def bad_file(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("3 4\na 1 2 3 4\nb 1 2 3\nc 1 2 3 4\n", encoding="utf-8")
    return path


def test_debias_hard_writes_native(w2v_file, tmp_path, capsys):
    out = tmp_path / "hard.embd"
    assert main(["--quiet", "debias", str(w2v_file), "--method", "hard", "--out", str(out)]) == 0
    result = io.load(out)
    original = io.load(w2v_file)
    assert result.words.tolist() == original.words.tolist()
    sub = BiasSubspace().fit(original)
    proj = result[["nurse", "engineer", "teacher"]] @ sub.direction_
    assert np.abs(proj).max() < 1e-4
    assert np.allclose(result.norms(), 1, atol=1e-5)


def test_debias_soft_to_word2vec_binary(w2v_file, tmp_path):
    out = tmp_path / "soft.bin"
    assert main(["--quiet", "debias", str(w2v_file), "--method", "soft", "--lambda", "0.5",
                 "--out", str(out), "--format", "word2vec-bin"]) == 0
    assert io.detect_format(out) == "word2vec-bin"
    result = io.load(out)
    original = io.load(w2v_file).normalize()
    sub = BiasSubspace().fit(original)
    before = np.abs(original[["nurse", "engineer"]] @ sub.direction_).mean()
    after = np.abs(result[["nurse", "engineer"]] @ sub.direction_).mean()
    assert after < before
    assert [p.name for p in tmp_path.iterdir()] == ["soft.bin"]  # no temporary left


def test_malformed_input_exits_2_with_one_line(bad_file, tmp_path, capsys):
    out = tmp_path / "out.embd"
    code = main(["debias", str(bad_file), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("embdebias: error:")
    assert "bad.txt" in err[0] and "line 3" in err[0]
    assert not out.exists()


def test_malformed_input_no_traceback_in_subprocess(bad_file, tmp_path):
    res = subprocess.run([sys.executable, "-m", "embdebias", "info", str(bad_file)],
                         capture_output=True, text=True)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nope.bin")]) == 2
    assert "nope.bin" in capsys.readouterr().err


def test_refuses_to_overwrite_input(w2v_file, capsys):
    before = w2v_file.read_bytes()
    assert main(["--quiet", "convert", str(w2v_file), str(w2v_file), "--format", "glove"]) == 2
    assert w2v_file.read_bytes() == before


def test_convert_and_info(w2v_file, tmp_path, capsys):
    out = tmp_path / "small.glove"
    assert main(["--quiet", "convert", str(w2v_file), str(out), "--format", "glove", "--limit", "100"]) == 0
    assert io.detect_format(out) == "glove"
    assert len(io.load(out)) == 100
    capsys.readouterr()
    assert main(["info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["count"] == 100 and info["dim"] == 24 and info["format"] == "glove"


def test_expand_writes_list(w2v_file, tmp_path):
    out = tmp_path / "specific.txt"
    assert main(["--quiet", "expand", str(w2v_file), "--out", str(out), "--n-train", "2000"]) == 0
    words = out.read_text(encoding="utf-8").split()
    assert {"she", "he", "queen", "king"} <= set(words)


def test_expand_threshold_options(w2v_file, tmp_path, capsys):
    import warnings

    from embdebias.debias.expand import read_expanded

    outs = {}
    for name, extra in (("default", []), ("all", ["--max-rank", "all", "--target-precision", "0.5"]),
                        ("rank", ["--max-rank", "300", "--target-precision", "0.5"]),
                        ("paper", ["--target-precision", "none"])):
        outs[name] = tmp_path / f"{name}.txt"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["expand", str(w2v_file), "--out", str(outs[name]), "--n-train", "500"] + extra) == 0
        err = capsys.readouterr().err
        assert ("decision > 0" in err) == (name == "paper")
    words = {k: read_expanded(v) for k, v in outs.items()}
    emb = io.load(w2v_file)
    ranks = emb.words.rows(words["rank"])
    assert set(words["rank"]) <= set(words["all"]) and len(words["rank"]) < len(words["all"])
    assert all(r < 300 or w in words["default"] for w, r in zip(words["rank"], ranks))
    for bad in (["--target-precision", "0"], ["--target-precision", "x"], ["--max-rank", "0"],
                ["--max-rank", "some"]):
        with pytest.raises(SystemExit) as exc:
            main(["-q", "expand", str(w2v_file), "--out", str(tmp_path / "bad.txt")] + bad)
        assert exc.value.code == 2


def test_score_json_and_markdown(w2v_file, tmp_path, capsys):
    assert main(["--quiet", "score", str(w2v_file), "--json", "--tests", "weat", "bat", "direct_bias"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["embeddings"] == ["small.txt"]
    out = tmp_path / "report.md"
    assert main(["--quiet", "score", str(w2v_file), str(w2v_file), "--tests", "gender_career_family",
                 "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "gender_career_family" in text and "small.txt (2)" in text


def test_score_unknown_test_exits_2(w2v_file, capsys):
    assert main(["--quiet", "score", str(w2v_file), "--tests", "no_such_test"]) == 2
    assert "no_such_test" in capsys.readouterr().err


def test_plot_one_panel_per_input(w2v_file, tmp_path):
    hard = tmp_path / "hard.embd"
    assert main(["--quiet", "debias", str(w2v_file), "--out", str(hard)]) == 0
    fig = tmp_path / "occ.png"
    assert main(["--quiet", "plot", str(w2v_file), str(hard), "--out", str(fig), "--top", "5"]) == 0
    data = fig.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 5000

    from embdebias.report.figures import occupation_figure

    figure = occupation_figure({"a": io.load(w2v_file), "b": io.load(hard)}, top=5)
    assert len(figure.get_axes()) == 2


def test_quiet_before_or_after_the_command(w2v_file, capsys):
    assert main(["info", str(w2v_file), "--quiet"]) == 0
    assert main(["--quiet", "info", str(w2v_file)]) == 0
    from embdebias.cli import build_parser

    assert build_parser().parse_args(["info", "x", "-q"]).quiet is True
    assert build_parser().parse_args(["info", "x"]).quiet is False


def test_help_everywhere(capsys):
    for cmd in ([], ["debias"], ["convert"], ["info"], ["expand"], ["score"], ["plot"], ["run"]):
        with pytest.raises(SystemExit) as ei:
            main(cmd + ["--help"])
        assert ei.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_closed_pipe_is_not_an_error(w2v_file):
    # the JSON report is far larger than a pipe's buffer, so the writer meets the closed pipe
    cmd = f"{sys.executable} -m embdebias -q score {' '.join([str(w2v_file)] * 6)} --json --tests weat bat"
    full = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    assert len(full.stdout) > 1 << 17
    res = subprocess.run(cmd + " | head -1", shell=True, capture_output=True, text=True)
    assert res.stdout.strip() == "{" and "Traceback" not in res.stderr


def test_outputs_never_replace_inputs_or_user_directories(w2v_file, tmp_path, capsys):
    before = w2v_file.read_bytes()
    assert main(["-q", "score", str(w2v_file), "--tests", "direct_bias", "--out", str(w2v_file)]) == 2
    assert main(["-q", "expand", str(w2v_file), "--out", str(w2v_file), "--n-train", "500"]) == 2
    assert main(["-q", "debias", str(w2v_file), "--out", str(w2v_file), "--format", "word2vec-text"]) == 2
    assert w2v_file.read_bytes() == before
    user_dir = tmp_path / "mine"
    user_dir.mkdir()
    (user_dir / "notes.txt").write_text("keep")
    assert main(["-q", "convert", str(w2v_file), str(user_dir), "--format", "native"]) == 2
    assert (user_dir / "notes.txt").read_text() == "keep"


def _status(argv) -> int:
    """``main(argv)``'s exit status, whether returned or raised by argparse."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("argv", [
    ["debias", "{f}", "--out", "{d}/o.x", "--format", "bogus"],
    ["run", "{f}", "--out-dir", "{d}/run", "--format", "bogus"],
    ["run", "{f}", "--out-dir", "{d}/run", "--lambda", "-1"],
    ["run", "{f}", "--out-dir", "{d}/run", "--lambda", "nan"],
    ["run", "{f}", "--out-dir", "{d}/run", "--lambda", "abc"],
    ["run", "{f}", "--out-dir", "{d}/run", "--methods", "hard,nope"],
    ["run", "{f}", "--out-dir", "{d}/run", "--methods", "hard", "--lambda", "0.3"],  # soft's parameter
    ["debias", "{f}", "--out", "{d}/o.x", "--method", "soft", "--lambda", "-1"],
])
def test_bad_options_fail_before_any_work(w2v_file, tmp_path, capsys, argv):
    work = tmp_path / "work"
    work.mkdir()
    argv = [a.format(f=w2v_file, d=work) for a in argv]
    assert _status(["-q"] + argv) == 2
    assert list(work.iterdir()) == []
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["-1", "abc", "inf"])
def test_lambda_is_checked_by_one_rule_in_the_cli_and_the_api(tmp_path, capsys, value):
    import re

    from embdebias.debias import make_debiaser
    from embdebias.errors import EmbdebiasError
    from embdebias.pipeline import RunOptions, run_pipeline

    assert _status(["run", "--out-dir", str(tmp_path / "o"), "--lambda", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    # one dialect (issue 30): the estimator's _parameter_constraints, in scikit-learn's words
    sklearn_words = r"The 'lam' parameter of SoftDebias must be a float in the range \[0\.0, inf\)\. Got "
    if value == "abc":  # the command line cannot even read it as a number
        assert "argument --lambda: must be a number, got 'abc'" in err[0]
    else:
        assert re.search(sklearn_words, err[0]) and err[0].endswith("(--lambda)")
    api_value = float(value) if value != "abc" else value
    for call in (lambda: make_debiaser("soft", lam=api_value), lambda: RunOptions.create(lam=api_value),
                 lambda: run_pipeline(None, tmp_path / "o", lam=api_value)):
        with pytest.raises(EmbdebiasError, match=sklearn_words):
            call()
    assert not (tmp_path / "o").exists()


def test_a_parameter_of_another_method_is_one_error_naming_both():
    from embdebias.debias import make_debiaser
    from embdebias.errors import EmbdebiasError

    with pytest.raises(EmbdebiasError, match="lam does not apply to debias method 'hard'"):
        make_debiaser("hard", lam=0.3)
    with pytest.raises(EmbdebiasError, match="unknown debias method 'nope'; choose one of soft, hard"):
        make_debiaser("nope")


@pytest.mark.parametrize("argv", [["score", "--seed", "-1"], ["run", "--out-dir", "x", "--seed", "2**40"],
                                  ["plot", "--out", "x.png", "--top", "-3"], ["debias", "--out", "x", "--limit", "0"]])
def test_out_of_range_numbers_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as ei:
        main(argv)
    assert ei.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_plot_with_empty_word_list_exits_2(w2v_file, tmp_path, capsys):
    empty = tmp_path / "none.txt"
    empty.write_text("# nothing\n")
    assert main(["-q", "plot", str(w2v_file), "--out", str(tmp_path / "p.png"), "--words", str(empty)]) == 2
    assert "empty" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_score_bat_uses_published_sembias_by_default(w2v_file, capsys):
    assert main(["--quiet", "score", str(w2v_file), "--tests", "bat", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    scored = next(r for r in report["rows"] if r["test"] == "all" and r["statistic"] == "n_scored")
    assert list(scored["values"].values()) == [440]
    assert "Zhao et al. (2018), published, 440 lines" in report["data"]["bat"]
    assert main(["--quiet", "score", str(w2v_file), "--tests", "bat", "--json", "--lists", "curated"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "embdebias curated" in report["data"]["bat"]


@pytest.mark.parametrize("argv,message", [
    (["--method", "hard", "--expand"], "--expand applies to --method soft only"),
    (["--method", "hard", "--lambda", "0.5"], "--lambda applies to --method soft only"),
    (["--lambda", "0.5", "--seed", "3"], "--lambda and --seed apply to --method soft only"),
    (["--method", "soft", "--seeds", "x.txt"], "--seeds needs --expand"),
    (["--method", "soft", "--expand", "--specific", "x.txt"], "exclude each other"),
])
def test_debias_expansion_options_are_checked(w2v_file, tmp_path, capsys, argv, message):
    out = tmp_path / "o.embd"
    assert main(["debias", str(w2v_file), "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_debias_soft_expand_and_bad_list_file(w2v_file, tmp_path, capsys):
    out = tmp_path / "soft.embd"
    assert main(["debias", str(w2v_file), "--method", "soft", "--expand", "--out", str(out)]) == 0
    assert "expanded list" in capsys.readouterr().err
    bad = tmp_path / "specific.json"
    bad.write_text('["he",\n 7]', encoding="utf-8")
    assert main(["debias", str(w2v_file), "--out", str(tmp_path / "h.embd"), "--specific", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "specific.json:2: expected a word" in err[0]


def test_score_is_tolerant_unless_strict_and_keeps_warning_filters(w2v_file, tmp_path, capsys):
    import warnings

    from synthetic import synthetic_embedding

    emb = synthetic_embedding(n_filler=10)
    male = {"he", "him", "his", "man", "boy"}
    path = tmp_path / "few.txt"
    write_word2vec_text(emb.subset([w for w in emb.words if w not in male]), path)
    before = list(warnings.filters)
    # every unit fails: the report says so first, and the status is the "nothing scored" one
    assert main(["score", str(path), "--tests", "WEAT", "ECT"]) == 3
    out, err = capsys.readouterr()
    assert out.startswith("**Nothing could be scored**")
    assert "### Not scored" in out and "warning:" in err
    assert warnings.filters == before  # main leaves the caller's warning filters alone
    assert main(["score", str(path), "--tests", "weat", "--strict"]) == 2
    assert "error" in capsys.readouterr().err
    # --max-missing 1.0 scores what is left
    assert main(["--quiet", "score", str(path), "--tests", "weat", "--max-missing", "1"]) == 0
    assert "### Not scored" not in capsys.readouterr().out


# -- existing outputs and missing directories: one rule for every command that writes ------------------
WRITERS = [
    ["debias", "{f}", "--out", "{o}"],
    ["convert", "{f}", "{o}"],
    ["expand", "{f}", "--out", "{o}", "--n-train", "500"],
    ["score", "{f}", "--tests", "direct_bias", "--out", "{o}"],
    ["plot", "{f}", "--out", "{o}"],
]


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_an_existing_output_is_kept_without_force(w2v_file, tmp_path, capsys, argv):
    out = tmp_path / ("old.png" if argv[0] == "plot" else "old.txt")
    out.write_text("precious")
    assert main([a.format(f=w2v_file, o=out) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(out) in err[0] and "exists; use --force" in err[0]
    assert out.read_text() == "precious" and sorted(p.name for p in tmp_path.iterdir()) == [out.name]


@pytest.mark.parametrize("argv", WRITERS, ids=lambda a: a[0])
def test_only_one_missing_directory_level_is_created(w2v_file, tmp_path, capsys, argv):
    deep = tmp_path / "missing" / "deep" / ("x.png" if argv[0] == "plot" else "x.txt")
    assert main([a.format(f=w2v_file, o=deep) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "only one missing directory level is created" in err and str(tmp_path / "missing" / "deep") in err
    assert list(tmp_path.iterdir()) == []


def test_debias_replaces_only_with_force_and_says_when_it_creates_a_directory(w2v_file, tmp_path, capsys):
    out = tmp_path / "new" / "hard.txt"
    assert main(["debias", str(w2v_file), "--out", str(out), "--limit", "300"]) == 0
    assert f"created directory {tmp_path / 'new'}" in capsys.readouterr().err.splitlines()
    first = out.read_bytes()
    assert main(["-q", "debias", str(w2v_file), "--out", str(out), "--limit", "200"]) == 2
    assert out.read_bytes() == first
    assert main(["-q", "debias", str(w2v_file), "--out", str(out), "--limit", "200", "--force"]) == 0
    assert len(io.load(out)) == 200
    assert main(["-q", "convert", str(out), str(tmp_path / "new" / "c.embd")]) == 0
    assert main(["-q", "convert", str(out), str(tmp_path / "new" / "c.embd")]) == 2
    assert main(["-q", "convert", str(out), str(tmp_path / "new" / "c.embd"), "--force", "--limit", "5"]) == 0
    assert len(io.load(tmp_path / "new" / "c.embd")) == 5
    # --force never writes over an input or a directory embdebias did not write
    assert main(["-q", "convert", str(out), str(out), "--format", "glove", "--force"]) == 2
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    assert main(["-q", "convert", str(out), str(tmp_path / "mine"), "--force"]) == 2
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_run_out_dir_rules(w2v_file, tmp_path, capsys):
    from embdebias._atomic import prepare_output

    foreign = tmp_path / "results"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    assert main(["-q", "run", str(w2v_file), "--out-dir", str(foreign)]) == 2
    assert "not an earlier run's output" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    assert main(["-q", "run", str(w2v_file), "--out-dir", str(tmp_path / "a" / "b" / "c")]) == 2
    assert not (tmp_path / "a").exists()
    # what run accepts without --force: an earlier run's directory (it resumes), an empty one, a new one
    (tmp_path / "earlier").mkdir()
    (tmp_path / "earlier" / "run_state.json").write_text("{}")
    (tmp_path / "earlier" / "report.md").write_text("old")
    (tmp_path / "empty").mkdir()
    for ok in ("earlier", "empty", "new"):
        assert prepare_output(tmp_path / ok, resumable="run_state.json") == tmp_path / ok
    assert prepare_output(foreign, resumable="run_state.json", force=True) == foreign


def test_ctrl_c_while_parsing_arguments_is_one_line(monkeypatch, capsys):
    """The fuzzer's last traceback: SIGINT landing inside argparse."""
    from embdebias import cli

    class Parser:
        def parse_args(self, argv):
            raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", lambda: Parser())
    assert cli.main(["info", "x"]) == 130
    assert capsys.readouterr().err == "embdebias: interrupted\n"
