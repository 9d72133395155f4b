"""How many rows a blocked matrix product takes at a time (residual bias's neighbours,
indirect bias's pairs, the generated analogies): the memory bound of those passes."""

from __future__ import annotations

from ..errors import EmbdebiasError

#: Bytes of one block of cosines (float32) in the blocked nearest-neighbour passes.
BLOCK_BYTES = 64 << 20
#: Most query rows in one block, whatever the budget.
MAX_BLOCK_ROWS = 1024
#: Rows read at a time when a pass goes over many rows of an embedding.
CHUNK_ROWS = 1 << 14


def block_rows_for(n_columns: int, block_rows: int | None = None) -> int:
    """Rows per block so that a ``(rows, n_columns)`` float32 block fits :data:`BLOCK_BYTES`."""
    if block_rows is not None:
        if int(block_rows) < 1:
            raise EmbdebiasError(f"block_rows must be >= 1, got {block_rows}")
        return int(block_rows)
    return int(max(1, min(MAX_BLOCK_ROWS, BLOCK_BYTES // (4 * max(int(n_columns), 1)))))


