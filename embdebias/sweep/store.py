"""Where a sweep's finished points live: one small JSON file per point, ``points/KEY.json``.

A point is written (atomically, :func:`embdebias._atomic.atomic_file` through
``pipeline.state.write_json``) the moment its result reaches the client, so Ctrl-C, a
lost client or a crash keeps every point finished before it. A re-run reads the
directory and skips every point whose key has a result; a point that failed (its record
holds ``error``) is tried again, since its cause may have been passing (a full disk, a
lost worker).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..pipeline.state import write_json

POINTS_DIR = "points"


def point_path(out_dir, key: str) -> Path:
    return Path(out_dir) / POINTS_DIR / f"{key}.json"


def write_point(out_dir, record: dict) -> Path:
    """Store one point's record (its ``key`` names the file)."""
    path = point_path(out_dir, record["key"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, record)
    return path


def read_points(out_dir) -> dict:
    """``{key: record}`` of every stored point (an unreadable file counts as not finished)."""
    directory = Path(out_dir) / POINTS_DIR
    out = {}
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("key") == path.stem:
            out[path.stem] = record
    return out


def finished(records: dict) -> dict:
    """The records of points that succeeded (a failed one is run again)."""
    return {k: r for k, r in records.items() if not r.get("error")}
