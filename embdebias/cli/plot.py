"""``embdebias plot``: occupations projected on the gender direction, one panel per input."""

from __future__ import annotations

from .._validation import COUNT
from ._common import (
    attribute_opt,
    force_opt,
    input_opts,
    lists_opt,
    load_many,
    one_attribute,
    prepare_output,
    scoring_opts,
)


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
    attribute_opt(p)
    p.add_argument("--top", type=COUNT.parse, default=20, metavar="N",
                   help="show the N most she-leaning and N most he-leaning occupations (default 20)")
    scoring_opts(p, strict=False)
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_plot)


def run_plot(args, say) -> int:
    from ..metrics.base import attribute_subspace
    from ..report.figures import _save, group_figure, plot_occupations

    attr = one_attribute(args)  # a bad attribute file fails before anything is read or written
    prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = load_many(args)
    subspace = attribute_subspace(next(iter(embeddings.values())), attr, lists=args.lists)
    if attr.is_binary and (args.words or attr.neutral_words):
        # a bundled list is passed by name, so the figure's title names it
        words = args.words or attr.list_names.get("neutral_words") or list(attr.neutral_words)
        path = plot_occupations(embeddings, args.out, words=words, top=args.top, lists=args.lists,
                                max_missing=args.max_missing, subspace=subspace, attribute=attr)
    else:  # k groups: no one direction with two sides; each group's words on the first components
        path = _save(group_figure(embeddings, attr, subspace), args.out, list(args.inputs or []))
    say(f"wrote {path}")
    return 0
