"""``embdebias plot``: occupations projected on the gender direction, one panel per input."""

from __future__ import annotations

from .._validation import COUNT
from ._common import force_opt, input_opts, lists_opt, load_many, prepare_output, scoring_opts


def add_parser(sub, parents) -> None:
    p = sub.add_parser("plot", parents=parents,
                       help="occupations projected on the gender direction, one panel per input",
                       description="Plot the occupations that lean most to 'she' and to 'he' on each INPUT's "
                                   "gender direction, one panel per input (.png, .svg or .pdf).")
    p.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="vector files or built-in names (default: the built-in glove-6b-50d)")
    p.add_argument("--out", required=True, help="figure path (.png, .svg or .pdf)")
    p.add_argument("--words", metavar="FILE", help="occupation list (default: the list set's professions)")
    lists_opt(p)
    p.add_argument("--top", type=COUNT.parse, default=20, metavar="N",
                   help="show the N most she-leaning and N most he-leaning occupations (default 20)")
    scoring_opts(p, strict=False)
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_plot)


def run_plot(args, say) -> int:
    from ..report.figures import plot_occupations

    prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = load_many(args)
    path = plot_occupations(embeddings, args.out, words=args.words, top=args.top, lists=args.lists,
                            max_missing=args.max_missing)
    say(f"wrote {path}")
    return 0
