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


@pytest.fixture(scope="module")
def inlp_params(small, tmp_path_factory):
    """INLP's fitted parameters, written by ``debias --save-params`` (cheaper than ``both``'s runs)."""
    path = tmp_path_factory.mktemp("inlp") / "inlp.params.npz"
    assert main(["debias", str(small), "--method", "inlp", "--out", str(path.with_name("inlp.embd")),
                 "--save-params", str(path), "-q"]) == 0
    return path


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
def test_debias_params_refuses_what_does_not_apply(inlp_params, small, tmp_path, capsys, args, says):
    status = main(["debias", str(small), "--params", str(inlp_params), "--out",
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


def test_debias_params_applies_every_methods_file(tmp_path, capsys):
    """Each registered method's fitted parameters, saved and applied by the command line, give
    the vectors of the fitted estimator (and every line the command prints works without
    the fit's transient attributes)."""
    from debiaser_data import QUICK_FIT, gendered_embedding

    from embdebias.debias import DEBIASERS, make_debiaser

    source = tmp_path / "g.txt"
    write_word2vec_text(gendered_embedding(), source)
    emb = io.load(source)
    for name in DEBIASERS:
        est = make_debiaser(name, **QUICK_FIT.get(name, {})).fit(emb)
        params, out = est.save_params(tmp_path / f"{name}.npz"), tmp_path / f"{name}.embd"
        assert main(["debias", str(source), "--params", params, "--out", str(out), "-q"]) == 0, name
        np.testing.assert_array_equal(np.asarray(io.load(out)), np.asarray(est.transform(emb)), err_msg=name)
    assert "Traceback" not in capsys.readouterr().err


def test_debias_never_writes_over_its_parameter_files(small, tmp_path, capsys):
    params = tmp_path / "soft.npz"
    assert main(["debias", str(small), "--method", "soft", "--out", str(tmp_path / "a.embd"), "--save-params",
                 str(params), "-q"]) == 0
    kept = params.read_bytes()
    other = tmp_path / "other.npz"
    other.write_bytes(b"mine")
    refused = [
        (["--method", "soft", "--out", str(tmp_path / "b.bin"), "--save-params", str(tmp_path / "b.bin")], "same file"),
        (["--method", "soft", "--out", str(tmp_path / "c.embd"), "--save-params", str(tmp_path / "c.embd" / "p.npz")],
         "inside it"),
        (["--params", str(params), "--out", str(tmp_path / "d.embd"), "--save-params", str(params)], "same file"),
        (["--params", str(params), "--out", str(tmp_path / "e.embd"), "--save-params", str(other)], "exists"),
        (["--params", str(params), "--out", str(params), "--format", "word2vec-bin", "--force"], str(params)),
        (["--params", str(params), "--lists", "curated", "--out", str(tmp_path / "f.embd")], "--lists shapes a fit"),
    ]
    for args, says in refused:
        assert main(["debias", str(small), *args]) == 2, args
        assert says in capsys.readouterr().err, args
    assert params.read_bytes() == kept and other.read_bytes() == b"mine"
    assert not any((tmp_path / n).exists() for n in ("b.bin", "c.embd", "d.embd", "e.embd", "f.embd"))


def test_debias_file_refuses_a_fit_option_or_another_method_with_fitted_parameters(small, tmp_path):
    from embdebias.debias.api import debias_file
    from embdebias.errors import EmbdebiasError

    _, est = debias_file(small, method="soft")
    params = est.save_params(tmp_path / "soft.npz")
    with pytest.raises(EmbdebiasError, match="not of hard"):
        debias_file(small, method="hard", fitted=params)
    with pytest.raises(EmbdebiasError, match="lam: shape a fit"):
        debias_file(small, fitted=params, lam=0.9)
    result, loaded = debias_file(small, fitted=params)
    np.testing.assert_array_equal(np.asarray(result), np.asarray(est.transform(io.load(small))))


@pytest.mark.parametrize("force", [False, True])
def test_vectors_no_longer_saved_leave_the_directory(small, tmp_path, capsys, force):
    """A method saved by an earlier run into the same directory and not by this one: its old
    vectors go (they would contradict the report); the saved method's stay."""
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out), "--tests", "direct_bias", "-q"]) == 0
    assert (out / "soft.embd").is_dir()
    assert main(["run", str(small), "--out-dir", str(out), "--tests", "direct_bias", "--save", "hard",
                 "--lambda", "0.5", *(["--force"] if force else [])]) == 0
    assert "[soft] removed soft.embd" in "".join(capsys.readouterr())
    assert not (out / "soft.embd").exists() and (out / "hard.embd").is_dir() and (out / "soft.params.npz").is_file()
    state = json.loads((out / "run_state.json").read_text(encoding="utf-8"))["steps"]
    assert state["soft"]["outputs"] == ["soft.params.npz"]
