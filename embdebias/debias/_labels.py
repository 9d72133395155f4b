"""Protected labels for INLP and RLACE: male-, female-biased and neutral words by ``he - she``,
or, for an attribute of ``k`` groups, the words nearest each group's direction.

Ravfogel et al. (2020, ``src/data/filter_vecs.py`` and the word-vector notebook) take
the first 150,000 words of GloVe 42B that pass a filter (shorter than 20 characters, no
digits, no punctuation except the underscore of phrases), the 7,500 most male-biased and
7,500 most female-biased by cosine with ``he - she`` and 7,500 neutral words
(``|cos| < 0.03``), then split 70/30 (train+dev / test) and 70/30 (train / dev).
The pool here is the published one, the first ``max_words`` words (in vocabulary order)
that pass the filter (:func:`filtered_pool`), and each class takes ``fraction``
(7,500 / 150,000 = 0.05) of it: 7,500 words when the vocabulary has 150,000 filtered
words, the same share of a smaller one. (Until issue 33 the pool was the filtered words
among the first ``max_words`` of the vocabulary: 131,160 on GloVe 6B, 6,558 a class.)

For another attribute (:func:`attribute_labels`; race, religion or a user's, ``k >= 2``
groups) no paper gives labels; ours generalize the published rule. Each group's
direction is its centroid minus the attribute's centre: the mean of the unit vectors of
the group's words in the defining sets, minus the mean of the ``k`` centroids (for two
groups the two directions are opposite, as ``he - she`` and ``she - he``). Every
filtered word belongs to the group whose direction it has the highest cosine with; each
group's label goes to its ``fraction`` most aligned words among its own, and the neutral
words are drawn from those whose cosine with every direction is below 0.03 in absolute
value. Labels are the group's position, 0 to ``k - 1``, and -1 for neutral. The defining
sets, not the group words, give the directions, so that the metrics' target words stay
out of the training signal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from ..data import wordlists
from ..embedding import Embedding
from ..errors import EmbdebiasError, MissingWordsError

#: A word Ravfogel et al.'s filter keeps: letters, or letter phrases joined by underscores.
_KEEP = re.compile(r"[^\W\d_]+(?:_[^\W\d_]+)*")
MAX_WORDS = 150_000
FRACTION = 7_500 / 150_000
NEUTRAL_COS = 0.03
#: Labels: Ravfogel et al.'s 1 (male-biased), 0 (female-biased), -1 (neutral).
MALE, FEMALE, NEUTRAL = 1, 0, -1


def filtered_pool(emb: Embedding, max_words: int) -> np.ndarray:
    """Rows of the first ``max_words`` words of ``emb`` (in its order) that the published filter keeps.

    The vocabulary is read in slices until enough pass: ``max_words`` words, then about as many as
    the pass rate says are missing (GloVe 6B: the first 171,000 or so words give 150,000).
    """
    found, have, start = [], 0, 0
    while start < len(emb) and have < max_words:
        # after the first slice, about as many words as the pass rate so far says are still needed
        size = max_words if not have else min(max_words, int((max_words - have) * start / have * 1.1) + 1_000)
        stop = min(len(emb), start + size)
        rows = start + kept_words(emb.words[start:stop])  # one slice: decoded at once, not word by word
        found.append(rows[:max_words - have])
        have += len(found[-1])
        start = stop
    return np.concatenate(found) if found else np.zeros(0, np.int64)


def _kept(word: str) -> bool:
    """The published filter on one word: shorter than 20 characters, letters, or letter runs joined
    by single underscores (a word of letters only passes isalpha, 3x faster than the regex)."""
    return len(word) < 20 and bool(word.isalpha() or _KEEP.fullmatch(word))


def kept_words(words: list[str]) -> np.ndarray:
    """Positions of the words that the published filter keeps (:func:`_kept`).

    Vectorized over the words' UTF-8 bytes: an ASCII word is kept when it has 1 to 19 bytes, all
    letters or underscores, no underscore first, last or twice in a row, which is what the
    filter says of ASCII; a word with a non-ASCII byte is decided by :func:`_kept` itself (in
    GloVe's first 150,000 words, a few thousand). The same positions as ``_kept`` on every word.
    """
    if not words:
        return np.zeros(0, np.int64)
    # a closing newline: every word's segment [start, next start) is inside the buffer, even an empty last one
    b = np.frombuffer(("\n".join(words) + "\n").encode("utf-8", "surrogatepass"), dtype=np.uint8)
    breaks = np.flatnonzero(b == 10)
    if len(breaks) != len(words):  # a word with a newline of its own: word by word
        return np.fromiter((i for i, w in enumerate(words) if _kept(w)), dtype=np.int64)
    starts = np.concatenate([[0], breaks[:-1] + 1])
    lengths = breaks - starts
    letter = ((b | 0x20) >= ord("a")) & ((b | 0x20) <= ord("z"))
    underscore = b == ord("_")
    high = b >= 0x80
    bad = ~(letter | underscore | high) & (b != 10)  # a digit, punctuation, a space, a control character
    bad[1:] |= underscore[1:] & underscore[:-1]  # two underscores in a row
    nonempty = lengths > 0
    # each segment is a word and its newline; an empty word's is the newline alone (and is dropped)
    ascii_word = ~np.logical_or.reduceat(high, starts)
    keep = ascii_word & nonempty & (lengths < 20) & ~np.logical_or.reduceat(bad, starts)
    keep[nonempty] &= ~(underscore[starts[nonempty]] | underscore[breaks[nonempty] - 1])
    rest = np.flatnonzero(~ascii_word)
    keep[rest] = [_kept(words[i]) for i in rest.tolist()]
    return np.flatnonzero(keep).astype(np.int64)


@dataclass
class LabelledWords:
    """Words with protected labels and the published splits (rows of the embedding)."""

    rows: np.ndarray
    labels: np.ndarray
    train: np.ndarray  # positions into rows / labels
    dev: np.ndarray
    test: np.ndarray
    groups: tuple = ("female", "male")  # the group of label 0, 1, ...

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def split(self, emb: Embedding, part: str, *, binary: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` of a split (float64 raw vectors); ``binary`` drops the neutral words (the
        groups' words remain: two classes for gender, ``k`` for an attribute of ``k`` groups)."""
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
    rows = filtered_pool(emb, max_words)
    cos = row_cosines(emb, rows, direction[None, :])[:, 0]
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
    return _split(rows[chosen], labels, random_state, ("female", "male"))


def row_cosines(emb: Embedding, rows: np.ndarray, directions: np.ndarray, chunk_rows: int = 16_384) -> np.ndarray:
    """``(len(rows), k)`` cosines of the rows ``rows`` with the unit ``directions`` (``(k, d)``), in
    float64, read a chunk of rows at a time (150,000 rows of 300 dimensions in float64 would be
    360 MB at once); a zero row has cosine 0."""
    out = np.empty((len(rows), len(directions)))
    for start in range(0, len(rows), chunk_rows):
        vecs = emb.take(rows[start:start + chunk_rows], dtype=np.float64)
        norms = np.linalg.norm(vecs, axis=1)
        out[start:start + len(vecs)] = (vecs @ directions.T) / np.where(norms > 0, norms, 1.0)[:, None]
    return out


def _split(rows: np.ndarray, labels: np.ndarray, random_state: int, groups: tuple) -> LabelledWords:
    """The published 70/30 (train+dev / test) then 70/30 (train / dev) splits."""
    positions = np.arange(len(rows))
    rest, test = train_test_split(positions, test_size=0.3, random_state=random_state)
    train, dev = train_test_split(rest, test_size=0.3, random_state=random_state)
    return LabelledWords(rows, labels, np.sort(train), np.sort(dev), np.sort(test), groups)


def protected_labels(emb: Embedding, attribute, lists: str = "published", **kw) -> LabelledWords:
    """The labelled words of an attribute: with its ``direction_words`` (gender: she, he), the published
    binary labels of :func:`gender_labels` by cosine with their difference; else :func:`attribute_labels`
    of its ``k`` groups. ``attribute`` is an Attribute, a name or a path (None: gender, deprecated)."""
    from ..data.attributes import as_attribute

    attr = as_attribute(attribute, lists)
    if attr.direction_words:
        female, male = attr.direction_words
        return gender_labels(emb, female=female, male=male, **kw)
    return attribute_labels(emb, attr, **kw)


def group_directions(emb: Embedding, attribute) -> np.ndarray:
    """``(k, d)`` unit directions: each group's centroid of defining words minus the centre of the centroids."""
    centroids = []
    for g, group in enumerate(attribute.groups):
        words = list(dict.fromkeys(s[g] for s in attribute.defining_sets))
        rows = emb.words.rows(words)
        if not (rows >= 0).any():
            raise MissingWordsError(f"labels of attribute {attribute.name!r}: no defining word of group "
                                    f"{group!r} is in {emb.name} ({', '.join(words)})", words)
        vecs = emb.take(rows[rows >= 0], dtype=np.float64)
        centroids.append((vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).mean(axis=0))
    from ..subspace import centroid_directions

    return centroid_directions(centroids, f"labels of attribute {attribute.name!r} in {emb.name}")


def attribute_labels(emb: Embedding, attribute, *, fraction: float = FRACTION, max_words: int = MAX_WORDS,
                     neutral_cos: float = NEUTRAL_COS, random_state: int = 0) -> LabelledWords:
    """The words of ``emb`` nearest each group's direction, and neutral words (see the module docstring)."""
    directions = group_directions(emb, attribute)
    rows = filtered_pool(emb, max_words)
    cos = row_cosines(emb, rows, directions)
    nearest = cos.argmax(axis=1)
    n = int(round(fraction * len(rows)))
    chosen, labels = [], []
    for g in range(len(attribute.groups)):
        own = np.flatnonzero(nearest == g)
        best = own[np.argsort(-cos[own, g], kind="stable")][:n]
        if n < 2 or len(best) < 2:
            raise EmbdebiasError(f"labels of attribute {attribute.name!r}: group {attribute.groups[g]!r} has "
                                 f"{len(best)} words of {emb.name} nearest its direction; at least 2 needed "
                                 f"(fraction {fraction})")
        chosen.append(best)
        labels.append(np.full(len(best), g))
    rng = np.random.default_rng(random_state)
    neutral = rng.permutation(np.flatnonzero(np.abs(cos).max(axis=1) < neutral_cos))[:n]
    chosen.append(neutral)
    labels.append(np.full(len(neutral), NEUTRAL))
    return _split(rows[np.concatenate(chosen)], np.concatenate(labels), random_state, tuple(attribute.groups))


@dataclass
class LabelledSample:
    """One attribute's fitting words: rows of the embedding and labels ``0 .. len(groups) - 1``."""

    name: str
    groups: tuple
    rows: np.ndarray
    labels: np.ndarray

    def counts(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=len(self.groups))


def check_defining_words(emb: Embedding, attribute, max_missing: float) -> None:
    """Projection labels of an attribute without direction words: more than ``max_missing`` of a
    group's defining words missing from ``emb`` (its direction, hence every label, would rest on
    the rest) is a :class:`~embdebias.errors.MissingWordsError` naming the group and the words."""
    for g, group in enumerate(attribute.groups):
        words = list(dict.fromkeys(s[g] for s in attribute.defining_sets))
        missing = [w for w, r in zip(words, emb.words.rows(words)) if r < 0]
        if len(missing) > max_missing * len(words):
            raise MissingWordsError(
                f"{attribute.name} labels: {len(missing)} of the {len(words)} defining words of group {group!r} "
                f"are not in {emb.name} (more than max_missing {max_missing:.0%}; the group's direction, which "
                f"labels the words, would rest on the others): {', '.join(map(repr, missing[:20]))}", missing)


def projection_sample(emb: Embedding, attribute, *, lists: str = wordlists.DEFAULT_LISTS,
                      fraction: float = FRACTION, max_words: int = MAX_WORDS, random_state: int = 0,
                      max_missing: float = 0.2, neutral: bool = False) -> LabelledSample:
    """The projection labels' fitting words of ``attribute`` (an Attribute): the train and dev parts of
    :func:`~embdebias.debias.protected_labels`, the groups' words (and, with ``neutral``, the
    neutral words as one more class). The words LEACE is fitted on by default, and those a run
    certifies every linear method on (:func:`~embdebias.debias.certificate.run_certificate`)."""
    if not attribute.direction_words:  # gender's he - she: both words are needed, whatever max_missing
        check_defining_words(emb, attribute, max_missing)
    lw = protected_labels(emb, attribute, lists, fraction=fraction, max_words=max_words,
                                  random_state=random_state)
    at = np.sort(np.concatenate([lw.train, lw.dev]))
    labels = lw.labels[at]
    groups = tuple(lw.groups)
    if neutral:
        labels = np.where(labels == NEUTRAL, len(groups), labels)
        groups += ("neutral",)
    keep = labels >= 0
    return LabelledSample(attribute.name, groups, lw.rows[at][keep], labels[keep].astype(np.int64))
