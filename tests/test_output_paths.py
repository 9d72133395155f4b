"""Issue 33, items 1, 5 and 7: output paths are ours. Every name that becomes a path component
follows one rule (embdebias/_outdir.py) or is refused with one line before anything is written;
a link planted inside an output directory is refused, never followed; a sweep whose points
failed exits 1 and says why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias import _outdir
from embdebias.cli import main
from embdebias.data.attributes import Attribute, load_attribute
from embdebias.errors import AttributeFileError, EmbdebiasError
from embdebias.pipeline import outputs, state

#: Names that must never become a path component: each is refused with one line.
HOSTILE = {
    "parent": "../x", "absolute": "/abs/x", "dotdot": "..", "dot": ".", "slash": "a/b", "backslash": "a\\b",
    "nul": "a\0b", "long": "x" * 10_000, "division slash": "a\u2215b", "fullwidth solidus": "a\uff0fb",
    "fraction slash": "a\u2044b", "big solidus": "a\u29f8b", "newline": "a\nb", "hidden": ".x", "empty": "",
}
BASE = {"groups": ["female", "male"], "defining_sets": [["she", "he"], ["woman", "man"], ["her", "his"]],
        "neutral_words": ["doctor", "nurse", "engineer", "teacher"]}


def tree(root: Path) -> dict:
    """Every entry under ``root``: relative path -> (size, mtime) of a file, None for a directory, the
    target of a link, "special" for a FIFO or device. Nothing is read: the session's temporary
    root holds other tests' FIFOs (reading one waits for a writer forever) and large files."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (f"-> {os.readlink(p)}" if p.is_symlink() else None if p.is_dir()
                                             else (st.st_size, st.st_mtime_ns) if p.is_file() else "special")
    return out


def one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("embdebias: error: "), err
    return err[0]


def attribute_file(directory: Path, name, file="attr.json") -> Path:
    path = directory / file
    path.write_text(json.dumps({**BASE, "name": name}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("paths") / "small.txt"
    write_word2vec_text(synthetic_embedding(n_filler=300), path)
    return path


# --------------------------------------------------------------------------- the one rule
@pytest.mark.parametrize("name", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_rule_refuses_every_hostile_name(name):
    assert _outdir.name_problem(name) is not None
    with pytest.raises(EmbdebiasError, match="where: .* cannot name a file or directory") as info:
        _outdir.check_name(name, "where")
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize("name", ["gender", "race-2", "a.b", "sex_v2", "género", "宗教", "x" * _outdir.MAX_NAME])
def test_the_rule_keeps_ordinary_names(name):
    assert _outdir.name_problem(name) is None and _outdir.check_name(name, "where") == name


def test_inside_refuses_a_component_that_is_not_one_and_any_link(tmp_path):
    for part in ("", ".", "..", "a/b", "a\0b"):
        with pytest.raises(EmbdebiasError, match="is not one file name inside it"):
            _outdir.inside(tmp_path, part)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert _outdir.inside(tmp_path, "real", "x") == tmp_path / "real" / "x"
    for parts in (("link",), ("link", "x")):
        with pytest.raises(EmbdebiasError, match="link: is a symbolic link; embdebias does not follow"):
            _outdir.inside(tmp_path, *parts)
    (tmp_path / "file").write_text("x")
    with pytest.raises(EmbdebiasError, match="file: exists and is not a directory"):
        _outdir.make_dirs(tmp_path, "file", "sub")
    assert _outdir.make_dirs(tmp_path, "new", "sub").is_dir() and not (tmp_path / "real" / "sub").exists()


# --------------------------------------------------------------------------- attribute names
@pytest.mark.parametrize("name", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_attribute_name_is_refused_before_anything_is_written(name, small, tmp_path, capsys):
    good = attribute_file(tmp_path, "sex", "good.json")
    bad = attribute_file(tmp_path, name, "bad.json")
    before = tree(tmp_path.parent)
    status = main(["-q", "run", str(small), "--attribute", f"{good},{bad}", "--out-dir", str(tmp_path / "out"),
                   "--methods", "hard", "--tests", "direct_bias"])
    assert status == 2
    line = one_error(capsys)
    assert f"{bad}: name: " in line and ("cannot name the attribute's output directory" in line
                                         or "expected a non-empty string" in line)
    assert tree(tmp_path.parent) == before  # nothing written, here or beside


def test_an_attribute_built_in_python_is_checked_where_it_becomes_a_directory(tmp_path):
    good = load_attribute(attribute_file(tmp_path, "sex"))
    before = tree(tmp_path)
    for name in ("../escaped", "/abs", "a\0b", "Sex", "report.md", ".embdebias-run"):
        other = Attribute(name=name, groups=good.groups, defining_sets=good.defining_sets)
        with pytest.raises(EmbdebiasError) as info:  # the run of several attributes checks this first
            outputs.attribute_dirs(tmp_path / "out", [good, other])
        message = str(info.value)
        assert "\n" not in message and message.startswith("attribute: name: ") or "would be one directory" in message
    assert outputs.attribute_dirs(tmp_path / "out", [good]) == {"sex": tmp_path / "out" / "sex"}
    assert tree(tmp_path) == before


@pytest.mark.parametrize("names", [("sex", "Sex"), ("sex", "report.json"), ("sex", "run_state.json")])
def test_attribute_names_that_would_clash_in_the_output_directory_are_refused(names, small, tmp_path, capsys):
    files = [attribute_file(tmp_path, n, f"a{i}.json") for i, n in enumerate(names)]
    before = tree(tmp_path)
    assert main(["-q", "run", str(small), "--attribute", ",".join(map(str, files)), "--out-dir",
                 str(tmp_path / "out"), "--methods", "hard"]) == 2
    line = one_error(capsys)
    assert "would be one directory" in line or f"{files[1]}: name: {names[1]!r} is the name of a file" in line
    assert tree(tmp_path) == before


def test_attribute_reader_names_the_file_and_key(tmp_path):
    with pytest.raises(AttributeFileError, match=r"attr.json: name: '\.\./x' cannot name"):
        load_attribute(attribute_file(tmp_path, "../x"))


# --------------------------------------------------------------------------- other names
@pytest.mark.parametrize("stem", ["../x", "a/b", ".hidden", "", "HARD"])
def test_a_debiasers_output_stem_is_a_name_of_its_own(stem):
    from embdebias.debias.table import DEBIASERS, DebiaserSpec, register

    before = dict(DEBIASERS)
    spec = DebiaserSpec(name="toy-stem", estimator="nowhere:Toy", description="a test's", output_stem=stem or "x")
    if not stem:
        object.__setattr__(spec, "output_stem", "")
    with pytest.raises(EmbdebiasError, match="debiaser 'toy-stem': output_stem: "):
        register(spec)
    assert DEBIASERS == before


def test_a_sweep_point_key_and_a_reports_bulk_file_are_names(tmp_path):
    from embdebias.report.json import from_json
    from embdebias.sweep import store

    for key in ("../x", "/abs", "a\0b", ".."):
        with pytest.raises(EmbdebiasError, match="sweep point key"):
            store.write_point(tmp_path / "out", {"key": key})
    assert not (tmp_path / "x.json").exists() and not list((tmp_path / "out").rglob("*.json"))
    secret = tmp_path / "secret.parquet"
    secret.write_bytes(b"PAR1")
    report = tmp_path / "r" / "evaluation.json"
    report.parent.mkdir()
    report.write_text(json.dumps({"bulk": "../secret.parquet"}), encoding="utf-8")
    with pytest.raises(EmbdebiasError):
        from_json(report)


# --------------------------------------------------------------------------- links
@pytest.fixture
def victim(tmp_path):
    """A directory of a user's, with a file that an embdebias name would match."""
    where = tmp_path / "victim"
    where.mkdir()
    (where / "run_state.json").write_text('{"steps": {}}', encoding="utf-8")
    (where / "keep.txt").write_text("mine", encoding="utf-8")
    return where


@pytest.mark.parametrize("planted", [outputs.PARTIAL, outputs.STATE, outputs.MARKER, "report.md", "hard.embd",
                                     "report.json"])
def test_run_refuses_a_link_planted_in_its_output_directory(planted, small, victim, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    if planted != outputs.MARKER:
        (out / outputs.MARKER).write_text("{}", encoding="utf-8")  # the directory is an earlier run's
    target = {outputs.PARTIAL: victim, "hard.embd": victim, "report.json": "/dev/zero"}.get(
        planted, victim / "run_state.json")  # /dev/zero: a report.json read through the link would fill memory
    (out / planted).symlink_to(target)
    before = tree(tmp_path)
    assert main(["-q", "run", str(small), "--out-dir", str(out), "--methods", "hard"]) == 2
    assert f"{out / planted}: is a symbolic link" in one_error(capsys)
    assert tree(tmp_path) == before


def test_adopt_and_the_steps_never_enter_a_link_planted_after_the_plan(victim, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / outputs.PARTIAL).symlink_to(victim)
    before = tree(tmp_path)
    with pytest.raises(EmbdebiasError, match="is a symbolic link"):
        state.adopt(out, print)
    (out / outputs.PARTIAL).unlink()
    steps = state.Steps(out, False, lambda *a: None)
    (out / outputs.PARTIAL).symlink_to(victim)
    with pytest.raises(EmbdebiasError, match="is a symbolic link"):
        steps.path("hard", "hard.embd")
    with pytest.raises(EmbdebiasError, match="is a symbolic link"):
        steps.record("hard", "k", ["hard.embd"], 0.0)
    assert tree(tmp_path) == before


def test_a_link_at_run_state_is_not_read(victim, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / outputs.STATE).symlink_to(victim / "run_state.json")
    with pytest.warns(UserWarning, match="damaged, ignored"):
        assert state.read_state(out / outputs.STATE) == ({}, None)
    assert not outputs.is_run_directory(out)


def test_a_link_at_an_attributes_subdirectory_is_refused(small, victim, tmp_path, capsys):
    good = attribute_file(tmp_path, "sex", "a.json")
    out = tmp_path / "out"
    out.mkdir()
    (out / outputs.MARKER).write_text("{}", encoding="utf-8")  # an earlier run's directory
    (out / "gender").symlink_to(victim)
    before = tree(tmp_path)
    assert main(["-q", "run", str(small), "--attribute", f"gender,{good}", "--out-dir", str(out),
                 "--methods", "hard"]) == 2
    assert f"{out / 'gender'}: is a symbolic link" in one_error(capsys)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("planted", ["points", "embeddings"])
def test_a_sweep_refuses_a_planted_link_before_any_point(planted, small, victim, tmp_path, capsys):
    pytest.importorskip("pandas")
    config = tmp_path / "sweep.toml"
    config.write_text(f'save = ["hard"]\n[[embeddings]]\npath = "{small}"\n[methods.hard]\n', encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / planted).symlink_to(victim)
    before = tree(victim)
    assert main(["-q", "sweep", str(config), "--out-dir", str(out), "--serial"]) == 2
    assert f"{out / planted}: is a symbolic link" in one_error(capsys)
    assert tree(victim) == before and sorted(p.name for p in out.iterdir()) == [planted]


def test_a_link_among_stored_points_is_not_a_point(tmp_path, victim):
    from embdebias.sweep import store

    (tmp_path / "out" / "points").mkdir(parents=True)
    record = {"key": "abc123", "rows": []}
    (victim / "abc123.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "out" / "points" / "abc123.json").symlink_to(victim / "abc123.json")
    assert store.read_points(tmp_path / "out") == {}
    with open(tmp_path / "out" / "points" / "big.json", "wb") as fh:  # sparse: never read
        fh.truncate(store.MAX_POINT_BYTES + 1)
    store.write_point(tmp_path / "out", {"key": "def456", "rows": []})
    assert list(store.read_points(tmp_path / "out")) == ["def456"]


# --------------------------------------------------------------------------- a sweep that fails says so
def test_a_sweep_with_failed_points_exits_1_and_says_why(tmp_path, capsys):
    pytest.importorskip("pandas")
    broken = tmp_path / "broken.txt"
    broken.write_text("2 3\nhe 1 2\n", encoding="utf-8")
    config = tmp_path / "sweep.toml"
    # a hostile label is text in the table, never a path: nothing is written outside --out-dir
    config.write_text(f'suite = ["direct_bias"]\nbootstrap = 0\n[[embeddings]]\npath = "{broken}"\n'
                      f'label = "../../escaped"\n[methods.hard]\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["-q", "sweep", str(config), "--out-dir", str(out), "--serial"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == ("embdebias: sweep: 2 of 2 point(s) failed (1 reason(s) below; every error is in sweep.csv "
                      "and summary.md)")
    assert len(err) == 2 and err[1].startswith("embdebias: sweep: 2 point(s): ") and "broken.txt" in err[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.txt", "out", "sweep.toml"]
    assert (out / "summary.md").is_file()
