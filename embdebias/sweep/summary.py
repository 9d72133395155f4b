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
* ``rankings.png``: Kendall's tau between the metrics' rankings of the points.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

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
QUALITY_AXES = (("similarity", None, "spearman"), ("analogy", None, "accuracy"))
#: The columns a point's rows give (the others are the point's).
ROW_KEYS = ("metric", "test", "statistic", "value", "ci_low", "ci_high", "n_scored", "outcome", "share", "reference")
FIGURES = ("tradeoff.png", "parameters.png", "trends.png", "rankings.png")


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


def write_tables(frame, out_dir) -> list[Path]:
    out_dir = Path(out_dir)
    paths = [out_dir / "sweep.parquet", out_dir / "sweep.csv"]
    with atomic_file(paths[0]) as tmp:
        frame.to_parquet(tmp, index=False)
    with atomic_file(paths[1]) as tmp:
        frame.to_csv(tmp, index=False)
    return paths


def _kinds() -> dict:
    from ..metrics import METRICS

    return {name: m.kind for name, m in METRICS.items()}


def headlines(frame):
    """One row per point and metric: the headline value and interval (see the module's docs)."""
    from ..metrics import METRICS

    ok = frame[frame["error"].isna() & frame["metric"].notna()]
    first = {name: next(iter(m.statistics)) for name, m in METRICS.items() if m.statistics}
    ok = ok[ok.apply(lambda r: first.get(r["metric"]) == r["statistic"], axis=1)] if len(ok) else ok
    keys = ["key", "embedding", "label", "order", "attribute", "method", "parameters", "seed", "metric"]
    return ok.groupby(keys, dropna=False, sort=False)[["value", "ci_low", "ci_high"]].mean().reset_index()


def _axis_value(frame, axes):
    """``(name, {key: (value, low, high)})`` of the first axis the sweep has."""
    for metric, test, statistic in axes:
        rows = frame[(frame["metric"] == metric) & (frame["statistic"] == statistic) & frame["value"].notna()]
        if test is not None:
            rows = rows[rows["test"] == test]
        if len(rows):
            means = rows.groupby("key")[["value", "ci_low", "ci_high"]].mean()
            name = f"{metric}/{test or 'mean of tests'}/{statistic}"
            return name, {k: tuple(v) for k, v in means.iterrows()}
    return None, {}


def tradeoff_points(frame) -> tuple[list[dict], str | None, str | None]:
    """Each debiased point's bias left and quality kept (fractions of its baseline's); the axes' names."""
    bias_name, bias = _axis_value(frame, BIAS_AXES)
    quality_name, quality = _axis_value(frame, QUALITY_AXES)
    points = frame.drop_duplicates("key")
    points = points[points["error"].isna()]
    # an embedding is its path, label and order (one file read at two limits is two embeddings)
    base = {(r.embedding, r.label, r.order, r.attribute, r.seed): r.key for r in points.itertuples()
            if r.method == BASELINE}
    out = []
    for r in points.itertuples():
        ref = base.get((r.embedding, r.label, r.order, r.attribute, r.seed))
        if r.method == BASELINE or ref is None or r.key not in bias or ref not in bias:
            continue
        b0, q0 = bias[ref][0], quality.get(ref, (None,))[0]
        entry = {"key": r.key, "label": r.label, "method": r.method, "parameters": r.parameters, "seed": r.seed,
                 "bias_left": _ratio(bias[r.key][0], b0), "bias_low": _ratio(bias[r.key][1], b0),
                 "bias_high": _ratio(bias[r.key][2], b0),
                 "quality_kept": _ratio(quality.get(r.key, (None,))[0], q0)}
        out.append(entry)
    return out, bias_name, quality_name


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
    """``(ranks, tau)``: each metric's rank of the points (1: smallest headline) and Kendall's tau
    between every two metrics over the points both scored."""
    import pandas as pd
    from scipy.stats import kendalltau

    wide = heads.pivot_table(index="key", columns="metric", values="value")
    ranks = wide.rank(method="average")
    names = list(wide.columns)
    tau = pd.DataFrame(index=names, columns=names, dtype=float)
    for a in names:
        for b in names:
            both = wide[[a, b]].dropna()
            tau.loc[a, b] = kendalltau(both[a], both[b]).statistic if len(both) > 1 else float("nan")
    return ranks, tau


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
    colors = dict(zip(sorted({p["method"] for p in usable}), plt.cm.tab10.colors))
    markers = dict(zip(dict.fromkeys(p["label"] for p in usable), "osD^v<>ph*"))
    for p in usable:
        ax.errorbar(p["quality_kept"], p["bias_left"], yerr=_bias_error(p), fmt=markers.get(p["label"], "o"),
                    color=colors[p["method"]], capsize=3, alpha=0.85)
        ax.annotate(_label(p), (p["quality_kept"], p["bias_left"]), fontsize=7, xytext=(4, 3),
                    textcoords="offset points")
    _fronts_and_legend(ax, front, markers, colors)
    ax.axhline(1, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5)
    ax.set_xlabel(f"quality kept ({quality_name}, fraction of the original's)")
    ax.set_ylabel(f"bias left ({bias_name},\nfraction of the original's)")
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


def plot_rankings(tau, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.2 + 0.7 * max(len(tau), 2), 1 + 0.6 * max(len(tau), 2)))
    if len(tau) < 2:
        _empty(ax, "no rank correlation: it needs two or more metrics")
        return _save(fig, path)
    im = ax.imshow(tau.to_numpy(dtype=float), vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(len(tau)), tau.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(tau)), tau.index, fontsize=8)
    for i in range(len(tau)):
        for j in range(len(tau)):
            v = tau.iat[i, j]
            ax.text(j, i, "" if v != v else f"{v:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label="Kendall's tau")
    ax.set_title("Agreement of the metrics' rankings of the points", fontsize=9)
    _save(fig, path)


def write_summary(frame, out_dir) -> Path:
    """Write the tables, the four figures and ``summary.md`` into ``out_dir``; the summary's path."""
    out_dir = Path(out_dir)
    write_tables(frame, out_dir)
    heads = headlines(frame)
    points, bias_name, quality_name = tradeoff_points(frame)
    front = pareto_front(points)
    ranks, tau = rankings(heads) if len(heads) else (None, None)
    plot_tradeoff(points, front, bias_name, quality_name, out_dir / FIGURES[0])
    plot_parameters(heads, out_dir / FIGURES[1])
    plot_trends(heads, out_dir / FIGURES[2])
    import pandas as pd

    plot_rankings(tau if tau is not None else pd.DataFrame(), out_dir / FIGURES[3])
    path = out_dir / "summary.md"
    write_text(path, render(frame, heads, points, front, ranks, tau, bias_name, quality_name))
    return path


def _md_table(header: list, rows: list) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def _fmt(x) -> str:
    return "" if x is None or (isinstance(x, float) and x != x) else f"{x:.3g}"


def render(frame, heads, points, front, ranks, tau, bias_name, quality_name) -> str:
    per_point = frame.drop_duplicates("key")
    failed = per_point[per_point["error"].notna()]
    lines = ["# Sweep summary", "",
             f"{len(per_point)} points ({len(failed)} failed), "
             f"{len(per_point.drop_duplicates(['embedding', 'label', 'order', 'limit']))} embedding(s), methods: "
             f"{', '.join(dict.fromkeys(per_point['method']))}. Every number is in `sweep.parquet` / `sweep.csv` "
             "(one row per point, metric, test and statistic).", "",
             "A metric's *headline* is the mean over its tests of its first statistic; its interval is the "
             "mean of the tests' bounds (exact for a metric of one test). Each metric's legend in the "
             "`embdebias run` report says which way is fairer.", "",
             "## Trade-off", "", "![trade-off](tradeoff.png)", ""]
    if points:
        lines += [f"Bias left: {bias_name}; quality kept: {quality_name}; both as fractions of the same "
                  "embedding's baseline (method `none`, same seed).", ""]
        lines += _md_table(["point", "embedding", "seed", "bias left", "interval", "quality kept", "Pareto"],
                           [[_label(p), p["label"], p["seed"], _fmt(p["bias_left"]),
                             f"{_fmt(p['bias_low'])} to {_fmt(p['bias_high'])}", _fmt(p["quality_kept"]),
                             "yes" if p in front else ""] for p in points])
        lines.append("")
    lines += ["## Parameter curves", "", "![parameter curves](parameters.png)", "",
              "## Trends over the embeddings' order", "", "![trends](trends.png)", "",
              "## Rankings", "", "![rankings](rankings.png)", ""]
    lines += _rankings_md(heads, ranks, tau)
    if len(failed):
        lines += ["## Failed points", ""]
        lines += _md_table(["embedding", "method", "parameters", "seed", "error"],
                           [[r.label, r.method, r.parameters, r.seed, str(r.error).replace("|", "/")[:300]]
                            for r in failed.itertuples()])
        lines.append("")
    return "\n".join(lines) + "\n"


def _rankings_md(heads, ranks, tau) -> list[str]:
    if ranks is None or not len(ranks):
        return ["No metric was scored.", ""]
    names = {r.key: f"{r.label} {_label({'method': r.method, 'parameters': r.parameters})} seed {r.seed}"
             for r in heads.drop_duplicates("key").itertuples()}
    lines = ["Rank 1 is the smallest headline value.", ""]
    lines += _md_table(["point", *ranks.columns],
                       [[names[k], *(_fmt(v) for v in row)] for k, row in zip(ranks.index, ranks.to_numpy())])
    lines += ["", "Kendall's tau between the metrics' rankings (how far the metrics agree):", ""]
    lines += _md_table(["", *tau.columns], [[a, *(_fmt(v) for v in tau.loc[a])] for a in tau.index])
    return lines + [""]
