"""Moved to :mod:`embdebias.evaluate` (and the report to :mod:`embdebias.report`); this name
stays importable for the callers not yet moved (the CLI, the run, the benchmarks)."""

from .evaluate import DEFAULT_SUITE, UnscoredWarning, evaluate, suite_options
from .report import Report

__all__ = ["DEFAULT_SUITE", "Report", "UnscoredWarning", "evaluate", "suite_options"]
