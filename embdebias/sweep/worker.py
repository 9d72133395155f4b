"""A sweep worker's set-up: one BLAS and OpenMP thread per worker process.

A sweep's points are independent, so its parallelism is the workers': a worker whose
numpy, scipy or scikit-learn products split over threads competes with the other workers
for the same cores (on a shared machine a thread waiting for a busy core stalls the whole
product), and a point's own time grows with the number of workers instead of staying put.
Dask's nanny sets ``OMP_NUM_THREADS=1`` and the like before it starts a worker, but a
worker started without a nanny (``dask worker --no-nanny``), or by a cluster configured
otherwise, keeps one thread per core; :class:`PinThreads` limits every worker of the
cluster a sweep runs on, including those that join or restart later, whatever started them.
"""

from __future__ import annotations

#: The name the plugin is registered under on the scheduler (one registration per cluster).
PLUGIN_NAME = "embdebias-one-thread"


def pin_threads() -> None:
    """Limit this process's BLAS and OpenMP thread pools to one thread, for good.

    The libraries the points use are imported first: a pool is limited only once its
    library is loaded (numpy's and scipy's OpenBLAS, scikit-learn's OpenMP).
    """
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import sklearn.svm  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)  # not a context: the limit stays for the worker's life


def pin_plugin():
    """A Dask worker plugin running :func:`pin_threads` on every worker (imports distributed)."""
    from distributed import WorkerPlugin

    class PinThreads(WorkerPlugin):
        name = PLUGIN_NAME

        def setup(self, worker):
            pin_threads()

    return PinThreads()
