"""A run's output plan and its safety checks, all made before anything is loaded or written.

The whole output plan (:func:`planned_outputs`) is checked first: no output may be an
input, a list file or a companion of one, a file where a directory goes or the
reverse, or a symbolic link (:mod:`embdebias._outdir`: a link planted in the output
directory is refused, never followed nor replaced), and the directory must be the run's
own (marked by :data:`MARKER` or holding ``run_state.json``), empty or new. Another
non-empty directory is refused unless ``force=True``, and even then only the files named
in the plan are replaced: nothing else in it is ever deleted.
"""

from __future__ import annotations

from pathlib import Path

from .._atomic import check_output, check_replaceable
from ..debias.table import DEBIASERS, DEFAULT_METHODS
from .._lock import LOCK_SUFFIX
from .._outdir import check_distinct, check_name, inside, is_own_file
from ..errors import EmbdebiasError

# Output names and the format of a name come from one table in embdebias.io.
from ..io import EXTENSIONS, output_companions
from ..io import output_name as _output_name
from ..io.native import NATIVE_FILES as _NATIVE_FILES

STATE = "run_state.json"
#: Marks a directory as a run's output directory; written before any other output.
MARKER = ".embdebias-run"
#: Where a run keeps what it computed until it is complete (see :mod:`embdebias.pipeline.state`).
PARTIAL = "embdebias-partial"
#: The report files, written last, in this order: the report (JSON, Markdown), its one-file HTML page and
#: the bias card (report/card.py).
REPORT_FILES = ("report.json", "report.md", "report.html", "report.card.json", "report.card.md")
#: The steps besides one per debiasing method that record outputs in run_state.json.
FIXED_STEPS = ("check_original", "expand", "evaluate", "plot")
EXPANDED_FILE = "gender_specific_expanded.txt"
EVALUATION_FILE = "evaluation.json"
EVALUATION_BULK = "evaluation.parquet"  # the evaluation's bulk arrays (per pair, per word), named in its JSON
PLOT_FILE = "occupations.png"
#: Every figure of the run (report/figures.py's RUN_FIGURES): the occupations, residual bias, WEAT,
#: the methods' trade-off, each group on the attribute's subspace, the agreement between metric families.
FIGURE_FILES = (PLOT_FILE, "residual.png", "weat.png", "tradeoff.png", "groups.png", "agreement.png")


def steps() -> tuple[str, ...]:
    """Every step name a run_state.json may hold: the fixed ones and one per registered method."""
    return FIXED_STEPS + tuple(DEBIASERS)


def companions(name: str, format: str) -> list[str]:
    """Names of the files written beside the output ``name`` (:func:`embdebias.io.output_companions`)."""
    return [p.name for p in output_companions(name, format)]


def method_output(method: str, format: str) -> str:
    """The file name of ``method``'s debiased embedding in ``format``."""
    return _output_name(DEBIASERS[method].output_stem, format)


def params_output(method: str) -> str:
    """The file name of ``method``'s fitted parameters (:meth:`~embdebias.debias._base.Debiaser.save_params`)."""
    return f"{DEBIASERS[method].output_stem}.params.npz"


def planned_outputs(format: str = "native", *, methods=None, expand: bool = False,
                    strict: bool = False, saved=None) -> dict[str, bool]:
    """Every name a run may write in its output directory, each with whether it is a directory.

    Parameters
    ----------
    format : str
        Format of the debiased embeddings.
    methods : sequence of str, optional
        The run's debiasing methods (default: today's default, hard and soft).
    expand, strict : bool
        The run's ``expand`` and ``strict``, which add an output each.
    saved : callable, optional
        ``saved(method)``: whether the method's vectors are written (default: every one's);
        every method's fitted parameters are.

    Returns
    -------
    dict of str to bool
    """
    plan = {}
    for method in DEFAULT_METHODS if methods is None else methods:
        plan[params_output(method)] = False
        if saved is not None and not saved(method):
            continue
        name = method_output(method, format)
        plan[name] = format == "native"
        plan.update(dict.fromkeys(companions(name, format), False))
    # an evaluation's JSON has its bulk arrays in a Parquet file beside it (Report.to_json)
    extra = [EXPANDED_FILE] * expand + ["check_original.json", "check_original.parquet"] * strict
    plan.update(dict.fromkeys([EVALUATION_FILE, EVALUATION_BULK, *FIGURE_FILES, *extra, *REPORT_FILES, STATE,
                               MARKER], False))
    plan[PARTIAL] = True
    return plan


def known_names() -> set[str]:
    """Every output name a run_state.json may list (any format, any registered method, any options)."""
    return {name for fmt in EXTENSIONS for name in planned_outputs(fmt, methods=tuple(DEBIASERS), expand=True,
                                                                     strict=True)}


def is_run_directory(path) -> bool:
    """True if ``path`` is a directory that ``run`` wrote (its :data:`MARKER` or ``run_state.json``,
    a regular file: a link there is nothing ``run`` made)."""
    path = Path(path)
    return path.is_dir() and (is_own_file(path / MARKER) or is_own_file(path / STATE))


#: The names in a run's output directory that the run reads back or enters as its own: a link at
#: one of them is refused (:mod:`embdebias._outdir`), never followed.
OWN_NAMES = (PARTIAL, STATE, MARKER)


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
    for name in OWN_NAMES:
        inside(out_dir, name, directory=name == PARTIAL)
    # A lock file left by a killed writer does not make a directory someone else's.
    if out_dir.is_dir() and not is_run_directory(out_dir) and any(
            not q.name.endswith(LOCK_SUFFIX) for q in out_dir.iterdir()):
        _check_foreign_dir(out_dir, plan, force, log)
    for name, is_dir in plan.items():  # each one file name in out_dir, none a link (embdebias._outdir)
        _check_planned(inside(out_dir, name, directory=is_dir), is_dir, inputs)


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


def run_scored(out_dir) -> bool:
    """Whether a finished run in ``out_dir`` scored anything (a run of several attributes: any of them)."""
    import json

    from ..report import Report
    from ..report.summary import scored

    out_dir = Path(out_dir)
    summary = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    dirs = [inside(out_dir, name, directory=True) for name in summary.get("attributes", {})] or [out_dir]
    return any(scored(Report.from_json(d / EVALUATION_FILE)) for d in dirs)


def attribute_dirs(out_dir, attrs) -> dict:
    """``{name: out_dir/name}`` of the attributes of a run of several: each name one path component
    under the output-name rule (:mod:`embdebias._outdir`; an attribute file's name is checked when it
    is read, an :class:`~embdebias.data.attributes.Attribute` built in Python here), none of the
    directory's own files (``report.md``...), no two equal case aside, none a link.

    Raises
    ------
    EmbdebiasError
        Before anything is written, naming the attribute's file and the name.
    """
    out_dir = Path(out_dir)
    reserved = {n.casefold() for n in (*REPORT_FILES, *OWN_NAMES)}
    dirs = {}
    for attr in attrs:
        where = f"{attr.path or 'attribute'}: name"
        check_name(attr.name, where)
        if attr.name.casefold() in reserved:
            raise EmbdebiasError(f"{where}: {attr.name!r} is the name of a file of the run's own in {out_dir}; "
                                 f"rename the attribute")
        dirs[attr.name] = inside(out_dir, attr.name, directory=True)
    check_distinct(list(dirs), f"{out_dir}: the attributes' subdirectories")
    return dirs


def check_attributes_dir(out_dir, names, *, force: bool = False) -> None:
    """The directory of a run of several attributes: new, empty, or a run's own (its marker), each
    attribute's subdirectory a run's own or new (checked by that run's plan); with ``force``, a
    foreign directory is written into (only the report files and the subdirectories)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise EmbdebiasError(f"{out_dir}: exists and is not a directory")
    for name in OWN_NAMES:
        inside(out_dir, name, directory=name == PARTIAL)
    if out_dir.is_dir() and not is_run_directory(out_dir) and not force and any(
            not q.name.endswith(LOCK_SUFFIX) for q in out_dir.iterdir()):
        raise EmbdebiasError(f"{out_dir}: an existing directory that is not an earlier run's output; choose a new "
                             f"or empty directory, or use --force to write into it anyway")
    if (out_dir / STATE).is_file() and not force:
        raise EmbdebiasError(f"{out_dir}: holds the run of one attribute; a run of several writes each into its own "
                             f"subdirectory: choose another --out-dir, or use --force to write beside it")
    for name in (*REPORT_FILES, MARKER):
        check_replaceable(out_dir / name, directory=False)
    for name in names:
        if (out_dir / name).exists() and not (out_dir / name).is_dir():
            raise EmbdebiasError(f"{out_dir / name}: exists and is not a directory (the {name} attribute's run "
                                 f"goes there)")
        inside(out_dir, name, directory=True)


def holds_attributes(out_dir) -> bool:
    """Whether ``out_dir`` holds a run of several attributes (its report.json lists them; a link there,
    to ``/dev/zero`` say, is not read: the plan refuses it)."""
    import json

    path = Path(out_dir) / "report.json"
    if not is_own_file(path):
        return False
    try:
        return "attributes" in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def check_plan(out_dir, source, options, *, log) -> tuple:
    """Check the whole output plan of a run of ``source`` with ``options`` (:func:`check_out_dir`);
    return the files it reads."""
    from ..evaluate import test_files

    inputs = input_paths(source, options.definitional, options.equalize, options.gender_specific,
                         options.seeds, options.sembias, *test_files(options.tests or ()),
                         *(item.partition("=")[2] for item in options.lexicons),  # --lexicon files
                         *(a for a in options.attribute or () if not _bundled_attribute(a)))
    plan = planned_outputs(options.format, methods=options.methods, expand=options.expand, strict=options.strict,
                           saved=options.saved)
    if holds_attributes(out_dir) and not options.force:
        raise EmbdebiasError(f"{out_dir}: holds a run of several attributes (one subdirectory each); choose another "
                             f"--out-dir for a run of one, or use --force to write beside them")
    check_out_dir(out_dir, plan, force=options.force, inputs=inputs, log=log)
    return inputs


def _bundled_attribute(name: str) -> bool:
    from ..data.attributes import bundled_attributes

    return name in bundled_attributes()


def input_paths(source, *lists) -> tuple:
    """The files a run reads: the input (unless the built-in default) and every list given as a file."""
    from ..io import DEFAULT_NAME
    from ..data.wordlists import _is_path_like, is_bundled_name

    paths = [] if source is None or str(source) == DEFAULT_NAME else [source]
    return tuple(paths + [v for v in lists if v is not None and _is_path_like(v) and not is_bundled_name(v)])
