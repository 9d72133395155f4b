"""The manifest of bundled resources (embdebias.data) matches what ships in wordlists/."""

from pathlib import Path

import pytest

from embdebias import data
from embdebias.data import READERS, RESOURCES, read_resource, wordlists

SHIPPED = sorted(p.relative_to(wordlists.data_dir()).as_posix()
                 for p in wordlists.data_dir().rglob("*") if p.is_file())


def test_every_shipped_file_is_listed_once():
    listed = [r.path for r in RESOURCES]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == SHIPPED


@pytest.mark.parametrize("resource", RESOURCES, ids=[r.path for r in RESOURCES])
def test_every_listed_file_exists_and_reads(resource):
    assert (wordlists.data_dir() / resource.path).is_file()
    assert resource.kind in READERS
    assert resource.origin
    content = read_resource(resource)
    assert content if resource.kind != "templates" else content[1]["families"]


def test_bundled_names_come_from_the_manifest():
    names = [name for r in RESOURCES for name, _ in r.names]
    assert wordlists.bundled_names() == names
    for r in RESOURCES:
        for name, source in r.names:
            info = wordlists.describe(name)
            assert info == {"name": name, "source": source, "path": f"wordlists/{r.path}"}


def test_old_import_paths_are_the_data_readers():
    import importlib

    import embdebias
    import embdebias.wordlists

    bat, occupation, rnsb, expand, _lexicon = (importlib.import_module(f"embdebias.{name}") for name in (
        "metrics.bat", "metrics.occupation", "metrics.rnsb", "debias.expand", "cda._lexicon"))

    assert embdebias.wordlists is wordlists and embdebias.wordlists.load_words is wordlists.load_words
    assert bat.read_sembias is data.read_sembias
    assert rnsb.sentiment_lexicon is data.sentiment_lexicon
    assert occupation.lu_occupations is data.lu_occupations
    assert expand.read_expanded is data.read_expanded
    assert _lexicon.read_cda_pairs is data.read_cda_pairs


def test_the_data_package_reads_no_higher_layer():
    """data/ imports nothing of embdebias but errors, _files, _outdir and _warn (which imports none of embdebias;
    checked on the source)."""
    import ast

    root = Path(data.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert node.module in {"errors", "_files", "_outdir", "_warn"}, (path.name, node.module)


def test_the_manifest_names_the_reader_of_every_kind():
    """data.READERS is the manifest's KINDS imported; wordlists reaches the SemBias reader
    through it (sembias.py imports wordlists, so wordlists may not import sembias)."""
    from embdebias.data import manifest

    assert set(READERS) == set(manifest.KINDS) >= {r.kind for r in RESOURCES}
    assert all(manifest.reader(kind) is READERS[kind] for kind in manifest.KINDS)
    assert READERS["sembias"] is data.read_sembias
    info = wordlists.source_of(None, "sembias", "published")
    assert info["size"] == len(data.read_sembias(wordlists.sembias_path("published"))) == 440
