"""Run a suite of bias and quality metrics over one or more embeddings.

:func:`evaluate` returns a :class:`Report`: one row per (metric, test, statistic), one
column per embedding, like a paper's table, plus every metric's full result (including
the out-of-vocabulary words of each set), the parameters used, and for every metric the
data it used and how to read it.

The metrics are the objects of :mod:`embdebias.metrics.registry`; the default suite
(:data:`DEFAULT_SUITE`) is WEAT (the seven gender tests), RNSB, ECT, BAT, direct bias,
word similarity and analogy. Their defaults come from the ``lists`` set ("published":
Bolukbasi et al.'s professions, Zhao et al.'s SemBias), so the numbers compare with the
literature, and every table names its data.

**Gender direction.** Direct bias is reported twice: on the *original* direction (one
direction for every column: the ``subspace`` given, else fitted on the first column) and
on each column's *own* re-fitted direction. BAT uses each column's ``she - he``. Only
direct bias needs the definitional pairs; the others run without them.

**Tolerant scoring.** A unit (one WEAT test, the SemBias file, one data set, ...) that
cannot be scored on an embedding -- too many missing words, say -- leaves empty cells,
its reason in :attr:`Report.failures` and the report, and a :class:`UnscoredWarning`;
``strict=True`` raises instead. A word set losing more than ``max_missing`` of its
words is such a case.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from ._atomic import atomic_file
from .embedding import as_embedding
from .errors import EmbdebiasError
from .metrics._common import DEFAULT_MAX_MISSING, to_builtin
from .metrics.registry import N_SCORED, REGISTRY, EvalContext, get_metric

#: Metrics run by default, in report order.
DEFAULT_SUITE = ("weat", "rnsb", "ect", "bat", "direct_bias", "indirect_bias", "residual", "extrinsic",
                 "similarity", "analogy")

#: Display names of the registered metrics (the first element of each row key).
METRIC_TITLES = {name: m.title for name, m in REGISTRY.items()}

#: Statistics kept in the report's data but folded into another cell when displayed.
_FOLDED = {"p_value_se", "n_permutations"}

_REPORT_VERSION = 2


class UnscoredWarning(UserWarning):
    """A unit of a metric could not be scored on an embedding; its cells are empty."""


@dataclass
class Report:
    """Scores of several embeddings, one row per (metric, test, statistic).

    Row keys are stable machine keys (``("weat", "gender_career_family",
    "effect_size")``); display labels live in :attr:`labels`.

    Attributes
    ----------
    embeddings : list of str
        Column names, in order.
    rows : list of (metric, test, statistic)
        Row keys, in order.
    values : dict
        ``{(metric, test, statistic): {embedding: float, int or None}}``.
    details : dict
        ``{embedding: {"metric/unit": result.to_dict()}}``, with the out-of-vocabulary
        words of every set under ``"missing"``.
    params : dict
        The parameters of the run.
    data : dict
        ``{metric: text}``: the lists and data set each metric used, their source and size.
    legends : dict
        ``{metric: text}``: what each metric measures and which way is fairer.
    labels : dict
        ``{metric: {statistic: display label}}``.
    failures : list of dict
        ``{"embedding", "metric", "unit", "reason"}`` of every unit not scored.
    comparisons : list of dict
        For every bias statistic of every column but the first (the reference):
        ``{"embedding", "reference", "metric", "test", "statistic", "reference_value",
        "value", "change", "ci_low", "ci_high", "outcome", "n_items"}``, where ``change``
        is the paired change of the bias magnitude (negative: fairer) and ``outcome`` is
        "improved", "worse" or "no significant change" (see
        :func:`~embdebias.metrics.uncertainty.paired_change`).
    """

    embeddings: list[str]
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    values: dict[tuple[str, str, str], dict[str, float | None]] = field(default_factory=dict)
    details: dict[str, dict[str, dict]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)
    legends: dict[str, str] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    comparisons: list[dict] = field(default_factory=list)

    # -- building --------------------------------------------------------------------
    def add(self, embedding: str, metric: str, test: str, statistic: str, value) -> None:
        """Set one cell (NaN and infinity become None)."""
        key = (metric, test, statistic)
        if key not in self.values:
            self.rows.append(key)
            self.values[key] = {}
        if value is not None and not isinstance(value, (bool, int)):
            value = float(value)
            value = value if math.isfinite(value) else None
        self.values[key][embedding] = value

    @classmethod
    def combine(cls, reports) -> "Report":
        """The columns of several reports side by side, in the order given.

        Rows are the union of the reports' rows in first-seen order; a cell a report
        does not have stays empty. Column names must be distinct.
        """
        reports = list(reports)
        if not reports:
            raise EmbdebiasError("Report.combine: no reports given")
        first = reports[0]
        out = cls([], params=dict(first.params))
        for rep in reports:
            clash = set(out.embeddings) & set(rep.embeddings)
            if clash:
                raise EmbdebiasError(f"Report.combine: column(s) {', '.join(sorted(clash))} in two reports")
            out.embeddings.extend(rep.embeddings)
            for key in rep.rows:
                if key not in out.values:
                    out.rows.append(key)
                    out.values[key] = {}
                out.values[key].update(rep.values[key])
            out.details.update(rep.details)
            out.failures.extend(rep.failures)
            out.comparisons.extend(rep.comparisons)
            for mine, theirs in ((out.data, rep.data), (out.legends, rep.legends), (out.labels, rep.labels)):
                for k, v in theirs.items():
                    mine.setdefault(k, v)
        return out

    # -- access ----------------------------------------------------------------------
    def value(self, metric: str, test: str, statistic: str, embedding: str | None = None):
        """One cell; ``embedding`` may be omitted when there is only one column.

        Raises :class:`KeyError` for a row or column the report does not have (an
        empty cell, a unit not scored, is None).
        """
        if embedding is None:
            if len(self.embeddings) != 1:
                raise KeyError(f"the report has {len(self.embeddings)} embeddings; name one of "
                               f"{', '.join(self.embeddings)}")
            embedding = self.embeddings[0]
        if embedding not in self.embeddings:
            raise KeyError(f"no embedding {embedding!r} in the report; it has {', '.join(self.embeddings)}")
        key = (metric, test, statistic)
        if key not in self.values:
            raise KeyError(f"no row {key!r} in the report")
        return self.values[key].get(embedding)

    @property
    def missing(self) -> dict[str, dict[str, dict[str, list[str]]]]:
        """``{embedding: {"metric/unit": {set: [out-of-vocabulary words]}}}`` (non-empty only)."""
        out: dict = {}
        for emb, results in self.details.items():
            for key, res in results.items():
                sets = {k: v for k, v in (res.get("missing") or {}).items() if v}
                if sets:
                    out.setdefault(emb, {})[key] = sets
        return out

    def to_frame(self):
        """A pandas DataFrame, one row per cell: embedding, metric, test, statistic, value.

        Needs pandas (``pip install 'embdebias[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Report.to_frame needs pandas: pip install 'embdebias[pandas]'") from None
        records = [{"embedding": e, "metric": m, "test": t, "statistic": s, "value": cells.get(e)}
                   for (m, t, s), cells in self.values.items() for e in self.embeddings]
        return pd.DataFrame.from_records(records, columns=["embedding", "metric", "test", "statistic", "value"])

    # -- serialisation -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable dict (see :meth:`from_dict`)."""
        return to_builtin({
            "version": _REPORT_VERSION,
            "embeddings": list(self.embeddings),
            "rows": [{"metric": m, "test": t, "statistic": s, "values": dict(self.values[(m, t, s)])}
                     for m, t, s in self.rows],
            "details": self.details, "params": self.params, "data": self.data,
            "legends": self.legends, "labels": self.labels, "failures": self.failures,
            "comparisons": self.comparisons, "verdict": self.verdict(), "agreement": self.agreement(),
        })

    @classmethod
    def from_dict(cls, data: Mapping) -> "Report":
        """Rebuild a report from :meth:`to_dict`'s output."""
        try:
            report = cls(list(data["embeddings"]), details=dict(data.get("details", {})),
                         params=dict(data.get("params", {})), data=dict(data.get("data", {})),
                         legends=dict(data.get("legends", {})), labels=dict(data.get("labels", {})),
                         failures=list(data.get("failures", [])),
                         comparisons=list(data.get("comparisons", [])))
            for row in data["rows"]:
                key = (row["metric"], row["test"], row["statistic"])
                report.rows.append(key)
                report.values[key] = dict(row["values"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbdebiasError(f"not an embdebias report: missing or malformed {exc}") from None
        return report

    def to_json(self, path, *, indent: int = 2) -> None:
        """Write :meth:`to_dict` as JSON to ``path`` (atomically)."""
        with atomic_file(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, indent=indent, allow_nan=False)
                fh.write("\n")

    @classmethod
    def from_json(cls, path) -> "Report":
        with open(path, encoding="utf-8") as fh:
            try:
                return cls.from_dict(json.load(fh))
            except json.JSONDecodeError as exc:
                raise EmbdebiasError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None

    # -- display -----------------------------------------------------------------------
    def to_markdown(self, *, digits: int = 3, missing: bool = True) -> str:
        """Markdown: per metric its data, how to read it and a table (rows = tests x
        statistics, columns = embeddings); then the units not scored and, with
        ``missing=True``, the out-of-vocabulary words."""
        parts = self._verdict_lines()
        for metric in dict.fromkeys(m for m, _, _ in self.rows):
            parts += self._metric_section(metric, digits)
        if self.failures:
            parts.append("### Not scored\n")
            parts += [f"- {f['embedding']}, {f['metric']}/{f['unit']}: {f['reason']}" for f in self.failures]
            parts.append("")
        if missing and self.missing:
            parts += self._missing_lines()
        return "\n".join(parts)

    def _metric_section(self, metric: str, digits: int) -> list[str]:
        parts = [f"### {METRIC_TITLES.get(metric, metric)}\n"]
        for label, text in (("Data", self.data.get(metric)), ("How to read", self.legends.get(metric))):
            if text:
                parts.append(f"{label}: {text}\n")
        parts.append(self._table(metric, digits) + "\n")
        if any(s.endswith("_ci_low") for m, _, s in self.rows if m == metric):
            parts.append(self._interval_note() + "\n")
        if metric == "extrinsic":
            text = self._agreement_line()
            parts += [text + "\n"] if text else []
        for emb, results in self.details.items():  # listings, e.g. generated analogies
            for key, res in results.items():
                if key.startswith(metric + "/") and res.get("listing"):
                    parts.append(f"- {emb}: {res['listing']}")
        return parts + [""]

    def _missing_lines(self) -> list[str]:
        parts = ["### Out-of-vocabulary words\n"]
        for emb, per in self.missing.items():
            for key, sets in per.items():
                listed = "; ".join(f"{k}: {', '.join(v[:20])}{' ...' if len(v) > 20 else ''}"
                                   for k, v in sets.items())
                parts.append(f"- {emb}, {key}: {listed}")
        return parts + [""]

    # -- uncertainty and the verdict -----------------------------------------------------
    def _interval_note(self) -> str:
        boot = self.params.get("bootstrap_resamples")
        ref = self.embeddings[0] if self.embeddings else ""
        return (f"[a, b]: {self.params.get('bootstrap_level', 0.95):.0%} interval, a bootstrap over the "
                f"words or lines{f' ({boot:,} resamples)' if boot else ''} unless 'How to read' says otherwise; † the change from '{ref}' is within the noise "
                f"(paired bootstrap interval of the change contains 0).")

    def verdict(self) -> dict:
        """Per column compared with the reference: per metric, the statistics that improved
        significantly, did not change significantly, and got worse; computed from
        :attr:`comparisons`, never written by hand."""
        out: dict = {}
        for c in self.comparisons:
            per = out.setdefault(c["embedding"], {}).setdefault(
                c["metric"], {"improved": [], "no significant change": [], "worse": [], "not comparable": []})
            per[c["outcome"]].append(f"{c['test']}/{c['statistic']}")
        for emb in self.embeddings[1:]:
            recoverable = self.recoverable(emb)
            if recoverable is not None:
                out.setdefault(emb, {})["residual"] = recoverable
        return out

    def agreement(self) -> dict | None:
        """Whether the intrinsic and extrinsic verdicts agree, and their rank correlation across
        the columns (see :mod:`embdebias.metrics.agreement`); None without both kinds."""
        from .metrics.agreement import agreement

        return agreement(self.comparisons, self.embeddings)

    def _agreement_line(self) -> str:
        """The agreement as one line, saying first whether the reference had a measurable
        extrinsic gender gap (the signed score gaps' intervals)."""
        from .metrics.agreement import agreement_text

        ref = self.embeddings[0] if self.embeddings else ""
        gaps = [(t, self.values[(m, t, s)].get(ref), self.values.get((m, t, "score_gap_ci_high"), {}).get(ref))
                for m, t, s in self.rows if m == "extrinsic" and s == "score_gap_ci_low"]
        note = ""
        if gaps and all(lo is not None and hi is not None and lo <= 0 <= hi for _, lo, hi in gaps):
            note = (f"'{ref}' has no female - male score gap beyond the noise in any template family "
                    f"({', '.join(f'{t} [{lo:.3g}, {hi:.3g}]' for t, lo, hi in gaps)}), so there was "
                    f"little extrinsic gender bias for debiasing to remove.")
        return agreement_text(self.agreement(), note)

    def recoverable(self, embedding: str) -> dict | None:
        """Whether the residual tests still recover gender in ``embedding``: clustering or SVM
        accuracy whose interval lies above chance (0.5). None without the residual tests."""
        def cell(stat):
            return self.values.get(("residual", "gender", stat), {}).get(embedding)

        acc = {s: (cell(s), cell(f"{s}_ci_low")) for s in ("cluster_accuracy", "classification_accuracy")}
        if all(v is None for v, _ in acc.values()):
            return None
        return {"recoverable": any(lo is not None and lo > 0.5 for _, lo in acc.values()),
                "cluster_accuracy": acc["cluster_accuracy"][0],
                "classification_accuracy": acc["classification_accuracy"][0],
                "neighbour_correlation": cell("neighbour_correlation")}

    def _verdict_lines(self) -> list[str]:
        verdict = self.verdict()
        if not verdict:
            return []
        by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in self.comparisons}
        lines = ["### Verdict", "",
                 f"Each bias number of every column against '{self.embeddings[0]}', with a paired "
                 f"bootstrap over the same words: what changed beyond the noise.", ""]
        for emb, per_metric in verdict.items():
            parts = []
            for metric, outcome in per_metric.items():
                if metric == "residual":
                    parts.append(_recoverable_text(outcome))
                    continue
                n = sum(len(v) for v in outcome.values())
                counts = ", ".join(f"{len(v)} {k}" for k, v in outcome.items() if v)
                worse = [by_key[(emb, metric, *item.split("/"))] for item in outcome["worse"]]
                detail = ", ".join(f"{w['test']} {self.labels.get(metric, {}).get(w['statistic'], w['statistic'])} "
                                   f"{w['reference_value']:.3g} -> {w['value']:.3g}"
                                   for w in worse if w["value"] is not None)
                parts.append(f"{METRIC_TITLES.get(metric, metric)}: {counts} of {n}"
                             + (f" (worse: {detail})" if detail else ""))
            lines.append(f"- **{emb}**: " + "; ".join(parts) + ".")
        text = self._agreement_line()
        return lines + ([f"- {text}"] if text else []) + [""]

    def _table(self, metric: str, digits: int) -> str:
        labels = self.labels.get(metric, {})
        lines = ["| " + " | ".join(["test", "statistic", *self.embeddings]) + " |",
                 "| " + " | ".join(["---", "---"] + ["---:"] * len(self.embeddings)) + " |"]
        last_test = None
        for m, t, s in self.rows:
            if m != metric or s in _FOLDED or s.endswith(("_ci_low", "_ci_high")):
                continue
            cells = [self._cell(m, t, s, e, digits) for e in self.embeddings]
            label = str(labels.get(s, s)).replace("|", "\\|")
            lines.append("| " + " | ".join([t if t != last_test else "", label, *cells]) + " |")
            last_test = t
        return "\n".join(lines)

    def _cell(self, metric: str, test: str, statistic: str, embedding: str, digits: int) -> str:
        v = self.values[(metric, test, statistic)].get(embedding)
        if v is None:
            return "n/a"
        if isinstance(v, (bool, int)) or statistic == N_SCORED:
            return str(int(v))
        if statistic != "p_value":
            digits = self._decimals(metric, test, statistic, digits)
            return f"{v:.{digits}f}" + self._interval(metric, test, statistic, embedding, digits)
        se = self.values.get((metric, test, "p_value_se"), {}).get(embedding)
        n = self.values.get((metric, test, "n_permutations"), {}).get(embedding)
        if not se:
            return f"{v:.{digits}g}"
        if n and v <= 1.0 / (n + 1) * (1 + 1e-9):
            return f"<= {1.0 / (n + 1):.1g}"
        return f"{v:.{digits}g} ± {se:.1g}"

    def _decimals(self, metric: str, test: str, statistic: str, digits: int) -> int:
        """``digits`` decimals, more for a row whose values and intervals are all below 0.1,
        so that 0.0028 [0.001, 0.021] does not print as 0.003 [0.00, 0.02] (the interval
        keeps one decimal fewer than the value, as in every row)."""
        cells = [v for s in (statistic, f"{statistic}_ci_low", f"{statistic}_ci_high")
                 for v in self.values.get((metric, test, s), {}).values()]
        largest = max((abs(c) for c in cells if isinstance(c, float)), default=0.0)
        if not 0.0 < largest < 0.1:
            return digits
        return min(digits + int(-math.floor(math.log10(largest))) - 1, digits + 3)

    def _interval(self, metric: str, test: str, statistic: str, embedding: str, digits: int) -> str:
        lo = self.values.get((metric, test, f"{statistic}_ci_low"), {}).get(embedding)
        hi = self.values.get((metric, test, f"{statistic}_ci_high"), {}).get(embedding)
        text = f" [{lo:.{digits - 1}f}, {hi:.{digits - 1}f}]" if lo is not None and hi is not None else ""
        flat = any(c["outcome"] == "no significant change" and c["embedding"] == embedding
                   and (c["metric"], c["test"], c["statistic"]) == (metric, test, statistic)
                   for c in self.comparisons)
        return text + (" †" if flat else "")

    def __str__(self) -> str:
        return self.to_markdown()


def _recoverable_text(r: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:.2f}"
    state = "gender still recoverable" if r["recoverable"] else "gender not recoverable beyond chance"
    return (f"{state} (clustering {f(r['cluster_accuracy'])}, SVM {f(r['classification_accuracy'])}, "
            f"neighbour r {f(r['neighbour_correlation'])})")


def _named_embeddings(embeddings) -> dict:
    if isinstance(embeddings, Mapping):
        items = [(str(k), as_embedding(v, name=str(k))) for k, v in embeddings.items()]
    elif isinstance(embeddings, (list, tuple)) and not (
            len(embeddings) == 2 and not hasattr(embeddings[0], "vectors")
            and not hasattr(embeddings[0], "index_to_key") and hasattr(embeddings[1], "shape")):
        items = []
        for e in embeddings:
            emb = as_embedding(e)
            items.append((emb.name, emb))
    else:
        emb = as_embedding(embeddings)
        items = [(emb.name, emb)]
    if not items:
        raise EmbdebiasError("evaluate: no embeddings given")
    out: dict = {}
    for name, emb in items:
        unique, k = name, 2
        while unique in out:
            unique, k = f"{name}-{k}", k + 1
        out[unique] = emb
    return out


def suite_options(names) -> dict:
    """Turn a list of metric names, WEAT groups and WEAT test ids into :func:`evaluate` options.

    Names are case-insensitive. ``["weat", "BAT"]`` -> ``{"suite": ("weat", "bat")}``;
    ``["caliskan"]`` -> the WEAT metric over that group; ``["weat6", "gender_math_arts"]``
    -> those WEAT tests. Unknown names raise :class:`EmbdebiasError` listing what is known.
    """
    from . import wordlists

    tests = wordlists.weat_tests()
    groups = {t.group.lower(): t.group for t in tests}
    by_id = {t.id.lower(): t for t in tests}
    suite, weat_groups, weat_tests = [], [], []
    for name in names:
        key = str(name).lower()
        if key in REGISTRY:
            suite.append(key)
        elif key in groups:
            weat_groups.append(groups[key])
        elif key in by_id:
            weat_tests.append(by_id[key])
        else:
            raise EmbdebiasError(f"unknown test {name!r}; known: metrics {', '.join(REGISTRY)}; "
                                 f"WEAT groups {', '.join(groups.values())}; WEAT tests "
                                 f"{', '.join(t.id for t in tests)}")
    if (weat_groups or weat_tests) and "weat" not in suite:
        suite.insert(0, "weat")
    options = {"suite": tuple(dict.fromkeys(suite))}
    if weat_tests:
        options["weat_tests"] = weat_tests + [t for g in weat_groups for t in wordlists.weat_tests(g)]
    elif weat_groups:
        options["weat_groups"] = tuple(weat_groups)
    return options


def _weat_tests(weat_groups, weat_tests) -> list:
    from . import wordlists

    if weat_tests is not None:
        return list(weat_tests)
    known = {t.group for t in wordlists.weat_tests()}
    bad = [g for g in (weat_groups or ()) if g not in known]
    if bad:
        raise EmbdebiasError(f"unknown WEAT group(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    return [t for g in (weat_groups or ()) for t in wordlists.weat_tests(g)]


def _score_unit(report: Report, metric, emb_name: str, emb, unit: str, ctx: EvalContext, strict: bool,
                samples: dict) -> None:
    """Score one unit of one metric on one embedding into ``report`` (tolerant unless ``strict``);
    its bootstrap samples go into ``samples[(embedding, metric, test, statistic)]``."""
    try:
        result, cells, unit_samples = metric.score(emb, unit, ctx)
    except EmbdebiasError as exc:
        if strict:
            raise
        reason = str(exc)
        warnings.warn(f"{emb_name}: {metric.name}/{unit} not scored: {reason}", UnscoredWarning, stacklevel=4)
        report.failures.append({"embedding": emb_name, "metric": metric.name, "unit": unit, "reason": reason})
        for test in metric.tests(unit):
            for stat in metric.statistics:
                report.add(emb_name, metric.name, test, stat, None)
        return
    report.details.setdefault(emb_name, {})[f"{metric.name}/{unit}"] = result.to_dict()
    for (test, stat), sample in unit_samples.items():
        samples[(emb_name, metric.name, test, stat)] = sample
    for test, stats in cells.items():
        for stat, value in stats.items():
            report.add(emb_name, metric.name, test, stat, value)


def _add_uncertainty(report: Report, samples: dict, n_boot: int, level: float, seed) -> None:
    """Bootstrap intervals of every sampled statistic, and paired comparisons with the first column.

    Each interval and comparison draws from its own generator, seeded by ``seed`` and the
    row's key, so the numbers do not depend on what else was computed.
    """
    import zlib

    import numpy as np

    from .metrics.uncertainty import bootstrap_interval, paired_change

    def rng(*key):
        return np.random.default_rng([0 if seed is None else int(seed), zlib.crc32("/".join(key).encode())])

    reference = report.embeddings[0]
    for (emb, metric, test, stat), sample in samples.items():
        lo, hi = bootstrap_interval(sample, n_boot, rng(emb, metric, test, stat), level)
        report.add(emb, metric, test, f"{stat}_ci_low", lo)
        report.add(emb, metric, test, f"{stat}_ci_high", hi)
        ref = samples.get((reference, metric, test, stat))
        if emb == reference or ref is None:
            continue
        change = paired_change(ref, sample, n_boot, rng("paired", emb, metric, test, stat), level)
        report.comparisons.append({
            "embedding": emb, "reference": reference, "metric": metric, "test": test, "statistic": stat,
            "reference_value": report.values[(metric, test, stat)].get(reference),
            "value": report.values[(metric, test, stat)].get(emb), **change})


def _templates_name(templates) -> str:
    return "bundled" if templates is None else str(getattr(templates, "path", templates))


def evaluate(embeddings, suite=None, *, subspace=None, sembias=None, random_state: int | None = 0,
             max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
             weat_groups=("gender",), weat_tests=None, n_permutations: int = 100_000,
             exact_limit: int = 1_000_000, bootstrap: int = 1000, level: float = 0.95, rnsb_runs: int = 10,
             rnsb_C: float = 1.0, identity_terms=None, neutral_words=None, c: float = 1.0,
             similarity_datasets=("wordsim353", "simlex999"), analogy_restrict_vocab: int = 30_000,
             lists: str = "published", direction_name: str | None = None, strict: bool = False,
             templates=None, progress=None) -> Report:
    """Score one or more embeddings with a suite of metrics (see the module docstring).

    Parameters
    ----------
    embeddings : Embedding, KeyedVectors, list of them, or dict name -> embedding
        Columns of the report (a list uses each embedding's ``name``). The first column
        is the reference ("original") whose gender direction every column is measured on.
    suite : sequence of str, optional
        Metrics to run (names of :data:`~embdebias.metrics.registry.REGISTRY`,
        case-insensitive; default :data:`DEFAULT_SUITE`).
    subspace : BiasSubspace or array, optional
        The "original" gender direction for direct bias; default fitted on the first column.
    sembias : path, optional
        SemBias-format file for BAT (default: the SemBias file of ``lists``).
    random_state : int or None, default 0
        Seed of every random step (WEAT permutations and bootstrap, RNSB splits).
    max_missing : float, default 0.2
        Largest fraction of any word set that may be out of vocabulary.
    lowercase : bool, default True
        Fall back to lowercase forms of words whose exact form is missing (reported).
    weat_groups : sequence of str, default ("gender",)
        Groups of bundled WEAT tests; add "caliskan" for Caliskan et al.'s ten.
    weat_tests : list of WeatTest, optional
        Explicit tests (replaces ``weat_groups``).
    n_permutations, exact_limit
        Passed to :func:`~embdebias.metrics.weat`.
    bootstrap : int, default 1000
        Resamples of the bootstrap that gives every bias number its interval at ``level``
        and compares every column with the first (paired); 0 skips it.
    level : float, default 0.95
        Coverage of the intervals.
    rnsb_runs, rnsb_C, identity_terms
        Passed to :func:`~embdebias.metrics.rnsb`.
    neutral_words : list of str or a list name/path, optional
        Words for direct bias and the professions ECT (default: the professions of ``lists``).
    c : float, default 1.0
        Direct-bias exponent.
    similarity_datasets : sequence of str
        Word-similarity datasets.
    analogy_restrict_vocab : int, default 30_000
    lists : {"published", "curated"}, default "published"
        The bundled list set for the professions (direct bias, ECT) and SemBias (BAT).
    direction_name : str, optional
        What ``subspace`` is, for the report (e.g. "the original embedding's").
    templates : path or TemplateSet, optional
        Counterfactual templates of the extrinsic probe (default: the bundled
        ``extrinsic_templates.json``; see :mod:`embdebias.fairness.templates`).
    strict : bool, default False
        Raise on the first unit that cannot be scored instead of leaving it empty.
    progress : callable, optional
        Called as ``progress(embedding_name, metric)`` before each metric runs.

    Returns
    -------
    Report
    """
    from . import wordlists

    named = _named_embeddings(embeddings)
    names = DEFAULT_SUITE if suite is None else ([suite] if isinstance(suite, str) else suite)
    metrics = [get_metric(m) for m in names]
    wordlists.check_lists(lists)
    neutral = None if neutral_words is None else wordlists.resolve_words(neutral_words, "professions", lists)
    first = next(iter(named))
    ctx = EvalContext(
        lists=lists, max_missing=max_missing, lowercase=lowercase, random_state=random_state,
        weat_tests=_weat_tests(weat_groups, weat_tests), n_permutations=n_permutations,
        exact_limit=exact_limit, rnsb_runs=rnsb_runs, rnsb_C=rnsb_C,
        identity_terms=identity_terms, neutral_words=neutral, neutral_source=neutral_words,
        neutral_name="professions" if neutral_words is None else "neutral words", c=c,
        sembias=sembias, similarity_datasets=tuple(similarity_datasets),
        analogy_restrict_vocab=analogy_restrict_vocab, subspace=subspace,
        direction_name=direction_name, reference=named[first], reference_name=first, templates=templates)

    report = Report(list(named))
    report.params = to_builtin({
        "suite": [m.name for m in metrics], "random_state": random_state, "max_missing": max_missing,
        "lowercase": lowercase, "weat_tests": [t.id for t in ctx.weat_tests],
        "n_permutations": n_permutations, "exact_limit": exact_limit,
        "bootstrap_resamples": bootstrap, "bootstrap_level": level,
        "rnsb_runs": rnsb_runs, "rnsb_C": rnsb_C, "c": c, "sembias": str(sembias) if sembias else "bundled",
        "similarity_datasets": list(similarity_datasets), "analogy_restrict_vocab": analogy_restrict_vocab,
        "direction": ctx.reference_label, "bat_direction": "she - he", "lists": lists, "strict": strict,
        "templates": _templates_name(templates),
    })
    for metric in metrics:
        report.data[metric.name] = metric.data(ctx)
        report.legends[metric.name] = metric.legend_for(ctx)
        report.labels[metric.name] = dict(metric.statistics)
    samples: dict = {}
    for name, emb in named.items():
        report.details.setdefault(name, {})
        for metric in metrics:
            if progress is not None:
                progress(name, metric.name)
            for unit in metric.units(ctx):
                _score_unit(report, metric, name, emb, unit, ctx, strict, samples)
    if bootstrap:
        from ._threads import one_thread

        with one_thread():  # thousands of small products (resamples x items)
            _add_uncertainty(report, samples, int(bootstrap), float(level), random_state)
    return report
