"""The counterfactual of a block of UTF-8 text (whole lines), vectorized with numpy.

**Words.** A word is a maximal run of ASCII letters, digits and ``_`` and of non-ASCII
characters, hyphens between two such characters included (``sons-in-law`` is one
word, ``he--she`` two). Non-ASCII punctuation and spaces are not word characters:
U+0080-U+00BF (no-break space, guillemets, ...), U+2000-U+207F (curly quotes, dashes,
ellipsis, thin spaces), U+3000-U+303F and U+FEFF (the byte-order mark). So ``he's``
and ``he’s`` hold the word ``he``, and a gendered word inside another word (``the``,
``manly``, ``mother-of-pearl``) is never touched. A dictionary word that ends in a dot
(``mr.``) takes the dot after the word.

**How.** Word starts and ends come from a byte table; a length filter, a two-byte
prefix table and an exact hash lookup (the first 16 lower-cased bytes and the length;
longer words checked byte by byte) find the dictionary words. The rules of
:mod:`._rules` are evaluated on arrays of the neighbouring words' features (prefix
sums count the blanks, sentence ends and lower-case letters in any range), so no
Python code runs per word; only the output is joined from slices of the input and the
replacement words. Everything between the swapped words is copied byte for byte.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import _rules
from ._lexicon import HONORIFICS, PRONOUNS, Lexicon

_WORD = np.zeros(256, dtype=bool)
for _lo, _hi in ((48, 58), (65, 91), (97, 123), (95, 96), (128, 256)):
    _WORD[_lo:_hi] = True
_IDENTITY = np.arange(256, dtype=np.uint8)
_LOWER = _IDENTITY.copy()
_LOWER[65:91] += 32
_IS_UPPER = np.zeros(256, dtype=bool)
_IS_UPPER[65:91] = True
_IS_LOWER = np.zeros(256, dtype=bool)
_IS_LOWER[97:123] = True
_BREAK = np.zeros(256, dtype=bool)
_BREAK[list(b"\n" + _rules.SENTENCE_END)] = True
_HYPHEN, _NEWLINE, _DOT = ord("-"), ord("\n"), ord(".")
_M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)

# Flags of the closed-class words (the rules' word lists).
FUNCTION, OBJECT, LY_EXCEPTION, OF, ABBREVIATION = 1, 2, 4, 8, 16


@dataclass
class BlockCounts:
    """What one block changed: the counts the augmenter adds to its statistics."""

    lines: int = 0
    augmented: int = 0
    swapped: Counter = field(default_factory=Counter)
    names: Counter = field(default_factory=Counter)
    kept: int = 0
    her: Counter = field(default_factory=Counter)


def _unmark_punctuation(a: np.ndarray, w: np.ndarray) -> None:
    """Non-ASCII punctuation and spaces are not word bytes (see the module docstring)."""
    lead = a[:-1]
    c2 = np.flatnonzero(lead == 0xC2)  # U+0080-U+00BF
    e2 = np.flatnonzero(lead == 0xE2)
    e2 = e2[(a[e2 + 1] == 0x80) | (a[e2 + 1] == 0x81)]  # U+2000-U+207F
    e3 = np.flatnonzero(lead == 0xE3)
    e3 = e3[a[e3 + 1] == 0x80]  # U+3000-U+303F
    ef = np.flatnonzero(lead == 0xEF)
    ef = ef[ef + 2 < len(a)]
    ef = ef[(a[ef + 1] == 0xBB) & (a[ef + 2] == 0xBF)]  # U+FEFF, the byte-order mark
    w[c2] = w[c2 + 1] = False
    for starts in (e2, e3, ef):
        starts = starts[starts + 2 < len(a)]
        w[starts] = w[starts + 1] = w[starts + 2] = False


def word_bytes(a: np.ndarray) -> np.ndarray:
    """The word-byte mask of the UTF-8 bytes ``a`` (comparisons: faster than a table lookup)."""
    w = ((a | 32) - np.uint8(97)) < 26  # ASCII letters
    w |= (a - np.uint8(48)) < 10
    w |= a >= 0x80
    w |= a == ord("_")
    if a.size and a.max() >= 0x80:
        _unmark_punctuation(a, w)
    hyphens = np.flatnonzero(a[1:-1] == _HYPHEN) + 1
    if hyphens.size:
        w[hyphens[w[hyphens - 1] & w[hyphens + 1]]] = True
    return w


def tokenize(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts, ends, word)``: byte offsets of the words of the UTF-8 bytes ``a``, and the word-byte mask."""
    w = word_bytes(a)
    padded = np.zeros(len(a) + 2, dtype=bool)
    padded[1:-1] = w
    edges = np.flatnonzero(padded[1:] != padded[:-1])  # alternately a word's start and its end
    return edges[0::2], edges[1::2], w


def _pack(a: np.ndarray, starts: np.ndarray, lengths: np.ndarray, offset: int, table: np.ndarray) -> np.ndarray:
    """Bytes ``offset`` to ``offset + 8`` of each word, mapped by ``table``, as one uint64 (0 past the end)."""
    cols = offset + np.arange(8)
    idx = starts[:, None] + cols
    np.minimum(idx, max(len(a) - 1, 0), out=idx)
    g = table[a[idx]] if len(a) else np.zeros(idx.shape, dtype=np.uint8)
    g[cols[None, :] >= lengths[:, None]] = 0
    return np.ascontiguousarray(g).view(np.uint64).ravel()


def _keys(a, starts, lengths, table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first 8 bytes, next 8 bytes, hash with the length)`` of each word."""
    k1, k2 = _pack(a, starts, lengths, 0, table), _pack(a, starts, lengths, 8, table)
    with np.errstate(over="ignore"):
        return k1, k2, k1 ^ (k2 * _M1) ^ (lengths.astype(np.uint64) * _M2)


class WordTable:
    """Exact lookup of the words of a block in a fixed word list, all at once.

    Parameters
    ----------
    words : list of bytes
        Distinct words, in the case they are matched in (lower case for a
        case-insensitive table).
    """

    def __init__(self, words: list[bytes]):
        self.words = list(words)
        lengths = np.array([len(w) for w in self.words], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        arr = np.frombuffer(b"".join(self.words), dtype=np.uint8)
        k1, k2, h = _keys(arr, starts, lengths, _IDENTITY)
        order = np.argsort(h, kind="stable")
        self.h, self.k1, self.k2, self.len, self.row = h[order], k1[order], k2[order], lengths[order], order
        if np.any(self.h[1:] == self.h[:-1]):
            raise ValueError("two words of a word table share a hash; rename one")
        self.long = bool(np.any(lengths > 16))

    def lookup(self, a: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *, fold: bool = True) -> np.ndarray:
        """The row of each word of ``a`` at ``starts``/``lengths`` (-1: not in the table).

        ``fold`` lower-cases ASCII letters of the text first.
        """
        if not len(starts) or not self.words:
            return np.full(len(starts), -1, dtype=np.int64)
        k1, k2, h = _keys(a, starts, lengths, _LOWER if fold else _IDENTITY)
        pos = np.minimum(np.searchsorted(self.h, h), len(self.h) - 1)
        ok = (self.h[pos] == h) & (self.k1[pos] == k1) & (self.k2[pos] == k2) & (self.len[pos] == lengths)
        rows = np.where(ok, self.row[pos], -1)
        if self.long:
            raw = a.tobytes()
            for i in np.flatnonzero(ok & (lengths > 16)).tolist():
                word = raw[starts[i]:starts[i] + lengths[i]]
                if (word.lower() if fold else word) != self.words[rows[i]]:
                    rows[i] = -1
        return rows


def _closed_class() -> tuple[WordTable, np.ndarray]:
    """The table of the rules' closed-class words and their flags."""
    flags: dict[str, int] = {}
    for words, flag in ((_rules.FUNCTION_WORDS, FUNCTION), (_rules.OBJECT_FOLLOWERS, OBJECT),
                        (_rules.LY_NOT_ADVERBS, LY_EXCEPTION), ({"of"}, OF),
                        (_rules.ABBREVIATIONS, ABBREVIATION)):
        for w in words:
            flags[w] = flags.get(w, 0) | flag
    words = sorted(flags)
    return WordTable([w.encode() for w in words]), np.array([flags[w] for w in words] + [0], dtype=np.int64)


_CLOSED, _CLOSED_FLAGS = _closed_class()


class _Block:
    """Features of the words of one block, computed on demand for arrays of word indices.

    Word index ``n`` (one past the last) is a sentinel: an empty word at the end.
    """

    def __init__(self, a: np.ndarray, word: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        self.a, self.size, self.n = a, len(a), len(starts)
        self.s = np.append(starts, len(a))
        self.e = np.append(ends, len(a))
        self._word = word

    @cached_property
    def _marks(self) -> np.ndarray:
        """Offsets of the bytes between words that are neither a space nor a tab."""
        a = self.a
        return np.flatnonzero((a != 32) & (a != 9) & ~self._word)

    @cached_property
    def _breaks(self) -> np.ndarray:
        """Offsets of the newlines and sentence ends (a subset of :attr:`_marks`)."""
        return self._marks[_BREAK[self.a[self._marks]]]

    def blank(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether bytes ``lo:hi`` (between two words) are spaces or tabs only (true when empty)."""
        return np.searchsorted(self._marks, lo) == np.searchsorted(self._marks, np.maximum(hi, lo))

    def has_break(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether bytes ``lo:hi`` hold a newline or a sentence end (``. ! ? : ;``)."""
        return np.searchsorted(self._breaks, lo) < np.searchsorted(self._breaks, np.maximum(hi, lo))

    def second_lower(self, t: np.ndarray) -> np.ndarray:
        """Whether the second byte of the words ``t`` is an ASCII lower-case letter ("He", "McKay")."""
        return _IS_LOWER[self.a[np.minimum(self.s[t] + 1, self.size - 1)]] & (self.e[t] - self.s[t] > 1)

    def first_upper(self, t: np.ndarray) -> np.ndarray:
        return _IS_UPPER[self.a[np.minimum(self.s[t], self.size - 1)]] & (t < self.n)

    def flags(self, t: np.ndarray) -> np.ndarray:
        """Closed-class flags of the words ``t`` (0 for an open-class word)."""
        return _CLOSED_FLAGS[_CLOSED.lookup(self.a, self.s[t], self.e[t] - self.s[t])]

    def ends_in_ly(self, t: np.ndarray) -> np.ndarray:
        e = np.maximum(self.e[t], 2)
        long_enough = (self.e[t] - self.s[t]) >= 3
        return long_enough & (_LOWER[self.a[e - 2]] == ord("l")) & (_LOWER[self.a[e - 1]] == ord("y"))

    def case_class(self, t: np.ndarray) -> np.ndarray:
        """0: lower case (or as written), 1: UPPER case, 2: Title case."""
        up, low = self.first_upper(t), self.second_lower(t)
        return np.where(up & ~low, 1, np.where(up, 2, 0))


class Engine:
    """The intervention on blocks of whole lines (bytes in, bytes out).

    Parameters
    ----------
    lexicon : Lexicon
    grammatical : bool
        Apply the rules of :mod:`._rules` (else the naive intervention: every word
        swapped, ``her`` to the first of its alternatives).
    """

    def __init__(self, lexicon: Lexicon, *, grammatical: bool):
        self.grammatical = grammatical
        keys = list(lexicon.entries)
        entries = [lexicon.entries[k] for k in keys]
        self._entry_arrays(entries)
        self._word_tables(keys)
        names = [(e.word.encode("utf-8"), e.word.upper().encode("utf-8")) for e in entries if e.is_name]
        self.names_on = bool(names)
        self.name_case = WordTable(sorted({w for pair in names for w in pair}))

    def _word_tables(self, keys: list[bytes]) -> None:
        """The lookup of the dictionary words (without a final dot) and the filters before it."""
        base = sorted({k[:-1] if k.endswith(b".") else k for k in keys})
        self.table = WordTable(base)
        index = {k: i for i, k in enumerate(keys)}
        self.plain_id = np.array([index.get(b, -1) for b in base], dtype=np.int64)
        self.dot_id = np.array([index.get(b + b".", -1) for b in base], dtype=np.int64)
        lengths = [len(b) for b in base]
        self.min_len, self.max_len = max(2, min(lengths)), max(lengths)
        two = [b for b in base if len(b) >= 2]
        self.prefix = np.zeros(65536, dtype=bool)  # the first two bytes
        self.prefix[[(b[0] | 32) * 256 + (b[1] | 32) for b in two]] = True
        self.shape = np.zeros((self.max_len + 1) * 65536, dtype=bool)  # length, first and last byte
        self.shape[[len(b) * 65536 + (b[0] | 32) * 256 + (b[-1] | 32) for b in two]] = True

    def _entry_arrays(self, entries: list) -> None:
        """Per-entry arrays: name, exempt from the proper-noun rule, her-like, label and targets."""
        self.is_name = np.array([e.is_name for e in entries], dtype=bool)
        self.exempt = np.array([e.word in PRONOUNS or e.word in HONORIFICS for e in entries], dtype=bool)
        self.is_her = np.array([set(e.targets) == {"him", "his"} for e in entries], dtype=bool)
        self.labels = sorted({e.label for e in entries})
        label_index = {lab: i for i, lab in enumerate(self.labels)}
        self.label_id = np.array([label_index[e.label] for e in entries], dtype=np.int64)
        self._target_forms(entries)

    def _target_forms(self, entries: list) -> None:
        """Every target word in lower (or written), UPPER and Title case; each entry's default."""
        targets = sorted({(t, e.is_name) for e in entries for t in e.targets} | {("him", False), ("his", False)})
        t_index = {t: i for i, t in enumerate(targets)}
        self.target_id = np.array([t_index[(e.targets[0], e.is_name)] for e in entries], dtype=np.int64)
        self.him_id, self.his_id = t_index[("him", False)], t_index[("his", False)]
        self.forms = [(t.encode(), t.upper().encode(), (t if name else t[:1].upper() + t[1:]).encode())
                      for t, name in targets]

    # ------------------------------------------------------------------ finding words
    def find(self, a: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        """``(word indices, entry ids, end offsets)`` of the dictionary words of a block."""
        lengths = ends - starts
        sel = np.flatnonzero((lengths >= self.min_len) & (lengths <= self.max_len))
        s, n = starts[sel], lengths[sel].astype(np.int32)
        # "| 32" lower-cases an ASCII letter and makes no other byte a letter: exact for this filter.
        first = (a[s] | 32).astype(np.int32) << 8
        sel = sel[self.prefix[first | (a[s + 1] | 32)] & self.shape[(n << 16) | first | (a[s + n - 1] | 32)]]
        rows = self.table.lookup(a, starts[sel], lengths[sel])
        sel, rows = sel[rows >= 0], rows[rows >= 0]
        end = ends[sel]
        dot = (self.dot_id[rows] >= 0) & (a[np.minimum(end, len(a) - 1)] == _DOT) & (end < len(a))
        ent = np.where(dot, self.dot_id[rows], self.plain_id[rows])
        end = end + dot
        ok = ent >= 0
        return sel[ok], ent[ok], end[ok]

    def _valid_names(self, blk: _Block, c: np.ndarray, ent: np.ndarray) -> np.ndarray:
        """False for a name that is neither as written nor in UPPER case ("carol")."""
        ok = np.ones(len(c), dtype=bool)
        names = np.flatnonzero(self.is_name[ent])
        if names.size:
            t = c[names]
            ok[names] = self.name_case.lookup(blk.a, blk.s[t], blk.e[t] - blk.s[t], fold=False) >= 0
        return ok

    # ------------------------------------------------------------------ the rules
    def proper(self, blk: _Block, t: np.ndarray, name_words: np.ndarray) -> np.ndarray:
        """Whether the words ``t`` read as proper nouns (and are not names being swapped)."""
        out = blk.first_upper(t) & blk.second_lower(t)
        some = np.flatnonzero(out)
        out[some] = (blk.flags(t[some]) & FUNCTION) == 0
        if name_words.size:
            out &= ~np.isin(t, name_words)
        return out

    def beside_proper_noun(self, blk: _Block, c: np.ndarray, end: np.ndarray, name_words: np.ndarray) -> np.ndarray:
        """Whether the words ``c`` (ending at ``end``) stand beside a proper noun (see :mod:`._rules`)."""
        n = blk.n
        nxt = np.minimum(c + 1, n)
        adjacent = (nxt < n) & blk.blank(end, blk.s[nxt])
        keep = adjacent & self.proper(blk, nxt, name_words)
        after = np.minimum(nxt + 1, n)
        keep |= (adjacent & ((blk.flags(nxt) & OF) > 0) & blk.blank(blk.e[nxt], blk.s[after])
                 & self.proper(blk, after, name_words))
        prv = np.maximum(c - 1, 0)
        gap = blk.e[prv]
        spaced = (c >= 1) & blk.blank(gap, blk.s[c])
        dotted = ((c >= 1) & (blk.a[np.minimum(gap, blk.size - 1)] == _DOT) & blk.blank(gap + 1, blk.s[c])
                  & ((blk.flags(prv) & ABBREVIATION) > 0))
        initial = (prv == 0) | blk.has_break(blk.e[np.maximum(prv - 1, 0)], blk.s[prv])
        return keep | (self.proper(blk, prv, name_words) & ((spaced & ~initial) | dotted))

    @staticmethod
    def her_is_object(blk: _Block, c: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The rule of :func:`._rules.her_target` on arrays: True where ``her`` becomes ``him``."""
        nxt = np.minimum(c + 1, blk.n)
        adjacent = (nxt < blk.n) & blk.blank(end, blk.s[nxt])
        flags = blk.flags(nxt)
        plain = ~blk.first_upper(nxt) | ~blk.second_lower(nxt)
        adverb = blk.ends_in_ly(nxt) & ((flags & LY_EXCEPTION) == 0)
        return ~adjacent | ((flags & FUNCTION) > 0) | (plain & (((flags & OBJECT) > 0) | adverb))

    # ------------------------------------------------------------------ the block
    def transform(self, raw: bytes, two_sided: bool) -> tuple[bytes, BlockCounts]:
        """The output of the block ``raw`` (whole lines) and what it changed.

        ``two_sided``: keep every line and follow each changed one by its
        counterfactual; else replace the changed lines.
        """
        counts = BlockCounts(lines=raw.count(b"\n") + (bool(raw) and not raw.endswith(b"\n")))
        a, starts, ends, reps = self.swaps(raw, counts)
        if not reps:
            return raw, counts
        return _assemble(raw, a, starts, ends, reps, two_sided, counts), counts

    def swaps(self, raw: bytes, counts: BlockCounts, lo: int = 0, hi: int | None = None):
        """``(bytes as array, starts, ends, replacements)`` of the words of ``raw`` swapped, counted in ``counts``.

        Only the words that start in ``raw[lo:hi]`` are swapped and counted; the bytes
        around are context (the rules look at the words beside): a part of a long line
        is transformed this way (:mod:`._long_lines`).
        """
        a = np.frombuffer(raw, dtype=np.uint8)
        starts, ends, word = tokenize(a)
        c, ent, end = self.find(a, starts, ends)
        if hi is not None or lo:
            inside = (starts[c] >= lo) & (starts[c] < (len(raw) if hi is None else hi))
            c, ent, end = c[inside], ent[inside], end[inside]
        if not c.size:
            return a, c, end, []
        blk = _Block(a, word, starts, ends)
        ok = self._valid_names(blk, c, ent)
        c, ent, end = c[ok], ent[ok], end[ok]
        target = self._targets(blk, c, ent, end, counts)
        swap = target >= 0
        c, ent, end, target = c[swap], ent[swap], end[swap], target[swap]
        if not c.size:
            return a, c, end, []
        self._count(ent, counts)
        cls = blk.case_class(c)
        forms = self.forms
        return a, starts[c], end, [forms[t][k] for t, k in zip(target.tolist(), cls.tolist())]

    def _targets(self, blk: _Block, c, ent, end, counts: BlockCounts) -> np.ndarray:
        """The target form index of each dictionary word (-1: kept)."""
        target = self.target_id[ent].copy()
        if not self.grammatical:
            return target
        names = c[self.is_name[ent]] if self.names_on else c[:0]
        subject = ~self.exempt[ent] & ~self.is_name[ent]
        kept = np.zeros(len(c), dtype=bool)
        if subject.any():
            kept[subject] = self.beside_proper_noun(blk, c[subject], end[subject], names)
        counts.kept += int(kept.sum())
        her = np.flatnonzero(self.is_her[ent])
        if her.size:
            obj = self.her_is_object(blk, c[her], end[her])
            target[her] = np.where(obj, self.him_id, self.his_id)
            counts.her.update({k: v for k, v in (("him", int(obj.sum())), ("his", int((~obj).sum()))) if v})
        target[kept] = -1
        return target

    def _count(self, ent: np.ndarray, counts: BlockCounts) -> None:
        for names, counter in ((False, counts.swapped), (True, counts.names)):
            ids = self.label_id[ent[self.is_name[ent] == names]]
            if ids.size:
                hist = np.bincount(ids, minlength=len(self.labels))
                counter.update({self.labels[i]: int(hist[i]) for i in np.flatnonzero(hist).tolist()})


def _assemble(raw: bytes, a: np.ndarray, es: np.ndarray, ee: np.ndarray, reps: list[bytes], two_sided: bool,
              counts: BlockCounts) -> bytes:
    """The block with each changed line replaced (or followed) by its counterfactual."""
    bounds = [0, *ee.tolist()]
    parts = [None] * (2 * len(reps) + 1)
    parts[0::2] = [raw[p:s] for p, s in zip(bounds, es.tolist())] + [raw[bounds[-1]:]]
    parts[1::2] = reps
    cf = b"".join(parts)
    newlines = np.flatnonzero(a == _NEWLINE)
    line = np.searchsorted(newlines, es)
    lines = np.unique(line)
    counts.augmented += len(lines)
    if not two_sided:
        return cf
    size = len(raw)
    shift = np.concatenate([[0], np.cumsum(np.array([len(r) for r in reps]) - (ee - es))])
    if newlines.size:
        line_start = np.where(lines > 0, newlines[np.maximum(lines - 1, 0)] + 1, 0)
    else:
        line_start = np.zeros_like(lines)
    line_end = newlines[np.minimum(lines, len(newlines) - 1)] if newlines.size else np.full_like(lines, size)
    line_end = np.where(lines < len(newlines), line_end, size)  # the "\n", or the end of the block
    cf_start = line_start + shift[np.searchsorted(line, lines, "left")]
    cf_stop = line_end + shift[np.searchsorted(line, lines, "right")] + 1
    stop = np.minimum(line_end + 1, size).tolist()
    originals = [raw[p:q] for p, q in zip([0, *stop[:-1]], stop)]
    if line_end[-1] == size:  # a last line without a newline: its counterfactual goes on a new line
        originals[-1] += b"\n"
    out = [None] * (2 * len(originals) + 1)
    out[0:-1:2] = originals
    out[1::2] = [cf[p:q] for p, q in zip(cf_start.tolist(), cf_stop.tolist())]
    out[-1] = raw[stop[-1]:]
    return b"".join(out)
