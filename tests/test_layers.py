"""The declared layers hold: no import cycle among the modules or the top-level units, no
private module of another package imported, and lint-imports' contracts.

The rule on private modules: a module whose name (or a package on its path) starts with
an underscore, such as ``embdebias.metrics._common`` or ``embdebias.io._common``, is
private to the package that contains it: only that package's modules (its subpackages
included) import it. The top-level helpers (``embdebias._atomic``, ``_files``, ``_rows``,
...) are private to ``embdebias`` itself, so every module of the package may use them;
code outside the package reaches the extension points through public modules
(``embdebias.debias.table``, ``embdebias.metrics.base``). The rule is checked on the
package's own modules; tests and benchmarks are white-box and may import the private
module they test or measure.
"""

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

@pytest.fixture(scope="module")
def parsed_package():
    """embdebias's modules, parsed once for the tests of this module (about a second)."""
    return import_cycles.parse_package(PACKAGE)


def test_no_import_cycle_among_modules_or_top_level_units(parsed_package):
    assert import_cycles.cycles(import_cycles.module_graph(PACKAGE, parsed_package)) == []
    assert import_cycles.cycles(import_cycles.unit_graph(PACKAGE, parsed_package)) == []


def test_the_cycle_counter_sees_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("def f():\n    from .. import low\n")
    (pkg / "low.py").write_text("def g():\n    from .sub import f\n")
    (pkg / "top.py").write_text("from . import low\n")
    assert import_cycles.cycles(import_cycles.unit_graph(pkg)) == [["low", "sub"]]
    assert import_cycles.cycles(import_cycles.module_graph(pkg)) == [["pkg.low", "pkg.sub"]]


def test_the_module_cycle_counter_follows_what_an_import_executes(tmp_path):
    """A circle inside one unit counts; ``from P import name`` is an edge to P's ``__init__``
    unless P.name is a module; a package importing its own submodules is no circle."""
    pkg = tmp_path / "pkg"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .io import read\n")
    (pkg / "io" / "__init__.py").write_text("from .text import read\nfrom . import common\n")
    (pkg / "io" / "text.py").write_text("from .common import split\ndef read():\n    pass\n")
    (pkg / "io" / "common.py").write_text("import os\ndef split():\n    try:\n        from .detect import sniff\n"
                                          "    except ImportError:\n        pass\n")
    (pkg / "io" / "detect.py").write_text("class D:\n    def m(self):\n        from pkg.io import common\n")
    (pkg / "io" / "other.py").write_text("def f():\n    from . import read\n")
    graph = import_cycles.module_graph(pkg)
    assert graph["pkg.io.other"] == {"pkg.io"} and graph["pkg.io"] == {"pkg.io.text", "pkg.io.common"}
    assert import_cycles.cycles(graph) == [["pkg.io.common", "pkg.io.detect"]]
    assert import_cycles.cycles(import_cycles.unit_graph(pkg)) == []
    assert import_cycles.main(["--package", str(pkg)]) == 1


def private_owner(module: str) -> str | None:
    """The package a private module belongs to (the part of its name before the first
    ``_name``; dunder names such as ``__main__`` are not private), or None for a public one."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], 1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def private_imports(parsed: dict) -> list[tuple[str, str]]:
    """``(importer, private module)`` of every import of a private module from outside its package."""
    modules = set(parsed)
    return sorted({(m, t) for m, p in parsed.items() for t in import_cycles.module_targets(p, m, modules)
                   if (owner := private_owner(t)) is not None and m != owner and not m.startswith(owner + ".")})


def test_no_module_imports_a_private_module_of_another_package(parsed_package):
    assert private_imports(parsed_package) == []


def test_the_private_import_check_can_fail(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "metrics" / "deep").mkdir(parents=True)
    for init in (pkg, pkg / "metrics", pkg / "metrics" / "deep"):
        (init / "__init__.py").write_text("")
    (pkg / "_helpers.py").write_text("")
    (pkg / "__main__.py").write_text("")
    (pkg / "metrics" / "_common.py").write_text("from .. import _helpers\n")
    (pkg / "metrics" / "weat.py").write_text("from ._common import x\nfrom pkg import __main__\n")
    (pkg / "metrics" / "deep" / "m.py").write_text("from .. import _common\n")
    (pkg / "evaluate.py").write_text("def f():\n    from .metrics._common import x\n    from ._helpers import y\n")
    assert private_imports(import_cycles.parse_package(pkg)) == [("pkg.evaluate", "pkg.metrics._common")]


def test_moved_names_keep_their_old_import_paths():
    """gender_direction moved beside BiasSubspace and looks_like_text into io/_common
    (issue 30): their users' imports still work."""
    from embdebias import subspace
    from embdebias.io import _common, detect, looks_like_text
    from embdebias.metrics import projection

    assert projection.gender_direction is subspace.gender_direction
    assert looks_like_text is _common.looks_like_text and detect.SNIFF_BYTES == _common.SNIFF_BYTES
    with pytest.raises(AttributeError):
        projection.no_such_name  # noqa: B018


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
