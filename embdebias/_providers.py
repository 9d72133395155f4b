"""Functions a lower module calls and a higher one provides (the layers' inversions).

:mod:`embdebias.embedding` and :mod:`embdebias.vocab` sit below :mod:`embdebias.io` in the
layers (io builds embeddings and vocabularies), yet ``Embedding.save``,
``Vocabulary.from_native`` and ``Vocabulary.write_native`` write and open files with io's
functions. They call the function provided here under a name and never import io. The
package's ``__init__``, the composition root that runs before any module of the package,
provides io's functions, each importing io when first called (so ``import embdebias``
stays light).

Inside :mod:`embdebias.report` likewise: the model (``report/model.py``) is below its
renderers (``json.py``, ``markdown.py`` build and read reports), yet ``Report.to_json``,
``Report.to_markdown`` and the others render; ``report/__init__.py`` provides the
renderers' functions ("report to markdown", ...), so no import circle joins the modules.
"""

from __future__ import annotations

from collections.abc import Callable

_PROVIDED: dict[str, Callable] = {}


def provide(name: str, function: Callable) -> None:
    """Make ``function`` the provider of ``name`` (a later call replaces it)."""
    _PROVIDED[name] = function


def provided(name: str) -> Callable:
    """The function provided under ``name``."""
    try:
        return _PROVIDED[name]
    except KeyError:
        raise LookupError(f"nothing provides {name!r}: it is provided when its package (embdebias, "
                          f"embdebias.report) is imported") from None
