"""The ``embdebias`` command: a thin layer over the Python API (``main()`` and ``build_parser()``).

Every subcommand (one module each in this package) parses its arguments, calls one API
function and prints the result. Errors from bad input
(:class:`embdebias.errors.EmbdebiasError`, missing files) and bad options become one
line on stderr and exit status 2, without a traceback.

Interrupts: Ctrl-C (SIGINT) and SIGTERM unwind the command like an exception, so every
temporary file is removed and every output is either complete or untouched; the exit
status is then 130 (SIGINT) or 143 (SIGTERM), as a shell reports for a killed process.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import warnings

from ..errors import EmbdebiasError
from . import (benchmark, cda, convert, debias, expand, fairness, info, plot, reliability, run, score, share, sweep,
               train)
from ._common import DEFAULT, FORMATS_TEXT, Printer, one_line as _one_line

#: The subcommands in ``--help`` order, each a module with ``add_parser(sub, parents)``.
COMMANDS = (debias, convert, info, expand, score, plot, run, share, cda, train, fairness, sweep, benchmark,
            reliability)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit status 2), like every other error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = Parser(
        prog="embdebias",
        description="Measure and remove gender bias in static word embeddings. "
                    f"INPUT is a vector file ({FORMATS_TEXT}) or '{DEFAULT}' (the built-in GloVe 6B 50d).")
    parser.add_argument("--version", action="version", version=f"embdebias {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")
    # --quiet is accepted before or after the subcommand; SUPPRESS keeps a subcommand
    # that was not given it from resetting the top-level value.
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bars or messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub, [quiet])
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that cleanup runs as for Ctrl-C (exit status 143)."""


def _on_sigterm(signum, frame):
    # A second SIGTERM must not cut the cleanup of the first short (SIGKILL still works).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


def _handle_sigterm():
    """Install :func:`_on_sigterm` and return the handler it replaces (None: not installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _on_sigterm)


def main(argv=None) -> int:
    try:  # Ctrl-C while the arguments are parsed ends like one later: one line, no traceback
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    say = Printer(args.quiet)
    previous = _handle_sigterm()
    try:
        # Warnings become one line each (or nothing with --quiet) inside this call only:
        # catch_warnings restores the caller's filters and showwarning afterwards.
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore")
            else:
                warnings.showwarning = lambda msg, cat, *a, **k: say(f"warning: {msg}")
            return _run(args, say)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args, say) -> int:
    try:
        return args.func(args, say)
    except EmbdebiasError as exc:
        print(f"embdebias: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``embdebias info x | head``): not an error of ours.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # missing files, permissions, a full disk, ...
        print(f"embdebias: error: {_os_error(exc, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return _interrupted(exc)


#: The arguments that name the files a command reads or writes, in the order they are listed.
_FILE_ARGUMENTS = ("input", "inputs", "corpus", "scores", "output", "out", "out_dir", "json_stats")


def _os_error(exc: OSError, args) -> str:
    """An OS error as one line naming its file: the error's own (the writers set the output's), else
    the files the command names, since the system said nothing more."""
    if exc.filename:
        return _one_line(f"{exc.filename}: {exc.strerror or exc}")
    names = []
    for name in _FILE_ARGUMENTS:
        value = getattr(args, name, None)
        names += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    where = f" (the command's files: {', '.join(names)})" if names else ""
    return _one_line(f"{exc.strerror or exc}{where}")


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Say how the command was stopped, and how to resume where a command can (``run`` sets the
    exception's ``resume_hint``); its exit status (143 for SIGTERM, 130 for Ctrl-C)."""
    terminated = isinstance(exc, Terminated)
    hint = getattr(exc, "resume_hint", None)
    print(f"embdebias: {'terminated' if terminated else 'interrupted'}" + (f"; {hint}" if hint else ""),
          file=sys.stderr)
    return 143 if terminated else 130

