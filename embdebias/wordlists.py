"""Access to the bundled word lists (``wordlists/`` in the repository).

File formats (all UTF-8; ``#`` starts a comment line; blank lines are ignored):

* word lists (``*.txt``): one word per line;
* pair lists (``*_pairs.txt``): two words per line separated by white space, the
  female word first, then the male word;
* WEAT tests (``weat_tests.json``): a JSON list of tests, each an object with
  ``id``, ``title``, ``group``, ``source``, and four sets ``X``, ``Y``, ``A``, ``B``
  (each ``{"name": ..., "words": [...]}``);
* SemBias (``sembias.txt``): the SemBias format of Zhao et al. (2018), see
  :mod:`embdebias.metrics.bat`.

A name without a path separator or suffix names a bundled list; anything else is
read as a path, so users can pass their own files in the same formats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import WordListError

_HERE = Path(__file__).resolve().parent


def data_dir() -> Path:
    """The directory holding the bundled lists.

    In an installed wheel the lists are inside the package (``embdebias/_wordlists``);
    in a source checkout or an editable install they are the repository's ``wordlists/``.
    """
    for candidate in (_HERE / "_wordlists", _HERE.parent / "wordlists"):
        if candidate.is_dir():
            return candidate
    raise WordListError("the bundled word lists are missing: reinstall embdebias")


def wordlist_path(name_or_path) -> Path:
    """Resolve a bundled list name (``"professions"``) or a file path."""
    s = str(name_or_path)
    p = Path(s)
    if p.exists():
        return p
    if "/" not in s and "\\" not in s:
        base = data_dir()
        for candidate in (base / s, base / f"{s}.txt", base / f"{s}.json"):
            if candidate.is_file():
                return candidate
        known = sorted(q.stem for q in base.iterdir() if q.suffix in (".txt", ".json"))
        raise WordListError(f"no bundled word list named {s!r}; known: {', '.join(known)}")
    raise WordListError(f"{s}: word list file not found")


def data_lines(path) -> list[tuple[int, str]]:
    """``(line number, stripped line)`` of a word-list-style file, without blank and ``#`` lines."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WordListError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise WordListError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append((i, line))
    return out


def _stamp(path: Path) -> tuple[Path, int, int]:
    """Cache key of a file: a rewritten file is read again."""
    st = path.stat()
    return path.resolve(), st.st_mtime_ns, st.st_size


@lru_cache(maxsize=64)
def _load_words_cached(path: Path, mtime_ns: int = 0, size: int = 0) -> tuple[str, ...]:
    words = []
    for lineno, line in data_lines(path):
        parts = line.split()
        if len(parts) != 1:
            raise WordListError(f"{path}:{lineno}: expected one word per line, got {line!r}")
        words.append(parts[0])
    return tuple(dict.fromkeys(words))


def load_words(name_or_path) -> list[str]:
    """A word list (duplicates removed, order kept)."""
    return list(_load_words_cached(*_stamp(wordlist_path(name_or_path))))


@lru_cache(maxsize=64)
def _load_pairs_cached(path: Path, mtime_ns: int = 0, size: int = 0) -> tuple[tuple[str, str], ...]:
    pairs = []
    for lineno, line in data_lines(path):
        parts = line.split()
        if len(parts) != 2:
            raise WordListError(f"{path}:{lineno}: expected two words (female male), got {line!r}")
        pairs.append((parts[0], parts[1]))
    return tuple(pairs)


def load_pairs(name_or_path) -> list[tuple[str, str]]:
    """A list of ``(female, male)`` pairs."""
    return list(_load_pairs_cached(*_stamp(wordlist_path(name_or_path))))


def _is_path_like(obj) -> bool:
    return isinstance(obj, (str, bytes)) or hasattr(obj, "__fspath__")


def resolve_words(words, default) -> list[str]:
    """A word list given as None (``default()``), a bundled name or path, or any iterable."""
    if words is None:
        return default()
    if _is_path_like(words):
        return load_words(words)
    return list(dict.fromkeys(str(w) for w in words))


def resolve_pairs(pairs, default) -> list[tuple[str, str]]:
    """A pair list given as None (``default()``), a bundled name or path, or any iterable."""
    if pairs is None:
        return default()
    if _is_path_like(pairs):
        return load_pairs(pairs)
    return [tuple(p) for p in pairs]


def definitional_pairs() -> list[tuple[str, str]]:
    """The ten definitional pairs of Bolukbasi et al. (2016), female word first."""
    return load_pairs("definitional_pairs")


def equalize_pairs() -> list[tuple[str, str]]:
    """Pairs that differ only by gender, to be equalized by hard debiasing."""
    return load_pairs("equalize_pairs")


def gender_specific() -> list[str]:
    """Seed list of words whose meaning is gender-specific (kept by debiasing)."""
    return load_words("gender_specific_seed")


def professions() -> list[str]:
    """Occupation words, the default neutral set for direct bias and the plot."""
    return load_words("professions")


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


def _wordset(obj, path, test_id, key) -> WordSet:
    try:
        return WordSet(str(obj["name"]), tuple(str(w) for w in obj["words"]))
    except (KeyError, TypeError):
        raise WordListError(f"{path}: test {test_id!r}: set {key} needs 'name' and 'words'") from None


def load_weat_tests(name_or_path="weat_tests") -> list[WeatTest]:
    """All WEAT tests in a ``weat_tests.json``-format file."""
    path = wordlist_path(name_or_path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WordListError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(raw, list):
        raise WordListError(f"{path}: expected a JSON list of tests")
    tests = []
    for t in raw:
        tid = t.get("id", "?")
        sets = {k: _wordset(t.get(k), path, tid, k) for k in "XYAB"}
        extra = {k: v for k, v in t.items() if k not in {"id", "title", "group", "source", *"XYAB"}}
        tests.append(WeatTest(str(tid), str(t.get("title", tid)), group=str(t.get("group", "")),
                              source=str(t.get("source", "")), extra=extra, **sets))
    return tests


def weat_tests(group: str | None = None) -> list[WeatTest]:
    """The bundled WEAT tests, optionally only one ``group`` ("caliskan" or "gender")."""
    tests = load_weat_tests()
    return [t for t in tests if group is None or t.group == group]


def weat_test(test_id: str) -> WeatTest:
    """One bundled WEAT test by id."""
    for t in load_weat_tests():
        if t.id == test_id:
            return t
    raise WordListError(f"no bundled WEAT test {test_id!r}; known: "
                        f"{', '.join(t.id for t in load_weat_tests())}")


def sembias_path() -> Path:
    """Path of the bundled, project-authored SemBias-format file."""
    return wordlist_path("sembias")
