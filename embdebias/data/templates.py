"""The reader of extrinsic template files (the bundled ``extrinsic_templates.json``).

It reads the file and parses its JSON; the extrinsic probe's template module checks the
shape of what it returns (identity terms, fillers, families).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import WordListError
from .wordlists import read_text, wordlist_path


def read_templates_json(path=None) -> tuple[Path, object]:
    """``(path, parsed JSON)`` of a template file (default: the bundled one).

    Raises
    ------
    WordListError
        The file is missing, not a regular file, not UTF-8 or not JSON (with its line).
    """
    path = wordlist_path("extrinsic_templates") if path is None else Path(path)
    try:
        return path, json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise WordListError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise WordListError(f"{path}: JSON nested too deeply") from None
