"""``embdebias debias``: debias a vector file with one method of the DEBIASERS table."""

from __future__ import annotations

import argparse
import inspect
import time

from .. import _validation
from ..errors import EmbdebiasError
from ._common import (
    DEFAULT,
    FORMATS_TEXT,
    attribute_opt,
    debias_attribute,
    force_opt,
    input_opts,
    list_file_opts,
    lists_opt,
    prepare_output,
    scoring_opts,
)

#: Options whose ``False`` is a choice (``--no-normalize``), not "not given".
_TRISTATE = ("--normalize",)
# The help names the methods each option applies to as text: building the parser must not import
# every estimator (seconds); tests/test_cli_debias_erasure.py checks the names against the table.
SEVERAL_HELP = ("names joined by '+' (gender+race) are erased by one map, for the methods that take several: "
                "leace, sal, conceptor")
MAX_MISSING_HELP = ("the largest share of a list's words that may be missing from the vocabulary, for the methods "
                    "that read word lists of their own (hsr, ran, oscar, leace, sal, conceptor): beyond it the fit "
                    "fails before anything is written (default 0.2)")
NORMALIZE_HELP = ("scale every output row to unit length, or not (--no-normalize), for the methods that offer the "
                  "choice (leace, sal, conceptor; default: the method's own: off for the erasers leace and sal, "
                  "whose linear guarantee holds for the affine output only, on for conceptor)")


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
    attribute = next(a for a in p._actions if a.dest == "attribute")
    attribute.metavar = "NAME|FILE[+NAME...]"
    attribute.help += "; " + SEVERAL_HELP
    scoring_opts(p, strict=False)
    next(a for a in p._actions if a.dest == "max_missing").help = MAX_MISSING_HELP
    p.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=None, help=NORMALIZE_HELP)
    p.add_argument("--components", type=_validation.POSITIVE.parse, default=None, metavar="K",
                   help="dimension of the bias subspace (default: k - 1 for an attribute of k groups, 1 for gender)")
    for param in method_params().values():
        p.add_argument(param.flag, dest=param.name, type=param.rule.convert, default=None, metavar=param.metavar,
                       help=param.help)
    p.add_argument("--seed", type=_validation.SEED.parse, default=None,
                   help="methods with randomness (the --expand SVM): its seed (default 0)")
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_debias)


def _takers(keyword: str) -> list[str]:
    """The methods whose estimator takes ``keyword``."""
    from ..debias.table import DEBIASERS

    return [name for name, spec in DEBIASERS.items() if _takes(spec, keyword)]


def _takes(spec, keyword: str) -> bool:
    return keyword in inspect.signature(spec.estimator_class()).parameters


def _given(flag: str, value) -> bool:
    """Whether an option was given: not None, and not a switch left off (``--no-normalize`` is given)."""
    return value is not None and (value is not False or flag in _TRISTATE)


def _applies(spec, flag: str) -> bool:
    """Whether the method-specific option ``flag`` applies to method ``spec``."""
    from ..pipeline.options import method_params

    fixed = {"--equalize": "equalize_pairs" in spec.lists, "--expand": spec.expandable,
             "--seeds": spec.expandable, "--seed": spec.seeded, "--normalize": _takes(spec, "normalize"),
             "--max-missing": _takes(spec, "max_missing")}
    if flag in fixed:
        return fixed[flag]
    return any(p.flag == flag and spec.param(p.name) is not None for p in method_params().values())


def _fit_options(args) -> dict:
    """``{flag: value}`` of the options that shape a fit."""
    from ..pipeline.options import RunOptions, method_params

    from ..data.wordlists import DEFAULT_LISTS

    return {"--definitional": args.definitional, "--equalize": args.equalize, "--specific": args.gender_specific,
            "--expand": args.expand, "--seeds": args.seeds, "--components": args.components,
            "--attribute": args.attribute, **{p.flag: getattr(args, p.name) for p in method_params().values()},
            "--seed": args.seed, "--lists": None if args.lists == DEFAULT_LISTS else args.lists,
            "--normalize": args.normalize,
            # the one default of every command (RunOptions'): given only when changed
            "--max-missing": None if args.max_missing == RunOptions().max_missing else args.max_missing}


def _method_options(args) -> dict:
    """``{flag: value}`` of the fit's options that only some methods take (the shared ones, such as
    ``--components``, are checked where they are used)."""
    shared = ("--definitional", "--specific", "--components", "--attribute", "--lists")
    return {flag: value for flag, value in _fit_options(args).items() if flag not in shared}


def _check_params_file(args):
    """With ``--params``: its method (a different ``--method`` is an error), and no option that
    shapes a fit, since none happens; the file is read (a damaged one refused) before any work."""
    from ..debias.table import load_fitted

    given = [flag for flag, value in _fit_options(args).items() if _given(flag, value)]
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
    wrong = [flag for flag, value in given.items() if _given(flag, value) and not _applies(spec, flag)]
    if wrong:
        takers = [name for name, other in DEBIASERS.items() if all(_applies(other, f) for f in wrong)]
        raise EmbdebiasError(f"{' and '.join(wrong)} appl{'ies' if len(wrong) == 1 else 'y'} to --method "
                             f"{' or '.join(takers) or 'no method'} only, not {spec.name}")


def _params(args, spec) -> dict:
    """The estimator keywords the options give (:func:`~embdebias.debias.configure.configure`: the one
    place where options become a configured method, for debias, run and sweep alike)."""
    from ..debias.configure import configure

    own = {p.name: getattr(args, p.name) for p in spec.params if getattr(args, p.name) is not None}
    if args.normalize is not None:  # an estimator keyword, not a table parameter (checked by _applies)
        own["normalize"] = args.normalize
    debiaser = configure(spec.name, attribute=debias_attribute(args), lists=args.lists, params=own,
                         n_components=args.components, definitional=args.definitional, equalize=args.equalize,
                         gender_specific=args.gender_specific, expand=args.expand, seeds=args.seeds,
                         random_state=args.seed, max_missing=args.max_missing)
    return debiaser.get_params(deep=False)


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
