"""A run's output directory as the share renderers read it: its ``report.json``, the command that repeats
it, and its Markdown report rendered again (for :mod:`embdebias.report.html` and :mod:`.card`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ReportFileError


def read_run(run_dir) -> dict:
    """The ``report.json`` of the run in ``run_dir``, checked to be one (a single attribute's).

    Raises
    ------
    ReportFileError
        ``run_dir`` has no ``report.json``, it is not JSON, or it is not a run's report.
    """
    path = Path(run_dir) / "report.json"
    if not path.is_file():
        raise ReportFileError(path, "no such file; expected the report.json that 'embdebias run' writes "
                                    "in its --out-dir")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportFileError(path, f"not JSON ({exc}); expected the report.json of 'embdebias run'") from None
    if not isinstance(meta, dict):
        raise ReportFileError(path, "expected a JSON object (the report.json of 'embdebias run')")
    if "attributes" in meta and "evaluation" not in meta:
        names = ", ".join(meta["attributes"])
        raise ReportFileError(path, f"a run of several attributes ({names}); give the directory of one of them "
                                    f"(e.g. {Path(run_dir) / next(iter(meta['attributes']))})")
    missing = [k for k in ("evaluation", "embedding", "parameters", "versions") if k not in meta]
    if missing:
        raise ReportFileError(path, f"no {', '.join(missing)} key(s); expected the report.json of 'embdebias run'")
    return meta


def run_command(run_dir, meta: dict) -> list[str]:
    """The command that repeats the run: ``report.json``'s, else the reproduce line of an older
    run's ``report.md``, else ``embdebias run --out-dir DIR``."""
    if meta.get("command"):
        return list(meta["command"])
    md = Path(run_dir) / "report.md"
    if md.is_file():
        found = re.search(r"^- reproduce: `([^`]*)`", md.read_text(encoding="utf-8"), re.M)
        if found:
            return found.group(1).split(" ")
    return ["embdebias", "run", "--out-dir", "DIR"]


def render_run_markdown(run_dir, meta: dict) -> str:
    """The run's Markdown report, rendered again from its ``report.json``."""
    from .run import render_report

    return render_report({k: v for k, v in meta.items() if k != "evaluation"}, meta["evaluation"],
                         run_command(run_dir, meta))
