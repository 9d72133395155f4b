"""Do the intrinsic and the extrinsic bias numbers tell the same story?

Intrinsic scores are known to predict extrinsic bias poorly (Goldfarb-Tarrant et al.
2021; Delobelle et al. 2022), so a report that shows both says whether they agree here.
Two readings, both from the paired comparisons of a
:class:`~embdebias.report.Report` (each bias number of each column against the
reference column, on the same words):

* **verdict per column**: among the intrinsic bias numbers, do more improve
  significantly than get worse ("fairer"), the reverse ("less fair"), or neither
  ("no clear change")? The same among the extrinsic ones; the two verdicts agree or not.
* **rank correlation across the embeddings**: each bias number ranks the embeddings by
  their bias (the reference's change is 0, the others' is their paired change of the
  bias magnitude); an embedding's intrinsic rank is its mean rank over the intrinsic
  numbers, likewise extrinsic; Spearman's rho between the two over the embeddings
  (defined for three or more).
"""

from __future__ import annotations

import math

import numpy as np

#: The metrics whose numbers are extrinsic by default (a report passes its own, from the metrics' ``kind``).
EXTRINSIC = ("extrinsic",)


def _verdict(outcomes: list[str]) -> dict:
    improved, worse = outcomes.count("improved"), outcomes.count("worse")
    word = ("not compared" if not outcomes else "fairer" if improved > worse
            else "less fair" if worse > improved else "no clear change")
    return {"verdict": word, "improved": improved, "worse": worse, "n": len(outcomes)}


def _mean_ranks(changes: dict, embeddings: list[str]) -> dict:
    """``{embedding: mean rank}`` over the bias numbers compared in every column (1 = least biased)."""
    from scipy.stats import rankdata

    complete = [per for per in changes.values() if all(e in per for e in embeddings[1:])]
    if not complete:
        return {}
    ranks = np.array([rankdata([0.0] + [per[e] for e in embeddings[1:]]) for per in complete])
    return dict(zip(embeddings, ranks.mean(axis=0).tolist()))


def _kinds(comparisons: list[dict], extrinsic) -> dict:
    usable = [c for c in comparisons if c.get("change") is not None and math.isfinite(c["change"])]
    return {"intrinsic": [c for c in usable if c["metric"] not in extrinsic],
            "extrinsic": [c for c in usable if c["metric"] in extrinsic]}


def _column_verdicts(kinds: dict, embeddings: list[str]) -> dict:
    columns = {}
    for emb in embeddings[1:]:
        per = {k: _verdict([c["outcome"] for c in cs if c["embedding"] == emb]) for k, cs in kinds.items()}
        verdicts = (per["intrinsic"]["verdict"], per["extrinsic"]["verdict"])
        per["agree"] = None if "not compared" in verdicts else verdicts[0] == verdicts[1]
        columns[emb] = per
    return columns


def _rank_correlation(ranks: dict, embeddings: list[str]) -> tuple[float | None, str]:
    """Spearman's rho of the two mean rankings, or None and why not."""
    from scipy.stats import spearmanr

    if len(embeddings) < 3:
        return None, f"needs 3 or more embeddings, there are {len(embeddings)}"
    if any(len(r) != len(embeddings) for r in ranks.values()):
        return None, "no bias number of one kind was compared in every column"
    a, b = ([r[e] for e in embeddings] for r in ranks.values())
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return None, "one ranking is constant"
    return float(spearmanr(a, b).statistic), ""


def agreement(comparisons: list[dict], embeddings: list[str], extrinsic=EXTRINSIC) -> dict | None:
    """Agreement of the intrinsic and the extrinsic verdicts (see the module docstring).

    Returns None unless both kinds of bias number were compared. Otherwise
    ``{"columns": {embedding: {"intrinsic", "extrinsic", "agree"}}, "intrinsic_rank",
    "extrinsic_rank", "rank_correlation", "rank_correlation_note", "n_embeddings",
    "extrinsic_significant", "extrinsic_compared"}``; ``agree`` is None for a column one
    kind was not compared in; ``rank_correlation`` is None (and the note says why) with
    fewer than three embeddings, a constant ranking or a kind missing from a column. The
    ranks come from the point changes, significant or not: ``extrinsic_significant`` of
    ``extrinsic_compared`` extrinsic changes are. ``extrinsic``: the names of the extrinsic metrics.
    """
    kinds = _kinds(comparisons, set(extrinsic))
    if not all(kinds.values()):
        return None
    ranks = {}
    for kind, cs in kinds.items():
        changes: dict = {}
        for c in cs:
            changes.setdefault((c["metric"], c["test"], c["statistic"]), {})[c["embedding"]] = c["change"]
        ranks[kind] = _mean_ranks(changes, embeddings)
    rho, why = _rank_correlation(ranks, embeddings)
    significant = sum(c["outcome"] in ("improved", "worse") for c in kinds["extrinsic"])
    return {"columns": _column_verdicts(kinds, embeddings), "intrinsic_rank": ranks["intrinsic"],
            "extrinsic_rank": ranks["extrinsic"], "rank_correlation": rho, "rank_correlation_note": why,
            "n_embeddings": len(embeddings), "extrinsic_significant": significant,
            "extrinsic_compared": len(kinds["extrinsic"])}


def agreement_text(result: dict | None, reference_note: str = "") -> str:
    """One line for the report; ``reference_note`` is said first (e.g. that the reference
    shows no extrinsic bias beyond the noise)."""
    if result is None:
        return ""

    def side(v):
        return f"{v['verdict']} ({v['improved']} improved, {v['worse']} worse of {v['n']})"

    def verb(agree):
        return "not comparable" if agree is None else "agree" if agree else "disagree"

    parts = [f"{emb}: intrinsic {side(v['intrinsic'])}, extrinsic {side(v['extrinsic'])}: {verb(v['agree'])}"
             for emb, v in result["columns"].items()]
    rho, n = result["rank_correlation"], result["n_embeddings"]
    corr = (f"Spearman rank correlation of the embeddings' mean intrinsic and extrinsic bias ranks: {rho:.2f} "
            f"over {n} embeddings (from the point estimates, although {result['extrinsic_significant']} of "
            f"{result['extrinsic_compared']} extrinsic changes are significant"
            f"{'; with 3 embeddings rho can only be +-0.5 or +-1' if n == 3 else ''})" if rho is not None
            else f"rank correlation not computed: {result['rank_correlation_note']}")
    lead = f"{reference_note} " if reference_note else ""
    return "Intrinsic vs extrinsic: " + lead + "; ".join(parts) + f". {corr}."
