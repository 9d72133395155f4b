"""One thread for the small iterative solvers the metrics call (logistic regression, k-means)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def one_thread():
    """Run the block with BLAS and OpenMP limited to one thread.

    RNSB's and the sentiment probe's logistic regressions, and residual bias's k-means,
    repeat hundreds of small products (a matrix of a few MB by a vector or two
    centres). Split over threads, each product pays a synchronisation about as long as
    itself, and on a shared machine a thread waiting for a busy core stalls every one
    of them: under load these fits ran 5 to 20 times slower on two threads than on one
    (``benchmarks/bench_evaluate.py``). The results are the same up to float rounding.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
