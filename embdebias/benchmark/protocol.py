"""The words an erasure benchmark fits on and probes on: the shared split and the held-out words.

Both protocols start from the labelled words every projection-label eraser of the
table fits on (:func:`embdebias.debias._labels.protected_labels`: for gender the
male-, female-biased and neutral words by ``he - she`` as Ravfogel et al. build them,
scaled to the vocabulary, split 70/30 and 70/30 into train, dev and test with the
seed). An eraser fitted with ``random_state=seed`` fits on that seed's train and dev
words (INLP and RLACE use dev to stop; LEACE and SAL fit on both).

``"split"``
    Ravfogel et al.'s evaluation: fresh probes are trained on the train words and
    scored on the test words, the groups' words only (neutral words dropped: the
    published "masculine vs feminine" accuracy). The probes' training words are
    words the eraser was fitted on, as in the published notebooks.
``"heldout"``
    Words the eraser never saw: the test part's group words are split in two halves
    (stratified, with the seed); probes are trained on one and scored on the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EmbdebiasError

PROTOCOLS = ("split", "heldout")
#: The fewest words of each group a probe may be trained or scored on.
MIN_WORDS_PER_GROUP = 10


@dataclass(frozen=True)
class ProbeWords:
    """Rows and labels of one seed: those the eraser fits on, those the probes train and test on."""

    fit_rows: np.ndarray
    fit_labels: np.ndarray
    train_rows: np.ndarray
    train_labels: np.ndarray
    test_rows: np.ndarray
    test_labels: np.ndarray

    @property
    def chance(self) -> float:
        """The majority class's share of the probes' test words (a constant predictor's accuracy)."""
        _, counts = np.unique(self.test_labels, return_counts=True)
        return float(counts.max() / counts.sum())


def _groups_of(labelled, part: str) -> tuple[np.ndarray, np.ndarray]:
    at = getattr(labelled, part)
    at = at[labelled.labels[at] >= 0]  # the groups' words; neutral (-1) left out
    return labelled.rows[at], labelled.labels[at]


def probe_words(labelled, protocol: str, seed: int, *, where: str = "benchmark") -> ProbeWords:
    """The :class:`ProbeWords` of ``labelled`` (a :class:`~embdebias.debias._labels.LabelledWords`).

    Raises
    ------
    EmbdebiasError
        An unknown protocol, or a group with fewer than :data:`MIN_WORDS_PER_GROUP`
        words where a probe trains or is scored (``where`` names the embedding).
    """
    from sklearn.model_selection import train_test_split  # not at import: the command line starts without it

    if protocol not in PROTOCOLS:
        raise EmbdebiasError(f"unknown benchmark protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    fit = [np.concatenate(p) for p in zip(_groups_of(labelled, "train"), _groups_of(labelled, "dev"))]
    test_rows, test_labels = _groups_of(labelled, "test")
    if protocol == "split":
        train_rows, train_labels = _groups_of(labelled, "train")
    else:
        _check_sizes(test_labels, labelled.groups, 2 * MIN_WORDS_PER_GROUP, "test part", where)
        a, b = train_test_split(np.arange(len(test_rows)), test_size=0.5, random_state=seed, stratify=test_labels)
        train_rows, train_labels = test_rows[np.sort(a)], test_labels[np.sort(a)]
        test_rows, test_labels = test_rows[np.sort(b)], test_labels[np.sort(b)]
    _check_sizes(train_labels, labelled.groups, MIN_WORDS_PER_GROUP, "probes' training words", where)
    _check_sizes(test_labels, labelled.groups, MIN_WORDS_PER_GROUP, "probes' test words", where)
    return ProbeWords(*fit, train_rows, train_labels, test_rows, test_labels)


def _check_sizes(labels: np.ndarray, groups, least: int, what: str, where: str) -> None:
    counts = np.bincount(labels, minlength=len(groups))
    if counts.min() < least:
        found = ", ".join(f"{g} {c}" for g, c in zip(groups, counts))
        raise EmbdebiasError(f"{where}: too few labelled words for the benchmark's split: the {what} have "
                             f"{found}; each group needs at least {least} (a larger vocabulary, or a larger "
                             f"--limit, gives more)")
