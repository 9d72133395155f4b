"""``embdebias report DIR`` and ``embdebias card DIR``: a run's report as one HTML file, and its bias card.

Both read the run's ``report.json`` (:mod:`embdebias.report.card`); neither reruns anything.
"""

from __future__ import annotations


def add_parser(sub, parents) -> None:
    p = sub.add_parser("report", parents=parents, help="a run's report again, or as one self-contained HTML file",
                       description="Print the Markdown report of the run in DIR, rendered again from its "
                                   "report.json; with --html, write DIR/report.html instead (one file, the "
                                   "figures embedded, that opens offline) and print its path.")
    p.add_argument("run_dir", metavar="DIR", help="the --out-dir of an 'embdebias run'")
    p.add_argument("--html", action="store_true", help="write DIR/report.html")
    p.set_defaults(func=run_report)
    c = sub.add_parser("card", parents=parents, help="the bias card of a run (Markdown for a model card)",
                       description="Print the bias card of the run in DIR as Markdown (to paste into a model "
                                   "card): the embedding and its fingerprint, the attribute, word lists, methods, "
                                   "the headline numbers with intervals, the verdict, the quality kept, the "
                                   "toolkit version and the command; --json prints report.card.json's form, "
                                   "--write writes both files into DIR.")
    c.add_argument("run_dir", metavar="DIR", help="the --out-dir of an 'embdebias run'")
    c.add_argument("--json", action="store_true", help="the card as JSON (docs/_static/bias-card.schema.json)")
    c.add_argument("--write", action="store_true", help="also write DIR/report.card.json and report.card.md")
    c.set_defaults(func=run_card)


def run_report(args, say) -> int:
    from ..report.html import write_html
    from ..report.rundir import read_run, render_run_markdown

    meta = read_run(args.run_dir)
    if args.html:
        print(write_html(args.run_dir, meta))
    else:
        print(render_run_markdown(args.run_dir, meta), end="")
    return 0


def run_card(args, say) -> int:
    import json

    from ..report.card import card_dict, card_markdown, read_run, run_command, write_card

    meta = read_run(args.run_dir)
    card = write_card(args.run_dir, meta) if args.write else card_dict(meta, run_command(args.run_dir, meta))
    if args.json:
        print(json.dumps(card, indent=2, ensure_ascii=False))
    else:
        print(card_markdown(card), end="")
    return 0
