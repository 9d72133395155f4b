"""The dictionary of a counterfactual intervention: gender pairs and first names.

A pair list has one pair a line, the male word first, then the female word; either
side may list alternatives joined by ``|`` (``his|him her``). Every word maps to the
alternatives of the other side of its pair; the first alternative is the default.
Pair words are matched case-insensitively; names (a separate list of the same format)
only in Title and UPPER case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..data.cda import read_cda_pairs
from ..data.wordlists import _is_path_like, describe, is_bundled_name, wordlist_path
from ..errors import WordListError
from ..errors import quote as _quote

#: A word of a pair or name list: letters or digits, inner hyphens and apostrophes,
#: and an optional final dot (``mr.``).
WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*\.?")
#: The closed class of English personal pronouns: the proper-noun rule never keeps
#: them (a pronoun beside a name is rarely part of the name: "told her John left").
PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
#: Titles that stand before surnames, which carry no gender: swapped even beside a
#: capitalised word ("Mr. Smith" -> "Mrs. Smith").
HONORIFICS = frozenset({"mr", "mr.", "mrs", "mrs.", "ms", "ms."})


@dataclass(frozen=True)
class Entry:
    """What one dictionary word turns into.

    Attributes
    ----------
    word : str
        The word as listed (lower case for pair words, as written for names).
    targets : tuple of str
        Its partners on the other side of its pair, default first.
    label : str
        The pair as ``"male:female"`` (the key of the per-pair counts).
    is_name : bool
        A first name (matched in Title and UPPER case only).
    """

    word: str
    targets: tuple[str, ...]
    label: str
    is_name: bool = False


@dataclass
class Lexicon:
    """Every dictionary word by its lower-case UTF-8 bytes, with the lists' sources."""

    entries: dict[bytes, Entry] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    n_pairs: int = 0
    n_names: int = 0

    def __len__(self) -> int:
        return len(self.entries)


def _side(text: str, where: str, *, lower: bool) -> tuple[str, ...]:
    """The alternatives of one side of a pair (``"his|him"``), checked."""
    words = tuple(text.split("|"))
    for w in words:
        if not WORD.fullmatch(w):
            raise WordListError(f"{where}: {_quote(w)} is not a word (letters or digits, inner "
                                "hyphens or apostrophes, an optional final dot)")
    if len(set(words)) != len(words):
        raise WordListError(f"{where}: {_quote(text)} lists a word twice")
    return tuple(w.lower() for w in words) if lower else words


def _given_pairs(pairs, what: str) -> list[tuple[str, str, str]]:
    """``(male, female, where)`` of pairs given in Python (``("he", "she")`` or ``("his|him", "her")``)."""
    out = []
    for i, pair in enumerate(pairs, 1):
        if isinstance(pair, str) or len(pair) != 2:
            raise WordListError(f"{what}: pair {i} must be (male, female), got {_quote(repr(pair))}")
        male, female = ("|".join(side) if isinstance(side, (tuple, list)) else side for side in pair)
        if not isinstance(male, str) or not isinstance(female, str):
            raise WordListError(f"{what}: pair {i} must hold strings, got {_quote(repr(pair))}")
        out.append((male, female, f"{what} pair {i}"))
    return out


def read_pairs(source, bundled: str, what: str) -> tuple[list[tuple[str, str, str]], str]:
    """The raw pairs of ``source`` (None: the bundled list; a path; or pairs) and its description."""
    if source is None or (isinstance(source, str) and is_bundled_name(source)):
        info = describe(source or bundled)
        return read_cda_pairs(wordlist_path(source or bundled)), f"{info['path']} ({info['source']})"
    if _is_path_like(source):
        path = wordlist_path(source)
        return read_cda_pairs(path), str(path)
    return _given_pairs(list(source), what), f"{what} given in Python"


def _add(lex: Lexicon, seen: dict[str, str], entry: Entry, where: str) -> None:
    key = entry.word.lower()
    if key in seen:
        raise WordListError(f"{where}: {entry.word!r} is already in {seen[key]}; a word may stand in one "
                            "pair only (remove one of the two)")
    seen[key] = where
    lex.entries[key.encode("utf-8")] = entry


def add_pairs(lex: Lexicon, seen: dict, raw: list[tuple[str, str, str]], *, names: bool) -> None:
    """Check ``raw`` pairs and add every word of them to ``lex``."""
    for male_text, female_text, where in raw:
        male = _side(male_text, where, lower=not names)
        female = _side(female_text, where, lower=not names)
        both = {w.lower() for w in male} & {w.lower() for w in female}
        if both:
            raise WordListError(f"{where}: {sorted(both)[0]!r} is on both sides of the pair")
        label = f"{'|'.join(male)}:{'|'.join(female)}"
        for side, other in ((male, female), (female, male)):
            for word in side:
                _add(lex, seen, Entry(word, other, label, names), where)
        if names:
            lex.n_names += 1
        else:
            lex.n_pairs += 1


def build_lexicon(pairs=None, names=False) -> Lexicon:
    """The checked dictionary of ``pairs`` (None: Lu et al.'s) and, if ``names``, first names.

    Parameters
    ----------
    pairs : None, path or iterable of (male, female)
        None: the bundled ``wordlists/cda_pairs.txt``.
    names : bool, path or iterable of (male, female)
        False: no names; True: the bundled ``wordlists/cda_names.txt``.

    Raises
    ------
    WordListError
        A malformed line, a word on both sides of a pair, a word in two pairs (names
        included), or an empty list; the message names the file and line.
    """
    lex, seen = Lexicon(), {}
    raw, lex.sources["pairs"] = read_pairs(pairs, "cda_pairs", "pairs")
    add_pairs(lex, seen, raw, names=False)
    if names is not False and names is not None:
        raw_names, lex.sources["names"] = read_pairs(None if names is True else names, "cda_names", "names")
        add_pairs(lex, seen, raw_names, names=True)
        if not lex.n_names:
            raise WordListError(f"{lex.sources['names']}: no name pairs")
    if not lex.n_pairs:
        raise WordListError(f"{lex.sources['pairs']}: no gender pairs")
    return lex
