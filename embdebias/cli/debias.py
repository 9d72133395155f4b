"""``embdebias debias``: debias a vector file with one method of the DEBIASERS table."""

from __future__ import annotations

import inspect
import time

from .. import _validation
from ..errors import EmbdebiasError
from ._common import (
    DEFAULT,
    FORMATS_TEXT,
    attribute_opt,
    force_opt,
    input_opts,
    list_file_opts,
    lists_opt,
    one_attribute,
    prepare_output,
)


def add_parser(sub, parents) -> None:
    from ..debias.table import DEBIASERS, DEFAULT_METHOD
    from ..pipeline.options import method_params

    p = sub.add_parser("debias", parents=parents, help=f"debias a vector file ({', '.join(DEBIASERS)})",
                       description="Debias an embedding and write the result atomically.")
    p.add_argument("input", nargs="?", default=DEFAULT, help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--method", choices=list(DEBIASERS), default=None,
                   help="; ".join(f"{name}: {spec.description}" for name, spec in DEBIASERS.items())
                   + f" (default {DEFAULT_METHOD}, or the method of --params)")
    p.add_argument("--params", default=None, metavar="FILE",
                   help="apply the fitted parameters of FILE (NAME.params.npz of 'embdebias run', or of "
                        "--save-params) instead of fitting: the method is the file's, and the options that "
                        "shape a fit do not apply")
    p.add_argument("--save-params", default=None, metavar="FILE",
                   help="also write the fitted parameters to FILE (.npz, no pickle), to apply them later "
                        "with --params")
    p.add_argument("--out", required=True, help="output path (a native-format directory unless --format "
                                                "or the extension says otherwise)")
    p.add_argument("--format", default=None, metavar="FMT", help=f"output format: {FORMATS_TEXT}")
    list_file_opts(p)
    lists_opt(p)
    attribute_opt(p)
    p.add_argument("--components", type=_validation.POSITIVE.parse, default=None, metavar="K",
                   help="dimension of the bias subspace (default 1; k - 1 for an attribute of k groups)")
    for param in method_params().values():
        p.add_argument(param.flag, dest=param.name, type=param.rule.parse, default=None, metavar=param.metavar,
                       help=param.help)
    p.add_argument("--seed", type=_validation.SEED.parse, default=None,
                   help="methods with randomness (the --expand SVM): its seed (default 0)")
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_debias)


def _applies(spec, flag: str) -> bool:
    """Whether the method-specific option ``flag`` applies to method ``spec``."""
    from ..pipeline.options import method_params

    fixed = {"--equalize": "equalize_pairs" in spec.lists, "--expand": spec.expandable,
             "--seeds": spec.expandable, "--seed": spec.seeded}
    if flag in fixed:
        return fixed[flag]
    return any(p.flag == flag and spec.param(p.name) is not None for p in method_params().values())


def _fit_options(args) -> dict:
    """``{flag: value}`` of the options that shape a fit."""
    from ..pipeline.options import method_params

    from ..data.wordlists import DEFAULT_LISTS

    return {"--definitional": args.definitional, "--equalize": args.equalize, "--specific": args.gender_specific,
            "--expand": args.expand, "--seeds": args.seeds, "--components": args.components,
            "--attribute": args.attribute, **{p.flag: getattr(args, p.name) for p in method_params().values()},
            "--seed": args.seed, "--lists": None if args.lists == DEFAULT_LISTS else args.lists}


def _method_options(args) -> dict:
    """``{flag: value}`` of the fit's options that only some methods take (the shared ones, such as
    ``--components``, are checked where they are used)."""
    shared = ("--definitional", "--specific", "--components", "--attribute", "--lists")
    return {flag: value for flag, value in _fit_options(args).items() if flag not in shared}


def _check_params_file(args):
    """With ``--params``: its method (a different ``--method`` is an error), and no option that
    shapes a fit, since none happens; the file is read (a damaged one refused) before any work."""
    from ..debias.table import load_fitted

    given = [flag for flag, value in _fit_options(args).items() if value not in (None, False)]
    if given:
        raise EmbdebiasError(f"{', '.join(given)} shape{'s' if len(given) == 1 else ''} a fit; with --params "
                             f"{args.params} nothing is fitted")
    method, _ = load_fitted(args.params)
    if args.method not in (None, method):
        raise EmbdebiasError(f"{args.params}: parameters of method {method}, not of --method {args.method}")
    return method


def _check_save_params(args, say) -> None:
    """``--save-params FILE``: a file of its own (not the input, ``--params`` or ``--out``, nor inside
    ``--out``), replaced only with ``--force``; checked before anything is written."""
    from pathlib import Path

    from .._atomic import prepare_output as check

    target = Path(args.save_params).resolve()
    for role, path in (("--out", args.out), ("the input", args.input), ("--params", args.params)):
        if path is not None and (target == Path(path).resolve() or Path(path).resolve() in target.parents):
            raise EmbdebiasError(f"--save-params {args.save_params}: the same file as {role}, or inside it; "
                                 f"give the parameters a file of their own")
    check(args.save_params, force=args.force, inputs=(args.input, args.params), log=say)


def _check_method_options(args, spec) -> None:
    """Method-specific options given to a method they do not apply to: one error naming both."""
    from ..debias.table import DEBIASERS

    given = _method_options(args)
    wrong = [flag for flag, value in given.items() if value not in (None, False) and not _applies(spec, flag)]
    if wrong:
        takers = [name for name, other in DEBIASERS.items() if all(_applies(other, f) for f in wrong)]
        raise EmbdebiasError(f"{' and '.join(wrong)} appl{'ies' if len(wrong) == 1 else 'y'} to --method "
                             f"{' or '.join(takers) or 'no method'} only, not {spec.name}")
    if args.seeds and not args.expand:
        raise EmbdebiasError("--seeds needs --expand")
    if args.expand and args.gender_specific:
        raise EmbdebiasError("--specific and --expand exclude each other: give the seeds of the expansion with "
                             "--seeds")


def _attribute_params(args, attr, spec) -> dict:
    """The estimator keywords of another attribute than gender (``--attribute``): the attribute itself
    (its lists and subspace); a method that cannot debias it refuses it in one line
    (:meth:`~embdebias.debias.DebiaserSpec.check_attribute`), as gender's list options do."""
    spec.check_attribute(attr, args.lists)
    given = [flag for flag, v in (("--definitional", args.definitional), ("--equalize", args.equalize),
                                  ("--specific", args.gender_specific), ("--expand", args.expand)) if v]
    if given:
        raise EmbdebiasError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to gender; the attribute "
                             f"{attr.name} brings its own lists in its file ({attr.path})")
    params = {"lists": args.lists, "attribute": attr}
    if "n_components" in inspect.signature(spec.estimator_class()).parameters:
        params["n_components"] = args.components or max(1, attr.k - 1)
    elif args.components is not None:  # INLP and RLACE find their own directions (RLACE: --rlace-rank)
        raise EmbdebiasError(f"--components does not apply to --method {spec.name}")
    return _own_params(args, spec, params)


def _own_params(args, spec, params: dict) -> dict:
    """``params`` with the method's own parameters (their defaults unless given) and its seed."""
    params.update({p.name: p.default if getattr(args, p.name) is None else getattr(args, p.name)
                   for p in spec.params})
    if spec.seeded:
        params["random_state"] = 0 if args.seed is None else args.seed
    return params


def _params(args, spec) -> dict:
    """The estimator keywords of ``spec`` that the options give."""
    from ..data.attributes import is_default_attribute

    attr = one_attribute(args)
    if not is_default_attribute(attr):
        return _attribute_params(args, attr, spec)
    params = dict(definitional=args.definitional, n_components=args.components or 1,
                  gender_specific=args.gender_specific, lists=args.lists)
    # Shared options a method does not take (HSR has no subspace): an error if given, else left out.
    accepted = set(inspect.signature(spec.estimator_class()).parameters)
    given = {"definitional": "--definitional", "n_components": "--components", "gender_specific": "--specific"}
    wrong = [given[k] for k in params if k not in accepted and params[k] not in (None, 1)]
    if wrong:
        raise EmbdebiasError(f"{' and '.join(wrong)} do{'es' if len(wrong) == 1 else ''} not apply to --method "
                             f"{spec.name}")
    params = {k: v for k, v in params.items() if k in accepted}
    if "equalize_pairs" in spec.lists:
        params["equalize"] = args.equalize
    params = _own_params(args, spec, params)
    if args.expand:
        from ..debias.expand import GenderSpecificExpander

        params["gender_specific"] = GenderSpecificExpander(args.seeds, lists=args.lists,
                                                           random_state=params.get("random_state", 0))
    return params


def run_debias(args, say) -> int:
    from .._lock import output_lock
    from ..debias.table import DEFAULT_METHOD, get_debiaser
    from ..debias.api import debias_file

    if args.params is not None:
        args.method = _check_params_file(args)
    args.method = args.method or DEFAULT_METHOD
    spec = get_debiaser(args.method)
    _check_method_options(args, spec)
    if args.save_params is not None:
        _check_save_params(args, say)
    inputs = (args.input, args.params)  # a parameter file is read: never written over
    # Checked before the lock (which needs the output's directory), and again under it:
    # another command cannot write the output in between.
    prepare_output(args, args.out, say, vectors=True, inputs=inputs)
    with output_lock(args.out, purpose="debias"):
        prepare_output(args, args.out, say, vectors=True, inputs=inputs)
        t0 = time.perf_counter()
        result, debiaser = debias_file(args.input, args.out, method=args.method, format=args.format,
                                       input_format=args.input_format, limit=args.limit,
                                       unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle,
                                       progress=not args.quiet, fitted=args.params,
                                       **({} if args.params else _params(args, spec)))
        if args.save_params is not None:
            debiaser.save_params(args.save_params)
    sub = getattr(debiaser, "subspace_", None)
    if hasattr(sub, "pairs_used_") and args.params is None:  # a loaded subspace has its components only
        k = sub.components_.shape[0]
        say(f"bias subspace: {len(sub.pairs_used_)} defining sets, k={k}, "
            f"explained variance {', '.join(f'{r:.3f}' for r in sub.explained_variance_ratio_[:k])}")
    for line in type(debiaser).report_lines(debiaser.run_info(result)):
        say(line.removeprefix("- "))
    if hasattr(debiaser, "report"):  # soft: solver, status, objective terms, expansion
        say(debiaser.report())
    say(f"{args.method}-debiased {len(result)} x {result.dim} -> {args.out} "
        f"({time.perf_counter() - t0:.1f} s{f', with the parameters of {args.params}' if args.params else ''})"
        + (f"; fitted parameters -> {args.save_params}" if args.save_params else ""))
    return 0
