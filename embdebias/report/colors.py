"""One colour per method in every figure of a run and of a sweep.

A method's colour comes from its place in the debiasers' table
(:data:`~embdebias.debias.table.DEBIASERS`), not from its place among the columns drawn, so
``weat.png``, ``tradeoff.png`` and a sweep's ``tradeoff.png`` colour it the same. The original
(the first column, a sweep's baseline) is always the same neutral grey, which no method has;
a column that is not a method (a user's own name) takes a palette colour from its name.
"""

from __future__ import annotations

import zlib

#: The original's colour: a neutral grey no method has.
ORIGINAL_COLOR = "#8a8a8a"
#: Saturated colours, neither grey nor near-black (tab10's, then tab20's lighter ones, without greys).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")
#: Names that stand for the original embedding (a run's first column, a sweep's baseline).
ORIGINAL_NAMES = ("original", "none")


def method_color(name: str, original: str | None = None) -> str:
    """The colour of column (or sweep method) ``name``; ``original`` names the run's first column."""
    from ..debias.table import DEBIASERS

    if name == original or name in ORIGINAL_NAMES:
        return ORIGINAL_COLOR
    order = list(DEBIASERS)
    index = order.index(name) if name in order else len(order) + zlib.crc32(str(name).encode())
    return PALETTE[index % len(PALETTE)]


def method_colors(names, original: str | None = None) -> dict:
    """``{name: colour}`` of several columns (:func:`method_color`)."""
    return {name: method_color(name, original) for name in names}
