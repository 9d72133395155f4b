"""The figures' class: a matplotlib figure that a notebook displays.

The report's figures are drawn without pyplot (no global state, no GUI backend), so Jupyter's
inline backend, which registers its display hook only once pyplot is imported, shows nothing for
them. :class:`ReportFigure` carries its own ``_repr_png_``: the last expression of a cell that is
one (``occupation_figure(...)``, or ``fig`` on its own line) is displayed as a PNG, with or without
pyplot, and ``fig.savefig`` works as for any figure.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure


class ReportFigure(Figure):
    """A :class:`matplotlib.figure.Figure` that IPython and Jupyter display (as PNG, at 100 dpi).

    ``info``: the facts the figure's caption function reads (a dict; empty unless the figure
    function sets it).
    """

    info: dict = {}

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        return buffer.getvalue()
