"""The reader of RNSB's sentiment words: VADER's lexicon, from the installed ``vaderSentiment`` (MIT)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import WordListError
from .wordlists import read_text


def vader_lexicon_path() -> Path:
    """Path of ``vader_lexicon.txt`` inside the installed ``vaderSentiment`` package."""
    try:
        import vaderSentiment
    except ImportError:  # pragma: no cover - it is a dependency
        raise WordListError("RNSB needs the VADER lexicon: pip install vaderSentiment") from None
    path = Path(vaderSentiment.__file__).resolve().parent / "vader_lexicon.txt"
    if not path.is_file():  # pragma: no cover
        raise WordListError(f"{path}: the VADER lexicon file is missing; reinstall vaderSentiment")
    return path


@lru_cache(maxsize=4)
def sentiment_lexicon(threshold: float = 1.0) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(positive, negative)`` alphabetic VADER words with ``|valence| >= threshold``."""
    path = vader_lexicon_path()
    pos, neg = [], []
    for lineno, line in enumerate(read_text(path).splitlines(), 1):
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        word = parts[0].strip()
        try:
            valence = float(parts[1])
        except ValueError:
            raise WordListError(f"{path}:{lineno}: expected a numeric valence, got {parts[1]!r}") from None
        if not word.isalpha():
            continue
        if valence >= threshold:
            pos.append(word)
        elif valence <= -threshold:
            neg.append(word)
    return tuple(dict.fromkeys(pos)), tuple(dict.fromkeys(neg))
