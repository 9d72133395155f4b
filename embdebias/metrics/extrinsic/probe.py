r"""A downstream probe that runs on any embedding: a bag-of-vectors sentiment classifier.

Extrinsic bias is the bias of a model *built on* the embedding. The probe is the
simplest such model that reads sentences: logistic regression on the mean of the unit
word vectors of a sentence's tokens, trained on single words of a sentiment lexicon
(the VADER lexicon, as RNSB uses; a word is a one-token sentence). It then scores any
sentence with :math:`P(\text{positive})`.

Choices made here:

* **Pooling**: the mean of the *unit* word vectors of the tokens found in the
  vocabulary (exact form first, then lower case, as everywhere in embdebias); tokens
  not found are left out and counted.  Because pooling and the classifier's logit are
  both linear, a sentence's logit is ``b + mean_t (w . u_t)``: the probe scores one
  token once, whatever the number of sentences (:meth:`SentimentProbe.logit_parts`).
* **Training words**: VADER words with ``|valence| >= lexicon_threshold``; words in
  ``exclude`` (the extrinsic evaluation excludes every token of its templates, so the
  probe never sees an identity term or an emotion filler in training) and words on both
  sides are left out.
* **Classes**: ``class_weight="balanced"`` by default, because VADER has more negative
  than positive words and a decision threshold of 0.5 should mean "as likely positive
  as negative".
* **Held-out accuracy**: one stratified, seeded split; the classifier trained on the
  training part is the one used, and its accuracy on the held-out words is reported as
  ``accuracy_`` (how far to trust the probe's scores).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from ..._rows import unit_rows
from ...errors import EmbdebiasError
from .templates import tokenize


class SentimentProbe(BaseEstimator):
    """Logistic regression on mean-pooled unit word vectors, trained on a sentiment lexicon.

    Parameters
    ----------
    C : float, default 1.0
        Inverse L2 regularisation strength.
    test_size : float, default 0.2
        Held-out fraction of the lexicon words.
    lexicon_threshold : float, default 1.0
        Smallest absolute VADER valence of a training word.
    class_weight : "balanced" or None, default "balanced"
    lowercase : bool, default True
        Fall back to the lowercase form of a token missing from the vocabulary.
    random_state : int or None, default 0
        Seed of the train/test split (the solver is deterministic).
    max_iter : int, default 1000

    Attributes
    ----------
    embedding_ : Embedding
        The embedding the probe was fitted on.
    coef_ : ndarray of shape (dim,)
        Weights on the pooled unit vector (positive class).
    intercept_ : float
    accuracy_ : float
        Held-out accuracy on lexicon words.
    n_train_, n_test_ : int
        Training and held-out words.
    n_positive_, n_negative_ : int
        Lexicon words used, by class.
    lexicon_missing_ : int
        Lexicon words not in the vocabulary.
    """

    def __init__(self, C: float = 1.0, test_size: float = 0.2, lexicon_threshold: float = 1.0,
                 class_weight="balanced", lowercase: bool = True, random_state: int | None = 0,
                 max_iter: int = 1000):
        self.C = C
        self.test_size = test_size
        self.lexicon_threshold = lexicon_threshold
        self.class_weight = class_weight
        self.lowercase = lowercase
        self.random_state = random_state
        self.max_iter = max_iter

    def fit(self, embedding, exclude=()):
        """Train on the lexicon words of ``embedding``, leaving out the words in ``exclude``."""
        from ..._threads import one_thread
        from ...embedding import as_embedding
        from ..rnsb import has_l1_ratio_default, sentiment_rows, stratified_split

        emb = as_embedding(embedding)
        drop = self._rows(emb, sorted(set(exclude)))[0]
        pos, neg, missing = sentiment_rows(emb, drop[drop >= 0], None, None, self.lexicon_threshold,
                                             who="sentiment probe")
        rows = np.concatenate([pos, neg])
        labels = np.concatenate([np.ones(pos.size, int), np.zeros(neg.size, int)])  # 1 = positive
        features = unit_rows(emb.take(rows, np.float64))
        train, test = stratified_split(labels, self.test_size, self.random_state)  # train_test_split's rows
        x_tr, x_te, y_tr, y_te = features[train], features[test], labels[train], labels[test]
        from sklearn.linear_model import LogisticRegression

        penalty = {"l1_ratio": 0} if has_l1_ratio_default() else {"penalty": "l2"}
        clf = LogisticRegression(C=self.C, class_weight=self.class_weight, max_iter=self.max_iter, **penalty)
        with one_thread():
            clf.fit(x_tr, y_tr)
        self.embedding_ = emb
        self.coef_ = clf.coef_[0].copy()
        self.intercept_ = float(clf.intercept_[0])
        self.accuracy_ = float(np.mean(clf.predict(x_te) == y_te))  # score()'s mean of hits, exact
        self.n_train_, self.n_test_ = int(y_tr.size), int(y_te.size)
        self.n_positive_, self.n_negative_ = int(pos.size), int(neg.size)
        self.lexicon_missing_ = int(missing)
        return self

    def _rows(self, emb, tokens: list[str]) -> tuple[np.ndarray, dict]:
        from ..._case import rows_with_lowercase

        return rows_with_lowercase(emb.words, tokens, self.lowercase)

    def _check_fitted(self) -> None:
        if not hasattr(self, "coef_"):
            raise NotFittedError("this SentimentProbe is not fitted yet; call fit(embedding) first")

    def token_logits(self, tokens) -> dict:
        """``{token: w . u_token}`` of the tokens found in the vocabulary (others left out)."""
        self._check_fitted()
        tokens = list(dict.fromkeys(tokens))
        rows, _ = self._rows(self.embedding_, tokens)
        found = rows >= 0
        vectors = unit_rows(self.embedding_.take(rows[found].astype(np.int64), np.float64))
        return dict(zip([t for t, f in zip(tokens, found) if f], (vectors @ self.coef_).tolist()))

    def logit_parts(self, texts) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """``(sum of token logits, tokens found, tokens missing)`` of each text.

        The pooled logit of a sentence made of several texts is ``intercept_ +
        sum(sums) / sum(counts)``: this is what lets the extrinsic evaluation score
        every (template, filler, term) sentence from three small tables.
        """
        token_lists = [tokenize(str(t)) for t in texts]
        table = self.token_logits(t for toks in token_lists for t in toks)
        sums = np.array([sum(table.get(t, 0.0) for t in toks) for toks in token_lists], dtype=np.float64)
        counts = np.array([sum(t in table for t in toks) for toks in token_lists], dtype=np.int64)
        missing = list(dict.fromkeys(t for toks in token_lists for t in toks if t not in table))
        return sums, counts, missing

    def predict_proba(self, sentences) -> np.ndarray:
        """``P(positive)`` of each sentence, shape ``(n, 2)`` as scikit-learn: [negative, positive].

        Raises
        ------
        EmbdebiasError
            A sentence none of whose tokens is in the vocabulary.
        """
        sentences = list(sentences)
        sums, counts, _ = self.logit_parts(sentences)
        if np.any(counts == 0):
            i = int(np.flatnonzero(counts == 0)[0])
            raise EmbdebiasError(f"sentence {i} has no token in the vocabulary of {self.embedding_.name}: "
                                 f"{sentences[i][:80]!r}")
        p = 1.0 / (1.0 + np.exp(-(self.intercept_ + sums / counts)))
        return np.column_stack([1.0 - p, p])

    def predict(self, sentences) -> np.ndarray:
        """1 (positive) or 0 (negative) for each sentence."""
        return (self.predict_proba(sentences)[:, 1] >= 0.5).astype(int)
