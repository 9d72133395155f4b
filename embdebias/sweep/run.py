"""The executor: every point of a sweep as one task, on Dask or, without it, one after another.

**Where tasks run.** A point's task loads its embedding through a per-process cache keyed
by path and limit (:func:`loaded`, the last two kept), and the points are submitted
embedding by embedding, so a worker's consecutive tasks mostly share the embedding it
has loaded: each worker reads a file once per run of points, not once per point (a
native directory is memory-mapped, so workers on one machine share its pages through the
page cache). Dask's worker restrictions would pin an embedding to one worker, which
makes the commonest sweep, many settings of one embedding, run on one worker while the
others idle; the cache keeps every worker busy and still avoids the re-reads.

**What nothing can lose.** The client stores each point as its result arrives
(:mod:`~embdebias.sweep.store`); a task whose worker dies is run again by the scheduler
(Dask reschedules the tasks of a lost worker; a nanny starts a new worker), and a point
that fails becomes a record with its error while the others go on.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
import warnings
from collections import OrderedDict

from .config import BASELINE
from .store import write_point

#: Embeddings a process keeps loaded (a sweep over many embeddings would otherwise hold all).
CACHE_SIZE = 2
_LOADED: OrderedDict = OrderedDict()


def loaded(path: str, limit: int | None):
    """The embedding at ``path`` (its first ``limit`` words), loaded once per process."""
    from .. import io

    key = (path, limit)
    if key in _LOADED:
        _LOADED.move_to_end(key)
        return _LOADED[key]
    emb = io.load(path, limit=limit)
    _LOADED[key] = emb
    while len(_LOADED) > CACHE_SIZE:
        _LOADED.popitem(last=False)
    return emb


#: ``{a point's baseline: evaluate's reuse dict}``: the baseline column scored once per process,
#: reused by every point of that embedding, attribute and seed (as many kept as embeddings).
_REFERENCES: OrderedDict = OrderedDict()


def reference_cache(point) -> dict:
    """The :func:`~embdebias.evaluate.evaluate` ``reuse`` dict of ``point``'s baseline in this process.

    A point is scored beside its baseline, whose scores depend only on the embedding and the
    options, never on the debiased column: scored once here, not once per point. (evaluate
    checks that the embedding object, the parameters and the subspace are the same before
    reusing anything; the key only keeps different baselines from pushing each other out.)"""
    key = (point.embedding.path, point.limit, point.attribute, point.seed, tuple(point.suite), point.bootstrap,
           point.lists)
    if key not in _REFERENCES:
        _REFERENCES[key] = {}
        while len(_REFERENCES) > CACHE_SIZE:
            _REFERENCES.popitem(last=False)
    _REFERENCES.move_to_end(key)
    return _REFERENCES[key]


def run_point(point) -> dict:
    """One point's record: what it is, its rows (or its error), the time it took and where it ran."""
    from ..pipeline.run import _versions

    t0 = time.perf_counter()
    record = {**_describe(point), "versions": json.dumps(_versions(), sort_keys=True),
              "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        # A worker's warnings (missing words, unscored units) go into the point's record,
        # not onto the terminal of a process nobody reads.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            record["rows"] = _score(point)
        record["warnings"] = sorted({str(w.message) for w in caught})
    except Exception as exc:  # a failing point is a record with its error; the sweep goes on
        record["error"] = f"{type(exc).__name__}: {exc}"
    record["seconds"] = round(time.perf_counter() - t0, 4)
    return record


#: The column a point's baseline is scored under, as ``embdebias run`` names it.
ORIGINAL = "original"


def _score(point) -> list[dict]:
    """A point's rows, scored exactly as ``embdebias run`` scores its column: the debiased
    embedding beside its baseline (the point's embedding as loaded: :data:`ORIGINAL`) in one
    :func:`~embdebias.evaluate.evaluate`, with the run's subspace, words, options and seed, and
    the debiased column read out -- so the residual tests cluster the original's most biased
    words, not the debiased embedding's own, and every paired change and share of bias removed
    is the run's. A baseline point is the original column alone (its values do not depend on
    the other columns). Each row says what it was scored against (``reference``)."""
    from ..data.attributes import as_attribute
    from ..evaluate import DEFAULT_SUITE, evaluate
    from ..metrics.base import attribute_subspace
    from ..pipeline import options as run_options

    emb = loaded(point.embedding.path, point.limit)
    attr = as_attribute(point.attribute, point.lists)
    # The attribute's subspace (gender: its definitional pairs; another: its defining sets), as run's.
    subspace = attribute_subspace(emb, attr, lists=point.lists)
    baseline = point.method == BASELINE
    columns = {ORIGINAL: emb} if baseline else {ORIGINAL: emb, point.method: _debiased(point, emb, subspace, attr)}
    column = ORIGINAL if baseline else point.method
    # another attribute's default suite: the metrics that can measure it (evaluate chooses them)
    default = not attr.uses_gender_lists and tuple(point.suite) == tuple(DEFAULT_SUITE)
    kwargs = run_options.evaluate_kwargs(run_options.RunOptions(random_state=point.seed, lists=point.lists), subspace)
    kwargs.update(tests=None if default else point.suite, bootstrap=point.bootstrap, attribute=attr,
                  trust=False,  # a point keeps its rows only: no trust readings to pay for
                  reuse=reference_cache(point))
    if not attr.uses_gender_lists:  # as run names it
        kwargs["direction_name"] = f"the original embedding's (fitted on its {attr.name} defining sets)"
    report = evaluate(columns, **kwargs)
    return _rows(report, column, None if baseline else ORIGINAL)


def _rows(report, column: str, reference: str | None) -> list[dict]:
    """The rows of ``column`` of ``report``: value, interval, items scored and, against
    ``reference``, the paired change's outcome and share of bias removed."""
    frame = report.to_frame()
    frame = frame[frame["embedding"] == column].drop(columns="embedding")
    n_scored = {(m, t): v for m, t, s, v in frame[["metric", "test", "statistic", "value"]].itertuples(index=False)
                if s == "n_scored"}
    shares = {(c["metric"], c["test"], c["statistic"]): c.get("share") for c in report.comparisons
              if c["embedding"] == column}
    rows = []
    for r in frame.itertuples(index=False):
        rows.append({"metric": r.metric, "test": r.test, "statistic": r.statistic, "value": _num(r.value),
                     "ci_low": _num(r.ci_low), "ci_high": _num(r.ci_high),
                     "n_scored": _num(n_scored.get((r.metric, r.test))),
                     "outcome": r.outcome if isinstance(r.outcome, str) else None,
                     "share": _num(shares.get((r.metric, r.test, r.statistic))),
                     "reference": "the point itself (baseline)" if reference is None else
                     f"its embedding's baseline ('{reference}' column)"})
    return rows


def _num(value):
    if value is None:
        return None
    value = float(value)
    return None if value != value else value


def _debiased(point, emb, subspace, attr):
    from ..debias.configure import configure

    params = {k: v for k, v in point.params.items() if k != "n_components"}
    n_components = point.params.get("n_components")  # given: the estimator fits its own k-dimensional subspace
    from ..pipeline.options import RunOptions

    debiaser = configure(point.method, attribute=attr, lists=point.lists, params=params,
                         subspace=subspace if n_components is None else None, n_components=n_components,
                         random_state=point.seed, max_missing=RunOptions().max_missing)  # as run's
    debiaser = debiaser.fit(emb)
    if point.save_dir is None:  # evaluated on the rows its metrics read, mapped as they are read
        return debiaser.lazy_transform(emb, name=point.method)
    from ..debias.api import transform_to_file

    from .._outdir import make_dirs

    saved = make_dirs(os.path.dirname(point.save_dir), os.path.basename(point.save_dir))  # never through a link
    out = os.path.join(saved, point.key)
    return transform_to_file(debiaser, emb, out, "native")


def _describe(point) -> dict:
    """What a point's record says about the point (before its result)."""
    return {"key": point.key, "embedding": point.embedding.path, "label": point.embedding.label,
            "order": point.embedding.order, "limit": point.limit, "attribute": point.attribute,
            "method": point.method, "parameters": json.dumps(point.params, sort_keys=True), "seed": point.seed,
            "error": None, "rows": []}


def error_record(point, message: str) -> dict:
    """The record of a point whose task did not return (its worker kept dying, it was cancelled)."""
    return {**_describe(point), "versions": "{}", "worker": None, "error": message, "seconds": None}


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def run_serial(points, out_dir, bar) -> dict:
    """Run ``points`` one after another in this process; ``{key: record}``."""
    out = {}
    for point in points:
        record = run_point(point)
        write_point(out_dir, record)
        out[point.key] = record
        bar.update(1)
    return out


def default_workers() -> int:
    return os.cpu_count() or 1


def run_dask(points, out_dir, bar, *, scheduler: str | None = None, workers: int | None = None, log=print) -> dict:
    """Run ``points`` on a Dask cluster (``scheduler``'s, or a new local one, :func:`dask_client`);
    ``{key: record}``."""
    with dask_client(scheduler, workers, log) as client:
        return _gather(client, points, out_dir, bar)


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None, log=print, who: str = "sweep"):
    """A Dask client on ``scheduler``'s cluster, or on a new local one closed on exit.

    The local cluster has ``workers`` worker processes (default: one per core), one
    thread each, and a memory limit of an equal share of the machine's memory each. Every
    worker's BLAS and OpenMP pools are limited to one thread (:mod:`~embdebias.sweep.worker`).
    ``who`` names the command in the lines given to ``log`` (the sweep; the benchmark uses it too).
    """
    from distributed import Client, LocalCluster
    from distributed.system import MEMORY_LIMIT

    cluster = None
    if scheduler is None:
        n = workers or default_workers()
        # dashboard_address=None would mean the default port 8787, and a warning whenever it is taken
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, memory_limit=MEMORY_LIMIT // n,
                               dashboard_address=":0", silence_logs=logging.ERROR)
        log(f"[{who}] local Dask cluster: {n} worker process(es), 1 thread and "
            f"{MEMORY_LIMIT // n / 2**30:.1f} GiB each")
    try:
        with Client(cluster if cluster is not None else scheduler) as client:
            from .worker import pin_plugin

            client.register_plugin(pin_plugin())  # one BLAS/OpenMP thread per worker, however started
            if scheduler is not None:
                log(f"[{who}] Dask scheduler {scheduler}: {len(client.scheduler_info()['workers'])} worker(s)")
            yield client
    finally:
        if cluster is not None:
            cluster.close()


def _gather(client, points, out_dir, bar) -> dict:
    """Submit every point, store each record as it arrives; Ctrl-C cancels what is left."""
    from distributed import as_completed

    by_future = {client.submit(run_point, p, key=f"embdebias-sweep-{p.key}", pure=False): p for p in points}
    out = {}
    try:
        for future in as_completed(list(by_future)):
            point = by_future[future]
            try:
                record = future.result()
            except Exception as exc:  # the scheduler gave up on it (its workers kept dying)
                record = error_record(point, f"{type(exc).__name__}: {exc}")
            write_point(out_dir, record)
            out[point.key] = record
            bar.update(1)
    finally:
        client.cancel([f for f in by_future if not f.done()])
    return out
