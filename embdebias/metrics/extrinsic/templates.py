r"""Counterfactual sentence templates for the extrinsic probe.

A template file (JSON; the bundled one is ``wordlists/extrinsic_templates.json``) holds

* ``identity_terms``: ``{group: [term, ...]}`` -- at least two groups, each a list of
  identity terms (noun phrases or first names) that fill the ``{person}`` slot;
* ``fillers``: ``{slot: [filler, ...]}`` for fillers without a gold label, or
  ``{slot: {"positive": [...], "negative": [...]}}`` for fillers whose polarity is the
  sentence's gold label (1 positive, 0 negative);
* ``families``: ``{family: {"description": str, "templates": [sentence, ...]}}``; each
  sentence has one ``{person}`` slot and one filler slot named in ``fillers``.

A *counterfactual template* (a :class:`TemplateUnit`) is one sentence with its filler
chosen: its variations differ only in the identity term, so comparing the model's
scores across them is the counterfactual form of Czarnowska et al. (2021). Every unit is
crossed with every identity term of every group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...data.templates import read_templates_json
from ...errors import WordListError

PERSON = "{person}"
_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_GLUED = re.compile(r"[A-Za-z0-9'-]\{[A-Za-z_]|[A-Za-z_0-9]\}[A-Za-z0-9'-]")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")


def tokenize(text: str) -> list[str]:
    """Word tokens of ``text``: runs of letters and digits, with inner ``'`` or ``-``."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class TemplateUnit:
    """One counterfactual template: a sentence with its filler, the identity slot open.

    Attributes
    ----------
    key : str
        ``family/template number/filler``, unique in the family.
    template : str
        The sentence with its ``{person}`` and filler slots.
    slot, filler : str
        The filler slot and the filler put in it.
    label : int or None
        Gold label (1 positive, 0 negative) or None.
    """

    key: str
    template: str
    slot: str
    filler: str
    label: int | None

    @property
    def frame(self) -> str:
        """The sentence with the filler in place and only ``{person}`` left open."""
        return self.template.replace("{" + self.slot + "}", self.filler)

    def sentence(self, term: str) -> str:
        """The sentence for one identity term."""
        return self.frame.replace(PERSON, term)


@dataclass(frozen=True)
class TemplateFamily:
    """A family of templates sharing their kind of filler (e.g. emotions, occupations)."""

    name: str
    description: str
    templates: tuple[str, ...]
    units: tuple[TemplateUnit, ...]

    @property
    def labelled(self) -> bool:
        """Whether every unit has a gold label."""
        return all(u.label is not None for u in self.units)


@dataclass(frozen=True)
class TemplateSet:
    """Identity terms by group and the template families of one file."""

    path: str
    description: str
    groups: dict
    families: dict

    @property
    def terms(self) -> list[str]:
        """Every identity term, group by group."""
        return [t for terms in self.groups.values() for t in terms]

    def family(self, name: str) -> TemplateFamily:
        if name not in self.families:
            raise WordListError(f"{self.path}: no template family {name!r}; known: {', '.join(self.families)}")
        return self.families[name]

    def tokens(self) -> set[str]:
        """Every word token of every term, filler and template."""
        texts = list(self.terms)
        for fam in self.families.values():
            texts += [_SLOT.sub(" ", t) for t in fam.templates] + [u.filler for u in fam.units]
        return {tok for text in texts for tok in tokenize(text)}


def _fail(path, where: str, expected: str) -> WordListError:
    return WordListError(f"{path}: {where}: expected {expected}")


def _strings(path, where: str, value, *, least: int = 1) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) < least:
        raise _fail(path, where, f"a list of at least {least} string(s)")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not tokenize(item):
            raise _fail(path, f"{where}[{i}]", f"a non-empty string of words, got {item!r:.60}")
    if len(set(value)) != len(value):
        dup = next(v for i, v in enumerate(value) if v in value[:i])
        raise _fail(path, where, f"distinct entries; {dup!r} appears twice")
    return tuple(value)


def _groups(path, value) -> dict:
    if not isinstance(value, dict) or len(value) < 2:
        raise _fail(path, "identity_terms", "an object with at least two groups")
    groups = {str(g): _strings(path, f"identity_terms.{g}", terms) for g, terms in value.items()}
    seen: dict = {}
    for g, terms in groups.items():
        for t in terms:
            if t in seen:
                raise _fail(path, f"identity_terms.{g}", f"terms in one group only; {t!r} is also in {seen[t]!r}")
            seen[t] = g
    return groups


def _fillers(path, value) -> dict:
    """``{slot: [(filler, label or None)]}``."""
    if not isinstance(value, dict) or not value:
        raise _fail(path, "fillers", "an object of filler slots")
    out = {}
    for slot, fillers in value.items():
        if isinstance(fillers, dict):
            if set(fillers) != {"positive", "negative"}:
                raise _fail(path, f"fillers.{slot}", 'a list, or an object with exactly "positive" and "negative"')
            out[slot] = [(f, label) for key, label in (("positive", 1), ("negative", 0))
                         for f in _strings(path, f"fillers.{slot}.{key}", fillers[key])]
        else:
            out[slot] = [(f, None) for f in _strings(path, f"fillers.{slot}", fillers)]
    return out


def _family(path, name: str, value, fillers: dict) -> TemplateFamily:
    where = f"families.{name}"
    if not isinstance(value, dict) or not isinstance(value.get("description", ""), str):
        raise _fail(path, where, 'an object with "templates" and an optional "description" string')
    templates = _strings(path, f"{where}.templates", value.get("templates"))
    units = []
    for i, template in enumerate(templates):
        slots = _SLOT.findall(template)
        others = [s for s in slots if s != "person"]
        if slots.count("person") != 1 or len(others) != 1 or others[0] not in fillers:
            raise _fail(path, f"{where}.templates[{i}]",
                        f"one {{person}} slot and one filler slot of {sorted(fillers)}, got {template!r:.80}")
        if _GLUED.search(template):
            raise _fail(path, f"{where}.templates[{i}]",
                        f"slots set off from the words around them (a slot glued to a letter, digit, ' or - "
                        f"would change the tokens), got {template!r:.80}")
        units += [TemplateUnit(f"{name}/{i}/{filler}", template, others[0], filler, label)
                  for filler, label in fillers[others[0]]]
    return TemplateFamily(name, value.get("description", ""), templates, tuple(units))


def load_templates(path=None) -> TemplateSet:
    """Read and check a template file (default: the bundled ``extrinsic_templates.json``).

    Raises
    ------
    WordListError
        The file is missing or not JSON (with its line), or a part does not have the
        shape the module docstring describes (named by its key path).
    """
    path, data = read_templates_json(path)
    if not isinstance(data, dict):
        raise _fail(path, "top level", "a JSON object")
    fillers = _fillers(path, data.get("fillers"))
    families = data.get("families")
    if not isinstance(families, dict) or not families:
        raise _fail(path, "families", "an object of template families")
    return TemplateSet(str(path), str(data.get("description", "")), _groups(path, data.get("identity_terms")),
                       {str(n): _family(path, str(n), v, fillers) for n, v in families.items()})
