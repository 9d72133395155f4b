"""A restricted unpickler: reads a gensim ``KeyedVectors`` pickle without running code from it.

A pickle names the functions and classes it needs ("globals") and calls them while it
loads, so ``pickle.load`` on a hostile file runs whatever it names (``os.system``,
``builtins.eval``, ...). :class:`RestrictedUnpickler` answers every global from a fixed
table (:data:`ADMITTED`) and refuses anything else with :class:`PickleRefused`. The
table holds no real gensim or numpy object that a file could call:

- gensim's ``KeyedVectors`` and ``Word2Vec`` become inert records (:class:`GensimRecord`)
  that keep the state dict the pickle gives them; no gensim code runs.
- numpy's pickle helpers (``_reconstruct``, ``_frombuffer``, ``dtype``, ``scalar``)
  become small functions of ours that accept only what numpy itself writes for a plain
  numeric array (shape ``(0,)`` placeholders, numeric dtypes in native form, raw data
  whose length matches the shape) and build the array with ``np.frombuffer``. A dtype's
  pickled state (byte order, flags, fields) is checked rather than handed to numpy, so
  no file can give a float dtype an object flag.
- the parts of a full ``Word2Vec`` model that are not word vectors (its random state,
  vocabulary counts, hash function) become :class:`Inert` placeholders that absorb
  calls and state.

Everything else a pickle can do without globals (lists, dicts, strings, numbers, tuples,
sets) builds only built-in containers. The opcodes that call things are covered: GLOBAL,
STACK_GLOBAL, INST and OBJ and the EXT opcodes all go through ``find_class``; REDUCE,
NEWOBJ and NEWOBJ_EX can only call what ``find_class`` returned; BUILD calls
``__setstate__`` only on our records and placeholders; a persistent id is refused.
"""

from __future__ import annotations

import copyreg
import pickle
import re
import threading

import numpy as np

from ..errors import EmbdebiasError


class PickleRefused(EmbdebiasError):
    """The pickle names a global outside :data:`ADMITTED`, or feeds one something numpy never writes."""

    def __init__(self, what: str, detail: str = ""):
        self.what, self.detail = what, detail
        super().__init__(f"{what}{detail}")


class PickleTooDeep(EmbdebiasError):
    """The pickle nests tuples deeper than :data:`MAX_TUPLE_DEPTH` (hashing them would overflow the C stack)."""


class GensimRecord:
    """The state of a pickled gensim object, kept as a dict; nothing of gensim runs.

    Subclassed once per admitted gensim class so that the record says what it stands for.
    """

    gensim_class = ""

    def __setstate__(self, state):
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise PickleRefused(self.gensim_class, " with a state that is not a dict of attribute names")
        self.state = state


def _record_class(qualified: str) -> type:
    return type(qualified.rsplit(".", 1)[1] + "Record", (GensimRecord,), {"gensim_class": qualified})


KEYED_VECTORS = _record_class("gensim.models.keyedvectors.KeyedVectors")
WORD2VEC = _record_class("gensim.models.word2vec.Word2Vec")


class Inert:
    """Stands for a part of a full model that is not word vectors: absorbs calls, state and items."""

    def __call__(self, *args, **kwargs):
        return Inert()

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass


class _NdarrayMarker:
    """``numpy.ndarray`` in a pickle: only ever the first argument of ``_reconstruct``, never called."""

    __slots__ = ()

    def __setstate__(self, state):
        raise PickleRefused("numpy.ndarray", " given a state of its own")


class _Function:
    """An admitted function: callable, but not open to BUILD (which could set its ``__defaults__``)."""

    __slots__ = ("_func",)

    def __init__(self, func):
        self._func = func

    def __call__(self, *args):
        return self._func(*args)

    def __setstate__(self, state):
        raise PickleRefused(self._func.__name__, " given a state")


_NDARRAY = _NdarrayMarker()
#: The numeric dtypes numpy pickles as ``dtype(code, False, True)``: bool, ints, floats, complex.
_DTYPE_CODE = re.compile(r"[biufc][1248]|c16|f16")


class DtypeSpec:
    """``numpy.dtype(code, align, copy)`` from a pickle; its ``__setstate__`` may only set the byte order."""

    def __init__(self, code, align=False, copy=False):
        if not isinstance(code, str) or not _DTYPE_CODE.fullmatch(code):
            raise PickleRefused("numpy.dtype", f" of {code!r:.40}, expected a numeric type code such as 'f4'")
        self.dtype = np.dtype(code)

    def __setstate__(self, state):
        # numpy writes (3, byteorder, None, None, None, -1, -1, flags) for a numeric dtype
        if not (isinstance(state, tuple) and len(state) == 8 and state[0] == 3 and state[1] in ("<", ">", "|", "=")
                and state[2:5] == (None, None, None) and state[5:7] == (-1, -1)):
            raise PickleRefused("numpy.dtype", " with a state numpy never writes for a numeric type")
        if state[1] in ("<", ">"):
            self.dtype = self.dtype.newbyteorder(state[1])


def _array_arguments_ok(buffer, dtype, shape, order) -> bool:
    return (isinstance(dtype, DtypeSpec) and isinstance(buffer, (bytes, bytearray)) and isinstance(shape, tuple)
            and all(type(s) is int and s >= 0 for s in shape) and order in ("C", "F"))


def _checked_array(buffer, dtype, shape, order: str = "C") -> np.ndarray:
    """``buffer`` as an array of ``dtype`` and ``shape`` after checking that the sizes agree."""
    if isinstance(buffer, str):  # a Python 2 pickle's str, decoded as latin-1
        buffer = buffer.encode("latin-1")
    if not _array_arguments_ok(buffer, dtype, shape, order):
        raise PickleRefused("numpy array", " whose shape, dtype or data is not what numpy writes")
    count = 1
    for s in shape:
        count *= s
    if count * dtype.dtype.itemsize != len(buffer):
        raise PickleRefused("numpy array", f" of shape {shape!r:.60} with {len(buffer)} bytes of data")
    return np.frombuffer(buffer, dtype=dtype.dtype).reshape(shape, order=order)


class ArraySpec:
    """``numpy.core.multiarray._reconstruct(ndarray, (0,), b'b')`` awaiting its state; ``.array`` after it."""

    array = None

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 5 and state[0] == 1):
            raise PickleRefused("numpy array", " with a state numpy never writes")
        _, shape, dtype, fortran, data = state
        self.array = _checked_array(data, dtype, shape, "F" if fortran else "C")


def _reconstruct(subtype, shape, dtype) -> ArraySpec:
    if subtype is not _NDARRAY or shape != (0,) or dtype != b"b":
        raise PickleRefused("numpy _reconstruct", " with arguments numpy never writes")
    return ArraySpec()


def _frombuffer(buffer, dtype, shape, order) -> np.ndarray:
    if isinstance(buffer, pickle.PickleBuffer):
        buffer = bytes(buffer)
    return _checked_array(buffer, dtype, shape, order)


def _scalar(dtype, data):
    return _checked_array(data, dtype, ())[()]


def _latin1_encode(text, encoding):
    """``_codecs.encode``: how protocol 2 pickles store bytes."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleRefused("_codecs.encode", " with arguments other than (str, 'latin1')")
    return text.encode("latin-1")


def _numpy_names(names: dict) -> dict:
    """Each numpy name under both module spellings (numpy 2 ``numpy._core``, numpy 1 ``numpy.core``)."""
    return {f"numpy.{core}.{name}": value for name, value in names.items() for core in ("core", "_core")}


#: Every global a pickle may name, and what it gets instead of the real object.
ADMITTED = {
    "gensim.models.keyedvectors.KeyedVectors": KEYED_VECTORS,
    "gensim.models.word2vec.Word2Vec": WORD2VEC,
    "numpy.ndarray": _NDARRAY,
    "numpy.dtype": DtypeSpec,
    **_numpy_names({"multiarray._reconstruct": _Function(_reconstruct), "numeric._frombuffer": _Function(_frombuffer),
                    "multiarray.scalar": _Function(_scalar)}),
    "builtins.frozenset": frozenset,
    "__builtin__.frozenset": frozenset,
    "_codecs.encode": _Function(_latin1_encode),
    # the rest of a full Word2Vec model: inert
    **{name: Inert() for name in ("numpy.random._pickle.__randomstate_ctor",
                                  "numpy.random._pickle.__bit_generator_ctor", "numpy.random._mt19937.MT19937",
                                  "collections.defaultdict", "builtins.int", "builtins.hash",
                                  "gensim.utils.call_on_class_only")},
}


class _Restricted:
    """What both unpicklers below share: globals from :data:`ADMITTED` only, no persistent ids."""

    def find_class(self, module, name):
        what = f"{module}.{name}"
        try:
            return ADMITTED[what]
        except KeyError:
            raise PickleRefused(what) from None

    def persistent_load(self, pid):
        raise PickleRefused("a persistent id", " (an object from outside the file)")


class _FastUnpickler(_Restricted, pickle.Unpickler):
    """The C unpickler, restricted."""


def _refuse_extension(self):
    raise PickleRefused("an extension code", " (copyreg's registry, which this process has filled)")


class _PythonUnpickler(_Restricted, pickle._Unpickler):
    """The pure-Python unpickler, restricted, with the EXT opcodes refused.

    The C unpickler answers an EXT opcode from ``copyreg``'s cache without calling
    ``find_class``; this one is used when the cache or the registry is not empty.
    """

    dispatch = {**pickle._Unpickler.dispatch,
                **{op[0]: _refuse_extension for op in (pickle.EXT1, pickle.EXT2, pickle.EXT4)}}


def RestrictedUnpickler(file) -> pickle.Unpickler:
    """An unpickler that admits only :data:`ADMITTED` (see the module docstring); ``.load()`` it."""
    if copyreg._extension_cache or copyreg._inverted_registry:  # empty unless some code registered codes
        return _PythonUnpickler(file, encoding="latin1")
    return _FastUnpickler(file, encoding="latin1")  # latin-1: gensim's choice, for Python 2 pickles


# -- nesting ----------------------------------------------------------------------------------------
#: The deepest tuple nesting a pickle may hold.  Hashing a tuple (a dict key, a set member)
#: recurses in C once per level with no depth check: a 1 KB gzip can hold a million levels,
#: which overflows the stack (SIGSEGV, no Python code runs).  gensim never nests deeper than 5.
MAX_TUPLE_DEPTH = 1000
#: Upper bound of the C stack that one level of tuple hashing takes (measured: about 50 bytes).
_STACK_PER_LEVEL = 128
#: The thread stack the C unpickler runs on, and so the deepest nesting it may meet.
_UNPICKLE_STACK = 64 << 20
_SAFE_DEPTH = (_UNPICKLE_STACK - (8 << 20)) // _STACK_PER_LEVEL
#: The bytes of the opcodes that build a tuple: TUPLE1, TUPLE2, TUPLE3; TUPLE ('t') comes after a MARK ('(').
_TUPLE_OPCODES = (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)


def tuple_depth_bound(fh, chunk: int = 1 << 20) -> int:
    """An upper bound of the tuple nesting in the pickle ``fh`` holds (read to its end; not rewound).

    Each level of nesting needs one tuple-building opcode, so the count of the bytes that
    can be one (in data too: an overcount, never an undercount) bounds the depth.  A
    TUPLE opcode needs a MARK before it, so ``'t'`` counts at most as often as ``'('``.
    """
    short, mark, tup = 0, 0, 0
    while block := fh.read(chunk):
        short += sum(block.count(op) for op in _TUPLE_OPCODES)
        mark += block.count(pickle.MARK)
        tup += block.count(pickle.TUPLE)
    return short + min(mark, tup)


class _DepthCheckedUnpickler(_PythonUnpickler):
    """The pure-Python restricted unpickler, refusing tuples nested deeper than :data:`MAX_TUPLE_DEPTH`."""

    def __init__(self, file, **kwargs):
        super().__init__(file, **kwargs)
        self._depths = {}  # id(tuple) -> (tuple, depth); the tuple is kept so that its id is not reused

    def _checked_tuple(self):
        top = self.stack[-1]
        depth = 1 + max((self._depths.get(id(e), (e, 1))[1] for e in top if type(e) is tuple), default=0)
        if depth > MAX_TUPLE_DEPTH:
            raise PickleTooDeep(f"a tuple nested deeper than {MAX_TUPLE_DEPTH} levels (no gensim file nests "
                                f"more than a few)")
        if depth > 1:  # a tuple without tuples in it is of depth 1: not recorded
            self._depths[id(top)] = (top, depth)

    dispatch = dict(_PythonUnpickler.dispatch)


def _depth_checked(load):
    def checked(self):
        load(self)
        self._checked_tuple()
    return checked


_DepthCheckedUnpickler.dispatch.update({op[0]: _depth_checked(pickle._Unpickler.dispatch[op[0]])
                                        for op in (pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)})


def _load_on_large_stack(unpickler: pickle.Unpickler):
    """``unpickler.load()`` in a thread with a :data:`_UNPICKLE_STACK` stack; its exception re-raised here."""
    outcome = {}

    def run():
        try:
            outcome["value"] = unpickler.load()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as is
            outcome["error"] = exc

    previous = threading.stack_size(_UNPICKLE_STACK)
    try:
        worker = threading.Thread(target=run, name="embdebias-unpickle", daemon=True)  # Ctrl-C: no wait for it
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def load_restricted(fh):
    """The object of the pickle in the seekable file ``fh``, through :func:`RestrictedUnpickler`.

    Tuples nested too deeply for the C stack are refused (:data:`MAX_TUPLE_DEPTH`): when
    the byte count (:func:`tuple_depth_bound`) says the pickle cannot nest deeper than a
    thread's large stack takes, the fast C unpickler runs on such a thread; otherwise the
    Python one counts the depth of every tuple it builds.
    """
    bound = tuple_depth_bound(fh)
    fh.seek(0)
    if bound <= _SAFE_DEPTH:
        return _load_on_large_stack(RestrictedUnpickler(fh))
    return _DepthCheckedUnpickler(fh, encoding="latin1").load()
