"""The reader of expanded gender-specific lists (written by ``ExpansionResult.save``)."""

from __future__ import annotations

from pathlib import Path

from .wordlists import read_text

#: The first line of an expanded list.
EXPANDED_HEADER = "# gender-specific words: seed list expanded by a linear SVM (embdebias)"


def read_expanded(path) -> list[str]:
    """The words of a file written by :meth:`ExpansionResult.save`, verbatim.

    Unlike :func:`embdebias.data.wordlists.load_words` no line but the header is taken
    for a comment, so vocabulary words that start with ``#`` survive the round trip.
    """
    lines = read_text(Path(path)).split("\n")
    if lines and lines[0] == EXPANDED_HEADER:
        lines = lines[1:]
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return lines
