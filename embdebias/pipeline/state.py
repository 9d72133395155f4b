"""A run's state: resume keys, ``run_state.json``, staging in ``embdebias-partial/`` and the commit.

Resuming: ``run_state.json`` in the output directory records, for every finished
step, a key (a hash of the input's identity, the step's parameters and the keys of
the steps it depends on), its outputs and its time. A re-run reuses a step whose
key is unchanged and whose outputs still exist, and recomputes it otherwise (or
always, with ``force=True``). A damaged ``run_state.json`` (not JSON, wrong types,
over 16 MB) is ignored with a warning, and its steps are recomputed: it is a cache,
never needed for correctness.

Outputs appear together. A run writes what it computes into :data:`PARTIAL`
(``embdebias-partial/``, with its own ``run_state.json``) and moves the new files
into the output directory only at the end, the report and then ``run_state.json``
last, with SIGINT and SIGTERM held back during the moves.

One run at a time: a run holds the output directory's lock
(:func:`embdebias._lock.output_lock`) from loading to the commit, and every step's
outputs carry a stamp of the run that wrote them (:mod:`embdebias._provenance`). A run
promotes, reports or reuses only files whose stamp holds: a file another process wrote
or changed is never taken for a step's output, and is recomputed. An interrupted or failed
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
import shutil
import warnings
from pathlib import Path

from .._warn import warn
from .. import __version__
from .._atomic import atomic_file, check_replaceable, clean_stale_temporaries, replace_dir, signals_deferred
from .._provenance import check_stamp, stamp, stamp_problem
from ..errors import quote
from ..io.native import NATIVE_FILES as _NATIVE_FILES
from .._outdir import inside, is_own_file, make_dirs
from .outputs import MARKER, OWN_NAMES, PARTIAL, REPORT_FILES, STATE, known_names, steps

# A real run_state.json is a few kB (the expansion's added words at most some 100 kB).
MAX_STATE_BYTES = 16 << 20


def key(*parts) -> str:
    """The resume key of a step: a hash of what it depends on."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def write_json(path: Path, obj, inputs=()) -> None:
    with atomic_file(path, inputs=inputs) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n", encoding="utf-8")


def write_text(path: Path, text: str, inputs=()) -> None:
    with atomic_file(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")


def adopt(out_dir: Path, log) -> None:
    """Create and mark the output directory, remove stale temporaries, finish an interrupted commit.

    A link at :data:`PARTIAL`, ``run_state.json`` or the marker is refused here again (the plan
    refused it before the input was loaded): nothing is cleaned, read or written through it.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in OWN_NAMES:
        inside(out_dir, name, directory=name == PARTIAL)
    if not is_own_file(out_dir / MARKER):
        write_json(out_dir / MARKER, {"written_by": f"embdebias {__version__} run",
                                      "note": "marks this directory as the output of 'embdebias run'"})
    for where in (out_dir, out_dir / PARTIAL):
        clean_stale_temporaries(where, log)
    finish_commit(out_dir, log)


def read_state(path: Path) -> tuple[dict, list | None]:
    """``(steps, commit list)`` of a run_state.json; empty, with a warning, when it is damaged."""
    if not path.exists() and not path.is_symlink():
        return {}, None
    try:
        if not is_own_file(path):  # a link is never read (nor, at the commit, written through)
            raise ValueError("not a regular file")
        size = path.stat().st_size
        if size > MAX_STATE_BYTES:
            raise ValueError(f"{size:,} bytes, far more than a run writes")
        return _valid_state(json.loads(path.read_bytes().decode("utf-8")))
    except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
        warn(f"{path}: damaged, ignored ({quote(exc, 80)}); its steps are recomputed")
        return {}, None


def _valid_state(data) -> tuple[dict, list | None]:
    """The steps and commit list of parsed state ``data``; ValueError when its structure is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), dict):
        raise ValueError('expected a JSON object with an object "steps"')
    known, names = known_names(), steps()
    commit = data.get("commit")
    if commit is not None and not _names_in(commit, known):
        raise ValueError('"commit" must list output names')
    bad = [name for name, entry in data["steps"].items() if not _valid_entry(name, entry, known, names)]
    if bad:
        raise ValueError(f"step entries of the wrong form: {quote(', '.join(map(str, bad)), 60)}")
    return data["steps"], commit


def _names_in(names, known: set[str]) -> bool:
    """True if ``names`` is a non-empty list of names out of ``known``."""
    return isinstance(names, list) and bool(names) and all(isinstance(n, str) and n in known for n in names)


def _valid_entry(name, entry, known: set[str], step_names) -> bool:
    """True if ``entry`` is a step record as :meth:`Steps.record` writes it."""
    if name not in step_names or not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        return False
    seconds = entry.get("seconds")
    return (_names_in(entry.get("outputs"), known) and type(seconds) in (int, float) and math.isfinite(seconds)
            and seconds >= 0 and isinstance(entry.get("info", {}), (dict, type(None))))


def finish_commit(out_dir: Path, log) -> None:
    """Move the outputs a commit list in ``PARTIAL/run_state.json`` names, then the state; drop PARTIAL.

    Without a commit list (no run completed there) PARTIAL is kept: it is resumable.
    """
    partial = out_dir / PARTIAL
    steps_done, commit = read_state(partial / STATE)
    if commit is None:
        return
    changed = _changed_staged_outputs(partial, steps_done, commit)
    if changed:
        if log is not None:
            log(f"not finishing the moves of an interrupted run into {out_dir}: {changed}; those steps are "
                f"recomputed")
        kept = {n: e for n, e in steps_done.items()
                if not _in_partial(e, partial) or stamp_problem(e.get("written"), partial) is None}
        write_json(partial / STATE, {"steps": kept})
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
        write_json(out_dir / STATE, {"steps": steps_done})
        shutil.rmtree(partial, ignore_errors=True)


def _in_partial(entry: dict, partial: Path) -> bool:
    return all((partial / o).exists() or (partial / o).is_symlink() for o in entry["outputs"])


def _changed_staged_outputs(partial: Path, steps_done: dict, commit: list) -> str | None:
    """Why an output the commit list moves is not the one its step wrote (None: every one is)."""
    for name, entry in steps_done.items():
        if set(entry["outputs"]) & set(commit) and _in_partial(entry, partial):
            problem = stamp_problem(entry.get("written"), partial)
            if problem is not None:
                return f"{name}: {problem}"
    return None


class Steps:
    """Bookkeeping of finished steps: those of earlier complete runs (``run_state.json``) and
    those computed since (``PARTIAL/run_state.json``)."""

    def __init__(self, out_dir: Path, force: bool, log, inputs=(), token: str | None = None):
        self.token = token  # the run's identity (its lock's token): stamped on what it writes
        self.out_dir = out_dir
        self.partial = out_dir / PARTIAL
        self.inputs = inputs
        self.log = log
        with warnings.catch_warnings():
            if force:  # read only to find the outputs it replaces: a damaged state is no news then
                warnings.simplefilter("ignore")
            # the complete run's steps: what it wrote, even when --force recomputes every step
            self.previous = read_state(out_dir / STATE)[0]
        self.committed = {} if force else self.previous
        self.staged = {} if force else read_state(self.partial / STATE)[0]
        self.where: dict[str, Path] = {}  # step -> the directory its outputs are read from
        self.timings: dict[str, float] = {}
        self.reused: list[str] = []

    def _found(self, name: str, key: str) -> tuple[dict, Path] | None:
        """``(entry, directory)`` of a finished step ``name`` with ``key`` whose outputs exist (None: none)."""
        for state, where in ((self.staged, self.partial), (self.committed, self.out_dir)):
            entry = state.get(name)
            if entry and entry["key"] == key and all((where / o).exists() for o in entry["outputs"]):
                problem = stamp_problem(entry.get("written"), where)
                if problem is None:
                    return entry, where
                self.log(f"[{name}] not reused: {problem}")
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
        """Where step ``name``'s output ``file`` is: where it was found, or PARTIAL for a new one
        (made here if missing, and never through a link: :func:`embdebias._outdir.make_dirs`)."""
        where = self.where.get(name)
        return (where if where is not None else make_dirs(self.out_dir, PARTIAL)) / file

    def entry(self, name: str) -> dict:
        """The record of step ``name`` as used by this run ({} if it did not run)."""
        where = self.where.get(name)
        if where is None:
            return {}
        return (self.staged if where == self.partial else self.committed)[name]

    def record(self, name: str, key: str, outputs: list[str], seconds: float, extra=None) -> None:
        self.timings[name] = seconds
        make_dirs(self.out_dir, PARTIAL)
        self.staged[name] = {"key": key, "outputs": outputs, "seconds": seconds, **(extra or {}),
                             "written": stamp(self.partial, outputs, self.token)}
        self.where[name] = self.partial
        write_json(self.partial / STATE, {"steps": self.staged}, self.inputs)
        self.log(f"[{name}] done in {seconds:.1f} s")

    def commit(self) -> None:
        """Move this run's new outputs, then its report, then its state into the output directory."""
        new = [name for name, where in self.where.items() if where == self.partial]
        for name in new:  # only what this run wrote (or reused, checked then), unchanged since, is promoted
            check_stamp(self.staged[name]["written"], self.partial, what=f"{name} step's output",
                        token=None if name in self.reused else self.token)
        moves = [o for name in new for o in self.staged[name]["outputs"]] + list(REPORT_FILES)
        final = {**self.committed, **{name: self.staged[name] for name in new}}
        stale = self._stale_outputs(new)
        # The commit list is written first: a run killed during the moves is finished by the next one.
        write_json(self.partial / STATE, {"steps": final, "commit": moves}, self.inputs)
        finish_commit(self.out_dir, None)
        for name, path in stale:
            self.log(f"[{name}] removed {path.name}: an earlier run's output that this run's {name} step no "
                     f"longer writes (--save), which the report would contradict")
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()

    def _stale_outputs(self, new: list[str]) -> list[tuple[str, Path]]:
        """``(step, path)`` of the files that an earlier run's step wrote and this run's same step
        does not (a method whose vectors are no longer saved), unchanged since they were
        written; a file changed by someone else since is left where it is."""
        stale = []
        for name in new:
            before = self.previous.get(name)
            gone = [o for o in (before or {}).get("outputs", ()) if o not in self.staged[name]["outputs"]]
            if gone and stamp_problem(before.get("written"), self.out_dir) is None:
                stale += [(name, self.out_dir / o) for o in gone if (self.out_dir / o).exists()]
        return stale
