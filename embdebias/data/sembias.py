"""The reader of SemBias-format files (the bundled ``sembias/SemBias`` and ``curated/sembias.txt``).

UTF-8 text, one instance per line: four ``a:b`` word pairs separated by tabs (or white
space), the male-associated word first; blank lines and lines starting with ``#`` are
ignored. :mod:`embdebias.metrics.bat` describes what the columns mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import WordListError
from .wordlists import data_lines


@dataclass(frozen=True)
class SemBiasInstance:
    line: int
    pairs: tuple[tuple[str, str], ...]  # four (a, b) pairs in column order


def read_sembias(path) -> list[SemBiasInstance]:
    """Parse a SemBias-format file (see the module docstring)."""
    path = Path(path)
    out = []
    for lineno, line in data_lines(path):
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 4:
            fields = line.split()
        if len(fields) != 4:
            raise WordListError(f"{path}:{lineno}: expected four tab-separated a:b pairs, got {line!r}")
        pairs = []
        for f in fields:
            parts = f.split(":")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise WordListError(f"{path}:{lineno}: expected a pair 'a:b', got {f!r}")
            pairs.append((parts[0], parts[1]))
        out.append(SemBiasInstance(lineno, tuple(pairs)))
    if not out:
        raise WordListError(f"{path}: no SemBias instances (only blank or comment lines)")
    return out
