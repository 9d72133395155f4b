"""Check that the numbers a page quotes from a run are the ones that run prints.

    python tools/check_quoted.py RUN_DIR README.md docs/index.md ...

A page marks what it quotes between ``<!-- quoted from report.md of: COMMAND -->`` and
``<!-- end quoted -->``; every non-blank line in between (a table row, a sentence) must be a
line of ``RUN_DIR/report.md``, where RUN_DIR is the output of COMMAND (CI runs
``embdebias run --out-dir DIR``, the default run, and then this check). Exit status 1, with
each line that differs, when a quote is stale; 2 when a page quotes nothing (a marker lost).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

START = re.compile(r"^<!-- quoted from report\.md of: (?P<command>.+?) -->\s*$")
END = "<!-- end quoted -->"


def quoted_blocks(text: str) -> list[tuple[str, list[str]]]:
    """``(command, lines)`` of every quoted block of a page."""
    blocks, current = [], None
    for line in text.splitlines():
        start = START.match(line)
        if start:
            current = (start.group("command"), [])
            blocks.append(current)
        elif line.strip() == END:
            current = None
        elif current is not None and line.strip():
            current[1].append(line.rstrip())
    return blocks


def stale_lines(page: str, report: str) -> list[str]:
    """The quoted lines of ``page`` that are not lines of ``report`` (empty: every quote holds)."""
    have = {line.rstrip() for line in report.splitlines()}
    return [line for _, lines in quoted_blocks(page) for line in lines if line not in have]


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    report = (Path(args[0]) / "report.md").read_text(encoding="utf-8")
    status = 0
    for name in args[1:]:
        page = Path(name).read_text(encoding="utf-8")
        if not quoted_blocks(page):
            print(f"{name}: quotes nothing (no '<!-- quoted from report.md of: ... -->' block)", file=sys.stderr)
            status = max(status, 2)
        for line in stale_lines(page, report):
            print(f"{name}: not in {args[0]}/report.md: {line}", file=sys.stderr)
            status = max(status, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
