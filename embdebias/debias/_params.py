"""Fitted parameters of a debiaser in one ``.npz`` file, without pickle.

The file holds every fitted array (attributes ending in ``_``) as an npz member, and
one member ``__meta__``: UTF-8 JSON with the format tag, the estimator's class, its
dimension, its constructor parameters that JSON can hold and its other fitted
attributes. It is read with ``allow_pickle=False``: a file that needs pickle is refused.
A fitted :class:`~embdebias.subspace.BiasSubspace` attribute is stored as its
``components_``; a frozenset as a sorted list.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .._atomic import atomic_file
from ..errors import DimensionError, ParamsFileError

FORMAT = "embdebias-debiaser-params"
VERSION = 1
META = "__meta__"
#: Largest ``__meta__`` member read (the JSON is small; a huge one is a damaged or hostile file).
MAX_META_BYTES = 64 << 20


def _class_path(est) -> str:
    cls = type(est)
    return f"{cls.__module__}:{cls.__qualname__}"


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _fitted_state(est) -> tuple[dict, dict, dict]:
    """``(arrays, json values, kinds)`` of the fitted attributes of ``est``."""
    from ..subspace import BiasSubspace

    arrays, values, kinds = {}, {}, {}
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_") or name in est._transient or name in est._fit_context:
            continue
        if isinstance(value, BiasSubspace):
            arrays[name] = np.asarray(value.components_)
            kinds[name] = "subspace"
        elif isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, (frozenset, set)):
            values[name] = sorted(value)
            kinds[name] = "frozenset"
        elif isinstance(value, np.generic):
            values[name] = value.item()
        elif _jsonable(value):
            values[name] = value
        else:
            raise ParamsFileError(f"{type(est).__name__}.{name} ({type(value).__name__}) cannot be saved "
                                  f"without pickle")
    return arrays, values, kinds


def save_params(est, path) -> str:
    """Write the fitted parameters of ``est`` to ``path`` (``.npz``); returns the path written."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    arrays, values, kinds = _fitted_state(est)
    for name, array in arrays.items():
        if array.dtype == object:
            raise ParamsFileError(f"{type(est).__name__}.{name} is an object array: it cannot be saved without pickle")
    params = {k: v for k, v in est.get_params(deep=False).items() if _jsonable(v)}
    meta = {"format": FORMAT, "version": VERSION, "estimator": _class_path(est),
            "n_features_in": int(est.n_features_in_), "params": params, "attributes": values, "kinds": kinds}
    path = Path(path)
    # atomic, through a temporary of its own: two writers of one file never mix their parts
    with atomic_file(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays, **{META: np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)})
    return str(path)


def _read(path) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a parameter file; a damaged one raises :class:`ParamsFileError`."""
    if not Path(path).is_file():
        raise ParamsFileError(f"{path}: no such parameter file")
    if not zipfile.is_zipfile(path):  # np.load would take it for a pickle
        raise ParamsFileError(f"{path}: not a parameter file (expected the .npz archive save_params writes)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if META not in npz.files:
                raise ParamsFileError(f"{path}: not an embdebias parameter file (no {META} member)")
            raw = npz[META]
            if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > MAX_META_BYTES:
                raise ParamsFileError(f"{path}: {META} is not a JSON byte string")
            meta = json.loads(raw.tobytes().decode("utf-8"))
            arrays = {name: npz[name] for name in npz.files if name != META}
    except ParamsFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, UnicodeDecodeError, KeyError) as exc:
        raise ParamsFileError(f"{path}: damaged parameter file ({type(exc).__name__}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ParamsFileError(f"{path}: not an embdebias parameter file (format {meta.get('format')!r} "
                              f"if any, expected {FORMAT!r})" if isinstance(meta, dict) else f"{path}: bad {META}")
    if meta.get("version") != VERSION:
        raise ParamsFileError(f"{path}: parameter file version {meta.get('version')!r}, this embdebias reads {VERSION}")
    return meta, arrays


def load_params(est, path, *, dim: int | None = None):
    """Set the fitted parameters of ``est`` from ``path`` (written by :func:`save_params`); returns ``est``.

    Refused with :class:`ParamsFileError`: a damaged file, one of another estimator class.
    Refused with :class:`~embdebias.errors.DimensionError`: a file of another dimension than
    ``dim`` (or than ``est``'s own, if it is already fitted).
    """
    from ..subspace import BiasSubspace

    meta, arrays = _read(path)
    if meta.get("estimator") != _class_path(est):
        raise ParamsFileError(f"{path}: parameters of {meta.get('estimator')!r}, not of {_class_path(est)!r}")
    n = meta.get("n_features_in")
    expected = dim if dim is not None else getattr(est, "n_features_in_", None)
    if not isinstance(n, int) or (expected is not None and n != expected):
        raise DimensionError(f"{path}: parameters fitted on {n}-d vectors, expected {expected}-d")
    try:
        valid = set(est.get_params(deep=False))
        est.set_params(**{k: v for k, v in meta.get("params", {}).items() if k in valid})
        kinds = meta.get("kinds", {})
        for name, value in meta.get("attributes", {}).items():
            setattr(est, name, frozenset(value) if kinds.get(name) == "frozenset" else value)
        for name, array in arrays.items():
            setattr(est, name, BiasSubspace.from_components(array) if kinds.get(name) == "subspace" else array)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ParamsFileError(f"{path}: parameters do not fit {type(est).__name__} ({exc})") from None
    est.n_features_in_ = n
    est._check_loaded(path)
    return est


def describe(path) -> dict:
    """The ``__meta__`` of a parameter file (what it holds, without loading it into an estimator)."""
    meta, arrays = _read(path)
    return {**meta, "arrays": {k: list(v.shape) for k, v in arrays.items()}}


__all__ = ["save_params", "load_params", "describe"]
