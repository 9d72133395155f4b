"""``embdebias score``: bias and quality metrics for one or more embeddings."""

from __future__ import annotations

import json
import sys

from ..pipeline.options import add_arguments
from ._common import attribute_opt, emit_text, force_opt, input_opts, lists_opt, load_many, prepare_output, scoring_opts

#: Exit status when nothing could be scored (the report's first line says so and why).
UNSCORABLE = 3

EXIT_STATUS = (f"exit status: 0 scored; 2 bad input or options (one line on stderr); {UNSCORABLE} nothing "
               f"could be scored on any embedding (the report is written and its first line says why); "
               f"130/143 interrupted")


def add_parser(sub, parents) -> None:
    p = sub.add_parser("score", parents=parents, help="bias and quality metrics for one or more embeddings",
                       description="Score each INPUT with the bias metrics (WEAT, RNSB, ECT, BAT, direct and "
                                   "indirect bias, residual bias, ...) and the quality tests (similarity, "
                                   "analogy), with confidence intervals, as Markdown tables or JSON.",
                       epilog=EXIT_STATUS)
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="vector files or built-in names (default: the built-in glove-6b-50d)")
    p.add_argument("--json", action="store_true", help="JSON instead of Markdown tables")
    # "%(registry_help)s" is filled in when the help is shown (argparse and the docs' sphinx-argparse
    # expand it from the action's attributes): the registry imports every metric module.
    tests = p.add_argument("--tests", nargs="+", metavar="TEST", help="%(registry_help)s")
    tests.registry_help = _TestsHelp()
    add_arguments(p, names=("sembias",))
    lists_opt(p)
    attribute_opt(p, several=True)
    p.add_argument("--lexicon", action="append", metavar="METRIC=FILE",
                   help="a lexicon of human ratings for valnorm (valence) or wat (gender association), which "
                        "adds that metric to the tests; none is bundled (their licences): a UTF-8 CSV or TSV "
                        "with a header, word and rating columns (repeatable)")
    p.add_argument("--out", metavar="FILE", help="write the report here instead of stdout")
    scoring_opts(p)
    add_arguments(p, names=("random_state",))
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_score)


def _text(reports: dict, as_json: bool) -> str:
    """One report as before; several attributes: one section (or JSON entry) per attribute."""
    if len(reports) == 1:
        report = next(iter(reports.values()))
        return json.dumps(report.to_dict(), indent=2) if as_json else report.to_markdown()
    if as_json:
        return json.dumps({"attributes": {name: r.to_dict() for name, r in reports.items()}}, indent=2)
    return "\n\n".join(f"## {name} ({', '.join(r.params.get('groups', []))})\n\n{r.to_markdown()}"
                       for name, r in reports.items())


class _TestsHelp:
    """``str()`` of it is :func:`tests_help`, made when the help is shown, not when the parser is
    built: every command, ``--version`` included, starts without importing the metric registry
    (most of the command line's start-up time)."""

    def __str__(self) -> str:
        return tests_help()


def tests_help() -> str:
    """The help of ``--tests``, made from the metric registry, and the user's own WEAT file."""
    from ..evaluate import tests_help as from_registry

    return (from_registry() + "; or a JSON file of your own WEAT tests, as wordlists/weat_tests.json: "
            "[{\"id\", \"title\", \"X\": {\"name\", \"words\"}, \"Y\", \"A\", \"B\"}]")


def add_lexicons(options: dict, given) -> None:
    """``--lexicon METRIC=FILE``: the metric's ``lexicon`` option, and the metric added to the tests."""
    from ..evaluate import DEFAULT_SUITE
    from ..metrics.validity import parse_lexicon_spec

    for text in given:
        metric, path = parse_lexicon_spec(text)
        options.setdefault("options", {}).setdefault(metric, {})["lexicon"] = path
        suite = tuple(options.get("suite") or DEFAULT_SUITE)
        options["suite"] = suite if metric in suite else (*suite, metric)


def run_score(args, say) -> int:
    from ..data.attributes import resolve_attributes
    from ..evaluate import evaluate, suite_options

    attrs = resolve_attributes(list(args.attribute or ["gender"]), args.lists)
    if args.out:
        prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = load_many(args)
    options = suite_options(args.tests) if args.tests else {}
    if args.sembias is not None:  # BAT's own option
        options.setdefault("options", {}).setdefault("bat", {})["sembias"] = args.sembias
    add_lexicons(options, args.lexicon or ())
    reports = {a.name if args.attribute else None:
               evaluate(embeddings, random_state=args.random_state, strict=args.strict, max_missing=args.max_missing,
                        min_share=args.min_share, lists=args.lists, attribute=a,
                        progress=not args.quiet and sys.stderr.isatty(), **options)
               for a in attrs}
    text = _text(reports, args.json)
    emit_text(args, text, say)
    from ..report.summary import scored

    if not any(scored(r) for r in reports.values()):
        say("nothing could be scored: see the report's first line")
        return UNSCORABLE
    return 0
