"""The command line starts light: building its parser, ``--version`` and every command's ``--help``
import none of the heavy libraries (each command imports them when it runs)."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What start-up must not import: the estimators' and the plots' libraries, and scipy's heavy parts.
HEAVY = ("sklearn", "matplotlib", "gensim", "pandas", "dask", "cvxpy", "scipy.optimize", "scipy.stats",
         "scipy.sparse", "torch")


def heavy_modules(names, heavy=HEAVY):
    """The names among ``names`` that are a package of ``heavy`` or inside one, sorted."""
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in heavy))


# Run in a fresh interpreter (its own sys.modules): build the parser, then ask for --version
# and every command's --help through main(), as the embdebias script does.
_PROBE = """
import contextlib, io, sys
from embdebias.cli import COMMANDS, build_parser, main

parser = build_parser()
commands = list(parser._subparsers._group_actions[0].choices)
assert len(commands) >= len(COMMANDS), commands  # a module may add several (share: report, card)
for argv in [["--version"], ["--help"]] + [[command, "--help"] for command in commands]:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        main(argv)
    assert out.getvalue(), argv
print(len(commands), *heavy_modules(sys.modules))
"""


def test_parser_version_and_every_help_import_nothing_heavy():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = f"HEAVY = {HEAVY!r}\n{inspect.getsource(heavy_modules)}\n{_PROBE}"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    commands, *heavy = run.stdout.split()
    assert int(commands) >= 11
    assert heavy == [], f"start-up imported {len(heavy)} heavy modules: {' '.join(heavy[:12])} ..."


def test_heavy_modules_finds_packages_and_their_submodules_only():
    names = ["sklearn", "sklearn.base", "scipy", "scipy.linalg", "scipy.stats._stats_py", "scipy.sparsetools",
             "pandasx", "numpy", "matplotlib.pyplot"]
    assert heavy_modules(names) == ["matplotlib.pyplot", "scipy.stats._stats_py", "sklearn", "sklearn.base"]
