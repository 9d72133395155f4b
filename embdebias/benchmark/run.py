"""One benchmark measurement (an eraser, a seed) and the executor that runs them all, serially or on Dask."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import EmbdebiasError

#: The baseline row: the original vectors, no eraser.
BASELINE = "none"
#: The erasers of the table a benchmark runs by default, each with the settings that make it that
#: eraser: ``{row name: (table method, its parameters)}``. ``orth`` is LEACE's unwhitened form, the mean
#: projection of Haghighatkhah et al. (2022). Any other method of the table may be named too (hard, hsr, ...).
ERASERS = {"inlp": ("inlp", {}), "rlace": ("rlace", {}), "leace": ("leace", {}),
           "orth": ("leace", {"eraser": "orth"}), "sal": ("sal", {}), "conceptor": ("conceptor", {})}
#: Words whose change measures distortion: a systematic sample of the vocabulary, at most this many.
DISTORTION_WORDS = 20_000


def resolve_methods(methods=None) -> dict:
    """``{row name: (table method, parameters)}`` of ``methods`` (names, a comma-separated string,
    ``"all"`` or None: :data:`ERASERS`); an unknown or repeated name is an error listing the known ones."""
    from ..debias.table import DEBIASERS

    if methods is None or (isinstance(methods, str) and methods.strip() == "all"):
        return dict(ERASERS)
    names = [n.strip() for n in methods.split(",")] if isinstance(methods, str) else list(methods)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise EmbdebiasError(f"benchmark: methods must name at least one eraser, got {methods!r}")
    out = {}
    for name in names:
        if name in out:
            raise EmbdebiasError(f"benchmark: method {name!r} is named twice")
        if name in ERASERS:
            out[name] = ERASERS[name]
        elif name in DEBIASERS:
            out[name] = (name, {})
        else:
            known = ", ".join(dict.fromkeys([*ERASERS, *DEBIASERS]))
            raise EmbdebiasError(f"benchmark: unknown method {name!r}; choose from {known} (or all)")
    return out


def resolve_seeds(seeds) -> tuple[int, ...]:
    """``seeds`` as distinct non-negative integers: a count ``n`` (the seeds ``0 .. n-1``) or a sequence."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise EmbdebiasError(f"benchmark: seeds must be a count >= 1 or a list of seeds, got {seeds}")
        return tuple(range(int(seeds)))
    try:
        found = tuple(seeds)
    except TypeError:
        raise EmbdebiasError(f"benchmark: seeds must be a count >= 1 or a list of seeds, got {seeds!r}") from None
    if not found or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 2**32
                            for s in found):
        raise EmbdebiasError(f"benchmark: seeds must be integers in [0, 2**32), got {seeds!r}")
    if len(set(found)) != len(found):
        raise EmbdebiasError(f"benchmark: a seed is repeated in {seeds!r}")
    return tuple(int(s) for s in found)


@dataclass(frozen=True)
class Task:
    """One measurement: ``method`` (a row name; :data:`BASELINE` for none) at ``seed``.

    ``source`` is the embedding, or a path (or the default's name) loaded once per process
    with ``limit`` (:func:`embdebias.sweep.run.loaded`), as a sweep's points are.
    """

    source: object
    limit: int | None
    method: str
    estimator: str | None
    params: dict = field(default_factory=dict)
    seed: int = 0
    protocol: str = "split"
    attribute: str = "gender"
    lists: str = "published"
    quality: bool = True

    def embedding(self):
        if isinstance(self.source, str):
            from ..sweep.run import loaded

            return loaded(self.source, self.limit)
        return self.source


def labelled_words(emb, attribute: str, lists: str, seed: int):
    """The labelled words of ``attribute`` at ``seed``: those a projection-label eraser fits on."""
    from ..debias import protected_labels

    return protected_labels(emb, attribute, lists, random_state=seed)


def build(task: Task, emb):
    """The task's configured, unfitted debiaser (as ``run`` and ``sweep`` configure one)."""
    from ..data.attributes import as_attribute
    from ..debias.configure import configure

    attr = as_attribute(task.attribute, task.lists)
    return configure(task.estimator, attribute=attr, lists=task.lists, params=dict(task.params),
                     random_state=task.seed)


def edited(est, emb, rows) -> np.ndarray:
    """The float64 rows the probes see: the method's edit before any unit scaling where it has one
    (:func:`~embdebias.debias.certificate.edited_rows`), else its output; the original rows without one."""
    from ..debias.certificate import edited_rows

    if est is None:
        return emb.take(rows, dtype=np.float64)
    out = edited_rows(est, emb, rows)
    return est.lazy_transform(emb).take(rows, dtype=np.float64) if out is None else out


def measure(task: Task) -> dict:
    """The record of one task: probe accuracies, certificate, V-measure, distortion, rank, quality, time.

    Runs with one BLAS and OpenMP thread, as a sweep's workers do (:mod:`embdebias.sweep.worker`): the
    probes' products are small, and threads that wait for busy cores made one task 6x slower on a
    shared machine (2.6 s against 15 s for the baseline of a 30,000-word benchmark).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _measure(task)


def _measure(task: Task) -> dict:
    from ..debias.certificate import max_cross_covariance
    from .._rows import unit_rows
    from .probes import cluster_v_measure, probe_accuracies
    from .protocol import probe_words

    t0 = time.perf_counter()
    emb = task.embedding()
    words = probe_words(labelled_words(emb, task.attribute, task.lists, task.seed), task.protocol, task.seed,
                        where=emb.name)
    record = {"method": task.method, "seed": task.seed, "protocol": task.protocol, "chance": words.chance,
              "n_fit": len(words.fit_rows), "n_probe_train": len(words.train_rows),
              "n_probe_test": len(words.test_rows)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_fit = time.perf_counter()
        est = None if task.estimator is None else build(task, emb).fit(emb)
        record["fit_seconds"] = time.perf_counter() - t_fit
        record.update(probe_accuracies(edited(est, emb, words.train_rows), words.train_labels,
                                       edited(est, emb, words.test_rows), words.test_labels, task.seed))
        test_x = edited(est, emb, words.test_rows)
        record["v_measure"] = cluster_v_measure(test_x, words.test_labels, task.seed)
        fit_x = edited(est, emb, words.fit_rows)
        record["certificate"] = max_cross_covariance(fit_x, words.fit_labels)
        record["certificate_unit"] = max_cross_covariance(unit_rows(fit_x, copy=True), words.fit_labels)
        record["distortion"] = distortion(est, emb)
        record["rank_removed"] = rank_removed(est, emb.dim)
        record.update(quality(est, emb, task) if task.quality else {})
    record["warnings"] = "; ".join(sorted({str(w.message) for w in caught}))
    record["seconds"] = time.perf_counter() - t0
    return record


def distortion(est, emb, *, written: bool = False) -> float:
    """Mean over a systematic sample of words (at most :data:`DISTORTION_WORDS`) of ``||r(x) - x||^2``,
    ``r(x)`` as the probes see it (:func:`edited`), or with ``written`` as the method writes it (unit rows
    for a method that scales them)."""
    if est is None:
        return 0.0
    rows = np.arange(0, len(emb), max(1, len(emb) // DISTORTION_WORDS))
    after = est.lazy_transform(emb).take(rows, dtype=np.float64) if written else edited(est, emb, rows)
    moved = after - emb.take(rows, dtype=np.float64)
    return float(np.mean(np.einsum("ij,ij->i", moved, moved)))


def rank_removed(est, dim: int) -> float:
    """Numerical rank of ``I - map_`` for a method that is one linear map (directions it edits; a soft
    map such as the conceptor's edits all of them a little); NaN for another method, 0 for none."""
    if est is None:
        return 0.0
    linear = getattr(est, "map_", None)
    if linear is None:
        return float("nan")
    return float(np.linalg.matrix_rank(np.eye(dim) - np.asarray(linear, dtype=np.float64)))


#: The quality figures a record keeps: ``{column: (metric, test, statistic)}`` of evaluate's report.
QUALITY = {"wordsim353": ("similarity", "wordsim353", "spearman"),
           "simlex999": ("similarity", "simlex999", "spearman"),
           "analogy": ("analogy", "google_analogy", "accuracy")}


def quality(est, emb, task: Task) -> dict:
    """The quality tests as :func:`~embdebias.evaluate.evaluate` computes them (no bootstrap), on the
    method's output embedding; an unscored test is NaN (its warning is in the record)."""
    from ..evaluate import evaluate

    column = task.method
    tested = emb if est is None else est.lazy_transform(emb, name=column)
    report = evaluate({column: tested}, tests=("similarity", "analogy"), bootstrap=0, trust=False,
                      random_state=task.seed, lists=task.lists)
    frame = report.to_frame()
    values = {(m, t, s): v for m, t, s, v in frame[["metric", "test", "statistic", "value"]].itertuples(index=False)}
    return {name: float(values.get(key, float("nan"))) for name, key in QUALITY.items()}


def run_tasks(tasks, *, dask: bool = False, scheduler: str | None = None, workers: int | None = None,
              progress=None, log=print) -> list[dict]:
    """The records of ``tasks`` in their order: one after another, or on Dask (``dask`` or a ``scheduler``)
    as a sweep runs its points (:func:`embdebias.sweep.run.dask_client`)."""
    if not (dask or scheduler):
        out = []
        for task in tasks:
            out.append(measure(task))
            if progress is not None:
                progress(task)
        return out
    from ..sweep.run import dask_available, dask_client

    if not dask_available():
        raise EmbdebiasError("benchmark: --dask needs the distributed package (pip install 'embdebias[sweep]')")
    with dask_client(scheduler, workers, log, who="benchmark") as client:
        shared = {}
        futures = []
        for task in tasks:
            if not isinstance(task.source, str):  # an embedding object: sent to the workers once
                key = id(task.source)
                if key not in shared:
                    shared[key] = client.scatter(task.source, broadcast=True)
                futures.append(client.submit(_measure_on, shared[key], task, pure=False))
            else:
                futures.append(client.submit(measure, task, pure=False))
        out = []
        for task, future in zip(tasks, futures):
            out.append(future.result())
            if progress is not None:
                progress(task)
        return out


def _measure_on(embedding, task: Task) -> dict:
    from dataclasses import replace

    return measure(replace(task, source=embedding))
