"""``embdebias expand``: expand the gender-specific word list with a linear SVM."""

from __future__ import annotations

from .._validation import MAX_RANK, POSITIVE, PRECISION_TARGET, SEED
from ._common import DEFAULT, force_opt, input_opts, lists_opt, prepare_output


def add_parser(sub, parents) -> None:
    p = sub.add_parser("expand", parents=parents, help="expand the gender-specific word list with a linear SVM",
                       description="Train a linear SVM on the seed words (gender-specific against the rest) "
                                   "and write the words it labels gender-specific, one a line (Bolukbasi et "
                                   "al.'s expansion; the threshold is chosen by cross-validation).")
    p.add_argument("input", nargs="?", default=DEFAULT, metavar="INPUT",
                   help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--out", required=True, help="output word list (one word per line)")
    p.add_argument("--seeds", metavar="FILE", help="seed words (default: the list set's; published: "
                                                   "Bolukbasi et al.'s 218)")
    lists_opt(p)
    p.add_argument("--n-train", type=POSITIVE.parse, default=50_000, metavar="N",
                   help="train on the N most frequent words (default 50000)")
    p.add_argument("--target-precision", type=PRECISION_TARGET.parse, default=0.8, metavar="P",
                   help="choose the SVM threshold for this cross-validated precision on held-out "
                        "seeds (default 0.8; 'none': the SVM's own rule, decision > 0)")
    p.add_argument("--max-rank", type=MAX_RANK.parse, default="n_train", metavar="N",
                   help="label only the N most frequent words (default: n_train, the training "
                        "words; 'all': the whole vocabulary)")
    p.add_argument("--seed", type=SEED.parse, default=0, help="the SVM's and the cross-validation's seed (default 0)")
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_expand)


def run_expand(args, say) -> int:
    from .. import io
    from ..debias.expand import expand_gender_specific

    prepare_output(args, args.out, say, inputs=(args.input,))
    emb = io.load(args.input, format=args.input_format, limit=args.limit, unicode_errors=args.unicode_errors,
                  trust_pickle=args.trust_pickle)
    result = expand_gender_specific(emb, seed=args.seeds, lists=args.lists, n_train=args.n_train,
                                    target_precision=args.target_precision,
                                    max_rank=args.max_rank, random_state=args.seed)
    result.save(args.out, inputs=(args.input,))
    say(result.summary())
    return 0
