"""Reports: the evaluation's model (:class:`Report`, cells with their intervals), its Markdown
and JSON (with the bulk arrays in Parquet beside it), and the figures.

This ``__init__`` is the report's composition root: the model (:mod:`.model`) imports no
renderer, the renderers (:mod:`.json`, :mod:`.markdown`) import the model, and
``Report.to_json``, ``to_markdown`` and the others call the renderers' functions provided
here (:mod:`embdebias._providers`), each importing its renderer when first called.
"""

from __future__ import annotations

from .. import _providers
from .model import Cell, Report

__all__ = ["Cell", "Report"]


def _to_dict(report, *, bulk=None):
    from .json import to_dict

    return to_dict(report, bulk=bulk)


def _from_dict(data, bulk=None):
    from .json import from_dict

    return from_dict(data, bulk=bulk)


def _to_json(report, path, *, indent=2, inputs=()):
    from .json import to_json

    return to_json(report, path, indent=indent, inputs=inputs)


def _from_json(path):
    from .json import from_json

    return from_json(path)


def _to_markdown(report, *, digits=3, missing=True, summary=True):
    from .markdown import to_markdown

    return to_markdown(report, digits=digits, missing=missing, summary=summary)


def _summary(report):
    from .summary import first_screen

    columns = ", ".join(report.embeddings)
    return "\n".join([f"Report of {len(report.embeddings)} embedding(s) ({columns}), {len(report.rows)} rows", "",
                      *first_screen(report),
                      "Every table, the verdict and the out-of-vocabulary words: report.to_markdown()."])


def _to_html(report):
    from .markdown import to_html

    return to_html(report)


_providers.provide("report to dict", _to_dict)
_providers.provide("report from dict", _from_dict)
_providers.provide("report to json", _to_json)
_providers.provide("report from json", _from_json)
_providers.provide("report to markdown", _to_markdown)
_providers.provide("report to html", _to_html)
_providers.provide("report summary", _summary)
