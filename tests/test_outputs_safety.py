"""Outputs never destroy a user's files: `run`'s output plan, its own directory, outputs that
appear together, stale temporaries, SIGTERM and SIGKILL, damaged state, special word-list files."""

import functools
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias import _atomic, io, wordlists
from embdebias.cli import main
from embdebias.errors import EmbdebiasError, WordListError
from embdebias.pipeline import state as run_module

evaluation = importlib.import_module("embdebias.evaluate")  # the module (embdebias.evaluate is the function)

TESTS = Path(__file__).resolve().parent
CHEAP = {"bootstrap": 0, "suite": ["direct_bias"]}  # the run's shape, not its statistics, is tested here


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("safety") / "small.txt"
    write_word2vec_text(synthetic_embedding(n_filler=300), path)
    return path


@pytest.fixture
def cheap_eval(monkeypatch):
    monkeypatch.setattr(evaluation, "evaluate", functools.partial(evaluation.evaluate, **CHEAP))


def snapshot(directory: Path) -> dict:
    """Every file under ``directory`` (relative path -> bytes); directories as None."""
    return {str(p.relative_to(directory)): (None if p.is_dir() else p.read_bytes())
            for p in sorted(directory.rglob("*"))}


def hidden_leftovers(directory: Path) -> list[Path]:
    """Hidden entries anywhere under ``directory`` other than the run's marker."""
    return [p for p in directory.rglob(".*") if p.name != run_module.MARKER]


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("embdebias: error: "), err
    return err[0]


# --------------------------------------------------------------------------- the output plan
def test_foreign_directory_is_refused_and_untouched(small, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my notes\n")
    (mine / "occupations.png").write_bytes(b"\x89PNG mine")
    (mine / "data.csv").write_text("a,b\n")
    before = snapshot(mine)
    assert main(["run", str(small), "--out-dir", str(mine)]) == 2
    assert "not an earlier run's output" in one_error_line(capsys)
    assert snapshot(mine) == before


def test_force_into_foreign_directory_replaces_only_run_outputs(small, tmp_path, cheap_eval, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my notes\n")
    (mine / "data.csv").write_text("a,b\n")
    (mine / "sub").mkdir()
    (mine / "sub" / "x.txt").write_text("x")
    assert main(["run", str(small), "--out-dir", str(mine), "--force"]) == 0
    assert "its report.md will be replaced" in capsys.readouterr().err
    assert (mine / "data.csv").read_text() == "a,b\n" and (mine / "sub" / "x.txt").read_text() == "x"
    assert (mine / "report.md").read_text().startswith("# embdebias report")
    assert (mine / run_module.MARKER).is_file() and not (mine / run_module.PARTIAL).exists()
    assert hidden_leftovers(mine) == []


@pytest.mark.parametrize("clash", ["soft_is_a_file", "report_is_a_directory", "state_is_a_directory",
                                   "hard_is_a_users_directory", "hard_holds_a_users_file", "partial_is_a_file"])
def test_every_planned_output_is_checked_before_any_work(small, tmp_path, clash, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / run_module.MARKER).write_text("{}")
    if clash == "soft_is_a_file":
        (out / "soft.embd").write_text("mine")
    elif clash == "report_is_a_directory":
        (out / "report.md").mkdir()
    elif clash == "state_is_a_directory":
        (out / "run_state.json").mkdir()
    elif clash == "hard_is_a_users_directory":
        (out / "hard.embd").mkdir()
        (out / "hard.embd" / "notes.txt").write_text("mine")
    elif clash == "hard_holds_a_users_file":
        io.save(io.load(small, limit=20), out / "hard.embd")
        (out / "hard.embd" / "notes.txt").write_text("mine")
    else:
        (out / run_module.PARTIAL).write_text("mine")
    before = snapshot(out)
    assert main(["run", str(small), "--out-dir", str(out), "--force"]) == 2  # not even with --force
    one_error_line(capsys)
    assert snapshot(out) == before


def test_outputs_may_not_clash_with_any_input(small, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / run_module.MARKER).write_text("{}")
    lists = out / "report.md"  # a list file where the report goes
    lists.write_text("he\nshe\n")
    assert main(["run", str(small), "--out-dir", str(out), "--specific", str(lists)]) == 2
    assert "refusing to write over the input" in one_error_line(capsys)
    assert lists.read_text() == "he\nshe\n"
    inside = out / "soft.bin"  # the input itself is a planned output
    inside.write_bytes(small.read_bytes())
    assert main(["run", str(inside), "--out-dir", str(out), "--format", "word2vec-bin"]) == 2
    assert "refusing to write over the input" in one_error_line(capsys)
    assert inside.read_bytes() == small.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == sorted([run_module.MARKER, "report.md", "soft.bin"])


def test_convert_refuses_a_companion_file_of_its_input(small, tmp_path, capsys):
    kv = tmp_path / "x.kv"
    io.save(io.load(small, limit=50), kv, format="gensim-kv")
    companion = tmp_path / "x.kv.vectors.npy"
    before = companion.read_bytes()
    for force in ([], ["--force"]):
        assert main(["convert", str(kv), str(companion), "--format", "word2vec-bin", *force]) == 2
        assert "companion file of the input" in one_error_line(capsys)
    assert companion.read_bytes() == before
    assert len(io.load(kv)) == 50


def test_a_writers_companion_file_is_checked_like_its_output(small, tmp_path, capsys):
    companion = tmp_path / "y.kv.vectors.npy"
    companion.write_bytes(b"a user's array")
    assert main(["convert", str(small), str(tmp_path / "y.kv")]) == 2
    assert "y.kv.vectors.npy: exists" in one_error_line(capsys)
    assert companion.read_bytes() == b"a user's array" and not (tmp_path / "y.kv").exists()
    assert main(["-q", "convert", str(small), str(tmp_path / "y.kv"), "--force"]) == 0
    assert len(io.load(tmp_path / "y.kv")) == len(io.load(small))


# --------------------------------------------------------------------------- outputs appear together
def test_failed_run_leaves_previous_outputs_and_resumes(small, tmp_path, cheap_eval, monkeypatch, capsys):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out)]) == 0
    complete = snapshot(out)

    def failing(*args, **kwargs):
        raise EmbdebiasError("evaluation failed on purpose")

    monkeypatch.setattr(evaluation, "evaluate", failing)
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 2
    one_error_line(capsys)
    partial = out / run_module.PARTIAL
    # the complete outputs are untouched, byte for byte; the new soft debias waits in PARTIAL
    assert {k: v for k, v in snapshot(out).items() if not k.startswith(run_module.PARTIAL)} == complete
    assert (partial / "soft.embd").is_dir() and not (partial / "report.md").exists()
    staged = json.loads((partial / "run_state.json").read_text())["steps"]
    assert list(staged) == ["soft"]
    assert hidden_leftovers(out) == []

    monkeypatch.undo()  # the real evaluate again, made cheap as before
    monkeypatch.setattr(evaluation, "evaluate", functools.partial(evaluation.evaluate, **CHEAP))
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["parameters"]["lambda"] == 0.5
    assert report["reused_steps"] == ["hard", "soft"]  # soft from PARTIAL, hard from the earlier run
    state = json.loads((out / "run_state.json").read_text())["steps"]
    assert state["soft"]["key"] == staged["soft"]["key"]
    assert not partial.exists() and hidden_leftovers(out) == []


class Killed(BaseException):
    """Stands for SIGKILL: nothing catches it and nothing runs after it."""


def test_run_killed_while_moving_outputs_is_finished_by_the_next_run(small, tmp_path, cheap_eval, monkeypatch):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out)]) == 0
    moves = []

    def replace_then_die(src, dst):
        if moves:
            raise Killed()
        moves.append(dst)
        os.replace(src, dst)

    class DyingOs:
        replace = staticmethod(replace_then_die)

        def __getattr__(self, name):
            return getattr(os, name)

    monkeypatch.setattr(run_module, "os", DyingOs())
    with pytest.raises(Killed):
        main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"])
    assert len(moves) == 1 and (out / run_module.PARTIAL / "report.md").is_file()
    monkeypatch.setattr(run_module, "os", os)
    # the next run (here with other options) first finishes the moves, then reuses what they brought
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["parameters"]["lambda"] == 0.5
    assert report["reused_steps"] == ["hard", "soft", "evaluate", "plot"]
    assert not (out / run_module.PARTIAL).exists()


# --------------------------------------------------------------------------- damaged run_state.json
@pytest.mark.parametrize("content", [
    b"not json {", b"[1, 2, 3]", b'{"steps": []}', b"\xff\xfe\x00garbage", b"[" * 200_000,
    b'{"steps": {"hard": {"key": 3, "outputs": ["hard.embd"], "seconds": 1}}}',
    b'{"steps": {"hard": {"key": "k", "outputs": ["../../elsewhere"], "seconds": 1}}}',
    b'{"steps": {"hard": {"key": "k", "outputs": ["hard.embd"], "seconds": "slow"}}}',
    b'{"steps": {"hard": {"key": "k", "outputs": ["hard.embd"], "seconds": NaN}}}',
    b'{"steps": {"bogus": {"key": "k", "outputs": ["hard.embd"], "seconds": 1}}}',
    b'{"steps": {}, "commit": ["report.md", "../../etc/passwd"]}',
], ids=lambda c: c[:20].decode("latin-1"))
def test_damaged_state_is_ignored_with_a_warning(tmp_path, content):
    path = tmp_path / "run_state.json"
    path.write_bytes(content)
    with pytest.warns(UserWarning, match="damaged, ignored") as record:
        assert run_module.read_state(path) == ({}, None)
    assert len(str(record[0].message)) < 400


def test_huge_state_is_not_read(tmp_path):
    path = tmp_path / "run_state.json"
    with open(path, "wb") as fh:
        fh.truncate(run_module.MAX_STATE_BYTES + 1)
    with pytest.warns(UserWarning, match="far more than a run writes"):
        assert run_module.read_state(path) == ({}, None)


def test_run_with_a_damaged_state_recomputes(small, tmp_path, cheap_eval, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "run_state.json").write_text('{"steps": {"hard": [1, 2]}}')
    (out / "report.md").write_text("an earlier run's report")
    assert main(["run", str(small), "--out-dir", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "damaged" in line][0].startswith("warning: ")
    state = json.loads((out / "run_state.json").read_text())
    assert set(state["steps"]) == {"hard", "soft", "evaluate", "plot"}


# --------------------------------------------------------------------------- stale temporaries
def test_clean_stale_temporaries_removes_only_dead_processes_own_names(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    stale = [f".report.md.{dead}.abcd_123.tmp", f".x.kv.{dead}.qwertyui.tmp.vectors.npy",
             f".hard.embd.{dead}.zzzzzzzz.old"]
    stale_dirs = [f".hard.embd.{dead}.a1b2c3d4.tmp", f".soft.bin.{dead}.aaaa0000.work"]
    kept = [f".report.md.{alive}.abcdefgh.tmp", f".notes.{dead}.tmp", f"report.md.{dead}.abcdefgh.tmp",
            ".report.md.abcdefgh.tmp", f".report.md.{dead}.ABCDEFGH.tmp", "notes.txt"]
    for name in stale + kept:
        (tmp_path / name).write_text("x")
    for name in stale_dirs:
        (tmp_path / name).mkdir()
        (tmp_path / name / "vectors.npy").write_text("x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    link = tmp_path / f".link.{dead}.abcdefgh.tmp"
    link.symlink_to(elsewhere)
    reused = tmp_path / f".old.{alive}.abcdefgh.tmp"  # our pid now, but written long before we started
    reused.write_text("x")
    os.utime(reused, (time.time() - 10 * 86400,) * 2)
    lines = []
    removed = _atomic.clean_stale_temporaries(tmp_path, lines.append)
    assert sorted(p.name for p in removed) == sorted(stale + stale_dirs + [link.name, reused.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept + ["elsewhere"])
    assert (elsewhere / "keep.txt").read_text() == "keep"  # a link is removed, never followed
    assert len(lines) == len(removed) and all("no longer running" in line for line in lines)


def test_temporaries_carry_the_pid(tmp_path):
    with _atomic.atomic_file(tmp_path / "a.txt") as tmp:
        assert _atomic._TEMP_NAME.fullmatch(tmp.name)["pid"] == str(os.getpid())
        tmp.write_text("a")
    with _atomic.atomic_dir(tmp_path / "d.embd") as tmp:
        assert _atomic._TEMP_NAME.fullmatch(tmp.name)["pid"] == str(os.getpid())
    work = _atomic.make_temp_dir(tmp_path / "b.bin", "work")
    assert work.name.startswith(f".b.bin.{os.getpid()}.") and work.name.endswith(".work")


def test_convert_cleans_stale_temporaries_where_it_writes(small, tmp_path, capsys):
    dead = dead_pid()
    leftover = tmp_path / f".y.bin.{dead}.abcdefgh.tmp"
    leftover.write_bytes(b"\0" * 1000)
    mine = tmp_path / ".y.bin.keep"
    mine.write_text("mine")
    assert main(["convert", str(small), str(tmp_path / "y.bin")]) == 0
    assert "no longer running" in capsys.readouterr().err
    assert not leftover.exists() and mine.read_text() == "mine"


# --------------------------------------------------------------------------- signals (real processes)
WRAPPER = """
import functools, os, pathlib, signal, sys, time
# A shell's background job starts with SIGINT ignored, and Python keeps an ignored SIGINT:
# restore the default so the test sees what an interactive user's Ctrl-C does.
signal.signal(signal.SIGINT, signal.default_int_handler)
import importlib; evaluation = importlib.import_module("embdebias.evaluate")
from embdebias.cli import main
evaluation.evaluate = functools.partial(evaluation.evaluate, bootstrap=0, suite=["direct_bias"])
marker, pause_at = pathlib.Path(sys.argv[1]), os.path.abspath(sys.argv[2])
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    # a slow write: wait, while the temporary exists, before renaming it to pause_at
    if os.path.abspath(dst) == pause_at and not marker.exists():
        marker.write_text(str(src))
        time.sleep(float(os.environ.get("PAUSE_SECONDS", "600")))
    return real_replace(src, dst, *args, **kwargs)
os.replace = replace
sys.exit(main(sys.argv[3:]))
"""


@pytest.fixture
def start_paused(tmp_path):
    """``start(pause_at, args)``: the CLI in a process that pauses before writing ``pause_at``,
    returned once paused (killed at teardown if still running)."""
    procs = []

    def start(pause_at: Path, args: list[str], seconds: float = 600):
        procs.append(_start_paused(tmp_path, pause_at, args, seconds))
        return procs[-1]

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _start_paused(tmp_path, pause_at: Path, args: list[str], seconds: float):
    marker = tmp_path / "paused"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")]),
           "PAUSE_SECONDS": str(seconds)}
    proc = subprocess.Popen([sys.executable, "-c", WRAPPER, str(marker), str(pause_at), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    deadline = time.monotonic() + 300
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if not marker.exists():
        proc.kill()
        pytest.fail(f"the command never reached {pause_at.name}: {proc.communicate()[1][-2000:]}")
    return proc


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_run_leaves_no_temporaries(small, tmp_path, start_paused, sig, status):
    out = tmp_path / "out"
    target = out / run_module.PARTIAL / "hard.bin"  # a .work directory and a .tmp file exist meanwhile
    proc = start_paused(target, ["-q", "run", str(small), "--out-dir", str(out),
                                           "--format", "word2vec-bin"])
    assert sorted(p.suffix for p in target.parent.glob(".*")) == [".tmp", ".work"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status
    stopped = "terminated" if sig == signal.SIGTERM else "interrupted"
    assert err.strip().splitlines() == [f"embdebias: {stopped}; run the same command again to resume from "
                                        f"{out / run_module.PARTIAL}"]
    assert hidden_leftovers(out) == []
    assert not (out / "report.md").exists() and not target.exists()


def test_sigterm_mid_convert_leaves_nothing(small, tmp_path, start_paused):
    target = tmp_path / "out.glove.txt"
    proc = start_paused(target, ["-q", "convert", str(small), str(target)])
    assert len(list(tmp_path.glob(".out.glove.txt.*.tmp"))) == 1
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "Traceback" not in err
    assert not target.exists() and list(tmp_path.glob(".*")) == []


def test_sigterm_waits_while_the_outputs_are_moved_in(small, tmp_path, start_paused, cheap_eval):
    out = tmp_path / "out"
    assert main(["-q", "run", str(small), "--out-dir", str(out)]) == 0
    old_key = json.loads((out / "run_state.json").read_text())["steps"]["soft"]["key"]
    proc = start_paused(out / "report.md", ["-q", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"],
                        seconds=3)
    proc.send_signal(signal.SIGTERM)  # arrives during the final moves: they are finished first
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143 and "Traceback" not in err
    assert json.loads((out / "report.json").read_text())["parameters"]["lambda"] == 0.5
    assert json.loads((out / "run_state.json").read_text())["steps"]["soft"]["key"] != old_key
    assert not (out / run_module.PARTIAL).exists() and hidden_leftovers(out) == []


def test_sigkill_leftovers_are_removed_by_the_next_run(small, tmp_path, start_paused, cheap_eval, capsys):
    out = tmp_path / "out"
    target = out / run_module.PARTIAL / "hard.bin"
    proc = start_paused(target, ["-q", "run", str(small), "--out-dir", str(out),
                                           "--format", "word2vec-bin"])
    proc.kill()
    proc.communicate(timeout=120)
    leftovers = hidden_leftovers(out)
    temporaries = [p for p in leftovers if not p.name.endswith(".embdebias-lock")]
    # two temporaries named after the killed process, and the lock file it held
    assert len(temporaries) == 2 and all(f".{proc.pid}." in p.name for p in temporaries)
    assert [p.name for p in leftovers if p not in temporaries] == [".embdebias-lock"]
    assert main(["run", str(small), "--out-dir", str(out), "--format", "word2vec-bin"]) == 0
    err = capsys.readouterr().err
    # the two temporaries removed, and the dead holder's lock taken over, each named once
    assert err.count("no longer running") == 3 and "taking over the lock left by process" in err, err
    assert hidden_leftovers(out) == [] and (out / "report.md").is_file()


# --------------------------------------------------------------------------- special word-list files
@pytest.fixture
def alarm():
    """Fail instead of hanging: a blocking open would otherwise stop the test run."""
    def timeout(signum, frame):
        raise TimeoutError("blocked on a special file")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_special_files_are_refused_as_word_lists(small, tmp_path, kind, alarm, capsys):
    path = {"fifo": tmp_path / "words", "device": Path("/dev/zero"), "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    with pytest.raises(WordListError, match="not a regular file"):
        wordlists.read_bytes(path)
    for option in ("--definitional", "--equalize", "--specific", "--sembias"):
        assert main(["run", str(small), "--out-dir", str(tmp_path / "out"), option, str(path)]) == 2
        assert "not a regular file" in one_error_line(capsys)
    assert main(["plot", str(small), "--out", str(tmp_path / "p.png"), "--words", str(path)]) == 2
    one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_huge_word_list_line_is_not_echoed(small, tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("she he\n" + "x" * 2_000_000 + " " + "x" * 2_000_000 + "\n")
    assert main(["run", str(small), "--out-dir", str(tmp_path / "out"), "--definitional", str(pairs)]) == 2
    line = one_error_line(capsys)
    assert "twice" in line and len(line) < 300
