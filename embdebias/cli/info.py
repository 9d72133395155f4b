"""``embdebias info``: format, size, dimension and norms of a vector file."""

from __future__ import annotations

import json

from ._common import DEFAULT, input_opts


def add_parser(sub, parents) -> None:
    p = sub.add_parser("info", parents=parents, help="format, size, dimension and norms of a vector file",
                       description="Print a vector file's detected format, word count, dimension, dtype, "
                                   "whether it is memory-mapped, and the smallest, mean and largest vector "
                                   "norm (and how many vectors are zero).")
    p.add_argument("input", nargs="?", default=DEFAULT, metavar="INPUT",
                   help=f"vector file or '{DEFAULT}' (default)")
    p.add_argument("--json", action="store_true", help="one JSON object instead of aligned text")
    input_opts(p)
    p.set_defaults(func=run_info)


def run_info(args, say) -> int:
    from .. import io

    desc = io.describe(args.input, format=args.input_format, limit=args.limit,
                       unicode_errors=args.unicode_errors, trust_pickle=args.trust_pickle)
    if args.json:
        print(json.dumps(desc, indent=2, default=str))
    else:
        width = max(map(len, desc))
        for k, v in desc.items():
            if isinstance(v, float):
                v = f"{v:.6g}"
            print(f"{k:<{width}}  {v}")
    return 0
