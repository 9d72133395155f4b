"""Where a sweep's finished points live: one small JSON file per point, ``points/KEY.json``.

A point is written (atomically, :func:`embdebias._atomic.atomic_file` through
``pipeline.state.write_json``) the moment its result reaches the client, so Ctrl-C, a
lost client or a crash keeps every point finished before it. A re-run reads the
directory and skips every point whose key has a result; a point that failed (its record
holds ``error``) is tried again, since its cause may have been passing (a full disk, a
lost worker). ``points/`` and the files in it are never followed through a link planted
there (:mod:`embdebias._outdir`): a link at ``points`` is an error before any point runs, a
link in it is not a stored point.
"""

from __future__ import annotations

import json
from pathlib import Path

from .._outdir import check_name, inside, is_own_file, make_dirs
from ..pipeline.state import write_json

POINTS_DIR = "points"
#: A stored point is a few kB (its rows); a larger file there is not one (it is never read).
MAX_POINT_BYTES = 16 << 20


def point_path(out_dir, key: str) -> Path:
    """``out_dir/points/KEY.json``: ``points`` never a link (:mod:`embdebias._outdir`), ``KEY`` a name
    under the output-name rule (a point's key is a hex digest)."""
    return inside(out_dir, POINTS_DIR, f"{check_name(key, 'sweep point key')}.json")


def write_point(out_dir, record: dict) -> Path:
    """Store one point's record (its ``key`` names the file)."""
    make_dirs(out_dir, POINTS_DIR)
    path = point_path(out_dir, record["key"])
    write_json(path, record)
    return path


def read_points(out_dir) -> dict:
    """``{key: record}`` of every stored point (an unreadable file, a link or a file over
    :data:`MAX_POINT_BYTES` counts as not finished).

    Raises
    ------
    EmbdebiasError
        ``points`` is a link or not a directory (:func:`embdebias._outdir.inside`).
    """
    directory = inside(out_dir, POINTS_DIR, directory=True)
    out = {}
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
        if not is_own_file(path) or path.stat().st_size > MAX_POINT_BYTES:
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("key") == path.stem:
            out[path.stem] = record
    return out


def finished(records: dict) -> dict:
    """The records of points that succeeded (a failed one is run again)."""
    return {k: r for k, r in records.items() if not r.get("error")}
