"""The command line starts light: building its parser, ``--version`` and every command's ``--help``
import none of the heavy libraries (each command imports them when it runs)."""

import inspect
import json
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


# Run in a fresh interpreter (its own sys.modules): build the parser and ask for --version, then
# for every command's --help, through main() as the embdebias script does.
_PROBE = """
import contextlib, io, json, sys
from embdebias.cli import COMMANDS, build_parser, main


def run(argv):
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        main(argv)
    assert out.getvalue(), argv
    return out.getvalue()


commands = list(build_parser()._subparsers._group_actions[0].choices)
assert len(commands) >= len(COMMANDS), commands  # a module may add several (share: report, card)
run(["--version"])
registry_at_start = "embdebias.metrics" in sys.modules
helps = {command: run([command, "--help"]) for command in commands}
run(["--help"])
print(json.dumps({"commands": commands, "registry_at_start": registry_at_start, "score_help": helps["score"],
                  "heavy": heavy_modules(sys.modules)}))
"""


def _probe() -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = f"HEAVY = {HEAVY!r}\n{inspect.getsource(heavy_modules)}\n{_PROBE}"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_parser_version_and_every_help_import_nothing_heavy():
    found = _probe()
    assert len(found["commands"]) >= 11
    heavy = found["heavy"]
    assert heavy == [], f"start-up imported {len(heavy)} heavy modules: {' '.join(heavy[:12])} ..."
    # the parser and --version do not even import the metric registry; score's --help lists it
    assert found["registry_at_start"] is False
    score_help = " ".join(found["score_help"].split())
    assert "metric names (weat wefat" in score_help and "occupation_bias" in score_help


def test_heavy_modules_finds_packages_and_their_submodules_only():
    names = ["sklearn", "sklearn.base", "scipy", "scipy.linalg", "scipy.stats._stats_py", "scipy.sparsetools",
             "pandasx", "numpy", "matplotlib.pyplot"]
    assert heavy_modules(names) == ["matplotlib.pyplot", "scipy.stats._stats_py", "sklearn", "sklearn.base"]
