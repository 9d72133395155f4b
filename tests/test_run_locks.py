"""Two `run`s into one directory never mix their results (issue 20, section 1): the lock on the
output directory, and the run identity its outputs carry (real processes: flock and SIGKILL)."""

import functools
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias.cli import main
from embdebias.io.native import read_native

from embdebias.pipeline import outputs as run_module

evaluation = importlib.import_module("embdebias.evaluate")  # the module (embdebias.evaluate is the function)

TESTS = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
HOST = socket.gethostname()
PARTIAL = run_module.PARTIAL

# The primitives (embdebias._lock, embdebias._provenance) are tested in test_locks.py.

# The CLI with a cheap evaluation, started once argv[3] exists; when it is about to rename a file to
# argv[4] it says so in argv[1] and waits for argv[2] to exist.
CHILD = """
import functools, os, pathlib, sys, time
import importlib; evaluation = importlib.import_module("embdebias.evaluate")
from embdebias.cli import main
evaluation.evaluate = functools.partial(evaluation.evaluate, bootstrap=0, suite=["direct_bias"])
paused, release, go = map(pathlib.Path, sys.argv[1:4])
pause_at = os.path.abspath(sys.argv[4])
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    if os.path.abspath(dst) == pause_at and not paused.exists():
        paused.write_text(str(os.getpid()))
        while not release.exists():
            time.sleep(0.02)
    return real_replace(src, dst, *args, **kwargs)
os.replace = replace
while not go.exists():
    time.sleep(0.01)
sys.exit(main(sys.argv[5:]))
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("run-locks") / "small.txt"
    write_word2vec_text(synthetic_embedding(n_filler=300), path)
    return path


@pytest.fixture
def cheap_eval(monkeypatch):
    monkeypatch.setattr(evaluation, "evaluate", functools.partial(evaluation.evaluate, bootstrap=0,
                                                                  suite=["direct_bias"]))


@pytest.fixture
def runs(tmp_path):
    """``start(name, lam, pause_at, go=None)``: a child `run` into ``tmp_path/out`` with ``--lambda lam``,
    pausing before it writes ``pause_at``; returns ``(process, paused file, release file)``."""
    procs = []

    def start(name: str, small: Path, lam: float, pause_at: Path, go: Path | None = None):
        paused, release = tmp_path / f"{name}.paused", tmp_path / f"{name}.release"
        if go is None:
            go = tmp_path / f"{name}.go"
            go.touch()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(paused), str(release), str(go), str(pause_at),
                                 "-q", "run", str(small), "--out-dir", str(tmp_path / "out"), "--lambda", str(lam)],
                                env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(proc)
        return proc, paused, release

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def wait_for(path: Path, proc, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run never reached its pause: {proc.communicate()[1][-2000:]}")
        time.sleep(0.02)


def assert_consistent(out: Path, lam: float) -> None:
    """report.json, evaluation.json and soft.embd all come from one run with ``lam``."""
    report = json.loads((out / "report.json").read_text())
    assert report["parameters"]["lambda"] == lam
    # the report's evaluation is evaluation.json plus the linear methods' certificates, from their own steps
    evaluation = dict(report["evaluation"])
    certificates = evaluation.pop("certificates", {})
    assert json.loads((out / "evaluation.json").read_text()) == evaluation
    state = json.loads((out / "run_state.json").read_text())["steps"]
    assert certificates and all(cert == state[name]["certificate"] for name, cert in certificates.items())
    assert state["soft"]["written"]["token"] == state["evaluate"]["written"]["token"]
    reference = out.parent / f"reference-{lam}"
    assert main(["-q", "run", str(report["input"]["source"]), "--out-dir", str(reference), "--lambda",
                 str(lam)]) == 0
    assert np.array_equal(np.asarray(read_native(out / "soft.embd").vectors),
                          np.asarray(read_native(reference / "soft.embd").vectors))


def hidden_leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob(".*") if p.name != run_module.MARKER]


def one_lock_error(err: str, holder_pid: int, out: Path) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"embdebias: error: {out}: being written by embdebias process {holder_pid} "
                               f"on {HOST} (run since "), err


def test_two_runs_started_together_one_wins_and_nothing_mixes(small, tmp_path, runs, cheap_eval):
    out, go = tmp_path / "out", tmp_path / "go"
    pause_at = out / PARTIAL / "evaluation.json"
    procs = {lam: runs(f"l{lam}", small, lam, pause_at, go) for lam in (0.2, 0.5)}
    go.touch()
    deadline = time.monotonic() + 120
    while not any(p.poll() is not None for p, *_ in procs.values()) and time.monotonic() < deadline:
        if all(paused.exists() for _, paused, _ in procs.values()):
            break  # both got as far as writing their evaluation: nothing stopped the second
        time.sleep(0.02)
    ended = [lam for lam, (p, *_) in procs.items() if p.poll() is not None]
    assert len(ended) == 1, "neither run was stopped by the other's lock"
    winner = 0.5 if ended[0] == 0.2 else 0.2
    loser_proc = procs[ended[0]][0]
    proc, paused, release = procs[winner]
    assert loser_proc.wait() == 2
    one_lock_error(loser_proc.stderr.read(), proc.pid, out)
    wait_for(paused, proc)
    release.touch()
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert_consistent(out, winner)
    assert hidden_leftovers(out) == []


def test_a_run_seconds_later_is_refused_while_the_first_completes(small, tmp_path, runs, cheap_eval, capsys):
    out = tmp_path / "out"
    first, paused, release = runs("a", small, 0.2, out / PARTIAL / "evaluation.json")
    wait_for(paused, first)
    time.sleep(1.0)
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 2
    one_lock_error(capsys.readouterr().err, first.pid, out)
    release.touch()
    assert first.wait(timeout=120) == 0, first.stderr.read()
    assert_consistent(out, 0.2)


def test_a_run_after_the_holder_was_killed_takes_over_with_a_warning(small, tmp_path, runs, cheap_eval, capsys):
    out = tmp_path / "out"
    first, paused, _ = runs("a", small, 0.2, out / PARTIAL / "evaluation.json")
    wait_for(paused, first)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    assert main(["run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    err = capsys.readouterr().err
    assert f"taking over the lock left by process {first.pid} on {HOST} (run since " in err
    assert_consistent(out, 0.5)
    assert hidden_leftovers(out) == []


def _rewrite_same_size_and_mtime(path: Path) -> None:
    """Another writer's content in ``path``: same size, same mtime (only the fingerprint can tell)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_staged_output_changed_by_another_process_is_never_promoted(small, tmp_path, runs, cheap_eval, capsys):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    first, paused, release = runs("a", small, 0.5, out / PARTIAL / "evaluation.json")
    wait_for(paused, first)
    _rewrite_same_size_and_mtime(out / PARTIAL / "soft.embd" / "vectors.npy")  # a writer that took no lock
    release.touch()
    assert first.wait(timeout=120) == 2
    err = first.stderr.read()
    assert "soft step's output is not the one this run wrote (soft.embd: vectors.npy changed content" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # nothing promoted


def test_a_committed_output_changed_later_is_recomputed_not_reused(small, tmp_path, cheap_eval, capsys):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    soft = np.asarray(read_native(out / "soft.embd").vectors).copy()
    _rewrite_same_size_and_mtime(out / "soft.embd" / "vectors.npy")
    assert main(["run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    err = capsys.readouterr().err
    assert "[soft] unchanged, reusing" not in err and "[hard] unchanged, reusing hard.embd" in err
    assert "[soft] not reused: soft.embd: vectors.npy changed content since it was written" in err
    assert np.array_equal(np.asarray(read_native(out / "soft.embd").vectors), soft)
