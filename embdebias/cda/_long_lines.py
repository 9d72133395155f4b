"""Transforming a corpus whose lines may be longer than a block, in bounded memory.

:meth:`embdebias.text.CorpusFile.blocks` (``cut_long_lines=True``) hands a line longer
than a block on in parts (blocks that do not end with a newline), each cut after a space
or tab.  Each part is transformed with
the end of the part before it and the start of the part after it as context, so that the
rules (which look at the words beside a gendered word) see what they would see in the
whole line; only the words that start in the part are swapped.  In two-sided mode the
line's counterfactual follows the whole line: its parts wait in a temporary file until
the line ends.  Memory is a few blocks, whatever the line's length (a whole line in one
block took about 18 times its length).
"""

from __future__ import annotations

import collections
import tempfile
from collections.abc import Iterable, Iterator

from ._engine import BlockCounts, Engine

#: Bytes of the neighbouring parts given as context (cut at white space): the rules look two words away.
CONTEXT = 4096
_COPY = 1 << 20


def _left_context(part: bytes) -> bytes:
    tail = part[-CONTEXT:]
    cut = max(tail.find(b" "), tail.find(b"\t"))
    return tail[cut + 1:] if 0 <= cut < len(tail) - 1 and len(tail) == CONTEXT else tail


def _right_context(part: bytes) -> bytes:
    head = part[:CONTEXT]
    cut = head.find(b"\n")
    return head[:cut + 1] if cut >= 0 else head


class _LongLine:
    """One line that comes in parts: its counterfactual so far, whether any word was swapped."""

    def __init__(self, engine: Engine, two_sided: bool):
        self.engine, self.two_sided = engine, two_sided
        self.left = b""
        self.changed = False
        self.spill = tempfile.TemporaryFile() if two_sided else None

    def part(self, part: bytes, right: bytes, counts: BlockCounts) -> bytes:
        """The output of one part (the original in two-sided mode; the counterfactual waits)."""
        buffer = self.left + part + right
        lo = len(self.left)
        _, starts, ends, reps = self.engine.swaps(buffer, counts, lo, lo + len(part))
        out = part
        if reps:
            self.changed = True
            pieces, at = [], lo
            for s, e, r in zip(starts.tolist(), ends.tolist(), reps):
                pieces += [buffer[at:s], r]
                at = e
            pieces.append(buffer[at:lo + len(part)])
            out = b"".join(pieces)
        self.left = _left_context(self.left + part)  # (tiny parts: the context spans several)
        if not self.two_sided:
            return out
        self.spill.write(out)
        return part

    def finish(self, counts: BlockCounts, ended: bool) -> Iterator[bytes]:
        """After the line's last part: its counterfactual (two-sided, when a word was swapped)."""
        counts.lines += 1
        counts.augmented += self.changed
        if self.spill is None:
            return
        try:
            if self.changed:
                if not ended:
                    yield b"\n"
                self.spill.seek(0)
                while chunk := self.spill.read(_COPY):
                    yield chunk
        finally:
            self.spill.close()


def transformed(engine: Engine, blocks: Iterable[bytes], two_sided: bool) -> Iterator[tuple[bytes, BlockCounts]]:
    """``engine.transform`` of every block of :meth:`embdebias.text.CorpusFile.blocks`, long lines in parts.

    Yields the output in pieces, each with what it counted (a long line's counts come with
    its last piece).
    """
    line: _LongLine | None = None
    blocks = iter(blocks)
    ahead: collections.deque = collections.deque()  # the blocks read after the current one, for context
    while True:
        block = ahead.popleft() if ahead else next(blocks, None)
        if block is None:
            return
        if not block.endswith(b"\n"):
            _top_up(ahead, blocks)
        if line is None and (block.endswith(b"\n") or not ahead):
            yield engine.transform(block, two_sided)
            continue
        line = line or _LongLine(engine, two_sided)
        counts = BlockCounts()
        end = block.find(b"\n") + 1
        if not end and ahead:  # a part in the middle of the line
            yield line.part(block, _right_context(b"".join(ahead)), counts), counts
            continue
        last = block[:end] if end else block
        yield line.part(last, b"", counts), BlockCounts()
        for piece in line.finish(counts, ended=bool(end)):
            yield piece, BlockCounts()
        yield b"", counts
        line = None
        if end and end < len(block):
            yield engine.transform(block[end:], two_sided)


def _top_up(ahead: collections.deque, blocks: Iterator[bytes]) -> None:
    """Read blocks into ``ahead`` until they hold :data:`CONTEXT` bytes or a newline (or the input ends)."""
    size = sum(map(len, ahead))
    while size < CONTEXT and not any(b"\n" in b for b in ahead):
        block = next(blocks, None)
        if block is None:
            return
        ahead.append(block)
        size += len(block)
