"""Prose whose sentences sometimes end in a number is a corpus, not a 1-d GloVe file (found on GCIDE)."""

import pytest

from embdebias.errors import UnknownFormatError
from embdebias.io import detect_format


def test_prose_with_a_few_numbers_is_not_glove(tmp_path):
    lines = [f"The word number {i} was printed by Merriam in Springfield." for i in range(40)]
    lines[3] = "Webster's Revised Unabridged Dictionary, 1913"
    lines[17] = "Online version prepared in 2002"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        detect_format(corpus)


def test_glove_with_one_damaged_row_is_still_glove(tmp_path):
    rows = [f"w{i} 0.1 0.2 0.3" for i in range(10)]
    rows[4] = "w4 0.1 0.2"
    path = tmp_path / "vectors.txt"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert detect_format(path) == "glove"
