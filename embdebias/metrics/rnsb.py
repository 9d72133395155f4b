r"""Relative Negative Sentiment Bias (Sweeney & Najafian, 2019).

A logistic-regression classifier is trained to tell negative from positive sentiment
words by their vectors; it then gives every identity term ``t`` a predicted probability
of being negative, :math:`p_t`.  Normalizing those to a distribution
:math:`P(t) = p_t / \sum_u p_u` over the identity terms, RNSB is its Kullback-Leibler
divergence from the uniform distribution :math:`U`:
:math:`\mathrm{RNSB} = \mathrm{KL}(P \,\|\, U) = \sum_t P(t) \log(P(t)\,|T|)` (natural
log).  It is 0 when every identity term is equally "negative" and grows as a few terms
attract the negative sentiment.

Choices made here:

* **Lexicon**: the VADER lexicon (Hutto & Gilbert 2014, MIT licence, shipped by the
  ``vaderSentiment`` package): alphabetic entries with mean valence ``<= -threshold`` are
  negative, ``>= threshold`` positive (``threshold = 1``).  Lexicon words that are not in
  the vocabulary are left out and counted (they are not an error); identity terms are
  removed from the training words so the classifier never sees them.
* **Features**: unit-normalized vectors (the other metrics are cosine-based; pass
  ``normalize=False`` for raw vectors).
* **Classifier**: scikit-learn ``LogisticRegression`` with an L2 penalty (``C``), trained on
  a stratified, seeded split (``test_size`` held out, whose accuracy is reported), on one
  thread (many small products; see :mod:`embdebias._threads`).
* **Runs**: ``n_runs`` splits with seeds derived from ``random_state``; RNSB and
  accuracy are reported as mean and sample standard deviation (``ddof=1``) over runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .._rows import unit_rows
from .._threads import one_thread
from ..data.vader import sentiment_lexicon, vader_lexicon_path  # noqa: F401 (vader_lexicon_path: its old home)
from ..errors import EmbdebiasError, WordListError
from .base import N_SCORED, Metric, Option, positive_int, positive_number, register, string_tuple
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, spawn_seeds
from ._resample import Sample


@dataclass
class RnsbResult(MetricResult):
    """Result of :func:`rnsb`.

    Attributes
    ----------
    rnsb, rnsb_std : float
        Mean and standard deviation over runs of ``KL(P || uniform)``.
    runs : list of float
        RNSB of every run.
    accuracy, accuracy_std : float
        Held-out accuracy of the sentiment classifier (mean, std over runs).
    probabilities : dict
        ``{identity term: P(negative)}`` averaged over runs.
    run_probabilities : list of list of float
        ``P(negative)`` of every identity term (in ``probabilities``' order) in every run.
    distribution : dict
        ``{identity term: P(t)}`` (normalized), averaged over runs.
    n_positive, n_negative : int
        Lexicon words used for training and testing.
    lexicon_missing : int
        Lexicon words not in the vocabulary (left out).
    missing : dict
        ``{"identity": [out-of-vocabulary identity terms]}``.
    """

    rnsb: float
    rnsb_std: float
    runs: list[float]
    accuracy: float
    accuracy_std: float
    probabilities: dict[str, float]
    distribution: dict[str, float]
    n_positive: int
    n_negative: int
    lexicon_missing: int
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    run_probabilities: list[list[float]] = field(default_factory=list)
    n_runs: int = 1
    C: float = 1.0
    test_size: float = 0.2
    random_state: int | None = 0

    value_field = "rnsb"

    @property
    def n_scored(self) -> int:
        """Identity terms scored."""
        return len(self.probabilities)


def default_identity_terms() -> list[str]:
    """The default identity terms: the male and female terms of the gender WEAT tests.

    These are the word sets of the bundled ``gender`` tests whose name says they are
    male or female terms (e.g. "Male terms", "Female terms"); when no such set is
    bundled, the words of the definitional pairs.
    """
    from .. import wordlists

    words: list[str] = []
    try:
        tests = wordlists.weat_tests("gender")
    except WordListError:
        tests = []
    for t in tests:
        for ws in (t.X, t.Y, t.A, t.B):
            name = ws.name.lower()
            if "term" in name and ("male" in name or "female" in name):
                words.extend(ws.words)
    if not words:
        for f, m in wordlists.definitional_pairs():
            words.extend((m, f))
    return list(dict.fromkeys(words))


def kl_from_uniform(p: np.ndarray) -> float:
    """``KL(p / sum p || uniform)`` in nats (terms with zero probability contribute 0)."""
    p = np.asarray(p, dtype=np.float64)
    total = p.sum()
    if not total > 0:
        return 0.0
    q = p / total
    nz = q > 0
    return float(np.sum(q[nz] * np.log(q[nz] * q.size)))


def sentiment_rows(emb, identity_rows, positive, negative, lexicon_threshold, who: str = "RNSB"):
    """``(positive rows, negative rows, lexicon words missing)``: the training words.

    Words in both lists, and identity terms, are left out of training.
    """
    if positive is None or negative is None:
        lex_pos, lex_neg = sentiment_lexicon(float(lexicon_threshold))
        positive = lex_pos if positive is None else positive
        negative = lex_neg if negative is None else negative
    (pos_known, pos_missing), (neg_known, neg_missing) = emb.split_known(positive), emb.split_known(negative)
    pos_rows, neg_rows = emb.rows(pos_known), emb.rows(neg_known)
    drop = np.union1d(np.intersect1d(pos_rows, neg_rows), identity_rows)
    pos_rows = pos_rows[~np.isin(pos_rows, drop)].astype(np.int64)
    neg_rows = neg_rows[~np.isin(neg_rows, drop)].astype(np.int64)
    if min(pos_rows.size, neg_rows.size) < 10:
        raise EmbdebiasError(f"{who}: only {pos_rows.size} positive and {neg_rows.size} negative "
                             f"sentiment words are in the vocabulary of {emb.name}; need at least 10 each")
    return pos_rows, neg_rows, len(pos_missing) + len(neg_missing)


def rnsb(embedding, identity_terms=None, *, C: float = 1.0, n_runs: int = 10,
         test_size: float = 0.2, random_state: int | None = 0, normalize: bool = True,
         lexicon_threshold: float = 1.0, positive=None, negative=None,
         max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
         max_iter: int = 1000) -> RnsbResult:
    """Relative Negative Sentiment Bias of ``identity_terms`` (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    identity_terms : list of str, optional
        Default: :func:`default_identity_terms` (male and female terms).
    C : float, default 1.0
        Inverse L2 regularisation strength of the logistic regression.
    n_runs : int, default 10
        Number of seeded train/test splits.
    test_size : float, default 0.2
        Held-out fraction of the lexicon words.
    random_state : int or None, default 0
    normalize : bool, default True
        Unit-normalize vectors before training and predicting.
    lexicon_threshold : float, default 1.0
        Smallest absolute VADER valence of a training word.
    positive, negative : list of str, optional
        Your own sentiment words instead of VADER's.
    max_missing : float, default 0.2
        Largest fraction of the identity terms that may be out of vocabulary.
    lowercase : bool, default True
        Fall back to lowercase forms of missing words.
    max_iter : int
        Iterations of the solver.
    """
    from sklearn.linear_model import LogisticRegression

    emb = as_emb(embedding)
    if identity_terms is None:
        identity_terms = default_identity_terms()
    ident = lookup(emb, identity_terms, name="RNSB identity terms", lowercase=lowercase,
                   max_missing=max_missing, min_size=2)
    pos_rows, neg_rows, lexicon_missing = sentiment_rows(emb, ident.rows, positive, negative,
                                                          lexicon_threshold)
    rows = np.concatenate([pos_rows, neg_rows])
    feats = emb.take(rows, np.float64)
    ident_feats = emb.take(ident.rows, np.float64)
    if normalize:
        feats, ident_feats = unit_rows(feats, copy=True), unit_rows(ident_feats, copy=True)
    labels = np.concatenate([np.zeros(pos_rows.size, int), np.ones(neg_rows.size, int)])  # 1 = negative

    n_runs = int(n_runs)
    if n_runs < 1:
        raise EmbdebiasError(f"n_runs must be >= 1, got {n_runs}")
    scores, accs, probs = [], [], []
    with one_thread():
        for seed in spawn_seeds(random_state, n_runs):
            train, test = stratified_split(labels, test_size, seed)
            clf = LogisticRegression(C=C, l1_ratio=0, max_iter=max_iter) if has_l1_ratio_default() \
                else LogisticRegression(C=C, penalty="l2", max_iter=max_iter)
            clf.fit(feats[train], labels[train])
            # the classifier's held-out accuracy, as its score() computes it (a mean of 0s and 1s:
            # exact), without scikit-learn's validation of the same arrays a second time
            accs.append(float(np.mean(clf.predict(feats[test]) == labels[test])))
            p_neg = clf.predict_proba(ident_feats)[:, list(clf.classes_).index(1)]
            probs.append(p_neg)
            scores.append(kl_from_uniform(p_neg))
    probs_arr = np.vstack(probs)
    dist = probs_arr / probs_arr.sum(axis=1, keepdims=True)
    ddof = 1 if n_runs > 1 else 0
    return RnsbResult(
        rnsb=float(np.mean(scores)), rnsb_std=float(np.std(scores, ddof=ddof)), runs=scores,
        accuracy=float(np.mean(accs)), accuracy_std=float(np.std(accs, ddof=ddof)),
        probabilities=dict(zip(ident.words, probs_arr.mean(axis=0).tolist())),
        distribution=dict(zip(ident.words, dist.mean(axis=0).tolist())),
        n_positive=int(pos_rows.size), n_negative=int(neg_rows.size),
        lexicon_missing=lexicon_missing, run_probabilities=probs_arr.tolist(),
        missing={"identity": list(ident.missing)},
        lowercased={"identity": dict(ident.lowercased)} if ident.lowercased else {},
        n_runs=n_runs, C=float(C), test_size=float(test_size), random_state=random_state)


def stratified_split(labels: np.ndarray, test_size, seed) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` positions of scikit-learn's ``train_test_split(..., test_size,
    random_state=seed, stratify=labels)``: the rows it would give, in its order.

    The split depends only on the labels and the seed, and an evaluation asks for the same
    ``n_runs`` splits for every column (the same lexicon words found): they are computed once
    (:func:`_split_of`) and each column's rows taken at them, the same rows in the same order
    as splitting the features themselves."""
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        # None (a fresh random split), a RandomState, or a value scikit-learn refuses: not shared
        return _split_of.__wrapped__(labels.tobytes(), test_size, seed)
    return _split_of(labels.tobytes(), test_size, int(seed))


@lru_cache(maxsize=64, typed=True)  # typed: test_size 2 (a count) is not 2.0 (refused)
def _split_of(label_bytes: bytes, test_size, seed) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    labels = np.frombuffer(label_bytes, dtype=np.int64)
    train, test = train_test_split(np.arange(labels.size), test_size=test_size, random_state=seed, stratify=labels)
    train.flags.writeable = test.flags.writeable = False   # shared by every later call
    return train, test


@lru_cache(maxsize=1)
def has_l1_ratio_default() -> bool:
    """scikit-learn >= 1.8 deprecates ``penalty``; L2 is then ``l1_ratio=0``."""
    import sklearn

    major, minor = (int(x) for x in sklearn.__version__.split(".")[:2])
    return (major, minor) >= (1, 8)


# -- RNSB on resamples, and the metric as evaluate runs it ------------------------------------------


def rnsb_values(probabilities) :
    """``stat`` of RNSB with the identity terms and the classifier runs both resampled.

    ``probabilities`` is ``(runs, terms)``: each run's P(negative) of every term. RNSB is
    the mean over the (resampled) runs of the KL divergence of the (resampled) terms.
    """
    probs = np.asarray(probabilities, dtype=np.float64)

    def stat(idx):
        terms, runs = idx["identity"], idx["runs"]
        p = probs[runs[:, :, None], terms[:, None, :]]          # (B, runs, terms)
        return _kl(p.reshape(-1, p.shape[2])).reshape(p.shape[:2]).mean(axis=1)
    return stat


def _kl(p: np.ndarray) -> np.ndarray:
    """Row-wise ``KL(p / sum p || uniform)``."""
    q = p / p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, q * np.log(q * q.shape[1]), 0.0)
    return terms.sum(axis=1)


@register
class Rnsb(Metric):
    name, title = "rnsb", "RNSB"
    headline = (("", "rnsb", "lower"),)
    # KL divergence of refitted classifiers moves with the run: a quarter of the bias to count
    min_share = 0.25
    function = "rnsb"
    legend = ("RNSB (Sweeney & Najafian 2019): KL divergence from uniform of the identity terms' "
              "predicted probability of negative sentiment; 0 is fairer. Mean and standard "
              "deviation over classifier runs; the classifier's held-out accuracy says how far to "
              "trust it.")
    statistics = {"rnsb": "RNSB (KL)", "rnsb_std": "RNSB std", "accuracy": "classifier accuracy",
                  N_SCORED: "identity terms scored"}
    options = {
        "runs": Option(10, "classifier runs (seeded train/test splits)", positive_int),
        "C": Option(1.0, "inverse L2 regularisation strength of the classifier", positive_number),
        "identity_terms": Option(None, "identity terms (default: the gender WEAT tests' male and female terms)",
                                 lambda v: list(string_tuple(v))),
    }

    def params(self, opts):
        return {"runs": opts["runs"], "C": opts["C"],
                "identity_terms": None if opts["identity_terms"] is None else list(opts["identity_terms"])}

    def units(self, ctx):
        return ["identity terms"]

    def data(self, ctx):
        terms = ctx.opts(self.name)["identity_terms"]
        who = ("the male and female terms of the gender WEAT tests (curated)" if terms is None
               else f"{len(terms)} given identity terms")
        return f"identity terms: {who}; sentiment words: the VADER lexicon (Hutto & Gilbert 2014), |valence| >= 1"

    def score(self, emb, unit, ctx):
        opts = ctx.opts(self.name)
        r = rnsb(emb, opts["identity_terms"], C=opts["C"], n_runs=opts["runs"],
                 random_state=ctx.random_state, **ctx.common)
        sample = Sample({"identity": list(r.probabilities), "runs": list(range(len(r.run_probabilities)))},
                        rnsb_values(r.run_probabilities))
        return r, {unit: {"rnsb": r.rnsb, "rnsb_std": r.rnsb_std, "accuracy": r.accuracy,
                          N_SCORED: r.n_scored}}, {(unit, "rnsb"): sample}
