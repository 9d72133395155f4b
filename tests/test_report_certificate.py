"""The linear methods' certificates in a run: computed with each fit, kept in the report, printed
as a table, and said apart from the nonlinear probes in the opening, the verdicts and the card."""

import json
from pathlib import Path

import numpy as np
import pytest
from debiaser_data import gendered_embedding
from schema_subset import errors

from embdebias.data.attributes import as_attribute
from embdebias.debias import make_debiaser
from embdebias.debias.certificate import CERTIFICATE_TOL, run_certificate
from embdebias.debias.leace import LEACE, projection_sample
from embdebias.report import Report
from embdebias.report.run import certificate_lines
from embdebias.report.summary import column_verdict, guard_text, opening_sentences

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "_static" / "bias-card.schema.json").read_text())


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=2500, dim=20)


@pytest.fixture(scope="module")
def certs(emb):
    gender = as_attribute("gender")
    fitted = {"leace": LEACE().fit(emb), "leace-unit": LEACE(normalize=True).fit(emb),
              "inlp": make_debiaser("inlp").fit(emb), "hard": make_debiaser("hard").fit(emb)}
    return {name: run_certificate(d, emb, gender) for name, d in fitted.items()}, fitted


def test_every_linear_method_is_certified_on_the_same_labelled_words(emb, certs):
    found, fitted = certs
    sample = projection_sample(emb, as_attribute("gender"))
    assert {c["n_words"] for c in found.values()} == {len(sample.rows)}
    assert len({c["before"] for c in found.values()}) == 1  # one set of words, one figure before
    # LEACE's own certificate is on these words: the run's figure is its figure
    assert found["leace"]["edited"] == fitted["leace"].certificate_["edited"]
    assert found["leace"] == {**found["leace"], "output": "edited", "guarded": True}
    # scaled to unit length, the same map is no longer guarded; its edit still is
    assert found["leace-unit"]["output"] == "normalized" and not found["leace-unit"]["guarded"]
    assert found["leace-unit"]["edited"] <= CERTIFICATE_TOL * found["leace-unit"]["before"]
    assert not found["inlp"]["guarded"] and found["inlp"]["normalized"] > 1e-4
    assert found["hard"]["edited"] is None and found["hard"]["output"] == "normalized"
    assert all(make_debiaser(m).linear for m in ("hard", "soft", "inlp", "rlace", "hsr", "leace", "sal"))
    assert not any(make_debiaser(m).linear for m in ("double-hard", "ran", "oscar"))


#: Certificates as a run records them (figures of the kind GloVe gives): LEACE, LEACE scaled to unit
#: length, hard debias (no edit before its unit scaling).
LEACE_CERT = {"edited": 8e-16, "normalized": 3.3e-3, "before": 0.28, "n_words": 9160, "n_groups": 2,
              "output": "edited", "guarded": True}
UNIT_CERT = {**LEACE_CERT, "output": "normalized", "guarded": False}
HARD_CERT = {**LEACE_CERT, "edited": None, "normalized": 3.2e-2, "output": "normalized", "guarded": False}
FOUND = {"leace": LEACE_CERT, "leace-unit": UNIT_CERT, "hard": HARD_CERT}


def _report(certificates: dict, residual: bool = True) -> Report:
    """Two debiased columns with residual accuracies (the RBF SVM's interval above chance)."""
    r = Report(["original", "leace", "hard"], params={"groups": ["female", "male"]})
    for col, acc in (("original", 1.0), ("leace", 0.9), ("hard", 0.93)):
        if residual:
            r.add(col, "residual", "gender", "cluster_accuracy", (acc, acc - 0.02, acc + 0.02))
            r.add(col, "residual", "gender", "classification_accuracy", (acc, acc - 0.02, acc + 0.02))
        r.add(col, "weat", "gender_career_family", "effect_size", (1.0 - acc / 2, 0.1, 0.9))
    r.certificates = certificates
    return r


def test_the_opening_says_guarded_apart_from_recoverable_by_a_nonlinear_probe():
    found = FOUND
    r = _report({"leace": found["leace"], "hard": found["hard"]})
    sentence = next(s for s in opening_sentences(r) if "still recoverable?" in s)
    leace = sentence.split("'leace': ")[1].split("; 'hard'")[0]
    assert leace.startswith("linearly guarded (certificate ") and "labelled words" in leace
    assert "by the nonlinear probes: yes (clustering 0.90, SVM 0.90" in leace  # guarded is not a fix
    assert "'hard': not linearly guarded (certificate " in sentence
    assert "linearly guarded" in column_verdict(r, "leace") and "still recoverable: yes" in column_verdict(r, "leace")
    # without the residual tests: the guard alone; a method without a certificate: the probes alone
    alone = next(s for s in opening_sentences(_report({"leace": found["leace"]}, residual=False))
                 if "still recoverable?" in s)
    assert "'leace': linearly guarded" in alone and "'hard'" not in alone
    plain = next(s for s in opening_sentences(_report({})) if "still recoverable?" in s)
    assert "guarded" not in plain and "'hard': yes (clustering 0.93" in plain


def test_the_verdict_names_the_guarded_methods_apart():
    from embdebias.report.summary import guard_lines

    r = _report({"leace": FOUND["leace"], "hard": FOUND["hard"]})
    assert guard_lines(r) == [
        "- **Linearly guarded** (certificate, on the 9,160 labelled words: no linear classifier beats a constant) "
        "after: leace; not after: hard. Guarded is not unrecoverable: the nonlinear probes above say whether "
        "the attribute is still there."]
    assert guard_lines(r)[0] in r.to_markdown()
    assert guard_lines(_report({})) == []


def test_the_unit_scaling_that_undoes_a_guard_is_named():
    found = FOUND
    text = guard_text(_report({"leace": found["leace-unit"]}), "leace")
    assert text.startswith("not linearly guarded") and "before the rows were scaled to unit length" in text
    assert guard_text(_report({"leace": {"error": "no labels"}}), "leace").startswith("no certificate")


def test_the_table_and_the_json_round_trip(tmp_path):
    found = FOUND
    r = _report({"leace": found["leace"], "hard": found["hard"], "original": None})
    lines = certificate_lines(r)
    assert lines[0] == "### Linear guard (certificate)"
    row = {line.split(" | ")[0]: line for line in lines if line.startswith("| leace") or line.startswith("| hard")}
    assert row["| leace"].endswith("| yes (edited rows) |") and row["| hard"].endswith("| no (unit rows) |")
    assert "| - |" in row["| hard"]  # hard has no edit before its unit scaling
    assert certificate_lines(_report({})) == []
    failed = certificate_lines(_report({"hard": {"error": "labels of attribute 'x': a | b"}}))
    assert failed[2:4] == lines[4:6] and failed[-2] == "| hard | n/a | n/a | n/a | no certificate: labels of " \
        "attribute 'x': a / b |"
    path = tmp_path / "r.json"
    r.to_json(path)
    back = Report.from_json(path)
    assert back.certificates["leace"] == found["leace"] and certificate_lines(back) == lines
    assert Report.combine([_report({"leace": found["leace"]}), Report(["x"])]).certificates == {
        "leace": found["leace"]}


def test_a_run_reports_the_certificates_in_report_md_json_and_card(tmp_path):
    from embdebias.cli import main
    from synthetic import synthetic_embedding, write_word2vec_text

    small = tmp_path / "small.txt"
    write_word2vec_text(synthetic_embedding(), small)
    out = tmp_path / "out"
    assert main(["--quiet", "run", str(small), "--methods", "hard,leace,ran", "--tests", "weat",
                 "--out-dir", str(out)]) == 0
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))
    certificates = meta["evaluation"]["certificates"]
    assert set(certificates) == {"hard", "leace"}  # ran is no linear edit
    assert certificates["leace"]["guarded"] and not certificates["hard"]["guarded"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "### Linear guard (certificate)" in md and "'leace': linearly guarded (certificate" in md
    assert "leace-debiased: rows as the eraser's affine edit leaves them, not rescaled" in md
    assert "Linear guard (certificate)" in (out / "report.html").read_text(encoding="utf-8")
    card = json.loads((out / "report.card.json").read_text(encoding="utf-8"))
    assert errors(card, SCHEMA) == []
    assert card["linear_guard"] == certificates and "linearly guarded" in card["verdict"]["leace"]
    leace = LEACE(random_state=0).load_params(out / "leace.params.npz")
    assert np.isclose(leace.certificate_["edited"], certificates["leace"]["edited"], rtol=0, atol=1e-12)


def test_the_vectorized_filter_keeps_what_the_word_by_word_filter_keeps():
    from embdebias.debias._labels import _kept, filtered_pool, kept_words
    from embdebias.embedding import Embedding

    tricky = ["", "_", "a_", "_a", "a__b", "a_b", "café", "naïve_x", "x1", "ab\r", "a b", "Ab_Cd", "a" * 19,
              "a" * 20, "é" * 19, "é" * 20, "日本", "٣", "a-b", "a\u00a0b", "ǅ", "ⅷ", "a_ⅷ", "é_", "\U0001F600",
              "ａｂ", "A_b_C", "he", "o'neil", "x\ty", ""]
    for words in (tricky, tricky[::-1], ["a"], [""], ["a\nb", "c", "d_e"], []):
        assert kept_words(words).tolist() == [i for i, w in enumerate(words) if _kept(w)], words
    rng = np.random.default_rng(0)
    letters = list("ab_1é-Z")
    words = list(dict.fromkeys("".join(rng.choice(letters, size=rng.integers(0, 23))) for _ in range(1500)))
    assert kept_words(words).tolist() == [i for i, w in enumerate(words) if _kept(w)]
    emb = Embedding(words, rng.normal(size=(len(words), 2)).astype(np.float32), name="random words")
    every = kept_words(words)
    for n in (1, 50, len(every) - 1, len(every), len(every) + 5):  # read in slices, the same first n
        assert filtered_pool(emb, n).tolist() == every[:n].tolist()


def test_the_erasers_small_products_run_on_one_blas_thread(monkeypatch):
    from threadpoolctl import threadpool_info

    from embdebias.debias import certificate, leace
    from test_debiasers_leace import labelled

    seen = []
    statistics, certify = leace.LEACE._statistics, certificate._certificate

    def spy(call):
        def wrapped(*args, **kwargs):
            seen.append(max((p["num_threads"] for p in threadpool_info()), default=1))
            return call(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(leace.LEACE, "_statistics", spy(statistics))
    monkeypatch.setattr(certificate, "_certificate", spy(certify))
    x, y = labelled()
    LEACE().fit_vectors(x, y)
    assert seen == [1, 1]  # the statistics, then the certificate
