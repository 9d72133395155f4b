r"""The background :math:`\beta` of the Background Comparison Metric.

Czarnowska et al. (2021, Sec. 3.2) compare each protected group :math:`t_i` with a
background :math:`\beta_{t_i,S}` whose choice depends on the question asked:

* ``"all"`` (the default): every example, :math:`\beta = S` ("does the model behave
  differently for the group than in general?"); in the counterfactual form, every
  variation :math:`S'_j` of the template;
* ``"rest"``: every example of the other groups, :math:`\beta = S \setminus S^{t_i}`
  (FPR Ratio, Average Equality Gaps and the BPSN/BNSP AUCs use it);
* a named group, ``background(group=g)``: a privileged group (then :math:`T` is
  narrowed to the other groups, as the paper prescribes) or, in the counterfactual
  form, the unperturbed source example :math:`\{x_j\}` of each template, stored as the
  examples whose group label is ``g``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from ..errors import FairnessInputError

KINDS = ("all", "rest", "group")
_ALIASES = {"complement": "rest", "others": "rest", "all_examples": "all"}


@dataclass(frozen=True)
class Background:
    """A background choice for BCM/VBCM.

    Attributes
    ----------
    kind : {"all", "rest", "group"}
    group : hashable or None
        The group label when ``kind == "group"``.
    """

    kind: str = "all"
    group: Hashable | None = None

    def describe(self) -> str:
        if self.kind == "group":
            return f"group {self.group!r}"
        return {"all": "all examples", "rest": "the other groups' examples"}[self.kind]


def background(kind: str | Background | None = None, *, group: Hashable | None = None) -> Background:
    """Build (or check) a BCM background.

    Parameters
    ----------
    kind : {"all", "rest"} or Background, optional
        ``"all"`` (default, the paper's "set of all evaluation examples") or ``"rest"``
        (alias ``"complement"``: all examples not in the group).  Leave it out and give
        ``group`` for a named group.
    group : hashable, optional
        Compare every other group with this group's examples (a privileged group, or
        the unperturbed source example of each counterfactual template).

    Returns
    -------
    Background

    Raises
    ------
    FairnessInputError
        An unknown kind, or both ``kind`` and ``group``.
    """
    if isinstance(kind, Background):
        if group is not None:
            raise FairnessInputError("give either a Background or group=, not both")
        return kind
    if group is not None:
        if kind not in (None, "group"):
            raise FairnessInputError(f"background kind {kind!r} does not take a group; use background(group=...)")
        return Background("group", group)
    if kind is None:
        return Background("all")
    if not isinstance(kind, str):
        raise FairnessInputError(
            f"a background is 'all', 'rest' or background(group=...), got {kind!r}")
    key = _ALIASES.get(kind.strip().lower(), kind.strip().lower())
    if key not in ("all", "rest"):
        raise FairnessInputError(
            f"unknown background {kind!r}; use 'all', 'rest' or background(group=<label>)")
    return Background(key)
