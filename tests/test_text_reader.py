"""``embdebias train`` and ``embdebias cda`` read corpora through one reader (embdebias.text)."""

import gzip

import pytest

from embdebias.cda import augment_file
from embdebias.errors import CorpusError
from embdebias.text import CorpusFile, LineCorpus
from embdebias.train import train_embedding

BAD = {
    "empty": (b"", "empty corpus: an empty file"),
    "empty gzip": (gzip.compress(b""), "empty corpus: no text in the gzip data"),
    "nul": (b"one two\nthree\x00four\n", "(line 2, byte offset 13): a NUL byte: a binary file"),
    "utf-16": ("he said\n".encode("utf-16"), "(line 1, byte offset 3): a NUL byte"),
    "control bytes": (bytes(i % 32 + 1 for i in range(500)), "(line 1, byte offset 0): a binary file, not text"),
    "undecodable": (b"fine line\ncaf\xe9 au lait\n", "(line 2, byte offset 13): not UTF-8 text"),
    "undecodable gzip": (gzip.compress(b"ok\n" * 3 + b"caf\xe9\n"),
                         "(line 4, byte offset 12): in the decompressed text, not UTF-8 text"),
    "truncated gzip": (gzip.compress(b"he said it\n" * 200)[:40], ": truncated or damaged gzip data"),
}


def _message(call) -> str:
    with pytest.raises(CorpusError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_train_and_cda_refuse_the_same_file_with_the_same_message(tmp_path, case):
    data, expected = BAD[case]
    path = tmp_path / ("bad.gz" if data[:2] == b"\x1f\x8b" else "bad.txt")
    path.write_bytes(data)
    by_train = _message(lambda: train_embedding(path, min_count=1, workers=1, epochs=1))
    by_cda = _message(lambda: augment_file(path, tmp_path / "out.txt"))
    by_reader = _message(lambda: list(CorpusFile(path).blocks()))
    assert by_train == by_cda == by_reader
    assert by_train.startswith(str(path)) and expected in by_train
    assert not (tmp_path / "out.txt").exists()


def test_both_accept_the_same_text_and_see_the_same_lines(tmp_path):
    text = "He said\tshe left.\r\nCafé ünïcode line\n\x0cform feed kept\nno final newline"
    path = tmp_path / "ok.txt.gz"
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    blocks = list(CorpusFile(path, block_bytes=7).blocks())
    assert b"".join(blocks).decode("utf-8") == text
    assert all(b.endswith(b"\n") for b in blocks[:-1])
    assert "".join(LineCorpus(path).lines()) == text
    augment_file(path, tmp_path / "out.txt", mode="replace")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").count("\n") == text.count("\n")


def test_a_long_line_is_whole_or_cut_at_a_space(tmp_path):
    path = tmp_path / "long.txt"
    path.write_bytes(b"word " * 100 + b"\nend\n")
    whole = list(CorpusFile(path, block_bytes=16).blocks())
    assert b"".join(whole) == path.read_bytes() and whole[0].startswith(b"word " * 100 + b"\n")
    cut = list(CorpusFile(path, block_bytes=16, cut_long_lines=True).blocks())
    assert b"".join(cut) == path.read_bytes() and max(map(len, cut)) <= 32
    assert all(b.endswith((b" ", b"\n")) for b in cut)
