"""A real English corpus from Debian's ``dict-gcide`` package, as plain text (never committed).

GCIDE is the 1913 Webster dictionary with its usage quotations: about 5 million words of
late-19th-century English prose, strongly male-skewed. :func:`corpus` installs the
package if it is missing (``apt-get install dict-gcide``, as root), then turns the
dictzip file into one sentence per line: entry headwords' pronunciation (``\\Ab*bey\\``),
bracketed etymologies and source tags (``[1913 Webster]``) and attribution marks
(``--Shak.``) are dropped, each entry's lines are joined, and the text is split at
sentence ends. The text is cached in the work directory.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
from pathlib import Path

DICT = Path("/usr/share/dictd/gcide.dict.dz")
_DROP = re.compile(r"\\[^\\]*\\|\[[^\]]*\]|--\s?[A-Z][\w.]*(?:\s[A-Z][\w.]*)?\.?|\{|\}")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z\"'(])")
_SPACE = re.compile(r"\s+")


def locate(install: bool = True) -> Path:
    """The GCIDE dictzip file, installing ``dict-gcide`` first if needed and allowed."""
    if DICT.is_file():
        return DICT
    if install and shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-q", "dict-gcide"], check=True,
                       stdout=subprocess.DEVNULL)
    if not DICT.is_file():
        raise SystemExit(f"{DICT} not found: install Debian's dict-gcide (apt-get install dict-gcide)")
    return DICT


def sentences(raw: str):
    """Plain sentences of the dictionary text, one string each."""
    for block in raw.split("\n\n"):
        text = _SPACE.sub(" ", _DROP.sub(" ", _SPACE.sub(" ", block))).strip()
        for s in _SENTENCE.split(text):
            if len(s.split()) >= 3:
                yield s


def corpus(workdir, install: bool = True) -> Path:
    """``workdir/gcide.txt``: the corpus, one sentence per line (built once, then reused)."""
    out = Path(workdir) / "gcide.txt"
    if out.is_file():
        return out
    src = locate(install)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(src, "rt", encoding="utf-8", errors="replace") as fh:
        raw = fh.read()
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for s in sentences(raw):
            fh.write(s + "\n")
    tmp.replace(out)
    return out


def word_counts(path, words=("he", "she", "him", "her", "his", "man", "woman")) -> dict:
    """Total words and the count of some (case-insensitive) words in the corpus."""
    counts = dict.fromkeys(words, 0)
    total = 0
    token = re.compile(r"[A-Za-z]+")
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            toks = token.findall(line.lower())
            total += len(toks)
            for t in toks:
                if t in counts:
                    counts[t] += 1
    return {"words": total, **counts}
