"""A debiaser is one entry of DEBIASERS: a toy one, registered here only, runs through
``embdebias run --methods`` and gets its column, panel, output and resume key."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias import _validation, io
from embdebias.cli import main
from embdebias.debias import DEBIASERS, Debiaser, DebiaserSpec, Param, make_debiaser
from embdebias.debias._base import unit_rows
from embdebias.debias._params import INT, Array
from embdebias.embedding import as_embedding
from embdebias.subspace import resolve_subspace


class ToyDebias(Debiaser):
    """Removes ``strength`` times every word's projection on the bias subspace."""

    _suffix = "toy"
    _params_schema = {"subspace_": Array((None, "d"), subspace=True), "n_fitted_": INT}

    def __init__(self, strength: float = 1.0, *, subspace=None, definitional=None, n_components: int = 1,
                 gender_specific=None, lists: str = "published", chunk_rows: int = 4096):
        self.strength = strength
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.gender_specific = gender_specific
        self.lists = lists
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None):
        emb = as_embedding(embedding)
        self.subspace_ = resolve_subspace(self.subspace, emb, pairs=self.definitional,
                                          n_components=self.n_components, lists=self.lists)
        self.n_features_in_ = emb.dim
        self.n_fitted_ = len(emb)
        return self

    def _prepare(self, emb):
        basis = np.asarray(self.subspace_.components_, dtype=np.float32)

        def apply(rows, block, out):
            out[:] = block - self.strength * (block @ basis.T) @ basis
            unit_rows(out)

        return apply

    def run_info(self, embedding):
        return {"strength": self.strength, "rows": self.n_fitted_}


TOY = DebiaserSpec(name="toy", estimator=f"{__name__}:ToyDebias", description="a test's toy",
                   params=(Param("strength", "--toy-strength", _validation.FRACTION, 1.0,
                                 "toy: share of the bias component removed (default 1)"),))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(DEBIASERS, "toy", TOY)  # registered for this test only
    return TOY


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


def test_a_toy_debiaser_runs_through_the_pipeline(toy, small, tmp_path, monkeypatch, capsys):
    from embdebias.report import figures as plot

    panels = []
    draw = plot.plot_occupations
    monkeypatch.setattr(plot, "plot_occupations", lambda embeddings, *a, **k: (panels.append(list(embeddings)),
                                                                               draw(embeddings, *a, **k))[1])
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--methods", "toy"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["evaluation"]["embeddings"] == ["original", "toy"]  # its column
    assert panels == [["original", "toy"]]                              # its panel
    assert report["outputs"]["toy"] == "toy.embd" and not (out / "hard.embd").exists()  # its output
    state = json.loads((out / "run_state.json").read_text(encoding="utf-8"))
    assert set(state["steps"]) == {"toy", "evaluate", "plot"}        # its resume key
    assert report["toy"] == {"strength": 1.0, "rows": len(io.load(small))}
    assert report["parameters"]["methods"] == ["toy"] and report["parameters"]["strength"] == 1.0

    # what it wrote: no word keeps a component on the bias direction
    result = io.load(out / "toy.embd")
    direction = np.asarray(resolve_subspace(None, io.load(small), n_components=1).components_[0])
    assert np.abs(np.asarray(result.vectors) @ direction).max() < 1e-5

    md = (out / "report.md").read_text(encoding="utf-8")
    assert "columns: original (as loaded), toy-debiased. The debiased embedding is unit-normalized" in md
    assert "- toy debias: strength = 1, rows = " in md
    assert "--methods toy" in md and "--toy-strength 1.0" in md and "--lambda" not in md

    # a re-run reuses it; a changed parameter of its own recomputes it
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--methods", "toy"]) == 0
    again = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert again["reused_steps"] == ["toy", "evaluate", "plot"]
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--methods", "toy", "--toy-strength", "0.5"]) == 0
    third = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert third["reused_steps"] == [] and third["toy"]["strength"] == 0.5
    capsys.readouterr()


def test_a_toy_debiaser_beside_the_others_and_in_the_api(toy, small, tmp_path):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--methods", "toy,hard", "--limit", "2400"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["evaluation"]["embeddings"] == ["original", "hard", "toy"]  # the table's order
    assert {c["embedding"] for c in report["evaluation"]["comparisons"]} == {"hard", "toy"}
    assert "soft_solve" not in report and report["hard"]["equalize_pairs"] > 0
    assert "Both debiased embeddings are" in (out / "report.md").read_text(encoding="utf-8")

    assert isinstance(make_debiaser("toy", strength=0.5), ToyDebias)
    assert main(["-q", "debias", str(small), "--method", "toy", "--out", str(tmp_path / "t.embd"),
                 "--toy-strength", "0.25", "--limit", "2400"]) == 0
    assert len(io.load(tmp_path / "t.embd")) == 2400


def test_toy_parameters_are_checked_by_its_rule(toy, small, tmp_path, capsys):
    from embdebias.errors import EmbdebiasError
    from embdebias.pipeline import run_pipeline

    assert main(["run", str(small), "--out-dir", str(tmp_path / "o"), "--methods", "toy", "--toy-strength", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "strength must be a number in [0, 1], got 2.0 (--toy-strength)" in err[0]
    with pytest.raises(EmbdebiasError, match=r"^strength must be a number in \[0, 1\], got 2"):
        run_pipeline(small, tmp_path / "o", methods="toy", strength=2)
    with pytest.raises(EmbdebiasError, match="strength does not apply to debias method 'hard'"):
        make_debiaser("hard", strength=0.5)
    assert not (tmp_path / "o").exists()


def test_the_table_drives_the_default_run_and_the_cli_choices():
    from embdebias.cli import build_parser
    from embdebias.debias.table import DEFAULT_METHODS, column_order, run_order
    from embdebias.pipeline import planned_outputs

    assert list(DEBIASERS)[:2] == ["soft", "hard"] and DEFAULT_METHODS == ("hard", "soft")
    assert column_order(DEFAULT_METHODS) == ["soft", "hard"]  # the report's columns
    assert run_order(column_order(DEFAULT_METHODS)) == ["hard", "soft"]  # soft's moments ride on hard's pass
    assert {"hard.embd", "soft.embd"} <= set(planned_outputs("native"))
    debias = build_parser()._subparsers._group_actions[0].choices["debias"]
    method = next(a for a in debias._actions if a.dest == "method")
    assert list(method.choices) == list(DEBIASERS)


def test_soft_takes_its_moments_from_hards_pass(small, tmp_path, monkeypatch):
    from embdebias.debias.soft import SoftDebias

    grams = []
    fit = SoftDebias.fit
    monkeypatch.setattr(SoftDebias, "fit", lambda self, emb, y=None, **kw: (grams.append(kw.get("gram")),
                                                                            fit(self, emb, y, **kw))[1])
    assert main(["-q", "run", str(small), "--out-dir", str(tmp_path / "both"), "--limit", "2400"]) == 0
    assert len(grams) == 1 and grams[0].shape == (24, 24)  # accumulated during hard debias's pass
    assert main(["-q", "run", str(small), "--out-dir", str(tmp_path / "soft"), "--limit", "2400",
                 "--methods", "soft"]) == 0
    assert len(grams) == 2 and grams[1] is None  # alone, soft reads the rows itself
    both = io.load(tmp_path / "both" / "soft.embd").vectors
    np.testing.assert_allclose(both, io.load(tmp_path / "soft" / "soft.embd").vectors, atol=1e-6)


# -- every method of the table is exported and documented, and nothing else is -------------------
ROOT = Path(__file__).resolve().parents[1]


def _class_names() -> list[str]:
    """The estimator class names of the table, in its order."""
    return [spec.estimator.rpartition(":")[2] for spec in DEBIASERS.values()]


def test_every_debiaser_is_importable_from_embdebias():
    import embdebias
    import embdebias.debias as debias

    for spec in DEBIASERS.values():
        name = spec.estimator.rpartition(":")[2]
        assert name in embdebias.__all__ and name in debias.__all__, name
        assert getattr(embdebias, name) is getattr(debias, name) is spec.estimator_class()
    exported = {n for n in debias.__all__ if n[0].isupper() and isinstance(getattr(debias, n), type)
                and issubclass(getattr(debias, n), Debiaser) and n != "Debiaser"}
    assert exported == set(_class_names())


def test_import_embdebias_and_the_table_stay_light():
    """The debiasers are exported lazily: importing the package or reading the table loads no scikit-learn."""
    code = ("import sys, embdebias, embdebias.debias as d\n"
            "names = embdebias.__all__, d.DEBIASERS, d.__all__\n"
            "print(sorted(m for m in ('sklearn', 'scipy', 'cvxpy') if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_the_api_reference_lists_every_debiaser_of_the_table_once():
    text = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    top, debiasers = text.split("\nDebiasers\n---------\n")
    debiasers = debiasers.split("\n.. currentmodule:: embdebias.debias\n")[0]
    entries = re.findall(r"^   (\S+)$", debiasers, flags=re.MULTILINE)
    assert [e for e in entries if not e.startswith(":")] == _class_names()
    assert not set(re.findall(r"^   (\S+)$", top, flags=re.MULTILINE)) & set(_class_names())


def test_the_readme_names_every_method_of_the_table():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"`embdebias debias INPUT --method NAME.*\| one debiased embedding \(([^)]*)\)", text)
    assert listed is not None, "the README's debias line lost its method list"
    assert sorted(listed.group(1).split(", ")) == sorted(DEBIASERS)
    numbers = {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    assert f"{numbers.get(len(DEBIASERS), len(DEBIASERS))} debiasers" in " ".join(text.split())


def test_the_choosing_page_has_one_row_and_one_page_per_method():
    pages = ROOT / "docs" / "user_guide" / "debiasers"
    rows = re.findall(r"^\| \{doc\}`(\w+)` \|", (pages / "choosing.md").read_text(encoding="utf-8"), flags=re.MULTILINE)
    modules = [spec.estimator.partition(":")[0].rpartition(".")[2] for spec in DEBIASERS.values()]
    assert sorted(rows) == sorted(modules) and len(rows) == len(set(rows))
    assert all((pages / f"{m}.md").is_file() for m in modules)
