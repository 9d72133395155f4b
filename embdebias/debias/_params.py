"""Fitted parameters of a debiaser in one ``.npz`` file: a format, not a container.

The file is a zip archive of ``.npy`` members, as :func:`numpy.savez` writes it: one
member per fitted array and one member ``__meta__``, UTF-8 JSON (a ``uint8`` vector)
with the format tag, the estimator's class, its dimension, its constructor parameters
that JSON can hold and its other fitted attributes. Each debiaser class declares its
file's schema in ``_params_schema``: every fitted attribute the file holds, an
:class:`Array` (an npy member, with its dtypes and its shape in terms of the
dimension ``d``) or a :class:`Value` (a JSON attribute, with what it must be).

Reading trusts nothing before it is checked, in this order:

1. the layout: the file starts with a zip local header and ends with the end of the
   central directory (no comment, nothing before or after: a zip that is also another
   format is refused), at most :data:`MAX_MEMBERS` members, each once, none
   overlapping another;
2. ``__meta__``: at most :data:`MAX_META_BYTES`, JSON nested at most
   :data:`MAX_META_DEPTH` deep, only the keys of the format, the class and the
   dimension those of the estimator asked for;
3. the members: exactly the schema's names (an optional one may be absent); each
   npy header (at most :data:`MAX_HEADER_BYTES`) gives a dtype of the schema's and a
   shape of the schema's, and the size they imply equals the member's uncompressed
   size, all members together at most :data:`MAX_PARAMS_BYTES`, before any array is
   allocated or any data is decompressed;
4. the data, read through a bounded stream (a deflated member is never inflated past
   its declared size) and required finite; the JSON attributes, each as its
   :class:`Value` says; the constructor parameters, by the estimator's own rules.

Anything else raises :class:`~embdebias.errors.ParamsFileError` naming the file, the
member or key, and what was expected; nothing reaches an estimator attribute the
schema does not name. :func:`save_params` writes only what :func:`load_params`
accepts (it checks the same schema and limits).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .._atomic import atomic_file
from ..errors import DimensionError, EmbdebiasError, ParamsFileError

FORMAT = "embdebias-debiaser-params"
VERSION = 1
META = "__meta__"
#: Largest ``__meta__`` member read (the JSON holds word lists: a few MB at most).
MAX_META_BYTES = 16 << 20
#: Deepest nesting of JSON containers in ``__meta__`` (the format needs 5).
MAX_META_DEPTH = 8
#: Most members a parameter file holds (the largest schema names 5 arrays).
MAX_MEMBERS = 16
#: Largest npy header read (numpy's own default bound).
MAX_HEADER_BYTES = 10_000
#: Largest total uncompressed size of a file's members: 1 GiB holds RAN's vectors for
#: 800,000 words of 300 dimensions; :func:`save_params` refuses to write more.
MAX_PARAMS_BYTES = 1 << 30
#: The keys of ``__meta__`` (``kinds`` is written for older readers and not read).
META_KEYS = frozenset({"format", "version", "estimator", "n_features_in", "params", "attributes", "kinds"})
_READ_BYTES = 1 << 20
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record, comment length last
_LOCAL = struct.Struct("<4s5H3L2H")  # local file header, name and extra lengths last


@dataclass(frozen=True)
class Array:
    """A fitted array a parameter file holds as an npy member.

    Attributes
    ----------
    shape : tuple
        One entry per axis: an int (that length), ``"d"`` (the dimension), None (any
        length) or the name of a :class:`Value` of the same schema (its length).
    dtypes : tuple of str
        The dtypes accepted (little-endian, as numpy writes them on this machine).
    subspace : bool
        The attribute is a :class:`~embdebias.subspace.BiasSubspace`; the file holds
        its ``components_``.
    optional : bool
        A fit may leave it unset.
    """

    shape: tuple
    dtypes: tuple = ("float64", "float32")
    subspace: bool = False
    optional: bool = False


@dataclass(frozen=True)
class Value:
    """A fitted attribute a parameter file holds in ``__meta__``'s JSON.

    Attributes
    ----------
    what : str
        What it must be, in words (the error says it).
    check : callable
        ``check(value) -> bool`` on the value as JSON gives it back.
    load : callable or None
        Makes the attribute from the checked value (``frozenset``); None: the value itself.
    optional : bool
        A fit may leave it unset.
    """

    what: str
    check: Callable
    load: Callable | None = None
    optional: bool = False


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_words(v) -> bool:
    return isinstance(v, list) and all(isinstance(w, str) for w in v)


def _is_word_lists(v) -> bool:
    return isinstance(v, list) and all(_is_words(s) for s in v)


def _is_word_sets(v) -> bool:
    return _is_word_lists(v) and all(len(s) >= 2 for s in v) and len({len(s) for s in v}) <= 1


INT = Value("an integer", _is_int)
NUMBER = Value("a number", _is_number)
NUMBERS = Value("a list of numbers", lambda v: isinstance(v, list) and all(_is_number(x) for x in v), tuple)
GROUPS = Value("a list of strings", _is_words, tuple)
WORDS = Value("a list of strings", _is_words)
WORD_LISTS = Value("a list of lists of strings", _is_word_lists)
WORD_SETS = Value("a list of word sets of one size, at least 2", _is_word_sets)
WORD_SET = Value("a list of strings", _is_words, frozenset)
WORD_SET_OR_NONE = Value("a list of strings or null", lambda v: v is None or _is_words(v),
                         lambda v: None if v is None else frozenset(v))
MAPPING = Value("a JSON object", lambda v: isinstance(v, dict))


def _class_path(est) -> str:
    cls = type(est)
    return f"{cls.__module__}:{cls.__qualname__}"


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _plain(value):
    """``value`` as JSON will give it back (sets sorted, numpy scalars as Python ones)."""
    if isinstance(value, (frozenset, set)):
        value = sorted(value)
    elif isinstance(value, np.generic):
        value = value.item()
    return json.loads(json.dumps(value))


def _schema(est) -> dict:
    schema = getattr(type(est), "_params_schema", None)
    if not schema:
        raise ParamsFileError(f"{type(est).__name__} declares no parameter file schema (_params_schema)")
    return schema


def _fitted_state(est) -> tuple[dict, dict, dict]:
    """``(arrays, JSON values, kinds)`` of the fitted attributes of ``est``, as its schema names them."""
    schema, name = _schema(est), type(est).__name__
    undeclared = sorted(a for a in vars(est) if a.endswith("_") and not a.startswith("_")
                        and a not in est._transient and a not in est._fit_context and a not in schema
                        and a != "n_features_in_")
    if undeclared:
        raise ParamsFileError(f"{name}: fitted attributes {', '.join(undeclared)} are not in its parameter "
                              f"file schema (_params_schema) nor transient")
    arrays, values, kinds = {}, {}, {}
    for attr, spec in schema.items():
        if not hasattr(est, attr):
            if spec.optional:
                continue
            raise ParamsFileError(f"{name}.{attr}: not fitted, and its parameter file schema requires it")
        value = getattr(est, attr)
        if isinstance(spec, Array):
            arrays[attr] = np.asarray(value.components_ if spec.subspace else value)
            if spec.subspace:
                kinds[attr] = "subspace"
            if arrays[attr].dtype.name not in spec.dtypes:
                raise ParamsFileError(f"{name}.{attr}: dtype {arrays[attr].dtype}, its schema says "
                                      f"{' or '.join(spec.dtypes)}")
            continue
        try:
            values[attr] = _plain(value)
        except (TypeError, ValueError):
            raise ParamsFileError(f"{name}.{attr} ({type(value).__name__}) cannot be saved without pickle") from None
        if isinstance(value, (frozenset, set)):
            kinds[attr] = "frozenset"
        if not spec.check(values[attr]):
            raise ParamsFileError(f"{name}.{attr}: not {spec.what}, as its parameter file schema says")
    return arrays, values, kinds


def save_params(est, path) -> str:
    """Write the fitted parameters of ``est`` to ``path`` (``.npz``); returns the path written.

    Only the attributes its schema (``_params_schema``) names are written; a fitted
    attribute it neither names nor lists as transient is an error (a file that could
    not give the transform back is not written), as is a file over
    :data:`MAX_PARAMS_BYTES`.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    arrays, values, kinds = _fitted_state(est)
    total = sum(a.nbytes for a in arrays.values())
    if total > MAX_PARAMS_BYTES:
        raise ParamsFileError(f"{type(est).__name__}: {total} bytes of fitted arrays, more than a parameter file "
                              f"holds ({MAX_PARAMS_BYTES})")
    params = {k: v for k, v in est.get_params(deep=False).items() if _jsonable(v)}
    meta = {"format": FORMAT, "version": VERSION, "estimator": _class_path(est),
            "n_features_in": int(est.n_features_in_), "params": params, "attributes": values, "kinds": kinds}
    path = Path(path)
    # atomic, through a temporary of its own: two writers of one file never mix their parts
    with atomic_file(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays, **{META: np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)})
    return str(path)


# -- reading -------------------------------------------------------------------------------
def _check_layout(path, fh) -> None:
    """Refuse anything but a bare zip archive: a local header first, the end record last."""
    size = fh.seek(0, io.SEEK_END)
    fh.seek(0)
    if size < _EOCD.size or fh.read(4) != b"PK\x03\x04":
        raise ParamsFileError(f"{path}: not a parameter file (expected the .npz archive save_params writes)")
    fh.seek(size - _EOCD.size)
    sig, disk, cd_disk, n_here, n_total, cd_size, cd_offset, comment = _EOCD.unpack(fh.read(_EOCD.size))
    if sig != b"PK\x05\x06" or comment or disk or cd_disk or n_here != n_total:
        raise ParamsFileError(f"{path}: not a parameter file: its zip archive does not end with a bare end of "
                              f"central directory (a comment, data after it, or another format)")
    if n_total > MAX_MEMBERS:
        raise ParamsFileError(f"{path}: {n_total} zip members, a parameter file holds at most {MAX_MEMBERS}")
    if cd_offset + cd_size != size - _EOCD.size:
        raise ParamsFileError(f"{path}: not a parameter file: its zip central directory is not where the end "
                              f"record says (data before or inside the archive)")


def _members(path, zf: zipfile.ZipFile) -> dict:
    """``{member name without .npy: ZipInfo}``, each once, in non-overlapping places."""
    infos = zf.infolist()
    names = [i.filename for i in infos]
    bad = next((n for n in names if not n.endswith(".npy") or "/" in n or n.count(".npy") != 1), None)
    if bad is not None:
        raise ParamsFileError(f"{path}: member {bad!r} is not an npy array of a parameter file")
    if len(set(names)) != len(names):
        raise ParamsFileError(f"{path}: a zip member appears twice")
    end = 0
    for info in sorted(infos, key=lambda i: i.header_offset):
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 0x1:
            raise ParamsFileError(f"{path}: member {info.filename!r} is encrypted or compressed in a way a "
                                  f"parameter file never is (stored or deflated)")
        if info.header_offset < end:
            raise ParamsFileError(f"{path}: member {info.filename!r} overlaps another")
        zf.fp.seek(info.header_offset)
        local = zf.fp.read(_LOCAL.size)
        if len(local) != _LOCAL.size or local[:4] != b"PK\x03\x04":
            raise ParamsFileError(f"{path}: member {info.filename!r} has no local header where the directory says")
        name_len, extra_len = _LOCAL.unpack(local)[-2:]
        end = info.header_offset + _LOCAL.size + name_len + extra_len + info.compress_size
    return {i.filename[:-len(".npy")]: i for i in infos}


@dataclass(frozen=True)
class _Header:
    dtype: np.dtype
    shape: tuple
    fortran: bool
    offset: int  # bytes of magic and header before the data


def _npy_header(path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> _Header:
    """The npy header of member ``info``, read through a bounded stream."""
    where = f"{path}: member {info.filename!r}"
    if info.file_size > MAX_PARAMS_BYTES + MAX_HEADER_BYTES:
        raise ParamsFileError(f"{where}: {info.file_size} bytes uncompressed, more than a parameter file holds")
    try:
        with zf.open(info) as fh:
            prefix = fh.read(12)
            if len(prefix) < 10 or prefix[:6] != b"\x93NUMPY" or prefix[6:8] not in (b"\x01\x00", b"\x02\x00"):
                raise ParamsFileError(f"{where}: not an npy array (format 1.0 or 2.0)")
            v1 = prefix[6] == 1
            length = struct.unpack("<H", prefix[8:10])[0] if v1 else struct.unpack("<L", prefix[8:12])[0]
            if length > MAX_HEADER_BYTES:
                raise ParamsFileError(f"{where}: an npy header of {length} bytes (at most {MAX_HEADER_BYTES})")
            head = prefix + fh.read(length - len(prefix) + (10 if v1 else 12))
            stream = io.BytesIO(head)
            np.lib.format.read_magic(stream)
            read = np.lib.format.read_array_header_1_0 if v1 else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(stream, max_header_size=MAX_HEADER_BYTES)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, struct.error, SyntaxError) as exc:
        raise ParamsFileError(f"{where}: damaged npy header ({type(exc).__name__}: {exc})") from None
    return _Header(dtype, tuple(shape), bool(fortran), len(head))


def _npy_data(path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, header: _Header) -> np.ndarray:
    """The array of member ``info`` (header already checked), read in bounded pieces."""
    nbytes = info.file_size - header.offset
    buf = bytearray(nbytes)
    view, at = memoryview(buf), 0
    try:
        with zf.open(info) as fh:
            fh.read(header.offset)
            while at < nbytes:
                got = fh.readinto(view[at:at + _READ_BYTES])
                if not got:
                    break
                at += got
            if at != nbytes or fh.read(1):  # reading past the end checks the CRC
                raise ParamsFileError(f"{path}: member {info.filename!r} is not the size its header says")
    except (OSError, EOFError, zipfile.BadZipFile, ValueError) as exc:
        raise ParamsFileError(f"{path}: member {info.filename!r} is damaged ({type(exc).__name__}: {exc})") from None
    array = np.frombuffer(buf, dtype=header.dtype)
    return array.reshape(header.shape, order="F" if header.fortran else "C")


def _depth(value) -> int:
    """How deep JSON containers nest in ``value`` (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_META_DEPTH:
                stack.extend((x, depth + 1) for x in (item.values() if isinstance(item, dict) else item))
    return deepest


def _read_meta(path, zf: zipfile.ZipFile, members: dict) -> dict:
    """``__meta__``, bounded, parsed and checked for the format's keys."""
    info = members.get(META)
    if info is None:
        raise ParamsFileError(f"{path}: not an embdebias parameter file (no {META} member)")
    header = _npy_header(path, zf, info)
    if header.dtype != np.uint8 or len(header.shape) != 1 or header.shape[0] > MAX_META_BYTES \
            or header.shape[0] != info.file_size - header.offset:
        raise ParamsFileError(f"{path}: {META} is not a JSON byte string of at most {MAX_META_BYTES} bytes")
    raw = _npy_data(path, zf, info, header)
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ParamsFileError(f"{path}: {META} is not JSON ({type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ParamsFileError(f"{path}: not an embdebias parameter file (format "
                              f"{meta.get('format') if isinstance(meta, dict) else None!r}, expected {FORMAT!r})")
    if meta.get("version") != VERSION:
        raise ParamsFileError(f"{path}: parameter file version {meta.get('version')!r}, this embdebias reads {VERSION}")
    if _depth(meta) > MAX_META_DEPTH:
        raise ParamsFileError(f"{path}: {META} nests deeper than {MAX_META_DEPTH} levels")
    unknown = sorted(set(meta) - META_KEYS)
    if unknown:
        raise ParamsFileError(f"{path}: {META} has keys the format does not define: {', '.join(map(str, unknown))}")
    for key, kind in (("params", dict), ("attributes", dict), ("kinds", dict), ("estimator", str)):
        if key in meta and not isinstance(meta[key], kind):
            raise ParamsFileError(f"{path}: {META} key {key!r} must be a JSON {kind.__name__}")
    n = meta.get("n_features_in")
    if not _is_int(n) or n < 1:
        raise ParamsFileError(f"{path}: {META} key 'n_features_in' must be a positive integer, got {n!r}")
    return meta


def _checked_values(path, meta: dict, schema: dict) -> dict:
    """The JSON attributes, each checked against its :class:`Value`."""
    given = meta.get("attributes", {})
    values = {k: s for k, s in schema.items() if isinstance(s, Value)}
    unknown = sorted(set(given) - set(values))
    if unknown:
        raise ParamsFileError(f"{path}: attributes the schema does not name: {', '.join(unknown)}")
    for name, spec in values.items():
        if name not in given:
            if not spec.optional:
                raise ParamsFileError(f"{path}: attribute {name} is missing")
        elif not spec.check(given[name]):
            raise ParamsFileError(f"{path}: attribute {name} must be {spec.what}, got {type(given[name]).__name__}")
    return given


def _expected_shape(spec: Array, n: int, values: dict) -> tuple:
    return tuple(n if s == "d" else len(values[s]) if isinstance(s, str) else s for s in spec.shape)


def _checked_headers(path, zf, members: dict, schema: dict, n: int, values: dict) -> dict:
    """Each array member's header, checked against its :class:`Array`; the total bounded."""
    arrays = {k: s for k, s in schema.items() if isinstance(s, Array)}
    unknown = sorted(set(members) - set(arrays) - {META})
    if unknown:
        raise ParamsFileError(f"{path}: members the schema does not name: {', '.join(unknown)}")
    missing = sorted(k for k, s in arrays.items() if k not in members and not s.optional)
    if missing:
        raise ParamsFileError(f"{path}: members missing: {', '.join(missing)}")
    headers, total = {}, 0
    for name in sorted(set(arrays) & set(members)):
        spec, info = arrays[name], members[name]
        header = _npy_header(path, zf, info)
        want = _expected_shape(spec, n, values)
        if header.dtype.name not in spec.dtypes or header.dtype.byteorder == ">" or header.dtype.fields:
            raise ParamsFileError(f"{path}: member {name} has dtype {header.dtype.str}, expected "
                                  f"{' or '.join(spec.dtypes)}")
        if len(header.shape) != len(want) or any(w is not None and w != s for w, s in zip(want, header.shape)):
            shown = tuple("any" if w is None else w for w in want)
            raise ParamsFileError(f"{path}: member {name} has shape {header.shape}, expected {shown}")
        nbytes = math.prod(header.shape) * header.dtype.itemsize
        if nbytes != info.file_size - header.offset:
            raise ParamsFileError(f"{path}: member {name}: its header says {nbytes} bytes of data, the archive "
                                  f"{info.file_size - header.offset}")
        total += nbytes
        if total > MAX_PARAMS_BYTES:
            raise ParamsFileError(f"{path}: more than {MAX_PARAMS_BYTES} bytes of arrays (member {name})")
        headers[name] = header
    return headers


def _open_checked(path, fh) -> tuple[zipfile.ZipFile, dict, dict]:
    """``(zip, members, meta)`` of an open parameter file, layout and meta checked."""
    _check_layout(path, fh)
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ParamsFileError(f"{path}: damaged parameter file ({type(exc).__name__}: {exc})") from None
    members = _members(path, zf)
    meta = _read_meta(path, zf, members)
    return zf, members, meta


def _open_file(path):
    p = Path(path)
    if not p.is_file():
        raise ParamsFileError(f"{path}: no such parameter file" if not p.exists()
                              else f"{path}: not a regular file (a parameter file is an .npz archive)")
    try:
        return open(p, "rb")
    except OSError as exc:
        raise ParamsFileError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _check_estimator(path, meta: dict, est, dim) -> int:
    if meta.get("estimator") != _class_path(est):
        raise ParamsFileError(f"{path}: parameters of {meta.get('estimator')!r}, not of {_class_path(est)!r}")
    n = meta["n_features_in"]
    expected = dim if dim is not None else getattr(est, "n_features_in_", None)
    if expected is not None and n != expected:
        raise DimensionError(f"{path}: parameters fitted on {n}-d vectors, expected {expected}-d")
    return n


def _set_params(path, est, params: dict) -> None:
    """Set the constructor parameters the file names and check them by the estimator's rules."""
    valid = set(est.get_params(deep=False))
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ParamsFileError(f"{path}: constructor parameters {type(est).__name__} does not take: "
                              f"{', '.join(unknown)}")
    est.set_params(**params)
    try:
        est._check_loaded_params()
    except EmbdebiasError as exc:
        raise ParamsFileError(f"{path}: {exc}") from None


def load_params(est, path, *, dim: int | None = None):
    """Set the fitted parameters of ``est`` from ``path`` (written by :func:`save_params`); returns ``est``.

    Refused with :class:`ParamsFileError`: anything the module docstring's checks
    refuse (a damaged file, one of another estimator class, a member or attribute the
    schema does not name, a dtype or shape other than the schema's, a size past the
    limits). Refused with :class:`~embdebias.errors.DimensionError`: a file of another
    dimension than ``dim`` (or than ``est``'s own, if it is already fitted).
    """
    from ..subspace import BiasSubspace

    schema = _schema(est)
    with _open_file(path) as fh:
        zf, members, meta = _open_checked(path, fh)
        n = _check_estimator(path, meta, est, dim)
        values = _checked_values(path, meta, schema)
        headers = _checked_headers(path, zf, members, schema, n, values)
        arrays = {name: _npy_data(path, zf, members[name], h) for name, h in headers.items()}
    for name, array in arrays.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise ParamsFileError(f"{path}: member {name} holds non-finite values")
    _set_params(path, est, meta.get("params", {}))
    for name, value in values.items():
        setattr(est, name, value if schema[name].load is None else schema[name].load(value))
    for name, array in arrays.items():
        try:
            setattr(est, name, BiasSubspace.from_components(array) if schema[name].subspace else array)
        except EmbdebiasError as exc:
            raise ParamsFileError(f"{path}: member {name}: {exc}") from None
    est.n_features_in_ = n
    return est


def describe(path) -> dict:
    """The ``__meta__`` of a parameter file and its arrays' shapes (from their headers: no data is read)."""
    with _open_file(path) as fh:
        zf, members, meta = _open_checked(path, fh)
        shapes = {k: list(_npy_header(path, zf, i).shape) for k, i in members.items() if k != META}
    return {**meta, "arrays": shapes}


__all__ = ["Array", "Value", "save_params", "load_params", "describe"]
