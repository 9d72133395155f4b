"""The lower-case fallback of word lookups, in one place.

Published lists are cased ("Mary", "Catholic_priest") while some vocabularies are not
(GloVe 6B is lower-case). Everywhere a list is looked up, a word missing in its exact
case stands for its lower-case form when that form is in the vocabulary, and the
replacement is reported.
"""

from __future__ import annotations

import numpy as np


def rows_with_lowercase(vocab, words, lowercase: bool = True) -> tuple[np.ndarray, dict[str, str]]:
    """``(rows, lowered)``: the row of every word (-1 if missing) and ``{word: lower-case form used}``.

    ``vocab`` is a :class:`~embdebias.vocab.Vocabulary` (or anything with its ``rows``);
    only words missing in their exact case are looked up again, in lower case.
    """
    words = list(words)
    rows = np.asarray(vocab.rows(words), dtype=np.int64).copy()
    lowered: dict[str, str] = {}
    if lowercase:
        absent = [i for i, r in enumerate(rows) if r < 0 and words[i].lower() != words[i]]
        if absent:
            for i, r in zip(absent, vocab.rows([words[i].lower() for i in absent])):
                if r >= 0:
                    rows[i] = r
                    lowered[words[i]] = words[i].lower()
    return rows, lowered
