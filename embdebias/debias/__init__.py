"""Debiasing methods: hard (neutralize + equalize) and soft (Bolukbasi et al., 2016)."""

from .hard import HardDebias

__all__ = ["HardDebias", "SoftDebias", "expand_gender_specific", "GenderSpecificExpander"]


def __getattr__(name):
    # Soft debias imports cvxpy and scikit-learn; load it only when asked for.
    if name == "SoftDebias":
        from .soft import SoftDebias

        return SoftDebias
    if name in ("expand_gender_specific", "GenderSpecificExpander"):
        from . import expand

        return getattr(expand, name)
    raise AttributeError(f"module 'embdebias.debias' has no attribute {name!r}")
