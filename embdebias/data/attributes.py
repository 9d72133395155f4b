"""Protected attributes as data: named groups, defining sets and evaluation lists.

An :class:`Attribute` says everything the pipeline needs to audit and debias one
protected attribute with ``k >= 2`` groups:

``groups``
    The group names, in a fixed order (gender: ``("female", "male")``).
``defining_sets``
    Sets of words with one word per group, in group order, whose differences span the
    bias subspace (Manzini et al. 2019; gender's definitional pairs of Bolukbasi et al.
    2016 are the two-group case, female first).
``specific_words``
    Words whose meaning belongs to a group, which debiasing keeps (gender: the
    gender-specific list).
``equalize_sets``
    Sets equalized by hard debias, one word per group (default: the defining sets).
    Equalizing is symmetric, so the order inside a set does not matter: gender's
    published equalize pairs keep their published, mostly male-first order.
``group_words``
    Each group's target words, the ``k`` target sets of the multi-group metrics (MAC,
    RND, the generalized WEAT, SAME); default: the group's words of the defining sets.
``neutral_words``
    Words that should carry no attribute (gender: the professions).
``attribute_sets``
    Named attribute (stereotype) word sets, the ``A_j`` of MAC and RND.
``weat_tests``
    Ids of the bundled WEAT tests about this attribute.
``direction_words``
    Optional: the two words, first group's then second's, whose difference is the
    attribute's published reference direction (gender: ``("she", "he")``, the direction of
    Gonen & Goldberg's residual tests and the sides of the occupation figure). An
    attribute that names them is measured with the binary protocols built on them; one
    that does not, with the ``k``-group protocols.
``sources``
    Where each field's words come from.

An attribute is always resolved before it is used: :func:`as_attribute` is the one place
that turns what a user wrote (a name, a path, an :class:`Attribute`) into one, and every
difference between gender and another attribute follows from the fields above and from
which bundled lists a field names (:attr:`Attribute.list_names`), never from a branch on
the attribute's name.

Three attributes are bundled (``wordlists/attributes/``): ``gender``, whose lists are
today's published lists by reference (so ``lists="curated"`` swaps them as for every
other command), ``race`` and ``religion``. A user's attribute is one JSON file with the
same keys; a list value may be a bundled list name (``"definitional_pairs"``) or a path
relative to the JSON file, for two groups only where it names a pair list. Every
problem is an :class:`~embdebias.errors.AttributeFileError` naming the file and key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .._warn import warn
from ..errors import AttributeFileError, WordListError, quote
from .._outdir import RULE as OUTPUT_NAME_RULE
from .._outdir import name_problem
from .wordlists import (DEFAULT_LISTS, WORD_RULE, check_lists, data_dir, is_bundled_name, is_word, load_pairs,
                        load_words, read_json, same_word)

__all__ = ["Attribute", "DEFAULT_ATTRIBUTE", "as_attribute", "attribute_path", "bundled_attributes", "given_attribute",
           "is_default_attribute", "load_attribute", "resolve_attribute", "resolve_attributes"]

#: The attribute of every command that is not given one.
DEFAULT_ATTRIBUTE = "gender"
_DIR = "attributes"
_KEYS = ("name", "description", "groups", "defining_sets", "specific_words", "equalize_sets", "group_words",
         "neutral_words", "attribute_sets", "weat_tests", "direction_words", "sources")
#: The bundled lists whose words the metrics of gender's own data (SemBias, the professions,
#: the extrinsic templates) are built on: an attribute whose defining sets are this list
#: is the one those metrics measure (:attr:`Attribute.uses_gender_lists`).
_GENDER_DEFINING_LIST = "definitional_pairs"


@dataclass(frozen=True)
class Attribute:
    """One protected attribute with ``k >= 2`` named groups (see the module docstring).

    Build it with :func:`load_attribute`; the constructor does not validate.
    """

    name: str
    groups: tuple[str, ...]
    defining_sets: tuple[tuple[str, ...], ...]
    specific_words: tuple[str, ...] = ()
    equalize_sets: tuple[tuple[str, ...], ...] = ()
    group_words: dict = field(default_factory=dict)
    neutral_words: tuple[str, ...] = ()
    attribute_sets: dict = field(default_factory=dict)
    weat_tests: tuple[str, ...] = ()
    direction_words: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict, compare=False)
    list_names: dict = field(default_factory=dict, compare=False)
    description: str = field(default="", compare=False)
    path: str = field(default="", compare=False)

    @property
    def k(self) -> int:
        """The number of groups."""
        return len(self.groups)

    @property
    def is_binary(self) -> bool:
        """True for two groups (the case of every binary-only method)."""
        return self.k == 2

    @property
    def uses_gender_lists(self) -> bool:
        """Whether the defining sets are the bundled definitional pairs of the list set (gender's
        file names them): the metrics whose data are gender's own (SemBias, ECT's and RNSB's
        lists, the extrinsic templates, the occupation facts) measure this attribute."""
        return self.list_names.get("defining_sets") == _GENDER_DEFINING_LIST

    @property
    def neutral_name(self) -> str:
        """The report's name of the neutral words: the bundled list's name (gender: "professions"),
        else "neutral words"."""
        return self.list_names.get("neutral_words") or "neutral words"

    @property
    def specific_name(self) -> str:
        """How the report names the words debiasing keeps ("gender-specific")."""
        return f"{self.name}-specific"

    def targets(self) -> list[tuple[str, ...]]:
        """The groups' target words in group order (the ``targets`` of the multi-group metrics)."""
        return [self.group_words[g] for g in self.groups]

    def fingerprint(self) -> str:
        """A hash of every word the attribute holds (not of its file): a list file it names that is
        edited changes it too, so resume and sweep keys built on it follow the words."""
        import hashlib
        import json

        content = [self.name, self.groups, self.defining_sets, self.specific_words, self.equalize_sets,
                   sorted(self.group_words.items()), self.neutral_words, sorted(self.attribute_sets.items()),
                   self.weat_tests]
        if self.direction_words:  # appended only when set: every earlier fingerprint (resume keys) holds
            content.append(self.direction_words)
        return hashlib.sha256(json.dumps(content, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]

    def __hash__(self) -> int:
        return hash((self.name, self.groups, self.defining_sets))


def bundled_attributes() -> list[str]:
    """The names of the bundled attributes, ``gender`` first."""
    names = sorted(p.stem for p in (data_dir() / _DIR).glob("*.json"))
    return sorted(names, key=lambda n: n != DEFAULT_ATTRIBUTE)


def attribute_path(name_or_path) -> Path:
    """The JSON file of a bundled attribute name or a path."""
    if isinstance(name_or_path, str) and is_bundled_name(name_or_path):
        path = data_dir() / _DIR / f"{name_or_path}.json"
        if not path.is_file():
            raise AttributeFileError(f"no bundled attribute named {quote(name_or_path)}; bundled: "
                                     f"{', '.join(bundled_attributes())}; a file needs a path such as "
                                     f"./{name_or_path[:60]}.json")
        return path
    return Path(os.fsdecode(name_or_path))


def load_attribute(name_or_path=DEFAULT_ATTRIBUTE, lists: str = DEFAULT_LISTS) -> Attribute:
    """An attribute, bundled (``"gender"``, ``"race"``, ``"religion"``) or from a JSON file.

    Parameters
    ----------
    name_or_path : str or path-like, default "gender"
        A bundled name or the path of a JSON attribute file.
    lists : {"published", "curated"}, default "published"
        The list set that resolves bundled list names in the file (gender's lists).

    Raises
    ------
    AttributeFileError
        The file is missing or malformed; the message names the file and key.
    """
    check_lists(lists)
    path = attribute_path(name_or_path)
    try:
        _, data = read_json(path)
    except WordListError as exc:
        raise AttributeFileError(f"attribute file {exc}") from None
    return _Reader(path, lists).attribute(data)


def is_default_attribute(attribute) -> bool:
    """Whether ``attribute`` is the bundled gender attribute. Kept for code written against 0.1;
    embdebias itself never branches on it: behaviour follows the attribute's fields."""
    if attribute is None or (isinstance(attribute, str) and attribute == DEFAULT_ATTRIBUTE):
        return True
    if not isinstance(attribute, Attribute) or attribute.name != DEFAULT_ATTRIBUTE:
        return False
    return Path(attribute.path).resolve() == attribute_path(DEFAULT_ATTRIBUTE).resolve()


def as_attribute(value=DEFAULT_ATTRIBUTE, lists: str = DEFAULT_LISTS) -> Attribute:
    """The :class:`Attribute` an ``attribute=`` argument stands for: an Attribute is itself, a name or
    path is loaded with ``lists``.

    ``None`` stood for gender before attributes were objects; it still does, with a
    :class:`FutureWarning` (it will be an error in the next release): write ``"gender"``.
    """
    if isinstance(value, Attribute):
        return value
    if value is None:
        warn("attribute=None for gender is deprecated and will be an error in the next release; "
             "write attribute='gender'", FutureWarning)
        value = DEFAULT_ATTRIBUTE
    return load_attribute(value, lists)


def resolve_attribute(value=None, lists: str = DEFAULT_LISTS) -> Attribute:
    """The :class:`Attribute` an ``attribute=`` argument stands for, None meaning gender without a
    warning (the internal spelling of 0.1; new code calls :func:`as_attribute`)."""
    return as_attribute(DEFAULT_ATTRIBUTE if value is None else value, lists)


def given_attribute(value, lists: str = DEFAULT_LISTS, *, carried=None, set_size: int | None = None):
    """The attribute an estimator's ``attribute=`` parameter stands for, in one place.

    ``value`` is what the user gave (None: not given); ``carried`` the attribute a fitted
    input already carries (a :class:`~embdebias.BiasSubspace`'s ``attribute_``), and
    ``set_size`` the words per set of defining sets given instead of an attribute's.
    The order: the attribute given (an error when it disagrees with ``carried``: both
    named), else the one carried, else gender, unless sets of another size than two
    were given (then None: sets of ``k`` words of no named attribute).

    Raises
    ------
    AttributeFileError
        ``value`` and ``carried`` are different attributes.
    """
    if value is None:
        if carried is not None:
            return carried
        return None if set_size not in (None, 2) else load_attribute(DEFAULT_ATTRIBUTE, lists)
    attr = as_attribute(value, lists)
    if carried is not None and (carried.name, carried.groups, carried.defining_sets) != \
            (attr.name, attr.groups, attr.defining_sets):
        raise AttributeFileError(f"attribute {attr.name!r} ({', '.join(attr.groups)}) was given, but the fitted "
                                 f"subspace is of attribute {carried.name!r} ({', '.join(carried.groups)}): "
                                 f"give one of them, or both the same")
    return attr


def resolve_attributes(value=None, lists: str = DEFAULT_LISTS) -> list[Attribute]:
    """Several attributes: a comma-separated string (``"gender,race"``), a sequence, or one."""
    if isinstance(value, str) and "," in value:
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        if not value:
            raise AttributeFileError("no attribute given; expected a name such as gender, race or religion")
        out = [as_attribute(v, lists) for v in value]
        names = [a.name for a in out]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise AttributeFileError(f"attribute {quote(twice[0])} given twice")
        return out
    return [as_attribute(DEFAULT_ATTRIBUTE if value is None else value, lists)]


class _Reader:
    """Validates one attribute file's JSON object; every error names the file and key."""

    def __init__(self, path: Path, lists: str):
        self.path = path
        self.lists = lists
        self.list_names: dict = {}  # key -> the bundled list name that gave its words

    def fail(self, key: str, message: str):
        raise AttributeFileError(f"{self.path}: {key}: {message}")

    def attribute(self, data) -> Attribute:
        if not isinstance(data, dict):
            raise AttributeFileError(f"{self.path}: expected a JSON object with keys name, groups, "
                                     f"defining_sets, ...; got a JSON {type(data).__name__}")
        unknown = [k for k in data if k not in _KEYS]
        if unknown:
            self.fail(unknown[0], f"unknown key; expected one of {', '.join(_KEYS)}")
        name = self.name(data)
        groups = self.groups(data.get("groups"))
        defining = self.sets(data.get("defining_sets"), "defining_sets", groups, required=True)
        if len(defining) < 2:  # the subspace would refuse it later, naming neither the file nor the key
            self.fail("defining_sets", f"{len(defining)} set; the bias subspace needs at least two defining sets")
        group_words = self.group_words(data.get("group_words"), groups, defining)
        self.one_group_per_word(defining, groups, group_words)
        return Attribute(
            name=name, groups=groups, defining_sets=defining,
            specific_words=self.words(data.get("specific_words"), "specific_words",
                                      default=_all_words(defining, group_words)),
            equalize_sets=self.sets(data.get("equalize_sets"), "equalize_sets", groups, default=defining),
            group_words=group_words,
            neutral_words=self.words(data.get("neutral_words"), "neutral_words", default=()),
            attribute_sets=self.named_sets(data.get("attribute_sets"), "attribute_sets"),
            weat_tests=self.weat_ids(data.get("weat_tests")),
            direction_words=self.direction_words(data.get("direction_words"), groups),
            sources=self.sources(data.get("sources")), list_names=dict(self.list_names),
            description=self.description(data.get("description", "")), path=str(self.path))

    def text(self, data: dict, key: str) -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"expected a non-empty string, got {quote(value)}")
        return value.strip()

    def name(self, data: dict) -> str:
        """The attribute's name, under the rule of every name that becomes a path component
        (:mod:`embdebias._outdir`): a run of several attributes writes each into ``OUT/NAME/``."""
        name = self.text(data, "name")
        problem = name_problem(name)
        if problem is not None:
            self.fail("name", f"{quote(name)} cannot name the attribute's output directory ({problem}); expected "
                              f"{OUTPUT_NAME_RULE}")
        return name

    def description(self, value) -> str:
        if not isinstance(value, str):
            self.fail("description", f"expected a string, got {quote(value)}")
        return value

    def groups(self, value) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
            self.fail("groups", f"expected a list of group names, got {quote(value)}")
        if len(value) < 2:
            self.fail("groups", f"{len(value)} group(s); an attribute needs at least two groups")
        if len(set(value)) != len(value):
            self.fail("groups", f"group {quote(next(g for g in value if value.count(g) > 1))} named twice")
        return tuple(value)

    def word(self, value, key: str) -> str:
        if not is_word(value):
            self.fail(key, f"expected a word ({WORD_RULE}), got {quote(ascii(value))}")
        return value

    def reference(self, value: str, key: str, reader):
        """A list named by a string: a bundled list name, or a path relative to the attribute file."""
        target = value if is_bundled_name(value) else self.path.parent / value
        if is_bundled_name(value):
            self.list_names[key] = value
        try:
            return reader(target, self.lists)
        except WordListError as exc:
            self.fail(key, str(exc))

    def words(self, value, key: str, default=None) -> tuple[str, ...]:
        if value is None:
            if default is None:
                self.fail(key, "missing")
            return tuple(default)
        if isinstance(value, str):
            return tuple(self.reference(value, key, load_words))
        if not isinstance(value, list):
            self.fail(key, f"expected a list of words or a list name, got {quote(value)}")
        return tuple(dict.fromkeys(self.word(w, f"{key}[{i}]") for i, w in enumerate(value)))

    def sets(self, value, key: str, groups: tuple, *, default=None, required=False) -> tuple:
        if value is None and not required:
            return tuple(default)
        if isinstance(value, str):
            if len(groups) != 2:
                self.fail(key, f"a list name gives pairs, but the attribute has {len(groups)} groups")
            value = [list(p) for p in self.reference(value, key, load_pairs)]
        if not isinstance(value, list) or not value:
            self.fail(key, f"expected a non-empty list of sets (one word per group), got {quote(value)}")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, list) or len(item) != len(groups):
                size = len(item) if isinstance(item, list) else "not a list"
                self.fail(f"{key}[{i}]", f"{size} word(s); expected {len(groups)}, one per group "
                                         f"({', '.join(groups)})")
            words = tuple(self.word(w, f"{key}[{i}]") for w in item)
            if any(same_word(a, b) for j, a in enumerate(words) for b in words[j + 1:]):
                # hard debias equalizes each set's lower-, Title- and UPPER-case forms: ["He", "he"] is one word
                self.fail(f"{key}[{i}]", f"a word stands for two groups (case aside): {quote(list(words))}")
            out.append(words)
        return tuple(out)

    def group_words(self, value, groups: tuple, defining: tuple) -> dict:
        if value is None:
            return {g: tuple(dict.fromkeys(s[i] for s in defining)) for i, g in enumerate(groups)}
        if not isinstance(value, dict):
            self.fail("group_words", f"expected an object group -> words, got {quote(value)}")
        for g in value:
            if g not in groups:
                self.fail(f"group_words.{g}", f"unknown group; the groups are {', '.join(groups)}")
        out = {}
        for g in groups:
            if g not in value:
                self.fail(f"group_words.{g}", "missing: every group needs its words")
            words = self.words(value[g], f"group_words.{g}")
            if not words:
                self.fail(f"group_words.{g}", "empty group: every group needs at least one word")
            out[g] = words
        return out

    def one_group_per_word(self, defining: tuple, groups: tuple, group_words: dict):
        """Refuse a word that stands for two groups, in the defining sets or the group words."""
        owner: dict = {}
        places = [(s[i], g, f"defining_sets[{j}]") for j, s in enumerate(defining) for i, g in enumerate(groups)]
        places += [(w, g, f"group_words.{g}") for g in groups for w in group_words[g]]
        for word, group, key in places:
            if owner.setdefault(word, group) != group:
                self.fail(key, f"word {quote(word)} is in two groups ({owner[word]} and {group})")

    def named_sets(self, value, key: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(key, f"expected an object name -> words, got {quote(value)}")
        out = {}
        for name, words in value.items():
            out[str(name)] = self.words(words, f"{key}.{name}")
            if not out[name]:
                self.fail(f"{key}.{name}", "empty set")
        return out

    def weat_ids(self, value) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail("weat_tests", f"expected a list of WEAT test ids, got {quote(value)}")
        from .wordlists import weat_tests

        known = {t.id for t in weat_tests()}
        for i, tid in enumerate(value):
            if tid not in known:
                self.fail(f"weat_tests[{i}]", f"no bundled WEAT test {quote(tid)}")
        return tuple(value)

    def direction_words(self, value, groups: tuple) -> tuple[str, ...]:
        if value is None:
            return ()
        if len(groups) != 2:
            self.fail("direction_words", f"a direction has two sides, but the attribute has {len(groups)} groups")
        if not isinstance(value, list) or len(value) != 2:
            self.fail("direction_words", f"expected two words (first group's, second group's), got {quote(value)}")
        words = tuple(self.word(w, f"direction_words[{i}]") for i, w in enumerate(value))
        if words[0] == words[1]:
            self.fail("direction_words", f"the same word twice: {quote(words[0])}")
        return words

    def sources(self, value) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self.fail("sources", f"expected an object key -> citation, got {quote(value)}")
        return dict(value)


def _all_words(defining: tuple, group_words: dict) -> tuple[str, ...]:
    return tuple(dict.fromkeys([w for s in defining for w in s] + [w for ws in group_words.values() for w in ws]))
