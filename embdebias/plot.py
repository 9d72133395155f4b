"""Moved to :mod:`embdebias.report.figures`; this name stays importable for the CLI and the run."""

from .report.figures import FORMATS, occupation_figure, occupation_projections, plot_occupations

__all__ = ["FORMATS", "occupation_figure", "occupation_projections", "plot_occupations"]
