"""Many audits at once: embeddings x attributes x methods x parameter grids, on Dask (``embdebias sweep``).

* :mod:`.config`: the TOML configuration, checked with one-line errors naming the key;
* :mod:`.points`: the grid, each point keyed by a hash of its inputs;
* :mod:`.run`: the executor (a Dask cluster, or one point after another without Dask);
* :mod:`.store`: one file per finished point, so nothing finished is lost;
* :mod:`.summary`: the tidy table (Parquet, CSV) and ``summary.md`` with its four figures.

Every point reuses the project's estimators (:func:`embdebias.debias.make_debiaser`'s
table) and :func:`embdebias.evaluate.evaluate`.
"""

from __future__ import annotations

from pathlib import Path

from .config import ATTRIBUTES, BASELINE, SweepConfig, load_config, with_attributes

__all__ = ["ATTRIBUTES", "BASELINE", "SweepConfig", "load_config", "sweep"]

#: Where :func:`sweep` writes unless told otherwise.
DEFAULT_OUT_DIR = "embdebias-sweep"
#: The subdirectory of the output directory holding the embeddings of ``save``'s methods.
SAVED_DIR = "embeddings"


def sweep(config, out_dir=DEFAULT_OUT_DIR, *, scheduler: str | None = None, workers: int | None = None,
          serial: bool = False, progress: bool = False, log=print, attributes=None):
    """Run every point of ``config`` and return the tidy long table (a pandas DataFrame).

    Parameters
    ----------
    config : path, dict or SweepConfig
        The sweep (see :mod:`embdebias.sweep.config`).
    out_dir : path
        Where each finished point is stored (``points/KEY.json``) as it completes, and
        the table (``sweep.parquet``, ``sweep.csv``), ``summary.md`` and its figures at
        the end. Points already stored there with the same key are not run again.
    scheduler : str, optional
        The address of a running Dask scheduler (``tcp://host:8786``); its workers must
        see the embeddings at the same paths. Default: a local cluster.
    workers : int, optional
        Worker processes of the local cluster (default: one per core).
    serial : bool
        Run the points one after another in this process (as without Dask installed).
    progress : bool
        A progress bar over the points.
    log : callable
        Receives one line per stage.
    attributes : str or sequence, optional
        Audit these attributes instead of the configuration's (bundled names or JSON files,
        a comma-separated string or a list), as ``embdebias sweep --attribute``.

    Raises
    ------
    EmbdebiasError
        A bad configuration (one line naming the key), before any point runs.
    """
    from tqdm.auto import tqdm

    from .._lock import output_lock
    from .._outdir import inside
    from . import run, store, summary
    from .points import make_points

    try:
        import pandas  # noqa: F401  (the table)
    except ImportError:
        raise ImportError("embdebias.sweep needs pandas: pip install 'embdebias[dask]' (or 'embdebias[pandas]' "
                          "to run serially)") from None
    cfg = load_config(config)
    if attributes is not None:
        cfg = with_attributes(cfg, attributes)
    out_dir = Path(out_dir)
    with output_lock(out_dir, purpose="sweep", inside=True):
        # the saved embeddings' directory is resolved to an absolute path for the workers: never through a link
        points = make_points(cfg, str(inside(out_dir, SAVED_DIR, directory=True).resolve()) if cfg.save else None)
        done = store.finished(store.read_points(out_dir))
        todo = [p for p in points if p.key not in done]
        log(f"[sweep] {len(points)} points: {len(points) - len(todo)} already finished, {len(todo)} to run")
        with tqdm(total=len(points), initial=len(points) - len(todo), disable=not progress, unit="point",
                  desc="sweep") as bar:
            if todo and not serial and run.dask_available():
                run.run_dask(todo, out_dir, bar, scheduler=scheduler, workers=workers, log=log)
            elif todo:
                if not serial:
                    log("[sweep] Dask is not installed (pip install 'embdebias[dask]'): running the points "
                        "one after another in this process")
                run.run_serial(todo, out_dir, bar)
        records = store.read_points(out_dir)
        frame = summary.to_frame([records[p.key] for p in points if p.key in records])
        path = summary.write_summary(frame, out_dir)
    log(f"[sweep] {out_dir / 'sweep.parquet'}, {path}")
    return frame
