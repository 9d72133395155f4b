"""The extrinsic probe: templates, the sentiment probe, the grid statistics and the report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError, WordListError
from embdebias.metrics.agreement import agreement, agreement_text
from embdebias.metrics.extrinsic import (
    FamilyScores,
    extrinsic_bias,
    fit_probe,
    grid_keys,
    grid_statistics,
    library_statistics,
    score_family,
)
from embdebias.metrics.extrinsic.probe import SentimentProbe
from embdebias.metrics.extrinsic.templates import TemplateUnit, load_templates, tokenize
from embdebias.metrics.rnsb import sentiment_lexicon

# -- templates ------------------------------------------------------------------------------


def test_bundled_templates_meet_the_issue():
    ts = load_templates()
    assert set(ts.groups) == {"female", "male"}
    assert all(len(terms) >= 20 for terms in ts.groups.values())
    names = [t for terms in ts.groups.values() for t in terms if t[0].isupper()]
    assert len(names) >= 20  # first names as well as nouns
    emotion, occupation = ts.family("emotion"), ts.family("occupation")
    assert len(emotion.templates) >= 10 and emotion.labelled
    assert not occupation.labelled and len(occupation.units) >= 40 * 5
    labels = [u.label for u in emotion.units]
    assert labels.count(1) == labels.count(0)  # balanced fillers
    unit = emotion.units[0]
    assert unit.sentence("my mother") == "my mother feels happy."
    assert len({u.key for u in emotion.units}) == len(emotion.units)


def _write(tmp_path, data) -> str:
    path = tmp_path / "t.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


GOOD = {"identity_terms": {"f": ["she", "her sister"], "m": ["he", "his brother"]},
        "fillers": {"mood": {"positive": ["happy"], "negative": ["sad"]}, "job": ["a nurse"]},
        "families": {"e": {"templates": ["{person} is {mood}."]}, "o": {"templates": ["{person} is {job}."]}}}


@pytest.mark.parametrize("change, where", [
    (lambda d: d["identity_terms"].pop("m"), "identity_terms"),
    (lambda d: d["identity_terms"]["m"].append("she"), "also in"),
    (lambda d: d["identity_terms"]["f"].append("she"), "appears twice"),
    (lambda d: d["identity_terms"]["f"].append(""), "identity_terms.f[2]"),
    (lambda d: d["families"]["e"]["templates"].append("no slot {mood}."), "families.e.templates[1]"),
    (lambda d: d["families"]["e"]["templates"].append("{person} is {colour}."), "families.e.templates[1]"),
    (lambda d: d["fillers"].update(mood={"positive": ["x"]}), "fillers.mood"),
    (lambda d: d.pop("families"), "families"),
])
def test_bad_template_files_name_the_place(tmp_path, change, where):
    data = json.loads(json.dumps(GOOD))
    change(data)
    with pytest.raises(WordListError, match="t.json") as info:
        load_templates(_write(tmp_path, data))
    assert where in str(info.value)


def test_template_file_not_json_or_not_a_file(tmp_path):
    with pytest.raises(WordListError, match=r"t.json:2: invalid JSON"):
        load_templates(_write(tmp_path, '{\n  "identity_terms": ,\n}'))
    with pytest.raises(WordListError, match="not a regular file"):
        load_templates(str(tmp_path))
    with pytest.raises(WordListError, match="top level"):
        load_templates(_write(tmp_path, "[1, 2]"))


def test_tokenize():
    assert tokenize("Everyone noticed how happy my mother-in-law's son seemed.") == [
        "Everyone", "noticed", "how", "happy", "my", "mother-in-law's", "son", "seemed"]


# -- a synthetic embedding with a planted sentiment axis --------------------------------------


def sentiment_embedding(female_shift: float = 0.0, seed: int = 0, drop=()) -> Embedding:
    """VADER words on a sentiment axis; female terms shifted along it by ``female_shift``.

    Male and female terms of the bundled templates share their vectors pairwise (the
    i-th female term's tokens equal the i-th male term's), so with ``female_shift=0``
    every statistic must be exactly 0.
    """
    rng = np.random.default_rng(seed)
    dim = 16
    axis = np.eye(dim)[0]
    pos, neg = sentiment_lexicon()
    pos, neg = list(pos[:150]), list(neg[:150])
    ts = load_templates()
    vectors: dict = {}
    for words, sign in ((pos, 1.0), (neg, -1.0)):
        for w in words:
            vectors[w] = sign * 2.0 * axis + rng.normal(size=dim)
    for fam in ts.families.values():
        for u in fam.units:
            for tok in tokenize(u.filler):
                vectors.setdefault(tok, (2.0 if u.label == 1 else -2.0 if u.label == 0 else 0.0) * axis
                                   + rng.normal(size=dim))
        for t in fam.templates:
            for tok in tokenize(t.replace("{", " ").replace("}", " ")):
                vectors.setdefault(tok, rng.normal(size=dim))
    for f, m in zip(ts.groups["female"], ts.groups["male"]):
        f_toks, m_toks = tokenize(f), tokenize(m)
        shared = rng.normal(size=(max(len(f_toks), len(m_toks)), dim))
        for i, tok in enumerate(m_toks):
            vectors.setdefault(tok, shared[i])
        for i, tok in enumerate(f_toks):
            if tok not in vectors:  # "my" is shared by both groups
                j = i if i < len(m_toks) else 0
                vectors[tok] = shared[j] + female_shift * axis
    words = [w for w in vectors if w not in drop]
    return Embedding(words, np.array([vectors[w] for w in words], dtype=np.float32), name="sentiment")


@pytest.fixture(scope="module")
def fair():
    return sentiment_embedding(0.0)


@pytest.fixture(scope="module")
def biased():
    return sentiment_embedding(1.5)


def test_probe_learns_the_axis_and_excludes_template_words(biased):
    ts = load_templates()
    probe = fit_probe(biased, ts)
    assert probe.accuracy_ > 0.9
    assert probe.n_train_ + probe.n_test_ == probe.n_positive_ + probe.n_negative_
    # no template token was a training word
    assert probe.n_positive_ + probe.n_negative_ <= 300
    p = probe.predict_proba(["happy", "sad"])[:, 1]
    assert p[0] > 0.5 > p[1]
    assert list(probe.predict(["happy", "sad"])) == [1, 0]


def test_probe_not_fitted_and_empty_sentence(biased):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SentimentProbe().predict_proba(["happy"])
    probe = SentimentProbe().fit(biased)
    with pytest.raises(EmbdebiasError, match="no token in the vocabulary"):
        probe.predict_proba(["zzzunknown qqq"])


def test_grid_scores_equal_the_probe_on_each_sentence(biased):
    ts = load_templates()
    probe = fit_probe(biased, ts)
    fs = score_family(probe, ts, "emotion")
    terms = [t for ts_ in fs.terms.values() for t in ts_]
    rows = [0, 7, 100, len(fs.units) - 1]
    sentences = [fs.units[i].sentence(t) for i in rows for t in terms]
    np.testing.assert_allclose(probe.predict_proba(sentences)[:, 1], fs.scores[rows].ravel(), rtol=0, atol=1e-12)


def test_fair_embedding_scores_zero_and_biased_one_does_not(fair, biased):
    for fam in ("emotion", "occupation"):
        r0 = extrinsic_bias(fair, fam)
        gender = {k: v for k, v in r0.statistics.items() if not k.startswith(("cf_bcm", "cf_mcm"))}
        assert "cf_pcm" in gender and max(abs(v) for v in gender.values()) < 1e-12, r0.statistics
        assert r0.statistics["cf_mcm"] > 0.01  # the terms differ, within a gender too
        r1 = extrinsic_bias(biased, fam)
        assert r1.statistics["score_gap"] > 0.01  # female terms read as more positive
        assert r1.statistics["cf_pcm"] >= r1.statistics["score_gap"] - 1e-12  # mean |f - m| >= |mean f - mean m|
        assert r1.statistics["group_pcm"] == pytest.approx(abs(r1.statistics["score_gap"]))
        assert r1.statistics["group_bcm"] == pytest.approx(r1.statistics["group_pcm"] / 2)
        assert r1.statistics["group_mcm"] == pytest.approx(r1.statistics["group_pcm"])
        assert r1.n_scored == r1.n_templates * 48
    assert r1.template_accuracy is None and extrinsic_bias(fair).template_auc > 0.8


def test_extrinsic_is_seeded(biased):
    a = extrinsic_bias(biased, random_state=3).to_dict()
    b = extrinsic_bias(biased, random_state=3).to_dict()
    assert a == b


def test_missing_terms_are_listed_or_raise():
    emb = sentiment_embedding(1.0, drop=("Mary", "Jennifer"))
    r = extrinsic_bias(emb)
    assert r.missing["identity terms"] == ["Mary", "Jennifer"]
    assert r.n_terms == {"female": 22, "male": 24}
    many = sentiment_embedding(1.0, drop=("Mary", "Jennifer", "Linda", "Emily", "Sarah", "Jessica"))
    with pytest.raises(MissingWordsError, match=r"female\): 6 of 24"):
        extrinsic_bias(many)


def test_threshold_median_and_numeric(biased):
    r = extrinsic_bias(biased)
    assert 0 < r.threshold < 1
    assert extrinsic_bias(biased, threshold=0.3).threshold == 0.3
    with pytest.raises(EmbdebiasError, match="threshold"):
        extrinsic_bias(biased, threshold=1.5)


# -- the grid statistics against the library -------------------------------------------------


def random_family(seed: int, groups=(("a", 5), ("b", 3), ("c", 4)), n_units: int = 9, labelled=True):
    rng = np.random.default_rng(seed)
    terms = {g: [f"{g}{i}" for i in range(n)] for g, n in groups}
    labels = np.tile([1, 0], n_units)[:n_units] if labelled else None
    units = [TemplateUnit(f"f/{i}/x", "{person} {x}", "x", "x", None if labels is None else int(labels[i]))
             for i in range(n_units)]
    scores = rng.uniform(size=(n_units, sum(n for _, n in groups)))
    sizes = [n for _, n in groups]
    pairs = list(zip(*terms.values())) if len(groups) == 2 else None  # the first min(sizes) terms paired
    return FamilyScores("f", units, terms, scores, labels, {}, pairs if pairs and sizes else None)


@pytest.mark.parametrize("groups", [(("a", 5), ("b", 3)), (("a", 5), ("b", 3), ("c", 4))])
def test_grid_statistics_equal_the_library_on_the_full_sample(groups):
    fs = random_family(1, groups)
    full = {"templates": np.arange(9)[None]} | {g: np.arange(len(t))[None] for g, t in fs.terms.items()}
    if fs.pairs:
        full["pairs"] = np.arange(len(fs.pairs))[None]
    grid = grid_statistics(fs, full, 0.5)
    lib = library_statistics(fs, 0.5)
    assert set(grid) == set(grid_keys(fs)) and set(grid) <= set(lib)
    assert ("cf_pcm" in grid) == (len(groups) == 2)
    for key in grid:
        assert grid[key][0] == pytest.approx(lib[key], abs=1e-10), key


@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("groups", [(("a", 5), ("b", 3)), (("a", 5), ("b", 3), ("c", 4))])
def test_grid_statistics_equal_the_library_on_a_resample(seed, groups):
    """A resample of templates and terms is the library on the duplicated rows and columns."""
    fs = random_family(seed, groups)
    rng = np.random.default_rng(seed + 10)
    idx = {"templates": rng.integers(0, 9, (1, 9))} | {g: rng.integers(0, len(t), (1, len(t)))
                                                     for g, t in fs.terms.items()}
    resampled = fs.take(idx["templates"][0], {g: idx[g][0] for g in fs.group_names})
    assert resampled.scores.shape == fs.scores.shape and len(set(u.key for u in resampled.units)) == 9
    lib = library_statistics(resampled, 0.5)
    keys = [k for k in grid_keys(fs) if k != "cf_pcm"]
    grid = grid_statistics(fs, idx, 0.5, keys)
    for key in keys:
        assert grid[key][0] == pytest.approx(lib[key], abs=1e-10), key
    if fs.pairs:  # the counterfactual PCM draws counterpart pairs
        idx["pairs"] = rng.integers(0, len(fs.pairs), (1, len(fs.pairs)))
        by_pairs = fs.take(idx["templates"][0], pairs=idx["pairs"][0])
        assert grid_statistics(fs, idx, 0.5, ["cf_pcm"])["cf_pcm"][0] == pytest.approx(
            library_statistics(by_pairs, 0.5)["cf_pcm"], abs=1e-12)


def test_unlabelled_family_has_no_label_statistics():
    fs = random_family(3, labelled=False)
    assert not {"fped", "fned", "tpr_gap"} & set(library_statistics(fs))
    assert "score_gap" not in grid_keys(fs)  # three groups: no signed difference


def test_to_long_matches_the_fairness_csv_columns():
    fs = random_family(4, (("a", 2), ("b", 2)), n_units=2)
    long = fs.to_long()
    assert long["example"][:2] == ["f/0/x|a0", "f/0/x|a1"]
    assert long["group"] == ["a", "a", "b", "b"] * 2 and long["label"] == [1] * 4 + [0] * 4
    assert long["score"] == fs.scores.ravel().tolist()


# -- agreement, the report and the CLI --------------------------------------------------------


def _comp(emb, metric, stat, change, outcome):
    return {"embedding": emb, "metric": metric, "test": "t", "statistic": stat, "change": change,
            "outcome": outcome}


def test_agreement_hand_example():
    comps = [_comp("soft", "weat", "d", -0.5, "improved"), _comp("hard", "weat", "d", -0.9, "improved"),
             _comp("soft", "direct_bias", "x", -0.1, "improved"), _comp("hard", "direct_bias", "x", -0.2, "improved"),
             _comp("soft", "extrinsic", "cf", 0.01, "worse"), _comp("hard", "extrinsic", "cf", -0.02, "no significant change")]
    a = agreement(comps, ["original", "soft", "hard"])
    assert a["columns"]["soft"]["intrinsic"]["verdict"] == "fairer"
    assert a["columns"]["soft"]["extrinsic"]["verdict"] == "less fair" and not a["columns"]["soft"]["agree"]
    assert a["columns"]["hard"]["extrinsic"]["verdict"] == "no clear change"
    # intrinsic ranks: original 3, soft 2, hard 1; extrinsic: original 2, soft 3, hard 1 -> rho 0.5
    assert a["intrinsic_rank"] == {"original": 3.0, "soft": 2.0, "hard": 1.0}
    assert a["extrinsic_rank"] == {"original": 2.0, "soft": 3.0, "hard": 1.0}
    assert a["rank_correlation"] == pytest.approx(0.5)
    assert "disagree" in agreement_text(a) and "0.50 over 3 embeddings (from the point estimates" in agreement_text(a)
    two = agreement(comps, ["original", "soft"])
    assert two["rank_correlation"] is None and "needs 3 or more" in agreement_text(two)
    only_soft = agreement(comps[:5] + [_comp("soft", "extrinsic", "x", 0.0, "no significant change")], ["original", "soft", "hard"])
    assert only_soft["columns"]["hard"]["extrinsic"]["verdict"] == "not compared"
    assert only_soft["columns"]["hard"]["agree"] is None and "not comparable" in agreement_text(only_soft)
    assert agreement(comps[:4], ["original", "soft", "hard"]) is None


def test_report_has_the_extrinsic_section_and_agreement(fair, biased):
    from embdebias.evaluate import Report, evaluate

    rep = evaluate({"biased": biased, "fair": fair}, suite=["extrinsic"], bootstrap=200)
    md = rep.to_markdown()
    assert "### Extrinsic bias" in md and "counterfactual PCM" in md
    cf = rep.value("extrinsic", "emotion", "cf_pcm", "fair")
    assert cf == pytest.approx(0.0, abs=1e-12)
    assert rep.interval("extrinsic", "emotion", "cf_pcm", "biased")[0] > 0
    improved = [c for c in rep.comparisons if c["statistic"] == "cf_pcm"]
    assert improved and all(c["outcome"] == "improved" for c in improved)
    assert rep.agreement() is None  # no intrinsic metric in this suite
    back = Report.from_dict(json.loads(json.dumps(rep.to_dict())))
    assert back.value("extrinsic", "occupation", "cf_pcm", "biased") == rep.value(
        "extrinsic", "occupation", "cf_pcm", "biased")


def test_score_tests_extrinsic_cli(biased, tmp_path, capsys):
    from synthetic import write_word2vec_text

    from embdebias.cli import main

    path = tmp_path / "s.txt"
    write_word2vec_text(biased, path)
    assert main(["score", str(path), "--tests", "extrinsic", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    stats = {(r["test"], r["statistic"]) for r in data["rows"]}
    assert ("emotion", "fped") in stats and ("occupation", "cf_pcm") in stats


def test_probe_scores_through_the_fairness_command_give_the_same_numbers(biased, tmp_path, capsys):
    """The probe's sentences as a SCORES.csv: `embdebias fairness` reproduces the report's values."""
    import csv

    from embdebias.cli import main

    probe = fit_probe(biased, load_templates())
    fs = score_family(probe, load_templates(), "emotion")
    long = fs.to_long()
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "group", "score", "template", "label"])
        # one counterfactual template per (template, counterpart pair): the report's cf_pcm
        writer.writerows(zip(long["example"], long["group"], long["score"],
                             [f"{t}|{p}" for t, p in zip(long["template"], long["pair"])], long["label"]))
    assert main(["fairness", str(path), "--metric", "cf_gap_pcm", "--metric", "tpr_gap", "--json",
                 "--threshold", "0.5", "--group-order", "female", "male"]) == 0
    out = json.loads(capsys.readouterr().out)
    got = {r["metric"]: r["value"] for r in out["metrics"]}
    lib = library_statistics(fs, 0.5)
    assert got["cf_gap_pcm"] == pytest.approx(lib["cf_pcm"], abs=1e-9)
    assert got["tpr_gap"] == pytest.approx(lib["tpr_gap"], abs=1e-9)


def test_too_few_lexicon_words_is_a_clear_error_and_a_tolerant_report_row():
    from embdebias.evaluate import evaluate

    tiny = Embedding(["happy", "sad", "my", "mother"], np.eye(4, dtype=np.float32), name="tiny")
    with pytest.raises(EmbdebiasError, match="sentiment probe: only 1 positive and 1 negative"):
        SentimentProbe().fit(tiny)
    with pytest.warns(UserWarning, match="extrinsic/emotion not scored"):
        rep = evaluate(tiny, suite=["extrinsic"], bootstrap=0)
    assert rep.value("extrinsic", "emotion", "cf_pcm", "tiny") is None
    assert any("sentiment probe" in f["reason"] for f in rep.failures)


def test_a_slot_glued_to_a_word_is_refused(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["families"]["e"]["templates"].append("{person}'s day was {mood}.")
    with pytest.raises(WordListError, match=r"families.e.templates\[1\].*set off"):
        load_templates(_write(tmp_path, data))


def test_one_polarity_left_drops_only_the_label_statistics(biased, tmp_path):
    data = json.loads((load_templates().path and open(load_templates().path, encoding="utf-8").read()))
    data["fillers"]["state"]["negative"] = ["zzqq"]  # out of vocabulary
    data["fillers"]["situation"]["negative"] = ["qqzz"]
    r = extrinsic_bias(biased, "emotion", templates=_write(tmp_path, data))
    assert r.missing["label classes"] == ["negative"] and r.missing["fillers"] == ["qqzz", "zzqq"]
    assert "cf_pcm" in r.statistics and not {"fped", "fned", "tpr_gap"} & set(r.statistics)
    assert r.template_accuracy is None


def test_cli_errors_are_one_bounded_line(tmp_path, capsys):
    from embdebias.cli import main

    path = tmp_path / "s.csv"
    path.write_text("id,group,score\na,f,0.5\n" + "b," + "g" * 5000 + ",\n", encoding="utf-8")
    assert main(["fairness", str(path), "--metric", "pert_sr"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 700
    path.write_text("id,group,score\na,f\x00,0.5\n", encoding="utf-8")
    assert main(["fairness", str(path), "--metric", "avg_group_fairness"]) == 2
    assert "control character" in capsys.readouterr().err


@pytest.mark.parametrize("n_units, n_terms, tied", [(30, 48, False), (7, 5, True), (4, 300, False)])
def test_grid_term_statistics_are_the_direct_formulas(n_units, n_terms, tied):
    # the rank-based range gives the very numbers of the plain formula (tied scores, and more
    # terms than a uint8 rank holds, included)
    from embdebias.metrics.extrinsic._grid import _drawn_range, _mean_abs_deviation

    rng = np.random.default_rng(n_terms)
    scores = rng.integers(0, 3, (n_units, n_terms)) / 3.0 if tied else rng.random((n_units, n_terms))
    c = rng.integers(0, 3, (150, n_terms)).astype(float)
    c[:, 0] += 1
    total = c.sum(axis=1)[:, None]
    mean = (c @ scores.T) / total
    drawn = c[:, None, :] > 0
    direct_range = (np.where(drawn, scores[None], -np.inf).max(axis=2)
                    - np.where(drawn, scores[None], np.inf).min(axis=2))
    direct_deviation = (np.abs(scores[None] - mean[:, :, None]) * c[:, None, :]).sum(axis=2) / total
    assert np.array_equal(_drawn_range(scores, c), direct_range)
    assert np.array_equal(_mean_abs_deviation(scores, c, mean, total), direct_deviation)



def _library_on_strings(fs, threshold=0.5):
    """library_statistics as it was: every call given the long format's string labels."""
    from embdebias.fairness import bcm, fairness_metric, mcm, pcm
    from embdebias.metrics.extrinsic.bias import _paired

    long = fs.to_long()
    s, g, t = long["score"], long["group"], long["template"]
    common = dict(group_order=fs.group_names, threshold=threshold)
    terms = dict(templates=t, threshold=threshold)
    out = {"group_pcm": pcm(s, g, phi="mean", **common).value, "group_bcm": bcm(s, g, phi="mean", **common).value,
           "group_mcm": mcm(s, g, phi="mean", d="range", **common).value,
           "cf_bcm": bcm(s, long["term"], phi="mean", **terms).value,
           "cf_mcm": fairness_metric("pert_sr", s, long["term"], **terms).value,
           "cf_mcm_std": fairness_metric("pert_sd", s, long["term"], **terms).value}
    if len(fs.group_names) == 2:
        out["score_gap"] = fairness_metric("average_score_difference", s, g, templates=t, **common).value
        ps, pg, pt = _paired(long)
        out["cf_pcm"] = fairness_metric("cf_gap_pcm", ps, pg, templates=pt, **common).value
    for key, name in (("fped", "fped_normalized"), ("fned", "fned_normalized"), ("tpr_gap", "tpr_gap")):
        out[key] = fairness_metric(name, s, g, labels=long["label"], **common).value
    return out


@pytest.mark.parametrize("groups", [(("m", 4), ("f", 4)), (("z", 3), ("b", 5), ("k", 2))])
def test_library_statistics_on_sorted_codes_are_those_on_the_strings(groups):
    # group names out of sorted order: the codes keep the given group order (signed gaps, pairs)
    fs = random_family(5, groups, n_units=7)
    assert library_statistics(fs, 0.5) == {k: v for k, v in _library_on_strings(fs).items()
                                           if k in library_statistics(fs, 0.5)}


@pytest.mark.parametrize("order", ["C", "F"])
def test_mean_abs_deviation_is_the_plain_form_bit_for_bit(order):
    # the buffered blocks must sum in the order numpy's fresh temporaries of the plain form sum
    # in, which follows the layout of the scores (F: term after term; C: pairwise along terms)
    from embdebias.metrics._resample import counts
    from embdebias.metrics.extrinsic import _grid

    rng = np.random.default_rng(3)
    scores = np.asarray(rng.standard_normal((70, 48)) * 10 ** rng.uniform(-3, 3, (70, 48)), order=order)
    c = counts(rng.integers(0, 48, (123, 48)), 48)             # 123: a last block shorter than the rest
    total = c.sum(axis=1)[:, None]
    mean = (c @ scores.T) / total
    plain = np.empty_like(mean)
    for s in range(0, mean.shape[0], 64):
        sl = slice(s, s + 64)
        plain[sl] = (np.abs(scores[None] - mean[sl, :, None]) * c[sl, None, :]).sum(axis=2) / total[sl]
    assert np.array_equal(_grid._mean_abs_deviation(scores, c, mean, total), plain)
