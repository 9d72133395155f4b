"""``embdebias reliability``: test-retest reliability of the per-word bias measures across
embeddings of one corpus trained with different seeds (``embdebias train --seeds``)."""

from __future__ import annotations

import json

from ._common import emit_text, force_opt, input_opts, lists_opt, load_many, prepare_output


def add_parser(sub, parents) -> None:
    p = sub.add_parser("reliability", parents=parents,
                       help="test-retest reliability (ICC) of the bias measures across training seeds",
                       description="Given three or more embeddings of the same corpus trained with different "
                                   "seeds (embdebias train --seeds 1,2,3), the intraclass correlation of each "
                                   "per-word bias measure (direct-bias projection, RIPA, association, residual "
                                   "direction, SC-WEAT) "
                                   "over the words, ICC(2,1) and ICC(3,1) as Du et al. (2021), with a bootstrap "
                                   "interval over the words.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="three or more vector files")
    p.add_argument("--words", metavar="FILE", help="the words scored, one a line (default: the list set's "
                                                   "professions)")
    p.add_argument("--json", action="store_true", help="JSON instead of a Markdown table")
    p.add_argument("--out", metavar="FILE", help="write the result here instead of stdout")
    p.add_argument("--random-state", type=int, default=0, metavar="SEED", help="seed of the bootstrap (default 0)")
    lists_opt(p)
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_reliability)


def markdown(result: dict) -> str:
    """The result as a sentence and a table."""
    level = int(round(100 * result["level"]))
    lines = [f"Test-retest reliability over {len(result['embeddings'])} embeddings "
             f"({', '.join(result['embeddings'])}), {result['n_words']} words, {len(result['pairs'])} base pairs.",
             "", f"| measure | ICC(2,1) | {level} % interval | ICC(3,1) |", "| --- | --- | --- | --- |"]
    for m, v in result["measures"].items():
        lines.append(f"| {m} | {v['icc2']:.3f} | [{v['ci_low']:.3f}, {v['ci_high']:.3f}] | {v['icc3']:.3f} |")
    return "\n".join(lines)


def run_reliability(args, say) -> int:
    from .. import wordlists
    from ..metrics.trust import reliability

    if args.out:
        prepare_output(args, args.out, say, inputs=args.inputs)
    embeddings = load_many(args)
    words = wordlists.load_words(args.words) if args.words else None
    result = reliability(embeddings, words, lists=args.lists, random_state=args.random_state)
    text = json.dumps(result, indent=2) if args.json else markdown(result)
    emit_text(args, text, say)
    return 0
