"""The bundled WEAT tests are parsed once while their file is unchanged."""

import os
import shutil

from embdebias.data import wordlists
from embdebias.data.wordlists import load_weat_tests, weat_tests, wordlist_path


def test_the_bundled_tests_are_read_once_and_again_when_the_file_changes(tmp_path, monkeypatch):
    copy = tmp_path / "lists"
    shutil.copytree(wordlists.data_dir(), copy)
    monkeypatch.setattr(wordlists, "data_dir", lambda: copy)
    reads = []
    load = wordlists.load_weat_tests
    monkeypatch.setattr(wordlists, "load_weat_tests", lambda *a: reads.append(a) or load(*a))
    first = weat_tests()
    assert weat_tests() == first == load_weat_tests(wordlist_path("weat_tests")) and len(reads) == 1
    assert weat_tests("gender") == [t for t in first if t.group == "gender"] and len(reads) == 1
    weat_tests().clear()                                  # the list is the caller's
    assert weat_tests() == first
    path = wordlist_path("weat_tests")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"title"', '"title" ', 1), encoding="utf-8")   # the same tests, another file
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert weat_tests() == first and len(reads) == 2


def test_each_call_gets_its_own_extra_notes():
    first = weat_tests()
    first[0].extra["note"] = 1                            # a caller writing to a (frozen) test's notes
    assert "note" not in weat_tests()[0].extra


def test_a_same_size_rewrite_that_keeps_its_modification_time_is_read_again(tmp_path):
    from embdebias.metrics.quality import read_analogies

    path = tmp_path / "questions.txt"
    path.write_text(": s\na b c d\n", encoding="utf-8")
    assert read_analogies(path)[0][1] == [("a", "b", "c", "d")]
    mtime = path.stat().st_mtime_ns
    path.write_text(": s\na b c e\n", encoding="utf-8")  # same size; cp -p / rsync -t keep the time
    os.utime(path, ns=(mtime, mtime))
    assert read_analogies(path)[0][1] == [("a", "b", "c", "e")]
