"""One place that turns a user's options into a configured, unfitted debiaser.

``embdebias debias``, ``embdebias run`` and ``embdebias sweep`` all call :func:`configure`,
so one option means one thing everywhere and is checked once, with one message. What it
checks, in this order:

* the method is in :data:`~embdebias.debias.DEBIASERS` and can debias the attribute (a
  binary method refuses an attribute of more groups; a method that knows gender's lists
  only refuses another attribute);
* the list options (definitional pairs, equalize pairs, specific words, the SVM
  expansion and its seeds) apply to the attribute whose lists are the list set's (gender):
  another attribute brings its own lists in its file;
* ``seeds`` needs ``expand``, and ``expand`` excludes ``gender_specific``;
* a method's own parameters (:class:`~embdebias.debias.Param`) apply to the methods that
  declare them, each checked by its rule; ``n_components`` to the methods with a subspace.

Parameter values are validated by the estimators' own ``_parameter_constraints``
(scikit-learn's dialect) when they are fitted, and by the table's :class:`Param` rules here;
both name the parameter by its keyword, and a message names the command-line flag too.
"""

from __future__ import annotations

import inspect

from ..errors import EmbdebiasError
from .table import LIST_KEYWORDS, get_debiaser

#: The list options: ``{estimator keyword: (list role, command-line flag)}``.
LIST_OPTIONS = {"definitional": ("definitional_pairs", "--definitional"),
                "equalize": ("equalize_pairs", "--equalize"),
                "gender_specific": ("gender_specific", "--specific")}


def configure(method: str, *, attribute, lists: str = "published", subspace=None, params=None,
              n_components: int | None = None, definitional=None, equalize=None, gender_specific=None,
              expand: bool = False, seeds=None, random_state: int | None = None, max_missing=None):
    """The configured, unfitted debiaser ``method`` for ``attribute``.

    Parameters
    ----------
    method : str
        A name of :data:`~embdebias.debias.DEBIASERS`.
    attribute : Attribute or list of Attribute
        The resolved attribute (:func:`~embdebias.data.attributes.as_attribute`), or several
        for a method that erases them with one map (``several_attributes``; the others refuse
        a list).
    lists : {"published", "curated"}
        The list set.
    subspace : BiasSubspace, optional
        A fitted subspace to debias along (it must carry ``attribute``).
    params : dict, optional
        The method's own parameters by keyword (``{"lam": 0.5}``), checked by their table
        rules; a table parameter of another method is an error naming the methods that take
        it. Any other estimator keyword (a sweep's ``neutralize``) is passed on, and one the
        estimator does not take is an error naming what it takes.
    n_components : int, optional
        The subspace's dimension, for a method that fits its own subspace; default ``k - 1``.
    definitional, equalize, gender_specific : optional
        The list options (gender's lists), each for the methods that use that list.
    expand, seeds : optional
        Keep the SVM expansion of ``seeds`` as the specific words (soft debias).
    random_state : int, optional
        The seed of a seeded method (default 0).
    max_missing : float, optional
        For a method that takes it.

    Raises
    ------
    EmbdebiasError
        An option that does not apply, in one line naming the option and the method.
    """
    spec = get_debiaser(method)
    found = spec.check_attribute(attribute, lists)
    several = found if isinstance(found, list) else [found]
    accepted = set(inspect.signature(spec.estimator_class()).parameters)
    given_lists = {kw: v for kw, v in (("definitional", definitional), ("equalize", equalize),
                                        ("gender_specific", gender_specific)) if v is not None}
    for attr in several:
        check_list_options(attr, {LIST_OPTIONS[kw][1] for kw in given_lists}, expand, seeds, spec=spec)
    keywords = {"lists": lists, "attribute": attribute, **_own_params(spec, params or {})}
    keywords.update(_list_keywords(spec, given_lists, accepted))
    # several attributes in one map: an eraser, which finds its own directions (no subspace)
    _subspace_keywords(spec, accepted, keywords, subspace, n_components, several[0])
    if spec.seeded:
        keywords["random_state"] = 0 if random_state is None else random_state
    if max_missing is not None and "max_missing" in accepted:
        keywords["max_missing"] = max_missing
    if expand:
        from .expand import GenderSpecificExpander

        keywords["gender_specific"] = GenderSpecificExpander(seeds, lists=lists,
                                                             random_state=keywords.get("random_state", 0))
    return spec.build(**keywords)


def check_list_options(attribute, given_flags, expand: bool, seeds, *, spec=None) -> None:
    """The list options given (their flags), ``expand`` and ``seeds`` for ``attribute`` (and the method
    ``spec``, if one): the one check of ``debias``, ``run`` and ``sweep``.

    Raises
    ------
    EmbdebiasError
        A list option for an attribute that brings its own lists, ``seeds`` without ``expand``,
        ``expand`` with the specific words, or ``expand`` for a method that does not expand.
    """
    flags = sorted(given_flags, key=lambda f: [o[1] for o in LIST_OPTIONS.values()].index(f)) \
        + ["--expand"] * bool(expand)
    if flags and not attribute.uses_gender_lists:
        raise EmbdebiasError(f"{', '.join(flags)} appl{'ies' if len(flags) == 1 else 'y'} to gender; the attribute "
                             f"{attribute.name} brings its own lists in its file ({attribute.path})")
    if seeds is not None and not expand:
        raise EmbdebiasError("--seeds needs --expand")
    if expand and "--specific" in given_flags:
        raise EmbdebiasError("--specific and --expand exclude each other: give the seeds of the expansion with "
                             "--seeds")
    if expand and spec is not None and not spec.expandable:
        raise EmbdebiasError(f"--expand applies to --method {' or '.join(expandable()) or 'no method'} only, "
                             f"not {spec.name}")


def expandable() -> list[str]:
    """The methods that keep the SVM expansion as their specific words."""
    from .table import DEBIASERS

    return [n for n, s in DEBIASERS.items() if s.expandable]


def _own_params(spec, params: dict) -> dict:
    """The method's own parameters: its defaults, overridden by ``params`` (each checked by its rule)."""
    from .table import DEBIASERS

    out = spec.defaults()
    for name, value in params.items():
        param = spec.param(name)
        takers = [n for n, s in DEBIASERS.items() if s.param(name) is not None]
        if param is None and takers:
            flag = DEBIASERS[takers[0]].param(name).flag
            raise EmbdebiasError(f"{flag} applies to --method {' or '.join(takers)} only, not {spec.name}")
        out[name] = value if param is None else spec.check_param(name, value)
    return out


def _list_keywords(spec, given: dict, accepted: set) -> dict:
    """The list options ``spec`` uses; one it does not use, given, is an error naming both."""
    uses = {LIST_KEYWORDS[role] for role in spec.lists} | ({"definitional"} & accepted)
    wrong = [LIST_OPTIONS[kw][1] for kw in given if kw not in uses or kw not in accepted]
    if wrong:
        raise EmbdebiasError(f"{' and '.join(wrong)} do{'es' if len(wrong) == 1 else ''} not apply to --method "
                             f"{spec.name}")
    return dict(given)


def _subspace_keywords(spec, accepted: set, keywords: dict, subspace, n_components, attribute) -> None:
    """``subspace`` or ``n_components`` for a method that debiases along a subspace."""
    if n_components is not None and "n_components" not in accepted:
        raise EmbdebiasError(f"--components does not apply to --method {spec.name} (it finds its own directions)")
    if subspace is not None and "subspace" in accepted:  # fitted with the run's dimension
        keywords["subspace"] = subspace
    elif "n_components" in accepted:
        keywords["n_components"] = n_components or max(1, attribute.k - 1)


__all__ = ["configure", "check_list_options", "LIST_OPTIONS"]
