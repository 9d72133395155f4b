"""What a metric is to :func:`~embdebias.evaluate.evaluate` and the report, and the registry :data:`METRICS`.

This module is public: the extension point of the metrics (``docs/contributing.md``).
Code outside :mod:`embdebias.metrics` imports the metric contract from here (or from
:mod:`embdebias.metrics`), never from the package's private modules: the result base
class, the missing-word bound and the resampling engine that turns a unit's
:class:`Sample` into an interval are re-exported here.

A metric is one module: its function (``weat``, ``rnsb``, ...), its vectorised resampling
statistic, and a :class:`Metric` subclass registered with :func:`register`, which says

* what the metric is called, how to read it, which statistics it reports (machine keys,
  with display labels) and which word lists or data it used;
* its own options (:class:`Option`: default, meaning, check), passed to ``evaluate`` as
  ``options={"weat": {"n_permutations": 10_000}}``;
* how to score one *unit* of work (a WEAT test, the SemBias file, a similarity data set)
  on one embedding, with the :class:`Sample` of every bias
  statistic for its interval;
* report hooks for what only it knows: how a cell is displayed, notes under its table,
  its line in the verdict.

``evaluate`` is a loop over these objects, so a unit that cannot be scored becomes empty
cells with its reason instead of stopping the others, and a new metric is one module.
Statistic keys are stable (``effect_size``, ``p_value``, ``n_scored``, ...); the labels are
for people and may change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import wordlists
from ..errors import EmbdebiasError
from ._common import DEFAULT_MAX_MISSING, MetricResult, check_max_missing, lookup, to_builtin, unit_vectors
from ._resample import (Sample, bias_of, bootstrap_interval, bootstrap_intervals, counts, paired_change,
                        paired_changes, resample_rng)

__all__ = ["EvalContext", "METRICS", "Metric", "MetricResult", "N_SCORED", "Option", "chance_level",
           "describe_metrics", "get_metric", "interval_evidence", "register",
           # re-exported for evaluate and the report (metrics/_common.py, metrics/_resample.py)
           "DEFAULT_MAX_MISSING", "Sample", "bias_of", "bootstrap_interval", "check_max_missing", "paired_change",
           "paired_changes", "bootstrap_intervals",
           "resample_rng", "to_builtin",
           # how often a resample drew each item (the sweep's agreement resamples its points with it)
           "counts"]

#: Machine key of the number of items (words, pairs, lines, questions) a row scored.
N_SCORED = "n_scored"


@dataclass(frozen=True)
class Option:
    """One option of a metric: its default, what it means, and how a given value is checked.

    ``check(value) -> value`` returns the value to use (e.g. a tuple for a list) or raises
    :class:`~embdebias.errors.EmbdebiasError`; None accepts any value. A value given as
    None means the default.
    """

    default: object
    doc: str
    check: Callable[[object], object] | None = None


def positive_int(value) -> int:
    """An integer >= 1 (an option check)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EmbdebiasError(f"expected an integer >= 1, got {value!r}")
    return int(value)


def positive_number(value) -> float:
    """A finite number > 0 (an option check)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise EmbdebiasError(f"expected a number > 0, got {value!r}")
    return float(value)


def string_tuple(value) -> tuple:
    """A non-empty sequence of names or paths (an option check); a single one is one item."""
    items = (value,) if isinstance(value, (str, os.PathLike)) else tuple(value)
    if not items or not all(isinstance(v, (str, os.PathLike)) for v in items):
        raise EmbdebiasError(f"expected one or more names, got {value!r}")
    return items


class Metric:
    """One metric as :func:`~embdebias.evaluate.evaluate` sees it (subclass and :func:`register`).

    Attributes
    ----------
    name, title : str
        Machine key and display title.
    function : str
        The name of the metric's function in :mod:`embdebias.metrics` (e.g. ``"weat"``).
    legend : str
        How to read it: what it measures and which way is fairer.
    statistics : dict
        ``{statistic key: display label}``, in display order.
    options : dict
        ``{option name: Option}``: the metric's own options and their defaults.
    folded : tuple of str
        Statistics kept in the report's data but displayed inside another cell.
    kind : {"intrinsic", "extrinsic", "quality"}
        Which family of numbers it gives (the agreement of intrinsic and extrinsic verdicts).
    headline : tuple of (test, statistic, fairer)
        The rows of the report's summary table: ``test`` is a test name, "" for the metric's
        first test, "*" for every test; ``fairer`` says which way is fairer (or better). It is
        the one declaration of a statistic's direction and fair value that the verdict, the
        summary, the sweep's rankings and the trade-off read (:meth:`direction`,
        :meth:`fair_value`, :meth:`is_quality`): "lower" (0 is fair), "0" (0 is fair, the
        bias is the absolute value), "higher (1)" (1 is fair: ECT), "chance" (the
        residual accuracies' chance level), "higher (better)" (a quality number: BAT's
        Definition, the similarity and analogy scores).
    min_share : float
        The smallest share of the original's bias a change beyond the noise must remove (or
        add) to count as fairer (less fair); a smaller one is "a small change". See
        ``docs/user_guide/p_values_and_intervals.md`` for each family's value.
    scope : {"gender", "binary", "any"}
        The protected attributes it can measure (:meth:`supports`): "gender" when its data
        are gender's own (SemBias, the extrinsic templates), "binary" for any two-group
        attribute, "any" for ``k`` groups. Quality metrics measure no attribute: every one.
    needs : tuple of str
        Fields of another attribute than gender that the metric reads, each also its option of
        the same name (``"neutral_words"``): without either, another attribute's default suite
        leaves the metric out, and naming it is an error (never gender's lists under another name).
    """

    name = ""
    title = ""
    function = ""
    legend = ""
    statistics: dict = {}
    options: dict = {}
    folded: tuple = ()
    kind = "intrinsic"
    headline: tuple = ()
    scope = "gender"
    needs: tuple = ()
    min_share = 0.10

    # -- which way is fairer: read from :attr:`headline`, nowhere else ------------------------
    def _declared(self, statistic: str) -> str | None:
        return next((fairer for _, stat, fairer in self.headline if stat == statistic), None)

    def direction(self, statistic: str) -> str | None:
        """Which way is fairer (better) for ``statistic``: "lower", "higher", "zero" (the absolute
        value: closer to 0) or "chance" (closer to the chance level); None when not declared."""
        declared = self._declared(statistic)
        if declared is None:
            return None
        word = declared.split()[0]
        return {"0": "zero"}.get(word, word)

    def fair_value(self, statistic: str, chance: float = 0.5) -> float | None:
        """The value of no bias of ``statistic`` (0; ECT's 1; ``chance`` for the residual
        accuracies), or None for a quality number and an undeclared statistic."""
        declared = self._declared(statistic)
        if declared is None or self.is_quality(statistic):
            return None
        if declared.startswith("chance"):
            return chance
        if "(" in declared:
            return float(declared.split("(", 1)[1].rstrip(")"))
        return None if self.direction(statistic) == "higher" else 0.0  # "higher" names its fair value

    def is_quality(self, statistic: str) -> bool:
        """Whether ``statistic`` is a quality number (higher is better), not a bias: every
        statistic of a quality metric, and a bias metric's declared "higher (better)"."""
        return self.kind == "quality" or "(better)" in (self._declared(statistic) or "")

    def bias_magnitude(self, statistic: str, value, chance: float = 0.5):
        """The distance of ``value`` from the fair value (larger is less fair), or None."""
        fair, direction = self.fair_value(statistic, chance), self.direction(statistic)
        if fair is None or value is None or value != value:
            return None
        if direction == "higher":
            return fair - value
        if direction == "lower":
            return value - fair
        return abs(value - fair)

    def supports(self, attribute) -> bool:
        """Whether the metric can measure ``attribute`` (an :class:`~embdebias.data.attributes.Attribute`).
        The default suite of an attribute holds the metrics that can; a metric of gender's own data
        measures the attribute whose lists are the list set's (:attr:`~embdebias.Attribute.uses_gender_lists`)."""
        if self.kind == "quality" or attribute.uses_gender_lists:
            return True
        return self.scope == "any" or (self.scope == "binary" and attribute.is_binary)

    # -- options -------------------------------------------------------------------------
    def check_options(self, given) -> dict:
        """Every option of the metric: the given ones checked, the others at their default.

        Raises :class:`~embdebias.errors.EmbdebiasError` naming the metric and the option
        for an unknown option or a bad value.
        """
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            known = ", ".join(self.options) or "none"
            raise EmbdebiasError(f"metric {self.name!r}: unknown option(s) {', '.join(map(repr, unknown))}; "
                                 f"known: {known}")
        out = {}
        for key, opt in self.options.items():
            value = given.get(key)
            if value is None:
                value = opt.default
            elif opt.check is not None:
                try:
                    value = opt.check(value)
                except EmbdebiasError as exc:
                    raise EmbdebiasError(f"metric {self.name!r}, option {key!r}: {exc}") from None
            out[key] = value
        return out

    def params(self, opts: dict) -> dict:
        """The options as the report's parameters record them (JSON-ready)."""
        return {k: (v if v is None or isinstance(v, (bool, int, float, str)) else str(v)) for k, v in opts.items()}

    # -- scoring -------------------------------------------------------------------------
    def units(self, ctx: EvalContext) -> list[str]:
        """The units of work (one result each), e.g. the WEAT test ids."""
        return [self.name]

    def tests(self, unit: str) -> list[str]:
        """The report's test rows that ``unit`` fills."""
        return [unit]

    def legend_for(self, ctx: EvalContext) -> str:
        return self.legend

    def data(self, ctx: EvalContext) -> str:
        """Which lists and data set the metric used: their source and size."""
        return ""

    def score(self, emb, unit: str, ctx: EvalContext):
        """``(result, {test: {statistic: cell}}, {(test, statistic): Sample})`` of ``unit`` on ``emb``.

        A cell is a value or a ``(value, ci_low, ci_high)`` triple (an analytic interval).
        The samples (see :mod:`embdebias.metrics._resample`) are the items each bias
        statistic was computed from, for its bootstrap interval and the paired comparison
        with the reference column; quality statistics have none.
        """
        raise NotImplementedError

    # -- report hooks --------------------------------------------------------------------
    def format_cell(self, statistic: str, cells: dict, digits: int) -> str | None:
        """The text of a cell when the metric displays it its own way (else None).

        ``cells`` is ``{statistic: value}`` of the same test and column.
        """
        return None

    def notes(self, report, place: str = "table") -> list[str]:
        """Markdown lines the metric adds under its table (``place="table"``) or at the end of
        the verdict (``place="verdict"``)."""
        return []

    def evidence(self, report, embedding: str) -> dict | None:
        """Whether ``embedding`` shows significant bias by this metric's own test:
        ``{"significant": bool, "text": str}`` (the text says of how many and why), or None for
        a metric without a test against "no bias" (the summary's first sentence).

        By default (:func:`interval_evidence`): a bias statistic of :attr:`headline` whose interval,
        in some test, lies wholly on the unfair side of its fair value; a metric with a permutation
        test overrides it (WEAT: :func:`p_value_evidence`)."""
        return interval_evidence(report, self, embedding)

    def verdict(self, report, embedding: str) -> dict | None:
        """An entry of the report's verdict for ``embedding`` beyond the paired comparisons."""
        return None

    def verdict_text(self, entry: dict) -> str:
        """The verdict line of :meth:`verdict`'s entry."""
        return str(entry)


@dataclass
class EvalContext:
    """What the metrics share in one :func:`~embdebias.evaluate.evaluate` call, and each
    metric's options (``options[metric name]``, checked by the metric on first use)."""

    lists: str = wordlists.DEFAULT_LISTS
    max_missing: float = DEFAULT_MAX_MISSING
    lowercase: bool = True
    random_state: int | None = 0
    subspace: object = None
    direction_name: str | None = None
    reference: object = None
    reference_name: str = ""
    options: dict = field(default_factory=dict)
    #: The protected attribute measured (an :class:`~embdebias.data.attributes.Attribute`, or its
    #: name or path, read once with :attr:`lists`): the target and attribute sets, neutral words
    #: and subspace of the metrics that measure any attribute (:meth:`attribute_or_default`).
    attribute: object = "gender"
    cache: dict = field(default_factory=dict)
    _checked: dict = field(default_factory=dict)

    def attribute_or_default(self):
        """:attr:`attribute` as an :class:`~embdebias.data.attributes.Attribute` (a name or path is
        read once, with :attr:`lists`)."""
        from ..data.attributes import as_attribute

        self.attribute = as_attribute(self.attribute, self.lists)
        return self.attribute

    def opts(self, metric: str) -> dict:
        """The options of ``metric``, checked, with defaults filled in."""
        if metric not in self._checked:
            self._checked[metric] = get_metric(metric).check_options(self.options.get(metric))
        return self._checked[metric]

    @property
    def common(self) -> dict:
        return dict(max_missing=self.max_missing, lowercase=self.lowercase)

    def gender_tests(self) -> list:
        return wordlists.weat_tests("gender")

    def neutral(self, value) -> list:
        """The neutral words of a ``neutral_words`` option (None: the professions of ``lists``)."""
        key = ("neutral", repr(value))
        if key not in self.cache:
            self.cache[key] = wordlists.resolve_words(value, "professions", self.lists) if value is not None \
                else wordlists.professions(self.lists)
        return self.cache[key]

    @staticmethod
    def neutral_name(value) -> str:
        """The test name of the neutral words' row."""
        return "professions" if value is None else "neutral words"

    @property
    def reference_label(self) -> str:
        """Which direction the "original direction" rows use."""
        return self.direction_name or (
            "the given subspace" if self.subspace is not None
            else f"fitted on the definitional pairs in '{self.reference_name}' (the first column)")

    def reference_direction(self):
        """``(g, label)``: the one direction every column is measured on ("original")."""
        if "reference_direction" not in self.cache:
            from ..subspace import gender_direction

            g, _ = gender_direction(self.reference, self.subspace, lists=self.lists)
            self.cache["reference_direction"] = (g, self.reference_label)
        return self.cache["reference_direction"]

    def list_text(self, value, role: str, unit: str) -> str:
        """``name: source, size unit (path)`` of a list argument, for the report."""
        info = wordlists.source_of(value, role, self.lists)
        where = f" (`{info['path']}`)" if info.get("path") else ""
        return f"{info['name']}: {info['source']}, {info['size']:,} {unit}{where}"


def chance_level(report) -> float:
    """The residual accuracies' chance level in ``report``: 1/k of its k groups (``params["groups"]``,
    which :func:`~embdebias.evaluate.evaluate` records; 0.5 for two, and for a report that does not say)."""
    return 1 / max(2, len(report.params.get("groups") or ()))


def _unfair_side(direction: str, fair: float, low: float, high: float) -> bool:
    """Whether an interval ``[low, high]`` lies wholly on the unfair side of ``fair``."""
    if direction == "higher":
        return high < fair
    if direction == "lower" or direction == "chance":
        return low > fair
    return low > fair or high < fair


def interval_evidence(report, metric: Metric, embedding: str) -> dict | None:
    """:meth:`Metric.evidence` from intervals: significant when some test's interval of a bias
    statistic of ``metric.headline`` excludes its fair value on the unfair side (``"2 of 3
    intervals exclude 0 (fair)"``); None when no such cell has an interval."""
    chance = chance_level(report)
    found = []
    for _, stat, _ in metric.headline:
        fair = metric.fair_value(stat, chance)
        if fair is None:
            continue
        for (m, t, s), per in report.cells.items():
            cell = per.get(embedding) if (m, s) == (metric.name, stat) else None
            if cell is not None and cell.interval is not None:
                found.append((stat, fair, _unfair_side(metric.direction(stat), fair, *cell.interval)))
    if not found:
        return None
    hits = sum(ok for *_, ok in found)
    fairs = ", ".join(dict.fromkeys(f"{report.labels.get(metric.name, {}).get(st, st)} {f:.2g}" for st, f, _ in found))
    return {"significant": bool(hits),
            "text": f"{hits} of {len(found)} intervals exclude the fair value ({fairs})"}


def p_value_evidence(report, metric: str, embedding: str, size: str, size_label: str) -> dict | None:
    """:meth:`Metric.evidence` of a metric with a permutation p-value per unit: significant when a
    unit's ``p_value`` is below 0.05, the text giving how many and the span of their ``size``
    statistic (``"3 of 3 tests p < 0.05; d 0.88 to 1.00"``); None without p-values."""
    def value(test, stat):
        cell = report.cells.get((metric, test, stat), {}).get(embedding)
        return None if cell is None else cell.value

    rows = [(value(t, "p_value"), value(t, size)) for (m, t, s) in report.rows if m == metric and s == "p_value"]
    rows = [r for r in rows if r[0] is not None]
    if not rows:
        return None
    hits = [d for p, d in rows if p < 0.05 and d is not None]
    span = f"; {size_label} {min(hits):.2f} to {max(hits):.2f}" if hits else ""
    return {"significant": bool(hits), "text": f"{len(hits)} of {len(rows)} tests p < 0.05{span}"}


def attribute_subspace(embedding, attribute="gender", n_components: int | None = None,
                       lists: str = wordlists.DEFAULT_LISTS, definitional=None):
    """The bias subspace of ``attribute`` fitted on ``embedding``: where the run, debias, plot,
    sweep and evaluate turn an attribute into directions.

    Gender (or None) is today's :class:`~embdebias.subspace.BiasSubspace` over the
    definitional pairs (``definitional``: a user's pair file; default the list set's). Any
    other attribute is fitted on its defining sets, one word per group (Manzini et al. 2019:
    PCA over the set-centred vectors; two groups are pairs).

    Parameters
    ----------
    embedding : Embedding
        Where the subspace is fitted (the original).
    attribute : Attribute, name or path, default "gender"
        The attribute (None: gender, deprecated).
    n_components : int, optional
        Default 1 for two groups and ``k - 1`` for ``k`` (the directions ``k`` group means span).
    lists : str
        The list set.
    definitional : path or pairs, optional
        Definitional pairs instead of the list set's (only for the attribute whose defining sets
        are the list set's, gender: another attribute brings its own in its file).

    Returns
    -------
    BiasSubspace
        Fitted.
    """
    from ..subspace import fit_subspace

    from ..data.attributes import as_attribute

    attribute = as_attribute(attribute, lists)
    if definitional is not None and not attribute.uses_gender_lists:
        raise EmbdebiasError(f"the attribute {attribute.name!r} brings its own defining sets "
                             f"({attribute.path}); a definitional pair file applies to gender only")
    return fit_subspace(embedding, definitional, n_components or max(1, attribute.k - 1), lists=lists,
                        attribute=attribute)


def set_vectors(emb, sets: dict, ctx: EvalContext) -> tuple[dict, dict]:
    """``({set: found words}, {set: unit vectors})`` of named word sets, as the metrics look them up."""
    looks = {k: lookup(emb, words, name=k, max_missing=1.0, min_size=0, lowercase=ctx.lowercase)
             for k, words in sets.items()}
    return {k: lk.words for k, lk in looks.items()}, {k: unit_vectors(emb, lk.rows) for k, lk in looks.items()}


#: The registered metrics (name -> instance), in registration order.
METRICS: dict[str, Metric] = {}


def register(cls):
    """Class decorator: register an instance of the :class:`Metric` subclass ``cls``."""
    metric = cls()
    if not metric.name:
        raise EmbdebiasError(f"metric class {cls.__name__} needs a name")
    METRICS[metric.name] = metric
    return cls


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (case-insensitive)."""
    key = str(name).lower()
    if key not in METRICS:
        raise EmbdebiasError(f"unknown metric {name!r}; known: {', '.join(METRICS)}")
    return METRICS[key]


def describe_metrics() -> list[str]:
    """One ``name: title`` line per registered metric (the CLI's ``--tests`` help)."""
    return [f"{name}: {m.title}" for name, m in METRICS.items()]
