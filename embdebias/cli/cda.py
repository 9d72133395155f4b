"""``embdebias cda``: counterfactual data augmentation of a text corpus."""

from __future__ import annotations

import json

from .._validation import COUNT
from ._common import force_opt, prepare_output


def add_parser(sub, parents) -> None:
    p = sub.add_parser("cda", parents=parents, help="counterfactual data augmentation of a text corpus",
                       description="Swap gendered words (he/she, king/queen, ...; Lu et al.'s pairs) in a "
                                   "text corpus, one sentence a line, plain or gzip. Two-sided by default: "
                                   "every line is kept and each line with a gendered word is followed by "
                                   "its counterfactual. The output is written atomically (gzip if its "
                                   "name ends in .gz); the input is never changed.")
    p.add_argument("corpus", metavar="CORPUS", help="UTF-8 text file (gzip detected by its magic bytes)")
    p.add_argument("--out", required=True, metavar="AUGMENTED", help="output text file (.gz: compressed)")
    p.add_argument("--mode", choices=["two-sided", "replace"], default="two-sided",
                   help="two-sided: keep each line and add its counterfactual (default); replace: "
                        "write the counterfactual instead")
    p.add_argument("--intervention", choices=["grammatical", "naive"], default="grammatical",
                   help="grammatical: her -> him/his by the next word, words beside a proper noun kept "
                        "(default); naive: every dictionary word swapped, her -> his")
    p.add_argument("--pairs", metavar="FILE",
                   help="gender pairs, one 'male female' pair a line (default: Lu et al.'s 124 pairs, "
                        "her:him/his and himself:herself)")
    p.add_argument("--names", action="store_true", help="swap first names too (the bundled 60 pairs)")
    p.add_argument("--names-file", metavar="FILE", help="swap first names from this pair file instead")
    p.add_argument("--top", type=COUNT.parse, default=10, metavar="N",
                   help="the report lists the N most swapped pairs (default 10)")
    p.add_argument("--json-stats", metavar="FILE", help="also write the statistics as JSON")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8: an error naming the line and byte offset (strict, default), "
                        "drop the bytes (ignore) or put U+FFFD in their place (replace), as gensim's")
    force_opt(p)
    p.set_defaults(func=run_cda)


def run_cda(args, say) -> int:
    from ..cda import CounterfactualAugmenter

    prepare_output(args, args.out, say, inputs=(args.corpus,))
    if args.json_stats:
        prepare_output(args, args.json_stats, say, inputs=(args.corpus, args.out))
    cda = CounterfactualAugmenter(pairs=args.pairs, names=args.names_file or args.names, mode=args.mode,
                                  intervention=args.intervention, unicode_errors=args.unicode_errors)
    stats = cda.augment_file(args.corpus, args.out, progress=not args.quiet)
    say(stats.summary(top=args.top))
    say(f"wrote {args.out} ({args.mode}, {args.intervention} intervention)")
    if args.json_stats:
        from .._atomic import atomic_file

        report = {"corpus": str(args.corpus), "out": str(args.out), "mode": args.mode,
                  "intervention": args.intervention, **cda.lexicon_.sources, **stats.to_dict()}
        with atomic_file(args.json_stats, inputs=(args.corpus, args.out)) as tmp:
            tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        say(f"wrote {args.json_stats}")
    return 0
