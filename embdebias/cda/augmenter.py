"""The counterfactual data augmenter: one line, a stream of lines, or a corpus file."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sklearn.base import BaseEstimator

from .._files import check_unicode_errors
from ..errors import EmbdebiasError
from ..text import BLOCK_BYTES as BLOCK_SIZE
from ..text import CorpusFile
from ._engine import BlockCounts, Engine
from ._lexicon import Lexicon, build_lexicon
from ._long_lines import transformed

MODES = ("two-sided", "replace")
INTERVENTIONS = ("grammatical", "naive")
#: Lines of ``augment(lines)`` handled at a time (their text joined into one block).
_BATCH_CHARS = 1 << 20
#: gzip level of a ``.gz`` output: 1 compresses text at about 70 MB/s (level 6, the
#: vector writers' level, at about 20 MB/s would halve the command's speed) for files
#: about 15 % larger; an augmented corpus is an intermediate.
GZIP_LEVEL = 1


def _ranked(counter: Counter) -> dict:
    """A counter as a dict, most frequent first (ties by key): deterministic JSON."""
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class CDAStats:
    """What an augmentation read, changed and wrote.

    Attributes
    ----------
    lines_read : int
        Input lines (a last line without a newline counts).
    lines_augmented : int
        Lines with at least one swapped word: in two-sided mode each is followed by its
        counterfactual, in replace mode it is replaced.
    lines_written : int
    bytes_read, bytes_written : int
        Text bytes (decompressed), after ``unicode_errors`` was applied to the input.
    swapped : Counter
        Swapped words per gender pair (``"he:she"``, ``"his|him:her"``).
    names_swapped : Counter
        Swapped first names per name pair (``"John:Mary"``).
    kept_proper_noun : int
        Gendered words kept because a proper noun stands beside them (grammatical).
    her : Counter
        What ``her`` became under the grammatical rule (``{"him": n, "his": m}``).
    seconds : float
    """

    lines_read: int = 0
    lines_augmented: int = 0
    lines_written: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    swapped: Counter = field(default_factory=Counter)
    names_swapped: Counter = field(default_factory=Counter)
    kept_proper_noun: int = 0
    her: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def words_swapped(self) -> int:
        """Swapped gendered words, all pairs together (names not included)."""
        return sum(self.swapped.values())

    def add(self, counts: BlockCounts, two_sided: bool) -> None:
        """Add one block's counts."""
        self.lines_read += counts.lines
        self.lines_augmented += counts.augmented
        self.lines_written += counts.lines + (counts.augmented if two_sided else 0)
        self.swapped.update(counts.swapped)
        self.names_swapped.update(counts.names)
        self.kept_proper_noun += counts.kept
        self.her.update(counts.her)

    def to_dict(self) -> dict:
        """JSON-ready statistics (counters most frequent first)."""
        return {"lines_read": self.lines_read, "lines_augmented": self.lines_augmented,
                "lines_written": self.lines_written, "bytes_read": self.bytes_read,
                "bytes_written": self.bytes_written, "words_swapped": self.words_swapped,
                "names_swapped": sum(self.names_swapped.values()), "kept_proper_noun": self.kept_proper_noun,
                "her": _ranked(self.her), "swapped_per_pair": _ranked(self.swapped),
                "names_per_pair": _ranked(self.names_swapped), "seconds": round(self.seconds, 3)}

    def summary(self, top: int = 10) -> str:
        """A few lines for a person: lines, swaps and the ``top`` most swapped pairs."""
        share = f" ({self.lines_augmented / self.lines_read:.1%})" if self.lines_read else ""
        rows = [f"lines read {self.lines_read:,}, augmented {self.lines_augmented:,}{share}, "
                f"written {self.lines_written:,}",
                f"words swapped {self.words_swapped:,} in {len(self.swapped)} pairs; names swapped "
                f"{sum(self.names_swapped.values()):,}; kept beside a proper noun {self.kept_proper_noun:,}"]
        if self.her:
            rows.append("her became " + ", ".join(f"{k} {v:,}" for k, v in _ranked(self.her).items()))
        if self.swapped and top:
            pairs = list(_ranked(self.swapped).items())[:top]
            rows.append("most swapped pairs: " + ", ".join(f"{k} {v:,}" for k, v in pairs))
        if self.seconds and self.bytes_read >= 100_000:
            rows.append(f"{self.bytes_read / 1e6:,.1f} MB in {self.seconds:.1f} s "
                        f"({self.bytes_read / 1e6 / self.seconds:,.1f} MB/s)")
        return "\n".join(rows)


class CounterfactualAugmenter(BaseEstimator):
    """Counterfactual data augmentation (CDA) of a text corpus, after Lu et al. (2020).

    Every gendered word of a line is swapped with its partner of a bidirectional
    dictionary (``he`` <-> ``she``, ``king`` <-> ``queen``, ...), keeping its case
    (``He`` -> ``She``, ``HE`` -> ``SHE``) and every other byte of the line.

    Parameters
    ----------
    pairs : None, path or iterable of (male, female)
        The gender pairs. None: Lu et al.'s 124 pairs from their supplement, their
        ``her:him/his`` and ``himself:herself`` (``wordlists/cda_pairs.txt``). A file:
        one pair a line, male first; a side may list alternatives joined by ``|``
        (``his|him her``). A word may stand in one pair only, on one side.
    names : bool, path or iterable of (male, female)
        Swap first names too (True: the bundled 60 pairs of ``wordlists/cda_names.txt``;
        or a file or pairs of the same form). Names match in Title and UPPER case only.
    mode : {"two-sided", "replace"}
        ``"two-sided"`` (default): every line is kept and each line with a swapped
        word is followed by its counterfactual. ``"replace"``: the counterfactual
        takes the line's place.
    intervention : {"grammatical", "naive"}
        ``"naive"``: every dictionary word is swapped, ``her`` always to ``his``.
        ``"grammatical"`` (default): ``her`` becomes ``him`` or ``his`` by the next
        word, and a gendered noun beside a proper noun is kept ("Queen Elizabeth");
        see :mod:`embdebias.cda._rules`.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 in a corpus file: an error naming the line and byte offset
        (strict), dropped (ignore) or U+FFFD (replace), as gensim's ``unicode_errors``.
    block_size : int
        Bytes read at a time from a file.

    Attributes
    ----------
    lexicon_ : Lexicon
        The checked dictionary (set by :meth:`fit`, which every method calls first).
    stats_ : CDAStats
        The statistics of the last :meth:`augment` or :meth:`augment_file`.

    Examples
    --------
    >>> cda = CounterfactualAugmenter()
    >>> cda.counterfactual("He gave her his book.")
    'She gave him her book.'
    >>> list(cda.augment(["The king smiled.", "It rained."]))
    ['The king smiled.', 'The queen smiled.', 'It rained.']
    """

    def __init__(self, pairs=None, *, names=False, mode: str = "two-sided", intervention: str = "grammatical",
                 unicode_errors: str = "strict", block_size: int = BLOCK_SIZE):
        self.pairs = pairs
        self.names = names
        self.mode = mode
        self.intervention = intervention
        self.unicode_errors = unicode_errors
        self.block_size = block_size

    # ------------------------------------------------------------------ setup
    def _check_params(self) -> None:
        if self.mode not in MODES:
            raise EmbdebiasError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.intervention not in INTERVENTIONS:
            raise EmbdebiasError(f"intervention must be one of {', '.join(INTERVENTIONS)}, "
                                 f"got {self.intervention!r}")
        check_unicode_errors(self.unicode_errors)
        if isinstance(self.block_size, bool) or not isinstance(self.block_size, int) or self.block_size < 1:
            raise EmbdebiasError(f"block_size must be a positive integer, got {self.block_size!r}")

    def fit(self, X=None, y=None) -> "CounterfactualAugmenter":
        """Check the parameters and read the pair (and name) lists.

        Parameters
        ----------
        X, y : ignored
            Present for the scikit-learn API.

        Returns
        -------
        self
        """
        self._check_params()
        self.lexicon_: Lexicon = build_lexicon(self.pairs, self.names)
        self._engine = Engine(self.lexicon_, grammatical=self.intervention == "grammatical")
        return self

    def set_params(self, **params) -> "CounterfactualAugmenter":
        """Set parameters (scikit-learn API); the lists are read again on next use."""
        super().set_params(**params)
        self.__dict__.pop("_engine", None)
        return self

    def _fitted(self) -> Engine:
        if "_engine" not in self.__dict__:
            self.fit()
        return self._engine

    # ------------------------------------------------------------------ text
    def counterfactual(self, text: str) -> str:
        """The counterfactual of ``text`` (a sentence or line; newlines inside are kept).

        Parameters
        ----------
        text : str

        Returns
        -------
        str
            ``text`` with every gendered word swapped as the intervention says.
        """
        raw = text.encode("utf-8", "surrogatepass")
        out, _ = self._fitted().transform(raw, two_sided=False)
        return out.decode("utf-8", "surrogatepass")

    def augment(self, lines: Iterable[str]) -> Iterator[str]:
        """Stream the augmentation of ``lines`` (str, each with or without its newline).

        In two-sided mode every line is yielded, and a line with a swapped word is
        followed by its counterfactual (ending as the line does); in replace mode the
        counterfactual is yielded instead. Lines are handled in batches of about 1 MB.
        ``stats_`` counts as the stream goes.

        Parameters
        ----------
        lines : iterable of str

        Yields
        ------
        str
        """
        engine, two_sided = self._fitted(), self.mode == "two-sided"
        self.stats_ = stats = CDAStats()
        start = time.perf_counter()
        batch, size = [], 0
        for line in lines:
            batch.append(line)
            size += len(line)
            if size >= _BATCH_CHARS:
                yield from self._augment_batch(engine, batch, two_sided, stats)
                batch, size = [], 0
                stats.seconds = time.perf_counter() - start
        if batch:
            yield from self._augment_batch(engine, batch, two_sided, stats)
        stats.seconds = time.perf_counter() - start

    @staticmethod
    def _augment_batch(engine: Engine, batch: list[str], two_sided: bool, stats: CDAStats) -> list[str]:
        bodies = [line[:-1] if line.endswith("\n") else line for line in batch]
        text = "\n".join(bodies)
        if text.count("\n") != len(bodies) - 1:
            raise EmbdebiasError("augment(): a line holds a newline before its end; give one line per item")
        raw = text.encode("utf-8", "surrogatepass")
        out, counts = engine.transform(raw, two_sided=False)
        counts.lines = len(batch)
        stats.add(counts, two_sided)
        newlines = sum(len(body) < len(line) for body, line in zip(bodies, batch))
        stats.bytes_read += len(raw) - (len(batch) - 1) + newlines
        if out is raw:
            result = list(batch)
        else:
            new = out.decode("utf-8", "surrogatepass").split("\n")
            result = []
            for line, body, cf in zip(batch, bodies, new):
                if cf == body:
                    result.append(line)
                    continue
                cf += line[len(body):]  # the line's own ending
                result += (line, cf) if two_sided else (cf,)
        stats.bytes_written += sum(len(s.encode("utf-8", "surrogatepass")) for s in result)
        return result

    # ------------------------------------------------------------------ files
    def iter_file(self, src) -> Iterator[str]:
        """The augmentation of the corpus file ``src`` as lines (str, without their newline).

        What :meth:`augment_file` would write, streamed block by block and never written
        to disk (for training on the augmented corpus). ``stats_`` counts as it goes.

        Parameters
        ----------
        src : path
            As for :meth:`augment_file`.

        Yields
        ------
        str

        Raises
        ------
        CorpusError
            As for :meth:`augment_file`.
        """
        engine, two_sided = self._fitted(), self.mode == "two-sided"
        corpus = CorpusFile(src, unicode_errors=self.unicode_errors, block_bytes=self.block_size,
                            cut_long_lines=True, cut_inside_words=False)
        self.stats_ = stats = CDAStats()
        start = time.perf_counter()
        carry = ""  # the start of a line that a long line's parts have not ended yet
        for data, counts in transformed(engine, _counting(corpus.blocks(), stats), two_sided):
            stats.add(counts, two_sided)
            stats.bytes_written += len(data)
            lines = (carry + data.decode("utf-8")).split("\n")
            carry = lines.pop()
            yield from lines
            stats.seconds = time.perf_counter() - start
        if carry:
            yield carry

    def augment_file(self, src, dst, *, progress: bool = False) -> CDAStats:
        """Augment the corpus ``src`` into ``dst``, streamed, atomically.

        Parameters
        ----------
        src : path
            A UTF-8 text file, one sentence (or paragraph) a line; gzip-compressed if
            it starts with the gzip magic bytes, whatever its name. Never modified.
        dst : path
            The output, gzip-compressed (level 1) if its name ends in ``.gz``. Written to a
            temporary file next to it and renamed at the end: an error or an
            interruption leaves no partial output (and an existing ``dst`` as it was).
        progress : bool
            Show a progress bar (bytes of ``src``).

        Returns
        -------
        CDAStats
            Also kept as ``stats_``.

        Raises
        ------
        CorpusError
            ``src`` is missing, a directory or a FIFO, empty, binary, or holds
            undecodable UTF-8 (with ``unicode_errors="strict"``), or its gzip data is
            damaged; the message names the file, the line and the byte offset.
        EmbdebiasError
            ``dst`` is ``src``; a bad parameter or pair list (:class:`WordListError`).
        """
        from .._atomic import atomic_file, check_output
        from .._files import open_output

        engine, two_sided = self._fitted(), self.mode == "two-sided"
        corpus = CorpusFile(src, unicode_errors=self.unicode_errors, block_bytes=self.block_size,
                            cut_long_lines=True, cut_inside_words=False)
        src, dst = corpus.path, Path(dst)
        check_output(dst, inputs=(src,))
        self.stats_ = stats = CDAStats()
        start = time.perf_counter()
        with atomic_file(dst, inputs=(src,)) as tmp, open_output(tmp, dst, compresslevel=GZIP_LEVEL) as out:
            bar = _ProgressBar(corpus) if progress else None
            try:
                for data, counts in transformed(engine, _counting(corpus.blocks(), stats), two_sided):
                    out.write(data)
                    stats.add(counts, two_sided)
                    stats.bytes_written += len(data)
                    if bar is not None:
                        bar.update()
            except BaseException:
                if bar is not None:
                    bar.close(leave=False)  # the error message stands alone
                raise
            if bar is not None:
                bar.close(leave=True)
        stats.seconds = time.perf_counter() - start
        return stats


def _counting(blocks: Iterator[bytes], stats: CDAStats) -> Iterator[bytes]:
    """The blocks, each counted in ``stats.bytes_read`` as it is read."""
    for block in blocks:
        stats.bytes_read += len(block)
        yield block


class _ProgressBar:
    """A tqdm bar over the bytes of the corpus file, shown from the first block on."""

    def __init__(self, corpus: CorpusFile):
        self.corpus, self.bar, self.read = corpus, None, 0
        corpus.progress = self._count

    def _count(self, n_bytes: int) -> None:
        self.read += n_bytes

    def update(self) -> None:
        """Show the bytes read so far (called after each block: an error in the first shows no bar)."""
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.corpus.size, unit="B", unit_scale=True, desc=f"cda {self.corpus.path.name}")
        self.bar.update(self.read - self.bar.n)

    def close(self, leave: bool) -> None:
        self.corpus.progress = None
        if self.bar is not None:
            self.bar.leave = leave
            self.bar.close()


def augment_file(src, dst, *, progress: bool = False, **params) -> CDAStats:
    """``CounterfactualAugmenter(**params).augment_file(src, dst)``: one call from corpus to corpus.

    Parameters
    ----------
    src, dst : path
        See :meth:`CounterfactualAugmenter.augment_file`.
    progress : bool
        Show a progress bar.
    **params
        The augmenter's parameters (``pairs``, ``names``, ``mode``, ``intervention``,
        ``unicode_errors``, ``block_size``).

    Returns
    -------
    CDAStats
    """
    return CounterfactualAugmenter(**params).augment_file(src, dst, progress=progress)
