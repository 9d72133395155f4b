"""The soft-debias semidefinite program, reduced to ``d x d`` and solved.

Notation (Bolukbasi et al., 2016, Section 5.2 and Appendix): ``W`` is the ``d x n``
matrix whose columns are the unit-length word vectors, ``N`` the ``d x |N|`` columns
of the neutral words, ``B`` the ``d x k`` orthonormal basis of the bias subspace.
Over ``X = T^T T`` (positive semidefinite) the objective is::

    f(X) = a ||W^T X W - W^T W||_F^2 + b ||N^T X B||_F^2

with ``a = 1/n^2``, ``b = lam / (|N| k)`` (per-entry means, the default) or ``a = 1``,
``b = lam`` (plain sums, as printed in the paper).

Reduction.  Let ``C = W W^T = U diag(s) U^T`` and ``M = N N^T`` (both ``d x d``)::

    ||W^T (X - I) W||_F^2 = tr((X - I) C (X - I) C) = sum_ij s_i s_j (Xt - I)_ij^2,
    ||N^T X B||_F^2       = tr(B^T X M X B),

where ``Xt = U^T X U``.  The first term is an elementwise weighted sum over the
entries of the rotated ``X``; positive semidefiniteness is invariant under the
rotation.  We go one step further and use the congruence ``Y = S^(1/2) Xt S^(1/2)``
with ``S = diag(s) / sigma`` (``sigma = tr C / d``, so ``S`` has mean 1).  A congruence
by a positive diagonal matrix also preserves semidefiniteness, and in ``Y`` the
objective is::

    f = a sigma^2 * g(Y),    g(Y) = ||Y - S||_F^2 + rho * tr(Q^T Y Mh Y Q),

with ``Q = S^(-1/2) U^T B``, ``Mh = S^(-1/2) U^T (M / sigma) U S^(-1/2)`` (``0 <= Mh <= I``
because ``M <= C``) and ``rho = b / (a sigma)``.  ``g`` has an identity Hessian in its
first term, so the problem is well conditioned: its condition number is
``1 + rho ||Mh|| ||Q^T Q||`` whatever the spread of the spectrum of ``C``.

Solvers.

* ``fast`` (the default): first the unconstrained minimiser of ``g``, which has a
  closed form because the second term has rank ``k``: with ``V = Y Q`` the
  stationarity condition ``2 (Y - S) + rho (Mh Y P + P Y Mh) = 0`` (``P = Q Q^T``)
  gives ``Y = S - rho/2 (Mh V Q^T + Q V^T Mh)`` and a ``dk x dk`` linear system for
  ``V``.  If that ``Y`` is positive semidefinite it is the exact optimum of the convex
  problem (status ``"optimal"``, ``iterations`` 0); on real embeddings at the usual
  ``lam`` this is the common case.  Otherwise ADMM splits ``g`` from the PSD
  constraint: its ``Y``-step is the same closed form with a proximal term (one LU
  factorisation per penalty value), its ``Z``-step a PSD projection; it starts from
  the projected unconstrained minimiser.  (Projected gradient, even accelerated,
  needs ``O(sqrt(L / mu))`` steps and ``L`` grows with ``rho``; ADMM with the exact
  ``Y``-step does not see that ill-conditioning.)
* ``cvxpy``: the same reduced problem in ``Y`` handed to cvxpy (solver and tolerance
  exposed), the reference used to validate ``fast``.
* :func:`solve_naive_cvxpy` (benchmarks and tests only): the straightforward dense
  ``d x d`` formulation ``||C^(1/2) (X - I) C^(1/2)||_F^2 + ...`` over ``X``.

Directions in the null space of ``C`` (possible when ``n < d`` or vectors are
degenerate) carry no words; there ``X`` is set to the identity and the problem is
solved on the range of ``C``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import SolverError

#: Eigenvalues of C below this fraction of the largest are treated as zero. ``C`` sums
#: float32 block products (``soft.GramAccumulator``), so an exact zero comes out near
#: 1e-8 of the largest; real embeddings' smallest eigenvalues sit far above 1e-6.
RANK_RTOL = 1e-6
#: ADMM over-relaxation parameter (1 = plain ADMM; 1.5-1.8 is the usual advice).
RELAX = 1.6


@dataclass
class SoftProblem:
    """The soft-debias objective reduced to ``d x d`` matrices.

    Build it with :meth:`from_moments`.  ``a`` and ``b`` are the weights of the two
    terms in the original objective (see the module docstring).
    """

    C: np.ndarray          # (d, d) W W^T over unit vectors
    M: np.ndarray          # (d, d) N N^T over the neutral unit vectors
    B: np.ndarray          # (d, k) orthonormal bias basis (columns)
    a: float
    b: float
    # derived
    U: np.ndarray = field(repr=False, default=None)       # eigenvectors of C, descending
    s: np.ndarray = field(repr=False, default=None)       # eigenvalues of C, descending
    rank: int = 0
    sigma: float = 1.0
    S: np.ndarray = field(repr=False, default=None)       # (r,) scaled eigenvalues
    Q: np.ndarray = field(repr=False, default=None)       # (r, k)
    Mh: np.ndarray = field(repr=False, default=None)      # (r, r)
    rho: float = 0.0

    @classmethod
    def from_moments(cls, C, M, B, a: float, b: float) -> "SoftProblem":
        C = _sym(np.asarray(C, dtype=np.float64))
        M = _sym(np.asarray(M, dtype=np.float64))
        B = np.asarray(B, dtype=np.float64)
        if B.ndim == 1:
            B = B[:, None]
        d = C.shape[0]
        if C.shape != (d, d) or M.shape != (d, d) or B.shape[0] != d:
            raise SolverError(f"inconsistent shapes: C {C.shape}, M {M.shape}, B {B.shape}")
        s, U = np.linalg.eigh(C)
        s, U = s[::-1].copy(), U[:, ::-1].copy()
        smax = max(float(s[0]), 0.0)
        r = int(np.count_nonzero(s > RANK_RTOL * smax)) if smax > 0 else 0
        prob = cls(C=C, M=M, B=B, a=float(a), b=float(b), U=U, s=s, rank=r)
        if r == 0:
            prob.sigma, prob.S = 1.0, np.zeros(0)
            prob.Q, prob.Mh = np.zeros((0, B.shape[1])), np.zeros((0, 0))
            return prob
        Ur = U[:, :r]
        sigma = float(s[:r].sum()) / d
        S = s[:r] / sigma
        isq = 1.0 / np.sqrt(S)
        prob.sigma, prob.S = sigma, S
        prob.Q = isq[:, None] * (Ur.T @ B)
        prob.Mh = _sym(isq[:, None] * (Ur.T @ M @ Ur / sigma) * isq[None, :])
        prob.rho = prob.b / (prob.a * sigma) if prob.a > 0 else np.inf
        return prob

    @property
    def dim(self) -> int:
        return self.C.shape[0]

    @property
    def k(self) -> int:
        return self.B.shape[1]

    # -- objective in the original variable X ---------------------------------------
    def terms(self, X) -> tuple[float, float]:
        """``(a ||W^T X W - W^T W||^2, b ||N^T X B||^2)`` for a ``d x d`` matrix ``X``."""
        X = np.asarray(X, dtype=np.float64)
        Xt = self.U.T @ (X - np.eye(self.dim)) @ self.U
        t1 = self.a * float(np.einsum("i,ij,j->", self.s, Xt * Xt, self.s))
        XB = X @ self.B
        t2 = self.b * float(np.einsum("ik,ij,jk->", XB, self.M, XB))
        return t1, t2

    def objective(self, X) -> float:
        return float(sum(self.terms(X)))

    # -- the scaled variable Y -----------------------------------------------------------
    def g(self, Y) -> float:
        """The scaled objective ``g(Y) = f / (a sigma^2)``."""
        R = Y - np.diag(self.S)
        YQ = Y @ self.Q
        return float(np.sum(R * R) + self.rho * np.einsum("ik,ij,jk->", YQ, self.Mh, YQ))

    def grad(self, Y) -> np.ndarray:
        G = 2.0 * (Y - np.diag(self.S))
        if self.rho:
            YQ = Y @ self.Q
            H = self.Mh @ YQ @ self.Q.T
            G += self.rho * (H + H.T)
        return G

    def X_from_Y(self, Y) -> np.ndarray:
        """``X = U S^(-1/2) Y S^(-1/2) U^T`` on the range of C, identity elsewhere."""
        r = self.rank
        U = self.U
        isq = 1.0 / np.sqrt(self.S)
        Xt_r = isq[:, None] * Y * isq[None, :]
        X = U[:, :r] @ Xt_r @ U[:, :r].T
        if r < self.dim:
            X += U[:, r:] @ U[:, r:].T
        return _sym(X)

    def Y_from_X(self, X) -> np.ndarray:
        r = self.rank
        sq = np.sqrt(self.S)
        Xt = self.U[:, :r].T @ np.asarray(X, dtype=np.float64) @ self.U[:, :r]
        return _sym(sq[:, None] * Xt * sq[None, :])

    # -- closed form ------------------------------------------------------------------
    def unconstrained_minimizer(self) -> np.ndarray:
        """The minimiser of ``g`` over all symmetric matrices (PSD or not).

        Solves ``V + rho/2 (Mh V G + Q V^T Mh Q) = S Q`` for ``V = Y Q`` (``G = Q^T Q``)
        as a ``dk x dk`` linear system, then ``Y = S - rho/2 (Mh V Q^T + Q V^T Mh)``.
        """
        if self.rank == 0:
            return np.zeros((0, 0))
        return _YStep(self, 0.0)(None)


@dataclass
class SolveResult:
    X: np.ndarray
    Y: np.ndarray
    solver: str
    status: str
    iterations: int
    seconds: float
    kkt_residual: float
    min_eigenvalue: float
    extra: dict = field(default_factory=dict)


def project_psd(Y: np.ndarray) -> np.ndarray:
    """Nearest positive semidefinite matrix in Frobenius norm (clip negative eigenvalues)."""
    w, V = np.linalg.eigh(_sym(Y))
    if w[0] >= 0:
        return _sym(Y)
    w = np.maximum(w, 0.0)
    return _sym((V * w) @ V.T)


def kkt_residual(prob: SoftProblem, Y: np.ndarray) -> float:
    """``||Y - Proj_PSD(Y - grad g(Y) / 2)||_F / ||S||_F``: zero exactly at the optimum."""
    if prob.rank == 0:
        return 0.0
    step = Y - prob.grad(Y) / 2.0
    return float(np.linalg.norm(Y - project_psd(step)) / np.linalg.norm(prob.S))


def solve_fast(prob: SoftProblem, *, tol: float = 1e-9, max_iter: int = 10000) -> SolveResult:
    """The specialised solver: exact closed form when it is PSD, else ADMM (see module doc)."""
    t0 = time.perf_counter()
    if prob.rank == 0:
        X = np.eye(prob.dim)
        return SolveResult(X, np.zeros((0, 0)), "fast", "optimal", 0, time.perf_counter() - t0,
                           0.0, 1.0, {"method": "empty range"})
    Yu = prob.unconstrained_minimizer()
    wmin = float(np.linalg.eigvalsh(Yu)[0])
    extra = {"unconstrained_min_eigenvalue": wmin}
    if wmin >= 0:
        Y, iters, status = Yu, 0, "optimal"
        extra["method"] = "closed form (the unconstrained minimiser is PSD)"
    else:
        Y, iters, status, info = _admm(prob, project_psd(Yu), tol=tol, max_iter=max_iter)
        extra.update(info)
        extra["method"] = "ADMM on the PSD cone (rank-k exact Y-step)"
    kkt = kkt_residual(prob, Y)
    X = prob.X_from_Y(Y)
    return SolveResult(X, Y, "fast", status, iters, time.perf_counter() - t0, kkt,
                       float(np.linalg.eigvalsh(X)[0]), extra)


def _admm(prob: SoftProblem, Z: np.ndarray, *, tol: float, max_iter: int):
    """ADMM for ``min g(Y) + indicator_PSD(Z)`` subject to ``Y = Z`` (scaled dual ``U``).

    The ``Y``-step minimises ``g(Y) + tau/2 ||Y - (Z - U)||^2``, an unconstrained
    quadratic solved exactly by the same rank-``k`` reduction as the closed form (its
    ``dk x dk`` matrix is factorised once per value of ``tau``).  The ``Z``-step is
    the PSD projection.  ``tau`` is rebalanced when one residual dominates the other
    (Boyd et al., 2011, Section 3.4.1).  Stops when both residuals are below ``tol``
    relative to ``||S||_F``.
    """
    scale = float(np.linalg.norm(prob.S))
    tau = 2.0
    U = np.zeros_like(Z)
    y_step = _YStep(prob, tau)
    rp = rd = np.inf
    for it in range(1, max_iter + 1):
        Y = y_step(Z - U)
        Z_old = Z
        Yr = RELAX * Y + (1.0 - RELAX) * Z  # over-relaxation (Boyd et al., Section 3.4.3)
        Z = project_psd(Yr + U)
        U += Yr - Z
        rp = float(np.linalg.norm(Y - Z)) / scale
        rd = tau * float(np.linalg.norm(Z - Z_old)) / scale
        if rp <= tol and rd <= tol:
            return Z, it, "optimal", {"primal_residual": rp, "dual_residual": rd, "tau": tau}
        if it % 10 == 0 and (rp > 10 * rd or rd > 10 * rp):
            factor = 2.0 if rp > rd else 0.5
            tau *= factor
            U /= factor  # U is scaled by 1/tau
            y_step = _YStep(prob, tau)
    return Z, max_iter, "max_iter", {"primal_residual": rp, "dual_residual": rd, "tau": tau}


class _YStep:
    """``argmin_Y g(Y) + tau/2 ||Y - R||_F^2`` in closed form (``tau = 0``: minimiser of ``g``)."""

    def __init__(self, prob: SoftProblem, tau: float):
        import scipy.linalg as sla

        self.prob, self.tau = prob, tau
        r, k = prob.rank, prob.k
        self.c = prob.rho / (2.0 + tau)
        self.lu = None
        if self.c:
            self.lu = sla.lu_factor(_v_system(prob.Q, prob.Mh, self.c))
        self.r, self.k = r, k

    def __call__(self, R: np.ndarray | None) -> np.ndarray:
        import scipy.linalg as sla

        p = self.prob
        S = np.diag(p.S)
        Y0 = S if R is None else (2.0 * S + self.tau * R) / (2.0 + self.tau)
        if self.lu is None:
            return _sym(Y0)
        rhs = (Y0 @ p.Q).ravel(order="F")
        V = sla.lu_solve(self.lu, rhs).reshape((self.r, self.k), order="F")
        H = p.Mh @ V @ p.Q.T
        return _sym(Y0 - self.c * (H + H.T))


def _v_system(Q: np.ndarray, Mh: np.ndarray, c: float) -> np.ndarray:
    """Matrix of ``V -> V + c (Mh V Q^T Q + Q V^T Mh Q)`` on column-major ``vec(V)``."""
    r, k = Q.shape
    n = r * k
    A = np.eye(n) + c * np.kron(Q.T @ Q, Mh)          # vec(A V B) = (B^T kron A) vec(V)
    perm = np.arange(n).reshape(k, r).T.ravel()        # vec(V^T)[j] = vec(V)[perm[j]]
    A[:, perm] += c * np.kron((Mh @ Q).T, Q)
    return A


def import_cvxpy():
    """cvxpy, an optional dependency (``pip install 'embdebias[reference]'``).

    Only the reference solver paths use it; the default ``"fast"`` solver needs numpy
    and scipy alone, so a default install does not pay for cvxpy and its solvers.
    """
    try:
        import cvxpy
    except ImportError:
        raise SolverError("solver='cvxpy' needs the optional dependency cvxpy: "
                          "pip install 'embdebias[reference]'") from None
    return cvxpy


def _cvxpy_status_ok(status: str) -> bool:
    return status in ("optimal", "optimal_inaccurate")


def solve_cvxpy(prob: SoftProblem, *, solver: str = "SCS", tol: float | None = 1e-9,
                verbose: bool = False, **solver_kwargs) -> SolveResult:
    """The reduced problem ``min g(Y), Y PSD`` with cvxpy (the reference path).

    The first term is the unweighted ``||Y - S||_F^2`` (the elementwise weighted
    sum over the rotated ``X`` after the diagonal congruence), the second
    ``rho ||Mh^(1/2) Y Q||_F^2``.  ``tol`` is passed as the solver's own tolerance
    keyword (``eps`` for SCS, ``tol_gap_abs``/``tol_gap_rel``/``tol_feas`` for Clarabel).
    """
    cp = import_cvxpy()

    t0 = time.perf_counter()
    r = prob.rank
    if r == 0:
        return SolveResult(np.eye(prob.dim), np.zeros((0, 0)), f"cvxpy/{solver}", "optimal", 0,
                           0.0, 0.0, 1.0)
    Y = cp.Variable((r, r), PSD=True)
    w, V = np.linalg.eigh(prob.Mh)
    Mroot = (V * np.sqrt(np.maximum(w, 0.0))).T  # Mroot^T Mroot = Mh
    obj = cp.sum_squares(Y - np.diag(prob.S))
    if prob.rho:
        obj = obj + prob.rho * cp.sum_squares(Mroot @ Y @ prob.Q)
    problem = cp.Problem(cp.Minimize(obj))
    status, iters, Yv = _run_cvxpy(problem, Y, solver, tol, verbose, solver_kwargs)
    Yv = _sym(Yv)
    X = prob.X_from_Y(Yv)
    return SolveResult(X, Yv, f"cvxpy/{solver}", status, iters, time.perf_counter() - t0,
                       kkt_residual(prob, Yv), float(np.linalg.eigvalsh(X)[0]))


def solve_naive_cvxpy(prob: SoftProblem, *, solver: str = "SCS", tol: float | None = 1e-9,
                      verbose: bool = False, **solver_kwargs) -> SolveResult:
    """The straightforward dense ``d x d`` formulation over ``X`` (benchmark baseline).

    ``min ||C^(1/2) (X - I) C^(1/2)||_F^2 + (b/a) ||M^(1/2) X B||_F^2`` over PSD ``X``,
    scaled by ``1/sigma^2`` so the solver sees numbers of order one.
    """
    cp = import_cvxpy()

    t0 = time.perf_counter()
    d = prob.dim
    Csq = _psd_sqrt(prob.C) / np.sqrt(prob.sigma)
    Msq = _psd_sqrt(prob.M) / np.sqrt(prob.sigma)
    X = cp.Variable((d, d), PSD=True)
    obj = cp.sum_squares(Csq @ (X - np.eye(d)) @ Csq)
    if prob.rho:
        obj = obj + (prob.b / (prob.a * prob.sigma)) * cp.sum_squares(Msq @ X @ prob.B)
    problem = cp.Problem(cp.Minimize(obj))
    status, iters, Xv = _run_cvxpy(problem, X, solver, tol, verbose, solver_kwargs)
    Xv = _sym(Xv)
    Yv = prob.Y_from_X(Xv)
    return SolveResult(Xv, Yv, f"cvxpy/{solver} (naive dense)", status, iters,
                       time.perf_counter() - t0, kkt_residual(prob, Yv),
                       float(np.linalg.eigvalsh(Xv)[0]))


def _run_cvxpy(problem, var, solver, tol, verbose, solver_kwargs):
    cp = import_cvxpy()

    kwargs = dict(solver_kwargs)
    if tol is not None:
        name = solver.upper()
        if name == "SCS":
            kwargs.setdefault("eps", tol)
            kwargs.setdefault("max_iters", 100000)
        elif name == "CLARABEL":
            kwargs.setdefault("tol_gap_abs", tol)
            kwargs.setdefault("tol_gap_rel", tol)
            kwargs.setdefault("tol_feas", tol)
    try:
        problem.solve(solver=solver, verbose=verbose, **kwargs)
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy solver {solver} failed: {exc}") from None
    if not _cvxpy_status_ok(problem.status) or var.value is None:
        raise SolverError(f"cvxpy solver {solver} ended with status {problem.status!r}")
    iters = problem.solver_stats.num_iters if problem.solver_stats is not None else None
    return problem.status, int(iters) if iters is not None else -1, np.asarray(var.value)


def _psd_sqrt(A: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(_sym(A))
    return _sym((V * np.sqrt(np.maximum(w, 0.0))) @ V.T)


def sym_sqrt(X: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (tiny negative eigenvalues clipped)."""
    return _psd_sqrt(X)


def _sym(A: np.ndarray) -> np.ndarray:
    return (A + A.T) / 2.0
