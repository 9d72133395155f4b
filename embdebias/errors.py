"""Project exception classes.

Every error that bad input can cause is an :class:`EmbdebiasError`, so the CLI can
turn it into one line on stderr and exit status 2.  The subclasses also inherit from
the matching built-in exception (``ValueError``, ``KeyError``) so that ordinary Python
code that catches those keeps working.
"""

from __future__ import annotations

import errno
import os


class EmbdebiasError(Exception):
    """Base class of every error embdebias raises on bad input or bad settings."""


class _LocatedError(EmbdebiasError, ValueError):
    """An error in a file, at a line or byte offset when known (``path (line L, byte offset B): ...``)."""

    def __init__(self, path, message: str, *, line: int | None = None, offset: int | None = None):
        self.path = os.fspath(path) if path is not None else None
        self.line = line
        self.offset = offset
        self.reason = message
        super().__init__(_located(self.path, message, line, offset))


class VectorFileError(_LocatedError):
    """A vector file is malformed.

    Parameters
    ----------
    path : str or path-like
        The file being read.
    message : str
        What was wrong and what was expected.
    line : int, optional
        1-based line number (text formats).
    offset : int, optional
        Byte offset from the start of the file (binary formats).
    """


def _located(path, message: str, line: int | None, offset: int | None) -> str:
    """``"path (line L, byte offset B): message"``, leaving out what is not known."""
    where = []
    if line is not None:
        where.append(f"line {line}")
    if offset is not None:
        where.append(f"byte offset {offset}")
    loc = f" ({', '.join(where)})" if where else ""
    return f"{path}{loc}: {message}"


class CorpusError(_LocatedError):
    """A text corpus cannot be read or trained on.

    Raised for a corpus that is not a regular file, is empty or binary, holds
    undecodable UTF-8 (with ``unicode_errors="strict"``), has no word reaching
    ``min_count``, or is damaged gzip.

    Parameters
    ----------
    path : str or path-like
        The corpus file.
    message : str
        What was wrong and what was expected.
    line : int, optional
        1-based line number.
    offset : int, optional
        Byte offset from the start of the (decompressed) text.
    """


class UnknownFormatError(EmbdebiasError, ValueError):
    """The format of a file could not be detected, or a format name is not known."""


class DimensionError(EmbdebiasError, ValueError):
    """Vectors or subspaces whose dimensions do not match."""


class NonFiniteError(EmbdebiasError, ValueError):
    """NaN or infinite values where finite numbers are required."""


class MissingWordsError(EmbdebiasError, KeyError, ValueError):
    """Words that are needed are out of the embedding's vocabulary.

    A ``KeyError`` (a missing key, as in gensim's ``KeyedVectors``) and a ``ValueError``
    (what ``Sequence.index`` raises for a missing item), so code written for either
    convention catches it.

    Attributes
    ----------
    missing : list of str
        The out-of-vocabulary words.
    """

    def __init__(self, message: str, missing=()):
        self.missing = list(missing)
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


class DuplicateWordsError(EmbdebiasError, ValueError):
    """A vocabulary was given the same word more than once.

    Attributes
    ----------
    duplicates : list of str
        The repeated words.
    """

    def __init__(self, message: str, duplicates=()):
        self.duplicates = list(duplicates)
        super().__init__(message)


class WordListError(EmbdebiasError, ValueError):
    """A word-list file is malformed or a named list does not exist."""


class AttributeFileError(WordListError):
    """An attribute (its JSON file, a key of it, or its name) is malformed or unknown."""


class SolverError(EmbdebiasError, RuntimeError):
    """An optimisation problem did not solve to an acceptable status."""


class FairnessInputError(EmbdebiasError, ValueError):
    """Bad input to an extrinsic fairness metric (:mod:`embdebias.fairness`).

    Mismatched lengths, non-finite scores, a group with no examples, a metric that
    needs gold labels or counterfactual templates called without them, an unknown
    scoring, comparison or metric name, and the like.
    """


class OutputLockedError(EmbdebiasError):
    """Another process is writing the same output (:func:`embdebias._lock.output_lock`).

    Attributes
    ----------
    holder : dict
        The holder's record as far as it could be read: ``pid``, ``host``, ``purpose``,
        ``started`` (missing keys were not recorded).
    """

    def __init__(self, message: str, holder=None):
        self.holder = dict(holder or {})
        super().__init__(message)


class OutputChangedError(EmbdebiasError):
    """An output is not the one this run wrote: another process wrote or changed it since
    (:func:`embdebias._provenance.check_stamp`)."""


class MissingFileError(EmbdebiasError, FileNotFoundError):
    """An input file or directory does not exist.

    Also a :class:`FileNotFoundError` (``errno`` ENOENT, ``filename`` the path), so that
    ``except FileNotFoundError`` catches it as it would the built-in error. Each kind of
    input has its own subclass, which is also that kind's error (:class:`VectorFileNotFoundError`
    is a :class:`VectorFileError`, ...): :func:`file_not_found` picks it.

    Attributes
    ----------
    path : str
        The missing path (also ``filename``).
    reason : str
        What the message says after the path.
    """

    def __init__(self, path, message: str = "no such file or directory"):
        self.path = os.fspath(path)
        self.reason = message
        self.line = self.offset = None
        FileNotFoundError.__init__(self, errno.ENOENT, message, self.path)

    def __str__(self) -> str:  # OSError would print "[Errno 2] ..."
        return f"{self.path}: {self.reason}"

    def __reduce__(self):  # OSError's args are (errno, strerror): rebuild from the path instead
        return type(self), (self.path, self.reason)


class VectorFileNotFoundError(MissingFileError, VectorFileError):
    """A missing vector file (a :class:`VectorFileError` and a :class:`FileNotFoundError`)."""


class CorpusNotFoundError(MissingFileError, CorpusError):
    """A missing corpus (a :class:`CorpusError` and a :class:`FileNotFoundError`)."""


class WordListNotFoundError(MissingFileError, WordListError):
    """A missing word-list file (a :class:`WordListError` and a :class:`FileNotFoundError`)."""


class FairnessFileNotFoundError(MissingFileError, FairnessInputError):
    """A missing scores file (a :class:`FairnessInputError` and a :class:`FileNotFoundError`)."""


#: Each kind of input's error -> its missing-file error.
_NOT_FOUND = {cls.__bases__[1]: cls for cls in (VectorFileNotFoundError, CorpusNotFoundError, WordListNotFoundError,
                                                FairnessFileNotFoundError)}


def file_not_found(path, kind: type = EmbdebiasError, message: str = "no such file or directory") -> MissingFileError:
    """The missing-file error of ``kind`` (the error class the input's other problems raise) for ``path``."""
    return _NOT_FOUND.get(kind, MissingFileError)(path, message)


def quote(text, limit: int = 60) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters, for error messages that name bad input."""
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


class ParamsFileError(EmbdebiasError, ValueError):
    """A fitted-parameter file (``save_params``) that is damaged, of another method or dimension."""


class ErasureError(EmbdebiasError, ValueError):
    """A concept eraser (:mod:`embdebias.debias.leace`) that cannot be fitted as asked.

    Fewer than two labelled groups, a group too small for a stable covariance without
    shrinkage, or a fitted map whose certificate misses its bound (numerical rank
    trouble); the message says what was found and what would help.
    """
