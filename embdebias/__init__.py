"""embdebias: measure and remove gender bias in static word embeddings.

The top-level names are imported lazily, so ``import embdebias`` (and the CLI's
start-up) does not pay for scikit-learn, cvxpy or matplotlib until they are used.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

_EXPORTS = {
    "Embedding": ".embedding",
    "as_embedding": ".embedding",
    "load": ".io",
    "save": ".io",
    "detect_format": ".io",
    "load_default": ".io",
    "BiasSubspace": ".subspace",
    "HardDebias": ".debias",
    "SoftDebias": ".debias",
    "expand_gender_specific": ".debias",
    "evaluate": ".evaluate",
    "Report": ".report",
    "train_embedding": ".train",
    "EmbdebiasError": ".errors",
    "VectorFileError": ".errors",
    "MissingWordsError": ".errors",
    "CorpusError": ".errors",
    "CounterfactualAugmenter": ".cda",
    "wordlists": ".wordlists",
}

__all__ = sorted(_EXPORTS)


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
