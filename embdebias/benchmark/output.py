"""The benchmark's table (per-seed records summarized), the published figures beside it, its figure and files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .probes import PROBE_TITLES, PROBES

#: The figures a summary gives with a mean and an interval over the seeds, in table order.
MEASURES = (*PROBES, "v_measure", "certificate", "certificate_unit", "distortion", "rank_removed",
            "wordsim353", "simlex999", "analogy")
#: Confidence of the interval over seeds (Student's t, ``n - 1`` degrees of freedom).
LEVEL = 0.95
#: The files a benchmark's output directory holds (``benchmark.json``: the settings; it marks
#: the directory as a benchmark's, which a later benchmark may replace).
FILES = ("benchmark.md", "benchmark.parquet", "benchmark_seeds.parquet", "benchmark.png", "benchmark.json")

#: Published results on Ravfogel et al.'s GloVe split (GloVe Common Crawl 42B 300d, uncased: the first
#: 150,000 filtered words; 7,500 male-, 7,500 female-biased and 7,500 neutral words by he - she; test
#: accuracy of a fresh probe of masculine vs feminine after erasure). NaN: not published.
PUBLISHED = (
    {"method": "inlp", "name": "INLP (35 iterations)", "linear": 0.494, "rbf": 0.498, "mlp": 0.850,
     "v_measure": 0.0032,
     "data": "GloVe 42B 300d, the split above; probes LinearSVC, RBF-SVM, MLP; V-measure of 2-means",
     "source": "Ravfogel et al. 2020, word_vectors_debiasing.ipynb"},
    {"method": "rlace", "name": "RLACE rank 1", "linear": 0.525, "rbf": float("nan"), "mlp": float("nan"),
     "v_measure": 0.00006,
     "data": "GloVe 42B 300d, the split above without neutral words; probe SGDClassifier (log loss), seed 0; "
             "V-measure mean of 5 seeds",
     "source": "Ravfogel et al. 2022, glove/analysis.ipynb"},
    {"method": "orth", "name": "mean projection", "linear": 0.507, "rbf": float("nan"), "mlp": float("nan"),
     "v_measure": float("nan"), "data": "GloVe 42B 300d, INLP's split; linear probe",
     "source": "Haghighatkhah et al. 2022"},
    {"method": "sal", "name": "SAL rank 2", "linear": 0.494, "rbf": float("nan"), "mlp": float("nan"),
     "v_measure": float("nan"),
     "data": "GloVe 42B 300d, INLP's split with its three classes (rank 2 = k - 1); linear probe "
             "(nonlinear probes stay high, no figure given)",
     "source": "Shao et al. 2023"},
)
#: The one command that runs our side of :data:`PUBLISHED` on the published data (docs/ say more).
REPRODUCE_42B = ("embdebias benchmark glove.42B.300d.txt --methods inlp,rlace,orth,sal --seeds 5 "
                 "--protocol split --out-dir benchmark-42b")


def interval(values) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values`` (NaN ignored): the mean and its Student-t interval at :data:`LEVEL`
    (low = high = mean for a constant; NaN bounds for one value)."""
    from scipy import stats

    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    if len(v) == 0:
        return (float("nan"),) * 3
    mean = float(v.mean())
    if len(v) == 1:
        return mean, float("nan"), float("nan")
    half = float(stats.t.ppf((1 + LEVEL) / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return mean, mean - half, mean + half


def summarize(records: list[dict]):
    """One row per method (in the records' order): every :data:`MEASURES` figure's mean, ``_low`` and
    ``_high`` over the seeds, the seeds, the majority-class share and the mean fit time."""
    import pandas as pd

    seeds = pd.DataFrame.from_records(records)
    rows = []
    for method in dict.fromkeys(seeds["method"]):
        part = seeds[seeds["method"] == method]
        row = {"method": method, "protocol": part["protocol"].iloc[0], "n_seeds": len(part),
               "chance": float(part["chance"].mean())}
        for name in MEASURES:
            if name in part:
                row[name], row[f"{name}_low"], row[f"{name}_high"] = interval(part[name])
        row["fit_seconds"] = float(part["fit_seconds"].mean())
        rows.append(row)
    return pd.DataFrame(rows), seeds


def _cell(row, name: str, digits: int = 3) -> str:
    mean = row.get(name, float("nan"))
    if mean != mean:
        return "-"
    low, high = row.get(f"{name}_low", float("nan")), row.get(f"{name}_high", float("nan"))
    if low != low or abs(high - low) < 0.5 * 10 ** -digits:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _sci(row, name: str) -> str:
    mean = row.get(name, float("nan"))
    return "-" if mean != mean else f"{mean:.1e}"


def markdown(summary, settings: dict) -> str:
    """The benchmark's page: settings, the table, the published figures beside it."""
    from ..sweep.summary import md_table

    protocol = settings["protocol"]
    words = ("probes trained on the split's train words (which the eraser was fitted on) and scored on its test "
             "words" if protocol == "split" else
             "probes trained on half of the split's test words and scored on the other half: words the eraser "
             "never saw")
    lines = [f"# Erasure benchmark: {settings['embedding']}", "",
             f"{settings['n_words']:,} words x {settings['dim']}; attribute {settings['attribute']}; protocol "
             f"**{protocol}**: {words}; seeds {', '.join(map(str, settings['seeds']))} (each seed draws the "
             f"split and seeds the eraser and the probes). Cells: mean [{LEVEL:.0%} t-interval over the seeds]. "
             f"Majority class of the probes' test words: {summary['chance'].mean():.3f}.", "",
             "*certificate*: largest |Cov(r(x), z)| on the fitting words (train and dev) as the probes see them, "
             "*unit*: the same after scaling rows to unit length. *distortion*: mean squared change "
             "||r(x) - x||^2 of a systematic sample of the vocabulary. *rank*: directions the map edits. "
             "Probes see each method's edit before any unit scaling (the published setting); quality tests "
             "(Spearman of WS-353 and SimLex-999, analogy accuracy) its written output.", ""]
    header = ["method", *[PROBE_TITLES[p] for p in PROBES], "V-measure", "certificate", "unit", "distortion",
              "rank", "WS-353", "SimLex", "analogy", "fit s"]
    body = []
    for row in summary.to_dict("records"):
        body.append([row["method"], *[_cell(row, p) for p in PROBES], _cell(row, "v_measure"),
                     _sci(row, "certificate"), _sci(row, "certificate_unit"), _cell(row, "distortion", 4),
                     _cell(row, "rank_removed", 1), _cell(row, "wordsim353"), _cell(row, "simlex999"),
                     _cell(row, "analogy"), f"{row['fit_seconds']:.1f}"])
    lines += md_table(header, body)
    lines += ["", "## Published figures (not ours: another embedding)", "",
              "On Ravfogel et al.'s GloVe split: GloVe Common Crawl 42B 300d (uncased), the first 150,000 "
              "filtered words, 7,500 male-, 7,500 female-biased and 7,500 neutral words by he - she. With that "
              f"file, `{REPRODUCE_42B}` runs ours on the same words.", ""]
    lines += md_table(["method", *[PROBE_TITLES[p] for p in PROBES], "V-measure", "data", "source"],
                      [[p["name"], *[_fmt(p[k]) for k in PROBES], _fmt(p["v_measure"]), p["data"], p["source"]]
                       for p in PUBLISHED])
    return "\n".join(lines) + "\n"


def _fmt(x) -> str:
    return "-" if x != x else f"{x:.3g}"


def plot(summary, path=None):
    """Probe accuracy against distortion, one point per method with its intervals, one panel per probe.

    Saved as PNG to ``path`` (and closed); without one, the matplotlib figure is returned.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(PROBES), 3.8))
    axes = fig.subplots(1, len(PROBES), sharey=True)
    chance = float(summary["chance"].mean())
    rows = summary.to_dict("records")
    for ax, probe in zip(axes, PROBES):
        for i, row in enumerate(rows):
            x, y = row["distortion"], row[probe]
            xerr = _err(row, "distortion")
            yerr = _err(row, probe)
            ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="o", color=f"C{i % 10}", capsize=3, label=row["method"])
        ax.axhline(chance, color="grey", lw=0.8, ls="--")
        ax.set_title(PROBE_TITLES[probe])
        ax.set_xlabel("distortion (mean squared change)")
    axes[0].set_ylabel("probe accuracy (test words)")
    axes[-1].legend(fontsize="small", loc="best")
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, format="png", dpi=110)
    return None


def _err(row, name: str):
    low, high, mean = row.get(f"{name}_low", np.nan), row.get(f"{name}_high", np.nan), row[name]
    if low != low:
        return None
    return [[max(mean - low, 0.0)], [max(high - mean, 0.0)]]


def write(out_dir, summary, seeds, settings: dict) -> list[Path]:
    """Write :data:`FILES` into ``out_dir`` at once (:func:`embdebias._atomic.atomic_dir`: all or none)."""
    from .._atomic import atomic_dir

    with atomic_dir(out_dir, replaceable="benchmark.json", contents=set(FILES)) as tmp:
        (tmp / "benchmark.md").write_text(markdown(summary, settings), encoding="utf-8")
        summary.to_parquet(tmp / "benchmark.parquet", index=False)
        seeds.to_parquet(tmp / "benchmark_seeds.parquet", index=False)
        plot(summary, tmp / "benchmark.png")
        (tmp / "benchmark.json").write_text(json.dumps(settings, indent=2, default=str) + "\n", encoding="utf-8")
    return [Path(out_dir) / f for f in FILES]
