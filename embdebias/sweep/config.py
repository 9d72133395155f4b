"""A sweep's configuration: a TOML file (read with :mod:`tomllib`) or a dict of the same shape.

::

    suite = ["direct_bias", "weat", "similarity"]   # metrics (default: evaluate's suite)
    attributes = ["gender"]
    seeds = [0, 1]
    bootstrap = 200          # resamples of every interval (0: none)
    limit = 50000            # read only the first words of each embedding (an embedding's own limit wins)
    save = ["soft"]          # methods whose debiased embeddings are written (default: none)

    [[embeddings]]
    path = "runs/step-*.bin" # a file, a glob, or "glove-6b-50d"
    label = "checkpoint"     # optional
    order = 1000             # optional: a year, a step (a glob's files get their sorted index)
    limit = 20000            # optional

    [methods.soft]
    lam = [0.05, 0.2, 1.0]   # every parameter takes a list (its grid) or one value
    [methods.hard]

Every problem is one :class:`~embdebias.errors.EmbdebiasError` line naming the key
(``methods.soft.lam``, ``embeddings[1].path``): an unknown key, method, parameter or
attribute, an empty grid, a missing file, an embedding that is a FIFO or a device; and,
before the file is parsed or a grid expanded, a file that is not regular or is over
:data:`MAX_CONFIG_BYTES`, not UTF-8, nested over :data:`MAX_DEPTH`, with an integer beyond
64 bits, or a sweep of over :data:`MAX_POINTS` points.
"""

from __future__ import annotations

import glob
import itertools
import math
import numbers
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .._files import open_regular
from ..data.attributes import bundled_attributes
from ..errors import EmbdebiasError

#: The bundled attributes a sweep can measure by name (a user's attribute is its JSON file's path).
ATTRIBUTES = tuple(bundled_attributes())
#: The "method" of a point that evaluates the embedding as it is (every sweep's reference).
BASELINE = "none"

#: The largest configuration file read (a real one is a few hundred bytes).
MAX_CONFIG_BYTES = 1 << 20
#: The deepest nesting of tables and arrays (``methods.soft.lam`` is a list three tables down).
MAX_DEPTH = 8
#: The most points a sweep may have (embeddings x attributes x seeds x (1 + each method's grid));
#: every combination of a method's grid is checked by building its estimator before any work.
MAX_POINTS = 100_000

_TOP_KEYS = {"embeddings", "attributes", "methods", "suite", "seeds", "bootstrap", "limit", "save", "lists"}
_EMBEDDING_KEYS = {"path", "label", "order", "limit"}
# Estimator keywords a point sets itself (never a grid's).
_SET_BY_SWEEP = {"subspace", "lists", "random_state"}


@dataclass(frozen=True)
class EmbeddingSpec:
    """One embedding of the sweep: its path (or the built-in name), label and order value."""

    path: str
    label: str
    order: float | int | None = None
    limit: int | None = None


@dataclass(frozen=True)
class SweepConfig:
    """A checked sweep configuration (see the module's docs)."""

    embeddings: tuple
    methods: dict  # {method: {param: (values, ...)}}
    attributes: tuple = ("gender",)
    suite: tuple | None = None
    seeds: tuple = (0,)
    bootstrap: int = 200
    limit: int | None = None
    save: tuple = ()
    lists: str = "published"
    source: str = field(default="<dict>", compare=False)

    def grid(self, method: str) -> list[dict]:
        """Every parameter combination of ``method`` (one empty dict for a method without a grid)."""
        return _grid_points(self.methods[method])


def load_config(config) -> SweepConfig:
    """A :class:`SweepConfig` from a TOML path, a dict, or one already made.

    The file is read only if it is a regular file of at most :data:`MAX_CONFIG_BYTES` (a
    FIFO, a device such as ``/dev/zero`` or a directory is refused without being read) and
    must be UTF-8 TOML; tables and arrays may nest :data:`MAX_DEPTH` deep and integers must
    fit in 64 bits; the grid may have :data:`MAX_POINTS` points. Each is one line, before any work.
    """
    if isinstance(config, SweepConfig):
        return config
    if isinstance(config, dict):
        return parse_config(config, "<dict>", Path.cwd())
    path = Path(config)
    return parse_config(_read_toml(path), str(path), path.parent)


def _read_toml(path: Path) -> dict:
    """The parsed TOML of the configuration file ``path`` (see :func:`load_config` for the bounds)."""
    with open_regular(path, EmbdebiasError, "a sweep configuration") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(MAX_CONFIG_BYTES + 1)
    if max(size, len(data)) > MAX_CONFIG_BYTES:
        raise EmbdebiasError(f"{path}: {max(size, len(data)):,} bytes; a sweep configuration is at most "
                             f"{MAX_CONFIG_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EmbdebiasError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); TOML is UTF-8") from None
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EmbdebiasError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise EmbdebiasError(f"{path}: arrays or tables nested more than {MAX_DEPTH} deep") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise EmbdebiasError(f"{path}: an integer too long to read ({str(exc).split(';')[0]}); integers must fit "
                             f"in 64 bits") from None
    _check_values(parsed, str(path))
    return parsed


def _check_values(data: dict, source: str) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and integers beyond 64 bits, naming the key."""
    level = [(k, v) for k, v in data.items()]
    for depth in range(1, MAX_DEPTH + 2):
        below = []
        for key, value in level:
            if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
                _fail(source, key, f"the integer {str(value)[:20]}... does not fit in 64 bits")
            if isinstance(value, (dict, list)):
                if depth > MAX_DEPTH:
                    _fail(source, key, f"arrays or tables nested more than {MAX_DEPTH} deep")
                items = value.items() if isinstance(value, dict) else enumerate(value)
                below += [(f"{key}.{k}" if isinstance(value, dict) else f"{key}[{k}]", v) for k, v in items]
        if not below:
            return
        level = below


def with_attributes(config: SweepConfig, attributes) -> SweepConfig:
    """``config`` auditing ``attributes`` (names or files, comma-separated or a list) instead of its own."""
    import dataclasses

    items = [a.strip() for a in attributes.split(",")] if isinstance(attributes, str) else list(attributes)
    if not items:
        raise EmbdebiasError("attributes: name at least one attribute")
    return dataclasses.replace(config, attributes=tuple(_attribute(str(a), "--attribute", Path.cwd(), config.lists)
                                                        for a in items))


def _attribute(value: str, source: str, base: Path, lists) -> str:
    """A bundled attribute's name, or a user's attribute file (relative to ``base``) as an absolute path;
    read and checked now (its error names the file and key)."""
    from ..data.attributes import load_attribute

    if value in ATTRIBUTES:
        return value
    path = base / value
    if not (value.lower().endswith(".json") or path.is_file()):
        _fail(source, "attributes", f"unknown attribute {value!r}; bundled: {', '.join(ATTRIBUTES)}, or a JSON "
                                    f"attribute file")
    try:
        load_attribute(path, lists if isinstance(lists, str) else "published")
    except EmbdebiasError as exc:
        _fail(source, "attributes", str(exc))
    return str(path.resolve())


def _fail(source: str, key: str, message: str):
    raise EmbdebiasError(f"{source}: {key}: {message}")


def _list_of(data: dict, key: str, source: str, kind, default):
    """``data[key]`` as a non-empty tuple of ``kind`` (one value stands for a list of one)."""
    value = data.get(key, default)
    if value is None:
        return None
    values = tuple(value) if isinstance(value, list) else (value,)
    if not values:
        _fail(source, key, "is empty; give at least one value")
    for v in values:
        if not isinstance(v, kind) or (isinstance(v, bool) and kind is not object):
            _fail(source, key, f"expected {kind.__name__} values, got {v!r}")
    return values


def _count(data: dict, key: str, source: str, default, least: int):
    value = data.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
        _fail(source, key, f"expected an integer >= {least}, got {value!r}")
    return value


def parse_config(data: dict, source: str, base: Path) -> SweepConfig:
    """Check ``data`` (a parsed TOML document); relative paths are taken from ``base``."""
    from ..debias import DEBIASERS
    from ..evaluate import DEFAULT_SUITE

    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        _fail(source, unknown[0], f"unknown key; known keys: {', '.join(sorted(_TOP_KEYS))}")
    embeddings = _embeddings(data.get("embeddings"), source, base)
    attributes = tuple(_attribute(a, source, base, data.get("lists", "published"))
                       for a in _list_of(data, "attributes", source, str, ["gender"]))
    seeds = _list_of(data, "seeds", source, int, [0])
    methods = _methods(data.get("methods", {}), source, DEBIASERS, len(embeddings) * len(attributes) * len(seeds))
    suite = _list_of(data, "suite", source, str, None)
    _check_suite(suite, source)
    save = _list_of(data, "save", source, str, None) if data.get("save") not in (None, []) else ()
    for name in save:
        if name not in methods:
            _fail(source, "save", f"{name!r} is not one of the sweep's methods ({', '.join(methods) or 'none'})")
    lists = data.get("lists", "published")
    from ..data import wordlists

    if lists not in wordlists.LIST_SETS:
        _fail(source, "lists", f"unknown list set {lists!r}; known: {', '.join(wordlists.LIST_SETS)}")
    return SweepConfig(embeddings=embeddings, methods=methods, attributes=attributes,
                       suite=suite if suite is not None else tuple(DEFAULT_SUITE),
                       seeds=seeds,
                       bootstrap=_count(data, "bootstrap", source, 200, 0),
                       limit=_count(data, "limit", source, None, 1), save=tuple(save), lists=lists, source=source)


def _check_suite(suite, source: str) -> None:
    from ..metrics import METRICS

    for name in suite or ():
        if name not in METRICS:
            _fail(source, "suite", f"unknown metric {name!r}; known: {', '.join(METRICS)}")


def _embeddings(entries, source: str, base: Path) -> tuple:
    from ..io import DEFAULT_NAME

    if entries is None:
        _fail(source, "embeddings", f"missing; give at least one [[embeddings]] with a path (or {DEFAULT_NAME!r})")
    if not isinstance(entries, list) or not entries:
        _fail(source, "embeddings", "expected a non-empty array of tables ([[embeddings]])")
    out = []
    for i, entry in enumerate(entries):
        where = f"embeddings[{i}]"
        if not isinstance(entry, dict):
            _fail(source, where, f"expected a table with a path, got {entry!r}")
        unknown = sorted(set(entry) - _EMBEDDING_KEYS)
        if unknown:
            _fail(source, f"{where}.{unknown[0]}", f"unknown key; known: {', '.join(sorted(_EMBEDDING_KEYS))}")
        path, label, order = entry.get("path"), entry.get("label"), entry.get("order")
        if not isinstance(path, str) or not path:
            _fail(source, f"{where}.path", f"expected a path, a glob or {DEFAULT_NAME!r}, got {path!r}")
        if label is not None and not isinstance(label, str):
            _fail(source, f"{where}.label", f"expected a string, got {label!r}")
        if order is not None and (isinstance(order, bool) or not isinstance(order, numbers.Real)):
            _fail(source, f"{where}.order", f"expected a number (a year, a step), got {order!r}")
        limit = _count(entry, "limit", f"{source}: {where}", None, 1)
        out += [EmbeddingSpec(e.path, e.label, e.order, limit)
                for e in _expand(path, label, order, f"{where}.path", source, base, DEFAULT_NAME)]
    return tuple(out)


def _expand(path: str, label, order, where: str, source: str, base: Path, default_name: str) -> list:
    """The embeddings a path stands for: the built-in one, a file, or every match of a glob."""
    if path == default_name:
        return [EmbeddingSpec(path, label or path, order)]
    full = Path(path).expanduser()
    full = full if full.is_absolute() else base / full
    if glob.has_magic(str(full)):
        matches = sorted(glob.glob(str(full)))
        if not matches:
            _fail(source, where, f"the glob {path!r} matches no file")
        for match in matches:
            _check_embedding_path(Path(match), source, where)
        return [EmbeddingSpec(m, f"{label or Path(path).name}:{Path(m).name}" if len(matches) > 1 else label or m,
                              i if order is None else order) for i, m in enumerate(matches)]
    if not full.exists():
        _fail(source, where, f"no such file: {full}")
    _check_embedding_path(full, source, where)
    return [EmbeddingSpec(str(full), label or Path(path).name, order)]


def _check_embedding_path(path: Path, source: str, where: str) -> None:
    """An embedding is a regular file or a directory (the native format); a FIFO or a device is refused
    now, without being opened, rather than failing (or blocking) every point of it."""
    if not (path.is_file() or path.is_dir()):
        _fail(source, where, f"{path} is not a regular file or directory (a FIFO or a device is never read)")


def _methods(methods, source: str, debiasers: dict, runs: int) -> dict:
    """The methods' grids, each combination checked; ``runs`` is the number of (embedding, attribute,
    seed) runs, each of which has a baseline point and every method's grid."""
    if not isinstance(methods, dict):
        _fail(source, "methods", "expected a table of methods ([methods.NAME])")
    out = {}
    _check_points(methods, source, runs)
    for name, grid in methods.items():
        where = f"methods.{name}"
        if name not in debiasers:
            _fail(source, where, f"unknown method; known: {', '.join(debiasers)}")
        if not isinstance(grid, dict):
            _fail(source, where, "expected a table of parameters")
        fixed = sorted(set(grid) & _SET_BY_SWEEP)
        if fixed:
            _fail(source, f"{where}.{fixed[0]}", "is set by the sweep (the subspace, the list set, the seeds)")
        out[name] = {p: _list_of(grid, p, f"{source}: {where}", object, None) for p in grid}
        for values in _grid_points(out[name]):
            _check_params(debiasers[name], values, f"{source}: {where}")
    return out


def _check_points(methods: dict, source: str, runs: int) -> None:
    """Refuse a sweep of more than :data:`MAX_POINTS` points before any grid is expanded."""
    sizes = {name: math.prod(len(v) if isinstance(v, list) else 1 for v in grid.values())
             for name, grid in methods.items() if isinstance(grid, dict)}
    total = runs * (1 + sum(sizes.values()))
    if total > MAX_POINTS:
        largest = max(sizes, key=sizes.get, default=None)
        detail = f"; methods.{largest}'s grid alone has {sizes[largest]:,}" if largest is not None else ""
        _fail(source, "methods", f"{total:,} points ({runs:,} embedding x attribute x seed runs of "
                                 f"{1 + sum(sizes.values()):,} points each{detail}); a sweep has at most "
                                 f"{MAX_POINTS:,}")


def _grid_points(params: dict):
    names = list(params)
    return [dict(zip(names, values)) for values in itertools.product(*(params[n] for n in names))]


def _check_params(spec, params: dict, where: str) -> None:
    """Build the estimator with ``params`` now, so that a wrong name or value fails before any work."""
    try:
        spec.build(**params)
    except EmbdebiasError as exc:
        raise EmbdebiasError(f"{where}: {exc}") from None
