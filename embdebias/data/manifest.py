"""What ships in ``wordlists/``: one record per file, with how it is read and where it comes from.

This table is the one list of the bundled resources. :mod:`embdebias.data.wordlists`
derives its bundled names (``"published:professions"``, ``"weat_tests"``) from it,
:data:`KINDS` names the reader of each kind (:func:`reader`; :data:`embdebias.data.READERS`
holds them imported), and ``tests/test_data_manifest.py`` checks that every file under
``wordlists/`` is listed here and that every listed file exists and reads with its reader.
A new bundled file is one more :class:`Resource` here (and its reader in :data:`KINDS` if
its kind is new).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

_MIT_PROJECT = "written by the embdebias authors, MIT (the project's licence)"
_BOLUKBASI_LICENCE = "Bolukbasi et al. (2016), tolga-b/debiaswe data/, MIT (bolukbasi2016/LICENSE)"
_ZHAO_LICENCE = "Zhao et al. (2018), uclanlp/gn_glove SemBias/SemBias, Apache-2.0 (sembias/LICENSE)"
_BOLUKBASI = "Bolukbasi et al. (2016), published"
_ZHAO_WORDS_LICENCE = "Zhao et al. (2018), uclanlp/gn_glove wordlist/, Apache-2.0 (zhao2018/LICENSE)"


@dataclass(frozen=True)
class Resource:
    """One bundled file.

    Attributes
    ----------
    path : str
        Its path under ``wordlists/`` (``/``-separated).
    kind : str
        What it holds; a key of :data:`KINDS`, which names its reader.
    origin : str
        Where it comes from and under which licence (after ``wordlists/README.md`` and
        the ``SOURCE.md`` / ``LICENSE`` files beside it).
    names : tuple of (str, str)
        The bundled names that resolve to this file, ``("SET:ROLE" or "NAME", source as
        reports show it)``; empty for a file no list name reaches (the occupations, the
        documents).
    """

    path: str
    kind: str
    origin: str
    names: tuple[tuple[str, str], ...] = ()


def _list(path, kind, origin, *names):
    return Resource(path, kind, origin, tuple(names))


#: Every file of ``wordlists/``, in the order the bundled names are listed.
RESOURCES: tuple[Resource, ...] = (
    _list("bolukbasi2016/definitional_pairs.json", "pair list", _BOLUKBASI_LICENCE,
          ("published:definitional_pairs", _BOLUKBASI)),
    _list("bolukbasi2016/equalize_pairs.json", "pair list", _BOLUKBASI_LICENCE,
          ("published:equalize_pairs", _BOLUKBASI)),
    _list("bolukbasi2016/gender_specific_full.json", "word list", _BOLUKBASI_LICENCE,
          ("published:gender_specific", _BOLUKBASI + " (full list)")),
    _list("bolukbasi2016/gender_specific_seed.json", "word list", _BOLUKBASI_LICENCE,
          ("published:gender_specific_seed", _BOLUKBASI + " (seed list)")),
    _list("bolukbasi2016/professions.json", "scored word list", _BOLUKBASI_LICENCE,
          ("published:professions", _BOLUKBASI)),
    _list("sembias/SemBias", "sembias", _ZHAO_LICENCE,
          ("published:sembias", "SemBias, Zhao et al. (2018), published")),
    _list("curated/definitional_pairs.txt", "pair list",
          "Bolukbasi et al. (2016)'s ten pairs, typed by the embdebias authors, MIT",
          ("curated:definitional_pairs", "Bolukbasi et al. (2016)'s ten pairs, embdebias text file")),
    _list("curated/equalize_pairs.txt", "pair list", _MIT_PROJECT,
          ("curated:equalize_pairs", "embdebias curated")),
    _list("curated/gender_specific_seed.txt", "word list", _MIT_PROJECT,
          ("curated:gender_specific", "embdebias curated (seed list)"),
          ("curated:gender_specific_seed", "embdebias curated (seed list)")),
    _list("curated/professions.txt", "word list", _MIT_PROJECT, ("curated:professions", "embdebias curated")),
    _list("curated/sembias.txt", "sembias", _MIT_PROJECT + ", in the SemBias format of Zhao et al. (2018)",
          ("curated:sembias", "embdebias curated, SemBias format")),
    _list("weat_tests.json", "weat tests",
          "stimuli of Caliskan et al. (2017) (published) and tests curated by the embdebias authors, MIT",
          ("weat_tests", "Caliskan et al. (2017) and embdebias curated")),
    _list("extrinsic_templates.json", "templates", _MIT_PROJECT,
          ("extrinsic_templates", "embdebias curated, in the style of Kiritchenko & Mohammad (2018) and "
                                  "Lu et al. (2020)")),
    _list("cda_pairs.txt", "cda pairs",
          "Lu et al. (2020), Supplemental Material, transcribed (published facts, cited); two lines added by "
          "the embdebias authors",
          ("cda_pairs", "Lu et al. (2020), Supplemental Material, gender pairs")),
    _list("cda_names.txt", "cda pairs", _MIT_PROJECT, ("cda_names", "embdebias curated, first-name pairs")),
    _list("zhao2018/male_word_file.txt", "word list", _ZHAO_WORDS_LICENCE,
          ("zhao2018_male", "Zhao et al. (2018), 222 male words")),
    _list("zhao2018/female_word_file.txt", "word list", _ZHAO_WORDS_LICENCE,
          ("zhao2018_female", "Zhao et al. (2018), 222 female words")),
    _list("lu2020/occupations.txt", "word list",
          "Lu et al. (2020), Supplemental Material, transcribed (lu2020/SOURCE.md)"),
    _list("rudinger2018/occupations-stats.tsv", "facts table",
          "Rudinger et al. (2018), rudinger/winogender-schemas data/, MIT (rudinger2018/LICENSE); the % women per "
          "occupation are U.S. Bureau of Labor Statistics figures, 2015-16 (public domain)"),
    _list("attributes/gender.json", "attribute",
          "the embdebias authors, MIT: references to the published gender lists above, and words of "
          "Caliskan et al. (2017)'s WEAT 6-8 stimuli (published, cited)"),
    _list("attributes/race.json", "attribute",
          "defining sets after Manzini et al. (2019), typed by the embdebias authors; the other lists written by "
          "the embdebias authors, MIT (wordlists/README.md, Attributes)"),
    _list("attributes/religion.json", "attribute",
          "defining sets after Manzini et al. (2019), typed by the embdebias authors; the other lists written by "
          "the embdebias authors, MIT (wordlists/README.md, Attributes)"),
    _list("README.md", "document", _MIT_PROJECT),
    _list("bolukbasi2016/LICENSE", "document", "the MIT licence of Bolukbasi et al.'s release"),
    _list("bolukbasi2016/SOURCE.md", "document", _MIT_PROJECT),
    _list("sembias/LICENSE", "document", "the Apache License 2.0 of Zhao et al.'s release"),
    _list("sembias/SOURCE.md", "document", _MIT_PROJECT),
    _list("lu2020/SOURCE.md", "document", _MIT_PROJECT),
    _list("zhao2018/LICENSE", "document", "the Apache License 2.0 of Zhao et al.'s release"),
    _list("zhao2018/SOURCE.md", "document", _MIT_PROJECT),
    _list("rudinger2018/LICENSE", "document", "the MIT licence of Rudinger et al.'s release"),
    _list("rudinger2018/SOURCE.md", "document", _MIT_PROJECT),
)

#: The resource that is not in ``wordlists/``: RNSB's sentiment words, read from the
#: installed ``vaderSentiment`` package (MIT) by :func:`embdebias.data.vader.sentiment_lexicon`.
VADER_LEXICON = "vaderSentiment/vader_lexicon.txt"


#: Every kind of :class:`Resource` and its reader, ``"module:function"`` in :mod:`embdebias.data`;
#: each reader takes the file's path. Named, not imported: the readers import
#: :mod:`~embdebias.data.wordlists`, which reads a list of a role through :func:`reader`
#: (a SemBias file's, for its size in a report) without importing them.
KINDS: dict[str, str] = {
    "word list": "wordlists:load_words",
    "scored word list": "wordlists:load_words",
    "pair list": "wordlists:load_pairs",
    "sembias": "sembias:read_sembias",
    "weat tests": "wordlists:load_weat_tests",
    "templates": "templates:read_templates_json",
    "cda pairs": "cda:read_cda_pairs",
    "facts table": "facts:read_facts",
    "document": "wordlists:read_text",
    "attribute": "attributes:load_attribute",
}


def reader(kind: str) -> Callable:
    """The reader of the resources of ``kind`` (see :data:`KINDS`), its module imported on first use."""
    module, _, function = KINDS[kind].partition(":")
    return getattr(importlib.import_module(f".{module}", __package__), function)
