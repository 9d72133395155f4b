"""Closed-form linear concept erasure with a certificate: LEACE, its orth form and SAL.

LEACE (Belrose, Schneider-Joseph, Ravfogel, Cotterell, Raff & Biderman, NeurIPS 2023,
theorem 4.3 and its affine form): with ``mu`` the mean of the fitting vectors, ``S``
their covariance, ``C = Cov(x, z)`` the cross-covariance with the one-hot labels,
``W = (S^{1/2})^+`` the whitening matrix and ``P`` the orthogonal projection onto the
column space of ``W C``, the eraser is

    r(x) = x - W^+ P W (x - mu).

After it the class means of the fitting vectors are equal, ``Cov(r(x), z) = 0``, so no
linear classifier of the labels does better than a constant on those words (for the
usual convex losses); among the affine maps with that property it moves the vectors
least, in expected squared distance under every p.s.d. inner product at once (the
theorem; the whitened, covariance norm is where the solution is an orthogonal
projection). ``eraser="orth"`` takes ``W = I``: the orthogonal projection off the span
of the cross-covariance, which is the mean projection of Haghighatkhah, Fokkens,
Dijkstra, de Ruiter & Bosch (2022, the span of the class-mean differences), also
guarded, not least-change. SAL (Shao, Ravfogel et al., EACL 2023) removes the top
``n_directions`` left singular vectors of ``C`` by orthogonal projection, as published without
an offset (:class:`SAL`).

Deliberate choices, each tested in ``tests/test_debiasers_leace.py`` (the command line's bad input in
``tests/test_cli_debias_erasure.py``, the threads and the run's certificates in ``tests/test_report_certificate.py``):

* **Labels.** By default (``labels="projection"``) the words INLP and RLACE are fitted
  on: for gender the male- and female-biased words by ``he - she``, for another
  attribute the words nearest each group's direction (:mod:`embdebias.debias._labels`),
  from the published split's train and dev parts. The test part (30 %) is never seen,
  so a held-out protocol can use it, and the three methods are compared on the same
  words. The neutral words are left out (the concept is the group; a neutral class
  would also erase "gendered or not"); ``neutral=True`` adds them as one more class,
  as INLP's and SAL's published three-class setups do. ``labels="group_words"``
  takes the attribute's own words (each group's words of the defining sets and its
  group words): a handful per group, too few for a covariance in 50 or 300
  dimensions without shrinkage, hence not the default.
* **Affine.** LEACE and orth keep the offset ``W^+ P W mu`` as defined. The
  certificate does not depend on it (a covariance ignores constants), but the
  least-squares property does, and so does any unit scaling afterwards.
* **Normalization.** ``normalize=False`` by default: the output rows are ``r(x)`` as
  they are, not unit length, unlike the other debiasers of the table. Scaling each
  row to unit length is a nonlinear edit that lets linear information back;
  ``certificate_`` gives the figure after normalization too, and
  ``benchmarks/results/erasure.md`` what it costs in held-out leakage.
* **Covariance.** The statistics are float64, population (divided by ``n``) and
  accumulated chunk by chunk (:class:`~embdebias.debias.certificate.Moments`), on the
  fitting words. Without shrinkage (the theorem's estimator, the default) every group
  needs at least ``d`` words, or the fit is refused; ``shrinkage="oas"`` shrinks the
  covariance toward ``tr(S)/d I`` by the Oracle Approximating Shrinkage factor of
  Chen, Wiesel, Eldar & Hero (2010, eq. 23), a float in [0, 1] by that factor. The
  whitening matrix stays invertible, so the certificate stays exact; the edit becomes
  least-squares for the shrunk covariance, closer to orth's.
* **Several attributes** (``attribute=["gender", "race"]`` or ``"gender+race"``): each
  attribute is labelled on its own words and contributes its cross-covariance
  columns, centred on its own words; the covariance and the mean are those of all the
  attributes' fitting words pooled (a word labelled by two attributes counts twice),
  and the joint span of the columns is erased in the pooled whitened space. The map
  is then the least-squares affine edit of the pooled words whose cross-covariance
  with every attribute's labels, on its own words, is zero: the certificate holds for
  each attribute at once.
* **Threads.** The statistics, the map and the certificate are products of a few thousand
  rows by ``d x d``; they run on one BLAS thread (:func:`embdebias._threads.one_thread`):
  on two threads of a loaded machine the same Gram matrix took 1.4 s instead of 3 ms.
* **Certificate.** After fitting, :func:`~embdebias.debias.certificate.erasure_certificate`
  on every attribute's fitting words; a full-rank eraser (``n_directions=None``) whose
  certificate exceeds ``certificate_tol`` times the cross-covariance before erasure
  is refused (:class:`~embdebias.errors.ErasureError`): numerical rank trouble.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._case import rows_with_lowercase
from .._threads import one_thread
from ..data import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import ErasureError, MissingWordsError
from . import _labels
from ._labels import LabelledSample as _Sample
from ._labels import check_defining_words, projection_sample  # noqa: F401 (their home before; callers import them here)
from ._linear import LinearDebiaser
from ._params import INT, NUMBER, WORD_LISTS, WORDS, Array, Value, _is_int, _is_number
from .certificate import CERTIFICATE_TOL, Moments, erasure_certificate, one_hot

METHODS = ("leace", "orth", "sal")
LABELS = ("projection", "group_words")
_EPS = np.finfo(np.float64).eps


def oas_shrinkage(covariance: np.ndarray, n: int) -> float:
    """The Oracle Approximating Shrinkage factor of a sample covariance of ``n`` rows.

    Chen, Wiesel, Eldar & Hero (2010, eq. 23): ``min(1, ((1 - 2/p) tr(S^2) + tr(S)^2) /
    ((n + 1 - 2/p) (tr(S^2) - tr(S)^2 / p)))``; 1 when ``S`` is already a multiple of the
    identity.
    """
    p = covariance.shape[0]
    tr, tr2 = float(np.trace(covariance)), float(np.sum(covariance * covariance))
    den = (n + 1 - 2 / p) * (tr2 - tr * tr / p)
    if den <= 0:
        return 1.0
    return float(min(1.0, ((1 - 2 / p) * tr2 + tr * tr) / den))


def shrink(covariance: np.ndarray, rho: float) -> np.ndarray:
    """``(1 - rho) S + rho tr(S)/d I``."""
    d = covariance.shape[0]
    return (1 - rho) * covariance + rho * np.trace(covariance) / d * np.eye(d)


@dataclass(frozen=True)
class ErasureMap:
    """A fitted eraser ``x' = x @ linear + offset`` (rows), with what it removed.

    Attributes
    ----------
    linear : ndarray (d, d)
    offset : ndarray (d,)
    rank : int
        Directions removed.
    full_rank : int
        Rank of the (whitened) cross-covariance: the directions a guarded eraser removes.
    singular_values : ndarray
        The (whitened) cross-covariance's singular values, largest first.
    dropped : int
        Eigenvalues of the covariance treated as zero (pseudo-inverse), for LEACE.
    """

    linear: np.ndarray
    offset: np.ndarray
    rank: int
    full_rank: int
    singular_values: np.ndarray
    dropped: int = 0


def _whitening(covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``(W, W^+, dropped)``: ``W = (S^{1/2})^+`` and its pseudo-inverse, from the eigenvalues
    above ``d eps`` times the largest (``numpy.linalg.pinv``'s rule)."""
    lam, vecs = np.linalg.eigh(covariance)
    keep = lam > lam.max(initial=0.0) * len(lam) * _EPS
    v, root = vecs[:, keep], np.sqrt(lam[keep])
    return (v / root) @ v.T, (v * root) @ v.T, int((~keep).sum())


def erasure_map(mean: np.ndarray, covariance: np.ndarray | None, cross: np.ndarray, *, method: str = "leace",
                rank: int | None = None) -> ErasureMap:
    """The eraser of ``method`` from the fitting statistics (see the module docstring).

    Parameters
    ----------
    mean : ndarray (d,)
        Mean of the fitting vectors.
    covariance : ndarray (d, d) or None
        Their covariance (LEACE only; possibly shrunk).
    cross : ndarray (d, c)
        Cross-covariance with the labels (any columns spanning the same space: one-hot
        columns, or all but one of them).
    method : {"leace", "orth", "sal"}
    rank : int, optional
        Keep only the top ``rank`` directions (SAL's choice); None: all, the guarded eraser.

    Returns
    -------
    ErasureMap
    """
    d = len(mean)
    whiten = unwhiten = None
    dropped = 0
    target = cross
    if method == "leace":
        whiten, unwhiten, dropped = _whitening(covariance)
        target = whiten @ cross
    u, s, _ = np.linalg.svd(target, full_matrices=False)
    full = int((s > s.max(initial=0.0) * max(target.shape) * _EPS).sum())
    r = full if rank is None else min(int(rank), full)
    u = u[:, :r]
    # column convention: r(x) = x - left @ right @ (x - mu)
    left, right = (unwhiten @ u, u.T @ whiten) if method == "leace" else (u, u.T)
    edit = left @ right
    offset = mean @ edit.T if method != "sal" else np.zeros(d)
    return ErasureMap(np.eye(d) - edit.T, offset, r, full, s, dropped)


_CERTIFICATE_KEYS = frozenset({"edited", "normalized", "before", "n_words", "n_groups"})


def _is_number_or_none(v) -> bool:
    return v is None or _is_number(v)


def _is_one_certificate(v) -> bool:
    return (isinstance(v, dict) and set(v) == _CERTIFICATE_KEYS and _is_number_or_none(v["edited"])
            and _is_number(v["normalized"]) and _is_number(v["before"])
            and _is_int(v["n_words"]) and _is_int(v["n_groups"]))


def _is_certificate(v) -> bool:
    """``LEACE.certificate_`` as JSON gives it back: the three largest values and each attribute's."""
    return (isinstance(v, dict) and set(v) == {"edited", "normalized", "before", "attributes"}
            and _is_number_or_none(v["edited"]) and _is_number(v["normalized"]) and _is_number(v["before"])
            and isinstance(v["attributes"], dict) and all(_is_one_certificate(c) for c in v["attributes"].values()))


#: ``certificate_`` in a parameter file.
CERTIFICATE = Value("a certificate: edited, normalized, before and each attribute's Certificate as an object",
                    _is_certificate)


def erased_attributes(attribute, lists: str = wordlists.DEFAULT_LISTS) -> list:
    """The attributes ``attribute`` names: None (gender), one, a list, or ``"gender+race"``."""
    from ..data.attributes import resolve_attributes

    if isinstance(attribute, str) and "+" in attribute:
        attribute = [a.strip() for a in attribute.split("+") if a.strip()]
    return resolve_attributes(attribute, lists)


def group_word_rows(emb: Embedding, attribute, max_missing: float) -> list[np.ndarray]:
    """Each group's rows in ``emb``: the group's words of the defining sets and its group words
    (lower-case fallback, each row once). More than ``max_missing`` of a group's words
    missing is a :class:`~embdebias.errors.MissingWordsError` naming the group and the words."""
    out = []
    for g, group in enumerate(attribute.groups):
        words = list(dict.fromkeys([s[g] for s in attribute.defining_sets]
                                   + list(attribute.group_words.get(group, ()))))
        found, _ = rows_with_lowercase(emb.words, words)
        missing = [w for w, r in zip(words, found) if r < 0]
        if not words or len(missing) / len(words) > max_missing:
            raise MissingWordsError(
                f"{attribute.name} words of group {group!r}: {len(missing)} of {len(words)} are not in {emb.name} "
                f"(more than max_missing {max_missing:.0%}): {', '.join(map(repr, missing[:20]))}", missing)
        out.append(np.unique(found[found >= 0]))
    return out



class LEACE(LinearDebiaser):
    """LEAst-squares Concept Erasure (Belrose et al. 2023), its orth form, with a certificate.

    See the module docstring for the method and every deliberate choice. The output is
    ``x @ map_ + offset_``, not scaled to unit length unless ``normalize=True``.

    Parameters
    ----------
    eraser : {"leace", "orth"}, default "leace"
        Whitened (least-squares) eraser, or the orthogonal projection off the
        cross-covariance (mean projection). (Not ``method``: that is the command
        line's choice of debiaser.)
    n_directions : int, optional
        Remove only the top ``n_directions`` directions (not guarded: the certificate
        is reported, not enforced); None (default): all of them.
    shrinkage : None, "oas" or float in [0, 1], default None
        Shrinkage of the covariance (LEACE only).
    labels : {"projection", "group_words"}, default "projection"
        Where the labelled words come from.
    neutral : bool, default False
        With projection labels, add the neutral words as one more class.
    normalize : bool, default False
        Scale output rows to unit length (gives up the exact guarantee).
    certificate_tol : float, default 1e-8
        Largest certificate accepted, relative to the cross-covariance before erasure.
    fraction, max_words
        Projection labels: share of the filtered vocabulary per class, and how many
        of the first words are labelled (:mod:`embdebias.debias._labels`).
    max_missing : float, default 0.2
        Largest share of a group's words that may be missing: its group words (group-word
        labels), or its defining words, which give its direction (projection labels of an
        attribute other than gender, whose direction words he and she are both needed).
    subspace, lists
        Accepted for ``embdebias run``; ``lists`` resolves the attributes' lists.
    attribute : Attribute, str, list, optional
        The protected attribute(s); None: gender. Several (a list or ``"gender+race"``)
        are erased by one map.
    random_state : int, default 0
        Seed of the projection labels' split and neutral sample.
    chunk_rows : int

    Attributes
    ----------
    map_ : ndarray (d, d)
    offset_ : ndarray (d,)
    rank_removed_ : int
    singular_values_ : ndarray
        Singular values of the (whitened) cross-covariance, largest first.
    shrinkage_ : float
        The shrinkage factor used (0: none).
    certificate_ : dict
        ``edited`` and ``normalized`` (the largest absolute cross-covariance between the
        fitting words' edited vectors, before and after unit scaling, and their one-hot
        labels; the largest over the attributes), ``before`` (the same before erasure)
        and ``attributes`` (each attribute's :class:`~embdebias.debias.certificate.Certificate`
        as a dict).
    attributes_ : list of str
    groups_ : list of list of str
        Each attribute's classes, in label order.
    n_fitting_words_ : int
    n_features_in_ : int
    """

    _suffix = "leace"
    #: One map erases several attributes (``attribute=["gender", "race"]``).
    several_attributes = True
    #: The transform needs the map and the offset; the rest is what ``run_info`` reports,
    #: so a loaded eraser reports the fit it was saved from (its certificate included).
    _params_schema = {**LinearDebiaser._params_schema, "offset_": Array(("d",)), "rank_removed_": INT,
                      "singular_values_": Array((None,)), "shrinkage_": NUMBER, "certificate_": CERTIFICATE,
                      "attributes_": WORDS, "groups_": WORD_LISTS, "n_fitting_words_": INT}
    _parameter_constraints = {
        "eraser": [StrOptions({"leace", "orth"})],
        "n_directions": [Interval(Integral, 1, None, closed="left"), None],
        "shrinkage": [StrOptions({"oas"}), Interval(Real, 0, 1, closed="both"), None],
        "labels": [StrOptions(set(LABELS))],
        "neutral": ["boolean"],
        "normalize": ["boolean"],
        "certificate_tol": [Interval(Real, 0, None, closed="left")],
        "fraction": [Interval(Real, 0, 0.5, closed="right")],
        "max_words": [Interval(Integral, 2, None, closed="left")],
        "max_missing": [Interval(Real, 0, 1, closed="both")],
        "subspace": "no_validation",
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "attribute": "no_validation",
        "random_state": ["random_state"],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, eraser: str = "leace", *, n_directions: int | None = None, shrinkage=None,
                 labels: str = "projection", neutral: bool = False, normalize: bool = False,
                 certificate_tol: float = CERTIFICATE_TOL, fraction: float = _labels.FRACTION,
                 max_words: int = _labels.MAX_WORDS, max_missing: float = 0.2, subspace=None,
                 lists: str = wordlists.DEFAULT_LISTS, attribute=None, random_state: int = 0,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.eraser = eraser
        self.n_directions = n_directions
        self.shrinkage = shrinkage
        self.labels = labels
        self.neutral = neutral
        self.normalize = normalize
        self.certificate_tol = certificate_tol
        self.fraction = fraction
        self.max_words = max_words
        self.max_missing = max_missing
        self.subspace = subspace
        self.lists = lists
        self.attribute = attribute
        self.random_state = random_state
        self.chunk_rows = chunk_rows

    def _erasure_method(self) -> str:
        return self.eraser

    # -- fitting -----------------------------------------------------------------

    def fit(self, embedding, y=None) -> "LEACE":
        """Label the words of ``embedding`` (see ``labels``) and fit the eraser on them."""
        self._validate()
        if self.neutral and self.labels != "projection":
            raise ErasureError("neutral=True adds the projection labels' neutral words; with labels="
                               f"{self.labels!r} there are none")
        emb = as_embedding(embedding)
        samples = [self._sample(emb, attr) for attr in erased_attributes(self.attribute, self.lists)]
        return self._fit_samples(emb, samples)

    def fit_vectors(self, X, y, *, groups=None) -> "LEACE":
        """Fit on given vectors ``X`` (``(n, d)``, used as float32 like every embedding) with
        labels ``y`` (one class per distinct value, in sorted order): the benchmark's own splits.

        ``groups`` names the classes (default: the labels as strings).
        """
        self._validate()
        X = np.asarray(X)
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
        if X.ndim != 2 or len(X) != len(codes):
            raise ErasureError(f"fit_vectors needs an (n, d) array and n labels; got {X.shape} and {len(codes)}")
        emb = Embedding([f"#{i}" for i in range(len(X))], X.astype(np.float32), name="given vectors")
        names = tuple(groups) if groups is not None else tuple(map(str, classes))
        return self._fit_samples(emb, [_Sample("labels", names, np.arange(len(X)), codes)])

    def _sample(self, emb: Embedding, attr) -> _Sample:
        if self.labels == "group_words":
            return self._group_word_sample(emb, attr)
        return projection_sample(emb, attr, lists=self.lists, fraction=self.fraction, max_words=self.max_words,
                                 random_state=self.random_state, max_missing=float(self.max_missing),
                                 neutral=self.neutral)

    def _group_word_sample(self, emb: Embedding, attr) -> _Sample:
        rows = group_word_rows(emb, attr, float(self.max_missing))
        labels = np.concatenate([np.full(len(r), g) for g, r in enumerate(rows)]).astype(np.int64)
        return _Sample(attr.name, tuple(attr.groups), np.concatenate(rows), labels)

    def _check_sample(self, sample: _Sample, emb: Embedding) -> None:
        counts = sample.counts()
        found = ", ".join(f"{g} {c}" for g, c in zip(sample.groups, counts))
        if (counts > 0).sum() < 2:
            raise ErasureError(f"{sample.name} labels in {emb.name}: {(counts > 0).sum()} labelled group(s) "
                               f"({found} words); erasure needs words of at least two groups")
        if self._erasure_method() == "leace" and self.shrinkage is None and counts.min() < emb.dim:
            small = sample.groups[int(counts.argmin())]
            raise ErasureError(
                f"{sample.name} labels in {emb.name}: group {small!r} has {counts.min()} fitting words ({found}), "
                f"fewer than the {emb.dim} (the dimension) a stable covariance needs without shrinkage; "
                f"shrinkage='oas' shrinks the covariance toward a multiple of the identity (more, the fewer the "
                f"words), which keeps the certificate exact and moves the edit toward orth's, or use eraser='orth'")

    def _statistics(self, emb: Embedding, samples: list) -> tuple[Moments, list]:
        """One read of the fitting rows: the pooled mean and covariance, and each attribute's cross-covariance
        with all but one of its one-hot columns (the last is minus their sum: the same span, exactly)."""
        step = int(self.chunk_rows)
        need_cov = self._erasure_method() == "leace"
        pooled = Moments(emb.dim, 0, scatter=need_cov)
        per = []
        for s in samples:
            acc = Moments(emb.dim, len(s.groups) - 1, scatter=False)
            for start in range(0, len(s.rows), step):
                x = emb.take(s.rows[start:start + step], dtype=np.float64)
                z = one_hot(s.labels[start:start + step], np.arange(len(s.groups)))[:, :-1]
                acc.add(x, z)
                pooled.add(x, z[:, :0])
            per.append(acc)
        return pooled, per

    def _fit_samples(self, emb: Embedding, samples: list) -> "LEACE":
        for s in samples:
            self._check_sample(s, emb)
        with one_thread():  # d x d products of a few thousand rows: two threads under load ran 500x slower
            self._fit_map(emb, samples)
        return self

    def _fit_map(self, emb: Embedding, samples: list) -> None:
        pooled, per = self._statistics(emb, samples)
        method = self._erasure_method()
        covariance, rho = None, 0.0
        if method == "leace":
            covariance = pooled.covariance
            if self.shrinkage is not None:
                rho = oas_shrinkage(covariance, pooled.n) if self.shrinkage == "oas" else float(self.shrinkage)
                covariance = shrink(covariance, rho)
        cross = np.hstack([m.cross_covariance for m in per])
        fitted = erasure_map(pooled.mean_x, covariance, cross, method=method, rank=self.n_directions)
        self.map_, self.offset_ = fitted.linear, fitted.offset
        self.rank_removed_ = fitted.rank
        self.singular_values_ = fitted.singular_values
        self.shrinkage_ = rho
        self.attributes_ = [s.name for s in samples]
        self.groups_ = [list(s.groups) for s in samples]
        self.n_fitting_words_ = int(sum(len(s.rows) for s in samples))
        self.n_features_in_ = emb.dim
        self._certify(emb, samples, fitted)

    def _certify(self, emb: Embedding, samples: list, fitted: ErasureMap) -> None:
        certs = {s.name: erasure_certificate(self, emb, s.rows, s.labels, chunk_rows=int(self.chunk_rows))
                 for s in samples}
        self.certificate_ = {key: max(getattr(c, key) for c in certs.values())
                             for key in ("edited", "normalized", "before")}
        self.certificate_["attributes"] = {name: c.to_dict() for name, c in certs.items()}
        if fitted.rank < fitted.full_rank:
            return  # fewer directions than the guarantee needs: reported, not enforced
        for name, c in certs.items():
            if c.edited > self.certificate_tol * c.before:
                raise ErasureError(
                    f"{name} labels in {emb.name}: the fitted eraser leaves a cross-covariance of {c.edited:.3g} "
                    f"(bound {self.certificate_tol:g} x {c.before:.3g} before erasure): numerical rank trouble "
                    f"({fitted.dropped} covariance eigenvalue(s) treated as zero); try shrinkage='oas' or "
                    f"eraser='orth'")

    # -- reporting ---------------------------------------------------------------

    def run_info(self, embedding: Embedding) -> dict:
        info = {"eraser": self._erasure_method(), "rank_removed": self.rank_removed_,
                "fitting_words": self.n_fitting_words_, "certificate": self.certificate_["edited"],
                "certificate_normalized": self.certificate_["normalized"]}
        if self.shrinkage_:
            info["shrinkage"] = self.shrinkage_
        if len(self.attributes_) > 1:
            info["attributes"] = "+".join(self.attributes_)
        return info

