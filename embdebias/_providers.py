"""Functions a lower layer calls and a higher layer provides (the layers' one inversion).

:mod:`embdebias.embedding` and :mod:`embdebias.vocab` sit below :mod:`embdebias.io` in the
layers (io builds embeddings and vocabularies), yet ``Embedding.save``,
``Vocabulary.from_native`` and ``Vocabulary.write_native`` write and open files with io's
functions. They call the function provided here under a name and never import io. The
package's ``__init__``, the composition root that runs before any module of the package,
provides io's functions, each importing io when first called (so ``import embdebias``
stays light).
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
        raise LookupError(f"nothing provides {name!r}: it is provided when the embdebias package is "
                          f"imported") from None
