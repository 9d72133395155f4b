"""Expansion of a seed list of gender-specific words with a linear SVM.

Bolukbasi et al. (2016, Section 5.1 and Appendix C) start from a few hundred seed
words whose meaning is gender-specific ("he", "queen", "sorority", ...), train a
linear SVM to separate them from the other frequent words, and call gender-specific
every word the SVM labels positive.  Here:

* the training words are the ``n_train`` most frequent words (the first rows: file
  order is frequency order for the usual files), labelled 1 if they are seeds;
* vectors are unit-normalized before training and labelling, as Bolukbasi et al. do
  (their embeddings are normalized when loaded), so the classifier sees directions;
* the classifier is scikit-learn's ``LinearSVC`` with ``C = 1`` (squared hinge loss,
  L2 penalty, intercept), seeded by ``random_state``;
* every word of the vocabulary is then labelled in one chunked, vectorized pass
  (``decision = x . w + b`` as a matrix product; positive means gender-specific);
* the result is the seed words found in the vocabulary united with the predicted
  words, in vocabulary order.

The cross-validated accuracy and F1 (stratified ``cv``-fold, shuffled with
``random_state``) are measured on the training words with the same classifier.
Accuracy alone is uninformative because seeds are rare (a few hundred in 50,000);
F1 of the positive class is the figure to watch (Bolukbasi et al. report 0.627).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from .._atomic import atomic_file
from ..embedding import DEFAULT_CHUNK_ROWS, as_embedding
from ..errors import EmbdebiasError, MissingWordsError, WordListError
from ._base import unit_rows


class ExpansionWarning(UserWarning):
    """The SVM expansion added no word to the seed list."""


def _fmt_score(v) -> str:
    return "n/a" if v is None else f"{v:.3f}"


EXPANDED_HEADER = "# gender-specific words: seed list expanded by a linear SVM (embdebias)"


def read_expanded(path) -> list[str]:
    """The words of a file written by :meth:`ExpansionResult.save`, verbatim.

    Unlike :func:`embdebias.wordlists.load_words` no line but the header is taken
    for a comment, so vocabulary words that start with ``#`` survive the round trip.
    """
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[0] == EXPANDED_HEADER:
        lines = lines[1:]
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return lines


@dataclass
class ExpansionResult:
    """The expanded list of gender-specific words and how it was obtained.

    Attributes
    ----------
    words : list of str
        Seed words in the vocabulary united with the words the SVM labels
        gender-specific, in vocabulary order.
    seed_found : list of str
        Seed words that are in the vocabulary (all of them are in ``words``).
    seed_missing : list of str
        Seed words that are not in the vocabulary.
    seed_in_training : int
        Seed words among the ``n_train`` training words (the positive examples).
    n_train : int
        Number of training words actually used.
    n_predicted : int
        Words the SVM labels gender-specific in the whole vocabulary.
    n_added : int
        Predicted words that are not seeds.
    cv_accuracy, cv_f1 : float or None
        Mean cross-validated accuracy and F1 on the training words (None if
        ``cv`` was disabled).
    cv_folds : int
    classifier : sklearn.svm.LinearSVC
        The classifier trained on all training words.
    seconds : dict
        Wall-clock time of the fit, the cross-validation and the labelling pass.
    """

    words: list[str]
    seed_found: list[str]
    seed_missing: list[str]
    seed_in_training: int
    n_train: int
    n_predicted: int
    n_added: int
    cv_accuracy: float | None
    cv_f1: float | None
    cv_folds: int
    classifier: object = field(repr=False)
    seconds: dict = field(default_factory=dict)

    @property
    def seed_coverage(self) -> float:
        """Fraction of the seed words found in the vocabulary."""
        total = len(self.seed_found) + len(self.seed_missing)
        return len(self.seed_found) / total if total else 0.0

    def summary(self) -> str:
        """A few lines for reports and the CLI."""
        total = len(self.seed_found) + len(self.seed_missing)
        cv = (f"{self.cv_folds}-fold CV accuracy {self.cv_accuracy:.4f}, F1 {self.cv_f1:.4f}"
              if self.cv_accuracy is not None else "cross-validation skipped")
        lines = [
            f"seed words in vocabulary: {len(self.seed_found)}/{total} ({100 * self.seed_coverage:.1f}%)"
            + (f"; missing: {', '.join(self.seed_missing[:20])}"
               + (f" and {len(self.seed_missing) - 20} more" if len(self.seed_missing) > 20 else "")
               if self.seed_missing else ""),
            f"training: {self.n_train} most frequent words, {self.seed_in_training} seeds; {cv}",
            f"predicted gender-specific: {self.n_predicted} words ({self.n_added} not in the seed list)",
            f"expanded list: {len(self.words)} words",
        ]
        return "\n".join(lines)

    def save(self, path, *, inputs=()) -> None:
        """Write the expanded list, one word per line (UTF-8, atomically).

        The first line is a ``#`` header; every other line is a word, verbatim (read
        it back with :func:`read_expanded`). ``inputs`` are files that must not be
        overwritten.
        """
        with atomic_file(path, inputs=inputs) as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(EXPANDED_HEADER + "\n")
                for w in self.words:
                    fh.write(w)
                    fh.write("\n")


def _seed_words(seed, lists) -> list[str]:
    from .. import wordlists

    words = wordlists.resolve_words(seed, "gender_specific_seed", lists)
    if not words:
        raise WordListError("the seed list of gender-specific words is empty")
    return words


def expand_gender_specific(embedding, seed=None, *, lists: str = "published", n_train: int = 50_000, C: float = 1.0,
                           random_state: int | None = 0, cv: int | None = 5,
                           class_weight=None, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                           max_iter: int = 10_000) -> ExpansionResult:
    """Expand a seed list of gender-specific words with a linear SVM (Bolukbasi et al.).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
        Rows in frequency order (the first ``n_train`` rows are the training words).
    seed : list of str, or a word-list name/path, optional
        Seed gender-specific words. Default: the ``gender_specific_seed`` list of ``lists``
        (for "published", Bolukbasi et al.'s 218 seed words).
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies the default seeds.
    n_train : int, default 50,000
        Number of most frequent words the SVM is trained on.
    C : float, default 1.0
        ``LinearSVC`` regularisation parameter.
    random_state : int, default 0
        Seeds the classifier and the cross-validation shuffle.
    cv : int or None, default 5
        Folds of the stratified cross-validation; ``None`` or ``0`` skips it.
    class_weight : None, "balanced" or dict
        Passed to ``LinearSVC``.  None (the default, as in Bolukbasi et al.) weighs
        every word alike; since seeds are ~0.5% of the training words, in low
        dimensions (e.g. GloVe 50d) the unweighted SVM may label no word positive
        (F1 0), while ``"balanced"`` trades precision for recall.
    chunk_rows : int
        Rows per chunk of the labelling pass.
    max_iter : int
        ``LinearSVC`` iteration limit.

    Returns
    -------
    ExpansionResult

    Raises
    ------
    MissingWordsError
        If no seed word is among the training words (nothing to learn from).
    """
    from sklearn.metrics import f1_score, make_scorer
    from sklearn.model_selection import StratifiedKFold, cross_validate
    from sklearn.svm import LinearSVC

    emb = as_embedding(embedding)
    seeds = _seed_words(seed, lists)
    seed_rows_all = emb.words.rows(seeds)
    # As for the bias subspace: a seed missing in its exact case stands for its
    # lower-case form ("Mary" -> "mary" in GloVe 6B), which must not become a
    # negative training example.
    lower_rows = emb.words.rows([w.lower() for w in seeds])
    use_lower = (seed_rows_all < 0) & (lower_rows >= 0)
    seeds = [w.lower() if lo else w for w, lo in zip(seeds, use_lower)]
    seed_rows_all = np.where(use_lower, lower_rows, seed_rows_all)
    seed_found = [w for w, r in zip(seeds, seed_rows_all) if r >= 0]
    seed_missing = [w for w, r in zip(seeds, seed_rows_all) if r < 0]
    seed_rows = seed_rows_all[seed_rows_all >= 0]

    n_train = min(int(n_train), len(emb))
    if n_train < 2:
        raise EmbdebiasError(f"n_train must be at least 2, got {n_train}")
    X = unit_rows(emb.take(slice(0, n_train)))
    y = np.zeros(n_train, dtype=np.int8)
    y[seed_rows[seed_rows < n_train]] = 1
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == n_train:
        raise MissingWordsError(
            f"the SVM needs both seed and non-seed words among the {n_train} training words of "
            f"{emb.name}; found {n_pos} seed words ({len(seed_missing)} seed words are not in "
            f"the vocabulary at all)", seed_missing)

    def make():
        return LinearSVC(C=C, class_weight=class_weight, random_state=random_state,
                         max_iter=max_iter)

    seconds = {}
    cv_acc = cv_f1 = None
    folds = int(cv or 0)
    if folds >= 2:
        folds = min(folds, n_pos, n_train - n_pos)
    if folds >= 2:
        t0 = time.perf_counter()
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state)
        scores = cross_validate(make(), X, y, cv=splitter, scoring={"accuracy": "accuracy",
                                         "f1": make_scorer(f1_score, zero_division=0.0)})
        cv_acc = float(np.mean(scores["test_accuracy"]))
        cv_f1 = float(np.mean(scores["test_f1"]))
        seconds["cv"] = time.perf_counter() - t0
    else:
        folds = 0

    t0 = time.perf_counter()
    clf = make().fit(X, y)
    seconds["fit"] = time.perf_counter() - t0
    del X

    t0 = time.perf_counter()
    w = clf.coef_.ravel().astype(np.float32)
    b = np.float32(clf.intercept_[0])
    positive = np.zeros(len(emb), dtype=bool)
    for start, stop, block in emb.iter_chunks(chunk_rows):
        positive[start:stop] = unit_rows(np.array(block)) @ w + b > 0
    n_predicted = int(positive.sum())
    is_seed = np.zeros(len(emb), dtype=bool)
    is_seed[seed_rows] = True
    n_added = int(np.count_nonzero(positive & ~is_seed))
    keep = np.flatnonzero(positive | is_seed)
    vocab = emb.words
    words = [vocab[int(i)] for i in keep]
    seconds["label"] = time.perf_counter() - t0
    if n_added == 0:
        warnings.warn(f"SVM expansion on {emb.name}: the classifier labels no word outside the seed "
                      f"list (CV F1 {_fmt_score(cv_f1)}); the expanded list is the seed list. "
                      f"class_weight='balanced' trades precision for recall.", ExpansionWarning,
                      stacklevel=2)

    return ExpansionResult(words=words, seed_found=seed_found, seed_missing=seed_missing,
                           seed_in_training=n_pos, n_train=n_train, n_predicted=n_predicted,
                           n_added=n_added, cv_accuracy=cv_acc, cv_f1=cv_f1, cv_folds=folds,
                           classifier=clf, seconds=seconds)


class GenderSpecificExpander(BaseEstimator):
    """Estimator wrapper of :func:`expand_gender_specific`.

    Parameters are those of :func:`expand_gender_specific`.  ``fit(embedding)`` sets
    ``result_`` (an :class:`ExpansionResult`), ``words_``, ``classifier_``; ``predict``
    labels words or vectors with the fitted classifier.
    """

    def __init__(self, seed=None, *, lists: str = "published", n_train: int = 50_000, C: float = 1.0,
                 random_state: int | None = 0, cv: int | None = 5, class_weight=None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.seed = seed
        self.lists = lists
        self.class_weight = class_weight
        self.n_train = n_train
        self.C = C
        self.random_state = random_state
        self.cv = cv
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "GenderSpecificExpander":
        self.result_ = expand_gender_specific(
            embedding, self.seed, lists=self.lists, n_train=self.n_train, C=self.C,
            random_state=self.random_state, cv=self.cv, class_weight=self.class_weight,
            chunk_rows=self.chunk_rows)
        self.words_ = self.result_.words
        self.classifier_ = self.result_.classifier
        return self

    def decision_function(self, vectors) -> np.ndarray:
        """Signed SVM score of unit-normalized ``vectors`` (positive: gender-specific)."""
        x = unit_rows(np.array(vectors, dtype=np.float32, ndmin=2))  # a copy: the input stays
        return x @ self.classifier_.coef_.ravel().astype(np.float32) + np.float32(
            self.classifier_.intercept_[0])

    def predict(self, vectors) -> np.ndarray:
        """Boolean label of every row of ``vectors``."""
        return self.decision_function(vectors) > 0
