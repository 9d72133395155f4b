"""Access to the bundled word lists (``wordlists/`` in the repository).

Two **list sets** are bundled, and every function that needs a list takes
``lists="published"`` (the default) or ``lists="curated"``:

``published``
    The lists that published numbers were computed with, bundled verbatim with their
    licences: Bolukbasi et al. (2016)'s ten definitional pairs, 52 equalize pairs,
    218 seed words, 1,441 "full" gender-specific words (their SVM expansion of the
    seeds on word2vec GoogleNews) and 320 professions with two crowd scores; Zhao et
    al. (2018)'s SemBias (440 lines). Use these to compare with the literature.
``curated``
    The embdebias authors' own lists (``wordlists/curated/``): 10 definitional pairs,
    79 lower-case equalize pairs, 348 seed words, 337 gender-neutral professions and
    a 260-line SemBias-format set whose "Sub" subset is held out of every list. See
    ``wordlists/README.md`` for how they differ.

The **roles** a list can play are the keys of :data:`ROLES`. A role's list in a set is
named ``"ROLE"`` (in the set chosen by ``lists``) or ``"SET:ROLE"`` (in that set).

**Names and paths.** A string made only of letters, digits, ``_`` and at most one ``:``
is a bundled name and never a file (a file called ``professions`` in the working
directory is not read by accident); anything else, and every :class:`os.PathLike`,
is a path, so users pass their own files as ``./professions`` or ``my_lists/x.txt``.

File formats (UTF-8):

* text word lists: one word per line; ``#`` starts a comment line; blank lines are
  ignored;
* text pair lists: two words per line separated by white space; the female word
  first in the curated lists and in users' files by convention (it matters only for
  definitional pairs, which orient the gender direction);
* JSON, as in Bolukbasi et al.'s release: a list of words, a list of ``[word, ...]``
  entries (the professions carry two scores), or a list of ``[a, b]`` pairs. The
  published equalize pairs are mostly male-first (``["he", "she"]``) but not all
  (``["wives", "husbands"]``); equalizing is symmetric, so they are kept as given;
* SemBias: see :mod:`embdebias.metrics.bat`;
* WEAT tests (``weat_tests.json``, shared by both sets): a JSON list of tests, each
  an object with ``id``, ``title``, ``group``, ``source``, and four sets ``X``,
  ``Y``, ``A``, ``B`` (each exactly ``{"name": ..., "words": [...]}``, ``words`` a list of
  words); ids are unique, case aside; other keys of a test are kept as notes.

Bounds: a list file is at most :data:`MAX_LIST_BYTES` (a text list is read a block at a
time, never whole); a JSON file nests at most :data:`MAX_JSON_DEPTH` deep, names each key
of an object once and holds no integer of more than :data:`MAX_INT_DIGITS` digits; a word
is :data:`WORD_RULE`.

A malformed entry raises :class:`~embdebias.errors.WordListError` naming the file
and line.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from .._files import open_regular
from ..errors import WordListError, WordListNotFoundError, quote
from .manifest import RESOURCES, reader

_PACKAGE = Path(__file__).resolve().parent.parent

#: The list sets, in the order they are offered; the first is the default.
LIST_SETS = ("published", "curated")
DEFAULT_LISTS = "published"

#: What each role's list is for.
ROLES = {
    "definitional_pairs": "pairs that define the gender direction (PCA)",
    "equalize_pairs": "pairs equalized by hard debias",
    "gender_specific": "words kept out of neutralization by hard and soft debias",
    "gender_specific_seed": "seed words of the SVM expansion",
    "professions": "occupations: direct bias, ECT and the occupation plot",
    "sembias": "the analogy set of BAT",
}


def _bundled_names() -> tuple[dict, dict]:
    """``({set: {role: (file, source)}}, {name: (file, source)})`` from :data:`~embdebias.data.manifest.RESOURCES`."""
    by_set: dict = {s: {} for s in LIST_SETS}
    shared: dict = {}
    for res in RESOURCES:
        for name, source in res.names:
            set_name, _, role = name.rpartition(":")
            (by_set[set_name] if set_name else shared)[role] = (res.path, source)
    return by_set, shared


_FILES, _SHARED = _bundled_names()

_NAME = re.compile(r"[A-Za-z0-9_]+(:[A-Za-z0-9_]+)?")
#: The largest word-list file read (the largest bundled list is about 100 kB).
MAX_LIST_BYTES = 64 << 20


def data_dir() -> Path:
    """The directory holding the bundled lists.

    In an installed wheel the lists are inside the package (``embdebias/_wordlists``);
    in a source checkout or an editable install they are the repository's ``wordlists/``.
    """
    for candidate in (_PACKAGE / "_wordlists", _PACKAGE.parent / "wordlists"):
        if candidate.is_dir():
            return candidate
    raise WordListError("the bundled word lists are missing: reinstall embdebias")


def check_lists(lists) -> str:
    """``lists`` if it names a list set, else a :class:`WordListError` naming the sets."""
    if lists not in LIST_SETS:
        raise WordListError(f"unknown list set {lists!r}; choose one of {', '.join(LIST_SETS)}")
    return lists


def bundled_names() -> list[str]:
    """Every bundled list name, qualified by its set (``"curated:professions"``)."""
    return [f"{s}:{r}" for s in LIST_SETS for r in _FILES[s]] + list(_SHARED)


def is_bundled_name(name_or_path) -> bool:
    """True for a string that names a bundled list (never a file; see the module docstring)."""
    return isinstance(name_or_path, str) and _NAME.fullmatch(name_or_path) is not None


def _bundled(name: str, lists: str) -> tuple[str, str, str]:
    """``(relative file, source, qualified name)`` of a bundled name."""
    if name in _SHARED:
        return (*_SHARED[name], name)
    set_name, _, role = name.rpartition(":")
    set_name = set_name or check_lists(lists)
    if set_name in _FILES and role in _FILES[set_name]:
        return (*_FILES[set_name][role], f"{set_name}:{role}")
    raise WordListError(f"no bundled word list named {_quote(name)}; known: roles {', '.join(ROLES)} "
                        f"(optionally as SET:ROLE with SET one of {', '.join(LIST_SETS)}), "
                        f"and {', '.join(_SHARED)}; a file needs a path such as ./{name[:60]}")


def wordlist_path(name_or_path, lists: str = DEFAULT_LISTS) -> Path:
    """The file of a bundled list name (``"professions"``, ``"curated:professions"``) or a path."""
    if is_bundled_name(name_or_path):
        return data_dir() / _bundled(name_or_path, lists)[0]
    path = Path(os.fsdecode(name_or_path) if isinstance(name_or_path, bytes) else name_or_path)
    if not path.exists():
        raise WordListNotFoundError(path, "word list file not found")
    if not path.is_file():
        raise WordListError(f"{path}: not a regular file (a word list must be a file)")
    return path


def describe(name_or_path, lists: str = DEFAULT_LISTS) -> dict:
    """Where a list comes from: ``{"name", "source", "path"}`` (for reports)."""
    if is_bundled_name(name_or_path):
        rel, source, qualified = _bundled(name_or_path, lists)
        return {"name": qualified, "source": source, "path": f"wordlists/{rel}"}
    return {"name": str(name_or_path), "source": "user file", "path": str(name_or_path)}


@contextlib.contextmanager
def _open_list(path):
    """A list file opened for binary reading, refused unless it is a regular file of at most
    :data:`MAX_LIST_BYTES` (checked on the open descriptor: a FIFO, a device such as
    ``/dev/zero`` or a directory is refused at once, never read, even if it replaced a file
    after an earlier check)."""
    with open_regular(path, WordListError, "a word list") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_LIST_BYTES:
            raise WordListError(f"{path}: {size:,} bytes; a word list is at most {MAX_LIST_BYTES:,} bytes")
        yield fh


def read_bytes(path) -> bytes:
    """The bytes of a list file, refusing anything but a regular file of at most :data:`MAX_LIST_BYTES`."""
    with _open_list(path) as fh:
        return fh.read(MAX_LIST_BYTES)


def read_text(path: Path) -> str:
    """The UTF-8 text of a list file, without a leading byte-order mark (else it would start the first word);
    a clear :class:`WordListError` for a non-file or bad bytes."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WordListError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


#: Bytes read at a time by :func:`iter_lines`.
_BLOCK = 1 << 20


def iter_lines(path):
    """``(line number, line)`` of a UTF-8 list file, read a block at a time (a word list of
    :data:`MAX_LIST_BYTES` is never held whole, as bytes or as text, besides what the caller
    keeps), without a leading byte-order mark; lines end where :meth:`str.splitlines` ends
    them in the whole text. A block is cut after its last ``\\n``, so no line, ``\\r\\n``
    or UTF-8 sequence is split."""
    number, offset = 0, 0
    for data in _newline_blocks(path):
        try:
            text = data.decode("utf-8-sig" if offset == 0 else "utf-8")
        except UnicodeDecodeError as exc:
            raise WordListError(f"{path}: not UTF-8 text ({exc.reason} at byte {offset + exc.start})") from None
        offset += len(data)
        lines = text.splitlines()
        yield from zip(range(number + 1, number + 1 + len(lines)), lines)
        number += len(lines)


def _newline_blocks(path):
    """The bytes of a list file in blocks that each end with ``\\n`` (but the last), of at most
    :data:`MAX_LIST_BYTES` in all."""
    pending, total = [], 0
    with _open_list(path) as fh:
        while block := fh.read(_BLOCK):
            total += len(block)
            if total > MAX_LIST_BYTES:  # grown since its size was checked
                raise WordListError(f"{path}: over {MAX_LIST_BYTES:,} bytes; a word list is at most that")
            cut = block.rfind(b"\n") + 1
            if not cut:
                pending.append(block)
                continue
            yield b"".join([*pending, block[:cut]])
            pending = [block[cut:]]
    if any(pending):
        yield b"".join(pending)


def iter_data_lines(path):
    """``(line number, stripped line)`` of a word-list-style file, without blank and ``#`` lines, streamed."""
    for i, line in iter_lines(Path(path)):
        line = line.strip()
        if line and not line.startswith("#"):
            yield i, line


def data_lines(path) -> list[tuple[int, str]]:
    """``(line number, stripped line)`` of a word-list-style file, without blank and ``#`` lines."""
    return list(iter_data_lines(path))


_quote = quote

#: The deepest nesting of a JSON list file: a list of tests, each an object of sets, each an
#: object holding a list of words, is 4 deep; an attribute file 3.
MAX_JSON_DEPTH = 8


def read_json(path: Path) -> tuple[str, object]:
    """The text of a JSON list file and its value, bounded: nesting deeper than :data:`MAX_JSON_DEPTH`,
    an object naming a key twice (JSON keeps the last silently) or an integer of more than
    :data:`MAX_INT_DIGITS` digits is a :class:`WordListError` naming the file, never a traceback."""
    text = read_text(path)
    try:
        data = json.loads(text, parse_int=_bounded_int, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise WordListError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise WordListError(_too_deep(path)) from None
    except ValueError as exc:  # an integer of too many digits (_bounded_int), a key twice (_unique_keys)
        raise WordListError(f"{path}: {exc}") from None
    if _depth_over(data, MAX_JSON_DEPTH):
        raise WordListError(_too_deep(path))
    return text, data


def _too_deep(path) -> str:
    return (f"{path}: JSON nested more than {MAX_JSON_DEPTH} deep; expected a list of words or pairs, or an "
            f"object of them")


def _unique_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {_quote(twice)} is given twice in one JSON object (expected each once)")
    return out


def _depth_over(data, limit: int) -> bool:
    """Whether the lists and objects of ``data`` nest more than ``limit`` deep (iterative: no recursion)."""
    level = [data]
    for _ in range(limit):
        level = [v for item in level if isinstance(item, (list, dict))
                 for v in (item.values() if isinstance(item, dict) else item)]
        if not any(isinstance(v, (list, dict)) for v in level):
            return False
    return True


def _json_entries(path: Path):
    """``(line number, element)`` of a JSON file holding one list (an iterator)."""
    text, data = read_json(path)
    if not isinstance(data, list):
        raise WordListError(f"{path}:1: expected a JSON list, got a JSON {type(data).__name__}")
    return zip(_element_lines(text), data, strict=False)


#: The most digits a JSON integer of a list may have (Python refuses to parse 4,300 and more).
MAX_INT_DIGITS = 100


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_INT_DIGITS:
        raise ValueError(f"a JSON integer of {len(digits)} digits; expected at most {MAX_INT_DIGITS}")
    return int(digits)


def _element_lines(text: str):
    """Line number of every element of the (valid) JSON list ``text``, in order (the newlines
    are counted from one element to the next, so the whole is linear in the text's length)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    pos = ws.match(text, text.index("[") + 1).end()
    line, counted = 1, 0
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", counted, pos)
        counted = pos
        yield line
        pos = ws.match(text, decoder.raw_decode(text, pos)[1]).end()
        pos = ws.match(text, pos + (text[pos] == ",")).end()


#: What a word never holds: white space, a control character, half of a surrogate pair (a JSON
#: escape such as ``"\\ud800"``: no UTF-8 file can hold it, so no embedding's word is one).
_NOT_IN_WORD = re.compile("[\\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")
WORD_RULE = "a non-empty string without white space or control characters"


def is_word(word) -> bool:
    """Whether ``word`` is a word (:data:`WORD_RULE`); the one test of every list reader."""
    return isinstance(word, str) and bool(word) and _NOT_IN_WORD.search(word) is None


def same_word(a: str, b: str) -> bool:
    """Whether two words of a pair or set are one word to hard debias, which equalizes each pair's
    lower-, Title- and UPPER-case forms (``"He"`` and ``"he"`` would be equalized with themselves)."""
    return a.lower() == b.lower()


def _check_word(word, path: Path, line: int) -> str:
    if not is_word(word):
        raise WordListError(f"{path}:{line}: expected a word ({WORD_RULE}), got "
                            f"{_quote(json.dumps(word, ensure_ascii=True))}")
    return word


def _entries(path: Path, width: int):
    """``(line, fields)`` of a word list (``width`` 1) or pair list (2), text or JSON (an iterator)."""
    return (_json_list_entries if path.suffix.lower() == ".json" else _text_entries)(path, width)


def _json_list_entries(path: Path, width: int):
    """``(line, fields)`` of a JSON word or pair list."""
    for line, item in _json_entries(path):
        if width == 1 and isinstance(item, list) and item:
            item = item[0]  # [word, score, ...] as in the published professions
        fields = [item] if width == 1 else item
        if not isinstance(fields, list) or len(fields) != width:
            what = "a word" if width == 1 else "a pair [a, b]"
            raise WordListError(f"{path}:{line}: expected {what}, got "
                                f"{_quote(json.dumps(item, ensure_ascii=False))}")
        yield line, [_check_word(w, path, line) for w in fields]


def _text_entries(path: Path, width: int):
    """``(line, fields)`` of a text word or pair list, streamed (see :func:`iter_lines`)."""
    for line, text in iter_data_lines(path):
        fields = text.split()
        if len(fields) != width:
            what = "one word per line" if width == 1 else "two words per line (female male)"
            raise WordListError(f"{path}:{line}: expected {what}, got {_quote(text)}")
        yield line, [_check_word(w, path, line) for w in fields]  # no control character either


def _stamp(path: Path) -> tuple[Path, tuple[int, int, int, int]]:
    """Cache key of a file: ``(resolved path, (mtime, ctime, inode, size))``.

    A rewritten file is read again. The change time and inode are in the key because a
    rewrite of the same size can keep its modification time (``cp -p``, ``rsync -t``,
    ``touch -r``, or a coarse file-system clock); the change time moves on every write.
    """
    st = path.stat()
    return path.resolve(), (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size)


@lru_cache(maxsize=64)
def _load_words_cached(path: Path, version: tuple = ()) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fields[0] for _, fields in _entries(path, 1)))


def load_words(name_or_path, lists: str = DEFAULT_LISTS) -> list[str]:
    """A word list (duplicates removed, order kept), bundled or from a file."""
    return list(_load_words_cached(*_stamp(wordlist_path(name_or_path, lists))))


@lru_cache(maxsize=64)
def _load_pairs_cached(path: Path, version: tuple = ()) -> tuple[tuple[str, str], ...]:
    pairs = []
    for line, (a, b) in _entries(path, 2):
        if same_word(a, b):
            raise WordListError(f"{path}:{line}: the pair names {_quote(a)} twice (case aside)")
        pairs.append((a, b))
    return tuple(pairs)


def load_pairs(name_or_path, lists: str = DEFAULT_LISTS) -> list[tuple[str, str]]:
    """A list of word pairs, bundled or from a file (a pair naming one word twice is an error)."""
    return list(_load_pairs_cached(*_stamp(wordlist_path(name_or_path, lists))))


def _is_path_like(obj) -> bool:
    return isinstance(obj, (str, bytes)) or hasattr(obj, "__fspath__")


def resolve_words(words, role: str, lists: str = DEFAULT_LISTS) -> list[str]:
    """A word list given as None (the ``role``'s list in ``lists``), a name or path, or words."""
    if words is None:
        return load_words(role, lists)
    if _is_path_like(words):
        return load_words(words, lists)
    return list(dict.fromkeys(str(w) for w in words))


def resolve_pairs(pairs, role: str, lists: str = DEFAULT_LISTS) -> list[tuple[str, str]]:
    """A pair list given as None (the ``role``'s list in ``lists``), a name or path, or pairs."""
    if pairs is None:
        return load_pairs(role, lists)
    if _is_path_like(pairs):
        return load_pairs(pairs, lists)
    out = [tuple(p) for p in pairs]
    bad = [p for p in out if len(p) != 2 or same_word(str(p[0]), str(p[1]))]
    if bad:
        raise WordListError(f"{role}: every pair needs two different words, got {_quote(bad[0])}")
    return out


def source_of(value, role: str, lists: str = DEFAULT_LISTS, n_used: int | None = None) -> dict:
    """What a report says about a list argument: name, source, size, content hash (of a file)."""
    if value is None:
        value = role
    if _is_path_like(value):
        info = describe(value, lists)
        size = len(_reader(role)(value, lists))
        info["sha256"] = hashlib.sha256(read_bytes(wordlist_path(value, lists))).hexdigest()[:16]
    else:
        size = len(list(value))
        info = {"name": "given in Python", "source": "user list", "path": None}
    info["size"] = size
    if n_used is not None:
        info["used"] = int(n_used)
    return info


def _reader(role: str):
    if role == "sembias":
        # Through the manifest: the SemBias reader imports this module (data_lines).
        read_sembias = reader("sembias")
        return lambda value, lists: read_sembias(wordlist_path(value, lists))
    return load_pairs if role.endswith("_pairs") else load_words


def definitional_pairs(lists: str = DEFAULT_LISTS) -> list[tuple[str, str]]:
    """The ten definitional pairs of Bolukbasi et al. (2016), female word first."""
    return load_pairs("definitional_pairs", lists)


def equalize_pairs(lists: str = DEFAULT_LISTS) -> list[tuple[str, str]]:
    """Pairs that differ only by gender, equalized by hard debias (published: 52, as given)."""
    return load_pairs("equalize_pairs", lists)


def gender_specific(lists: str = DEFAULT_LISTS) -> list[str]:
    """Words debiasing keeps (published: Bolukbasi et al.'s full list of 1,441 words)."""
    return load_words("gender_specific", lists)


def gender_specific_seed(lists: str = DEFAULT_LISTS) -> list[str]:
    """Seed words of the SVM expansion (published: Bolukbasi et al.'s 218)."""
    return load_words("gender_specific_seed", lists)


def professions(lists: str = DEFAULT_LISTS) -> list[str]:
    """Occupation words, the default neutral set for direct bias, ECT and the plot."""
    return load_words("professions", lists)


#: Lu et al. (2020)'s occupations, under ``wordlists/``.
LU_OCCUPATIONS = "lu2020/occupations.txt"


def lu_occupations() -> list[str]:
    """Lu et al.'s occupations (multi-word ones joined with ``_``)."""
    return load_words(data_dir() / LU_OCCUPATIONS)


def profession_scores() -> dict[str, tuple[float, float]]:
    """Bolukbasi et al.'s crowd scores: ``{word: (definitional, stereotypical)}`` (positive = male)."""
    path = wordlist_path("published:professions")
    return {item[0]: (float(item[1]), float(item[2])) for _, item in _json_entries(path)}


def sembias_path(lists: str = DEFAULT_LISTS) -> Path:
    """Path of the SemBias file of a list set (published: Zhao et al.'s 440 lines)."""
    return wordlist_path("sembias", lists)


@dataclass(frozen=True)
class WordSet:
    name: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class WeatTest:
    """A WEAT test: targets X, Y and attributes A, B."""

    id: str
    title: str
    X: WordSet
    Y: WordSet
    A: WordSet
    B: WordSet
    group: str = ""
    source: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)


#: The keys of a WEAT test object that are read; any other key is kept as a note (``extra``:
#: the bundled tests' ``removed_names``).
_WEAT_KEYS = ("id", "title", "group", "source", "X", "Y", "A", "B")
#: The longest test id (it names a report row).
MAX_TEST_ID = 100


def _wordset(obj, where: str) -> WordSet:
    """One set of a test: ``{"name": str, "words": [word, ...]}``, nothing else."""
    if not isinstance(obj, dict) or set(obj) != {"name", "words"}:
        got = sorted(obj) if isinstance(obj, dict) else f"a JSON {_json_type(obj)}"
        raise WordListError(f"{where}: expected an object with exactly 'name' and 'words', got {_quote(got)}")
    name, words = obj["name"], obj["words"]
    if not isinstance(name, str) or not name.strip():
        raise WordListError(f"{where}.name: expected a non-empty string, got {_quote(json.dumps(name))}")
    if not isinstance(words, list) or not words:  # a string would be scored as its letters
        raise WordListError(f"{where}.words: expected a non-empty list of words, got a JSON {_json_type(words)}"
                            + (f" {_quote(words)}" if isinstance(words, str) else ""))
    bad = next((w for w in words if not is_word(w)), None)
    if bad is not None:
        raise WordListError(f"{where}.words: expected words ({WORD_RULE}), got "
                            f"{_quote(json.dumps(bad, ensure_ascii=True))}")
    return WordSet(name, tuple(words))


def _json_type(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _weat_test(t, path, line: int) -> WeatTest:
    """A test object checked key by key (every error names the file, line, test and key)."""
    if not isinstance(t, dict):
        raise WordListError(f"{path}:{line}: expected a test object with id, X, Y, A and B")
    tid = t.get("id")
    if not is_word(tid) or len(tid) > MAX_TEST_ID:
        raise WordListError(f"{path}:{line}: id: expected a test id ({WORD_RULE}, at most {MAX_TEST_ID} "
                            f"characters), got {_quote(json.dumps(tid, ensure_ascii=True))}")
    for key in ("title", "group", "source"):
        if key in t and not isinstance(t[key], str):
            raise WordListError(f"{path}:{line}: test {_quote(tid)}: {key}: expected a string, got a JSON "
                                f"{_json_type(t[key])}")
    sets = {k: _wordset(t.get(k), f"{path}:{line}: test {_quote(tid)}: {k}") for k in "XYAB"}
    extra = {k: v for k, v in t.items() if k not in _WEAT_KEYS}
    return WeatTest(tid, t.get("title", tid), group=t.get("group", ""), source=t.get("source", ""), extra=extra,
                    **sets)


def load_weat_tests(name_or_path="weat_tests") -> list[WeatTest]:
    """All WEAT tests in a ``weat_tests.json``-format file, each checked against the format
    (the module docstring): a ``words`` that is not a list of words, a set with other keys, or
    two tests with one id (case aside) is a :class:`WordListError` naming the file, line, test and key."""
    path = wordlist_path(name_or_path)
    tests, seen = [], {}
    for line, t in _json_entries(path):
        test = _weat_test(t, path, line)
        first = seen.setdefault(test.id.casefold(), (len(tests) + 1, line))
        if first[0] != len(tests) + 1:
            raise WordListError(f"{path}:{line}: id: {_quote(test.id)} is the id of test {first[0]} (line {first[1]}) "
                                f"too; each test needs its own (the id names its report rows)")
        tests.append(test)
    return tests


def weat_tests(group: str | None = None) -> list[WeatTest]:
    """The bundled WEAT tests, optionally only one ``group`` ("caliskan" or "gender").

    The file is read and checked once while it is unchanged (same path, modification and
    change times, inode and size): an evaluation asks for the tests some seventy times (every
    WEAT and ECT unit of every column), each a parse of the file. The tests are frozen and
    each call gets its own copy of their ``extra`` notes (the cached tests are shared); the
    list is the caller's."""
    tests = _bundled_weat_tests(*_stamp(wordlist_path("weat_tests")))
    return [replace(t, extra=dict(t.extra)) for t in tests if group is None or t.group == group]


@lru_cache(maxsize=4)
def _bundled_weat_tests(path: Path, version: tuple = ()) -> tuple:
    return tuple(load_weat_tests(path))


def weat_test(test_id: str) -> WeatTest:
    """One bundled WEAT test by id."""
    for t in load_weat_tests():
        if t.id == test_id:
            return t
    raise WordListError(f"no bundled WEAT test {test_id!r}; known: "
                        f"{', '.join(t.id for t in load_weat_tests())}")


