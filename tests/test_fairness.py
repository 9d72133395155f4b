"""Generalized extrinsic fairness metrics (Czarnowska et al. 2021) against hand computations.

Every expected number below is written out by hand, with its arithmetic in a comment.
"""

import json
import math

import numpy as np
import pytest

from embdebias import fairness as F
from embdebias.errors import EmbdebiasError, FairnessInputError

# -- a group-form toy: three groups, two examples each ------------------------------------
# means: a = (0.9 + 0.7) / 2 = 0.8, b = (0.4 + 0.2) / 2 = 0.3, c = (0.6 + 0.5) / 2 = 0.55
# all examples: 3.3 / 6 = 0.55
S3 = [0.9, 0.7, 0.4, 0.2, 0.6, 0.5]
G3 = ["a", "a", "b", "b", "c", "c"]

# -- a counterfactual toy: two templates, groups f and m, several variations -------------
# t1: f {0.8, 0.6} (mean 0.7), m {0.5};   t2: f {0.3}, m {0.2, 0.6} (mean 0.4)
SC = [0.8, 0.6, 0.5, 0.3, 0.2, 0.6]
GC = ["f", "f", "m", "f", "m", "m"]
TC = ["t1", "t1", "t1", "t2", "t2", "t2"]

# -- a labelled toy for the prediction-based metrics (threshold 0.5) ----------------------
# a: scores .9 .8 .3 .6,   gold 1 1 1 0 -> pred 1 1 0 1: TP 2 FN 1 FP 1 TN 0
#    TPR 2/3  FNR 1/3  FPR 1  TNR 0  accuracy 2/4  F1 = 4 / (4 + 1 + 1) = 2/3
# b: scores .7 .2 .1 .4,   gold 1 1 0 0 -> pred 1 0 0 0: TP 1 FN 1 FP 0 TN 2
#    TPR 1/2  FNR 1/2  FPR 0  TNR 1  accuracy 3/4  F1 = 2 / (2 + 0 + 1) = 2/3
# c: scores .55 .45 .65 .75, gold 1 0 0 0 -> pred 1 0 1 1: TP 1 FN 0 FP 2 TN 1
#    TPR 1  FNR 0  FPR 2/3  TNR 1/3  accuracy 2/4  F1 = 2 / (2 + 2 + 0) = 1/2
# all: TP 4 FN 2 FP 3 TN 3 -> FPR 3/6 = 1/2, FNR 2/6 = 1/3
SP = [0.9, 0.8, 0.3, 0.6, 0.7, 0.2, 0.1, 0.4, 0.55, 0.45, 0.65, 0.75]
YP = [1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0]
GP = ["a"] * 4 + ["b"] * 4 + ["c"] * 4


def _pick(groups_kept, scores=SP, groups=GP, labels=YP):
    keep = [i for i, g in enumerate(groups) if g in groups_kept]
    return [scores[i] for i in keep], [groups[i] for i in keep], [labels[i] for i in keep]


# == PCM ==================================================================================
def test_pcm_group_form_by_hand():
    r = F.pcm(S3, G3)
    # |0.8 - 0.3| = 0.5, |0.8 - 0.55| = 0.25, |0.3 - 0.55| = 0.25; sum 1.0 / C(3, 2) = 3
    assert r.value == pytest.approx(1 / 3)
    assert r.parts == pytest.approx({("a", "b"): 0.5, ("a", "c"): 0.25, ("b", "c"): 0.25})
    assert r.normalizer == 3.0
    assert r.group_scores == pytest.approx({"a": 0.8, "b": 0.3, "c": 0.55})
    assert r.form == "group" and r.per_template == {}
    assert float(r) == r.value


def test_pcm_normalizer_and_signed_order():
    assert F.pcm(S3, G3, normalizer="one").value == pytest.approx(1.0)  # the plain sum of the pairs
    assert F.pcm(S3, G3, normalizer=4).value == pytest.approx(0.25)     # 1.0 / 4
    r = F.pcm(S3, G3, d="difference", group_order=["c", "b", "a"])
    # (c, b): 0.55 - 0.3 = 0.25; (c, a): 0.55 - 0.8 = -0.25; (b, a): 0.3 - 0.8 = -0.5
    # sum -0.5 / 3
    assert r.value == pytest.approx(-0.5 / 3)
    assert r.parts[("b", "a")] == pytest.approx(-0.5)


def test_pcm_counterfactual_differs_from_group_form():
    r = F.pcm(SC, GC, templates=TC)
    # t1: |0.7 - 0.5| = 0.2; t2: |0.3 - 0.4| = 0.1; mean over templates 0.15, N = C(2, 2) = 1
    assert r.value == pytest.approx(0.15)
    assert r.per_template == pytest.approx({"t1": 0.2, "t2": 0.1})
    assert r.form == "counterfactual"
    # ignoring the templates: f = (0.8 + 0.6 + 0.3) / 3, m = (0.5 + 0.2 + 0.6) / 3
    assert F.pcm(SC, GC).value == pytest.approx(abs(1.7 / 3 - 1.3 / 3))


def test_pcm_wasserstein_defaults_to_score_sets():
    r = F.pcm(SC, GC, templates=TC, d="wasserstein")
    # t1: W1({0.8, 0.6}, {0.5}) = (0.3 + 0.1) / 2 = 0.2
    # t2: W1({0.3}, {0.2, 0.6}) = (0.1 + 0.3) / 2 = 0.2   -> mean 0.2
    assert r.phi == "scores"
    assert r.value == pytest.approx(0.2)
    assert r.group_scores == {}  # a set-valued phi has no scalar group score


def test_set_comparisons_of_all_templates_at_once_match_scipy():
    from scipy.stats import wasserstein_distance

    rng = np.random.default_rng(7)
    n_t = 6  # f has two variations and m three in every template, so the batch path runs
    scores = np.round(rng.random(5 * n_t), 1)  # rounded so that there are ties
    groups = np.tile(["f", "f", "m", "m", "m"], n_t)
    templates = np.repeat(np.arange(n_t), 5)
    w1 = np.mean([wasserstein_distance(scores[5 * j:5 * j + 2], scores[5 * j + 2:5 * j + 5]) for j in range(n_t)])
    assert F.pcm(scores, groups, templates=templates, d="wasserstein").value == pytest.approx(w1)

    def greater(x, y):  # P(x > y) + P(x = y) / 2 by enumerating the pairs
        return np.mean([(a > b) + 0.5 * (a == b) for a in x for b in y])

    auc = np.mean([greater(scores[5 * j:5 * j + 2], scores[5 * j + 2:5 * j + 5]) for j in range(n_t)])
    assert F.pcm(scores, groups, templates=templates, d="auc_x_positive").value == pytest.approx(auc)
    assert F.pcm(scores, groups, templates=templates, d="average_equality_gap").value == pytest.approx(0.5 - auc)


# == BCM / VBCM ===========================================================================
def test_bcm_all_background_by_hand():
    r = F.bcm(S3, G3)
    # background mean 0.55: |0.55 - 0.8| = 0.25, |0.55 - 0.3| = 0.25, 0; 0.5 / |T| = 3
    assert r.value == pytest.approx(0.5 / 3)
    assert r.parts == pytest.approx({"a": 0.25, "b": 0.25, "c": 0.0})
    assert r.background_scores == pytest.approx({"a": 0.55, "b": 0.55, "c": 0.55})
    assert r.normalizer == 3.0


def test_bcm_privileged_group_narrows_T():
    r = F.bcm(S3, G3, background=F.background(group="c"))
    # |0.55 - 0.8| + |0.55 - 0.3| = 0.5 over the two compared groups
    assert r.value == pytest.approx(0.25)
    assert set(r.parts) == {"a", "b"} and r.normalizer == 2.0


def test_vbcm_rest_background_by_hand():
    r = F.vbcm(S3, G3, background="rest")
    # a: rest (0.4 + 0.2 + 0.6 + 0.5) / 4 = 0.425 -> |0.425 - 0.8| = 0.375
    # b: rest (0.9 + 0.7 + 0.6 + 0.5) / 4 = 0.675 -> |0.675 - 0.3| = 0.375
    # c: rest (0.9 + 0.7 + 0.4 + 0.2) / 4 = 0.55  -> 0
    assert dict(r) == pytest.approx({"a": 0.375, "b": 0.375, "c": 0.0})
    assert r["a"] == pytest.approx(0.375) and len(r) == 3
    assert r.background_scores == pytest.approx({"a": 0.425, "b": 0.675, "c": 0.55})


def test_bcm_counterfactual_by_hand():
    r = F.bcm(SC, GC, templates=TC)
    # t1: all (0.8 + 0.6 + 0.5) / 3 = 1.9/3; |1.9/3 - 0.7| = 0.2/3, |1.9/3 - 0.5| = 0.4/3
    # t2: all (0.3 + 0.2 + 0.6) / 3 = 1.1/3; |1.1/3 - 0.3| = 0.2/3, |1.1/3 - 0.4| = 0.1/3
    # per template (sum / N = 2): t1 0.6/3/2 = 0.1, t2 0.3/3/2 = 0.05; mean 0.075
    assert r.value == pytest.approx(0.075)
    assert r.per_template == pytest.approx({"t1": 0.1, "t2": 0.05})
    assert r.parts == pytest.approx({"f": 0.2 / 3, "m": 0.25 / 3})  # (0.2+0.2)/3/2, (0.4+0.1)/3/2


def test_vbcm_is_bcm_before_aggregation():
    v = F.vbcm(SC, GC, templates=TC, d="difference")
    b = F.bcm(SC, GC, templates=TC, d="difference")
    assert sum(v.values()) / 2 == pytest.approx(b.value)
    # f: ((1.9/3 - 0.7) + (1.1/3 - 0.3)) / 2 = 0; m: ((1.9/3 - 0.5) + (1.1/3 - 0.4)) / 2 = 0.05
    assert dict(v) == pytest.approx({"f": 0.0, "m": 0.05}, abs=1e-12)


def test_additive_background_matches_set_by_set_computation():
    def tpr_by_hand(scores, labels):
        pos = labels == 1
        return float(np.mean(scores[pos] >= 0.5))

    for bg in ("all", "rest", F.background(group="b")):
        fast = F.vbcm(SP, GP, labels=YP, phi="tpr", background=bg)
        slow = F.vbcm(SP, GP, labels=YP, phi=tpr_by_hand, background=bg)
        assert dict(fast) == pytest.approx(dict(slow))
    # a: |TPR(all) - TPR(a)| = |4/6 - 2/3| = 0; c: |4/6 - 1| = 1/3
    assert F.vbcm(SP, GP, labels=YP, phi="tpr")["c"] == pytest.approx(1 / 3)


# == MCM ==================================================================================
def test_mcm_group_form_by_hand():
    assert F.mcm(S3, G3).value == pytest.approx(0.5)  # range: 0.8 - 0.3
    # std of (0.8, 0.3, 0.55): deviations 0.25, -0.25, 0 -> var 0.125 / 3
    assert F.mcm(S3, G3, d="std").value == pytest.approx(math.sqrt(0.125 / 3))
    assert F.mcm(S3, G3, d="variance").value == pytest.approx(0.125 / 3)


def test_mcm_counterfactual_by_hand():
    r = F.mcm(SC, GC, templates=TC, d="std")
    # two groups: std = |x - y| / 2; t1 0.2 / 2 = 0.1, t2 0.1 / 2 = 0.05 -> 0.075
    assert r.value == pytest.approx(0.075)
    assert r.per_template == pytest.approx({"t1": 0.1, "t2": 0.05})


def test_callables_for_phi_and_d():
    def median(scores, labels):
        return float(np.median(scores))

    def spread(values):
        return float(np.max(values) - np.min(values))

    # medians equal the means here (two examples per group): range 0.8 - 0.3
    assert F.mcm(S3, G3, phi=median, d=spread).value == pytest.approx(0.5)
    r = F.pcm(S3, G3, d=lambda x, y: (x - y) ** 2)
    # (0.5^2 + 0.25^2 + 0.25^2) / 3 = 0.375 / 3
    assert r.value == pytest.approx(0.125)


def test_prediction_scores_threshold():
    # positive rate with threshold 0.5 on S3: a 2/2, b 0/2, c 2/2 -> range 1
    assert F.mcm(S3, G3, phi="positive_rate").value == pytest.approx(1.0)
    # threshold 0.65: a 2/2 (0.9, 0.7), b 0, c 0 -> range 1, BCM all: overall 2/6
    r = F.bcm(S3, G3, phi="positive_rate", threshold=0.65)
    # |1/3 - 1| + |1/3 - 0| + |1/3 - 0| = 4/3, / 3
    assert r.value == pytest.approx(4 / 9)


def test_auc_phi():
    # a: positives {.9, .8, .3} vs negative {.6}: 2 of 3 pairs ordered -> 2/3
    # b: positives {.7, .2} vs negatives {.1, .4}: .7 > both, .2 > .1 -> 3/4
    # c: positive {.55} vs {.45, .65, .75}: 1/3
    r = F.mcm(SP, GP, labels=YP, phi="auc")
    assert r.group_scores == pytest.approx({"a": 2 / 3, "b": 3 / 4, "c": 1 / 3})
    assert r.value == pytest.approx(3 / 4 - 1 / 3)


# == registry: each metric on a hand-computed example ====================================
# Two-source counterfactual data: groups orig (the unperturbed sentence), f, m, n.
# t1: orig 0.5, f 0.7, m 0.4, n 0.1;   t2: orig 0.6, f 0.6, m 0.2, n 0.2
CF_S = [0.5, 0.7, 0.4, 0.1, 0.6, 0.6, 0.2, 0.2]
CF_G = ["orig", "f", "m", "n", "orig", "f", "m", "n"]
CF_T = [1, 1, 1, 1, 2, 2, 2, 2]
CF_Y = [1, 1, 1, 1, 0, 0, 0, 0]  # one gold label per template


def _cf(groups_kept):
    keep = [i for i, g in enumerate(CF_G) if g in groups_kept]
    return ([CF_S[i] for i in keep], [CF_G[i] for i in keep],
            dict(templates=[CF_T[i] for i in keep], labels=[CF_Y[i] for i in keep]))


def _metric(name, scores, groups, **kw):
    r = F.fairness_metric(name, scores, groups, **kw)
    return r.value if isinstance(r, F.FairnessResult) else dict(r)


SOURCE = F.background(group="orig")

REGISTRY_CASES = {
    # FPED = sum |FPR(all) - FPR(t)| = |1/2 - 1| + |1/2 - 0| + |1/2 - 2/3| = 7/6 (N = 1)
    "fped": (lambda: _metric("fped", SP, GP, labels=YP), 7 / 6),
    "fped_normalized": (lambda: _metric("fped_normalized", SP, GP, labels=YP), 7 / 18),  # / 3
    # FNED = |1/3 - 1/3| + |1/3 - 1/2| + |1/3 - 0| = 1/2
    "fned": (lambda: _metric("fned", SP, GP, labels=YP), 1 / 2),
    "fned_normalized": (lambda: _metric("fned_normalized", SP, GP, labels=YP), 1 / 6),
    # AvgGF on x {.2, .4}, y {.6, .8}: W1(all, x) = .25*.2 + .5*.2 + .25*.2 = .2 = W1(all, y)
    "avg_group_fairness": (lambda: _metric("avg_group_fairness", [.2, .4, .6, .8], list("xxyy")), 0.2),
    # FPR ratio = FPR(t) / FPR(rest): a 1 / (2/5) = 2.5; b 0 / (3/4) = 0; c (2/3) / (1/3) = 2
    "fpr_ratio": (lambda: _metric("fpr_ratio", SP, GP, labels=YP), {"a": 2.5, "b": 0.0, "c": 2.0}),
    # PosAvgEG = 1/2 - P(rest > group) over gold positives
    # a: rest {.7,.2,.55} vs {.9,.8,.3}: 2 of 9 pairs rest higher -> 1/2 - 2/9 = 5/18
    # b: rest {.9,.8,.3,.55} vs {.7,.2}: 6 of 8 -> -1/4;  c: {.9,.8,.3,.7,.2} vs {.55}: 3/5 -> -1/10
    "pos_avg_eg": (lambda: _metric("pos_avg_eg", SP, GP, labels=YP), {"a": 5 / 18, "b": -0.25, "c": -0.1}),
    # NegAvgEG over gold negatives: a: {.1,.4,.45,.65,.75} vs {.6}: 2/5 -> 1/10
    # b: {.6,.45,.65,.75} vs {.1,.4}: 8/8 -> -1/2;  c: {.6,.1,.4} vs {.45,.65,.75}: 1/9 -> 7/18
    "neg_avg_eg": (lambda: _metric("neg_avg_eg", SP, GP, labels=YP), {"a": 0.1, "b": -0.5, "c": 7 / 18}),
    # Disparity Score on a, c: |F1(a) - F1(c)| = |2/3 - 1/2| = 1/6, N = |T| = 2 -> 1/12
    "disparity_score": (lambda: _metric("disparity_score", *_pick("ac")[:2], labels=_pick("ac")[2]), 1 / 12),
    "disparity_score_normalized": (
        lambda: _metric("disparity_score_normalized", *_pick("ac")[:2], labels=_pick("ac")[2]), 1 / 6),  # N = 1
    # TPR gap: |2/3 - 1/2| + |2/3 - 1| + |1/2 - 1| = 1/6 + 1/3 + 1/2 = 1, / 3 pairs
    "tpr_gap": (lambda: _metric("tpr_gap", SP, GP, labels=YP), 1 / 3),
    # TNR gap: |0 - 1| + |0 - 1/3| + |1 - 1/3| = 2, / 3
    "tnr_gap": (lambda: _metric("tnr_gap", SP, GP, labels=YP), 2 / 3),
    # Parity gap (accuracy): |1/2 - 3/4| + |1/2 - 1/2| + |3/4 - 1/2| = 1/2, / 3
    "parity_gap": (lambda: _metric("parity_gap", SP, GP, labels=YP), 1 / 6),
    # two-group metrics, first group minus second
    "accuracy_difference": (
        lambda: _metric("accuracy_difference", *_pick("ab")[:2], labels=_pick("ab")[2]), 0.5 - 0.75),
    "tpr_difference": (lambda: _metric("tpr_difference", *_pick("ab")[:2], labels=_pick("ab")[2]), 2 / 3 - 1 / 2),
    "f1_difference": (lambda: _metric("f1_difference", *_pick("ac")[:2], labels=_pick("ac")[2]), 2 / 3 - 1 / 2),
    "recall_difference": (lambda: _metric("recall_difference", *_pick("ac")[:2], labels=_pick("ac")[2]), 2 / 3 - 1),
    "f1_ratio": (lambda: _metric("f1_ratio", *_pick("ac")[:2], labels=_pick("ac")[2]), (2 / 3) / (1 / 2)),
    # BPSN AUC = P(background positive > group negative)
    # a: {.7,.2,.55} vs {.6}: 1/3;  b: {.9,.8,.3,.55} vs {.1,.4}: 7/8
    # c: {.9,.8,.3,.7,.2} vs {.45,.65,.75}: 3 + 3 + 0 + 2 + 0 = 8 of 15
    "bpsn_auc": (lambda: _metric("bpsn_auc", SP, GP, labels=YP), {"a": 1 / 3, "b": 7 / 8, "c": 8 / 15}),
    # BNSP AUC = P(group positive > background negative)
    # a: {.9,.8,.3} vs {.1,.4,.45,.65,.75}: 5 + 5 + 1 = 11 of 15;  b: {.7,.2} vs {.6,.45,.65,.75}: 3/8
    # c: {.55} vs {.6,.1,.4}: 2/3
    "bnsp_auc": (lambda: _metric("bnsp_auc", SP, GP, labels=YP), {"a": 11 / 15, "b": 3 / 8, "c": 2 / 3}),
    # CF gap vs the source: t1 (|.5-.7| + |.5-.4| + |.5-.1|) / 3 = .7/3; t2 (0 + .4 + .4) / 3 = .8/3
    # mean over templates: 1.5 / 3 / 2 = 0.25
    "cf_gap": (lambda: _metric("cf_gap", CF_S, CF_G, templates=CF_T, background=SOURCE), 0.25),
    # as a PCM over f, m: t1 |.7 - .4| = .3, t2 |.6 - .2| = .4 -> .35
    "cf_gap_pcm": (lambda: _metric("cf_gap_pcm", *_cf("fm")[:2], templates=_cf("fm")[2]["templates"]), 0.35),
    # PertSS per group, mean over templates of |source - variant|:
    # f (.2 + 0) / 2 = .1; m (.1 + .4) / 2 = .25; n (.4 + .4) / 2 = .4
    "pert_ss": (lambda: _metric("pert_ss", CF_S, CF_G, templates=CF_T, background=SOURCE),
                {"f": 0.1, "m": 0.25, "n": 0.4}),
    "pert_ss_pcm": (lambda: _metric("pert_ss_pcm", *_cf("fm")[:2], templates=_cf("fm")[2]["templates"]), 0.35),
    # PertSD over f, m, n: t1 (.7, .4, .1) var .06; t2 (.6, .2, .2) mean 1/3, var (.64 + .16 + .16)/9/3 = .32/9
    "pert_sd": (lambda: _metric("pert_sd", *_cf("fmn")[:2], templates=_cf("fmn")[2]["templates"]),
                (math.sqrt(0.06) + math.sqrt(0.32 / 9)) / 2),
    # PertSR: t1 .7 - .1 = .6, t2 .6 - .2 = .4 -> .5
    "pert_sr": (lambda: _metric("pert_sr", *_cf("fmn")[:2], templates=_cf("fmn")[2]["templates"]), 0.5),
    # AvgIF on the multi-variation toy: W1 0.2 in both templates (see the PCM test), N = 1
    "avg_individual_fairness": (lambda: _metric("avg_individual_fairness", SC, GC, templates=TC), 0.2),
    # Average score difference f - m: t1 0.7 - 0.5 = 0.2, t2 0.3 - 0.4 = -0.1 -> 0.05
    "average_score_difference": (lambda: _metric("average_score_difference", SC, GC, templates=TC), 0.05),
}


def test_every_registry_metric_has_a_hand_computed_case():
    assert set(REGISTRY_CASES) == set(F.available_metrics())


@pytest.mark.parametrize("name", sorted(REGISTRY_CASES))
def test_registry_metric_by_hand(name):
    compute, expected = REGISTRY_CASES[name]
    got = compute()
    if isinstance(expected, dict):
        assert got == pytest.approx(expected)
    else:
        assert got == pytest.approx(expected)


def test_registry_documents_each_metric():
    required = {"pert_ss", "pert_sd", "pert_sr", "cf_gap", "avg_group_fairness", "fped", "fned",
                "tpr_difference", "disparity_score", "avg_individual_fairness", "bpsn_auc", "bnsp_auc"}
    assert required <= set(F.available_metrics())
    for name in F.available_metrics():
        spec = F.get_metric(name)
        assert spec.reference and spec.generalized in {"PCM", "BCM", "VBCM", "MCM"}
        assert F.phi(spec.phi).name and F.distance(spec.d).name  # resolvable
        assert spec.title in spec.describe()
    assert F.get_metric("bpsn_auc").phi_background == "positive_scores"
    assert F.get_metric("pert_ss").generalized == "VBCM"
    assert F.get_metric("fped").normalizer == "one" and F.get_metric("fped_normalized").normalizer == "groups"


def test_registry_names_are_case_insensitive_with_aliases():
    s, g, kw = _cf("fmn")
    assert F.fairness_metric("PertSR", s, g, templates=kw["templates"]).value == pytest.approx(0.5)
    assert F.fairness_metric("Perturbation-Score-Range", s, g, templates=kw["templates"]).metric == "pert_sr"
    assert F.fairness_metric("FPED", SP, GP, labels=YP).value == pytest.approx(7 / 6)


def test_two_group_metric_sign_follows_group_order():
    s, g, y = _pick("ac")
    forward = F.fairness_metric("f1_ratio", s, g, labels=y).value          # (2/3) / (1/2)
    backward = F.fairness_metric("f1_ratio", s, g, labels=y, group_order=["c", "a"]).value  # (1/2) / (2/3)
    assert forward == pytest.approx(4 / 3) and backward == pytest.approx(3 / 4)


def test_true_class_variants():
    # AvgGF(TC) on x {.2 (gold 0), .4 (gold 1)}, y {.6 (gold 1), .8 (gold 0)}
    s, g, y = [.2, .4, .6, .8], list("xxyy"), [0, 1, 1, 0]
    # class 1: x {.4}, y {.6}, all {.4, .6}: W1 = .5 * .2 = .1 for each group
    assert F.fairness_metric("avg_group_fairness", s, g, labels=y, true_class=1).value == pytest.approx(0.1)
    # class 0 uses 1 - score: x {.8}, y {.2}, all {.8, .2}: W1 = .5 * .6 = .3
    assert F.fairness_metric("avg_group_fairness", s, g, labels=y, true_class=0).value == pytest.approx(0.3)
    cs, cg, kw = _cf("fm")
    # class 1 keeps template 1 only: |.7 - .4| = .3; class 0 keeps template 2: |(1-.6) - (1-.2)| = .4
    assert F.fairness_metric("cf_gap_pcm", cs, cg, true_class=1, **kw).value == pytest.approx(0.3)
    assert F.fairness_metric("cf_gap_pcm", cs, cg, true_class=0, **kw).value == pytest.approx(0.4)


def test_group_metric_ignores_templates():
    with_t = F.fairness_metric("tpr_gap", SP, GP, labels=YP, templates=[1, 2] * 6)
    assert with_t.value == pytest.approx(1 / 3) and with_t.form == "group"


def test_results_serialize_to_json():
    r = F.fairness_metric("tpr_gap", SP, GP, labels=YP)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["metric"] == "tpr_gap" and d["parts"][0] == {"groups": ["a", "b"], "value": pytest.approx(1 / 6)}
    v = json.loads(json.dumps(F.fairness_metric("fpr_ratio", SP, GP, labels=YP).to_dict()))
    assert v["per_group"][0] == {"group": "a", "value": pytest.approx(2.5)}
    c = F.pcm(SC, GC, templates=TC).to_dict()
    assert c["per_template"] == [{"template": "t1", "value": pytest.approx(0.2)},
                                 {"template": "t2", "value": pytest.approx(0.1)}]


# == normalizer, background and name resolution ==========================================
def test_normalizer_defaults():
    assert F.normalizer(None, n_groups=4, kind="pcm") == 6.0   # C(4, 2)
    assert F.normalizer(None, n_groups=4, kind="bcm") == 4.0   # |T|
    assert F.normalizer("one", n_groups=4, kind="pcm") == 1.0
    assert F.normalizer("groups", n_groups=4, kind="pcm") == 4.0
    for bad in ("half", 0, -1, float("nan"), True):
        with pytest.raises(FairnessInputError):
            F.normalizer(bad, n_groups=4, kind="pcm")


def test_background_resolution():
    assert F.background() == F.Background("all")
    assert F.background("complement") == F.Background("rest")
    assert F.background(group="m") == F.Background("group", "m")
    with pytest.raises(FairnessInputError, match="unknown background"):
        F.background("privileged")


@pytest.mark.parametrize("resolver,kind", [(F.phi, "scoring function"), (F.distance, "comparison function")])
def test_unknown_function_names_list_the_known(resolver, kind):
    with pytest.raises(FairnessInputError, match=kind) as info:
        resolver("median_gap")
    assert "absolute_difference" in str(info.value) or "tpr" in str(info.value)


def test_required_function_names_resolve():
    for name in ("mean", "tpr", "fpr", "fnr", "tnr", "accuracy", "positive_rate", "auc", "recall"):
        assert name in F.available_scoring_functions()
        F.phi(name)
    for name in ("difference", "absolute_difference", "wasserstein", "range", "std", "variance"):
        assert F.distance(name).name == name
    assert F.phi("TPR").name == "tpr" and F.distance("W1").name == "wasserstein"


# == errors ===============================================================================
def test_errors_are_project_errors():
    assert issubclass(FairnessInputError, EmbdebiasError) and issubclass(FairnessInputError, ValueError)


def test_mismatched_lengths():
    with pytest.raises(FairnessInputError, match="scores has 6, groups has 5"):
        F.pcm(S3, G3[:5])
    with pytest.raises(FairnessInputError, match="labels has 3"):
        F.pcm(S3, G3, labels=[1, 0, 1])


def test_nan_and_non_numeric_scores():
    with pytest.raises(FairnessInputError, match="NaN.*position 2"):
        F.pcm([0.1, 0.2, float("nan"), 0.3], ["a", "a", "b", "b"])
    with pytest.raises(FairnessInputError, match="real numbers"):
        F.pcm(["x", "y"], ["a", "b"])
    with pytest.raises(FairnessInputError, match="binary"):
        F.pcm(S3, G3, labels=[0, 1, 2, 0, 1, 0])


def test_group_with_no_examples():
    with pytest.raises(FairnessInputError, match="group 'd' has no examples"):
        F.pcm(S3, G3, group_order=["a", "b", "c", "d"])
    with pytest.raises(FairnessInputError, match="background group 'x' has no examples"):
        F.bcm(S3, G3, background=F.background(group="x"))
    # counterfactual: group m has no variation of template t2
    with pytest.raises(FairnessInputError, match="group 'm' in template 't2'"):
        F.pcm([0.1, 0.2, 0.3], ["f", "m", "f"], templates=["t1", "t1", "t2"])
    # the TC filter can empty a group: every example of y has gold label 1
    with pytest.raises(FairnessInputError, match="group 'y' has no examples"):
        F.fairness_metric("avg_group_fairness", [.2, .4, .6, .8], list("xxyy"), labels=[0, 1, 1, 1], true_class=0)


def test_fewer_than_two_groups():
    with pytest.raises(FairnessInputError, match="at least two groups"):
        F.pcm([0.1, 0.2], ["a", "a"])
    with pytest.raises(FairnessInputError, match="no examples"):
        F.pcm([], [])


def test_metric_needing_labels():
    with pytest.raises(FairnessInputError, match="fped needs gold labels"):
        F.fairness_metric("fped", SP, GP)
    with pytest.raises(FairnessInputError, match="'tpr' needs gold labels"):
        F.pcm(SP, GP, phi="tpr")


def test_counterfactual_metric_without_templates():
    with pytest.raises(FairnessInputError, match="pert_sd is a counterfactual metric: pass templates"):
        F.fairness_metric("pert_sd", SC, GC)


def test_source_background_required_for_cf_gap():
    with pytest.raises(FairnessInputError, match=r"background\(group="):
        F.fairness_metric("cf_gap", CF_S, CF_G, templates=CF_T)


def test_two_group_metric_refuses_three_groups():
    with pytest.raises(FairnessInputError, match="exactly two groups"):
        F.fairness_metric("tpr_difference", SP, GP, labels=YP)


def test_undefined_scores_name_the_group():
    # group b of this data has no gold positives, so its TPR is undefined
    with pytest.raises(FairnessInputError, match="tpr is undefined for group 'b'"):
        F.pcm([0.9, 0.2, 0.7, 0.1], ["a", "a", "b", "b"], labels=[1, 0, 0, 0], phi="tpr")
    with pytest.raises(FairnessInputError, match="group 'b'.*auc is undefined"):
        F.pcm([0.9, 0.2, 0.7, 0.1], ["a", "a", "b", "b"], labels=[1, 0, 0, 0], phi="auc")
    # FPR ratio divides by the background's FPR, which is 0 for a and b here
    with pytest.raises(FairnessInputError, match="denominator score is 0"):
        F.fairness_metric("fpr_ratio", [0.9, 0.1, 0.2, 0.1], ["a", "a", "b", "b"], labels=[1, 0, 0, 0])


def test_phi_and_d_that_do_not_fit():
    with pytest.raises(FairnessInputError, match="needs a set-valued scoring function"):
        F.pcm(S3, G3, phi="mean", d="wasserstein")
    with pytest.raises(FairnessInputError, match="cannot compare"):
        F.pcm(S3, G3, phi="scores", d="absolute_difference")
    with pytest.raises(FairnessInputError, match="use it with mcm"):
        F.pcm(S3, G3, d="range")
    with pytest.raises(FairnessInputError, match="multi-group comparison"):
        F.mcm(S3, G3, d="absolute_difference")


def test_unknown_metric_and_bad_options():
    with pytest.raises(FairnessInputError, match="unknown fairness metric 'wat'.*fped"):
        F.fairness_metric("wat", S3, G3)
    with pytest.raises(FairnessInputError, match="true_class applies only to"):
        F.fairness_metric("tpr_gap", SP, GP, labels=YP, true_class=1)
    with pytest.raises(FairnessInputError, match="has no background"):
        F.fairness_metric("tpr_gap", SP, GP, labels=YP, background="rest")
