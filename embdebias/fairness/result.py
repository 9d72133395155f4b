"""Result objects of the fairness metrics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


def _key_record(key) -> dict:
    if isinstance(key, tuple):
        return {"groups": list(key)}
    return {"group": key}


def _records(mapping: Mapping) -> list[dict]:
    return [{**_key_record(k), "value": float(v)} for k, v in mapping.items()]


@dataclass(frozen=True)
class FairnessResult:
    """Value of a scalar fairness metric (PCM, BCM or MCM) and its parts.

    ``float(result)`` is ``result.value``.

    Attributes
    ----------
    value : float
        The metric.
    metric : str
        ``"PCM"``, ``"BCM"`` or ``"MCM"``, or the registry name for
        :func:`~embdebias.fairness.fairness_metric`.
    form : {"group", "counterfactual"}
        Whether the scores were compared over whole groups or within each template.
    parts : dict
        The terms that are summed and divided by ``normalizer``: for PCM
        ``{(group_a, group_b): d(phi(a), phi(b))}`` over the pairs in group order, for
        BCM ``{group: d(phi(background), phi(group))}``.  In the counterfactual form
        each term is averaged over the templates.  So ``value == sum(parts) /
        normalizer``.  Empty for MCM, whose ``d`` compares all groups at once.
    normalizer : float or None
        N (None for MCM).
    group_scores : dict
        ``{group: phi(group)}`` for a scalar phi (the mean over templates in the
        counterfactual form); empty for a set-valued phi.
    background_scores : dict
        BCM only: ``{group: phi(background of group)}``, like ``group_scores``.
    per_template : dict
        Counterfactual form only: ``{template: contribution}``, the metric computed on
        that template alone; ``value`` is their mean.
    phi, d : str
        Names of the scoring and comparison functions.
    """

    value: float
    metric: str
    form: str
    parts: dict = field(default_factory=dict)
    normalizer: float | None = None
    group_scores: dict = field(default_factory=dict)
    background_scores: dict = field(default_factory=dict)
    per_template: dict = field(default_factory=dict)
    phi: str = ""
    d: str = ""

    def __float__(self) -> float:
        return float(self.value)

    def to_dict(self) -> dict:
        """JSON-friendly dict (pair keys become ``{"groups": [a, b]}`` records)."""
        return {"metric": self.metric, "form": self.form, "value": float(self.value),
                "normalizer": self.normalizer, "phi": self.phi, "d": self.d,
                "parts": _records(self.parts), "group_scores": _records(self.group_scores),
                "background_scores": _records(self.background_scores),
                "per_template": [{"template": t, "value": float(v)} for t, v in self.per_template.items()]}


@dataclass(frozen=True)
class VectorResult(Mapping):
    """Per-group values of a vector-valued BCM (VBCM).

    It is a read-only mapping ``{group: value}``, so ``result["female"]`` and
    ``dict(result)`` work (the field holding the values is ``per_group``, since
    ``values()`` is the mapping method).

    Attributes
    ----------
    per_group : dict
        ``{group: d(phi(background), phi(group))}`` (averaged over templates in the
        counterfactual form); VBCM keeps these unaggregated (no ``1/N`` sum).
    metric : str
        ``"VBCM"`` or the registry name.
    form : {"group", "counterfactual"}
    background : str
        The background used, in words.
    group_scores, background_scores : dict
        ``phi`` of each group and of its background, for a scalar phi.
    phi, d : str
        Names of the scoring and comparison functions.
    """

    per_group: dict
    metric: str
    form: str
    background: str = ""
    group_scores: dict = field(default_factory=dict)
    background_scores: dict = field(default_factory=dict)
    phi: str = ""
    d: str = ""

    def __getitem__(self, group):
        return self.per_group[group]

    def __iter__(self):
        return iter(self.per_group)

    def __len__(self) -> int:
        return len(self.per_group)

    def to_dict(self) -> dict:
        """JSON-friendly dict."""
        return {"metric": self.metric, "form": self.form, "background": self.background,
                "phi": self.phi, "d": self.d, "per_group": _records(self.per_group),
                "group_scores": _records(self.group_scores),
                "background_scores": _records(self.background_scores)}
