"""Reports: the evaluation's model (:class:`Report`, cells with their intervals), its Markdown
and JSON (with the bulk arrays in Parquet beside it), and the figures."""

from __future__ import annotations

from .model import Cell, Report

__all__ = ["Cell", "Report"]
