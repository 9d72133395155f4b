"""Run a suite of bias and quality metrics over one or more embeddings.

:func:`evaluate` returns a :class:`~embdebias.report.Report`: one row per (metric, test,
statistic), one column per embedding, like a paper's table, each cell a value with its
interval, plus every metric's full result (including the out-of-vocabulary words of each
set), the parameters used, and for every metric the data it used and how to read it.

The metrics are those of the registry (:data:`embdebias.metrics.METRICS`, one module
each); the default suite is :data:`DEFAULT_SUITE` (its docs are made from the registry
below). Their defaults come from the ``lists`` set ("published": Bolukbasi et al.'s
professions, Zhao et al.'s SemBias), so the numbers compare with the literature, and
every table names its data. ``evaluate`` takes only what the metrics share; a metric's
own options go through ``options={"weat": {"n_permutations": 10_000}, "bat": {"sembias":
path}}``, checked by the metric (its :attr:`~embdebias.metrics.Metric.options`).

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
import numbers
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._gc import fewer_collections
from ._warn import warn
from .embedding import as_embedding
from .errors import EmbdebiasError
from .metrics import METRICS, EvalContext, get_metric
from .metrics.base import (DEFAULT_MAX_MISSING, Sample, bias_of, bootstrap_interval, bootstrap_intervals,
                           check_max_missing, paired_change, paired_changes, resample_rng, to_builtin)
from .report import Report

__all__ = ["DEFAULT_SUITE", "MOVED_OPTIONS", "Report", "UnscoredWarning", "evaluate", "suite_doc", "suite_for",
           "suite_options", "test_files", "tests_help"]

#: Metrics run by default, in report order.
DEFAULT_SUITE = ("weat", "rnsb", "ect", "bat", "direct_bias", "indirect_bias", "residual", "extrinsic",
                 "similarity", "analogy")


#: Where the keyword arguments ``evaluate`` took before issue 19 went: ``{old: (metric, option)}``
#: (``neutral_words`` went to each metric that uses it: direct_bias, ect, indirect_bias, residual).
MOVED_OPTIONS = {
    "sembias": ("bat", "sembias"), "weat_groups": ("weat", "groups"), "weat_tests": ("weat", "tests"),
    "n_permutations": ("weat", "n_permutations"), "exact_limit": ("weat", "exact_limit"),
    "rnsb_runs": ("rnsb", "runs"), "rnsb_C": ("rnsb", "C"), "identity_terms": ("rnsb", "identity_terms"),
    "c": ("direct_bias", "c"), "neutral_words": ("direct_bias", "neutral_words"),
    "similarity_datasets": ("similarity", "datasets"), "analogy_restrict_vocab": ("analogy", "restrict_vocab"),
    "templates": ("extrinsic", "templates"),
}


def suite_doc(names=DEFAULT_SUITE) -> str:
    """``name (title)`` of each metric of a suite, from the registry."""
    return ", ".join(f"{n} ({get_metric(n).title})" for n in names)


def tests_help() -> str:
    """The help of the CLI's ``--tests``: the registered metrics (those outside the default
    suite marked), the WEAT groups and what the default is; made from the registry."""
    from . import wordlists

    extra = [n for n in METRICS if n not in DEFAULT_SUITE]
    groups = " ".join(dict.fromkeys(t.group for t in wordlists.weat_tests()))
    note = f"; not in the default suite: {' '.join(extra)}" if extra else ""
    return (f"what to run: metric names ({' '.join(METRICS)}{note}), WEAT groups ({groups}) "
            f"or WEAT test ids (default: the full suite: {' '.join(DEFAULT_SUITE)})")


def metrics_table() -> str:
    """The README's table of the registered metrics (a test keeps the two the same)."""
    rows = ["| metric | what it is | default suite | its options (`options={metric: {...}}`) |",
            "| --- | --- | --- | --- |"]
    for name, metric in METRICS.items():
        opts = ", ".join(f"`{o}`" for o in getattr(metric, "options", {})) or "none"
        rows.append(f"| `{name}` | {metric.title} | {'yes' if name in DEFAULT_SUITE else 'no'} | {opts} |")
    return "\n".join(rows)


class UnscoredWarning(UserWarning):
    """A unit of a metric could not be scored on an embedding; its cells are empty."""


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


def _user_weat_tests(name, bundled: list, groups: dict) -> list:
    """The WEAT tests of a user's JSON file ``name`` (group "user" unless they name one)."""
    import dataclasses
    from pathlib import Path

    from . import wordlists

    if not (str(name).lower().endswith(".json") or Path(str(name)).is_file()):
        raise EmbdebiasError(f"unknown test {name!r}; known: metrics {', '.join(METRICS)}; "
                             f"WEAT groups {', '.join(groups.values())}; WEAT tests "
                             f"{', '.join(t.id for t in bundled)}; or a JSON file of WEAT tests")
    return [t if t.group else dataclasses.replace(t, group="user") for t in wordlists.load_weat_tests(Path(str(name)))]


def test_files(names) -> list[str]:
    """The names of ``names`` that are a user's WEAT test files, not metrics, WEAT groups or test ids."""
    from . import wordlists

    tests = wordlists.weat_tests()
    known = set(METRICS) | {t.group.lower() for t in tests} | {t.id.lower() for t in tests}
    return [str(n) for n in names if str(n).lower() not in known]


def suite_options(names) -> dict:
    """Turn a list of metric names, WEAT groups and WEAT test ids into :func:`evaluate` arguments.

    Names are case-insensitive. ``["weat", "BAT"]`` -> ``{"suite": ("weat", "bat")}``;
    ``["caliskan"]`` -> the WEAT metric over that group (``options={"weat": {"groups":
    ("caliskan",)}}``); ``["weat6", "gender_math_arts"]`` -> those WEAT tests; a path to a
    JSON file of WEAT tests (the format of ``wordlists/weat_tests.json``: a list of
    ``{"id", "title", "X": {"name", "words"}, "Y", "A", "B"}``) -> its tests, checked with
    errors naming the file, the test and the key. Unknown names raise
    :class:`EmbdebiasError` listing what is known.
    """
    from . import wordlists

    tests = wordlists.weat_tests()
    groups = {t.group.lower(): t.group for t in tests}
    by_id = {t.id.lower(): t for t in tests}
    suite, weat_groups, weat_tests = [], [], []
    for name in names:
        key = str(name).lower()
        if key in METRICS:
            suite.append(key)
        elif key in groups:
            weat_groups.append(groups[key])
        elif key in by_id:
            weat_tests.append(by_id[key])
        else:
            weat_tests += _user_weat_tests(name, tests, groups)
    if (weat_groups or weat_tests) and "weat" not in suite:
        suite.insert(0, "weat")
    out: dict = {"suite": tuple(dict.fromkeys(suite))}
    if weat_tests:
        out["options"] = {"weat": {"tests": weat_tests + [t for g in weat_groups for t in wordlists.weat_tests(g)]}}
    elif weat_groups:
        out["options"] = {"weat": {"groups": tuple(weat_groups)}}
    return out


@dataclass
class ColumnScores:
    """What scoring one column gave, before the bootstrap: its cells in the order scored
    (``(metric, test, statistic, value)``), each unit's details (``{"metric/unit": dict}``),
    the units that failed, the bootstrap samples (``{(metric, test, statistic): Sample}``) and
    the warnings raised (``(embedding's own name, warning)``). Kept apart from the report so
    that a column scored once can be merged into another report (:func:`evaluate`'s ``reuse``)."""

    cells: list = field(default_factory=list)
    details: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    samples: dict = field(default_factory=dict)
    raised: list = field(default_factory=list)

    def merge_into(self, report: Report, column: str, samples: dict, raised: list) -> None:
        """Write the column into ``report`` under the name ``column`` (and its samples and warnings)."""
        report.details[column] = dict(self.details)
        report.failures += [{"embedding": column, **f} for f in self.failures]
        for metric, test, stat, value in self.cells:
            report.add(column, metric, test, stat, value)
        samples.update({(column, *key): sample for key, sample in self.samples.items()})
        raised += [(column, emb_name, w) for emb_name, w in self.raised]


def _score_unit(scores: ColumnScores, metric, emb_name: str, emb, unit: str, ctx: EvalContext,
                strict: bool) -> None:
    """Score one unit of one metric on one embedding into ``scores`` (tolerant unless ``strict``)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result, cells, unit_samples = metric.score(emb, unit, ctx)
            finally:
                scores.raised += [(getattr(emb, "name", emb_name), w) for w in caught]
    except EmbdebiasError as exc:
        if strict:
            raise
        scores.failures.append({"metric": metric.name, "unit": unit, "reason": str(exc)})
        scores.cells += [(metric.name, test, stat, None) for test in metric.tests(unit) for stat in metric.statistics]
        return
    scores.details[f"{metric.name}/{unit}"] = result.to_dict()
    for (test, stat), sample in unit_samples.items():
        scores.samples[(metric.name, test, stat)] = sample
    scores.cells += [(metric.name, test, stat, value) for test, stats in cells.items() for stat, value in stats.items()]


def _score_column(metrics, name: str, emb, ctx: EvalContext, strict: bool, tick) -> ColumnScores:
    """Every unit of every metric on one column (``tick(name, metric)`` before each metric)."""
    scores = ColumnScores()
    for metric in metrics:
        if tick is not None:
            tick(name, metric.name)
        for unit in metric.units(ctx):
            _score_unit(scores, metric, name, emb, unit, ctx, strict)
    return scores


def _subspace_state(subspace):
    """What the metrics read of a subspace, for comparing two: its fitted arrays (or the array itself)."""
    if subspace is None or not hasattr(subspace, "components_"):
        return subspace if subspace is None else np.asarray(subspace)
    return {k: v for k, v in vars(subspace).items() if k.endswith("_")}


def _same_state(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
            and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return type(a) is type(b) and a == b


def _reference_scores(reuse, metrics, name: str, emb, ctx: EvalContext, params: dict, strict: bool,
                      tick) -> ColumnScores:
    """The first column's scores: those kept in ``reuse`` when they were scored on this very
    embedding object under the same parameters and subspace, else scored now (and kept).

    A column's scores depend only on itself, the shared options and the first column (the
    reference), never on the other columns, so the first column's scores can be reused
    across calls that change only the others (a sweep's debiased points beside their baseline)."""
    state = _subspace_state(ctx.subspace)
    params = json.dumps(params, sort_keys=True, default=repr)  # a copy: the report's dict may change later
    kept = reuse.get("reference") if reuse is not None else None
    if kept is not None and kept[0] is emb and kept[1] == params and _same_state(kept[2], state):
        if tick is not None:
            for metric in metrics:
                tick(name, metric.name)
        return kept[3]
    scores = _score_column(metrics, name, emb, ctx, strict, tick)
    if reuse is not None:
        reuse["reference"] = (emb, params, state, scores)
    return scores


def _warn_once(raised: list, columns: list) -> None:
    """Each distinct warning the metrics raised, once, with the columns it was raised on (a
    metric warning of the same list on every column would otherwise repeat it per column).
    Warnings that differ only by the embedding they name are one: the first column's is shown."""
    by_text: dict = {}
    for column, emb_name, w in raised:
        text = str(w.message)
        # the embedding's name as a word of its own ("other" is not the one in "mother")
        same = re.sub(rf"(?<![\w.-]){re.escape(emb_name)}(?![\w.-])", "\0", text) if emb_name else text
        by_text.setdefault((w.category, same), (w, text, []))[2].append(column)
    for (category, _), (w, text, names) in by_text.items():
        names = list(dict.fromkeys(names))
        if len(columns) > 1:
            text += f" (on {len(names)} of {len(columns)} columns: {', '.join(names)})"
        warnings.warn_explicit(text, category, w.filename, w.lineno)


def _warn_unscored(report: Report) -> None:
    """One :class:`UnscoredWarning` per unit not scored, however many columns it failed on,
    with the count and the columns (the first column's reason; each is in the report)."""
    by_unit: dict = {}
    for f in report.failures:
        by_unit.setdefault((f["metric"], f["unit"]), []).append(f)
    n = len(report.embeddings)
    for (metric, unit), fails in by_unit.items():
        names = ", ".join(f["embedding"] for f in fails)
        warn(f"{metric}/{unit} not scored on {len(fails)} of {n} column(s) ({names}): {fails[0]['reason']}",
             UnscoredWarning)


def _min_shares(min_share, metrics) -> dict:
    """``{metric: the smallest share of bias removed that counts as fairer}``: each metric's own
    :attr:`~embdebias.metrics.Metric.min_share`, or ``min_share`` for every one (a number in [0, 1))."""
    if min_share is not None and (isinstance(min_share, bool) or not isinstance(min_share, numbers.Real)
                                  or not 0.0 <= float(min_share) < 1.0):
        raise EmbdebiasError(f"evaluate: min_share must be a number in [0, 1) (a share of the original's bias), "
                             f"got {min_share!r}")
    return {m.name: float(m.min_share if min_share is None else min_share) for m in metrics}


def _fair_value(metric: str, stat: str, sample: Sample, chance: float):
    """The fair value a bias row's share is measured from: the metric's declaration, else 0 for a
    statistic whose sample reads "lower" or "zero" (a "higher" one without a declared value has none)."""
    metric_obj = get_metric(metric) if metric in METRICS else None
    if metric_obj is not None and metric_obj.direction(stat) is not None:
        return metric_obj.fair_value(stat, chance)
    if metric_obj is not None and metric_obj.kind == "quality":
        return None
    return 0.0 if sample.fairer in ("lower", "zero") else None


def sized_outcome(change: dict, min_share: float) -> dict:
    """A paired change whose outcome also weighs its size: beyond the noise but removing (or adding)
    less than ``min_share`` of the original's bias is "small change" (see
    ``docs/user_guide/p_values_and_intervals.md``); a change without a share keeps its outcome."""
    share = change.get("share")
    if share is None or share != share or change["outcome"] not in ("improved", "worse"):
        return change
    big = share >= min_share if change["outcome"] == "improved" else share <= -min_share
    return change if big else {**change, "outcome": "small change"}


def _add_uncertainty(report: Report, samples: dict, n_boot: int, level: float, seed,
                     min_shares: dict | None = None) -> None:
    """Bootstrap intervals of every sampled statistic, and paired comparisons with the first column.

    Each interval and comparison draws from its own generator (:func:`resample_rng`, seeded
    by ``seed``, the metric, the test and the statistic -- never by the column's name, its
    position or the other columns), so a column's numbers do not depend on the company it
    keeps, :func:`~embdebias.metrics.weat` with the same seed gives the same interval, and
    every paired comparison of a row draws the same resamples of the common items for the
    reference and the other column. A bias row's comparison also gives the share of the
    reference's bias removed, and its outcome weighs it (:func:`sized_outcome`, ``min_shares``).
    """
    from .metrics.residual import chance_level

    reference = report.embeddings[0]
    chance = chance_level(report)
    rows: dict = {}                                    # {row: {column: sample}}
    for (emb, *row), sample in samples.items():
        rows.setdefault(tuple(row), {})[emb] = sample
    others: dict = {}                                  # {row: {column: sample}} to compare with the first
    for (metric, test, stat), by_column in rows.items():
        found = bootstrap_intervals(by_column, n_boot, lambda key=(metric, test, stat): resample_rng(seed, *key),
                                    level)
        for emb, (lo, hi) in found.items():
            report.set_interval(emb, metric, test, stat, lo, hi)
        if reference in by_column and len(by_column) > 1:
            others[(metric, test, stat)] = {e: s for e, s in by_column.items() if e != reference}
    changes = {}
    for (metric, test, stat), by_column in others.items():
        fair = {emb: _fair_value(metric, stat, sample, chance) for emb, sample in by_column.items()}
        found = paired_changes(samples[(reference, metric, test, stat)], by_column, n_boot,
                               lambda key=(metric, test, stat): resample_rng(seed, "paired", *key), level, fair)
        changes.update({(emb, metric, test, stat): change for emb, change in found.items()})
    for key in samples:                                # in the order the rows were scored
        if key not in changes:
            continue
        emb, metric, test, stat = key
        change = sized_outcome(changes[key], (min_shares or {}).get(metric, 0.0))
        report.comparisons.append({
            "embedding": emb, "reference": reference, "metric": metric, "test": test, "statistic": stat,
            "reference_value": report.value(metric, test, stat, reference),
            "value": report.value(metric, test, stat, emb), **change})


#: The report's aggregates (:attr:`Report.aggregates`): ``(name, metric, statistic, label)``, the mean
#: over the metric's tests of the statistic's bias magnitude (|d| for WEAT's effect size), with
#: a bootstrap interval and a paired change like every row (the comparison table's columns).
AGGREGATES = (("weat_mean_abs_d", "weat", "effect_size", "mean |WEAT d| over the tests"),
              ("extrinsic_mean_abs_gap", "extrinsic", "score_gap", "mean |score gap| over the template families"))


def mean_bias_sample(parts: dict) -> Sample:
    """A :class:`~embdebias.metrics._resample.Sample` of the mean bias magnitude of several rows'
    samples (``{test: Sample}``), each test's sets resampled independently, as its own interval does."""
    groups = {f"{test}\x1f{g}": keys for test, sample in parts.items() for g, keys in sample.groups.items()}

    def stat(idx: dict) -> np.ndarray:
        values = [bias_of(np.asarray(sample.stat({g: idx[f"{test}\x1f{g}"] for g in sample.groups}), float),
                          sample.fairer) for test, sample in parts.items()]
        return np.mean(values, axis=0)

    return Sample(groups, stat, fairer="lower")


def _add_aggregates(report: Report, samples: dict, n_boot: int, level: float, seed,
                    min_shares: dict | None = None) -> None:
    """:data:`AGGREGATES` of every column: value, interval and paired change from the first column
    (on the tests both scored); each from its own seeded stream, as every row's."""
    reference = report.embeddings[0]
    for name, metric, stat, label in AGGREGATES:
        per = {emb: {t: s for (e, m, t, st), s in samples.items() if (e, m, st) == (emb, metric, stat)}
               for emb in report.embeddings}
        for emb, parts in per.items():
            if not parts:
                continue
            sample = mean_bias_sample(parts)
            lo, hi = bootstrap_interval(sample, n_boot, resample_rng(seed, "aggregate", name), level)
            entry = {"embedding": emb, "name": name, "label": label, "metric": metric, "statistic": stat,
                     "tests": sorted(parts), "value": sample.value(), "ci_low": lo, "ci_high": hi}
            common = sorted(set(parts) & set(per[reference]))
            if emb != reference and common:
                change = paired_change(mean_bias_sample({t: per[reference][t] for t in common}),
                                       mean_bias_sample({t: parts[t] for t in common}), n_boot,
                                       resample_rng(seed, "aggregate-paired", name), level, fair_value=0.0)
                change = sized_outcome(change, (min_shares or {}).get(metric, 0.0))
                entry.update({f"change_{k}" if k in ("ci_low", "ci_high") else k: v for k, v in change.items()})
            report.aggregates.append(to_builtin(entry))


def _retest(named: dict, ctx: EvalContext) -> dict:
    """The test-retest reliability of the columns (a note instead when it cannot be computed)."""
    from .metrics.trust import reliability

    try:
        return reliability(named, ctx.neutral(ctx.options.get("direct_bias", {}).get("neutral_words")),
                           lists=ctx.lists, lowercase=ctx.lowercase, random_state=ctx.random_state)
    except EmbdebiasError as exc:
        return {"note": str(exc)}


def _progress(progress, total: int):
    """``(tick, bar)``: what is called before each metric of each column, and the tqdm bar to close
    (``progress`` True: a bar named after the metric and column running; a callable: itself)."""
    if progress is None or progress is False:
        return None, None
    if callable(progress):
        return progress, None
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc="[evaluate]", unit="metric", leave=False)

    def tick(name: str, metric: str) -> None:
        if bar.n or bar.postfix:  # the previous metric is done
            bar.update(1)
        bar.set_postfix_str(f"{name}: {metric}")

    return tick, bar


def _check_moved(kwargs: dict) -> None:
    """A keyword ``evaluate`` no longer takes: say which metric's option it is now."""
    for key in kwargs:
        if key in MOVED_OPTIONS:
            metric, option = MOVED_OPTIONS[key]
            raise EmbdebiasError(f"evaluate: {key!r} is an option of the metric {metric!r}: pass "
                                 f"options={{{metric!r}: {{{option!r}: ...}}}}")
        raise EmbdebiasError(f"evaluate: unknown argument {key!r}")


def _check_shared(bootstrap, level, options) -> None:
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, numbers.Integral) or bootstrap < 0:
        raise EmbdebiasError(f"evaluate: bootstrap must be an integer >= 0 (0: no intervals), got {bootstrap!r}")
    if not 0.0 < float(level) < 1.0:
        raise EmbdebiasError(f"evaluate: level must be in (0, 1), got {level!r}")
    if options is not None and not isinstance(options, Mapping):
        raise EmbdebiasError(f"evaluate: options must be a dict {{metric: {{option: value}}}}, got {options!r}")
    unknown = sorted(set(options or {}) - set(METRICS))
    if unknown:
        raise EmbdebiasError(f"evaluate: options for unknown metric(s) {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(METRICS)}")


#: Options of a metric that an attribute's data fill when not given: ``{metric: (option,
#: Attribute field)}`` (WEAT scores the attribute's own bundled tests, e.g. race's WEAT 3-5).
ATTRIBUTE_OPTIONS = {"weat": ("tests", "weat_tests")}


def _attribute_value(attribute, field: str):
    """An attribute's field as its metric option: WEAT test ids as the bundled tests."""
    from . import wordlists

    if field == "weat_tests":
        by_id = {t.id: t for t in wordlists.weat_tests()}
        unknown = [i for i in attribute.weat_tests if i not in by_id]
        if unknown:
            raise EmbdebiasError(f"attribute {attribute.name!r} ({attribute.path}): weat_tests: unknown test id(s) "
                                 f"{', '.join(unknown)}; known: {', '.join(by_id)}")
        return [by_id[i] for i in attribute.weat_tests]
    return getattr(attribute, field)


def _attribute_suite(names, attribute, options: dict, explicit: bool) -> list:
    """The metrics that measure ``attribute`` (:meth:`~embdebias.metrics.Metric.supports`, or whose
    options the attribute's data fill, :data:`ATTRIBUTE_OPTIONS`), with those options set.

    The default suite of gender is :data:`DEFAULT_SUITE`; of another attribute, the default
    suite's metrics and every registered multi-group metric that can measure it. A metric
    asked for by name that cannot is an error naming it.
    """
    if attribute.uses_gender_lists:  # the published suite, every metric of gender's own data in it
        return [get_metric(m) for m in names]
    if not explicit:
        # (not a quality metric outside the suite: it needs data of its own, ValNorm a lexicon)
        names = list(names) + [n for n, m in METRICS.items() if n not in names and m.scope != "gender"
                                and m.kind != "quality"]
    return [metric for metric in map(get_metric, names) if _measures(metric, attribute, options, explicit)]


def _measures(metric, attribute, options: dict, explicit: bool) -> bool:
    """Whether ``metric`` can score ``attribute`` (setting the options its data fill); a metric
    named (``explicit``) that cannot is an error saying why."""
    # a metric whose units the attribute's data fill (WEAT: its tests) needs them, whatever its scope
    fits = _fill_options(metric, attribute, options) if metric.name in ATTRIBUTE_OPTIONS \
        else metric.supports(attribute)
    if not fits:
        if explicit:
            raise EmbdebiasError(f"evaluate: {metric.name} ({metric.title}) measures "
                                 f"{'gender' if metric.scope == 'gender' else 'two groups'} only; it cannot "
                                 f"score the attribute {attribute.name!r} ({attribute.k} groups)"
                                 + (f" (it names no {ATTRIBUTE_OPTIONS[metric.name][1]})"
                                    if metric.name in ATTRIBUTE_OPTIONS else ""))
        return False
    lacking = [f for f in metric.needs if not getattr(attribute, f) and f not in options.get(metric.name, {})]
    if lacking and explicit:
        raise EmbdebiasError(f"evaluate: {metric.name} ({metric.title}) needs the attribute's {lacking[0]}: "
                             f"{attribute.name!r} ({attribute.path}) has none; give them in its file or "
                             f"as options={{{metric.name!r}: {{{lacking[0]!r}: ...}}}}")
    return not lacking


def suite_for(tests=None, attribute="gender", options=None, lists: str = "published") -> list[str]:
    """The metrics :func:`evaluate` would run for ``tests`` and ``attribute``.

    A run checks every attribute's suite with it before it writes anything.

    Parameters
    ----------
    tests : sequence of str, optional
        Metric names (None: the default suite of the attribute).
    attribute : str, path or Attribute, optional
        As :func:`evaluate`'s (default gender).
    options : dict, optional
        ``{metric: {option: value}}``, as :func:`evaluate`'s.
    lists : str
        The list set.

    Returns
    -------
    list of str
        The metric names, in order.

    Raises
    ------
    EmbdebiasError
        A metric named in ``tests`` cannot measure the attribute.
    """
    names = _given_suite(tests, None)
    chosen = _attribute_suite(DEFAULT_SUITE if names is None else names, _one_attribute(attribute, lists),
                              {k: dict(v) for k, v in (options or {}).items()}, explicit=names is not None)
    return [m.name for m in chosen]


def _fill_options(metric, attribute, options: dict) -> bool:
    """Set ``metric``'s option that ``attribute``'s data fill (:data:`ATTRIBUTE_OPTIONS`) unless given;
    whether the metric then has it (given, or the attribute has the data)."""
    fill = ATTRIBUTE_OPTIONS.get(metric.name)
    if fill is None:
        return False
    if fill[0] not in options.get(metric.name, {}):
        if not getattr(attribute, fill[1]):
            return False
        options.setdefault(metric.name, {})[fill[0]] = _attribute_value(attribute, fill[1])
    return True


def _params(metrics, ctx: EvalContext, *, bootstrap: int, level: float, strict: bool) -> dict:
    attribute = ctx.attribute_or_default()
    return to_builtin({
        "attribute": attribute.name, "groups": list(attribute.groups),
        "suite": [m.name for m in metrics], "random_state": ctx.random_state, "max_missing": ctx.max_missing,
        "lowercase": ctx.lowercase, "bootstrap_resamples": bootstrap, "bootstrap_level": level,
        "direction": ctx.reference_label, "lists": ctx.lists, "strict": strict,
        "options": {m.name: m.params(ctx.opts(m.name)) for m in metrics}})


def _attribute_direction(reference, name: str, attribute, lists: str, direction_name):
    """``(subspace, its name)`` of an attribute, fitted on ``reference`` (the first column);
    ``(None, direction_name)`` for the one whose defining sets are the list set's (gender), whose
    metrics fit their own direction from the list set, as published."""
    from .metrics.base import attribute_subspace

    if attribute.uses_gender_lists:
        return None, direction_name
    return (attribute_subspace(reference, attribute, lists=lists),
            direction_name or f"fitted on the {attribute.name} defining sets in '{name}' (the first column)")


def _given_suite(tests, suite):
    """The metric names of ``tests=`` or its alias ``suite=`` (None: the default suite)."""
    if tests is not None and suite is not None:
        raise EmbdebiasError("evaluate: give tests= or its alias suite=, not both")
    suite = tests if tests is not None else suite
    return [suite] if isinstance(suite, str) else suite


def _one_attribute(value, lists: str):
    """The :class:`~embdebias.data.attributes.Attribute` of ``attribute=`` (None: gender, deprecated)."""
    from .data.attributes import as_attribute, resolve_attributes

    if value is None:
        return as_attribute(None, lists)
    found = resolve_attributes(value, lists)
    if len(found) > 1:
        raise EmbdebiasError(f"evaluate measures one attribute per report, got {len(found)} "
                             f"({', '.join(a.name for a in found)}); call it once for each")
    return found[0]


def evaluate(embeddings, tests=None, *, suite=None, options=None, subspace=None, direction_name: str | None = None,
             random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
             lists: str = "published", bootstrap: int = 1000, level: float = 0.95, strict: bool = False,
             progress=None, attribute="gender", min_share=None, trust: bool = True, retest: bool = False,
             reuse: dict | None = None, **moved) -> Report:
    """Score one or more embeddings with a suite of metrics (see the module docstring).

    Parameters
    ----------
    embeddings : Embedding, KeyedVectors, list of them, or dict name -> embedding
        Columns of the report (a list uses each embedding's ``name``). The first column
        is the reference ("original") whose gender direction every column is measured on.
    tests : sequence of str, optional
        Metrics to run (names of :data:`~embdebias.metrics.METRICS`, case-insensitive;
        default :data:`DEFAULT_SUITE`): the word the CLI's ``--tests`` uses.
    suite : sequence of str, optional
        The same as ``tests`` (its older name); give one of the two.
    options : dict, optional
        ``{metric: {option: value}}``: each metric's own options (see
        :func:`~embdebias.metrics.describe_metrics` and each metric's ``options``); an
        unknown metric or option raises :class:`~embdebias.errors.EmbdebiasError`.
    subspace : BiasSubspace or array, optional
        The "original" gender direction the metrics share (direct and indirect bias);
        default fitted on the first column.
    direction_name : str, optional
        What ``subspace`` is, for the report (e.g. "the original embedding's").
    random_state : int or None, default 0
        Seed of every random step (WEAT permutations, RNSB splits, the bootstrap).
    max_missing : float, default 0.2
        Largest fraction of any word set that may be out of vocabulary.
    lowercase : bool, default True
        Fall back to lowercase forms of words whose exact form is missing (reported).
    lists : {"published", "curated"}, default "published"
        The bundled list set for the professions (direct bias, ECT) and SemBias (BAT).
    bootstrap : int, default 1000
        Resamples of the bootstrap that gives every bias number its interval at ``level``
        and compares every column with the first (paired); 0 skips it.
    level : float, default 0.95
        Coverage of the intervals.
    strict : bool, default False
        Raise on the first unit that cannot be scored instead of leaving it empty.
    progress : bool or callable, optional
        True: a progress bar (tqdm, on stderr) over the columns' metrics, then the bootstrap; a
        callable is called as ``progress(embedding_name, metric)`` before each metric runs.
    attribute : str, path or Attribute, optional
        The protected attribute measured: a bundled name (``"gender"``, ``"race"``,
        ``"religion"``), a user's JSON file or an :class:`~embdebias.data.attributes.Attribute`;
        default gender (today's lists and suite, unchanged). Another attribute's default suite
        is the metrics that can measure it (:meth:`~embdebias.metrics.Metric.supports`), WEAT
        on the attribute's own bundled tests, and its ``subspace`` is fitted on its defining
        sets in the first column (:func:`~embdebias.metrics.base.attribute_subspace`).
    min_share : float, optional
        The smallest share of the first column's bias a change beyond the noise must remove
        (add) to be "improved" ("worse"); a smaller one is "small change". Default: each
        metric's :attr:`~embdebias.metrics.Metric.min_share` (recorded in the report's
        parameters); 0 counts every change beyond the noise.
    trust : bool, default True
        Also say how far to trust the numbers (:attr:`Report.trust`, :mod:`embdebias.metrics.trust`):
        the seed-word band of every word-set statistic, Cronbach's alpha across the base pairs,
        the agreement of the metric families across three or more columns (needs ``bootstrap``).
    retest : bool, default False
        The columns are embeddings of one corpus trained with different seeds (``embdebias train
        --seeds``): also the test-retest ICC of each per-word measure
        (:func:`~embdebias.metrics.trust.reliability`; three or more columns).
    reuse : dict, optional
        A dict the caller keeps between calls (empty at first): the first column's scores
        are kept in it, and a later call whose first column is the same embedding object,
        under the same parameters (:attr:`Report.params`) and subspace, merges them instead of
        scoring that column again -- a column's scores never depend on the other columns, so
        the report is the same. The bootstrap is not kept: it is redrawn from the seed, as
        always. For a sweep: every debiased point is scored beside its baseline, which is
        then scored once per worker.
    **moved
        Nothing: a metric's option given here (as before issue 19, see :data:`MOVED_OPTIONS`)
        raises :class:`~embdebias.errors.EmbdebiasError` saying where it goes now.

    Returns
    -------
    Report
    """
    from . import wordlists

    _check_moved(moved)
    _check_shared(bootstrap, level, options)
    suite = _given_suite(tests, suite)
    named = _named_embeddings(embeddings)
    names = DEFAULT_SUITE if suite is None else suite
    wordlists.check_lists(lists)
    attribute = _one_attribute(attribute, lists)
    options = {name: dict(opts) for name, opts in (options or {}).items()}
    metrics = _attribute_suite(names, attribute, options, explicit=suite is not None)
    first = next(iter(named))
    if subspace is None:
        subspace, direction_name = _attribute_direction(named[first], first, attribute, lists, direction_name)
    ctx = EvalContext(lists=lists, max_missing=check_max_missing(max_missing), lowercase=lowercase,
                      random_state=random_state, subspace=subspace, direction_name=direction_name,
                      reference=named[first], reference_name=first, options=options, attribute=attribute)
    for name in ctx.options:  # every given option is checked, also of a metric not in the suite
        ctx.opts(name)
    report = Report(list(named))
    report.params = _params(metrics, ctx, bootstrap=bootstrap, level=level, strict=strict)
    shares = _min_shares(min_share, metrics)
    report.params["min_share"] = shares
    for metric in metrics:
        report.data[metric.name] = metric.data(ctx)
        report.legends[metric.name] = metric.legend_for(ctx)
        report.labels[metric.name] = dict(metric.statistics)
    samples: dict = {}
    raised: list = []
    tick, bar = _progress(progress, len(named) * len(metrics))
    with fewer_collections():  # many small objects: see embdebias._gc
        try:
            for name, emb in named.items():
                scores = _reference_scores(reuse, metrics, name, emb, ctx, report.params, strict, tick) \
                    if name == first else _score_column(metrics, name, emb, ctx, strict, tick)
                scores.merge_into(report, name, samples, raised)
            if bar is not None and bootstrap:  # seconds more: the bar says what runs
                tick("every column", "bootstrap intervals and comparisons")
            _warn_once(raised, report.embeddings)
            _warn_unscored(report)
            if bootstrap:
                from ._threads import one_thread

                with one_thread():  # thousands of small products (resamples x items)
                    _add_uncertainty(report, samples, int(bootstrap), float(level), random_state, shares)
                    _add_aggregates(report, samples, int(bootstrap), float(level), random_state, shares)
                    if trust:
                        from .metrics.trust import assess

                        report.trust = to_builtin(assess(report, samples, ctx, random_state))
        finally:
            if bar is not None:
                bar.close()
    if retest:
        report.trust["reliability"] = to_builtin(_retest(named, ctx))
    return report


evaluate.__doc__ += f"""
    Notes
    -----
    The default suite: {suite_doc()}.
"""
