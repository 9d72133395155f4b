"""Which debiasers exist: one declarative entry per method (:data:`DEBIASERS`).

Everything that lists methods derives from this table: :func:`make_debiaser`, the
``--method`` choices of ``embdebias debias``, ``embdebias run --methods`` (one step,
output, report column and plot panel per method) and the run's resume keys. A new
method is a new :class:`~embdebias.debias._base.Debiaser` subclass and one
:func:`register` call. What the run asks of its estimator:

* its constructor takes ``subspace=`` (the run's fitted bias subspace), ``lists=``, the
  keywords of the lists it declares (:data:`LIST_KEYWORDS`), ``random_state=`` if it
  is ``seeded``, and its own :class:`Param` names;
* ``fit(embedding)`` and ``transform(embedding, out=path, progress=..., also=...)``
  (the :class:`~embdebias.debias._base.Debiaser` contract: unit-length rows, unless the
  estimator's ``normalize`` is False, as for the erasers of :mod:`embdebias.debias.leace`);
* optionally ``run_info(embedding)`` (what ``report.json`` records about the fit) and
  the classmethod ``report_lines(info)`` (its lines in the report's "Run" section).

The order of the table is the order of the report's columns (after the original).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from ..data.attributes import is_default_attribute
from .. import _validation
from ..errors import EmbdebiasError

#: The list roles a debiaser may use, each with the estimator keyword it is passed as.
LIST_KEYWORDS = {"definitional_pairs": "definitional", "equalize_pairs": "equalize",
                 "gender_specific": "gender_specific"}


@dataclass(frozen=True)
class Param:
    """A parameter of a method that a user sets (on the command line as ``flag``).

    Attributes
    ----------
    name : str
        The estimator's keyword (``lam``).
    flag : str
        The command-line option (``--lambda``).
    rule : embdebias._validation.Rule
        What it accepts; the API and the CLI check it with the same rule and message.
    default
        Its default value.
    help : str
        One line for ``--help``.
    label : str
        Its name in the report's parameters (default: ``name``).
    metavar : str
        Its value's name in ``--help``.
    """

    name: str
    flag: str
    rule: _validation.Rule
    default: object
    help: str
    label: str = ""
    metavar: str = "X"

    @property
    def report_name(self) -> str:
        return self.label or self.name

    def check(self, value):
        return self.rule.check(value, self.name)


@dataclass(frozen=True)
class DebiaserSpec:
    """One debiasing method.

    Attributes
    ----------
    name : str
        The method's name (``--method``, ``--methods``, the report column).
    estimator : str
        ``"module:Class"`` of its :class:`~embdebias.debias._base.Debiaser`, imported only
        when used (soft debias's solver may load cvxpy).
    description : str
        One line for ``--help`` and listings.
    params : tuple of Param
        Its own parameters.
    lists : tuple of str
        The list roles it uses (keys of :data:`LIST_KEYWORDS`).
    seeded : bool
        It takes ``random_state``.
    expandable : bool
        With ``--expand`` it keeps the SVM expansion of the seed words as its
        gender-specific words (soft debias); otherwise the list as given.
    rides_on : str or None
        Another method whose pass over the rows can gather what this one's ``fit``
        needs (soft debias's Gram matrix during hard debias's pass). The estimator class
        then provides ``pass_accumulator(embedding)``, an object with ``add(start,
        block)`` and ``fit_params()``: when both methods are computed, the host runs
        first, feeding ``add``, and this method's ``fit`` receives ``fit_params()``.
    output_stem : str
        Name of its output embedding (before the format's ending); default ``name``.
    info_key : str
        Key of its fit summary in ``report.json``; default ``name``.
    column : str
        How the report's header names its column; default ``"<name>-debiased"``.
    max_groups : int or None
        The most groups of a protected attribute the method handles: 2 for a method
        that is binary by construction (its algorithm or its word lists know two
        groups); None: any number (``k`` groups through ``attribute=``).
    """

    name: str
    estimator: str
    description: str
    params: tuple = ()
    lists: tuple = ("definitional_pairs", "gender_specific")
    seeded: bool = False
    expandable: bool = False
    rides_on: str | None = None
    output_stem: str = ""
    info_key: str = ""
    column: str = ""
    max_groups: int | None = None

    def __post_init__(self):
        for attr, default in (("output_stem", self.name), ("info_key", self.name),
                              ("column", f"{self.name}-debiased")):
            if not getattr(self, attr):
                object.__setattr__(self, attr, default)
        unknown = set(self.lists) - set(LIST_KEYWORDS)
        if unknown:
            raise EmbdebiasError(f"debiaser {self.name!r}: unknown list roles {sorted(unknown)}; "
                                 f"choose from {', '.join(LIST_KEYWORDS)}")

    def estimator_class(self) -> type:
        """The estimator class (imported now)."""
        module, _, cls = self.estimator.partition(":")
        return getattr(importlib.import_module(module), cls)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def defaults(self) -> dict:
        """``{param name: default}`` of its own parameters."""
        return {p.name: p.default for p in self.params}

    def build(self, **params):
        """The configured, unfitted estimator; a keyword it does not take is an error naming both.

        ``attribute`` (an :class:`~embdebias.Attribute` or its name/path; None: gender) is
        checked against :attr:`max_groups` first: a binary method asked for more groups is
        an error, in one line, naming the method and the attribute's groups. A method whose
        estimator takes no ``attribute`` works on gender's lists only, and refuses another.
        """
        cls = self.estimator_class()
        accepted = set(inspect.signature(cls).parameters)
        if params.get("attribute") is not None:
            self.check_attribute(params["attribute"], params.get("lists"))
            if "attribute" not in accepted:
                params = {k: v for k, v in params.items() if k != "attribute"}
        wrong = sorted(set(params) - accepted)
        if wrong:
            raise EmbdebiasError(f"{', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} not apply to debias "
                                 f"method {self.name!r} (it takes: {', '.join(sorted(accepted))})")
        for name, value in params.items():
            if self.param(name) is not None:
                self.param(name).check(value)
        return cls(**params)

    def handles(self, n_groups: int) -> bool:
        """Whether the method can debias an attribute of ``n_groups`` groups (see :attr:`max_groups`)."""
        return self.max_groups is None or n_groups <= self.max_groups

    def several_attributes(self) -> bool:
        """Whether the method erases several attributes with one map (its estimator's
        ``several_attributes`` class attribute)."""
        return bool(getattr(self.estimator_class(), "several_attributes", False))

    def check_attribute(self, attribute, lists=None):
        """The :class:`~embdebias.Attribute` ``attribute`` stands for, if this method can debias it.

        Several (a list, or names joined by ``+``) give the list of them, each checked,
        for a method whose estimator has ``several_attributes = True`` (the LEACE family).

        Raises
        ------
        EmbdebiasError
            The attribute has more groups than :attr:`max_groups`, or is not gender while
            the estimator takes no ``attribute`` (it knows gender's lists only), or several
            are given to a method that takes one.
        """
        from ..data.attributes import resolve_attribute, resolve_attributes
        from ..data.wordlists import DEFAULT_LISTS

        if isinstance(attribute, (list, tuple)) or (isinstance(attribute, str) and "+" in attribute):
            # several attributes in one map ("gender+race"): each is checked; the estimator must take them
            names = attribute.split("+") if isinstance(attribute, str) else attribute
            found = [self.check_attribute(a, lists) for a in resolve_attributes(list(names), lists or DEFAULT_LISTS)]
            if not getattr(self.estimator_class(), "several_attributes", False):
                raise EmbdebiasError(f"debias method {self.name!r} debiases one attribute at a time; "
                                     f"{'+'.join(a.name for a in found)} needs one of: "
                                     f"{', '.join(n for n, s in DEBIASERS.items() if s.several_attributes())}")
            return found
        attr = resolve_attribute(attribute, lists or DEFAULT_LISTS)
        groups = f"{len(attr.groups)} groups ({', '.join(attr.groups)})"
        any_k = ", ".join(n for n, s in DEBIASERS.items() if s.handles(len(attr.groups)))
        if not self.handles(len(attr.groups)):
            raise EmbdebiasError(f"debias method {self.name!r} is binary by construction (it handles "
                                 f"{self.max_groups} groups); attribute {attr.name!r} has {groups}; "
                                 f"methods for k groups: {any_k}")
        if not is_default_attribute(attr) and "attribute" not in inspect.signature(self.estimator_class()).parameters:
            raise EmbdebiasError(f"debias method {self.name!r} works on gender's word lists only; attribute "
                                 f"{attr.name!r} ({groups}) needs one of: {any_k}")
        return attr


#: The methods ``embdebias run`` applies unless told otherwise.
DEFAULT_METHODS = ("hard", "soft")
#: The method of ``embdebias debias`` and :func:`make_debiaser` unless told otherwise.
DEFAULT_METHOD = "hard"
#: Every debiasing method by name, in report-column order.
DEBIASERS: dict[str, DebiaserSpec] = {}


def register(spec: DebiaserSpec) -> DebiaserSpec:
    """Add ``spec`` to :data:`DEBIASERS` (a name already there is an error)."""
    if spec.name in DEBIASERS:
        raise EmbdebiasError(f"debiaser {spec.name!r} is already registered")
    DEBIASERS[spec.name] = spec
    return spec


def get_debiaser(name: str) -> DebiaserSpec:
    """The table entry of ``name``; an unknown name is an error listing the known ones."""
    try:
        return DEBIASERS[name]
    except (KeyError, TypeError):
        raise EmbdebiasError(f"unknown debias method {name!r}; choose one of {', '.join(DEBIASERS)}") from None


def make_debiaser(method: str = DEFAULT_METHOD, **params):
    """The configured (unfitted) debiaser ``method`` of :data:`DEBIASERS`.

    ``params`` are its estimator's keywords (its table parameters, the lists it uses,
    ``n_components``, ``lists``, ...); one it does not take is an error naming both.
    """
    return get_debiaser(method).build(**params)


def load_fitted(path, *, dim: int | None = None) -> tuple[str, object]:
    """``(method, fitted debiaser)`` from a parameter file of
    :meth:`~embdebias.debias._base.Debiaser.save_params` (``embdebias run`` writes one per
    method, ``NAME.params.npz``); the file says which method it is.

    Raises :class:`~embdebias.errors.ParamsFileError` for a damaged file or one of no
    registered method, :class:`~embdebias.errors.DimensionError` for one fitted on another
    dimension than ``dim``.
    """
    from ..errors import ParamsFileError
    from ._params import describe

    estimator = describe(path).get("estimator")
    name = next((n for n, spec in DEBIASERS.items() if spec.estimator == estimator), None)
    if name is None:
        raise ParamsFileError(f"{path}: parameters of {estimator!r}, which is no registered debias method "
                              f"({', '.join(DEBIASERS)})")
    return name, DEBIASERS[name].estimator_class()().load_params(path, dim=dim)


def parse_methods(text) -> tuple[str, ...]:
    """``"hard,soft"`` (or a sequence of names) as a tuple of known method names, each once; ``"all"``: every one."""
    if isinstance(text, str) and text.strip() == "all":
        return tuple(DEBIASERS)
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    if not names or not all(names):
        raise EmbdebiasError(f"methods must name at least one debias method, got {text!r}")
    for name in names:
        get_debiaser(name)
    if len(set(names)) != len(names):
        raise EmbdebiasError(f"methods name a method twice: {text!r}")
    return tuple(names)


def run_order(methods) -> list[str]:
    """The order a run computes ``methods``: a method another one rides on comes before it."""
    order: list[str] = []
    for name in methods:
        host = DEBIASERS[name].rides_on  # a host that is not registered or not run is ignored
        if host in methods and host not in order:
            order.append(host)
        if name not in order:
            order.append(name)
    return order


def column_order(methods) -> list[str]:
    """The report's column order of ``methods``: the table's."""
    return [name for name in DEBIASERS if name in methods]


# Table order is report-column order: soft before hard, as the report has always shown them.
register(DebiaserSpec(
    name="soft", estimator="embdebias.debias.soft:SoftDebias",
    description="the soft-debias objective (Bolukbasi et al. 2016), solved exactly",
    params=(Param("lam", "--lambda", _validation.NONNEGATIVE, 0.2,
                  "soft debias: weight of the bias term (default 0.2)", label="lambda", metavar="L"),),
    seeded=True, expandable=True, rides_on="hard", info_key="soft_solve"))
register(DebiaserSpec(
    name="hard", estimator="embdebias.debias.hard:HardDebias",
    description="neutralize + equalize (Bolukbasi et al. 2016)",
    lists=("definitional_pairs", "equalize_pairs", "gender_specific")))
register(DebiaserSpec(
    name="hsr", estimator="embdebias.debias.hsr:HalfSiblingRegression",
    description="Half-Sibling Regression on Zhao et al.'s definition words (Yang & Feng 2020)",
    params=(Param("alpha", "--hsr-alpha", _validation.NONNEGATIVE, 60.0,
                  "hsr: ridge penalty alpha (default 60)", metavar="A"),),
    lists=(), max_groups=2))
register(DebiaserSpec(
    name="inlp", estimator="embdebias.debias.inlp:INLP",
    description="Iterative Nullspace Projection, until gender is at chance (Ravfogel et al. 2020)",
    params=(Param("n_iterations", "--inlp-iterations", _validation.POSITIVE, 35,
                  "inlp: most classifiers (default 35)", label="iterations", metavar="N"),),
    lists=(), seeded=True))
register(DebiaserSpec(
    name="rlace", estimator="embdebias.debias.rlace:RLACE",
    description="rank-k adversarial concept erasure, numpy (Ravfogel et al. 2022)",
    params=(Param("rank", "--rlace-rank", _validation.POSITIVE, 1, "rlace: rank removed (default 1)",
                  metavar="K"),),
    lists=(), seeded=True))
register(DebiaserSpec(
    name="double-hard", estimator="embdebias.debias.double_hard:DoubleHardDebias",
    description="remove the frequency direction, then hard debias, whole vocabulary (Wang et al. 2020)",
    params=(Param("n_candidates", "--dhd-candidates", _validation.POSITIVE, 20,
                  "double-hard: principal directions tried (default 20)", label="candidates", metavar="N"),),
    lists=("definitional_pairs", "equalize_pairs", "gender_specific"), max_groups=2))
register(DebiaserSpec(
    name="ran", estimator="embdebias.debias.ran:RANDebias",
    description="repulsion, attraction, neutralization of the most biased words (Kumar et al. 2020)",
    lists=("definitional_pairs", "gender_specific"), max_groups=2))
register(DebiaserSpec(
    name="oscar", estimator="embdebias.debias.oscar:OSCaR",
    description="rotate gender and occupations apart until orthogonal (Dev et al. 2021)",
    lists=("definitional_pairs",), max_groups=2))
register(DebiaserSpec(
    name="leace", estimator="embdebias.debias.leace:LEACE",
    description="closed-form linear concept erasure, least-squares and certified; rows not rescaled "
                "(Belrose et al. 2023)",
    params=(Param("eraser", "--eraser", _validation.Rule(str, lambda v: False, "leace or orth",
                                                         {"leace": "leace", "orth": "orth"}), "leace",
                  "leace: leace (whitened, least-squares) or orth (mean projection) (default leace)", metavar="E"),
            Param("shrinkage", "--shrinkage", _validation.Rule(float, lambda v: 0 <= v <= 1, "a number in [0, 1], "
                                                               "oas or none", {"oas": "oas", "none": None}), None,
                  "leace: covariance shrinkage, a factor in [0, 1] or oas (default none)", metavar="S")),
    lists=(), seeded=True))
register(DebiaserSpec(
    name="sal", estimator="embdebias.debias.leace:SAL",
    description="Spectral Attribute removaL: top singular directions of the cross-covariance (Shao et al. 2023)",
    params=(Param("n_directions", "--sal-directions", _validation.Rule(int, lambda v: v >= 1, "an integer >= 1 or "
                                                                       "all", {"all": None}), None,
                  "sal: directions removed (default all: k - 1 for k groups)", label="directions", metavar="N"),),
    lists=(), seeded=True))
register(DebiaserSpec(
    name="conceptor", estimator="embdebias.debias.conceptor:ConceptorNegation",
    description="conceptor negation of the groups' word lists, combined by OR (Karve et al. 2019)",
    params=(Param("aperture", "--aperture", _validation.Rule(float, lambda v: 0 < v < float("inf"),
                                                             "a finite number > 0"), 1.0,
                  "conceptor: aperture (default 1)", metavar="A"),),
    lists=()))
