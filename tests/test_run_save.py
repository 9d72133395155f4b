"""`embdebias run --save` (issue 22): only the named methods' vectors are written, the others
are evaluated row by row as read, every method's fitted parameters are written, and
`embdebias debias --params` makes a method's vectors from them later."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias import io
from embdebias.cli import main
from embdebias.pipeline.options import RunOptions


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


@pytest.fixture(scope="module")
def both(small, tmp_path_factory):
    """The same run with every method's vectors written, and with only hard's."""
    base = tmp_path_factory.mktemp("save")
    for save in ("all", "hard"):
        assert main(["run", str(small), "--out-dir", str(base / save), "--methods", "hard,soft,inlp",
                     "--save", save, "-q"]) == 0
    return base / "all", base / "hard"


def _numbers(obj, path=""):
    """``{path: number}`` of every finite float in a report's evaluation."""
    if isinstance(obj, dict):
        return {k: v for key, value in obj.items() for k, v in _numbers(value, f"{path}/{key}").items()}
    if isinstance(obj, list):
        return {k: v for i, value in enumerate(obj) for k, v in _numbers(value, f"{path}[{i}]").items()}
    return {path: obj} if isinstance(obj, float) and math.isfinite(obj) else {}


def test_only_the_saved_methods_vectors_are_written(both):
    everything, hard_only = both
    names = {p.name for p in hard_only.iterdir()}
    assert {"hard.embd", "hard.params.npz", "soft.params.npz", "inlp.params.npz"} <= names
    assert not {"soft.embd", "inlp.embd"} & names
    assert {"hard.embd", "soft.embd", "inlp.embd", "inlp.params.npz"} <= {p.name for p in everything.iterdir()}
    report = (hard_only / "report.md").read_text(encoding="utf-8")
    assert "not written (--save): soft, inlp" in report
    meta = json.loads((hard_only / "report.json").read_text(encoding="utf-8"))
    assert meta["outputs"]["inlp"] is None and meta["outputs"]["hard"] == "hard.embd"
    assert meta["parameters"]["save"] == ["hard"]


def test_a_method_evaluated_row_by_row_scores_as_its_written_vectors(both):
    """Every number of the evaluation agrees to float32 rounding of the rows read."""
    everything, hard_only = both
    a = _numbers(json.loads((everything / "evaluation.json").read_text(encoding="utf-8")))
    b = _numbers(json.loads((hard_only / "evaluation.json").read_text(encoding="utf-8")))
    assert a.keys() == b.keys() and len(a) > 1000
    worst = max(abs(a[k] - b[k]) for k in a)
    assert worst < 1e-4


def test_the_parameters_make_the_vectors_later(both, small, tmp_path):
    everything, hard_only = both
    out = tmp_path / "inlp.embd"
    assert main(["debias", str(small), "--params", str(hard_only / "inlp.params.npz"), "--out", str(out),
                 "-q"]) == 0
    np.testing.assert_array_equal(np.asarray(io.load(out)), np.asarray(io.load(everything / "inlp.embd")))


def test_a_rerun_evaluates_an_unsaved_method_from_its_parameters(both, small, tmp_path, capsys):
    """Another evaluation (--tests) of the same methods refits nothing: the unsaved methods come
    back from their parameter files, and score as before."""
    _, hard_only = both
    rerun = tmp_path / "rerun"
    import shutil

    shutil.copytree(hard_only, rerun)
    capsys.readouterr()
    assert main(["run", str(small), "--out-dir", str(rerun), "--methods", "hard,soft,inlp", "--save", "hard",
                 "--tests", "direct_bias"]) == 0
    said = "".join(capsys.readouterr())
    assert "[inlp] unchanged, reusing inlp.params.npz" in said and "[evaluate] done" in said
    old = json.loads((hard_only / "evaluation.json").read_text(encoding="utf-8"))["details"]["inlp"]
    new = json.loads((rerun / "evaluation.json").read_text(encoding="utf-8"))["details"]["inlp"]
    assert new["direct_bias/professions"] == old["direct_bias/professions"]


@pytest.mark.parametrize("args, says", [
    (["--save", "inlp"], "save names inlp, which this run does not use"),
    (["--save", "all,hard"], "not a mix"),
    (["--save", "nosuch"], "nosuch"),
])
def test_a_bad_save_fails_before_anything_is_written(small, tmp_path, capsys, args, says):
    out = tmp_path / "out"
    try:
        status = main(["run", str(small), "--out-dir", str(out), *args])
    except SystemExit as exc:
        status = exc.code
    assert status == 2
    assert says in capsys.readouterr().err
    assert not out.exists()


def test_save_follows_the_methods_an_attribute_keeps():
    from embdebias.data.attributes import load_attribute

    race = load_attribute("race")
    o = RunOptions.create(methods="all", save="hsr,inlp")
    assert o.narrowed_to(race).save == ("inlp",)
    assert RunOptions.create(methods="all", save="hsr").narrowed_to(race).save == ("none",)
    assert not o.saved("hard") and o.saved("inlp") and RunOptions.create().saved("soft")


@pytest.mark.parametrize("args, says", [
    (["--lambda", "0.3"], "--lambda shapes a fit"),
    (["--method", "hard"], "parameters of method inlp, not of --method hard"),
])
def test_debias_params_refuses_what_does_not_apply(both, small, tmp_path, capsys, args, says):
    _, hard_only = both
    status = main(["debias", str(small), "--params", str(hard_only / "inlp.params.npz"), "--out",
                   str(tmp_path / "x.embd"), *args])
    assert status == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "x.embd").exists()


def test_debias_params_refuses_a_file_that_is_not_one(small, tmp_path, capsys):
    bad = tmp_path / "p.npz"
    bad.write_text("{}", encoding="utf-8")
    assert main(["debias", str(small), "--params", str(bad), "--out", str(tmp_path / "x.embd")]) == 2
    assert "not a parameter file" in capsys.readouterr().err


def test_debias_save_params_round_trip(small, tmp_path):
    params, first = tmp_path / "soft.npz", tmp_path / "a.embd"
    assert main(["debias", str(small), "--method", "soft", "--out", str(first),
                 "--save-params", str(params), "-q"]) == 0
    again = tmp_path / "b.embd"
    assert main(["debias", str(small), "--params", str(params), "--out", str(again), "-q"]) == 0
    np.testing.assert_array_equal(np.asarray(io.load(first)), np.asarray(io.load(again)))
