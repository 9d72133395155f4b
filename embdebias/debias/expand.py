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
* the decision threshold is chosen by cross-validation (see below) instead of the
  SVM's own ``decision > 0``;
* the candidate words (by default the training words, see ``max_rank``) are labelled
  in one chunked, vectorized pass (``decision = x . w + b`` as a matrix product);
* the result is the seed words found in the vocabulary united with the labelled
  words, in vocabulary order.

Choosing the threshold
----------------------
Seeds are rare among the frequent words (about 200 of 50,000), so the SVM's own rule
``decision > 0`` follows the class balance more than the data.  Measured on GloVe 6B
50d with the 218 seeds of Bolukbasi et al. (197 of them among the 50,000 training
words): unweighted it labels no word at all (cross-validated F1 0); with
``class_weight="balanced"`` it adds 5,410 of the training words and 9,306 words of
the whole vocabulary, led by "the", ",", ".", "of" (held-out precision 0.03).

Instead, the out-of-fold decision scores of the training words (stratified
``cv``-fold, shuffled with ``random_state``) give a precision-recall curve on
held-out seeds, and the threshold is the one with the largest recall whose held-out
precision is at least ``target_precision`` (among thresholds of that recall, the
highest, which has the fewest non-seeds above it).  The classifier is then fitted on
all training words and a candidate is labelled gender-specific when its decision is
at least that threshold.  If no threshold reaches the target, nothing is added and
an :class:`ExpansionWarning` says so (as it does whenever nothing is added).

What the precision says, and what it does not: of the held-out training words the
rule labels, at least ``target_precision`` are seeds.  The non-seeds among them are
the errors of that estimate, and within the training words they are exactly what
the expansion adds: at most about ``recall * seeds * (1 - precision) / precision``
words (fewer in practice, because the final classifier has seen the training words'
labels).  A higher target therefore adds fewer words, not better ones; whether the
additions are gender-specific words the seed list lacks or true errors is not
measured by the cross-validation.

Defaults, and what they give on GloVe 6B 50d
---------------------------------------------
* ``target_precision=0.8``: threshold -0.349, held-out precision 0.857, recall 0.030,
  F1 0.059 (6 of the 197 seeds); no word is added (over ``random_state`` 0-4:
  recall 0.02-0.06; one seed adds "groom" and "sweetheart", the others nothing).
  Lower targets add mostly kinship and marriage words: 0.7 adds "marry", "lover",
  "siblings", "groom", "sweetheart"; 0.6 adds 21 words ("young", "married", "baby",
  "cousin", ..., "groom", "princesses", "sister-in-law"), of which only a few are
  gender-specific.  In 50
  dimensions a linear classifier separates "family and persons" from the other
  words better than it separates gender; in no setting tried (``n_train`` 10,000,
  20,000, 50,000; ``C`` 0.1, 1; either ``class_weight``; targets 0.6-0.9) were most
  of the added training words gender-specific.  Adding nothing is the honest result
  on this embedding; larger embeddings (Bolukbasi et al. used word2vec, 300
  dimensions) may do better.
* ``class_weight=None``: once a threshold is tuned, weighting only changes the
  ranking, and for the worse: the average precision of the out-of-fold scores is
  0.31 unweighted against 0.19 balanced (``n_train`` 50,000, ``C`` 1); balanced, no
  threshold reaches held-out precision 0.6 (the best is 0.5), and with fewer
  training words its additions beyond them are mostly names and fragments ("lai",
  "tai", "shan", "zheev", "96.97").
* ``max_rank="n_train"``: only the training words are candidates, the population
  the held-out precision was measured on.  Beyond them there are almost no held-out
  seeds (8 of the 205 found lie past rank 50,000) to say what a threshold does.  The
  extrapolation varies with the setting: unweighted with ``n_train`` 50,000 the tail
  adds no word at targets 0.6-0.9, but with ``n_train`` 10,000 (``C`` 0.1, target
  0.6) the whole vocabulary adds 152 words for 23 among the training words, and
  balanced 128 for 14, among them "mo", "nguyen", "mai", "lai".  (Read word by
  word, the unweighted tail additions were more often gender-specific than the
  added training words, e.g. "princesses", "sister-in-law", "fiancée" past rank
  20,000, but nothing measures their precision.)  ``max_rank=None`` labels the whole
  vocabulary, as Bolukbasi et al. do.
* ``n_train=50_000`` and ``C=1`` are Bolukbasi et al.'s values; 10,000 or 20,000
  training words and ``C=0.1`` give similar held-out figures and additions of the
  same kind.

``benchmarks/bench_expand.py`` measures all of this again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator

from .._warn import warn
from .._atomic import atomic_file
from .._case import rows_with_lowercase
from .._validation import MAX_RANK, PRECISION_TARGET
from ..data.expanded import EXPANDED_HEADER, read_expanded  # noqa: F401 (read_expanded: its old home)
from ..embedding import DEFAULT_CHUNK_ROWS, as_embedding
from ..errors import EmbdebiasError, MissingWordsError, WordListError
from ._base import unit_rows


class ExpansionWarning(UserWarning):
    """The SVM expansion added no word to the seed list."""


def _fmt_score(v) -> str:
    return "n/a" if v is None else f"{v:.3f}"


#: Default held-out precision of the threshold and default candidates (see the module docstring).
DEFAULT_TARGET_PRECISION = 0.8
DEFAULT_MAX_RANK = "n_train"

@dataclass
class ExpansionResult:
    """The expanded list of gender-specific words and how it was obtained.

    Attributes
    ----------
    words : list of str
        Seed words in the vocabulary united with the words labelled gender-specific,
        in vocabulary order.
    seed_found : list of str
        Seed words that are in the vocabulary (all of them are in ``words``, also
        those held out by the cross-validation).
    seed_missing : list of str
        Seed words that are not in the vocabulary.
    seed_in_training : int
        Seed words among the ``n_train`` training words (the positive examples).
    n_train : int
        Number of training words actually used.
    n_predicted : int
        Candidate words labelled gender-specific (seeds included).
    n_added : int
        Labelled words that are not seeds (``len(added)``).
    added : list of str
        The labelled words that are not seeds, in vocabulary order.
    max_rank : int or None
        Number of candidate words: the ``max_rank`` most frequent words were labelled.
    vocab_size : int or None
        Words in the vocabulary (``max_rank == vocab_size``: all were labelled).
    target_precision : float or None
        The held-out precision the threshold was chosen for; None when the SVM's own
        rule ``decision > 0`` was used.
    threshold : float or None
        The decision threshold used (a word is labelled when ``decision >= threshold``;
        0 with the rule ``decision > 0``).  None when no threshold reaches
        ``target_precision``: then nothing is added.
    cv_precision, cv_recall, cv_f1, cv_accuracy : float or None
        Held-out precision, recall and F1 of the seed class and accuracy at
        ``threshold``, from the out-of-fold decisions of the training words; None
        without cross-validation or without a threshold.
    cv_best_precision : float or None
        The highest held-out precision of any threshold (with a recall above 0):
        what ``target_precision`` can ask at most.
    cv_folds : int
        Folds of the cross-validation (0 if skipped).
    classifier : sklearn.svm.LinearSVC
        The classifier trained on all training words.
    seconds : dict
        Wall-clock time of the cross-validation, the fit and the labelling pass.
    """

    words: list[str]
    seed_found: list[str]
    seed_missing: list[str]
    seed_in_training: int
    n_train: int
    n_predicted: int
    n_added: int
    added: list[str] = field(default_factory=list)
    max_rank: int | None = None
    vocab_size: int | None = None
    target_precision: float | None = None
    threshold: float | None = 0.0
    cv_precision: float | None = None
    cv_recall: float | None = None
    cv_f1: float | None = None
    cv_accuracy: float | None = None
    cv_best_precision: float | None = None
    cv_folds: int = 0
    classifier: object = field(default=None, repr=False)
    seconds: dict = field(default_factory=dict)

    @property
    def seed_coverage(self) -> float:
        """Fraction of the seed words found in the vocabulary."""
        total = len(self.seed_found) + len(self.seed_missing)
        return len(self.seed_found) / total if total else 0.0

    @property
    def target_reached(self) -> bool:
        """False when no threshold reaches ``target_precision`` (nothing was added)."""
        return self.threshold is not None

    def _threshold_line(self) -> str:
        cv = (f"{self.cv_folds}-fold CV on held-out training words: precision "
              f"{_fmt_score(self.cv_precision)}, recall {_fmt_score(self.cv_recall)}, "
              f"F1 {_fmt_score(self.cv_f1)}")
        if self.threshold is None:
            return (f"no threshold reaches held-out precision {self.target_precision:.2f} "
                    f"(best {_fmt_score(self.cv_best_precision)} in {self.cv_folds}-fold CV): "
                    f"nothing added")
        if self.target_precision is None:
            rule = "threshold: decision > 0 (the SVM's own rule)"
            return rule + (f"; {cv}" if self.cv_folds else "; cross-validation skipped")
        return (f"threshold: decision >= {self.threshold:.4f}, chosen for held-out precision "
                f">= {self.target_precision:.2f}; {cv}")

    def summary(self) -> str:
        """A few lines for reports and the CLI."""
        total = len(self.seed_found) + len(self.seed_missing)
        missing = ""
        if self.seed_missing:
            missing = "; missing: " + ", ".join(self.seed_missing[:20]) + (
                f" and {len(self.seed_missing) - 20} more" if len(self.seed_missing) > 20 else "")
        if self.max_rank is None:
            candidates = "the candidate words"
        elif self.max_rank == self.vocab_size:
            candidates = f"the whole vocabulary ({self.max_rank:,} words)"
        else:
            candidates = f"the {self.max_rank:,} most frequent words"
        lines = [
            f"seed words in vocabulary: {len(self.seed_found)}/{total} "
            f"({100 * self.seed_coverage:.1f}%){missing}",
            f"training: {self.n_train:,} most frequent words, {self.seed_in_training} seeds",
            self._threshold_line(),
            f"labelled {candidates}: {self.n_predicted} gender-specific, "
            f"{self.n_added} not in the seed list",
        ]
        if self.added:
            lines.append("added: " + ", ".join(self.added[:30])
                         + (f" and {len(self.added) - 30} more" if len(self.added) > 30 else ""))
        lines.append(f"expanded list: {len(self.words)} words")
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


def _seed_rows(emb, seeds: list[str]):
    """``(found, missing, rows)`` of the seeds, with the lower-case fallback."""
    # A seed missing in its exact case stands for its lower-case form ("Mary" -> "mary"
    # in GloVe 6B), which must not become a negative training example.
    rows, lowered = rows_with_lowercase(emb.words, seeds)
    seeds = [lowered.get(w, w) for w in seeds]
    found = [w for w, r in zip(seeds, rows) if r >= 0]
    missing = [w for w, r in zip(seeds, rows) if r < 0]
    return found, missing, rows[rows >= 0]


def _check_options(target_precision, max_rank, cv) -> None:
    """Bad ``target_precision``, ``max_rank`` or ``cv`` fail before any work (the CLI's rules)."""
    PRECISION_TARGET.check(target_precision, "target_precision")
    MAX_RANK.check(max_rank, "max_rank")
    if target_precision is not None and int(cv or 0) < 2:
        raise EmbdebiasError("choosing the threshold for target_precision needs cross-validation "
                             f"(cv >= 2), got cv={cv}; pass target_precision=None for the "
                             "SVM's own rule decision > 0")


def _n_candidates(max_rank, n_train: int, n: int) -> int:
    """How many of the most frequent words are labelled."""
    if max_rank is None:
        return n
    if isinstance(max_rank, str):  # "n_train"
        return n_train
    return min(int(max_rank), n)


def choose_threshold(y, scores, target_precision: float) -> dict:
    """The threshold with the largest recall whose precision is at least the target.

    Parameters
    ----------
    y : array of shape (n,)
        1 for seeds (positives), 0 for the other words.
    scores : array of shape (n,)
        Out-of-fold decision scores; a word is labelled positive when its score is at
        least the threshold.
    target_precision : float

    Returns
    -------
    dict
        ``threshold`` (None if no threshold with a recall above 0 reaches the target),
        ``precision``, ``recall``, ``f1``, ``accuracy`` at that threshold (None without
        one), and ``best_precision``, the highest precision of any threshold.  Among
        the thresholds of the largest recall the highest is taken (fewest negatives).
    """
    from sklearn.metrics import precision_recall_curve

    y = np.asarray(y)
    scores = np.asarray(scores)
    precision, recall, thresholds = precision_recall_curve(y, scores)
    # the last point (precision 1, recall 0) has no threshold
    precision, recall = precision[:-1], recall[:-1]
    useful = recall > 0
    out = {"threshold": None, "precision": None, "recall": None, "f1": None, "accuracy": None,
           "best_precision": float(precision[useful].max()) if useful.any() else None}
    ok = np.flatnonzero(useful & (precision >= target_precision))
    if ok.size == 0:
        return out
    best = ok[recall[ok] == recall[ok].max()][-1]   # thresholds increase with the index
    p, r, t = float(precision[best]), float(recall[best]), float(thresholds[best])
    out.update(threshold=t, precision=p, recall=r, f1=2 * p * r / (p + r),
               accuracy=float(np.mean((scores >= t) == (y == 1))))
    return out


def _scores_at_zero(y, scores) -> dict:
    """Held-out figures of the SVM's own rule ``decision > 0``."""
    pred = scores > 0
    tp = int(np.count_nonzero(pred & (y == 1)))
    p = tp / int(pred.sum()) if pred.any() else 0.0
    r = tp / int(y.sum())
    return {"threshold": 0.0, "precision": p, "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "accuracy": float(np.mean(pred == (y == 1)))}


def _label(emb, clf, n_candidates: int, threshold: float | None, strict: bool,
           chunk_rows: int) -> np.ndarray:
    """Boolean label of the first ``n_candidates`` words: one chunked matrix-product pass."""
    positive = np.zeros(n_candidates, dtype=bool)
    if threshold is None:
        return positive
    w = clf.coef_.ravel().astype(np.float32)
    b = np.float32(clf.intercept_[0])
    t = np.float32(threshold)
    for start in range(0, n_candidates, chunk_rows):
        stop = min(start + chunk_rows, n_candidates)
        decision = unit_rows(emb.take(slice(start, stop))) @ w + b
        positive[start:stop] = decision > t if strict else decision >= t
    return positive


def _training_set(emb, seed_rows, n_train: int, seed_missing):
    """Unit vectors ``X`` of the ``n_train`` first words, labels ``y`` (1: seed), seed count."""
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
    return X, y, n_pos


def _cross_validate(make, X, y, cv, target_precision, random_state, seconds):
    """Out-of-fold decisions and the threshold figures; ``(folds, figures)``."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    n_pos = int(y.sum())
    folds = min(int(cv or 0), n_pos, len(y) - n_pos)
    if folds < 2:
        if target_precision is not None:
            raise MissingWordsError(
                f"choosing the threshold by {cv}-fold cross-validation needs at least 2 seed "
                f"and 2 other words among the training words; found {n_pos} seeds", [])
        return 0, {"threshold": 0.0}
    t0 = time.perf_counter()
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state)
    scores = cross_val_predict(make(), X, y, cv=splitter, method="decision_function")
    if target_precision is None:
        figures = _scores_at_zero(y, scores)
    else:
        figures = choose_threshold(y, scores, float(target_precision))
    seconds["cv"] = time.perf_counter() - t0
    return folds, figures


def expand_gender_specific(embedding, seed=None, *, lists: str = "published", n_train: int = 50_000,
                           target_precision: float | None = DEFAULT_TARGET_PRECISION,
                           max_rank=DEFAULT_MAX_RANK, C: float = 1.0, class_weight=None,
                           random_state: int | None = 0, cv: int | None = 5,
                           chunk_rows: int = DEFAULT_CHUNK_ROWS,
                           max_iter: int = 10_000) -> ExpansionResult:
    """Expand a seed list of gender-specific words with a linear SVM (Bolukbasi et al.).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
        Rows in frequency order (the first ``n_train`` rows are the training words).
    seed : list of str, or a word-list name/path, optional
        Seed gender-specific words. Default: the ``gender_specific_seed`` list of ``lists``
        (for "published", Bolukbasi et al.'s 218 seed words). A seed missing in its
        exact case stands for its lower-case form.
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies the default seeds.
    n_train : int, default 50,000
        Number of most frequent words the SVM is trained on (Bolukbasi et al.'s value).
    target_precision : float in (0, 1] or None, default 0.8
        Held-out precision the decision threshold is chosen for (see the module
        docstring); needs ``cv >= 2``.  None: the SVM's own rule ``decision > 0``, as
        in Bolukbasi et al.
    max_rank : int, "n_train" or None, default "n_train"
        Only the ``max_rank`` most frequent words are candidates; "n_train" means
        ``n_train`` and None the whole vocabulary, as in Bolukbasi et al.  Seeds are
        kept whatever their rank.
    C : float, default 1.0
        ``LinearSVC`` regularisation parameter.
    class_weight : None, "balanced" or dict, default None
        Passed to ``LinearSVC``.
    random_state : int, default 0
        Seeds the classifier and the cross-validation shuffle.
    cv : int or None, default 5
        Folds of the stratified cross-validation; ``None`` or ``0`` skips it (only
        with ``target_precision=None``).
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
        If no seed word is among the training words (nothing to learn from), or too
        few for the cross-validation.
    EmbdebiasError
        On a bad ``target_precision``, ``max_rank`` or ``n_train``.

    Warns
    -----
    ExpansionWarning
        When no word is added: no threshold reaches ``target_precision``, or none
        outside the seed list passes it.
    """
    from sklearn.svm import LinearSVC

    _check_options(target_precision, max_rank, cv)
    emb = as_embedding(embedding)
    seed_found, seed_missing, seed_rows = _seed_rows(emb, _seed_words(seed, lists))
    X, y, n_pos = _training_set(emb, seed_rows, n_train, seed_missing)
    n_train = len(y)

    def make():
        return LinearSVC(C=C, class_weight=class_weight, random_state=random_state,
                         max_iter=max_iter)

    seconds = {}
    folds, figures = _cross_validate(make, X, y, cv, target_precision, random_state, seconds)

    t0 = time.perf_counter()
    clf = make().fit(X, y)
    seconds["fit"] = time.perf_counter() - t0
    del X

    t0 = time.perf_counter()
    n_candidates = _n_candidates(max_rank, n_train, len(emb))
    positive = _label(emb, clf, n_candidates, figures["threshold"],
                      target_precision is None, chunk_rows)
    is_seed = np.zeros(n_candidates, dtype=bool)
    is_seed[seed_rows[seed_rows < n_candidates]] = True
    added_rows = np.flatnonzero(positive & ~is_seed)
    keep = np.union1d(seed_rows, added_rows)
    vocab = emb.words
    words = [vocab[int(i)] for i in keep]
    added = [vocab[int(i)] for i in added_rows]
    seconds["label"] = time.perf_counter() - t0

    result = ExpansionResult(
        words=words, seed_found=seed_found, seed_missing=seed_missing, seed_in_training=n_pos,
        n_train=n_train, n_predicted=int(positive.sum()), n_added=len(added), added=added,
        max_rank=n_candidates, vocab_size=len(emb),
        target_precision=None if target_precision is None else float(target_precision),
        threshold=figures["threshold"], cv_precision=figures.get("precision"),
        cv_recall=figures.get("recall"), cv_f1=figures.get("f1"),
        cv_accuracy=figures.get("accuracy"), cv_best_precision=figures.get("best_precision"),
        cv_folds=folds, classifier=clf, seconds=seconds)
    if not added:
        warn(_nothing_added_message(emb.name, result), ExpansionWarning)
    return result


def _nothing_added_message(name: str, res: ExpansionResult) -> str:
    """The :class:`ExpansionWarning` text: unreachable target, or no non-seed above it."""
    if res.threshold is None:
        return (f"SVM expansion on {name}: no decision threshold reaches the held-out precision "
                f"target {res.target_precision:.2f} (best {_fmt_score(res.cv_best_precision)} in "
                f"{res.cv_folds}-fold CV); nothing added, the expanded list is the seed list. "
                f"A lower target_precision adds words at a lower precision.")
    return (f"SVM expansion on {name}: the classifier labels no word outside the seed list "
            f"among the {res.max_rank:,} candidates (threshold {res.threshold:.4f}, CV "
            f"precision {_fmt_score(res.cv_precision)}, recall {_fmt_score(res.cv_recall)}); "
            f"the expanded list is the seed list.")


class GenderSpecificExpander(BaseEstimator):
    """Estimator wrapper of :func:`expand_gender_specific`.

    Parameters are those of :func:`expand_gender_specific`, kept verbatim as
    attributes.  ``fit(embedding)`` sets ``result_`` (an :class:`ExpansionResult`),
    ``words_``, ``added_``, ``classifier_`` and ``threshold_``; ``predict`` labels
    words' vectors with the fitted classifier and threshold (nothing is positive
    when no threshold reached ``target_precision``).
    """

    def __init__(self, seed=None, *, lists: str = "published", n_train: int = 50_000,
                 target_precision: float | None = DEFAULT_TARGET_PRECISION,
                 max_rank=DEFAULT_MAX_RANK, C: float = 1.0, class_weight=None,
                 random_state: int | None = 0, cv: int | None = 5,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, max_iter: int = 10_000):
        self.seed = seed
        self.lists = lists
        self.n_train = n_train
        self.target_precision = target_precision
        self.max_rank = max_rank
        self.C = C
        self.class_weight = class_weight
        self.random_state = random_state
        self.cv = cv
        self.chunk_rows = chunk_rows
        self.max_iter = max_iter

    def fit(self, embedding, y=None) -> "GenderSpecificExpander":
        """Run :func:`expand_gender_specific` on ``embedding``."""
        self.result_ = expand_gender_specific(
            embedding, self.seed, lists=self.lists, n_train=self.n_train, target_precision=self.target_precision,
            max_rank=self.max_rank, C=self.C, class_weight=self.class_weight,
            random_state=self.random_state, cv=self.cv, chunk_rows=self.chunk_rows,
            max_iter=self.max_iter)
        self.words_ = self.result_.words
        self.added_ = self.result_.added
        self.classifier_ = self.result_.classifier
        self.threshold_ = self.result_.threshold
        return self

    def decision_function(self, vectors) -> np.ndarray:
        """Signed SVM score of unit-normalized ``vectors`` (before the threshold)."""
        x = unit_rows(np.array(vectors, dtype=np.float32, ndmin=2))  # a copy: the input stays
        return x @ self.classifier_.coef_.ravel().astype(np.float32) + np.float32(
            self.classifier_.intercept_[0])

    def predict(self, vectors) -> np.ndarray:
        """Boolean label of every row of ``vectors``, with the chosen threshold."""
        decision = self.decision_function(vectors)
        if self.threshold_ is None:
            return np.zeros(decision.shape, dtype=bool)
        if self.result_.target_precision is None:
            return decision > 0
        return decision >= np.float32(self.threshold_)
