"""The six debiasers on the command line: --methods all, and bad input (one line, exit 2, nothing written)."""

import pytest
from debiaser_data import gendered_embedding
from synthetic import write_word2vec_text

from embdebias.cli import main
from embdebias.debias import DEBIASERS
from embdebias.debias.table import parse_methods


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "in.txt"
    write_word2vec_text(gendered_embedding(n_filler=600, dim=12), path)
    return path


def test_all_means_every_registered_method():
    assert parse_methods("all") == tuple(DEBIASERS)
    assert {"hsr", "inlp", "rlace", "double-hard", "ran", "oscar"} <= set(DEBIASERS)


@pytest.mark.parametrize("args, message", [
    (["--method", "rlace", "--rlace-rank", "12"], "rank must be below the dimension 12"),
    (["--method", "hsr", "--specific", "he"], "--specific does not apply to --method hsr"),
    (["--method", "hard", "--rlace-rank", "2"], "--rlace-rank applies to --method rlace only"),
    (["--method", "nope"], "invalid choice"),
])
def test_bad_input_one_line_exit_2_nothing_written(src, tmp_path, capsys, args, message):
    out = tmp_path / "out.embd"
    try:
        status = main(["-q", "debias", str(src), "--out", str(out), *args])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_each_new_method_debiases_from_the_command_line(src, tmp_path):
    for name in ("inlp", "oscar"):
        assert main(["-q", "debias", str(src), "--method", name, "--out", str(tmp_path / f"{name}.embd")]) == 0
        assert (tmp_path / f"{name}.embd").exists()
