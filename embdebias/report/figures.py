"""Matplotlib figures of a report, each with its caption.

* :func:`occupation_figure`: occupations projected on the original gender direction, one panel
  per column; the panel value is the report's direct bias (same name, same words, same rule
  for missing words: the evaluation's ``max_missing``); gender-specific words, which hard
  debiasing keeps by design, are drawn hatched.
* :func:`residual_figure`: the most biased words of the original (the residual test's
  clustering words), placed by a 2-D PCA of each column and coloured by their original bias
  (cosine with she - he, Gonen & Goldberg's figure), the clustering accuracy in each title.
* :func:`weat_forest_figure`: the WEAT effect sizes with their intervals across columns.
* :func:`agreement_figure`: Kendall's tau-b between every two metric families' rankings of the
  columns (or of a sweep's points), each cell annotated with its interval.

:func:`run_figures` draws them (:data:`RUN_FIGURES`) for ``embdebias run`` and returns their captions.

Each figure function returns one :class:`~embdebias.report._notebook.ReportFigure`, which a
notebook displays on its own; the facts its caption needs are on ``fig.info`` (a dict), so
``residual_caption(fig.info)`` gives the caption of ``fig = residual_figure(...)``.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from .._warn import warn
from .. import wordlists
from .._atomic import atomic_file
from ..embedding import Embedding, as_embedding
from ..errors import EmbdebiasError, MissingWordsError
from ..metrics.projection import projections
from ..subspace import MissingWordsWarning, resolve_subspace
from .colors import ORIGINAL_COLOR, method_colors

SHE_COLOR = "#c2185b"
HE_COLOR = "#1565c0"
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def occupation_projections(embeddings: dict[str, Embedding], words=None, *, subspace=None,
                           max_missing: float = 0.5, lists: str = wordlists.DEFAULT_LISTS,
                           ) -> tuple[list[str], dict[str, np.ndarray], list[str]]:
    """Projections of occupation words on the gender direction of the first embedding.

    The direction is fitted on the first embedding (the original, in the usual
    original / soft / hard comparison) and the same direction is used for every
    embedding, so the panels share one axis: positive is the "she" side.

    ``words`` defaults to the professions of ``lists`` (Bolukbasi et al.'s 320 for
    "published"), and the direction to one fitted on its definitional pairs.

    Returns ``(words, {name: projections}, missing)``: the words present in every
    embedding, their cosine with the direction per embedding, and the words left out.
    """
    if not embeddings:
        raise EmbdebiasError("plot needs at least one embedding")
    words = wordlists.resolve_words(words, "professions", lists)
    first = next(iter(embeddings.values()))
    direction = resolve_subspace(subspace, first, lists=lists).direction_
    if not words:
        raise EmbdebiasError("occupations: the word list is empty")
    present = [w for w in words if all(w in e for e in embeddings.values())]
    present_set = set(present)
    missing = [w for w in words if w not in present_set]
    if len(missing) > max_missing * len(words):
        raise MissingWordsError(
            f"occupations: {len(missing)} of {len(words)} words are missing from at least one "
            f"embedding (more than {max_missing:.0%}): {', '.join(missing[:20])}", missing)
    if not present:
        raise MissingWordsError(f"occupations: none of the {len(words)} words is in every embedding",
                                missing)
    if missing:
        warn(f"occupations: {len(missing)} word(s) left out (not in every embedding): "
             f"{', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}",
             MissingWordsWarning)
    # The metric itself, on the words every panel has: one definition of a projection.
    proj = {name: np.asarray(projections(emb, present, subspace=direction, max_missing=0.0,
                                         lowercase=False).projections)
            for name, emb in embeddings.items()}
    return present, proj, missing


#: Most panels in a row of a figure with one panel per column (more wrap to further rows).
MAX_PANELS_PER_ROW = 5


def panel_grid(n: int) -> tuple[int, int]:
    """``(rows, columns)`` of a figure with ``n`` panels, at most :data:`MAX_PANELS_PER_ROW` a row."""
    rows = -(-n // MAX_PANELS_PER_ROW)
    return rows, -(-n // rows)


#: Label of the direct-bias row (as the report's table names it).
DIRECT_BIAS_LABEL = "DirectBias (original direction)"


def sides(attribute="gender") -> dict:
    """How the figures name a two-group attribute's direction: ``{"name", "positive", "negative",
    "specific"}``: the attribute's ``direction_words`` (gender: she side positive, as every
    projection of the project), else its groups (the first positive, as its defining sets are
    ordered)."""
    from ..data.attributes import as_attribute

    attr = as_attribute(attribute)
    positive, negative = attr.direction_words or attr.groups[:2]
    return {"name": attr.name, "positive": positive, "negative": negative, "specific": attr.specific_name}


def occupation_figure(embeddings, words=None, *, top: int = 20, subspace=None,
                      lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.2, info: dict | None = None,
                      attribute="gender"):
    """A figure with one panel per embedding: occupations sorted by projection.

    ``top`` selects the ``top`` most she-leaning and ``top`` most he-leaning
    occupations of the FIRST embedding. Every panel shows those same words in the
    same rows, sorted by the first embedding's projection, so a word's bar can be
    followed across panels; bars are coloured by side (she-side positive, he-side
    negative) in each panel. ``attribute``: a two-group
    :class:`~embdebias.data.attributes.Attribute` other than gender, whose neutral words,
    specific words and group names are used instead (``subspace``: its direction).
    """
    # A bare Figure (no pyplot): no GUI backend, no global state to clean up.
    from ._notebook import ReportFigure as Figure

    if not isinstance(embeddings, dict):
        embeddings = {e.name: e for e in map(as_embedding, embeddings)}
    present, proj, missing = occupation_projections(embeddings, words, subspace=subspace, lists=lists,
                                                    max_missing=max_missing)
    first = proj[next(iter(proj))]
    order = np.argsort(first)
    if top and 2 * top < len(present):
        keep = np.concatenate([order[:top], order[-top:]])
    else:
        keep = order
    shown = [present[i] for i in keep]
    lim = max(max(np.abs(p[keep]).max() for p in proj.values()) * 1.1, 0.05)

    rows, cols = panel_grid(len(proj))
    height = max(4.0, 0.22 * len(shown) + 1.5)
    # constrained layout keeps the figure's title above the panels' (tight_layout ignores it)
    fig = Figure(figsize=(4.2 * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(proj):]:
        ax.set_visible(False)
    idx = np.argsort(first[keep])
    side = sides(attribute)
    specific = _specific_words(attribute, lists)
    hatched = [shown[i] in specific for i in idx]
    labels = [shown[i] for i in idx]
    for ax, (name, p) in zip(axes, proj.items()):
        _occupation_panel(ax, p[keep][idx], labels, hatched, lim, side)
        ax.set_title(f"{name}\n{DIRECT_BIAS_LABEL}\n{np.abs(p).mean():.3f} over {len(present)} words", fontsize=10)
    source = _words_source(words, lists)
    fig.suptitle(f"Occupations ({source}) on the {side['name']} direction of {next(iter(proj))}", fontsize=11)
    if info is not None:
        info.update(source=source, shown=len(shown), present=len(present), total=len(present) + len(missing),
                    missing=len(missing), specific=[w for w, h in zip(labels, hatched) if h],
                    first=next(iter(proj)), **{f"side_{k}": v for k, v in side.items()})
    return fig


def _specific_words(attribute, lists: str) -> set:
    """The words debiasing keeps (hatched): the attribute's (gender's: the list of ``lists``)."""
    from ..data.attributes import as_attribute

    return set(as_attribute(attribute, lists).specific_words)


def _words_source(words, lists: str) -> str:
    """The name of the occupation list (a bundled name or file), or "given words"."""
    named = words is None or isinstance(words, (str, bytes, os.PathLike))
    return wordlists.describe("professions" if words is None else words, lists)["name"] if named else "given words"


def _occupation_panel(ax, vals, labels, hatched, lim, side: dict) -> None:
    """One panel's bars (gender-specific words hatched and lighter), axis and labels."""
    bars = ax.barh(np.arange(len(vals)), vals, color=[SHE_COLOR if v > 0 else HE_COLOR for v in vals],
                   height=0.75)
    for bar, h in zip(bars, hatched):
        if h:
            bar.set_hatch("///")
            bar.set_alpha(0.45)
    ax.set_yticks(np.arange(len(vals)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(-0.7, len(vals) - 0.3)
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set_xlim(-lim, lim)
    ax.set_xlabel(f"projection on {side['name']} direction\n({side['negative']} side  <  0  <  "
                  f"{side['positive']} side)", fontsize=8)
    ax.grid(axis="x", alpha=0.3)


def occupation_caption(info: dict) -> str:
    """The occupation figure's caption from :func:`occupation_figure`'s ``info``."""
    left = f" ({info['missing']} more are not in every column and are left out)" if info["missing"] else ""
    name, pos, neg = (info.get("side_name", "gender"), info.get("side_positive", "she"),
                      info.get("side_negative", "he"))
    specific = (f" Hatched bars ({', '.join(info['specific'])}) are {info.get('side_specific', 'gender-specific')} "
                f"words: hard debiasing keeps their projection by design." if info["specific"] else "")
    return (f"Occupations on the {name} direction of '{info['first']}' ({pos} side positive): the "
            f"{info['shown'] // 2} most {pos}-leaning and {info['shown'] // 2} most {neg}-leaning of the "
            f"{info['present']} of {info['total']} words of {info['source']} present in every column{left}, "
            f"drawn in the same rows in every panel. The value in each panel title is the table's "
            f"{DIRECT_BIAS_LABEL}: the mean |projection| over all {info['present']} words, not only the "
            f"ones drawn.{specific}")


def plot_occupations(embeddings, out, words=None, *, top: int = 20, subspace=None,
                     lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.2,
                     info: dict | None = None, attribute="gender") -> Path:
    """Draw :func:`occupation_figure` and save it atomically to ``out`` (PNG, SVG or PDF)."""
    out = Path(out)
    if top < 0:
        raise EmbdebiasError(f"top must be >= 0, got {top}")
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise EmbdebiasError(f"{out}: unknown figure format {out.suffix!r}; use .png, .svg or .pdf")
    fig = occupation_figure(embeddings, words, top=top, subspace=subspace, lists=lists,
                            max_missing=max_missing, info=info, attribute=attribute)
    values = embeddings.values() if isinstance(embeddings, dict) else embeddings
    return _save(fig, out, [getattr(e, "path", None) for e in values])


def _save(fig, out, inputs=()) -> Path:
    out = Path(out)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise EmbdebiasError(f"{out}: unknown figure format {out.suffix!r}; use .png, .svg or .pdf")
    with atomic_file(out, inputs=[i for i in inputs if i]) as tmp:
        fig.savefig(tmp, format=fmt, dpi=120)
    return out


# -- the residual bias ----------------------------------------------------------------------------


def _pca2(x: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    return x @ vt[:2].T


def _residual_words(report, first: str) -> tuple[str, dict]:
    """``(unit, {group: words})`` of the residual test's clustering words on the first column."""
    for key, res in report.details.get(first, {}).items():
        words = (res or {}).get("cluster_words") if key.startswith("residual/") else None
        if isinstance(words, dict) and len(words) > 1 and all(isinstance(v, list) for v in words.values()):
            return key.split("/", 1)[1], words
    raise EmbdebiasError("residual figure: the report has no residual test (with its words) on the first column")


def _residual_colours(original, groups: dict, lowercase: bool):
    """``(words, colour values, colour map, limits, label)``: gender's words coloured by their bias in
    the original (cosine with she - he), k groups' words by their group."""
    from .._rows import unit_rows
    from ..metrics.residual import male_direction

    words = [w for g in groups for w in groups[g]]
    rows = original.rows(words)
    keep = rows >= 0
    words = [w for w, k in zip(words, keep) if k]
    if set(groups) == {"male", "female"}:
        direction, _ = male_direction(original, ("he", "she"), lowercase)
        bias = -(unit_rows(original.take(rows[keep], np.float64)) @ direction)  # she - he: female positive
        lim = float(np.abs(bias).max()) or 1.0
        return words, bias, "coolwarm", (-lim, lim), "original bias: cos(word, she - he)"
    index = np.array([i for i, g in enumerate(groups) for _ in groups[g]], dtype=float)[keep]
    return words, index, "tab10", (0, 9), "group: " + ", ".join(f"{i} {g}" for i, g in enumerate(groups))


def residual_figure(embeddings: dict, report, *, lowercase: bool = True):
    """One panel per column: the residual test's clustering words (gender: the most male- and
    female-biased words of the first column; k groups: each group's), by a 2-D PCA of their unit
    vectors in that column, coloured by their bias in the first column (cosine with she - he) or
    by their group, the clustering accuracy of the report in each title. Raises when the report
    has no residual test. Returns the figure; its caption's facts on ``fig.info``."""
    from ._notebook import ReportFigure as Figure

    from .._rows import unit_rows

    first = next(iter(embeddings))
    unit, groups = _residual_words(report, first)
    words, colour, cmap, (lo, hi), label = _residual_colours(embeddings[first], groups, lowercase)
    rows, cols = panel_grid(len(embeddings))
    fig = Figure(figsize=(4.0 * cols + 1.0, 4.6 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(embeddings):]:
        ax.set_visible(False)
    for ax, (name, emb) in zip(axes, embeddings.items()):
        col_rows = emb.rows(words)
        present = col_rows >= 0
        xy = _pca2(unit_rows(emb.take(col_rows[present], np.float64)))
        art = ax.scatter(xy[:, 0], xy[:, 1], c=colour[present], cmap=cmap, vmin=lo, vmax=hi, s=6, linewidths=0)
        cell = report.cells.get(("residual", unit, "cluster_accuracy"), {}).get(name)
        acc = "n/a" if cell is None or cell.value is None else f"{cell.value:.2f}"
        ax.set_title(f"{name}\nclustering accuracy {acc}", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    if set(groups) == {"male", "female"}:
        fig.colorbar(art, ax=list(axes[:len(embeddings)]), shrink=0.8, label=label)
    else:  # k groups: a legend of the groups' colours
        from matplotlib.lines import Line2D

        cmap_k = art.get_cmap()
        axes[0].legend(handles=[Line2D([], [], marker="o", linestyle="none", color=cmap_k(i / 9), label=g)
                                for i, g in enumerate(groups)], fontsize=7, loc="best")
    fig.suptitle(f"The {len(words)} most {unit}-biased words of '{first}' in each column (2-D PCA)", fontsize=11)
    fig.info = {"words": len(words), "first": first, "unit": unit,
                 "groups": None if set(groups) == {"male", "female"} else list(groups)}
    return fig


def residual_caption(info: dict) -> str:
    if info.get("groups"):
        chance = 1 / len(info["groups"])
        return (f"The residual test's clustering words of each {info['unit']} group ({', '.join(info['groups'])}; "
                f"{info['words']} in all) in '{info['first']}', placed by a 2-D PCA of their vectors in each column "
                f"and coloured by their group. Colours that still separate after debiasing mean the attribute is "
                f"still recoverable; each title gives the clustering accuracy of the table ({chance:.2f} is chance).")
    return (f"The {info['words'] // 2} most male- and {info['words'] // 2} most female-biased words of "
            f"'{info['first']}' (the residual test's clustering words, gender-specific words left out), placed by "
            f"a 2-D PCA of their vectors in each column and coloured by their bias in '{info['first']}' "
            f"(cosine with she - he: red female, blue male). Colours that still separate after debiasing "
            f"mean the bias is still recoverable; each title gives the clustering accuracy of the table "
            f"(0.5 is chance).")


# -- WEAT effect sizes ---------------------------------------------------------------------------


def weat_forest_figure(report):
    """WEAT effect sizes with their intervals, one row per test, one marker per column.

    Returns the figure; its caption's facts on ``fig.info``."""
    from ._notebook import ReportFigure as Figure

    tests = [t for (m, t, s) in report.rows if m == "weat" and s == "effect_size"]
    if not tests:
        raise EmbdebiasError("WEAT figure: the report has no WEAT effect sizes")
    n = len(report.embeddings)
    fig = Figure(figsize=(7.5, 0.55 * len(tests) * max(1, n / 2) + 1.6))
    ax = fig.subplots()
    colors = method_colors(report.embeddings, report.embeddings[0])
    for j, emb in enumerate(report.embeddings):
        y = np.arange(len(tests)) + (j - (n - 1) / 2) * (0.7 / max(n, 1))
        for yi, t in zip(y, tests):
            cell = report.cells[("weat", t, "effect_size")].get(emb)
            if cell is None or cell.value is None:
                continue
            err = None if not cell.interval else [[cell.value - cell.ci_low], [cell.ci_high - cell.value]]
            ax.errorbar(cell.value, yi, xerr=err, fmt="*" if j == 0 else "o", ms=6 if j == 0 else 4,
                        color=colors[emb], capsize=2, label=emb if t == tests[0] else None)
    ax.axvline(0, color="0.4", linewidth=0.8)
    ax.set_yticks(np.arange(len(tests)))
    ax.set_yticklabels(tests, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("WEAT effect size d (0 is fairer)")
    ax.legend(fontsize=8, loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.info = {"tests": len(tests), "level": report.params.get("bootstrap_level", 0.95)}
    return fig


def weat_caption(info: dict) -> str:
    return (f"WEAT effect sizes d of the {info['tests']} tests, one marker per column, with their "
            f"{info['level']:.0%} bootstrap intervals (the table's). 0 is fairer; an interval that crosses 0 "
            f"is compatible with no association.")


# -- agreement between metric families ------------------------------------------------------------


def _agreement_of(source) -> dict:
    """The agreement dict of ``source``: a report's ``trust["agreement"]`` or the dict itself."""
    agreement = source.trust.get("agreement") if hasattr(source, "trust") else source
    if not agreement or len(agreement.get("families") or ()) < 2:
        columns = len(getattr(source, "embeddings", None) or (agreement or {}).get("columns") or ())
        raise EmbdebiasError(f"agreement figure: needs three or more columns scored by two or more metric families "
                             f"and the trust readings (evaluate(..., trust=True)); got {columns} column(s)")
    return agreement


def agreement_figure(source):
    """Kendall's tau-b between every two metric families' rankings of the columns, as a heat map.

    Each cell is coloured by tau (-1 blue: the two families rank the columns in reverse; 1 red:
    alike) and annotated with tau and its interval; the diagonal is 1 by definition and left
    without an interval. Each family ranks in its own direction, fairer first (the ``"fairer"`` of
    its headline; a sweep's quality metric, the best first), so a tau says whether two families
    agree on which column is fairer.

    Parameters
    ----------
    source : Report or dict
        A report evaluated with the trust readings (its ``trust["agreement"]``,
        :func:`embdebias.metrics.trust.agreement_matrix`) or such a dict: ``{"families",
        "columns", "tau", "ci_low", "ci_high"}`` (a sweep's, over its points, is one).

    Returns
    -------
    ReportFigure
        A matplotlib figure that a notebook displays; ``fig.info`` is the agreement dict (for
        :func:`agreement_caption`).

    Raises
    ------
    EmbdebiasError
        No agreement to draw (fewer than three columns or two families, or trust off).
    """
    from matplotlib import colormaps

    from ._notebook import ReportFigure as Figure

    agreement = _agreement_of(source)
    fams = list(agreement["families"])
    k = len(fams)
    tau = np.array([[np.nan if v is None else v for v in row] for row in agreement["tau"]], dtype=np.float64)
    fig = Figure(figsize=(2.4 + 1.25 * k, 1.6 + 0.95 * k), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(tau), vmin=-1, vmax=1, cmap=colormaps["RdBu_r"].with_extremes(bad="0.85"))
    for i in range(k):
        for j in range(k):
            ax.text(j, i, _agreement_cell(agreement, i, j), ha="center", va="center", fontsize=7,
                    color="white" if np.isfinite(tau[i, j]) and abs(tau[i, j]) > 0.6 else "black")
    ax.set_xticks(range(k), fams, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(k), fams, fontsize=8)
    fig.colorbar(image, ax=ax, label="Kendall's tau-b", shrink=0.85)
    ax.set_title(f"Do the metric families rank the {len(agreement['columns'])} {agreement.get('unit', 'columns')} "
                 f"alike?\n(fairer first, each in its own direction; [interval])", fontsize=9)
    fig.info = agreement
    return fig


def _agreement_cell(agreement: dict, i: int, j: int) -> str:
    """A cell's text: tau, and below it its interval (none on the diagonal or where undefined)."""
    value = agreement["tau"][i][j]
    if value is None:
        return "n/a"
    low, high = agreement["ci_low"][i][j], agreement["ci_high"][i][j]
    return f"{value:.2f}" + (f"\n[{low:.2f}, {high:.2f}]" if i != j and low is not None and high is not None else "")


def agreement_caption(source) -> str:
    """The caption of :func:`agreement_figure`: what is ranked, how, and what the interval resamples."""
    agreement = _agreement_of(source)
    unit = agreement.get("unit", "columns")
    resampled = agreement.get("resampled") or ("the words of every row, the same words for every column "
                                               "(as the paired comparisons draw them)")
    level = agreement.get("level", 0.95)
    return (f"Kendall's tau-b between every two metric families' rankings of the {len(agreement['columns'])} "
            f"{unit} ({', '.join(agreement['families'])}): each family ranks by its bias read in its own direction "
            f"(fairer first), so 1 means the two families agree on which {unit[:-1]} is fairer and -1 that they "
            f"rank in reverse. In brackets the {level:.0%} bootstrap interval over {agreement.get('n_boot', 0)} "
            f"resamples of {resampled}. With few {unit} a tau takes few values: read the intervals.")


# -- the trade-off of the methods ---------------------------------------------------------------


def _kept(entry: dict | None, ref: dict | None, chance: float = 0.0, measure=None):
    """``(value, low, high)`` of ``entry`` as a fraction of ``ref``'s, both measured from ``chance``
    (None when either is missing or the reference sits at chance). The bounds are those of the
    paired change from ``ref`` when there is one (``ref + change`` over ``ref``: the noise the two
    columns share cancels), else of the entry's own interval."""
    from .compare import shown_change

    if entry is None or ref is None or ref["value"] - chance == 0:
        return None
    scale = ref["value"] - chance
    value = (entry["value"] - chance) / scale
    if entry.get("paired") and entry.get("change_ci_low") is not None and measure is not None:
        _, lo, hi = shown_change(entry, measure)  # the change of the number (a magnitude for a bias)
        return value, (ref["value"] + lo - chance) / scale, (ref["value"] + hi - chance) / scale
    lo, hi = entry.get("ci_low"), entry.get("ci_high")
    return (value, value if lo is None else (lo - chance) / scale, value if hi is None else (hi - chance) / scale)


def tradeoff_points(report) -> dict:
    """``{column: {"quality": (v, lo, hi), "quality_name", "quality_loss", "weat": (...), "residual": (...)}}``
    of every column but the first: the quality kept is the WORST of WordSim353, SimLex-999 and
    analogy kept (each as a fraction of the first column's, bounded by its paired change's
    interval; never an average, which would hide one test's loss), ``quality_name`` which one and
    ``quality_loss`` whether it is a loss beyond the noise; mean |WEAT d| left and the clustering
    accuracy above chance left (fractions of the first column's)."""
    from ..metrics.base import chance_level
    from .compare import MEASURES, measure_entry

    ref = report.embeddings[0]
    quality = [m for m in MEASURES if m.fairer == "higher"]
    weat = next(m for m in MEASURES if m.statistic == "weat_mean_abs_d")
    cluster = next(m for m in MEASURES if m.statistic == "cluster_accuracy")
    chance = chance_level(report)  # 1/k of k groups
    out = {}
    for emb in report.embeddings[1:]:
        kept = [(k, m, entry) for m in quality
                if (k := _kept(entry := measure_entry(report, m, emb), measure_entry(report, m, ref), measure=m))]
        worst = min(kept, key=lambda x: x[0][0]) if kept else None
        out[emb] = {"quality": worst[0] if worst else None, "quality_name": worst[1].label if worst else None,
                    "quality_loss": bool(worst and worst[2].get("outcome") == "worse"),
                    "weat": _kept(measure_entry(report, weat, emb), measure_entry(report, weat, ref), measure=weat),
                    "residual": _kept(measure_entry(report, cluster, emb), measure_entry(report, cluster, ref),
                                      chance)}
    return out


def label_offsets(xy: list, near: float = 0.04) -> list:
    """Offsets (points) of the labels of points ``xy`` (data coordinates, axes of about unit scale) so
    that labels of points close together do not overprint: each point near an earlier one takes
    the next of a few directions around it."""
    directions = [(5, 5), (5, -12), (-5, 8), (-5, -14), (5, 18), (-5, -26)]
    out = []
    for i, (x, y) in enumerate(xy):
        crowd = sum(1 for (a, b) in xy[:i] if abs(a - x) < near and abs(b - y) < near)
        out.append(directions[crowd % len(directions)])
    return out


def _tradeoff_panel(ax, points: dict, key: str, colors: dict, first: str) -> None:
    drawn = [(emb, p) for emb, p in points.items() if p["quality"] and p[key]]
    offsets = label_offsets([(p["quality"][0], p[key][0]) for _, p in drawn])
    for (emb, p), (dx, dy) in zip(drawn, offsets):
        (x, xlo, xhi), (y, ylo, yhi) = p["quality"], p[key]
        ax.errorbar(x, y, xerr=[[max(x - xlo, 0)], [max(xhi - x, 0)]], yerr=[[max(y - ylo, 0)], [max(yhi - y, 0)]],
                    fmt="o", color=colors[emb], capsize=3, label=emb)
        loss = f" ({p['quality_name']} {100 * (x - 1):+.0f} %)" if p["quality_loss"] else ""
        ax.annotate(emb + loss, (x, y), fontsize=8, xytext=(dx, dy), textcoords="offset points",
                    ha="left" if dx > 0 else "right")
    ax.plot([1], [1], marker="*", color=ORIGINAL_COLOR, ms=12, linestyle="none", label=first)
    ax.axhline(0, color="0.6", lw=0.6)
    ax.axhline(1, color="0.6", lw=0.6, ls=":")
    ax.axvline(1, color="0.6", lw=0.6, ls=":")
    ax.set_xlabel("quality kept: the worst of WordSim353, SimLex-999, analogy (fraction of the original's)",
                  fontsize=8)
    ax.grid(alpha=0.3)


def tradeoff_figure(report):
    """Bias left against quality kept, one point per method with its intervals: mean |WEAT d| left
    (left panel) and the clustering accuracy above chance left (right panel); quality kept is the
    worst quality test's (:func:`tradeoff_points`). Returns the figure; its caption's facts on
    ``fig.info``."""
    from ._notebook import ReportFigure as Figure

    points = tradeoff_points(report)
    panels = (("weat", "mean |WEAT d| left (fraction of the original's)"),
              ("residual", "clustering accuracy above chance left\n((acc - chance) / (original's - chance))"))
    drawn = [key for key, _ in panels if any(p["quality"] and p[key] for p in points.values())]
    if not drawn:
        raise EmbdebiasError("trade-off figure: the report needs a debiased column with a quality number and "
                             "mean |WEAT d| or the residual tests")
    fig = Figure(figsize=(6.0 * len(drawn), 5.4), layout="constrained")
    axes = fig.subplots(1, len(drawn), squeeze=False)[0]
    colors = method_colors(report.embeddings, report.embeddings[0])
    for ax, key in zip(axes, drawn):
        _tradeoff_panel(ax, points, key, colors, report.embeddings[0])
        ax.set_ylabel(dict(panels)[key], fontsize=9)
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(f"Bias left against quality kept, one point per method ('{report.embeddings[0]}': the star at "
                 f"1, 1)\nlower is fairer; further right keeps more quality; left of 1: a quality test lost",
                 fontsize=10)
    fig.info = {"methods": len(points), "panels": drawn, "first": report.embeddings[0],
                 "level": report.params.get("bootstrap_level", 0.95),
                 "losses": {e: p["quality_name"] for e, p in points.items() if p["quality_loss"]}}
    return fig


def tradeoff_caption(info: dict) -> str:
    what = {"weat": "mean |WEAT d| over the tests", "residual": "the residual test's clustering accuracy above "
                                                               "chance (1/k of k groups), (accuracy - chance) / "
                                                               "(original's - chance)"}
    losses = info.get("losses") or {}
    named = ("; a loss beyond the noise: " + ", ".join(f"'{e}' ({q})" for e, q in losses.items())) if losses else ""
    return (f"Bias left against quality kept for the {info['methods']} debiased columns, each as a fraction of "
            f"'{info['first']}' (the star at 1, 1): {' and, right, '.join(what[p] for p in info['panels'])}, "
            f"against the worst of WordSim353, SimLex-999 and analogy accuracy kept (never their mean, which "
            f"would hide one test's loss){named}. Bars: the {info['level']:.0%} intervals of the paired changes "
            f"from '{info['first']}' in the comparison table, scaled the same way (for the residual accuracy, "
            f"which has no paired interval, its own). Lower is fairer, further right keeps more quality; 0 is no "
            f"bias left.")


# -- each group's words on the attribute's subspace ---------------------------------------------


def group_projections(embeddings: dict, attribute, subspace) -> dict:
    """``{column: {group: (n, c) array}}``: each group's words (``attribute.group_words``, in
    every column) projected on the first ``c <= 2`` components of ``subspace`` (fitted on the
    first column), unit vectors."""
    from .._rows import unit_rows

    comps = np.asarray(subspace.components_, dtype=np.float64)[:2]
    words = {g: [w for w in attribute.group_words[g] if all(w in e for e in embeddings.values())]
             for g in attribute.groups}
    empty = [g for g, ws in words.items() if not ws]
    if empty:
        raise MissingWordsError(f"groups figure: no word of group {empty[0]!r} of {attribute.name} is in every "
                                f"column", [])
    return {name: {g: unit_rows(emb.take(emb.rows(ws), np.float64)) @ comps.T for g, ws in words.items()}
            for name, emb in embeddings.items()}


def group_figure(embeddings: dict, attribute, subspace):
    """One panel per column: each group's words on the first one or two components of the
    attribute's subspace (a strip per group with one component), the group means marked; the
    title gives the mean distance between the group means (0: the groups are not apart). Returns the
    figure; its caption's facts on ``fig.info``."""
    from ._notebook import ReportFigure as Figure

    proj = group_projections(embeddings, attribute, subspace)
    rows, cols = panel_grid(len(proj))
    fig = Figure(figsize=(4.0 * cols, 3.8 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(proj):]:
        ax.set_visible(False)
    colors = ["#c2185b", "#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#455a64"]
    lim = 1.1 * max(float(np.abs(xy).max()) for groups in proj.values() for xy in groups.values())
    for ax, (name, groups) in zip(axes, proj.items()):
        means = []
        for j, (g, xy) in enumerate(groups.items()):
            y = xy[:, 1] if xy.shape[1] > 1 else j + np.linspace(-0.25, 0.25, len(xy))
            ax.scatter(xy[:, 0], y, s=10, color=colors[j % len(colors)], alpha=0.6, label=g)
            means.append(xy.mean(axis=0))
            ax.scatter([means[-1][0]], [means[-1][1] if xy.shape[1] > 1 else j], marker="X", s=90,
                       color=colors[j % len(colors)], edgecolor="black")
        ax.axvline(0, color="0.5", lw=0.6)
        ax.set_xlim(-lim, lim)  # one scale in every panel
        ax.set_title(f"{name}\nmean distance of group means {mean_distance(means):.3f}", fontsize=10)
        ax.set_xlabel("component 1", fontsize=8)
        if next(iter(groups.values())).shape[1] > 1:
            ax.set_ylim(-lim, lim)
            ax.set_ylabel("component 2", fontsize=8)
        else:  # one component: a strip per group
            ax.set_yticks(range(len(groups)))
            ax.set_yticklabels(list(groups), fontsize=8)
    axes[0].legend(fontsize=7, loc="best")
    first = next(iter(proj))
    fig.suptitle(f"{attribute.name}: each group's words on the subspace of '{first}'", fontsize=11)
    n = {g: len(xy) for g, xy in proj[first].items()}
    fig.info = {"attribute": attribute.name, "groups": n, "components": next(iter(proj[first].values())).shape[1],
                 "first": first}
    return fig


def mean_distance(means) -> float:
    """The mean Euclidean distance between every two group means (in the subspace's coordinates)."""
    pairs = [(a, b) for i, a in enumerate(means) for b in means[i + 1:]]
    return float(np.mean([np.linalg.norm(a - b) for a, b in pairs])) if pairs else 0.0


def group_caption(info: dict) -> str:
    words = ", ".join(f"{g} ({n} words)" for g, n in info["groups"].items())
    where = "first two components" if info["components"] > 1 else "one direction (a strip per group)"
    return (f"Each group's words of the {info['attribute']} attribute ({words}, those in every column), as unit "
            f"vectors projected on the {where} of the {info['attribute']} subspace fitted on '{info['first']}' "
            f"(its defining sets), one panel per column on one scale; crosses mark the group means, and each title "
            f"gives the mean distance between them. These are the groups' own words, which debiasing keeps when "
            f"they are among the specific words (hard debias keeps them by design): the figure shows where the "
            f"groups lie, and for words neutralized, whether they were brought together (distance 0); it says "
            f"nothing of what other directions still encode (see the residual figure).")


def _draw_occupations(embeddings, report, path, opts) -> str:
    attribute = opts["attribute"]
    if not attribute.is_binary:
        raise EmbdebiasError(f"occupations figure: the {attribute.name} attribute has {attribute.k} groups, so no "
                             f"one direction with two sides; each group's words are in groups.png")
    if not attribute.neutral_words:
        raise EmbdebiasError(f"occupations figure: the {attribute.name} attribute has no neutral words")
    info: dict = {}
    named = attribute.list_names.get("neutral_words")  # a bundled list is named by the caption
    with warnings.catch_warnings():  # the caption states the words left out, once
        warnings.simplefilter("ignore", MissingWordsWarning)
        plot_occupations(embeddings, path, named or list(attribute.neutral_words),
                         subspace=opts["subspace"], lists=opts["lists"], max_missing=opts["max_missing"], info=info,
                         attribute=attribute)
    if not named:
        info["source"] = f"the {attribute.name} attribute's neutral words"
    return occupation_caption(info)


def _draw(figure, caption):
    """A drawer of :data:`RUN_FIGURES` from a figure function of the report and its caption."""
    def draw(embeddings, report, path, opts) -> str:
        fig = figure(embeddings, report, opts)
        _save(fig, path, [getattr(e, "path", None) for e in embeddings.values()])
        return caption(fig.info)

    return draw


def _groups(embeddings, report, opts):
    attribute = opts["attribute"]
    return group_figure(embeddings, attribute, opts["subspace"])


#: The run's figures: file name -> (what it shows, for the report's link).
RUN_FIGURES = {"occupations.png": "occupations", "residual.png": "residual bias", "weat.png": "WEAT effect sizes",
               "tradeoff.png": "bias left against quality kept", "groups.png": "each group on the subspace",
               "agreement.png": "agreement between metric families"}
#: How each is drawn: ``draw(embeddings, report, path, options) -> caption``.
_DRAWERS = {"occupations.png": _draw_occupations,
            "residual.png": _draw(lambda e, r, o: residual_figure(e, r), residual_caption),
            "weat.png": _draw(lambda e, r, o: weat_forest_figure(r), weat_caption),
            "tradeoff.png": _draw(lambda e, r, o: tradeoff_figure(r), tradeoff_caption),
            "groups.png": _draw(_groups, group_caption),
            "agreement.png": _draw(lambda e, r, o: agreement_figure(r), agreement_caption)}


def run_figures(embeddings: dict, report, out_dir, *, subspace=None, lists: str = wordlists.DEFAULT_LISTS,
                max_missing: float = 0.2, strict: bool = False, attribute="gender") -> dict:
    """Draw the run's figures (:data:`RUN_FIGURES`) into ``out_dir``: ``{file: {"caption": ...}}`` or
    ``{file: {"error": reason}}`` for one that cannot be drawn (raised when ``strict``).

    ``attribute``: the run's :class:`~embdebias.data.attributes.Attribute` (or its name or path),
    whose words, groups and subspace (``subspace``; default: fitted on its defining sets in the
    first column) the figures use.
    """
    from ..data.attributes import as_attribute
    from ..metrics.base import attribute_subspace

    out_dir = Path(out_dir)
    attribute = as_attribute(attribute, lists)
    if subspace is None:
        subspace = attribute_subspace(next(iter(embeddings.values())), attribute, lists=lists)
    opts = {"subspace": subspace, "lists": lists, "max_missing": max_missing, "attribute": attribute}
    out: dict = {}
    for file in RUN_FIGURES:
        try:
            out[file] = {"caption": _DRAWERS[file](embeddings, report, out_dir / file, opts)}
        except EmbdebiasError as exc:
            if strict:
                raise
            out[file] = {"error": str(exc)}
    return out
