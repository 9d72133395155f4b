"""Tables of facts about words (the share of women in an occupation, say), for the factual
association of :func:`embdebias.metrics.factual_association`.

Format (UTF-8 text): one header line naming the columns, then one row per word; the columns
are separated by tabs when the header holds a tab, else by commas (no quoting: words and
numbers hold neither). Blank lines and lines starting with ``#`` are skipped. The word is in
the first column (or the column named ``word_column``), the fact in the second (or the
column named ``value_column``): a finite number. A word listed twice, a missing column or a
value that is not a number is a :class:`~embdebias.errors.WordListError` naming the file and
the line.

The bundled table is Rudinger et al. (2018)'s share of women by occupation from the U.S.
Bureau of Labor Statistics, 2015-16 (``wordlists/rudinger2018/``, see its ``SOURCE.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WordListError
from .wordlists import data_dir, data_lines, wordlist_path

#: The bundled facts table: ``(path under wordlists/, value column, how reports cite it)``.
BLS_OCCUPATIONS = ("rudinger2018/occupations-stats.tsv", "bls_pct_female",
                   "% women employed in the occupation, U.S. Bureau of Labor Statistics (Current Population "
                   "Survey, 2015; 2016 for 9 words), as published by Rudinger et al. (2018), Winogender "
                   "Schemas (MIT)")


@dataclass(frozen=True)
class FactTable:
    """A table of facts: ``values`` maps each word to its number.

    Attributes
    ----------
    values : dict
        ``{word: value}`` in file order.
    column : str
        The name of the value column.
    path : str
        The file read.
    source : str
        Where the numbers come from (the bundled table's citation, or "user file").
    extra : dict
        ``{word: {other column: text}}`` (the bundled table's year of each statistic).
    """

    values: dict
    column: str
    path: str
    source: str = "user file"
    extra: dict = field(default_factory=dict, compare=False)


def _split(line: str, tab: bool) -> list[str]:
    return [c.strip() for c in line.split("\t" if tab else ",")]


def _column(header: list[str], name: str | None, default: int, path, what: str) -> int:
    if name is None:
        if len(header) <= default:
            raise WordListError(f"{path}:1: the header has {len(header)} column(s); a facts table needs a word "
                                f"and a value column")
        return default
    if name not in header:
        raise WordListError(f"{path}:1: no {what} column named {name!r}; the header has {', '.join(header)}")
    return header.index(name)


def read_facts(path, *, value_column: str | None = None, word_column: str | None = None,
               source: str = "user file") -> FactTable:
    """Read a facts table (see the module docstring for the format)."""
    path = Path(path)
    lines = data_lines(path)
    if not lines:
        raise WordListError(f"{path}: empty; expected a header line and one row per word")
    line_no, header_line = lines[0]
    tab = "\t" in header_line
    header = _split(header_line, tab)
    w_col = _column(header, word_column, 0, path, "word")
    v_col = _column(header, value_column, 1, path, "value")
    values, extra = {}, {}
    for line_no, line in lines[1:]:
        cells = _split(line, tab)
        if len(cells) != len(header):
            raise WordListError(f"{path}:{line_no}: {len(cells)} column(s), the header has {len(header)}")
        word, text = cells[w_col], cells[v_col]
        if not word:
            raise WordListError(f"{path}:{line_no}: the word is empty")
        if word in values:
            raise WordListError(f"{path}:{line_no}: {word!r} is listed twice")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise WordListError(f"{path}:{line_no}: column {header[v_col]!r} of {word!r} must be a finite number, "
                                f"got {text!r}")
        values[word] = value
        extra[word] = {h: c for i, (h, c) in enumerate(zip(header, cells)) if i not in (w_col, v_col)}
    if len(values) < 1:
        raise WordListError(f"{path}: no rows after the header")
    return FactTable(values, header[v_col], str(path), source, extra)


def load_facts(name_or_path=None, *, value_column: str | None = None, word_column: str | None = None) -> FactTable:
    """The bundled BLS occupation table (None) or a user's facts file (a path)."""
    if name_or_path is None:
        rel, column, source = BLS_OCCUPATIONS
        return read_facts(data_dir() / rel, value_column=value_column or column, word_column=word_column,
                          source=source)
    return read_facts(wordlist_path(name_or_path), value_column=value_column, word_column=word_column)
