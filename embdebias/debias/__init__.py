"""Debiasing methods: hard (neutralize + equalize) and soft (Bolukbasi et al., 2016).

Which methods exist is the table :data:`DEBIASERS` (:mod:`embdebias.debias._table`).
"""

from ._table import DEBIASERS, DebiaserSpec, Param, get_debiaser, make_debiaser, register
from .hard import HardDebias

__all__ = ["DEBIASERS", "DebiaserSpec", "Param", "get_debiaser", "make_debiaser", "register",
           "HardDebias", "SoftDebias", "expand_gender_specific", "GenderSpecificExpander"]


def __getattr__(name):
    # Soft debias imports cvxpy and scikit-learn; load it only when asked for.
    if name == "SoftDebias":
        from .soft import SoftDebias

        return SoftDebias
    if name in ("expand_gender_specific", "GenderSpecificExpander"):
        from . import expand

        return getattr(expand, name)
    raise AttributeError(f"module 'embdebias.debias' has no attribute {name!r}")
