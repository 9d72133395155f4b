"""embdebias sweep on Dask: a LocalCluster of two worker processes, a real ``dask scheduler``
with two ``dask worker`` processes on 127.0.0.1 (same values as the serial run with the
same seeds), and a worker killed mid-sweep with no point lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("distributed")

import embdebias  # noqa: E402
from embdebias.sweep import store  # noqa: E402

from synthetic import synthetic_embedding  # noqa: E402

DASK = str(Path(sys.executable).with_name("dask"))
ROOT = Path(__file__).resolve().parents[1]


def quiet(*args):
    pass


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep-dask") / "small"
    embdebias.save(synthetic_embedding(n_filler=300, dim=16), path)
    return {"embeddings": [{"path": str(path), "label": "small"}], "suite": ["direct_bias", "weat"],
            "bootstrap": 50, "seeds": [3], "methods": {"hard": {}, "soft": {"lam": [0.05, 0.2, 1.0, 5.0]}}}


@pytest.fixture(scope="module")
def serial(cfg, tmp_path_factory):
    return embdebias.sweep(cfg, tmp_path_factory.mktemp("serial"), serial=True, log=quiet)


def values(frame):
    frame = frame[frame["metric"].notna()]
    return frame.set_index(["key", "metric", "test", "statistic"])[["value", "ci_low", "ci_high"]].sort_index()


def assert_same(frame, serial):
    assert frame["error"].isna().all(), frame["error"].dropna().tolist()
    assert frame["key"].nunique() == serial["key"].nunique() == 6
    a, b = values(frame), values(serial)
    assert a.index.equals(b.index)
    # Equal to float32 rounding: a worker's BLAS runs on one thread, the serial run's on all
    # cores, and older OpenBLAS builds (numpy 1.24's) split soft debias's float32 products
    # differently by thread count, moving the values by about 1e-8 (5e-8 relative at most).
    assert ((a - b).abs().fillna(0) <= 1e-6 * np.maximum(1.0, b.abs().fillna(0))).all().all()


def test_local_cluster_two_worker_processes(cfg, serial, tmp_path):
    said = []
    frame = embdebias.sweep(cfg, tmp_path, workers=2, log=said.append)
    assert any("local Dask cluster: 2 worker process(es), 1 thread" in line for line in said)
    assert_same(frame, serial)
    pids = {w.rsplit(":", 1)[1] for w in frame["worker"]}
    assert str(os.getpid()) not in pids and len(pids) == 2


def _start(args, env, log):
    return subprocess.Popen([DASK, *args], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            start_new_session=True)


def _stop(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1; stopped at the end."""
    from distributed import Client

    where = tmp_path_factory.mktemp("cluster")
    sched_file = where / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
           "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    log = open(where / "cluster.log", "wb")
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sched_file)], env, log)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for i in range(2):
            procs.append(_start(["worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                                 "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{i}"], env, log))
        with Client(scheduler_file=str(sched_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            address = client.scheduler.address
        yield {"address": address, "scheduler_file": sched_file, "env": env, "log": log, "procs": procs}
    finally:
        for proc in reversed(procs):
            _stop(proc)
        log.close()


def test_external_scheduler_same_values_as_serial(cfg, serial, cluster, tmp_path):
    from distributed import Client

    from embdebias.sweep.worker import PLUGIN_NAME

    said = []
    frame = embdebias.sweep(cfg, tmp_path, scheduler=cluster["address"], log=said.append)
    assert any(f"Dask scheduler {cluster['address']}: 2 worker(s)" in line for line in said)
    assert_same(frame, serial)
    with Client(cluster["address"], timeout=60) as client:  # every worker, also one that joins later
        assert PLUGIN_NAME in client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))


def test_pin_threads_leaves_one_thread_in_every_pool():
    """Without the nanny's OMP_NUM_THREADS=1 (a worker started with --no-nanny) the pools have one
    thread per core until the worker's set-up limits them."""
    code = ("from embdebias.sweep.worker import pin_threads; pin_threads(); "
            "from threadpoolctl import threadpool_info; print(max(i['num_threads'] for i in threadpool_info()))")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


def test_worker_killed_mid_sweep_loses_no_point(cfg, serial, cluster, tmp_path):
    """A third worker (no nanny, so nothing restarts it) is killed while it runs a point."""
    from distributed import Client

    victim = _start(["worker", "--scheduler-file", str(cluster["scheduler_file"]), "--nthreads", "1",
                     "--host", "127.0.0.1", "--no-dashboard", "--no-nanny", "--name", "victim"],
                    cluster["env"], cluster["log"])
    try:
        with Client(cluster["address"], timeout=60) as client:
            client.wait_for_workers(3, timeout=60)
            address = next(a for a, w in client.scheduler_info()["workers"].items() if w["name"] == "victim")
            result = {}
            thread = threading.Thread(target=lambda: result.update(
                frame=embdebias.sweep(cfg, tmp_path, scheduler=cluster["address"], log=quiet)))
            thread.start()
            deadline, killed = time.monotonic() + 120, False
            while thread.is_alive() and time.monotonic() < deadline and not killed:
                if client.processing(workers=[address]).get(address):
                    victim.send_signal(signal.SIGKILL)
                    killed = True
                time.sleep(0.01)
            thread.join(180)
        assert killed, "the victim never ran a point"
        assert victim.wait(10) == -signal.SIGKILL
        frame = result["frame"]
        assert_same(frame, serial)  # every point, none lost, same values
        assert len(store.finished(store.read_points(tmp_path))) == 6
    finally:
        _stop(victim)
