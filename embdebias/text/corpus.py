"""A text corpus streamed from disk: lines, then token lists, as many passes as needed.

gensim reads a training corpus once to build the vocabulary and once per epoch, so
:class:`LineCorpus` is an iterable that restarts at every ``iter()``: it holds at most
two blocks of text (64 KiB each) in memory, whatever the size of the file.

Reading
-------
The file is read by the one corpus reader, :class:`~embdebias.text.reader.CorpusFile`
(which ``embdebias cda`` uses too): UTF-8 text, plain or gzip-compressed (recognised by
its magic bytes, not its name), in blocks of 64 KiB that end at a line end. A line is
what ends at ``"\\n"`` (a ``"\\r\\n"`` end leaves a ``"\\r"`` that tokenization ignores).
A line longer than a block is cut at its last space or tab in the block, so a file
without line ends still streams in bounded memory. The reader's module docstring lists
what is refused (an empty or binary file, a NUL byte, undecodable UTF-8 with
``unicode_errors="strict"``, damaged gzip data), each error naming the file, the line
and the byte offset. The corpus must be a regular file: a directory, a FIFO or a
device cannot be read once per epoch.

Tokenization
------------
Each line is lower-cased (``lowercase=True``, the default) and its tokens are the
matches of :data:`TOKEN_PATTERN`: runs of letters, digits and underscores, with
inner apostrophes or hyphens kept (``"don't"``, ``"well-known"``). That is the
tokenizer of the extrinsic templates (:func:`embdebias.fairness.templates.tokenize`)
extended to every alphabet, with punctuation dropped; lower-case words are what the
bundled lists find (they fall back to the lower-case form of a cased word, as in
GloVe 6B's lower-case vocabulary), and the underscore keeps phrases that a corpus
has joined already (``new_york``). Another regular expression can be given
(``token_pattern``); it must not match the empty string and must have no capturing
group. A line with no token is skipped; one with more than
:data:`MAX_SENTENCE_WORDS` tokens is given in pieces of that length, because
gensim's training routines silently ignore the words of a sentence beyond it.

The transform hook
------------------
``transform`` is a callable that takes the stream of lines of one pass (str, each
ending with ``"\\n"`` except perhaps the last) and returns an iterable of lines, for
instance counterfactual data augmentation (``embdebias train --cda``). Each item it
yields is tokenized as one sentence. It is called again for every pass, so the same
corpus must give the same lines every time (a random transform changes the
vocabulary scan's counts and the learning-rate schedule from one epoch to the next).
"""

from __future__ import annotations

import os
import re
from typing import Callable, Iterable, Iterator

from ..errors import EmbdebiasError, quote
from .reader import CorpusFile, check_corpus_path

#: Tokens: runs of word characters (letters, digits, ``_``) with inner ``'`` or ``-``.
TOKEN_PATTERN = r"\w+(?:['-]\w+)*"
#: gensim's MAX_WORDS_IN_BATCH: its training routines drop the words of a sentence beyond it.
MAX_SENTENCE_WORDS = 10_000
#: Bytes read at a time; also the longest piece of a line without line end. Larger blocks read a
#: little faster alone but slowed gensim's training by a few per cent (measured on GCIDE, 2 cores):
#: the text of a block no longer fits the reading core's cache next to the training's vectors.
BLOCK_BYTES = 1 << 16

__all__ = ["LineCorpus", "TOKEN_PATTERN", "MAX_SENTENCE_WORDS", "check_corpus_path", "compile_token_pattern",
           "tokenize"]


def compile_token_pattern(pattern: str) -> re.Pattern:
    """Compile a token regular expression, refusing what would make empty or grouped tokens.

    Parameters
    ----------
    pattern : str
        A Python regular expression whose every match is one token.

    Returns
    -------
    re.Pattern

    Raises
    ------
    EmbdebiasError
        Not a regular expression, a capturing group (``findall`` would return the
        groups: use ``(?:...)``), or a match of the empty string.
    """
    try:
        regex = re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise EmbdebiasError(f"token_pattern {quote(pattern)} is not a regular expression: {exc}") from None
    if regex.groups:
        raise EmbdebiasError(f"token_pattern {quote(pattern)} has a capturing group; write groups as (?:...)")
    if regex.fullmatch("") is not None:
        raise EmbdebiasError(f"token_pattern {quote(pattern)} matches the empty string; tokens must not be empty")
    return regex


_TOKEN = re.compile(TOKEN_PATTERN)
#: Maps every ASCII byte that cannot be in a default token, but the line end, to a space. UTF-8
#: never uses ASCII bytes inside a multi-byte character, so the bytes of a block can go through it.
_SEPARATORS_TO_SPACE = bytes(b if chr(b).isalnum() or chr(b) in "_'-\n" or b >= 128 else 32
                             for b in range(256))


def tokenize(line: str, lowercase: bool = True) -> list[str]:
    """The tokens of one line, as :class:`LineCorpus` makes them by default.

    Parameters
    ----------
    line : str
    lowercase : bool
        Lower-case the line first.

    Returns
    -------
    list of str

    Examples
    --------
    >>> tokenize("She didn't say: \\"well-known\\", 42 times.")
    ['she', "didn't", 'say', 'well-known', '42', 'times']
    """
    return _TOKEN.findall(line.lower() if lowercase else line)


class LineCorpus:
    """A text file as a restartable stream of token lists, for gensim's ``corpus_iterable``.

    See the module docstring for how the file is read and tokenized.

    Parameters
    ----------
    path : path-like
        UTF-8 text, plain or gzip (detected by its magic bytes), one sentence or
        paragraph a line. Must be a regular file.
    lowercase : bool
        Lower-case every line before tokenizing it (default True).
    token_pattern : str
        The regular expression of a token (default :data:`TOKEN_PATTERN`).
    transform : callable, optional
        ``transform(lines) -> iterable of lines``, applied to the raw lines of each
        pass before tokenization (e.g. counterfactual data augmentation).
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8: an error naming the line and byte offset (strict), dropped
        bytes (ignore) or U+FFFD (replace).
    block_bytes : int
        Bytes read at a time (default 64 KiB).

    Attributes
    ----------
    path : Path
    compressed : bool
        Whether the file is gzip.
    size : int
        Bytes on disk, the unit of :attr:`progress`.
    progress : callable or None
        Called with the number of bytes read from the file since its last call, as
        the pass goes on (for a progress bar).

    Raises
    ------
    CorpusError
        The path is not a regular file; while iterating, a NUL byte, undecodable
        UTF-8 (strict) or damaged gzip data, naming the line and byte offset.
    """

    def __init__(self, path, *, lowercase: bool = True, token_pattern: str = TOKEN_PATTERN,
                 transform: Callable[[Iterator[str]], Iterable[str]] | None = None,
                 unicode_errors: str = "strict", block_bytes: int = BLOCK_BYTES):
        self.file = CorpusFile(path, unicode_errors=unicode_errors, block_bytes=int(block_bytes), cut_long_lines=True)
        self.path = self.file.path
        self.lowercase = bool(lowercase)
        self.token_pattern = token_pattern
        self._token = compile_token_pattern(token_pattern)
        self._default = token_pattern == TOKEN_PATTERN
        if transform is not None and not callable(transform):
            raise EmbdebiasError(f"transform must be a callable lines -> lines, got {type(transform).__name__}")
        self.transform = transform
        self.unicode_errors = self.file.unicode_errors
        self.block_bytes = self.file.block_bytes
        self.compressed = self.file.compressed
        self.size = self.file.size

    def __repr__(self) -> str:
        return f"LineCorpus({os.fspath(self.path)!r})"

    @property
    def progress(self) -> Callable[[int], None] | None:
        """Called with the bytes read from the file since its last call, as a pass goes on."""
        return self.file.progress

    @progress.setter
    def progress(self, callback: Callable[[int], None] | None) -> None:
        self.file.progress = callback

    # -- text ---------------------------------------------------------------------------
    def blocks(self, table: bytes | None = None) -> Iterator[str]:
        """Decoded text, block by block, each ending at a line end (or cut in an over-long line).

        ``table`` (a ``bytes.translate`` table that keeps NUL, the line end and every
        non-ASCII byte) is applied to the checked bytes before they are decoded.
        """
        for block in self.file.blocks():
            yield (block.translate(table) if table else block).decode("utf-8")

    def lines(self) -> Iterator[str]:
        """The lines of one pass, each ending with ``"\\n"`` (the last one perhaps not)."""
        for text in self.blocks():
            parts = text.split("\n")
            last = parts.pop()
            for part in parts:
                yield part + "\n"
            if last:
                yield last

    # -- tokens -------------------------------------------------------------------------
    def __iter__(self) -> Iterator[list[str]]:
        """One pass: the token list of every line that has a token (long ones in pieces).

        With the default pattern and no transform, every ASCII separator became a
        space before decoding (:meth:`_prepared_lines`), so an ASCII line without
        ``'`` or ``-`` holds only word characters and spaces: splitting it at the
        spaces gives exactly the regular expression's tokens, about twice as fast.
        """
        findall = self._token.findall
        fast = self._default and self.transform is None
        for line in self._prepared_lines():
            if fast and line.isascii() and "'" not in line and "-" not in line:
                tokens = line.split()
            else:
                tokens = findall(line)
            if len(tokens) > MAX_SENTENCE_WORDS:
                yield from _pieces(tokens)
            elif tokens:
                yield tokens

    def _prepared_lines(self) -> Iterator[str]:
        """The lines of one pass, lower-cased if asked (with the default pattern and no
        transform, every ASCII separator already made a space)."""
        lower = self.lowercase
        if self.transform is None:
            for text in self.blocks(_SEPARATORS_TO_SPACE if self._default else None):
                yield from (text.lower() if lower else text).split("\n")
        else:
            for line in self.transform(self.lines()):
                yield line.lower() if lower else line


def _pieces(tokens: list[str]) -> Iterator[list[str]]:
    """A long sentence in pieces of :data:`MAX_SENTENCE_WORDS` tokens."""
    for i in range(0, len(tokens), MAX_SENTENCE_WORDS):
        yield tokens[i:i + MAX_SENTENCE_WORDS]
