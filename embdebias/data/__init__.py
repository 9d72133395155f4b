"""Every bundled resource, one reader each, and the list of what ships.

:data:`~embdebias.data.manifest.RESOURCES` lists every file of ``wordlists/`` (path, kind,
origin and licence, the list names that reach it); :data:`READERS` names the one reader
of each kind (the manifest names them). The readers:

==========================  =========================================================
:mod:`.wordlists`           word and pair lists by role and list set, WEAT tests,
                            Lu et al.'s occupations, Bolukbasi et al.'s profession scores
:mod:`.sembias`             SemBias-format analogy files (BAT)
:mod:`.templates`           extrinsic template files (their JSON; the probe checks them)
:mod:`.cda`                 counterfactual pair files (``embdebias cda``)
:mod:`.expanded`            expanded gender-specific lists written by ``expand``
:mod:`.vader`               VADER's sentiment lexicon (RNSB), from ``vaderSentiment``
:mod:`.attributes`          protected attributes (groups, defining sets, evaluation lists)
:mod:`.facts`               tables of facts about words (the BLS share of women by occupation)
==========================  =========================================================

This package imports only :mod:`embdebias.errors` and :mod:`embdebias._files` from the
rest of embdebias (the layers of ``pyproject.toml``).
"""

from __future__ import annotations

from pathlib import Path

from . import wordlists
from .attributes import Attribute, bundled_attributes, load_attribute
from .cda import read_cda_pairs
from .expanded import EXPANDED_HEADER, read_expanded
from .facts import FactTable, load_facts, read_facts
from .manifest import KINDS, RESOURCES, VADER_LEXICON, Resource, reader
from .sembias import SemBiasInstance, read_sembias
from .templates import read_templates_json
from .vader import sentiment_lexicon, vader_lexicon_path
from .wordlists import data_dir, lu_occupations

#: The reader of each kind of :class:`Resource` (the manifest's :data:`~.manifest.KINDS`,
#: imported); each takes the file's path.
READERS = {kind: reader(kind) for kind in KINDS}


def read_resource(resource: Resource):
    """The content of a bundled file, read by the reader of its kind."""
    return READERS[resource.kind](data_dir() / Path(resource.path))


__all__ = ["Attribute", "EXPANDED_HEADER", "FactTable", "READERS", "RESOURCES", "Resource", "SemBiasInstance",
           "VADER_LEXICON", "bundled_attributes", "data_dir", "load_attribute", "load_facts", "lu_occupations",
           "read_cda_pairs", "read_expanded", "read_facts", "read_resource", "read_sembias", "read_templates_json",
           "sentiment_lexicon", "vader_lexicon_path", "wordlists"]
