"""Soft debiasing (Bolukbasi et al., 2016, Section 5.2 and Appendix): exact and fast.

Soft debiasing looks for one linear map ``T`` (``d x d``) that keeps the inner
products between all words while shrinking, for the gender-neutral words, the part
that lies in the bias subspace.  With ``W`` the unit word vectors as columns (``n``
words), ``N`` the neutral words (the vocabulary minus the gender-specific list) and
``B`` the bias basis (``k`` columns), it solves over ``X = T^T T`` (PSD)::

    minimize  a ||W^T X W - W^T W||_F^2 + b ||N^T X B||_F^2

Normalization of the two terms (``normalization``):

* ``"mean"`` (default): ``a = 1/n^2``, ``b = lam / (|N| k)``: each term is the mean
  over its entries.  The paper writes both terms as plain sums; but the first sums
  ``n^2`` entries and the second ``|N| k``, so with a real vocabulary and
  ``lam = 0.2`` the plain form weighs the bias term about ``n`` times less than
  intended and leaves the embedding practically unchanged.  Measured on the first
  50,000 words of GloVe 6B 50d with the curated lists (289 professions, default
  subspace and expansion): the mean ``|cos|`` of professions with the gender
  direction goes 0.173 -> 0.173 with plain sums and 0.173 -> 0.055 with means,
  while the cosines of random word pairs move by 0.0135 on average.
* ``"sum"``: ``a = 1``, ``b = lam``, the formula exactly as printed, for fidelity.

How it is solved (details in :mod:`embdebias.debias._psd`): ``W^T W`` (``n x n``) is
never formed.  One chunked pass over the unit-normalized rows accumulates
``C = W W^T`` (float32 blocks summed in float64, :class:`GramAccumulator`); ``N N^T``
is ``C`` minus the outer products of the gender-specific rows (no copy of the neutral
rows).  In the eigenbasis of ``C`` the first term is an elementwise weighted sum, and
after a diagonal congruence the whole problem becomes a well-conditioned ``d x d`` problem whose unconstrained minimiser
has a closed form; when that minimiser is PSD (the usual case) it is the exact
optimum, otherwise ADMM finishes the job.  ``solver="cvxpy"`` solves the same reduced
problem with cvxpy instead (the reference).  ``T`` is the symmetric square root of
``X``.

Which words are transformed: all of them, gender-specific ones included, as in
Bolukbasi et al. (a single linear map keeps the geometry between the two groups
consistent).  The bias term only involves the neutral words, so gender-specific
words keep their gender component up to the overall map.  Every output vector is
renormalized to unit length (zero vectors stay zero).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from .._warn import warn
from .. import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import EmbdebiasError, NonFiniteError
from ..subspace import resolve_subspace
from . import _psd
from ._base import Debiaser, case_variants, format_scalar, unit_rows
from ._params import MAPPING, WORDS, Array
from .expand import ExpansionResult, GenderSpecificExpander, expand_gender_specific
from .hard import specific_words

NORMALIZATIONS = ("mean", "sum")
SOLVERS = ("fast", "cvxpy")
#: Rows per float32 product of :class:`GramAccumulator` (sums of blocks are float64).
GRAM_BLOCK_ROWS = 1 << 12


class SoftDebias(Debiaser):
    """Soft debiasing of an embedding (Bolukbasi et al., 2016), solved exactly.

    Parameters
    ----------
    lam : float, default 0.2
        Weight ``lambda`` of the bias term (``0`` keeps the embedding unchanged;
        large values approach hard debiasing's neutralize step).
    normalization : {"mean", "sum"}, default "mean"
        ``"mean"``: per-entry means ``1/n^2`` and ``lam/(|N| k)`` (see the module
        docstring for why); ``"sum"``: the plain sums printed in the paper.
    solver : {"fast", "cvxpy"}, default "fast"
        ``"fast"``: closed form (exact when PSD) with an ADMM fallback;
        ``"cvxpy"``: the reduced problem handed to cvxpy (reference path).
    cvxpy_solver : str, default "SCS"
        cvxpy solver name when ``solver="cvxpy"`` ("SCS" or "CLARABEL").
    tol : float, optional
        Solver tolerance (default 1e-9 for "fast", 1e-8 for cvxpy's ``eps`` /
        gap tolerances).
    max_iter : int, default 10000
        ADMM iteration limit (only used when the closed form is not PSD).
    subspace : BiasSubspace, array, list of pairs or None
        See :func:`~embdebias.subspace.resolve_subspace`: a fitted
        :class:`~embdebias.subspace.BiasSubspace` (used as is; an unfitted one is
        cloned and fitted), a
        ``(k, d)`` array whose rows span the subspace, or definitional pairs;
        None: fitted from ``definitional`` with ``n_components`` components.
    definitional : list of pairs or str, optional
        Definitional pairs (default: the ten of Bolukbasi et al.), as in
        :class:`~embdebias.debias.HardDebias`.
    n_components : int, optional
        ``k`` when the subspace is fitted here (default: the number of groups minus one,
        1 for gender).
    gender_specific : None, "expand", list of str, str, ExpansionResult or GenderSpecificExpander
        The words treated as not neutral.  None: the ``gender_specific`` list of
        ``lists`` (for "published", Bolukbasi et al.'s full list of 1,441 words, which
        is their own SVM expansion of the seeds); ``"expand"``: expand the seed list
        of ``lists`` with the SVM here (:func:`expand_gender_specific`, seeded with
        ``random_state``); a list of words is used as is; any other string is a
        word-list name or path; an expander is fitted here.
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies every list not given.
    case_variants : bool, default False
        Also treat the lower-, Title- and UPPER-case forms of the gender-specific
        words as gender-specific (as :class:`~embdebias.debias.HardDebias` can).
        Off by default: the published full list is taken as given.
    random_state : int, default 0
        Seed of the SVM expansion (the solve itself is deterministic).
    attribute : Attribute or str, optional
        The protected attribute (:func:`embdebias.load_attribute`); not given: the attribute of a fitted
        ``subspace``, else gender (one that disagrees with the subspace's is an error). Its
        defining sets give the ``k - 1``-dimensional subspace (the bias term then
        shrinks the neutral words' part in all of it) and its specific words are the
        words treated as not neutral. ``gender_specific="expand"`` (the SVM expansion
        of gender's seed words) is gender's only.
    chunk_rows : int
        Rows per chunk for the passes over the vocabulary.

    Attributes
    ----------
    subspace_ : BiasSubspace
    components_ : ndarray (k, d)
        Orthonormal basis of the bias subspace used.
    gender_specific_ : list of str
        The gender-specific words found in the vocabulary.
    gender_specific_missing_ : list of str
        Words of an explicit list that were not in the vocabulary.
    expansion_ : ExpansionResult or None
    X_ : ndarray (d, d)
        The optimal ``T^T T`` (float64, PSD).
    transform_matrix_ : ndarray (d, d)
        ``T``, the symmetric square root of ``X_`` (float64).
    solve_info_ : dict
        ``solver``, ``method``, ``status``, ``iterations``, ``seconds``,
        ``objective_before`` / ``objective_after`` (each a dict with the
        ``inner_products`` and ``bias`` terms and their ``total``),
        ``kkt_residual``, ``min_eigenvalue``, ``n_words``, ``n_neutral``, ``k``,
        ``rank``, ``normalization``, ``lam``.
    timings_ : dict
        Seconds spent in each stage of ``fit``.
    """

    _transient = ("problem_", "expansion_", "timings_")
    _params_schema = {"subspace_": Array((None, "d"), subspace=True), "components_": Array((None, "d")),
                      "X_": Array(("d", "d")), "transform_matrix_": Array(("d", "d")),
                      "gender_specific_": WORDS, "gender_specific_missing_": WORDS, "solve_info_": MAPPING}

    #: Checked when a parameter file sets them (``fit`` checks its own through ``_check_params``).
    _parameter_constraints = {
        "subspace": "no_validation", "definitional": "no_validation", "gender_specific": "no_validation",
        "attribute": "no_validation",
        "lam": [Interval(Real, 0, np.inf, closed="left")],  # [0, inf): finite
        "normalization": [StrOptions(set(NORMALIZATIONS))],
        "solver": [StrOptions(set(SOLVERS))],
        "cvxpy_solver": [str],
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "case_variants": ["boolean"],
        "random_state": ["random_state"],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def _check_loaded_params(self) -> None:
        self._validate()
        self._check_params()

    def __init__(self, lam: float = 0.2, *, normalization: str = "mean", solver: str = "fast",
                 cvxpy_solver: str = "SCS", tol: float | None = None, max_iter: int = 10_000,
                 subspace=None, definitional=None, n_components: int | None = None, gender_specific=None,
                 lists: str = wordlists.DEFAULT_LISTS, case_variants: bool = False,
                 random_state: int | None = 0, attribute=None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.lam = lam
        self.normalization = normalization
        self.solver = solver
        self.cvxpy_solver = cvxpy_solver
        self.tol = tol
        self.max_iter = max_iter
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.gender_specific = gender_specific
        self.lists = lists
        self.case_variants = case_variants
        self.random_state = random_state
        self.attribute = attribute
        self.chunk_rows = chunk_rows

    _suffix = "soft"
    #: One symmetric matrix per row, then unit length: a run reports its certificate (of its unit rows).
    linear = True

    # -- fit ----------------------------------------------------------------------------
    def fit(self, embedding, y=None, *, gram=None) -> "SoftDebias":
        """Learn ``T`` on ``embedding`` (an Embedding or gensim KeyedVectors).

        ``gram``, optional: ``sum x x^T`` over the unit-normalized rows of ``embedding``
        (:class:`GramAccumulator`), when a pass shared with another step has already
        accumulated it; then ``fit`` reads only the gender-specific rows.
        """
        emb = as_embedding(embedding)
        self._check_params()
        timings = {}

        t0 = time.perf_counter()
        B = self._basis(emb)                                  # (d, k)
        timings["subspace"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        gs_words, gs_missing, expansion = self._gender_specific(emb)
        timings["gender_specific"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        gs_rows = np.unique(emb.words.rows(gs_words))
        C, M = unit_moments(emb, gs_rows, chunk_rows=self.chunk_rows, gram=gram)
        timings["moments"] = time.perf_counter() - t0

        n = len(emb)
        n_neutral = n - len(gs_rows)
        if n_neutral <= 0:
            raise EmbdebiasError(f"every word of {emb.name} is gender-specific: no neutral words")
        k = B.shape[1]
        if self.normalization == "mean":
            a, b = 1.0 / float(n) ** 2, float(self.lam) / (n_neutral * k)
        else:
            a, b = 1.0, float(self.lam)

        t0 = time.perf_counter()
        prob = _psd.SoftProblem.from_moments(C, M, B, a, b)
        result = self._solve(prob)
        timings["solve"] = time.perf_counter() - t0

        X = result.X
        T = _psd.sym_sqrt(X)
        before = prob.terms(np.eye(emb.dim))
        after = prob.terms(X)
        info = {
            "solver": result.solver,
            "method": result.extra.get("method", result.solver),
            "status": result.status,
            "iterations": result.iterations,
            "seconds": result.seconds,
            "objective_before": _terms_dict(before),
            "objective_after": _terms_dict(after),
            "kkt_residual": result.kkt_residual,
            "min_eigenvalue": result.min_eigenvalue,
            "n_words": n,
            "n_neutral": n_neutral,
            "k": k,
            "rank": prob.rank,
            "normalization": self.normalization,
            "lam": float(self.lam),
        }
        info.update({key: v for key, v in result.extra.items() if key != "method"})
        if result.status != "optimal":
            from sklearn.exceptions import ConvergenceWarning

            warn(f"soft debias: {result.solver} ended with status {result.status!r} "
                 f"(KKT residual {result.kkt_residual:.2e}); raise max_iter or tol",
                 ConvergenceWarning)

        self.components_ = B.T.copy()
        self.gender_specific_ = gs_words
        self.gender_specific_missing_ = gs_missing
        self.expansion_ = expansion
        self.X_ = X
        self.transform_matrix_ = T
        self.solve_info_ = info
        self.timings_ = timings
        self.n_features_in_ = emb.dim
        self.problem_ = prob
        return self

    def _check_params(self) -> None:
        wordlists.check_lists(self.lists)
        self._validate()

    def _basis(self, emb: Embedding) -> np.ndarray:
        """The ``(d, k)`` orthonormal basis (columns) of the bias subspace."""
        self.subspace_ = resolve_subspace(self.subspace, emb, pairs=self.definitional,
                                          n_components=self.n_components, lists=self.lists,
                                          attribute=self._attribute())
        return np.asarray(self.subspace_.components_, dtype=np.float64).T

    def _gender_specific(self, emb: Embedding):
        spec = self.gender_specific
        expansion = None
        attr = self.attribute_
        if ((attr is None or not attr.uses_gender_lists)
                and (isinstance(spec, (ExpansionResult, GenderSpecificExpander)) or spec == "expand")):
            raise EmbdebiasError(f"soft debias of attribute {attr.name!r}: the SVM expansion expands gender's "
                                 f"seed words; give the attribute's specific words, or None for its own list")
        if isinstance(spec, str) and spec == "expand":
            expansion = expand_gender_specific(emb, "gender_specific_seed", lists=self.lists,
                                               random_state=self.random_state,
                                               chunk_rows=self.chunk_rows)
        elif isinstance(spec, ExpansionResult):
            expansion = spec
        elif isinstance(spec, GenderSpecificExpander):
            # A fitted expander is used as is; an unfitted one is cloned, never changed.
            fitted = spec if hasattr(spec, "result_") else clone(spec).fit(emb)
            expansion = fitted.result_
        if expansion is not None:
            words = list(expansion.words)
        else:
            words = specific_words(spec, attr, self.lists)
        known, missing = emb.split_known(words)
        if self.case_variants:
            # variants are extras: only the listed spellings count as missing
            known = emb.split_known(case_variants(known + missing))[0]
        return known, missing, expansion

    def _solve(self, prob):
        if self.solver == "fast":
            tol = 1e-9 if self.tol is None else float(self.tol)
            return _psd.solve_fast(prob, tol=tol, max_iter=int(self.max_iter))
        tol = 1e-8 if self.tol is None else float(self.tol)
        return _psd.solve_cvxpy(prob, solver=self.cvxpy_solver, tol=tol)

    # -- transform ----------------------------------------------------------------------
    def _prepare(self, emb: Embedding):
        T = self.transform_matrix_.astype(np.float32)

        def apply(rows, block, out):
            np.matmul(block, T, out=out)     # T is symmetric: each row x becomes T x
            unit_rows(out)

        return apply

    @classmethod
    def pass_accumulator(cls, embedding: Embedding) -> "GramAccumulator":
        """What :meth:`fit` can take from another step's pass over ``embedding``'s rows: the
        moments, accumulated by :meth:`GramAccumulator.add` and given by its ``fit_params()``."""
        return GramAccumulator(embedding.dim, name=embedding.name, words=embedding.words)

    def run_info(self, embedding: Embedding) -> dict:
        """The solve's summary (:attr:`solve_info_`)."""
        return dict(self.solve_info_)

    @classmethod
    def report_lines(cls, info: dict) -> list[str]:
        if not info:
            return []
        shown = {k: v for k, v in info.items() if not isinstance(v, (list, dict))}
        lines = ["- soft debias solve: " + ", ".join(f"{k} = {format_scalar(v)}" for k, v in shown.items())]
        for when in ("before", "after"):
            terms = info.get(f"objective_{when}")
            if isinstance(terms, dict):
                lines.append(f"  - objective {when}: "
                             + ", ".join(f"{k} = {format_scalar(v)}" for k, v in terms.items()))
        return lines

    def report(self) -> str:
        """A short human-readable summary of the fit."""
        i = self.solve_info_
        b, a = i["objective_before"], i["objective_after"]
        lines = [
            f"soft debias: lambda={i['lam']}, normalization={i['normalization']}, "
            f"k={i['k']}, {i['n_words']} words, {i['n_neutral']} neutral",
            f"solver {i['solver']} ({i['method']}): status {i['status']}, "
            f"{i['iterations']} iterations, {i['seconds']:.3f} s, KKT residual {i['kkt_residual']:.1e}",
            f"objective before: inner products {b['inner_products']:.6g}, bias {b['bias']:.6g}, "
            f"total {b['total']:.6g}",
            f"objective after:  inner products {a['inner_products']:.6g}, bias {a['bias']:.6g}, "
            f"total {a['total']:.6g}",
        ]
        if getattr(self, "expansion_", None) is not None:  # not kept by save_params (transient)
            lines.append(self.expansion_.summary())
        return "\n".join(lines)


def _terms_dict(terms) -> dict:
    t1, t2 = terms
    return {"inner_products": t1, "bias": t2, "total": t1 + t2}


class GramAccumulator:
    """``sum x x^T`` over unit-normalized rows, fed block by block.

    The one implementation behind :func:`unit_moments`; its :meth:`add` also serves a
    pass over the rows that does something else at the same time (``embdebias run``
    accumulates it while hard debias writes its output, so soft debias needs one pass
    of its own, not two). Zero rows contribute nothing.

    Precision: each block of :data:`GRAM_BLOCK_ROWS` unit rows gives one float32 product
    ``x^T x`` (twice the speed of float64), and the blocks' sums are added in float64.
    Against an all-float64 sum, the largest entry error measured on 100,000 x 300
    GloVe-derived vectors is 5e-8 of the largest entry (3e-7 with 65,536-row blocks);
    the test bounds it.

    Speed: the products run on one BLAS thread. This shape (300 x 4,096 by 4,096 x 300:
    a long inner dimension, a small result) split over two threads ran 5x slower than
    on one on this 2-core machine with another process busy (20 against 102 GFLOP/s,
    measured side by side), and a symmetric rank-k update (``ssyrk``) at 80 GFLOP/s
    one-threaded did no better than the plain product.

    Parameters
    ----------
    dim : int
    name : str
        The embedding's name, for errors.
    words : Vocabulary, optional
        Names the word of a non-finite row in the error.
    """

    def __init__(self, dim: int, *, name: str = "embedding", words=None):
        self.gram = np.zeros((dim, dim), dtype=np.float64)
        self.name = name
        self.words = words
        self.rows_seen = 0

    def add(self, start: int, block: np.ndarray) -> None:
        """Add the rows ``block`` (rows ``start`` on of the embedding; the row numbers name a bad row)."""
        from .._threads import one_thread

        with one_thread():
            self._add(start, block)
        self.rows_seen += block.shape[0]

    def _add(self, start: int, block: np.ndarray) -> None:
        for at in range(0, block.shape[0], GRAM_BLOCK_ROWS):
            x = np.array(block[at:at + GRAM_BLOCK_ROWS], dtype=np.float32, order="C")
            norms = np.sqrt(np.einsum("ij,ij->i", x, x))
            if not np.all(np.isfinite(norms)):
                bad = start + at + int(np.flatnonzero(~np.isfinite(norms))[0])
                word = "" if self.words is None else f" of {self.words[bad]!r}"
                raise NonFiniteError(f"{self.name}: the vector{word} (row {bad}) has non-finite entries")
            np.divide(x, norms[:, None], out=x, where=norms[:, None] > 0)
            self.gram += x.T @ x

    def result(self) -> np.ndarray:
        """The symmetric ``(d, d)`` sum (float64)."""
        return (self.gram + self.gram.T) / 2.0

    def fit_params(self) -> dict:
        """The keywords of :meth:`SoftDebias.fit` this pass gives (``gram``)."""
        return {"gram": self.result()}


def unit_moments(emb: Embedding, special_rows=None, *, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                 gram: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(C, M)``: ``sum x x^T`` over all unit-normalized rows, and over the rows not in
    ``special_rows`` (computed as ``C`` minus the special rows' outer products).

    One chunked pass (:class:`GramAccumulator`: float32 blocks summed in float64); zero rows
    contribute nothing. ``gram``: ``C`` already accumulated over every row of ``emb``
    (skips the pass).

    Raises
    ------
    NonFiniteError
        If a vector has NaN or infinite entries.
    """
    if gram is None:
        acc = GramAccumulator(emb.dim, name=emb.name, words=emb.words)
        for start, _stop, block in emb.iter_chunks(int(chunk_rows)):
            acc.add(start, block)
        C = acc.result()
    else:
        C = np.asarray(gram, dtype=np.float64)
        if C.shape != (emb.dim, emb.dim):
            raise EmbdebiasError(f"gram has shape {C.shape}, expected {(emb.dim, emb.dim)}")
    M = C.copy()
    if special_rows is not None and len(special_rows):
        rows = np.unique(np.asarray(special_rows, dtype=np.int64))
        g = emb.take(rows, np.float64)
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g = np.divide(g, norms, out=np.zeros_like(g), where=norms > 0)
        M -= g.T @ g
        M = (M + M.T) / 2.0
    return C, M
