"""Counterfactual data augmentation (CDA) of a text corpus, after Lu et al. (2020).

Lu, Mardziel, Wu, Amancharla & Datta, "Gender Bias in Neural Natural Language
Processing" (paper 003), section 4: each training sentence with a gendered word is
kept and followed by its counterfactual, the sentence with every gendered word swapped
for its partner of a bidirectional dictionary ("he" <-> "she", "king" <-> "queen").
Their *naive* intervention swaps every dictionary word; their *grammatical* one turns
``her`` into ``him`` or ``his`` by its part of speech and keeps a gendered word that
belongs to a proper noun ("Queen Elizabeth").

>>> from embdebias.cda import CounterfactualAugmenter, augment_file
>>> CounterfactualAugmenter().counterfactual("Mr. Smith told her his plan.")
'Mrs. Smith told him her plan.'

* :class:`CounterfactualAugmenter` -- the intervention on a line
  (:meth:`~CounterfactualAugmenter.counterfactual`), a stream of lines
  (:meth:`~CounterfactualAugmenter.augment`) or a corpus file
  (:meth:`~CounterfactualAugmenter.augment_file`, plain or gzip, atomic;
  :meth:`~CounterfactualAugmenter.iter_file` streams the same lines without writing them);
* :func:`augment_file` -- the same in one call (what ``embdebias cda`` runs);
* :class:`CDAStats` -- lines read and augmented, swaps per pair;
* :func:`build_lexicon` -- the checked dictionary of a pair (and name) list;
* :func:`her_target` -- the rule that turns ``her`` into ``him`` or ``his``.

The dictionary is ``wordlists/cda_pairs.txt`` (Lu et al.'s 124 pairs, their
``her:him/his`` and ``himself:herself``), the optional first names
``wordlists/cda_names.txt``; ``wordlists/README.md`` documents both. How words are
found is described in :mod:`embdebias.cda._engine`, the grammatical rules in
:mod:`embdebias.cda._rules`.
"""

from ..text import CorpusFile, check_corpus_path
from ._lexicon import Lexicon, build_lexicon
from ._rules import her_target
from .augmenter import INTERVENTIONS, MODES, CDAStats, CounterfactualAugmenter, augment_file

__all__ = ["CDAStats", "CorpusFile", "CounterfactualAugmenter", "INTERVENTIONS", "Lexicon", "MODES",
           "augment_file", "build_lexicon", "check_corpus_path", "her_target"]
