"""The erasure benchmark: every eraser of the table on the field's shared split, side by side.

:func:`erasure_benchmark` fits each eraser (:data:`~embdebias.benchmark.run.ERASERS`:
INLP, RLACE, LEACE, orth = mean projection, SAL, conceptor negation; or any methods of
the debiasers' table named) on the words Ravfogel et al.'s split gives it, for several
seeds, and measures what is left of the attribute and what the edit cost:

* **fresh probes** (:mod:`~embdebias.benchmark.probes`): a logistic regression, an
  RBF-SVM and an MLP of one hidden layer of 100, trained and scored as the protocol says
  (:mod:`~embdebias.benchmark.protocol`: ``"split"``, the published evaluation, or
  ``"heldout"``, words the eraser never saw);
* the **certificate** (:mod:`embdebias.debias.certificate`) on the eraser's fitting
  words, before and after unit scaling; the **V-measure** of 2-means clustering of the
  probes' test words; the **distortion**, mean squared change of a sample of the
  vocabulary's vectors; the **rank** the map edits; and the **quality tests** as
  :func:`~embdebias.evaluate.evaluate` computes them (word similarity, analogies).

Each figure is the mean over the seeds with a 95 % Student-t interval. A seed draws the
split (the published 70/30, 70/30 split of the labelled words), seeds the eraser and the
probes. The row ``none`` is the original vectors. Deliberate choices:

* the probes see each linear method's **edit before any unit scaling** (``x @ map_ +
  offset_``), as the published notebooks probe ``X P``; a method that is not one map is
  probed on its output. The certificate's *unit* column says what unit scaling does;
* a method is fitted as ``embdebias run`` configures it (its defaults, the seed as its
  ``random_state``): the published settings where the table follows them (RLACE rank
  1, SAL ``k - 1`` directions). The published SAL figure is rank 2 with three classes.

The published figures on GloVe 42B (:data:`~embdebias.benchmark.output.PUBLISHED`) are
given beside ours, naming the data each used; ``embdebias benchmark glove.42B.300d.txt
--methods inlp,rlace,orth,sal`` runs ours on those words.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import EmbdebiasError
from .output import FILES, PUBLISHED, REPRODUCE_42B, markdown, plot, summarize, write
from .protocol import PROTOCOLS, probe_words
from .run import BASELINE, ERASERS, Task, build, labelled_words, resolve_methods, resolve_seeds, run_tasks

__all__ = ["BASELINE", "ERASERS", "FILES", "PROTOCOLS", "PUBLISHED", "REPRODUCE_42B", "BenchmarkResult",
           "erasure_benchmark", "markdown", "plot"]


@dataclass
class BenchmarkResult:
    """What :func:`erasure_benchmark` measured.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per method (``none`` first): each figure's mean, ``_low`` and ``_high``.
    seeds : pandas.DataFrame
        One row per (method, seed): every figure of that run.
    settings : dict
        The embedding, its size, the attribute, protocol, seeds and methods.
    """

    summary: object
    seeds: object
    settings: dict

    def to_markdown(self) -> str:
        return markdown(self.summary, self.settings)


def erasure_benchmark(embedding=None, *, methods=None, seeds=5, protocol: str = "split", attribute: str = "gender",
                      lists: str = "published", limit: int | None = None, quality: bool = True,
                      out_dir=None, force: bool = False, dask: bool = False, scheduler: str | None = None,
                      workers: int | None = None, progress=None, log=print) -> BenchmarkResult:
    """Run the erasure benchmark (see the module docstring).

    Parameters
    ----------
    embedding : Embedding, path or None
        The vectors; a path (or a name such as ``"glove-6b-50d"``) is loaded with ``limit``;
        None: the built-in GloVe 6B 50d, as ``embdebias run`` uses.
    methods : str, sequence of str or None
        Row names of :data:`ERASERS` or methods of the debiasers' table (``"inlp,orth"``);
        None or ``"all"``: every eraser of :data:`ERASERS`.
    seeds : int or sequence of int, default 5
        A count (the seeds ``0 .. n-1``) or the seeds.
    protocol : {"split", "heldout"}
        Where the probes train and are scored (:mod:`~embdebias.benchmark.protocol`).
    attribute : str
        The protected attribute (gender, race, religion or a JSON attribute file).
    lists : {"published", "curated"}
    limit : int, optional
        Read only the first ``limit`` words of a path.
    quality : bool, default True
        Run the quality tests (an analogy test of 400,000 words takes about 10 s per run).
    out_dir : path, optional
        Write :data:`FILES` there, all at once; checked before any work (an existing
        directory needs ``force``, and only a benchmark's is replaced).
    dask : bool
        Run the (method, seed) measurements on a local Dask cluster of ``workers`` processes,
        or on ``scheduler``'s (as ``embdebias sweep`` does).
    progress : callable, optional
        Called with each finished task.
    log : callable
        Receives Dask's lines.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    EmbdebiasError
        An unknown method or protocol, bad seeds, too few labelled words for the split, an
        output directory that may not be written: before anything is run or written.
    """
    rows = resolve_methods(methods)
    seed_list = resolve_seeds(seeds)
    if protocol not in PROTOCOLS:
        raise EmbdebiasError(f"benchmark: unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    if out_dir is not None:
        from .._atomic import check_replaceable, prepare_output

        inputs = [embedding] if isinstance(embedding, (str, os.PathLike)) and os.path.exists(embedding) else []
        prepare_output(out_dir, force=force, inputs=inputs)
        check_replaceable(out_dir, directory=True, replaceable="benchmark.json", contents=set(FILES))
    source, emb = _source(embedding, limit)
    for seed in seed_list:  # the split of every seed is checked before any eraser is fitted
        probe_words(labelled_words(emb, attribute, lists, seed), protocol, seed, where=emb.name)
    tasks = [Task(source, limit, name, estimator, params, seed, protocol, attribute, lists, quality)
             for name, (estimator, params) in [(BASELINE, (None, {})), *rows.items()] for seed in seed_list]
    for task in tasks[len(seed_list)::len(seed_list)]:  # each method configured once (not fitted) to check it
        build(task, emb)
    records = run_tasks(tasks, dask=dask, scheduler=scheduler, workers=workers, progress=progress, log=log)
    summary, per_seed = summarize(records)
    settings = {"embedding": emb.name, "n_words": len(emb), "dim": emb.dim,
                "attribute": getattr(attribute, "name", str(attribute)), "lists": lists, "protocol": protocol,
                "seeds": list(seed_list), "methods": list(rows), "limit": limit, "quality": quality}
    if out_dir is not None:
        write(out_dir, summary, per_seed, settings)
    return BenchmarkResult(summary, per_seed, settings)


def _source(embedding, limit):
    """``(what a task loads, the loaded embedding)``: a path is loaded once per process by the tasks."""
    from ..embedding import Embedding, as_embedding

    if embedding is None or isinstance(embedding, (str, os.PathLike)):
        from ..sweep.run import loaded

        from ..io.default import DEFAULT_NAME

        path = DEFAULT_NAME if embedding is None else os.fspath(embedding)
        return path, loaded(path, limit)
    if limit is not None:
        raise EmbdebiasError("benchmark: limit applies to a path, not to an embedding already loaded")
    emb = embedding if isinstance(embedding, Embedding) else as_embedding(embedding)
    return emb, emb
