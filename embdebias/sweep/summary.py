"""A sweep's results: the tidy long table (Parquet and CSV) and ``summary.md`` with four figures.

The table has one row per point and (metric, test, statistic); a failed point is one row
with its ``error`` and no metric. The summary reduces each metric to one *headline* per
point: the mean over its tests of the metric's first statistic (WEAT's effect size,
direct bias on the original direction, similarity's Spearman, ...), with the mean of
the tests' interval bounds (exact for a metric of one test, an approximation beyond).

Figures:

* ``tradeoff.png``: bias left (a point's bias headline over its baseline's) against
  quality kept (the same for the quality headline), one marker per method and setting,
  the bias interval as a bar, the Pareto front (no other point has less bias and more
  quality) joined by a line;
* ``parameters.png``: each headline against each swept numeric parameter, with intervals;
* ``trends.png``: each headline across the embeddings in their order, with intervals;
* ``agreement.png``: Kendall's tau-b between every two metrics' rankings of the points (each
  in its own direction: the fairest or the best quality first), each cell with its bootstrap
  interval over the points (:func:`agreement`), drawn by the run's
  :func:`~embdebias.report.figures.agreement_figure`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .._atomic import atomic_file
from ..pipeline.state import write_text
from .config import BASELINE

#: The table's columns, in order (then the bookkeeping ones).
COLUMNS = ["embedding", "label", "order", "attribute", "method", "parameters", "metric", "test", "statistic",
           "value", "ci_low", "ci_high", "n_scored", "outcome", "share", "reference", "seed", "versions", "limit",
           "key", "error", "seconds", "worker"]
#: The trade-off's axes, the first (metric, test, statistic) the sweep has of each.
BIAS_AXES = (("direct_bias", "professions", "direct_bias_original"), ("weat", None, "effect_size"),
             ("rnsb", None, "rnsb"), ("ect", None, "spearman"))
#: The columns a point's rows give (the others are the point's).
ROW_KEYS = ("metric", "test", "statistic", "value", "ci_low", "ci_high", "n_scored", "outcome", "share", "reference")
FIGURES = ("tradeoff.png", "parameters.png", "trends.png", "agreement.png")
#: Resamples of the points behind each interval of :func:`agreement`.
N_AGREEMENT = 1000
#: Elements (resamples x points) of one block of :func:`agreement`'s resamples: its memory is
#: bounded by the block and the points squared (the pairs' signs), never by their product.
AGREEMENT_BLOCK = 2_000_000


def to_frame(records):
    """The tidy long table of ``records`` (point records of :func:`~embdebias.sweep.run.run_point`)."""
    import pandas as pd

    rows = []
    for r in records:
        meta = {k: r.get(k) for k in COLUMNS if k not in ROW_KEYS}
        for row in r.get("rows") or [{}]:
            rows.append({**meta, **row})
    frame = pd.DataFrame.from_records(rows, columns=COLUMNS)
    for col in ("value", "ci_low", "ci_high", "n_scored", "share", "order", "seconds", "limit"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def failure_reasons(frame) -> list[tuple[int, str]]:
    """``(points, error)`` of each distinct error of the failed points of ``frame``, the commonest
    first (ties in the table's order); an error is kept to its first line."""
    per_point = frame.drop_duplicates("key")
    errors = [str(e).strip().splitlines()[0] if str(e).strip() else "(no message)"
              for e in per_point["error"] if e is not None and e == e]
    counts: dict = {}
    for error in errors:
        counts[error] = counts.get(error, 0) + 1
    return sorted(((n, e) for e, n in counts.items()), key=lambda item: -item[0])


def write_tables(frame, out_dir) -> list[Path]:
    out_dir = Path(out_dir)
    paths = [out_dir / "sweep.parquet", out_dir / "sweep.csv"]
    with atomic_file(paths[0]) as tmp:
        frame.to_parquet(tmp, index=False)
    with atomic_file(paths[1]) as tmp:
        frame.to_csv(tmp, index=False)
    return paths


def _ranked_statistic(metric) -> tuple[str, str, bool]:
    """``(test, statistic, quality)`` a metric is ranked by: its first declared bias statistic of
    :attr:`~embdebias.metrics.Metric.headline` (a quality metric: its first), test "" or "*" for
    every test."""
    heads = [(t, s, metric.is_quality(s)) for t, s, _ in metric.headline]
    chosen = [h for h in heads if not h[2]] or heads
    if chosen:
        return chosen[0]
    return "", next(iter(metric.statistics)), metric.kind == "quality"


def _chance(attribute, lists: str = "published") -> float:
    from ..data.attributes import as_attribute

    try:
        return 1 / max(2, as_attribute(attribute, lists).k)
    except Exception:  # a user's file that moved: two groups
        return 0.5


def _magnitude(metric, statistic: str, chance: float, value, low, high) -> tuple:
    """``(bias, low, high)``: a row's distance from its fair value and its bounds' (an interval
    that spans the fair value of a two-sided statistic starts at 0)."""
    mag = [metric.bias_magnitude(statistic, v, chance) if v == v else float("nan") for v in (value, low, high)]
    lo, hi = sorted(m for m in mag[1:]) if all(m is not None and m == m for m in mag[1:]) else (float("nan"),) * 2
    if metric.direction(statistic) in ("zero", "chance") and low == low and high == high:
        fair = metric.fair_value(statistic, chance)
        if low <= fair <= high:
            lo = 0.0
    return mag[0], lo, hi


def headlines(frame):
    """One row per point and metric: ``value``, ``ci_low``, ``ci_high`` of its headline and ``fairer``.

    The headline is the statistic the metric declares (:func:`_ranked_statistic`) over its tests:
    for a bias metric the mean over the tests of the distance from the fair value (WEAT: mean |d|,
    ECT: 1 - rho, the residual accuracies: |accuracy - chance|), "lower" is fairer; for a quality
    metric the mean of the numbers, "higher" is better. The interval is the mean of the tests'
    bounds so transformed (exact for a metric of one test, an approximation beyond)."""
    import pandas as pd

    from ..metrics import METRICS

    ok = frame[frame["error"].isna() & frame["metric"].isin(list(METRICS))]
    chance = {a: _chance(a) for a in ok["attribute"].dropna().unique()}
    parts = []
    for name, rows in ok.groupby("metric", sort=False):
        metric = METRICS[name]
        test, stat, quality = _ranked_statistic(metric)
        rows = rows[(rows["statistic"] == stat) & rows["value"].notna()]
        if test not in ("", "*"):
            rows = rows[rows["test"] == test]
        if not len(rows):
            continue
        rows = rows.copy()
        if not quality:
            mags = [_magnitude(metric, stat, chance.get(r.attribute, 0.5), r.value, r.ci_low, r.ci_high)
                    for r in rows.itertuples()]
            rows[["value", "ci_low", "ci_high"]] = pd.DataFrame(mags, index=rows.index, dtype=float)
        rows["fairer"] = "higher" if quality else "lower"
        parts.append(rows)
    keys = ["key", "embedding", "label", "order", "attribute", "method", "parameters", "seed", "metric", "fairer"]
    if not parts:
        return pd.DataFrame(columns=keys + ["value", "ci_low", "ci_high"])
    both = pd.concat(parts)
    return both.groupby(keys, dropna=False, sort=False)[["value", "ci_low", "ci_high"]].mean().reset_index()


def _embedding_of(r) -> tuple:
    """The embedding a point measured: path, label, order (None without one; NaN is no key), attribute, seed."""
    order = None if r.order is None or r.order != r.order else r.order
    return (r.embedding, r.label, order, r.attribute, r.seed)


def _worst_quality(frame, key: str, ref: str):
    """``(kept, low, high, name, loss)`` of the point ``key``'s worst quality test as a fraction of
    its baseline ``ref``'s (never a mean of the tests, which would hide one test's loss); ``loss``:
    the paired change from the baseline is a loss beyond the noise. None without quality tests."""
    from ..metrics import METRICS

    quality = [n for n, m in METRICS.items() if m.kind == "quality"]
    rows = frame[frame["key"].isin([key, ref]) & frame["metric"].isin(quality) & frame["value"].notna()]
    if not len(rows):
        return None
    rows = rows.loc[[_ranked_statistic(METRICS[m])[1] == s for m, s in zip(rows["metric"], rows["statistic"])]]
    mine = rows[rows["key"] == key].set_index(["metric", "test", "statistic"])
    base = rows[rows["key"] == ref].set_index(["metric", "test", "statistic"])
    worst = None
    for idx, r in mine.iterrows():
        b = base["value"].get(idx)
        if b is None or not _finite(float(b)) or b == 0:
            continue
        entry = (r["value"] / b, r["ci_low"] / b, r["ci_high"] / b, f"{idx[0]}/{idx[1]}", r["outcome"] == "worse")
        if worst is None or entry[0] < worst[0]:
            worst = entry
    return worst


def tradeoff_points(frame) -> tuple[list[dict], str | None, str | None]:
    """Each debiased point's bias left (its headline bias over its baseline's, :func:`headlines`, on
    the first of :data:`BIAS_AXES` the sweep has) and quality kept (the worst quality test's,
    :func:`_worst_quality`, with its interval); the axes' names."""
    heads = headlines(frame)
    have = set(heads["metric"])
    bias_metric = next((m for m, _, _ in BIAS_AXES if m in have), None)
    if bias_metric is None:
        return [], None, None
    bias = {r.key: (r.value, r.ci_low, r.ci_high) for r in heads[heads["metric"] == bias_metric].itertuples()}
    points = frame.drop_duplicates("key")
    points = points[points["error"].isna()]
    # an embedding is its path, label and order (one file read at two limits is two embeddings)
    base = {_embedding_of(r): r.key for r in points.itertuples() if r.method == BASELINE}
    out = []
    for r in points.itertuples():
        ref = base.get(_embedding_of(r))
        if r.method == BASELINE or ref is None or r.key not in bias or ref not in bias:
            continue
        b0 = bias[ref][0]
        worst = _worst_quality(frame, r.key, ref)
        out.append({"key": r.key, "label": r.label, "method": r.method, "parameters": r.parameters, "seed": r.seed,
                    "bias_left": _ratio(bias[r.key][0], b0), "bias_low": _ratio(bias[r.key][1], b0),
                    "bias_high": _ratio(bias[r.key][2], b0),
                    "quality_kept": None if worst is None else float(worst[0]),
                    "quality_low": None if worst is None else _num(worst[1]),
                    "quality_high": None if worst is None else _num(worst[2]),
                    "quality_test": None if worst is None else worst[3],
                    "quality_loss": bool(worst and worst[4])})
    name = f"{bias_metric}: {'mean over the tests of ' if bias_metric != 'direct_bias' else ''}the distance from " \
           f"its fair value"
    return out, name, "the worst quality test (similarity, analogy)"


def _num(x):
    return float(x) if x is not None and _finite(float(x)) else None


def _ratio(value, reference):
    if value is None or reference is None or not _finite(value) or not _finite(reference) or reference == 0:
        return None
    return abs(value) / abs(reference)


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def pareto_front(points: list[dict]) -> list[dict]:
    """The points no other point of the same embedding beats on both axes (less bias left and
    more quality kept), ordered by quality kept."""
    usable = [p for p in points if p["bias_left"] is not None and p["quality_kept"] is not None]
    front = [p for p in usable if not any(
        q["label"] == p["label"] and q["bias_left"] <= p["bias_left"] and q["quality_kept"] >= p["quality_kept"]
        and (q["bias_left"] < p["bias_left"] or q["quality_kept"] > p["quality_kept"]) for q in usable)]
    return sorted(front, key=lambda p: (p["label"], p["quality_kept"]))


def rankings(heads):
    """``(ranks, tau)``: each metric's rank of the points -- 1 is the fairest (the least bias: its
    distance from the fair value, :func:`headlines`) or the best quality -- and Kendall's tau between
    every two metrics' ranks over the points both scored (positive: they agree)."""
    import pandas as pd
    from scipy.stats import kendalltau

    wide = heads.pivot_table(index="key", columns="metric", values="value", sort=False)
    better = dict(zip(heads["metric"], heads["fairer"]))
    ranks = pd.DataFrame({m: wide[m].rank(method="average", ascending=better.get(m) != "higher")
                          for m in wide.columns}, index=wide.index)
    names = list(wide.columns)
    tau = pd.DataFrame(index=names, columns=names, dtype=float)
    for a in names:
        for b in names:
            both = ranks[[a, b]].dropna()
            tau.loc[a, b] = kendalltau(both[a], both[b]).statistic if len(both) > 1 else float("nan")
    return ranks, tau


def agreement(ranks, n_boot: int = N_AGREEMENT, random_state=0, level: float = 0.95) -> dict | None:
    """Kendall's tau-b between every two metrics' rankings of the points, with bootstrap intervals.

    The rankings are :func:`rankings`' (issue 31's: rank 1 is the fairest point by the metric's
    distance from its fair value, or for a quality metric the best), so a tau says whether two
    metrics agree on which point is fairer; it equals :func:`rankings`' tau (scipy's tau-b).

    The interval differs from a run's (:func:`embdebias.metrics.trust.agreement_matrix`), which
    resamples the words of every row with the columns' draws paired: a sweep's summary has each
    point's numbers, not its words, so the interval resamples the **points** (the points both
    metrics scored, drawn with replacement; ties a draw repeats count as tau-b's ties). It says
    how far the agreement rests on which points the sweep has, not how far each point's number
    moves with its words (that is each point's own interval). Each pair of metrics draws from
    its own generator, seeded by ``random_state`` and the two names, so adding a metric to a
    sweep leaves the other pairs' intervals as they were.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`rankings`' ranks: one row per point, one column per metric (NaN: not scored).
    n_boot : int
        Resamples of the points.
    random_state : int
        The seed of the resamples.
    level : float
        The interval's level.

    Returns
    -------
    dict or None
        ``{"families", "columns", "tau", "ci_low", "ci_high", "n_boot", "level", "unit": "points",
        "resampled"}`` as :func:`~embdebias.metrics.trust.agreement_matrix` (None where undefined;
        the diagonal is 1 without an interval); None with fewer than three points or two metrics.
    """
    from ..metrics.base import resample_rng
    from ..metrics.trust import kendall_tau_b

    if ranks is None or ranks.shape[0] < 3 or ranks.shape[1] < 2:
        return None
    names = [str(c) for c in ranks.columns]
    values = ranks.to_numpy(dtype=np.float64)
    k = len(names)
    tau, low, high = (np.full((k, k), np.nan) for _ in range(3))
    tail = (1 - level) / 2
    for a in range(k):
        for b in range(a + 1, k):
            both = np.flatnonzero(np.isfinite(values[:, a]) & np.isfinite(values[:, b]))
            x, y = values[both, a], values[both, b]
            if both.size < 2:
                continue
            tau[a, b] = tau[b, a] = kendall_tau_b(x, y)
            rng = resample_rng(random_state, "sweep agreement", *sorted((names[a], names[b])))
            draws = _tau_draws(x, y, n_boot, rng)
            if draws.size >= 10:
                low[a, b], high[a, b] = low[b, a], high[b, a] = np.quantile(draws, [tail, 1 - tail])
        scored = values[:, a][np.isfinite(values[:, a])]
        tau[a, a] = 1.0 if np.unique(scored).size > 1 else np.nan  # a constant ranking has no tau

    def clean(m):
        return [[None if not np.isfinite(v) else float(v) for v in row] for row in m]

    return {"families": names, "columns": [str(i) for i in ranks.index], "tau": clean(tau), "ci_low": clean(low),
            "ci_high": clean(high), "n_boot": n_boot, "level": level, "unit": "points",
            "resampled": "the points both metrics scored (drawn with replacement)"}


def _tau_draws(x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Kendall's tau-b of ``n_boot`` resamples of the points (the finite ones only).

    A resample is the multiplicities ``c`` of the points it drew, and each of tau-b's sums over
    pairs is a quadratic form in them: ``c' S c`` with ``S[i, j] = sign(x_i - x_j) sign(y_i - y_j)``
    (concordant minus discordant pairs, each counted twice, as are the denominators') and
    ``|sign(x_i - x_j)|``, ``|sign(y_i - y_j)|`` for the pairs untied in ``x`` and in ``y``; a point
    drawn twice makes a pair tied in both, which tau-b leaves out, as ``S[i, i] = 0`` does. Integer
    sums, so exactly tau-b of the drawn points; one matrix product per block of resamples (at most
    :data:`AGREEMENT_BLOCK` elements) instead of a pass over every pair of every resample."""
    from ..metrics.base import counts

    n = x.size
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    forms = (sx * sy, np.abs(sx), np.abs(sy))
    per_block = max(1, AGREEMENT_BLOCK // n)
    out = []
    for start in range(0, n_boot, per_block):
        c = counts(rng.integers(0, n, size=(min(per_block, n_boot - start), n)), n)
        concordance, untied_x, untied_y = (((c @ form) * c).sum(axis=1) for form in forms)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(concordance / np.sqrt(untied_x * untied_y))
    draws = np.concatenate(out) if out else np.empty(0)
    return draws[np.isfinite(draws)]


def _label(r) -> str:
    params = json.loads(r["parameters"]) if isinstance(r["parameters"], str) else {}
    text = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"{r['method']}({text})" if text else str(r["method"])


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    with atomic_file(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes)
    ax.set_axis_off()


def plot_tradeoff(points, front, bias_name, quality_name, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    usable = [p for p in points if p["bias_left"] is not None and p["quality_kept"] is not None]
    if not usable:
        _empty(ax, "no trade-off to draw: the sweep needs a debiased point, its baseline, a bias metric "
                   "(direct_bias, weat, rnsb or ect) and a quality metric (similarity or analogy)")
        return _save(fig, path)
    from ..report.colors import ORIGINAL_COLOR, method_colors
    from ..report.figures import label_offsets

    colors = method_colors(sorted({p["method"] for p in usable}))  # a run's colours
    markers = dict(zip(dict.fromkeys(p["label"] for p in usable), "osD^v<>ph*"))
    offsets = label_offsets([(p["quality_kept"], p["bias_left"]) for p in usable])
    for p, (dx, dy) in zip(usable, offsets):
        ax.errorbar(p["quality_kept"], p["bias_left"], xerr=_quality_error(p), yerr=_bias_error(p),
                    fmt=markers.get(p["label"], "o"), color=colors[p["method"]], capsize=3, alpha=0.85)
        loss = f" ({p['quality_test']} lost)" if p.get("quality_loss") else ""
        ax.annotate(_label(p) + loss, (p["quality_kept"], p["bias_left"]), fontsize=7, xytext=(dx, dy),
                    textcoords="offset points", ha="left" if dx > 0 else "right")
    ax.plot([1], [1], marker="*", color=ORIGINAL_COLOR, ms=12, linestyle="none", label="baseline (none)")
    _fronts_and_legend(ax, front, markers, colors)
    ax.axhline(1, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5)
    ax.set_xlabel(f"quality kept ({quality_name}, fraction of the baseline's)", fontsize=8)
    ax.set_ylabel(f"bias left ({bias_name},\nfraction of the baseline's)", fontsize=8)
    ax.legend(fontsize=7, loc="best")
    ax.set_title("Trade-off: lower is fairer, further right keeps more quality", fontsize=10)
    _save(fig, path)


def _fronts_and_legend(ax, front, markers: dict, colors: dict) -> None:
    """Each embedding's Pareto front (a dashed line through ringed points), and legend entries for
    the methods' colours and the embeddings' markers."""
    for label in markers:
        mine = [p for p in front if p["label"] == label]
        ax.plot([p["quality_kept"] for p in mine], [p["bias_left"] for p in mine], "k--", lw=1, marker="o",
                mfc="none", ms=13, label=f"Pareto front ({label})" if len(markers) > 1 else "Pareto front")
    for m, c in colors.items():
        ax.plot([], [], "s", color=c, label=f"method {m}")
    for label, marker in markers.items():
        ax.plot([], [], marker, color="grey", label=label)


def _quality_error(p) -> list:
    """The quality interval of a trade-off point as errorbar's ``[[left], [right]]`` (0 without one)."""
    low = p["quality_kept"] - p["quality_low"] if p.get("quality_low") is not None else 0
    high = p["quality_high"] - p["quality_kept"] if p.get("quality_high") is not None else 0
    return [[max(low, 0)], [max(high, 0)]]


def _bias_error(p) -> list:
    """The bias interval of a trade-off point as errorbar's ``[[below], [above]]`` (0 without one)."""
    low = p["bias_left"] - p["bias_low"] if p["bias_low"] is not None else 0
    high = p["bias_high"] - p["bias_left"] if p["bias_high"] is not None else 0
    return [[max(low, 0)], [max(high, 0)]]


def _numeric_params(heads) -> list[tuple[str, str]]:
    """``[(method, parameter)]`` swept over two or more numeric values."""
    seen: dict = {}
    for r in heads.drop_duplicates("key").itertuples():
        for name, value in json.loads(r.parameters).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                seen.setdefault((r.method, name), set()).add(value)
    return [mp for mp, values in seen.items() if len(values) > 1]


def _errorbar(ax, x, rows, **kw) -> None:
    y = rows["value"].to_numpy()
    low, high = rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy()
    has = ~(low != low) & ~(high != high)
    yerr = [[max(v - lo, 0) if h else 0 for v, lo, h in zip(y, low, has)],
            [max(hi - v, 0) if h else 0 for v, hi, h in zip(y, high, has)]]
    ax.errorbar(x, y, yerr=yerr, marker="o", capsize=3, **kw)


def plot_parameters(heads, path: Path) -> None:
    import matplotlib.pyplot as plt

    swept = _numeric_params(heads)
    metrics = list(dict.fromkeys(heads["metric"]))
    if not swept or not metrics:
        fig, ax = plt.subplots(figsize=(6, 2))
        _empty(ax, "no parameter curves: no method's parameter takes two or more numeric values")
        return _save(fig, path)
    fig, axes = plt.subplots(len(metrics), len(swept), figsize=(3.6 * len(swept), 2.4 * len(metrics)),
                             squeeze=False)
    for j, (method, name) in enumerate(swept):
        rows = heads[heads["method"] == method].copy()
        rows["x"] = [json.loads(p).get(name) for p in rows["parameters"]]
        rows = rows[rows["x"].notna()]
        for i, metric in enumerate(metrics):
            ax = axes[i][j]
            for label, part in rows[rows["metric"] == metric].groupby(["label", "seed"], dropna=False):
                part = part.sort_values("x")
                _errorbar(ax, part["x"].to_numpy(), part, label=f"{label[0]} seed {label[1]}")
            ax.set_title(f"{metric} vs {method}.{name}", fontsize=8)
            ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    _save(fig, path)


def plot_trends(heads, path: Path) -> None:
    import matplotlib.pyplot as plt

    ordered = heads[heads["order"].notna()]
    metrics = list(dict.fromkeys(ordered["metric"]))
    if ordered["order"].nunique() < 2 or not metrics:
        fig, ax = plt.subplots(figsize=(6, 2))
        _empty(ax, "no trends: they need two or more embeddings with an order value (a year, a step)")
        return _save(fig, path)
    fig, axes = plt.subplots(len(metrics), 1, figsize=(7, 2.4 * len(metrics)), squeeze=False)
    for i, metric in enumerate(metrics):
        ax = axes[i][0]
        rows = ordered[ordered["metric"] == metric]
        for (method, params, seed), part in rows.groupby(["method", "parameters", "seed"], sort=False):
            part = part.sort_values("order")
            _errorbar(ax, part["order"].to_numpy(), part, label=_label({"method": method, "parameters": params}))
        ax.set_title(metric, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=6)
    axes[-1][0].set_xlabel("order (year, step, ...)")
    fig.tight_layout()
    _save(fig, path)


def plot_agreement(agreed: dict | None, path: Path) -> None:
    """The agreement heat map (:func:`embdebias.report.figures.agreement_figure`), or why there is none."""
    if agreed is None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 2))
        _empty(ax, "no agreement between metrics: it needs three or more points scored by two or more metrics")
        return _save(fig, path)
    from ..report.figures import agreement_figure

    _save(agreement_figure(agreed), path)


def write_summary(frame, out_dir) -> Path:
    """Write the tables, the four figures and ``summary.md`` into ``out_dir``; the summary's path.

    The agreement's intervals (:func:`agreement`) are seeded by 0: a summary written again from the
    same table is the same."""
    out_dir = Path(out_dir)
    write_tables(frame, out_dir)
    heads = headlines(frame)
    points, bias_name, quality_name = tradeoff_points(frame)
    front = pareto_front(points)
    ranks, _ = rankings(heads) if len(heads) else (None, None)
    agreed = agreement(ranks)
    plot_tradeoff(points, front, bias_name, quality_name, out_dir / FIGURES[0])
    plot_parameters(heads, out_dir / FIGURES[1])
    plot_trends(heads, out_dir / FIGURES[2])
    plot_agreement(agreed, out_dir / FIGURES[3])
    path = out_dir / "summary.md"
    write_text(path, render(frame, heads, points, front, ranks, agreed, bias_name, quality_name))
    return path


def md_table(header: list, rows: list) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def _fmt(x) -> str:
    return "" if x is None or (isinstance(x, float) and x != x) else f"{x:.3g}"


def render(frame, heads, points, front, ranks, agreed, bias_name, quality_name) -> str:
    per_point = frame.drop_duplicates("key")
    failed = per_point[per_point["error"].notna()]
    lines = ["# Sweep summary", "",
             f"{len(per_point)} points ({len(failed)} failed), "
             f"{len(per_point.drop_duplicates(['embedding', 'label', 'order', 'limit']))} embedding(s), methods: "
             f"{', '.join(dict.fromkeys(per_point['method']))}. Every number is in `sweep.parquet` / `sweep.csv` "
             "(one row per point, metric, test and statistic).", "",
             "Every point is scored as `embdebias run` scores its column: beside its embedding's baseline "
             "(the `original` column of one evaluation), with the baseline's words and direction, so a sweep "
             "and a run give the same numbers (column `reference`; `outcome` and `share`: the paired change "
             "from the baseline and the share of its bias removed).", "",
             "A metric's *headline* is the statistic its declaration names (WEAT's d, ECT's rho, direct bias, "
             "the residual accuracies, ...) as a bias: the mean over its tests of its distance from the fair "
             "value (mean |d|, 1 - rho, |accuracy - chance|), lower is fairer; a quality metric's is the mean "
             "of its numbers, higher is better. Its interval is the mean of the tests' bounds (exact for a "
             "metric of one test).", "",
             "## Trade-off", "", "![trade-off](tradeoff.png)", ""]
    if points:
        lines += [f"Bias left: {bias_name}; quality kept: {quality_name}, never a mean of the tests; both as "
                  "fractions of the same embedding's baseline (method `none`, same seed).", ""]
        lines += md_table(["point", "embedding", "seed", "bias left", "interval", "quality kept (worst test)",
                            "interval", "Pareto"],
                           [[_label(p), p["label"], p["seed"], _fmt(p["bias_left"]),
                             f"{_fmt(p['bias_low'])} to {_fmt(p['bias_high'])}",
                             f"{_fmt(p['quality_kept'])} ({p['quality_test']}"
                             + (", a loss beyond the noise)" if p["quality_loss"] else ")"),
                             f"{_fmt(p['quality_low'])} to {_fmt(p['quality_high'])}",
                             "yes" if p in front else ""] for p in points])
        lines.append("")
    lines += ["## Parameter curves", "", "![parameter curves](parameters.png)", "",
              "## Trends over the embeddings' order", "", "![trends](trends.png)", "",
              "## Rankings", ""]
    lines += _rankings_md(heads, ranks, agreed)
    if len(failed):
        lines += ["## Failed points", ""]
        lines += md_table(["embedding", "method", "parameters", "seed", "error"],
                           [[r.label, r.method, r.parameters, r.seed, str(r.error).replace("|", "/")[:300]]
                            for r in failed.itertuples()])
        lines.append("")
    return "\n".join(lines) + "\n"


def _rankings_md(heads, ranks, agreed) -> list[str]:
    if ranks is None or not len(ranks):
        return ["No metric was scored.", ""]
    names = {r.key: f"{r.label} {_label({'method': r.method, 'parameters': r.parameters})} seed {r.seed}"
             for r in heads.drop_duplicates("key").itertuples()}
    lines = ["Rank 1 is the fairest point (the least bias: each metric's distance from its fair value, as its "
             "headline declares) or, for a quality metric, the best; tied points share a mean rank.", ""]
    lines += md_table(["point", *ranks.columns],
                       [[names[k], *(_fmt(v) for v in row)] for k, row in zip(ranks.index, ranks.to_numpy())])
    if agreed is None:
        return lines + ["", "No agreement between the metrics: it needs three or more points scored by two or more "
                            "metrics.", ""]
    fams = agreed["families"]
    lines += ["", f"Kendall's tau-b between the metrics' rankings (how far the metrics agree on which point is "
                  f"fairer), with its {agreed['level']:.0%} interval over {agreed['n_boot']} resamples of the points "
                  "(how far the agreement rests on which points the sweep has):", "",
              "![agreement between the metrics](agreement.png)", ""]
    lines += md_table(["", *fams], [[a, *(_tau_cell(agreed, i, j) for j in range(len(fams)))]
                                     for i, a in enumerate(fams)])
    return lines + [""]


def _tau_cell(agreed: dict, i: int, j: int) -> str:
    """A tau of the summary's table with its interval (none on the diagonal)."""
    value, low, high = agreed["tau"][i][j], agreed["ci_low"][i][j], agreed["ci_high"][i][j]
    interval = f" [{_fmt(low)}, {_fmt(high)}]" if i != j and low is not None else ""
    return _fmt(value) + interval
