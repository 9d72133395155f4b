"""Debiasing methods: hard (neutralize + equalize) and soft (Bolukbasi et al., 2016).

Which methods exist is the table :data:`DEBIASERS` (:mod:`embdebias.debias.table`).
"""

from .table import DEBIASERS, DebiaserSpec, Param, get_debiaser, load_fitted, make_debiaser, register

__all__ = ["DEBIASERS", "DebiaserSpec", "Param", "get_debiaser", "load_fitted", "make_debiaser", "register",
           "HardDebias", "SoftDebias", "expand_gender_specific", "GenderSpecificExpander"]


def __getattr__(name):
    # The estimators import scikit-learn (and soft debias's reference solver cvxpy): load
    # them only when asked for, so that the table (and the CLI's start-up) stays light.
    if name == "HardDebias":
        from .hard import HardDebias

        return HardDebias
    if name == "SoftDebias":
        from .soft import SoftDebias

        return SoftDebias
    if name in ("expand_gender_specific", "GenderSpecificExpander"):
        from . import expand

        return getattr(expand, name)
    raise AttributeError(f"module 'embdebias.debias' has no attribute {name!r}")
