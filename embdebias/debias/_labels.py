"""Protected labels for INLP and RLACE: male-, female-biased and neutral words by ``he - she``.

Ravfogel et al. (2020, ``src/data/filter_vecs.py`` and the word-vector notebook) take
the first 150,000 words of GloVe 42B that pass a filter (shorter than 20 characters, no
digits, no punctuation except the underscore of phrases), the 7,500 most male-biased and
7,500 most female-biased by cosine with ``he - she`` and 7,500 neutral words
(``|cos| < 0.03``), then split 70/30 (train+dev / test) and 70/30 (train / dev).
Here the counts scale with the vocabulary: ``fraction`` (7,500 / 150,000 = 0.05) of the
words that pass the filter among the first ``max_words``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from ..embedding import Embedding
from ..errors import EmbdebiasError, MissingWordsError

#: A word Ravfogel et al.'s filter keeps: letters, or letter phrases joined by underscores.
_KEEP = re.compile(r"[^\W\d_]+(?:_[^\W\d_]+)*")
MAX_WORDS = 150_000
FRACTION = 7_500 / 150_000
NEUTRAL_COS = 0.03
#: Labels: Ravfogel et al.'s 1 (male-biased), 0 (female-biased), -1 (neutral).
MALE, FEMALE, NEUTRAL = 1, 0, -1


def kept_words(words: list[str]) -> np.ndarray:
    """Positions of the words that the published filter keeps."""
    return np.fromiter((i for i, w in enumerate(words) if len(w) < 20 and _KEEP.fullmatch(w)), dtype=np.int64)


@dataclass
class LabelledWords:
    """Words with protected labels and the published splits (rows of the embedding)."""

    rows: np.ndarray
    labels: np.ndarray
    train: np.ndarray  # positions into rows / labels
    dev: np.ndarray
    test: np.ndarray

    def split(self, emb: Embedding, part: str, *, binary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` of a split (float64 raw vectors); ``binary`` drops the neutral words."""
        at = getattr(self, part)
        if binary:
            at = at[self.labels[at] != NEUTRAL]
        return emb.take(self.rows[at], dtype=np.float64), self.labels[at]


def gender_labels(emb: Embedding, *, fraction: float = FRACTION, max_words: int = MAX_WORDS,
                  neutral_cos: float = NEUTRAL_COS, male: str = "he", female: str = "she",
                  random_state: int = 0) -> LabelledWords:
    """Male-, female-biased and neutral words of ``emb`` by cosine with ``male - female``."""
    for w in (male, female):
        if emb.words.rows([w])[0] < 0:
            raise MissingWordsError(f"gender labels need {w!r}, which is not in {emb.name}", [w])
    direction = emb.take(emb.words.rows([male]), np.float64)[0] - emb.take(emb.words.rows([female]), np.float64)[0]
    direction /= np.linalg.norm(direction)
    rows = kept_words([emb.words[i] for i in range(min(max_words, len(emb)))])
    vecs = emb.take(rows, dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1)
    cos = vecs @ direction / np.where(norms > 0, norms, 1.0)
    n = int(round(fraction * len(rows)))
    order = np.argsort(cos, kind="stable")
    fem, mas = order[:n], order[::-1][:n]
    rng = np.random.default_rng(random_state)
    neutral = np.flatnonzero(np.abs(cos) < neutral_cos)
    neutral = rng.permutation(neutral)[:n]
    if n < 2 or min(len(fem), len(mas)) < 2:
        raise EmbdebiasError(f"gender labels: {len(rows)} words of {emb.name} pass the filter, too few for "
                             f"two classes of at least 2 words (fraction {fraction})")
    chosen = np.concatenate([mas, fem, neutral])
    labels = np.concatenate([np.full(len(mas), MALE), np.full(len(fem), FEMALE), np.full(len(neutral), NEUTRAL)])
    positions = np.arange(len(chosen))
    rest, test = train_test_split(positions, test_size=0.3, random_state=random_state)
    train, dev = train_test_split(rest, test_size=0.3, random_state=random_state)
    return LabelledWords(rows[chosen], labels, np.sort(train), np.sort(dev), np.sort(test))
