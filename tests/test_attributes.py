"""The attribute model: bundled attributes, a user's JSON file, and every refusal naming file and key."""

import json

import pytest

from embdebias import load_attribute
from embdebias.data import wordlists
from embdebias.data.attributes import Attribute, bundled_attributes, resolve_attribute, resolve_attributes
from embdebias.errors import AttributeFileError, WordListError


def test_gender_is_todays_published_lists():
    a = load_attribute("gender")
    assert a.groups == ("female", "male") and a.k == 2 and a.is_binary
    assert [tuple(p) for p in a.defining_sets] == wordlists.definitional_pairs("published")
    assert [tuple(p) for p in a.equalize_sets] == wordlists.equalize_pairs("published")
    assert list(a.specific_words) == wordlists.gender_specific("published")
    assert list(a.neutral_words) == wordlists.professions("published")
    assert a.defining_sets[0] == ("woman", "man")  # female first: the positive side of the direction
    assert a.targets() == [a.group_words["female"], a.group_words["male"]]


def test_gender_follows_the_list_set():
    a = load_attribute("gender", "curated")
    assert [tuple(p) for p in a.equalize_sets] == wordlists.equalize_pairs("curated")
    assert len(a.specific_words) == len(wordlists.gender_specific("curated")) != len(
        load_attribute("gender").specific_words)


def test_gender_weat_tests_and_attribute_sets_are_the_bundled_stimuli():
    a = load_attribute("gender")
    tests = {t.id: t for t in wordlists.weat_tests()}
    assert set(a.weat_tests) <= set(tests)
    assert a.attribute_sets["career"] == tests["weat6"].A.words
    assert a.attribute_sets["science"] == tests["weat8"].X.words
    assert a.group_words["female"] == tests["weat7"].B.words


def test_every_bundled_attribute_loads():
    names = bundled_attributes()
    assert names[0] == "gender"
    for name in names:
        a = load_attribute(name)
        assert a.name == name and a.k >= 2
        assert all(len(s) == a.k for s in a.defining_sets)


def _write(tmp_path, **overrides):
    data = {"name": "colour", "groups": ["red", "green", "blue"],
            "defining_sets": [["red", "green", "blue"], ["ruby", "emerald", "sapphire"]]}
    data.update(overrides)
    data = {k: v for k, v in data.items() if v is not None}
    path = tmp_path / "colour.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_users_attribute_file(tmp_path):
    a = load_attribute(_write(tmp_path, neutral_words=["car", "house"], attribute_sets={"warm": ["sun"]}))
    assert a.name == "colour" and a.k == 3 and not a.is_binary
    assert a.group_words == {"red": ("red", "ruby"), "green": ("green", "emerald"), "blue": ("blue", "sapphire")}
    assert a.equalize_sets == a.defining_sets  # the default
    assert set(a.specific_words) == {"red", "green", "blue", "ruby", "emerald", "sapphire"}
    assert a.attribute_sets == {"warm": ("sun",)} and a.neutral_words == ("car", "house")
    assert resolve_attribute(a) is a and resolve_attribute(str(a.path)) == a


def test_a_list_value_may_name_a_file_beside_the_attribute(tmp_path):
    (tmp_path / "pairs.txt").write_text("aa bb\ncc dd\n", encoding="utf-8")
    (tmp_path / "neutral.txt").write_text("x\ny\n", encoding="utf-8")
    a = load_attribute(_write(tmp_path, groups=["f", "m"], defining_sets="pairs.txt", neutral_words="neutral.txt"))
    assert a.defining_sets == (("aa", "bb"), ("cc", "dd")) and a.neutral_words == ("x", "y")


@pytest.mark.parametrize("overrides, key, expected", [
    ({"defining_sets": [["red", "green"]]}, "defining_sets[0]", "2 word(s); expected 3"),
    ({"defining_sets": [["red", "green", "blue"]]}, "defining_sets", "at least two defining sets"),
    ({"defining_sets": [["red", "green", "red"]]}, "defining_sets[0]", "a word stands for two groups"),
    ({"defining_sets": [["red", "green", "blue"], ["green", "red", "cyan"]]}, "defining_sets[1]",
     "is in two groups"),
    ({"group_words": {"red": ["a"], "green": ["b"], "blue": ["c"], "pink": ["d"]}}, "group_words.pink",
     "unknown group"),
    ({"group_words": {"red": ["a"], "green": [], "blue": ["c"]}}, "group_words.green", "empty group"),
    ({"group_words": {"red": ["a"], "blue": ["c"]}}, "group_words.green", "missing"),
    ({"group_words": {"red": ["a"], "green": ["a"], "blue": ["c"]}}, "group_words.green", "in two groups"),
    ({"groups": ["red"], "defining_sets": [["red"]]}, "groups", "at least two groups"),
    ({"groups": ["red", "red"]}, "groups", "named twice"),
    ({"defining_sets": "definitional_pairs"}, "defining_sets", "the attribute has 3 groups"),
    ({"defining_sets": None}, "defining_sets", "expected a non-empty list"),
    ({"colour": 1}, "colour", "unknown key"),
    ({"name": ""}, "name", "non-empty string"),
    ({"weat_tests": ["weat99"]}, "weat_tests[0]", "no bundled WEAT test"),
    ({"neutral_words": ["two words"]}, "neutral_words[0]", "expected a word"),
    ({"neutral_words": "./no_such_file.txt"}, "neutral_words", "not found"),
])
def test_bad_attribute_files_name_the_file_and_key(tmp_path, overrides, key, expected):
    path = _write(tmp_path, **overrides)
    with pytest.raises(AttributeFileError) as info:
        load_attribute(path)
    message = str(info.value)
    assert str(path) in message and f": {key}:" in message and expected in message
    assert isinstance(info.value, WordListError)  # callers that catch list errors catch these too


def test_not_an_object_and_not_json(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(AttributeFileError, match="expected a JSON object"):
        load_attribute(path)
    path.write_text("{oops", encoding="utf-8")
    with pytest.raises(AttributeFileError, match=r"a\.json:1: invalid JSON"):
        load_attribute(path)
    with pytest.raises(AttributeFileError, match="missing.json: no such file"):
        load_attribute(tmp_path / "missing.json")


def test_unknown_bundled_name_lists_the_bundled_ones():
    with pytest.raises(AttributeFileError, match="no bundled attribute named 'caste'.*gender"):
        load_attribute("caste")


def test_several_attributes():
    both = resolve_attributes("gender, gender".replace(", gender", ""))
    assert [a.name for a in both] == ["gender"]
    assert [a.name for a in resolve_attributes(None)] == ["gender"]
    with pytest.raises(AttributeFileError, match="given twice"):
        resolve_attributes("gender,gender")
    with pytest.raises(AttributeFileError, match="no attribute given"):
        resolve_attributes([])


def test_attributes_are_values():
    a, b = load_attribute("gender"), load_attribute("gender")
    assert a == b and hash(a) == hash(b) and isinstance(a, Attribute)
    assert {a: 1}[b] == 1


def test_fingerprint_follows_the_words_even_in_a_named_list_file(tmp_path):
    (tmp_path / "spec.txt").write_text("aa\nbb\n", encoding="utf-8")
    path = _write(tmp_path, specific_words="spec.txt")
    before = load_attribute(path).fingerprint()
    assert load_attribute(path).fingerprint() == before  # stable
    (tmp_path / "spec.txt").write_text("aa\ncc\n", encoding="utf-8")
    assert load_attribute(path).fingerprint() != before
    assert load_attribute("gender").fingerprint() != load_attribute("gender", "curated").fingerprint()
