"""The reader of extrinsic template files (the bundled ``extrinsic_templates.json``).

It reads the file and parses its JSON; the extrinsic probe's template module checks the
shape of what it returns (identity terms, fillers, families).
"""

from __future__ import annotations

from pathlib import Path

from .wordlists import read_json, wordlist_path


def read_templates_json(path=None) -> tuple[Path, object]:
    """``(path, parsed JSON)`` of a template file (default: the bundled one).

    Raises
    ------
    WordListError
        The file is missing, not a regular file, not UTF-8 or not JSON (with its line).
    """
    path = wordlist_path("extrinsic_templates") if path is None else Path(path)
    return path, read_json(path)[1]  # bounded: deep nesting or huge integers are errors
