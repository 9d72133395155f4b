"""``embdebias fairness``: extrinsic fairness metrics of a classifier's scores."""

from __future__ import annotations

import json

from ..errors import EmbdebiasError


def add_parser(sub, parents) -> None:
    p = sub.add_parser("fairness", parents=parents, help="extrinsic fairness metrics of a classifier's scores (CSV)",
                       description="Compute fairness metrics of embdebias.fairness's registry on the scores "
                                   "a classifier gave: a CSV file with a header row and one example a row. "
                                   "Columns (names in any case): example id (id, example_id, example), "
                                   "group (group, protected_group, identity), score (score, prob, "
                                   "probability), optionally the counterfactual template (template, "
                                   "template_id; the counterfactual metrics need it) and the gold label "
                                   "(label, gold, y; 0 or 1). Other columns are ignored.")
    p.add_argument("scores", nargs="?", metavar="SCORES.csv", help="the scores file")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="a registry metric (repeat for several); 'list' lists them")
    p.add_argument("--list-metrics", action="store_true", help="the same as '--metric list' (kept for old scripts)")
    p.add_argument("--json", action="store_true", help="JSON instead of text tables")
    p.add_argument("--group-order", nargs="+", metavar="G",
                   help="the groups in this order (default sorted); the first is x in the two-group "
                        "metrics' x - y and x / y")
    p.add_argument("--background-group", metavar="G",
                   help="BCM/VBCM metrics: compare every group with this group's examples (for cf_gap "
                        "and pert_ss, the unperturbed source examples)")
    p.add_argument("--true-class", type=int, choices=[0, 1], default=None,
                   help="the '(TC)' variant: only examples of this gold label, scored by its probability")
    p.add_argument("--threshold", type=float, default=0.5, metavar="T",
                   help="predicted positive means score >= T (default 0.5)")
    for role in ("id", "group", "score", "template", "label"):
        p.add_argument(f"--{role}-col", metavar="NAME", help=f"name of the {role} column")
    p.add_argument("--unicode-errors", choices=["strict", "ignore", "replace"], default="strict",
                   help="undecodable UTF-8: an error naming the line (strict, default), drop the bytes "
                        "(ignore) or put U+FFFD in their place (replace)")
    p.set_defaults(func=run_fairness)


def run_fairness(args, say) -> int:
    from .. import fairness
    from ..fairness.scores_file import audit_dict, audit_text

    names = args.metric or []
    if args.list_metrics or any(n.strip().lower() == "list" for n in names):
        return _list_metrics(args.json)
    specs = _fairness_specs(args, names)
    table = fairness.read_scores_csv(args.scores, id_col=args.id_col, group_col=args.group_col,
                                     score_col=args.score_col, template_col=args.template_col,
                                     label_col=args.label_col, unicode_errors=args.unicode_errors,
                                     metrics=[spec.name for spec in specs])
    options = {"group_order": args.group_order, "threshold": args.threshold, "true_class": args.true_class}
    if args.background_group is not None:
        options["background"] = fairness.background(group=args.background_group)
    results = {spec.name: table.metric(spec.name, **options) for spec in specs}
    report = audit_dict(table, results, true_class=args.true_class)
    print(json.dumps(report, indent=2) if args.json else audit_text(report))
    return 0


def _fairness_specs(args, names: list[str]) -> list:
    """The registry entries of ``--metric`` (each once), checked before the file is read."""
    from ..fairness import get_metric
    from ..fairness.registry import SOURCE

    if not names:
        raise EmbdebiasError("give at least one --metric NAME ('--metric list' shows them)")
    if args.scores is None:
        raise EmbdebiasError("give the scores file: embdebias fairness SCORES.csv --metric NAME")
    specs = list({spec.name: spec for spec in map(get_metric, names)}.values())
    for spec in specs:
        if spec.background == SOURCE and args.background_group is None:
            raise EmbdebiasError(
                f"{spec.name} compares every counterfactual with the unperturbed source example of its "
                "template: give those examples a group of their own and name it with --background-group, "
                f"or use {spec.name}_pcm for templates without a source example")
    return specs


def _list_metrics(as_json: bool) -> int:
    """``embdebias fairness --metric list``: the registry, one metric a line."""
    from ..fairness import METRICS

    if as_json:
        print(json.dumps([{"name": s.name, "title": s.title, "description": s.describe(), "form": s.form,
                           "generalized": s.generalized, "needs_labels": s.needs_labels,
                           "aliases": list(s.aliases)} for _, s in sorted(METRICS.items())], indent=2))
        return 0
    width = max(map(len, METRICS))
    for name in sorted(METRICS):
        spec = METRICS[name]
        needs = [what for what, needed in (("labels", spec.needs_labels),
                                           ("templates", spec.form == "counterfactual")) if needed]
        print(f"{name:<{width}}  {spec.describe()}" + (f" [needs {' and '.join(needs)}]" if needs else ""))
    return 0
