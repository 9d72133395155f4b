"""Check (or update) the GloVe column of ``benchmarks/results/paper004.md`` against the code of today.

The GloVe column of paper 004's tables is the cheap reproduction: it needs only the
built-in GloVe 6B 50d (the word2vec and fastText columns need embeddings trained on GCIDE
first, ``benchmarks/cda.py``). This runs ``reproduce.py --families glove=glove-6b-50d``
and compares every GloVe cell (ours / paper) with the committed file; any difference is
listed and the exit status is 1. ``--update`` writes the fresh cells into the file instead.

Usage::

    python benchmarks/check_paper004.py [--out-dir DIR] [--update]
    python benchmarks/check_paper004.py --tables FRESH.md    # compare an earlier reproduction's output
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMITTED = HERE / "results" / "paper004.md"
ARGS = ["--families", "glove=glove-6b-50d", "--max-missing", "0.6", "--quiet"]


def table_lines(text: str):
    """``(line, heading, header, row)`` of each line of ``text``: ``row`` is a body row's cells
    (None elsewhere) of the Markdown table under the ``###`` heading, whose ``header`` it gives."""
    heading, header = None, None
    for line in text.splitlines():
        row = None
        if line.startswith("### "):
            heading, header = line[4:].strip(), None
        elif heading and line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            else:
                row = cells
        elif not line.strip():
            header = None
        yield line, heading, header, row


def parse_tables(text: str) -> dict[tuple[str, str, str], str]:
    """``{(table heading, row label, column): cell text}`` of every Markdown table under a ``###`` heading."""
    return {(heading, row[0], column): cell for _, heading, header, row in table_lines(text) if row is not None
            for column, cell in zip(header[1:], row[1:])}


def differences(fresh: dict, committed: dict) -> list[str]:
    """One line per fresh cell that the committed file lacks or gives otherwise."""
    return [f"{table} / {row} / {column}: committed {committed.get(key, 'missing')!r}, today {cell!r}"
            for key in fresh for table, row, column in [key] for cell in [fresh[key]]
            if committed.get(key) != cell]


def update(text: str, fresh: dict) -> str:
    """``text`` with each fresh cell written into its table row and column."""
    out = []
    for line, heading, header, row in table_lines(text):
        if row is not None:
            row = [row[0]] + [fresh.get((heading, row[0], column), cell) for column, cell in zip(header[1:], row[1:])]
            line = "| " + " | ".join(row) + " |"
        out.append(line)
    return "\n".join(out) + "\n"


def reproduce_glove(out_dir: str) -> str:
    sys.path.insert(0, str(HERE))
    import reproduce

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = reproduce.main([*ARGS, "--out-dir", out_dir])
    if status:
        raise SystemExit(f"check_paper004: reproduce.py exited with status {status}")
    return buffer.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default="reproduce-out", help="where reproduce.py runs (a re-run reuses it)")
    ap.add_argument("--tables", help="compare this reproduce.py output instead of running it")
    ap.add_argument("--update", action="store_true", help="write today's GloVe cells into the committed file")
    args = ap.parse_args(argv)
    fresh_text = Path(args.tables).read_text(encoding="utf-8") if args.tables else reproduce_glove(args.out_dir)
    fresh = parse_tables(fresh_text)
    if not fresh:
        print("check_paper004: the reproduction printed no table", file=sys.stderr)
        return 1
    committed_text = COMMITTED.read_text(encoding="utf-8")
    if args.update:
        COMMITTED.write_text(update(committed_text, fresh), encoding="utf-8")
    found = differences(fresh, parse_tables(COMMITTED.read_text(encoding="utf-8")))
    for line in found:
        print(line)
    print(f"check_paper004: {len(fresh)} GloVe cells, {len(found)} differ from {COMMITTED.name}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
