"""``embdebias run``: the main job (:func:`embdebias.pipeline.run_pipeline`).

Its options are those of :class:`embdebias.pipeline.RunOptions` and of the methods of
:data:`embdebias.debias.DEBIASERS`; nothing is listed here.
"""

from __future__ import annotations

from ._common import DEFAULT, prepare_output
from .score import EXIT_STATUS, UNSCORABLE


def add_parser(sub, parents) -> None:
    from ..pipeline.options import add_arguments

    p = sub.add_parser("run", parents=parents,
                       help="the main job: debias with every chosen method, evaluate, plot, report",
                       epilog=EXIT_STATUS)
    p.add_argument("input", nargs="?", default=DEFAULT, help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--out-dir", required=True,
                   help="directory for every output (a re-run into it reuses the finished steps)")
    add_arguments(p)
    p.set_defaults(func=run_run)


def run_run(args, say) -> int:
    from ..pipeline import MARKER, STATE, run_pipeline
    from ..pipeline.options import from_namespace

    options = from_namespace(args)  # bad options fail here, before anything is checked on disk
    # Re-running into the same directory resumes it: no --force needed. run_pipeline then
    # checks every file of its output plan before any work.
    prepare_output(args, args.out_dir, say, resumable=(MARKER, STATE))
    import sys

    # progress bars only on a terminal: never written into a log file
    report = run_pipeline(args.input, args.out_dir, options=options, log=say,
                          progress=not args.quiet and sys.stderr.isatty())
    say(f"done: {report}")
    from pathlib import Path

    from ..pipeline.outputs import EVALUATION_FILE
    from ..report import Report
    from ..report.summary import scored

    if not scored(Report.from_json(Path(args.out_dir) / EVALUATION_FILE)):
        say(f"nothing could be scored: see the first line of {report}")
        return UNSCORABLE
    return 0
