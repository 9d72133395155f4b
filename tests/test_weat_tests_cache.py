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
