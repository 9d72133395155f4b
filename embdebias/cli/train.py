"""``embdebias train``: train word2vec or fastText vectors."""

from __future__ import annotations

import time

from .._validation import NONNEGATIVE, POSITIVE, SEED
from ..errors import EmbdebiasError
from ._common import FORMATS_TEXT, force_opt, prepare_output


def add_parser(sub, parents) -> None:
    p = sub.add_parser("train", parents=parents, help="train word2vec or fastText vectors on a text corpus",
                       description="Train word vectors on a text corpus with gensim, streamed from disk (one "
                                   "pass for the vocabulary, one per epoch), on every core, seeded, and write "
                                   "them atomically at the end. CORPUS is UTF-8 text, plain or gzip, one "
                                   "sentence or paragraph a line; it is lower-cased and split into runs of "
                                   "letters, digits and underscores with inner ' or - (punctuation dropped).")
    p.add_argument("corpus", metavar="CORPUS", help="text file (UTF-8, plain or gzip)")
    p.add_argument("--model", default="word2vec", metavar="NAME", help="word2vec (default) or fasttext")
    p.add_argument("--out", required=True, help="output path (a native-format directory unless --format or "
                                                "the extension says otherwise; a fastText model written as "
                                                ".ft.bin keeps its sub-word n-grams)")
    p.add_argument("--format", default=None, metavar="FMT", help=f"output format: {FORMATS_TEXT}")
    p.add_argument("--arch", choices=["skipgram", "cbow"], default="skipgram",
                   help="skip-gram (default: better on small corpora and rare words) or CBOW (faster)")
    p.add_argument("--dim", type=POSITIVE.parse, default=100, metavar="D", help="vector dimension (default 100)")
    p.add_argument("--window", type=POSITIVE.parse, default=5, metavar="N", help="context window (default 5)")
    p.add_argument("--min-count", type=POSITIVE.parse, default=5, metavar="N",
                   help="ignore words with fewer occurrences (default 5)")
    p.add_argument("--epochs", type=POSITIVE.parse, default=5, metavar="N", help="passes over the corpus (default 5)")
    p.add_argument("--negative", type=POSITIVE.parse, default=5, metavar="N", help="negative samples (default 5)")
    p.add_argument("--sample", type=NONNEGATIVE.parse, default=1e-3, metavar="T",
                   help="down-sampling threshold of frequent words (default 0.001; 0: off)")
    p.add_argument("--workers", type=POSITIVE.parse, default=None, metavar="N",
                   help="training threads (default: every core; 1: bit-for-bit reproducible)")
    p.add_argument("--seed", type=SEED.parse, default=0, help="gensim's seed (default 0)")
    p.add_argument("--seeds", type=_seed_list, default=None, metavar="S,S,...",
                   help="train one embedding per seed (comma-separated, e.g. 1,2,3), each written beside --out "
                        "with -seedS before its extension (vectors.txt -> vectors-seed1.txt): the embeddings "
                        "'embdebias reliability' compares (test-retest reliability, Du et al. 2021)")
    p.add_argument("--min-n", type=POSITIVE.parse, default=None, metavar="N",
                   help="fastText: shortest character n-gram (default 3)")
    p.add_argument("--max-n", type=POSITIVE.parse, default=None, metavar="N",
                   help="fastText: longest character n-gram (default 6)")
    p.add_argument("--bucket", type=POSITIVE.parse, default=None, metavar="N",
                   help="fastText: n-gram hash buckets (default 2000000; a .ft.bin output holds N x D floats)")
    p.add_argument("--keep-case", action="store_true", help="do not lower-case the corpus")
    p.add_argument("--token-pattern", default=None, metavar="REGEX",
                   help="Python regular expression of a token (default: runs of letters, digits and "
                        "underscores with inner ' or -, embdebias.text.TOKEN_PATTERN)")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8 in the corpus: an error naming the line and byte offset (strict, "
                        "default), drop the bytes (ignore) or put U+FFFD in their place (replace)")
    p.add_argument("--cda", action="store_true",
                   help="train on the counterfactually augmented stream (embdebias.cda), never written to disk")
    p.add_argument("--cda-mode", metavar="MODE", help="--cda: the augmenter's mode (e.g. two-sided, replace)")
    p.add_argument("--cda-option", action="append", metavar="KEY=VALUE",
                   help="--cda: another option of the augmenter, passed on as a string (repeatable)")
    force_opt(p)
    p.set_defaults(func=run_train)


def run_train(args, say) -> int:
    from ..text import check_corpus_path
    from ..train import train_embedding

    check_corpus_path(args.corpus)  # a missing corpus or a directory is named first
    if args.seeds is not None and args.seed != 0:
        raise EmbdebiasError("give --seed or --seeds, not both")
    outputs = [(args.seed, args.out)] if args.seeds is None else [(s, seed_path(args.out, s)) for s in args.seeds]
    for _, out in outputs:  # every output is checked before the first is trained
        prepare_output(args, out, say, vectors=True, inputs=(args.corpus,))
    params = {"sg": int(args.arch == "skipgram"), "vector_size": args.dim, "window": args.window,
              "min_count": args.min_count, "epochs": args.epochs, "negative": args.negative,
              "sample": args.sample, "workers": args.workers, "seed": args.seed,
              "lowercase": not args.keep_case, "unicode_errors": args.unicode_errors}
    if args.token_pattern is not None:
        params["token_pattern"] = args.token_pattern
    fasttext = {name: value for name, value in (("min_n", args.min_n), ("max_n", args.max_n),
                                                ("bucket", args.bucket)) if value is not None}
    if fasttext and args.model != "fasttext":
        given = " and ".join(f"--{name.replace('_', '-')}" for name in fasttext)
        raise EmbdebiasError(f"{given} appl{'ies' if len(fasttext) == 1 else 'y'} to --model fasttext only")
    transform = _cda_transform(args)
    for seed, out in outputs:
        t0 = time.perf_counter()
        emb = train_embedding(args.corpus, out, args.model, format=args.format, transform=transform,
                              progress=not args.quiet, log=say, **{**params, "seed": seed}, **fasttext)
        say(f"wrote {len(emb)} x {emb.dim} {args.model} vectors -> {out} ({time.perf_counter() - t0:.1f} s)")
    return 0


def _seed_list(text: str) -> tuple:
    """``--seeds 1,2,3``: distinct seeds, at least two (one is ``--seed``)."""
    import argparse

    try:
        seeds = tuple(SEED.parse(part.strip()) for part in str(text).split(","))
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds, e.g. 1,2,3: {exc}") from None
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"expected two or more distinct seeds, e.g. 1,2,3, got {text!r}")
    return seeds


def seed_path(out: str, seed: int) -> str:
    """Where ``--seeds`` writes the embedding of ``seed``: ``-seedN`` before the name's first extension
    (``vec.txt`` -> ``vec-seed1.txt``, ``model.ft.bin`` -> ``model-seed1.ft.bin``, ``dir`` -> ``dir-seed1``)."""
    from pathlib import Path

    path = Path(out)
    stem, dot, rest = path.name.partition(".")
    return str(path.with_name(f"{stem}-seed{seed}{dot}{rest}"))


def _cda_transform(args):
    """``--cda``: the counterfactual augmenter's ``augment`` (lines -> lines), or None without it."""
    options = dict(_key_value(item) for item in args.cda_option or ())
    if args.cda_mode is not None:
        options["mode"] = args.cda_mode
    if not args.cda:
        if options:
            raise EmbdebiasError("--cda-mode and --cda-option need --cda")
        return None
    from ..cda import CounterfactualAugmenter

    try:
        augmenter = CounterfactualAugmenter(**options).fit()
    except (TypeError, ValueError) as exc:
        raise EmbdebiasError(f"--cda options not accepted: {exc}") from None
    return augmenter.augment


def _key_value(text: str) -> tuple[str, str]:
    from ..errors import quote

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise EmbdebiasError(f"--cda-option takes KEY=VALUE, got {quote(text)}")
    return key.strip().replace("-", "_"), value
