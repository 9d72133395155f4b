"""``embdebias convert``: convert a vector file to another format."""

from __future__ import annotations

import time

from ._common import FORMATS_TEXT, force_opt, input_opts, prepare_output


def add_parser(sub, parents) -> None:
    p = sub.add_parser("convert", parents=parents, help="convert a vector file to another format",
                       description="Read a vector file (its format detected from the content unless "
                                   "--input-format names it) and write it in another format, atomically. "
                                   "The output format is --format, else the one OUTPUT's name asks for "
                                   "(.bin, .w2v.txt, .vec, .glove.txt, .ft.bin, .kv; anything else: native). "
                                   "A --format that contradicts the name is an error unless --force.")
    p.add_argument("input", metavar="INPUT", help="vector file, or a native-format directory")
    p.add_argument("output", metavar="OUTPUT", help="output path (its name gives the format unless --format)")
    p.add_argument("--format", default=None, metavar="FMT",
                   help=f"output format: {FORMATS_TEXT} (default: from OUTPUT's name)")
    input_opts(p)
    force_opt(p)
    p.set_defaults(func=run_convert)


def run_convert(args, say) -> int:
    from .. import io
    from .._lock import output_lock

    # Checked before the lock (which needs the output's directory), and again under it:
    # another command cannot write the output in between.
    prepare_output(args, args.output, say, vectors=True, inputs=(args.input,))
    with output_lock(args.output, purpose="convert"):
        prepare_output(args, args.output, say, vectors=True, inputs=(args.input,))
        t0 = time.perf_counter()
        io.convert(args.input, args.output, format=args.format, src_format=args.input_format, limit=args.limit,
                   unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle)
    say(f"wrote {args.output} ({time.perf_counter() - t0:.1f} s)")
    return 0
