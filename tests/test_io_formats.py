"""The one table of formats (embdebias.io.formats.TABLE) and what is derived from it."""

from pathlib import Path

import numpy as np
import pytest

from embdebias import io
from embdebias.embedding import Embedding
from embdebias.io import formats

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_format_table_is_the_table():
    section = README.read_text(encoding="utf-8").split("## Formats\n", 1)[1].lstrip("\n")
    rows = []
    for line in section.splitlines():
        if not line.startswith("|"):
            break
        rows.append(line)
    assert "\n".join(rows) == formats.markdown_table()


def test_the_io_docstring_names_every_format():
    lines = io.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    body = lines[rules[1] + 1:rules[2]]
    assert tuple(line.split()[0] for line in body if line and not line.startswith(" ")) == io.FORMATS


def test_names_endings_gzip_and_companions_come_from_the_table():
    assert io.FORMATS == tuple(f.name for f in formats.TABLE) == tuple(formats.BY_NAME)
    assert io.EXTENSIONS == {f.name: f.ending for f in formats.TABLE}
    for f in formats.TABLE:
        for ending in (f.ending, *f.other_endings):
            assert io.guess_format_from_path("x" + ending) == f.name
        assert io.output_name("x", f.name) == "x" + f.ending
        assert io.output_companions("out/x" + f.ending, f.name) == [Path("out/x" + f.ending + c) for c in f.companions]
        if f.gzip:
            assert io.output_format(f"x{f.ending}.gz", f.name) == f.name
        else:
            with pytest.raises(Exception, match="cannot be gzip-compressed"):
                io.output_format(f"x{f.ending}.gz", f.name)
    with pytest.raises(io.UnknownFormatError, match="expected one of native, word2vec-bin"):
        io.output_name("x", "csv")


@pytest.mark.parametrize("fmt", formats.TABLE, ids=[f.name for f in formats.TABLE])
def test_each_record_writes_what_it_reads_and_detects(tmp_path, fmt):
    emb = Embedding(["he", "she", "nurse"], np.arange(12, dtype=np.float32).reshape(3, 4) / 7)
    path = tmp_path / ("e" + fmt.ending)
    assert emb.save(path) == fmt.name
    assert path.is_dir() == fmt.directory
    assert io.detect_format(path) == fmt.name
    back = io.load(path)
    assert back.words.tolist() == emb.words.tolist()
    np.testing.assert_allclose(np.asarray(back.vectors), np.asarray(emb.vectors), rtol=1e-6)
    assert all(c.exists() for c in io.output_companions(path, fmt.name))
