"""Debiasing methods: hard and soft debias (Bolukbasi et al., 2016) and the others of the table.

Which methods exist is the table :data:`DEBIASERS` (:mod:`embdebias.debias.table`, the
public extension point: :func:`register` a :class:`DebiaserSpec` naming a
:class:`Debiaser` subclass; see the contributing guide). Every estimator of the table is
importable from here and from :mod:`embdebias` by its class name (``INLP``, ``RLACE``,
...), imported when first asked for.
"""

from .table import DEBIASERS, DebiaserSpec, Param, get_debiaser, load_fitted, make_debiaser, register

#: The table's helpers, the base class, the SVM expansion and the labelled words the erasers fit on
#: (:func:`~embdebias.debias._labels.protected_labels`; the erasure benchmark splits them too), then
#: every estimator of the table.
__all__ = ["DEBIASERS", "DebiaserSpec", "Param", "get_debiaser", "load_fitted", "make_debiaser", "register",
           "Debiaser", "expand_gender_specific", "GenderSpecificExpander", "protected_labels",
           "fit_progress",
           *(spec.estimator.rpartition(":")[2] for spec in DEBIASERS.values())]


def __getattr__(name):
    # The estimators import scikit-learn (and soft debias's reference solver cvxpy): load
    # them only when asked for, so that the table (and the CLI's start-up) stays light.
    if name == "Debiaser":
        from ._base import Debiaser

        return Debiaser
    if name == "protected_labels":
        from ._labels import protected_labels

        return protected_labels
    if name == "fit_progress":  # run turns the fits' progress bars on with it
        from ._progress import fit_progress

        return fit_progress
    if name in ("expand_gender_specific", "GenderSpecificExpander"):
        from . import expand

        return getattr(expand, name)
    spec = next((s for s in DEBIASERS.values() if s.estimator.rpartition(":")[2] == name), None)
    if spec is not None:
        return spec.estimator_class()
    raise AttributeError(f"module 'embdebias.debias' has no attribute {name!r}")
