"""``embdebias run``: the main job (:func:`embdebias.pipeline.run_pipeline`).

Its options are those of :class:`embdebias.pipeline.RunOptions` and of the methods of
:data:`embdebias.debias.DEBIASERS`; nothing is listed here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import EmbdebiasError
from ._common import DEFAULT, prepare_output
from .score import EXIT_STATUS, UNSCORABLE

#: A report.json larger than this is not looked into for its input (a real one is some 100 kB).
MAX_REPORT_BYTES = 64 << 20


def add_parser(sub, parents) -> None:
    from ..pipeline.options import add_arguments

    p = sub.add_parser("run", parents=parents,
                       help="the main job: debias with every chosen method, evaluate, plot, report",
                       description="Debias INPUT with every chosen method, score the original and every "
                                   "result, plot the occupations and write report.md and report.json into "
                                   "--out-dir. A re-run of the same command resumes: finished steps are "
                                   "reused, an interrupted run continues from embdebias-partial/.",
                       epilog=EXIT_STATUS)
    p.add_argument("input", nargs="?", default=DEFAULT, help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--out-dir", required=True,
                   help="directory for every output (a re-run into it reuses the finished steps)")
    add_arguments(p)
    p.set_defaults(func=run_run)


def run_run(args, say) -> int:
    from ..pipeline import MARKER, STATE, run_pipeline
    from ..pipeline.options import from_namespace
    from ..pipeline.outputs import PARTIAL

    options = from_namespace(args)  # bad options fail here, before anything is checked on disk
    # Re-running into the same directory resumes it: no --force needed. run_pipeline then
    # checks every file of its output plan before any work.
    prepare_output(args, args.out_dir, say, resumable=(MARKER, STATE))
    check_same_input(args.input, args.out_dir, force=args.force)
    try:  # progress bars only on a terminal: never written into a log file
        report = run_pipeline(args.input, args.out_dir, options=options, log=say,
                              progress=not args.quiet and sys.stderr.isatty())
    except KeyboardInterrupt as exc:
        partial = Path(args.out_dir) / PARTIAL
        if partial.is_dir():  # say it only where there is something to resume from
            exc.resume_hint = f"run the same command again to resume from {partial}"
        raise
    say(f"done: {report}")
    from ..pipeline.outputs import run_scored

    if not run_scored(args.out_dir):
        say(f"nothing could be scored: see the first line of {report}")
        return UNSCORABLE
    return 0


def recorded_input(out_dir) -> str | None:
    """The input whose results ``out_dir`` holds (``report.json``'s ``input.source``), or None."""
    from .._outdir import is_own_file

    path = Path(out_dir) / "report.json"
    try:
        # a link planted there (to /dev/zero, whose size is 0) is never read; the run's plan refuses it
        if not is_own_file(path) or path.stat().st_size > MAX_REPORT_BYTES:
            return None
        source = json.loads(path.read_text(encoding="utf-8")).get("input", {}).get("source")
    except (OSError, ValueError, AttributeError):  # none, unreadable or damaged: nothing to protect
        return None
    return source if isinstance(source, str) else None


def check_same_input(source, out_dir, *, force: bool) -> None:
    """A directory holding another input's results is replaced only with ``--force``."""
    from ..pipeline import input_identity

    recorded = recorded_input(out_dir)
    if recorded is None or force:
        return
    try:
        current = input_identity(source)["source"]
    except OSError:  # a missing input: run_pipeline names it
        return
    if current != recorded:
        raise EmbdebiasError(f"{out_dir}: holds the results of another input ({recorded}), not of {current}; "
                             f"choose another --out-dir, or give --force to replace them")
