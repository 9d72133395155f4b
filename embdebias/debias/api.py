"""One call from a vector file to a debiased vector file (what ``embdebias debias`` runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..embedding import Embedding
from ..errors import EmbdebiasError
from .table import DEFAULT_METHOD, make_debiaser  # noqa: F401  (make_debiaser: this module's API since 0.1)


def debias_file(source=None, out=None, *, method: str | None = None, format: str | None = None,
                input_format: str = "auto", limit: int | None = None, unicode_errors: str = "strict",
                trust_pickle: bool = False, progress: bool = False, fitted=None,
                **params) -> tuple[Embedding, object]:
    """Load ``source``, debias it with ``method`` and write the result to ``out``.

    Parameters
    ----------
    source : path, "glove-6b-50d" or None
        The input embedding (None: the built-in default).
    out : path, optional
        Output path; written atomically, never over the input. The result is written
        chunk by chunk into a native-format directory, so memory stays bounded for
        huge vocabularies; for another ``format`` that directory is a temporary one
        next to ``out``, converted and then removed.
    method : str, optional
        A method of :data:`~embdebias.debias.DEBIASERS` (default hard debias, or ``fitted``'s).
    format : str, optional
        Output format (default: guessed from ``out``'s extension, else native).
    input_format, limit, unicode_errors, trust_pickle
        How ``source`` is read (:func:`embdebias.io.load`).
    fitted : path, optional
        A parameter file of ``save_params`` (``embdebias run`` writes ``NAME.params.npz``):
        its fitted debiaser is applied without fitting. Another ``method`` than the
        file's, or ``params`` (which shape a fit), are an error.
    **params
        Passed to :func:`make_debiaser`.

    Returns
    -------
    (Embedding, estimator)
        The debiased embedding (memory-mapped when written to disk) and the fitted
        debiaser, whose learned attributes describe what was done.
    """
    from .. import io
    from .._atomic import check_output

    fmt = None
    if out is not None:  # bad output settings fail before any work
        fmt = format or io.guess_format_from_path(out)
        if fmt not in io.FORMATS:
            raise EmbdebiasError(f"unknown output format {fmt!r}; choose one of {', '.join(io.FORMATS)}")
        check_output(out, inputs=(source, fitted))
    debiaser = make_debiaser(method or DEFAULT_METHOD, **params) if fitted is None else _fitted(fitted, method, params)
    emb = io.load(source, format=input_format, limit=limit, unicode_errors=unicode_errors,
                  trust_pickle=trust_pickle)
    if fitted is None:
        from ._progress import fit_progress

        with fit_progress(progress):
            debiaser.fit(emb)
    else:  # fitted on vectors of another dimension: refused before anything is written
        from ._base import check_dim

        check_dim(emb, debiaser.n_features_in_, f"{fitted}: {type(debiaser).__name__}")
    if out is None:
        return debiaser.transform(emb, progress=progress), debiaser
    return transform_to_file(debiaser, emb, out, fmt, progress=progress), debiaser


def _fitted(path, method: str | None, params: dict):
    """The fitted debiaser of parameter file ``path``; ``method`` must be its method, and no
    ``params`` are taken (nothing is fitted)."""
    from .table import load_fitted

    name, debiaser = load_fitted(path)
    if method not in (None, name):
        raise EmbdebiasError(f"{path}: parameters of method {name}, not of {method}")
    if params:
        raise EmbdebiasError(f"{', '.join(sorted(params))}: shape a fit; with the fitted parameters of {path} "
                             f"nothing is fitted")
    return debiaser


def transform_to_file(debiaser, embedding, out, format: str = "native", *, progress: bool = False,
                      also=None) -> Embedding:
    """``debiaser.transform(embedding)`` written to ``out`` in ``format``, with bounded memory.

    The native format is written chunk by chunk in place; any other format goes
    through a temporary native directory next to ``out``, converted and removed.
    ``also(start, block)`` shares the pass over the input (see ``Debiaser.transform``).
    Returns the written embedding, opened from ``out``.
    """
    from .. import io
    from .._atomic import make_temp_dir, signals_deferred

    out = Path(out)
    if format == "native":
        return debiaser.transform(embedding, out=out, progress=progress, also=also)
    tmp = None
    try:
        with signals_deferred():  # named so that a killed run's is recognised and removed
            tmp = make_temp_dir(out, "work")
        result = debiaser.transform(embedding, out=tmp / "result.embd", progress=progress, also=also)
        io.save(result, out, format=format, inputs=(embedding.path,) if embedding.path else ())
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return io.load(out, format=format)
