r"""The normalizing factor :math:`N` of PCM and BCM.

Czarnowska et al. (2021) leave :math:`N` a parameter.  For PCM (Eq. 1-2) the text
gives :math:`N = \binom{|T|}{2}`, the number of group pairs, which makes the metric
the average distance between two groups; for BCM (Eq. 3-4) the natural counterpart,
used in their Table 2 for Average Group Fairness and Counterfactual Token Fairness
Gap, is :math:`N = |T|`, the number of compared groups.  Section 6 ("(In)Correct
Normalization") argues that a metric should not grow with the number of groups, and
recomputes FPED/FNED (published with :math:`N = 1`) and Disparity Score (published
with :math:`N = |T|` over pairs) with these defaults.  MCM and VBCM have no
:math:`N`.

Here ``|T|`` is the number of compared groups: when the background of a BCM is a
named group (a privileged group, or the unperturbed source example), that group is
not one of them.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import FairnessInputError

#: Named normalizers: ``"pairs"`` = C(|T|, 2), ``"groups"`` = |T|, ``"one"`` = 1.
NAMED = ("pairs", "groups", "one")
_ALIASES = {"none": "one", "1": "one", "n_pairs": "pairs", "n_groups": "groups"}


def _named(key: str, n_groups: int) -> float:
    if key == "pairs":
        return float(math.comb(n_groups, 2))
    if key == "groups":
        return float(n_groups)
    return 1.0


def normalizer(spec=None, *, n_groups: int, kind: str) -> float:
    """The normalizing factor N of a PCM or BCM.

    Parameters
    ----------
    spec : None, {"pairs", "groups", "one"} or positive number
        None gives the paper's default for ``kind``: the number of group pairs
        C(|T|, 2) for PCM and the number of groups |T| for BCM.  ``"one"`` (alias
        ``"none"``) is no normalization.
    n_groups : int
        |T|, the number of compared groups.
    kind : {"pcm", "bcm"}
        Which metric the factor is for.

    Returns
    -------
    float

    Raises
    ------
    FairnessInputError
        An unknown name or a number that is not finite and positive.
    """
    kind = kind.lower()
    if kind not in ("pcm", "bcm"):
        raise FairnessInputError(f"only PCM and BCM have a normalizer, not {kind!r}")
    if spec is None:
        return _named("pairs" if kind == "pcm" else "groups", n_groups)
    if isinstance(spec, str):
        key = _ALIASES.get(spec.strip().lower(), spec.strip().lower())
        if key not in NAMED:
            raise FairnessInputError(f"unknown normalizer {spec!r}; known: {', '.join(NAMED)} or a number")
        return _named(key, n_groups)
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool) and np.isfinite(spec) and spec > 0:
        return float(spec)
    raise FairnessInputError(f"a normalizer is 'pairs', 'groups', 'one' or a positive number, got {spec!r}")
