"""embdebias: measure and remove gender bias in static word embeddings.

The top-level names are imported lazily, so ``import embdebias`` (and the CLI's
start-up) does not pay for scikit-learn, cvxpy or matplotlib until they are used.

This module is also the composition root of the layers (``[tool.importlinter]`` in
``pyproject.toml``): it provides ``Embedding.save`` and the native vocabulary files with
io's functions (:mod:`embdebias._providers`), which embedding and vocab may not import.
"""

from __future__ import annotations

import importlib
import sys
import types

from . import _providers

__version__ = "0.1.0"

_EXPORTS = {
    "Embedding": ".embedding",
    "as_embedding": ".embedding",
    "load": ".io",
    "save": ".io",
    "detect_format": ".io",
    "load_default": ".io",
    "Attribute": ".data.attributes",
    "load_attribute": ".data.attributes",
    "BiasSubspace": ".subspace",
    # Every estimator of embdebias.debias.DEBIASERS (tests/test_debiaser_table.py checks it).
    "HardDebias": ".debias",
    "SoftDebias": ".debias",
    "INLP": ".debias",
    "RLACE": ".debias",
    "DoubleHardDebias": ".debias",
    "HalfSiblingRegression": ".debias",
    "RANDebias": ".debias",
    "OSCaR": ".debias",
    "LEACE": ".debias",
    "SAL": ".debias",
    "ConceptorNegation": ".debias",
    "expand_gender_specific": ".debias",
    "evaluate": ".evaluate",
    "sweep": ".sweep",
    "erasure_benchmark": ".benchmark",
    "Report": ".report",
    "train_embedding": ".train",
    "EmbdebiasError": ".errors",
    "VectorFileError": ".errors",
    "MissingWordsError": ".errors",
    "CorpusError": ".errors",
    "CounterfactualAugmenter": ".cda",
    "wordlists": ".data.wordlists",
}

__all__ = sorted(_EXPORTS)


def _save_embedding(embedding, path, format=None, **kwargs):
    from .io import save

    return save(embedding, path, format=format, **kwargs)


def _open_native_vocabulary(directory):
    from .io.native import open_vocabulary

    return open_vocabulary(directory)


def _write_native_vocabulary(words, directory):
    from .io.native import write_vocabulary

    return write_vocabulary(words, directory)


# embedding and vocab are below io in the layers: they reach io's writers and readers
# through these providers (embdebias._providers), which import io when first called.
_providers.provide("save embedding", _save_embedding)
_providers.provide("open native vocabulary", _open_native_vocabulary)
_providers.provide("write native vocabulary", _write_native_vocabulary)


class _Package(types.ModuleType):
    """Keeps an exported name bound to its function when a submodule of the same name is
    imported (``embdebias.evaluate`` is both the function and the module defining it: the
    import system sets the package attribute to the module; this puts the function back)."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == "." + name and name != "wordlists":
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(_EXPORTS[name], __name__)
        value = module if name == "wordlists" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'embdebias' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
