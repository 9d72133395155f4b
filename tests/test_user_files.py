"""Issue 33, items 2 and 4: a user's files are parsed against a schema before any work. WEAT test
files, attribute files, JSON and text word lists and sweep configurations: each problem is one
line naming the file and key, special files are refused without being read, sizes and nesting
are bounded, and a word list is read a block at a time."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import threading

import pytest

from embdebias.cli import main
from embdebias.data import wordlists
from embdebias.data.attributes import load_attribute
from embdebias.errors import AttributeFileError, EmbdebiasError, WordListError
from embdebias.evaluate import suite_options

TEST = {"id": "mine", "title": "mine", "X": {"name": "x", "words": ["he", "him"]},
        "Y": {"name": "y", "words": ["she", "her"]}, "A": {"name": "a", "words": ["good"]},
        "B": {"name": "b", "words": ["bad"]}}
ATTRIBUTE = {"name": "sex", "groups": ["female", "male"],
             "defining_sets": [["she", "he"], ["woman", "man"], ["her", "his"]]}


def write(path, value) -> str:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------- WEAT test files
@pytest.mark.parametrize("tests, message", [
    ([{**TEST, "X": {"name": "x", "words": "hello"}}], "test 'mine': X.words: expected a non-empty list of words, "
                                                       "got a JSON string 'hello'"),
    ([{**TEST, "A": {"name": "a", "words": []}}], "test 'mine': A.words: expected a non-empty list"),
    ([{**TEST, "A": {"name": "a", "words": ["good", 5]}}], "test 'mine': A.words: expected words"),
    ([{**TEST, "A": {"name": "a", "words": ["go\u0000od"]}}], "A.words: expected words"),
    ([{**TEST, "A": {"name": "a", "words": ["\ud800"]}}], "A.words: expected words"),
    ([{**TEST, "B": {"name": "b", "word": ["bad"]}}], "test 'mine': B: expected an object with exactly 'name' and "
                                                      "'words'"),
    ([{**TEST, "B": ["bad"]}], "B: expected an object with exactly 'name' and 'words', got 'a JSON array'"),
    ([{**TEST, "id": 7}], ":1: id: expected a test id"),
    ([{**TEST, "id": "x" * 101}], ":1: id: expected a test id"),
    ([{**TEST, "title": ["t"]}], "test 'mine': title: expected a string, got a JSON array"),
    ([TEST, {**TEST, "id": "MINE"}], ":1: id: 'MINE' is the id of test 1 (line 1) too"),
    ("[\n" + json.dumps(TEST) + ",\n" + json.dumps(TEST) + "\n]", ":3: id: 'mine' is the id of test 1 (line 2) too"),
    ('[{"id": "a", "id": "b"}]', "the key 'id' is given twice in one JSON object"),
])
def test_a_weat_file_is_checked_key_by_key(tmp_path, tests, message):
    path = write(tmp_path / "tests.json", tests)
    with pytest.raises(WordListError) as info:
        suite_options([path])
    assert str(info.value).startswith(path) and message in str(info.value) and "\n" not in str(info.value)


def test_a_words_string_is_refused_on_the_command_line_not_scored_as_letters(tmp_path, capsys):
    emb = tmp_path / "e.txt"
    emb.write_text("3 2\nhe 1 0\nshe 0 1\nh 1 1\n", encoding="utf-8")
    path = write(tmp_path / "tests.json", [{**TEST, "X": {"name": "x", "words": "he"}}])
    assert main(["-q", "score", str(emb), "--tests", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "X.words: expected a non-empty list of words, got a JSON string 'he'" in err[0]


def test_two_tests_with_one_id_from_two_places_are_refused(tmp_path):
    from embdebias.metrics.weat import _check_tests

    path = write(tmp_path / "tests.json", [{**TEST, "id": "WEAT1"}])
    chosen = suite_options([path, "weat1"])["options"]["weat"]["tests"]
    with pytest.raises(EmbdebiasError, match="WEAT tests: two tests have the id 'WEAT1' \\(case aside\\)"):
        _check_tests(chosen)


def test_the_bundled_tests_pass_the_schema():
    tests = wordlists.weat_tests()
    assert len(tests) == 17 and len({t.id for t in tests}) == 17
    assert "removed_names" in tests[2].extra  # a key besides the format's is kept as a note


# --------------------------------------------------------------------------- attribute and JSON list files
@pytest.mark.parametrize("change, message", [
    ({"equalize_sets": [["He", "he"]]}, "equalize_sets[0]: a word stands for two groups (case aside)"),
    ({"defining_sets": [["she", "he"], ["Man", "MAN"]]}, "defining_sets[1]: a word stands for two groups"),
    ({"description": 5}, "description: expected a string"),
    ({"neutral_words": ["doctor", "nu\u0000rse"]}, "neutral_words[1]: expected a word"),
    ({"sources": {"a": [[[[[[[[["deep"]]]]]]]]]}}, "JSON nested more than 8 deep"),
    ({"sources": {"a": "DEEP"}}, "JSON nested more than 8 deep"),  # 5,000 levels: the parser's recursion
])
def test_an_attribute_file_is_checked(tmp_path, change, message):
    path = tmp_path / "a.json"
    write(path, json.dumps({**ATTRIBUTE, **change}).replace('"DEEP"', "[" * 5000 + "]" * 5000))
    with pytest.raises(AttributeFileError) as info:
        load_attribute(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_an_attribute_file_with_a_key_twice_or_bad_bytes(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"name": "sex", "name": "../x", "groups": ["f", "m"]}', encoding="utf-8")
    with pytest.raises(AttributeFileError, match="the key 'name' is given twice in one JSON object"):
        load_attribute(path)
    path.write_bytes(b'{"name": "s\xffx"}')
    with pytest.raises(AttributeFileError, match=r"not UTF-8 text \(invalid start byte at byte 11\)"):
        load_attribute(path)


def test_an_equalize_pair_of_one_word_in_a_list_file_is_refused(tmp_path):
    (tmp_path / "eq.txt").write_text("she he\nHer her\n", encoding="utf-8")
    path = write(tmp_path / "a.json", {**ATTRIBUTE, "equalize_sets": "eq.txt"})
    with pytest.raises(AttributeFileError, match=r"equalize_sets: .*eq.txt:2: the pair names 'Her' twice \(case aside\)"):
        load_attribute(path)
    with pytest.raises(WordListError, match="every pair needs two different words"):
        wordlists.resolve_pairs([("she", "he"), ("HE", "he")], "equalize_pairs")


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "directory"])
def test_a_list_named_by_an_attribute_file_is_never_read_if_special(tmp_path, special):
    target = {"fifo": tmp_path / "fifo", "/dev/zero": "/dev/zero", "directory": tmp_path}[special]
    if special == "fifo":
        os.mkfifo(target)
    path = write(tmp_path / "a.json", {**ATTRIBUTE, "neutral_words": str(target)})
    done = []
    worker = threading.Thread(target=lambda: done.append(_error_of(load_attribute, path)), daemon=True)
    worker.start()
    worker.join(30)
    assert done and "not a regular file" in done[0], "blocked or read"  # never waits on a FIFO's writer


def _error_of(function, *args) -> str:
    try:
        function(*args)
    except EmbdebiasError as exc:
        return str(exc)
    return "accepted"


# --------------------------------------------------------------------------- reading word lists
def test_word_lists_are_read_in_blocks_with_the_lines_of_the_whole_text(tmp_path, monkeypatch):
    rng = random.Random(0)
    pieces = ["a", "b", "\n", "\r", "\r\n", "\x0b", "\x85", "\u2028", "é", "😀", " ", "#"]
    path = tmp_path / "list.txt"
    for _ in range(120):
        monkeypatch.setattr(wordlists, "_BLOCK", rng.choice([1, 2, 3, 5, 8, 64]))
        text = ("\ufeff" if rng.random() < 0.3 else "") + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        path.write_bytes(text.encode("utf-8"))
        assert list(wordlists.iter_lines(path)) == list(enumerate(wordlists.read_text(path).splitlines(), 1)), text


def test_bad_bytes_are_placed_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(wordlists, "_BLOCK", 4)
    path = tmp_path / "list.txt"
    path.write_bytes(b"one\ntwo\nthree\nfo\xffur\n")
    with pytest.raises(WordListError, match=r"list.txt: not UTF-8 text \(invalid start byte at byte 16\)"):
        wordlists.load_words(path)


def test_a_word_of_a_text_list_holds_no_control_character(tmp_path):
    path = tmp_path / "list.txt"
    path.write_bytes(b"he\nsh\x01e\n")
    with pytest.raises(WordListError, match=r"list.txt:2: expected a word \(a non-empty string without white space "
                                            r"or control characters\), got '\"sh\\\\u0001e\"'"):
        wordlists.load_words(path)


def test_a_json_lists_lines_are_found_in_one_pass(tmp_path):
    class Counting(str):
        scanned = 0

        def count(self, sub, start=0, end=None):
            Counting.scanned += (len(self) if end is None else end) - start
            return str.count(self, sub, start, end)

    words = [f"w{i}" for i in range(5000)]
    text = Counting(json.dumps(words))  # one line: the old count from 0 scanned it 5,000 times
    assert list(wordlists._element_lines(text)) == [1] * len(words)
    assert Counting.scanned <= len(text)
    spread = "[\n" + ",\n\n".join(json.dumps(w) for w in words[:5]) + "\n]"
    assert list(wordlists._element_lines(spread)) == [2, 4, 6, 8, 10]


def test_a_large_list_named_by_an_attribute_file_is_read_in_bounded_memory(tmp_path):
    """A 6 MB list of 611,111 words: the list's words and the interpreter, not 45 bytes per byte read."""
    with open(tmp_path / "big.txt", "w", encoding="utf-8") as fh:
        fh.writelines(f"w{i}x\n" for i in range(611_111))
    write(tmp_path / "a.json", {**ATTRIBUTE, "neutral_words": "big.txt"})
    script = textwrap.dedent(f"""
        import resource
        from embdebias.data.attributes import load_attribute
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert len(load_attribute({str(tmp_path / 'a.json')!r}).neutral_words) == 611_111
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """)
    grown_kib = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout)
    assert grown_kib < 120 * 1024  # measured 59 MiB (the whole text at once, as before: 258 MiB)


# --------------------------------------------------------------------------- sweep configurations
EMB = '[[embeddings]]\npath = "glove-6b-50d"\n'


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe" + EMB.encode(), "not UTF-8 text (invalid start byte at byte 0); TOML is UTF-8"),
    ("x = " + "[" * 20 + "]" * 20 + "\n" + EMB, "x[0][0][0][0][0][0][0][0]: arrays or tables nested more than 8 deep"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n" + EMB, "arrays or tables nested more than 8 deep"),
    ("bootstrap = " + "9" * 5000 + "\n" + EMB, "an integer too long to read"),
    ("bootstrap = 0x" + "f" * 40 + "\n" + EMB, "bootstrap: the integer 14615016373309029182... does not fit in 64 bits"),
    ("seeds = [" + ",".join(map(str, range(1000))) + "]\n" + EMB + "[methods.soft]\nlam = ["
     + ",".join(f"{0.1 + i}" for i in range(1000)) + "]\n",
     "methods: 1,001,000 points (1,000 embedding x attribute x seed runs of 1,001 points each; methods.soft's grid "
     "alone has 1,000); a sweep has at most 100,000"),
    (EMB + "[methods.soft]\n" + "".join(f"p{j} = [" + ",".join(map(str, range(1000))) + "]\n" for j in range(3)),
     "methods: 1,000,000,001 points"),
    ("# " + "x" * (1 << 20) + "\n" + EMB, "1,048,616 bytes; a sweep configuration is at most 1,048,576 bytes"),
    ('[[embeddings]]\npath = "/dev/zero"\n', "embeddings[0].path: /dev/zero is not a regular file or directory"),
], ids=["not utf-8", "nested", "nested deeply", "5000 digits", "65 bits", "seeds x grid", "a grid of 10^9", "2 MiB",
        "device embedding"])
def test_a_bad_sweep_configuration_is_one_line_before_any_work(tmp_path, content, message):
    from embdebias.sweep import load_config

    path = tmp_path / "sweep.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(EmbdebiasError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "directory", "fifo embedding"])
def test_a_sweep_configuration_that_is_not_a_file_is_refused_at_once(tmp_path, capsys, special):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    config = {"fifo": fifo, "/dev/zero": "/dev/zero", "directory": tmp_path,
              "fifo embedding": write(tmp_path / "s.toml", f'[[embeddings]]\npath = "{fifo}"\n')}[special]
    done = []
    worker = threading.Thread(target=lambda: done.append(main(["-q", "sweep", str(config), "--out-dir",
                                                               str(tmp_path / "out")])), daemon=True)
    worker.start()
    worker.join(60)
    assert done == [2], "blocked, or not refused"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("not a regular file" in err[0]) and not (tmp_path / "out").exists()
