"""The reader of counterfactual pair files (the bundled ``cda_pairs.txt`` and ``cda_names.txt``).

One pair a line, the male word first, then the female word; ``#`` starts a comment line.
:mod:`embdebias.cda` checks the words and their ``|`` alternatives.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import WordListError, quote
from .wordlists import data_lines


def read_cda_pairs(path) -> list[tuple[str, str, str]]:
    """``(male, female, where)`` of a pair file's data lines (``where`` is ``"path:line"``)."""
    path = Path(path)
    out = []
    for line, text in data_lines(path):
        fields = text.split()
        if len(fields) != 2:
            raise WordListError(f"{path}:{line}: expected two words per line (male female), got {quote(text)}")
        out.append((fields[0], fields[1], f"{path}:{line}"))
    return out
