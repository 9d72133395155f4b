"""Output locks, run-identity stamps, the recoverable directory replacement and full-disk errors
(issue 20, sections 1 and 4): real processes where the kernel's part matters (flock, SIGKILL)."""

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias import _atomic, _lock, _provenance
from embdebias.cli import main
from embdebias.errors import EmbdebiasError, OutputChangedError, OutputLockedError
from embdebias.io.native import NativeWriter, read_native, write_native

TESTS = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
HOST = socket.gethostname()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Two small word2vec text files with the same words and different vectors."""
    where = tmp_path_factory.mktemp("lock-inputs")
    first, second = where / "a.txt", where / "b.txt"
    write_word2vec_text(synthetic_embedding(n_filler=50, dim=8, seed=1), first)
    write_word2vec_text(synthetic_embedding(n_filler=50, dim=8, seed=2), second)
    return first, second


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def read_vectors(path) -> np.ndarray:
    return np.asarray(read_native(path).vectors)


def text_vectors(path) -> np.ndarray:
    lines = Path(path).read_text(encoding="utf-8").splitlines()[1:]
    return np.array([[float(x) for x in line.split(" ")[1:]] for line in lines], dtype=np.float32)


class Children:
    """Subprocesses of a test, killed at teardown if still running."""

    def __init__(self):
        self.procs = []

    def start(self, code: str, *args) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=ENV, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(proc)
        return proc

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@pytest.fixture
def children():
    group = Children()
    yield group
    group.close()


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the child never made {path.name}: {proc.communicate()[1][-2000:]}")
        time.sleep(0.02)


# A child that takes the lock of argv[2], says so in argv[1] and holds it until argv[3] exists.
HOLD = """
import pathlib, sys, time
from embdebias._lock import output_lock
held, target, release = map(pathlib.Path, sys.argv[1:4])
with output_lock(target, purpose="test") as token:
    tmp = held.with_name(held.name + ".tmp")  # renamed whole: the parent never reads it half-written
    tmp.write_text(token)
    tmp.rename(held)
    while not release.exists():
        time.sleep(0.02)
"""


# --------------------------------------------------------------------------- the lock
def test_lock_records_its_holder_and_is_removed_on_release(tmp_path):
    target = tmp_path / "out.embd"
    lock = _lock.lock_path(target)
    assert lock == tmp_path / ".out.embd.embdebias-lock"
    with _lock.output_lock(target, purpose="convert") as token:
        record = json.loads(lock.read_text())
        assert record["pid"] == os.getpid() and record["host"] == HOST and record["token"] == token
        assert record["purpose"] == "convert" and len(token) == 16
        with _lock.output_lock(target, purpose="nested") as inner:  # re-entrant in one process
            assert inner == token
        assert lock.exists()
    assert not lock.exists() and list(tmp_path.iterdir()) == []
    with _lock.output_lock(tmp_path / "run-out", inside=True) as other:
        assert (tmp_path / "run-out" / ".embdebias-lock").is_file() and other != token
    assert list((tmp_path / "run-out").iterdir()) == []


def test_second_process_gets_one_line_naming_the_holder(tmp_path, children):
    target = tmp_path / "out.embd"
    with _lock.output_lock(target, purpose="convert"):
        probe = children.start("import sys\nfrom embdebias._lock import output_lock\n"
                               "try:\n    output_lock(sys.argv[1]).__enter__()\n"
                               "except Exception as e:\n    print(type(e).__name__, e)\n", target)
        out, err = probe.communicate(timeout=60)
    assert err == "" and len(out.strip().splitlines()) == 1, (out, err)
    assert out.startswith("OutputLockedError ") and f"process {os.getpid()} on {HOST}" in out
    assert "convert" in out and str(target) in out


def test_lock_held_by_another_process_then_released(tmp_path, children):
    target = tmp_path / "out.embd"
    held, release = tmp_path / "held", tmp_path / "release"
    holder = children.start(HOLD, held, target, release)
    wait_for(held, holder)
    with pytest.raises(OutputLockedError, match=f"process {holder.pid} on ") as info:
        with _lock.output_lock(target):
            pass
    assert info.value.holder["pid"] == holder.pid and info.value.holder["token"] == held.read_text()
    threading.Timer(0.3, release.touch).start()
    with _lock.output_lock(target, wait=30) as token:  # waits for the release
        assert token != held.read_text()
    assert holder.wait(timeout=60) == 0


def test_lock_of_a_killed_holder_is_taken_over_with_a_warning(tmp_path, children):
    target = tmp_path / "out.embd"
    held = tmp_path / "held"
    holder = children.start(HOLD, held, target, tmp_path / "never")
    wait_for(held, holder)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    assert _lock.lock_path(target).exists()  # nobody removed it: the kernel released only the flock
    with pytest.warns(UserWarning, match=rf"taking over the lock left by process {holder.pid} on {HOST} "
                                         rf"\(test since .*\), which is no longer running"):
        with _lock.output_lock(target):
            pass
    assert hidden(tmp_path) == []


def test_a_lock_file_removed_by_its_releaser_is_not_shared(tmp_path):
    # A waiter that opened the file before its holder removed it must lock the new file, not the old one.
    import fcntl

    lock = _lock.lock_path(tmp_path / "out")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    holding, done = threading.Event(), threading.Event()

    def waiter():
        with _lock.output_lock(tmp_path / "out", wait=30):
            holding.set()
            done.wait(30)

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)  # the waiter has opened the old file and polls its flock
    os.unlink(lock)  # released as a holder does: removed, then unlocked
    os.close(fd)
    assert holding.wait(30)
    probe = os.open(lock, os.O_RDWR | os.O_CREAT)  # the file now at that name is the one locked
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(probe)
        done.set()
        thread.join(30)
    assert not lock.exists()


def test_cleaning_keeps_a_held_lock_and_removes_a_dead_ones(tmp_path, children):
    held, release = tmp_path / "held", tmp_path / "release"
    holder = children.start(HOLD, held, tmp_path / "theirs", release)
    wait_for(held, holder)
    lines = []
    with _lock.output_lock(tmp_path / "mine"):
        assert _atomic.clean_stale_temporaries(tmp_path, lines.append) == []
        assert hidden(tmp_path) == [".mine.embdebias-lock", ".theirs.embdebias-lock"]
    holder.kill()
    holder.wait(timeout=60)
    assert _atomic.clean_stale_temporaries(tmp_path, lines.append) == [_lock.lock_path(tmp_path / "theirs")]
    assert len(lines) == 1 and lines[0].startswith(
        f"removed {_lock.lock_path(tmp_path / 'theirs')}, the lock left by process {holder.pid} on {HOST} (test since ")
    assert lines[0].endswith("(no longer held)")
    assert hidden(tmp_path) == []


COUNT = """
import pathlib, sys, time
from embdebias._lock import output_lock
target, counter = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for _ in range(25):
    with output_lock(target, wait=60):
        value = int(counter.read_text())
        time.sleep(0.001)
        counter.write_text(str(value + 1))
"""


def test_lock_excludes_under_contention(tmp_path, children):
    counter = tmp_path / "counter"
    counter.write_text("0")
    procs = [children.start(COUNT, tmp_path / "out", counter) for _ in range(4)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.communicate()[1]
    assert counter.read_text() == "100"  # no lost update: never two holders at once
    assert hidden(tmp_path) == []


def test_lock_file_must_be_a_regular_file(tmp_path):
    (tmp_path / "elsewhere").write_text("not ours")
    os.symlink(tmp_path / "elsewhere", _lock.lock_path(tmp_path / "out"))
    with pytest.raises(EmbdebiasError, match="out: cannot create its lock file"):
        with _lock.output_lock(tmp_path / "out"):
            pass
    assert (tmp_path / "elsewhere").read_text() == "not ours"


def test_full_disk_while_locking_names_the_output(tmp_path, monkeypatch):
    def full(fd, record):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_lock, "_write_record", full)
    with pytest.raises(EmbdebiasError, match=r"out\.embd: cannot write its lock file .*No space left on device"):
        with _lock.output_lock(tmp_path / "out.embd"):
            pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_unwritable_directory_is_named(tmp_path):
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(EmbdebiasError, match="directory must be writable"):
            with _lock.output_lock(tmp_path / "out"):
                pass
    finally:
        tmp_path.chmod(0o755)


# --------------------------------------------------------------------------- native writers (CLI)
# The CLI in a child whose native writer stops at its first block (holding the lock) until argv[2]
# exists, after saying so in argv[1]; it starts only once argv[3] exists (so that two start together).
PAUSED_CLI = """
import os, pathlib, sys, time
from embdebias.cli import main
from embdebias.io import native
paused, release, go = map(pathlib.Path, sys.argv[1:4])
real_append = native.NativeWriter.append
def append(self, block):
    paused.write_text(str(os.getpid()))
    while not release.exists():
        time.sleep(0.02)
    return real_append(self, block)
native.NativeWriter.append = append
while not go.exists():
    time.sleep(0.01)
sys.exit(main(sys.argv[4:]))
"""


def start_cli(children, tmp_path, name: str, args, go=None):
    """The paused CLI as ``(process, paused file, release file)``; it starts once ``go`` exists."""
    paused, release = tmp_path / f"{name}.paused", tmp_path / f"{name}.release"
    if go is None:
        go = tmp_path / f"{name}.go"
        go.touch()
    return children.start(PAUSED_CLI, paused, release, go, "-q", *args), paused, release


def test_two_converts_started_together_one_wins(inputs, tmp_path, children):
    out = tmp_path / "out.embd"
    go = tmp_path / "go"
    procs = {}
    for name, src in zip("ab", inputs):
        proc, paused, release = start_cli(children, tmp_path, name, ["convert", src, out], go=go)
        procs[name] = (proc, paused, release, src)
    go.touch()
    deadline = time.monotonic() + 60
    while not any(p.poll() is not None for p, *_ in procs.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    ended = [name for name, (p, *_) in procs.items() if p.poll() is not None]
    assert len(ended) == 1, "neither writer was stopped by the other's lock"
    loser = ended[0]
    winner = "b" if loser == "a" else "a"
    proc, paused, release, src = procs[winner]
    wait_for(paused, proc)  # the winner holds the lock (taken by the command, before it loads), then writes
    _, err = procs[loser][0].communicate()
    assert procs[loser][0].returncode == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"embdebias: error: {out}: being written by embdebias process {proc.pid} on {HOST} (convert since "), err
    assert lines[0].endswith("; wait for it to finish or write elsewhere (two writers would mix their results)")
    release.touch()
    assert proc.wait(timeout=60) == 0, proc.communicate()[1]
    assert np.array_equal(read_vectors(out), text_vectors(src))
    assert hidden(tmp_path) == []


def test_convert_seconds_apart_fails_even_with_force_and_the_first_completes(inputs, tmp_path, children):
    out = tmp_path / "out.embd"
    first, paused, release = start_cli(children, tmp_path, "a", ["convert", inputs[0], out])
    wait_for(paused, first)
    time.sleep(1.0)
    assert main(["-q", "convert", "--force", str(inputs[1]), str(out)]) == 2
    release.touch()
    assert first.wait(timeout=60) == 0, first.communicate()[1]
    assert np.array_equal(read_vectors(out), text_vectors(inputs[0]))
    assert hidden(tmp_path) == []


def test_convert_after_the_holder_was_killed_takes_over(inputs, tmp_path, children, capsys):
    out = tmp_path / "out.embd"
    first, paused, _ = start_cli(children, tmp_path, "a", ["convert", inputs[0], out])
    wait_for(paused, first)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    assert main(["convert", str(inputs[1]), str(out)]) == 0
    err = capsys.readouterr().err
    # cleaning the directory finds the lock nobody holds: named, with its dead holder, and removed
    assert f"the lock left by process {first.pid} on {HOST} (convert since " in err
    assert f"a temporary left by process {first.pid}" in err
    assert np.array_equal(read_vectors(out), text_vectors(inputs[1]))
    assert hidden(tmp_path) == []


def test_native_writer_in_python_is_locked(tmp_path, children):
    emb = synthetic_embedding(n_filler=10, dim=4)
    target = tmp_path / "out.embd"
    held, release = tmp_path / "held", tmp_path / "release"
    holder = children.start(HOLD, held, target, release)
    wait_for(held, holder)
    with pytest.raises(OutputLockedError, match=f"process {holder.pid}"):
        write_native(emb, target)
    assert not target.exists() and hidden(tmp_path) == [".out.embd.embdebias-lock"]  # the holder's
    release.touch()
    holder.wait(timeout=60)
    with NativeWriter(target, emb.words, emb.shape) as writer:
        writer.append(emb.vectors)
        assert len(writer.token) == 16
    assert np.array_equal(read_vectors(target), emb.vectors)


# --------------------------------------------------------------------------- --force's two renames
# A child replacing argv[2] by a copy of argv[1]'s words with other vectors, killed (os._exit) at the
# rename given in argv[3] (1: moving the old output aside, 2: moving the new one in).
KILLED_REPLACE = """
import os, sys
from embdebias.cli import main
target, kill_at = os.path.abspath(sys.argv[2]), int(sys.argv[3])
real_rename, calls = os.rename, []
def rename(src, dst, *a, **k):
    involved = target in (os.path.abspath(src), os.path.abspath(dst))
    if involved:
        calls.append(1)
        if len(calls) == kill_at:
            os._exit(9)
    return real_rename(src, dst, *a, **k)
os.rename = rename
sys.exit(main(["-q", "convert", "--force", sys.argv[1], sys.argv[2]]))
"""


def killed_replacing(children, src, target, kill_at: int) -> int:
    proc = children.start(KILLED_REPLACE, src, target, kill_at)
    assert proc.wait(timeout=60) == 9, proc.communicate()[1]
    return proc.pid


def test_force_killed_between_its_renames_is_finished_by_the_next_command(inputs, tmp_path, children, capsys):
    out = tmp_path / "out.embd"
    assert main(["-q", "convert", str(inputs[0]), str(out)]) == 0
    pid = killed_replacing(children, inputs[1], out, kill_at=2)
    assert not out.exists()  # killed with the old output aside and the new one under its temporary name
    assert sorted(name.rsplit(".", 1)[1] for name in hidden(tmp_path)) == ["embdebias-lock", "old", "swap", "tmp"]
    # The next command writing in the directory (another output) must not delete both.
    assert main(["convert", str(inputs[0]), str(tmp_path / "other.txt")]) == 0
    err = capsys.readouterr().err
    assert f"process {pid} was killed while replacing it; finished it: the new output is in place" in err
    assert np.array_equal(read_vectors(out), text_vectors(inputs[1]))
    assert hidden(tmp_path) == []


def test_a_killed_replacement_is_recovered_before_the_target_is_judged(inputs, tmp_path, children, capsys):
    out = tmp_path / "out.embd"
    assert main(["-q", "convert", str(inputs[0]), str(out)]) == 0
    killed_replacing(children, inputs[1], out, kill_at=2)
    # Without --force the output exists again (recovered), so it is not replaced.
    assert main(["-q", "convert", str(inputs[0]), str(out)]) == 2
    assert "exists; use --force" in capsys.readouterr().err
    assert np.array_equal(read_vectors(out), text_vectors(inputs[1]))


def test_a_replacement_whose_new_output_is_gone_restores_the_old(inputs, tmp_path, children, capsys):
    out = tmp_path / "out.embd"
    assert main(["-q", "convert", str(inputs[0]), str(out)]) == 0
    pid = killed_replacing(children, inputs[1], out, kill_at=2)
    new = next(p for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    _atomic._remove_tree(new)
    removed = _atomic.clean_stale_temporaries(tmp_path, print)
    assert f"process {pid} was killed while replacing it; restored the old output" in capsys.readouterr().out
    assert removed == [_lock.lock_path(out)] and hidden(tmp_path) == []  # the killed writer's lock too
    assert np.array_equal(read_vectors(out), text_vectors(inputs[0]))


def test_killed_before_the_first_rename_keeps_the_old_output(inputs, tmp_path, children):
    out = tmp_path / "out.embd"
    assert main(["-q", "convert", str(inputs[0]), str(out)]) == 0
    killed_replacing(children, inputs[1], out, kill_at=1)
    _atomic.clean_stale_temporaries(tmp_path)
    assert np.array_equal(read_vectors(out), text_vectors(inputs[0])) and hidden(tmp_path) == []


def test_a_journal_naming_paths_outside_its_directory_is_ignored(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    where = tmp_path / "d"
    where.mkdir()
    journal = where / f".out.{dead}.abcdefgh.swap"
    journal.write_text(json.dumps({"target": "out", "old": f".out.{dead}.abcdefgh.old", "new": "../outside/keep"}))
    _atomic.clean_stale_temporaries(where)
    assert (outside / "keep").is_dir() and list(where.iterdir()) == []


def test_force_onto_a_symlinked_native_output_leaves_no_old(inputs, tmp_path):
    real = tmp_path / "elsewhere" / "real.embd"
    real.parent.mkdir()
    assert main(["-q", "convert", str(inputs[0]), str(real)]) == 0
    where = tmp_path / "outputs"
    where.mkdir()
    (where / "out.embd").symlink_to(real, target_is_directory=True)
    assert main(["-q", "convert", "--force", str(inputs[1]), str(where / "out.embd")]) == 0
    assert sorted(p.name for p in where.iterdir()) == ["out.embd"] and not (where / "out.embd").is_symlink()
    assert np.array_equal(read_vectors(where / "out.embd"), text_vectors(inputs[1]))
    assert np.array_equal(read_vectors(real), text_vectors(inputs[0]))  # what the link pointed to is kept


# --------------------------------------------------------------------------- a full disk
def test_full_disk_error_names_the_output(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(OSError) as info:
        with _atomic.atomic_file(target) as tmp:
            tmp.write_text("partial")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # what a write() raises: no file name
    assert info.value.filename == str(target) and "nothing was replaced" in info.value.strerror
    with pytest.raises(OSError) as info:
        with _atomic.atomic_dir(tmp_path / "out.embd") as tmp:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), str(tmp / "vectors.npy"))
    assert info.value.filename == str(tmp_path / "out.embd")
    with pytest.raises(OSError) as info:  # another error, naming another file, is left as it is
        with _atomic.atomic_file(target):
            raise OSError(errno.ENOSPC, "full", str(tmp_path / "elsewhere"))
    assert info.value.filename == str(tmp_path / "elsewhere") and list(tmp_path.iterdir()) == []


def test_full_disk_during_convert_names_the_output(inputs, tmp_path, monkeypatch, capsys):
    from embdebias.io import native

    out = tmp_path / "out.embd"

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(native, "write_vocabulary", full)
    assert main(["convert", str(inputs[0]), str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"embdebias: error: {out}: No space left on device while writing it (nothing was replaced)"]
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- run identity stamps
def test_stamp_holds_across_a_rename_and_names_what_changed(tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    emb = synthetic_embedding(n_filler=10, dim=4)
    write_native(emb, staged / "soft.embd")
    (staged / "evaluation.json").write_text('{"a": 1}')
    record = _provenance.stamp(staged, ["soft.embd", "evaluation.json"], "t1")
    assert json.loads(json.dumps(record)) == record
    final = tmp_path / "final"
    final.mkdir()
    for name in record["files"]:
        os.rename(staged / name, final / name)
    assert _provenance.stamp_problem(record, final, token="t1") is None
    assert "written by another run" in _provenance.stamp_problem(record, final, token="t2")
    with pytest.raises(OutputChangedError, match="another process wrote there"):
        _provenance.check_stamp(record, final, token="t2")
    # the same size and mtime, other content (another run's lambda): found by the fingerprint
    vectors = final / "soft.embd" / "vectors.npy"
    st = vectors.stat()
    data = bytearray(vectors.read_bytes())
    data[-1] ^= 1
    vectors.write_bytes(bytes(data))
    os.utime(vectors, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _provenance.stamp_problem(record, final) == "soft.embd: vectors.npy changed content since it was written"
    os.utime(final / "evaluation.json")
    record2 = _provenance.stamp(final, ["evaluation.json"], "t1")
    (final / "evaluation.json").write_text('{"a": 2}')
    assert _provenance.stamp_problem(record2, final).startswith("evaluation.json: ")
    (final / "evaluation.json").unlink()
    assert "evaluation.json: No such file" in _provenance.stamp_problem(record2, final)


def test_large_file_fingerprint_samples_its_blocks(tmp_path):
    big = tmp_path / "big.bin"
    data = bytearray(np.random.default_rng(0).integers(0, 256, 3 << 20, dtype=np.uint8).tobytes())
    big.write_bytes(bytes(data))
    before = _provenance.fingerprint(big)
    st = big.stat()
    sampled = (len(data) - 4096) * 31 // 63  # the 32nd of the 64 blocks read
    for offset in (0, sampled + 10, len(data) - 1):  # in the first, a middle and the last block
        changed = bytearray(data)
        changed[offset] ^= 0xFF
        big.write_bytes(bytes(changed))
        os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert _provenance.fingerprint(big)["blake2b"] != before["blake2b"], offset
    big.write_bytes(bytes(data))
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _provenance.fingerprint(big) == before


@pytest.mark.parametrize("record", [None, {}, {"token": "t"}, {"token": "t", "files": {}},
                                    {"token": "t", "files": {"../x": {}}}, {"token": 1, "files": {"a": {}}},
                                    {"token": "t", "files": {"a": "junk"}},
                                    {"token": "t", "files": {"a": {"files": 3}}}])
def test_a_malformed_stamp_is_a_problem_not_a_crash(tmp_path, record):
    (tmp_path / "a").write_text("x")
    assert isinstance(_provenance.stamp_problem(record, tmp_path), str)
