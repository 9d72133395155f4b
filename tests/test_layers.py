"""The declared layers hold: no import cycle among the top-level units, and lint-imports' contracts."""

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "embdebias"
sys.path.insert(0, str(ROOT / "tools"))
import import_cycles  # noqa: E402

def test_no_import_cycle_among_top_level_units():
    assert import_cycles.cycles(import_cycles.unit_graph(PACKAGE)) == []


def test_the_cycle_counter_sees_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("def f():\n    from .. import low\n")
    (pkg / "low.py").write_text("def g():\n    from .sub import f\n")
    (pkg / "top.py").write_text("from . import low\n")
    assert import_cycles.cycles(import_cycles.unit_graph(pkg)) == [["low", "sub"]]


def test_embedding_and_vocab_import_no_io():
    for name in ("embedding.py", "vocab.py"):
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}
        assert not {m for m in imported if m == "io" or m.startswith("io.")}, name


def test_fairness_imports_only_numpy_scipy_and_the_standard_library():
    allowed = {"numpy", "scipy", *sys.stdlib_module_names}
    for path in (PACKAGE / "fairness").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert {a.name.split(".")[0] for a in node.names} <= allowed, path.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module.split(".")[0] in allowed, (path.name, node.module)
            elif isinstance(node, ast.ImportFrom) and node.level == 2:
                assert node.module in {"errors", "_files"}, (path.name, node.module)


def test_lint_imports_contracts_are_kept():
    if importlib.util.find_spec("importlinter") is None:
        pytest.skip("import-linter is not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                          "sys.exit(lint_imports_command())", "--no-cache"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:]


def test_embedding_save_works_without_importing_io_first(tmp_path):
    """The package provides Embedding.save's writer; io is imported when the first save needs it."""
    code = ("import sys, numpy as np\n"
            "from embdebias.embedding import Embedding\n"
            "assert 'embdebias.io' not in sys.modules\n"
            "e = Embedding(['a', 'b'], np.ones((2, 3), np.float32))\n"
            f"print(e.save({str(tmp_path / 'e.bin')!r}), 'embdebias.io' in sys.modules)\n"
            "from embdebias.vocab import Vocabulary\n"
            f"Vocabulary.write_native(['x', 'y'], {str(tmp_path)!r})\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["word2vec-bin", "True"]
    assert (tmp_path / "vocab.txt").read_text(encoding="utf-8") == "x\ny\n"
