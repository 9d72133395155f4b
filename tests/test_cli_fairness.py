"""`embdebias fairness SCORES.csv --metric NAME` on small hand-made score files."""

import json
import subprocess
import sys

import numpy as np
import pytest

from embdebias.cli import main
from embdebias.errors import FairnessInputError
from embdebias.fairness import available_metrics, get_metric, read_scores_csv

# Two groups, gold labels, threshold 0.5:
#   f: positives 0.9 (TP), 0.3 (FN); negatives 0.8 (FP), 0.1 (TN) -> TPR 1/2, FPR 1/2
#   m: positives 0.7 (TP), 0.6 (TP); negatives 0.2 (TN), 0.4 (TN) -> TPR 2/2, FPR 0/2
# All: FPR 1/4.
GROUP_CSV = """id,group,score,label
1,f,0.9,1
2,f,0.3,1
3,f,0.8,0
4,f,0.1,0
5,m,0.7,1
6,m,0.6,1
7,m,0.2,0
8,m,0.4,0
"""

# Three groups in two templates, one variation each:
#   t1: a 0.9, b 0.6, c 0.3 -> |.3| + |.6| + |.3| = 1.2 over 3 pairs = 0.4
#   t2: a 0.3, b 0.5, c 0.4 -> |.2| + |.1| + |.1| = 0.4 over 3 pairs = 0.4 / 3
# cf_gap_pcm is their mean, 0.8 / 3.
CF_CSV = """id,group,template,score
s1,a,t1,0.9
s2,b,t1,0.6
s3,c,t1,0.3
s4,a,t2,0.3
s5,b,t2,0.5
s6,c,t2,0.4
"""


def _write(tmp_path, text, name="scores.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _run(capsys, *argv):
    code = main(["-q", "fairness", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *argv):
    code, out, err = _run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# --------------------------------------------------------------------------- values
def test_group_metrics_match_hand_computation(tmp_path, capsys):
    path = _write(tmp_path, GROUP_CSV)
    report = _json(capsys, path, "--metric", "tpr_gap", "--metric", "fped", "--metric", "fped_normalized")
    assert report["file"] == str(path) and report["n_examples"] == 8
    assert report["groups"] == {"f": 4, "m": 4} and report["n_templates"] is None
    tpr, fped, fped_n = report["metrics"]
    assert tpr["metric"] == "tpr_gap" and tpr["title"] == "TPR Gap"
    assert tpr["value"] == pytest.approx(0.5)  # |1/2 - 1| over one pair
    assert {r["group"]: r["value"] for r in tpr["group_scores"]} == pytest.approx({"f": 0.5, "m": 1.0})
    assert tpr["parts"] == [{"groups": ["f", "m"], "value": pytest.approx(0.5)}]
    assert tpr["n_examples"] == 8
    # FPED: |1/4 - 1/2| + |1/4 - 0| with N = 1; normalized N = |T| = 2
    assert fped["value"] == pytest.approx(0.5) and fped_n["value"] == pytest.approx(0.25)
    assert {r["group"]: r["value"] for r in fped["background_scores"]} == pytest.approx({"f": 0.25, "m": 0.25})


def test_counterfactual_metric_matches_hand_computation(tmp_path, capsys):
    path = _write(tmp_path, CF_CSV)
    report = _json(capsys, path, "--metric", "cf_gap_pcm")
    assert report["n_templates"] == 2 and report["groups"] == {"a": 2, "b": 2, "c": 2}
    (cf,) = report["metrics"]
    assert cf["form"] == "counterfactual" and cf["normalizer"] == 3
    assert cf["value"] == pytest.approx(0.8 / 3)
    per_template = {r["template"]: r["value"] for r in cf["per_template"]}
    assert per_template == pytest.approx({"t1": 0.4, "t2": 0.4 / 3})
    # each pair's term averaged over the templates: a-b (.3 + .2) / 2, a-c (.6 + .1) / 2, b-c (.3 + .1) / 2
    parts = {tuple(r["groups"]): r["value"] for r in cf["parts"]}
    assert parts == pytest.approx({("a", "b"): 0.25, ("a", "c"): 0.35, ("b", "c"): 0.2})


def test_text_output_is_a_readable_table(tmp_path, capsys):
    code, out, err = _run(capsys, _write(tmp_path, CF_CSV), "--metric", "cf_gap_pcm", "--metric", "pert_sr")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].endswith("scores.csv: 6 examples, 3 groups (a 2, b 2, c 2), 2 templates")
    assert "cf_gap_pcm = 0.266667" in lines
    assert any(line.split() == ["a", "vs", "b", "0.25"] for line in lines)
    assert any(line.split() == ["t1", "0.4"] for line in lines)
    # pert_sr: range of the template's scores, t1 0.6 and t2 0.2
    assert "pert_sr = 0.4" in lines
    assert get_metric("pert_sr").describe() in out


def test_vector_metric_lists_one_value_per_group(tmp_path, capsys):
    # BPSN AUC of f: the background's (m's) positives 0.7, 0.6 against f's negatives 0.8, 0.1 -> 2/4
    # BPSN AUC of m: f's positives 0.9, 0.3 against m's negatives 0.2, 0.4 -> 3/4
    report = _json(capsys, _write(tmp_path, GROUP_CSV), "--metric", "bpsn")
    (bpsn,) = report["metrics"]
    assert bpsn["metric"] == "bpsn_auc" and "value" not in bpsn
    assert {r["group"]: r["value"] for r in bpsn["per_group"]} == pytest.approx({"f": 0.5, "m": 0.75})
    code, out, _ = _run(capsys, tmp_path / "scores.csv", "--metric", "bpsn_auc")
    assert code == 0
    assert "bpsn_auc = one value per group" in out
    assert any(line.split()[:2] == ["m", "0.75"] for line in out.splitlines())


def test_options_reach_the_metric(tmp_path, capsys):
    path = _write(tmp_path, GROUP_CSV)
    # the first group of --group-order is x in TPR(x) - TPR(y)
    assert _json(capsys, path, "--metric", "tpr_difference")["metrics"][0]["value"] == pytest.approx(-0.5)
    flipped = _json(capsys, path, "--metric", "tpr_difference", "--group-order", "m", "f")
    assert flipped["metrics"][0]["value"] == pytest.approx(0.5)
    # --threshold 0.85: only 0.9 is predicted positive -> TPR f 1/2, m 0
    high = _json(capsys, path, "--metric", "tpr_gap", "--threshold", "0.85")
    assert high["metrics"][0]["value"] == pytest.approx(0.5)
    assert {r["group"]: r["value"] for r in high["metrics"][0]["group_scores"]} == pytest.approx({"f": 0.5, "m": 0.0})
    # --true-class 1: the positives only.  W1 of f {.3, .9} and of m {.6, .7} against all
    # four {.3, .6, .7, .9}, as quantile functions on quarters: f .3/4 + .2/4, m .3/4 + .2/4
    tc = _json(capsys, path, "--metric", "avg_group_fairness", "--true-class", "1")["metrics"][0]
    assert tc["n_examples"] == 4 and tc["true_class"] == 1
    assert tc["value"] == pytest.approx((0.125 + 0.125) / 2)


def test_background_group_names_the_source_examples(tmp_path, capsys):
    # "o" is the unperturbed source sentence of each template
    text = "id,group,template,score\n1,f,t1,0.9\n2,m,t1,0.6\n3,o,t1,0.5\n4,f,t2,0.3\n5,m,t2,0.5\n6,o,t2,0.4\n"
    path = _write(tmp_path, text)
    report = _json(capsys, path, "--metric", "cf_gap", "--metric", "pert_ss", "--background-group", "o")
    cf_gap, pert_ss = report["metrics"]
    # t1: (|.5 - .9| + |.5 - .6|) / 2 = .25; t2: (|.4 - .3| + |.4 - .5|) / 2 = .1
    assert cf_gap["value"] == pytest.approx(0.175)
    assert {r["group"]: r["value"] for r in pert_ss["per_group"]} == pytest.approx({"f": 0.25, "m": 0.1})


def test_column_names_aliases_bom_quotes_and_blank_lines(tmp_path, capsys):
    plain = _json(capsys, _write(tmp_path, GROUP_CSV), "--metric", "tpr_gap")["metrics"][0]
    rows = GROUP_CSV.splitlines()[1:]
    text = "\ufeffExample_ID,Note,GROUP,Probability,Gold\r\n" + "".join(
        f'{i},"a note, quoted",{g},{s},{y}\r\n' + ("\r\n" if n == 3 else "")
        for n, (i, g, s, y) in enumerate(r.split(",") for r in rows))
    other = _json(capsys, _write(tmp_path, text, "other.csv"), "--metric", "tpr_gap")
    assert other["columns"] == {"id": "Example_ID", "group": "GROUP", "score": "Probability", "label": "Gold"}
    assert other["metrics"][0]["value"] == plain["value"]
    named = "key,who,p_pos,truth\n" + "".join(
        f"{i},{g},{s},{y}\n" for i, g, s, y in (r.split(",") for r in rows))
    report = _json(capsys, _write(tmp_path, named, "named.csv"), "--metric", "tpr_gap", "--id-col", "KEY",
                   "--group-col", "who", "--score-col", "p_pos", "--label-col", "truth")
    assert report["metrics"][0]["value"] == plain["value"]


def test_read_scores_csv_from_python(tmp_path):
    text = "id,group,score,template,label\n\nx1,f,0.25,t1,1\nx2,m,1e-1,t1,0\n"
    table = read_scores_csv(_write(tmp_path, text))
    assert table.ids.tolist() == ["x1", "x2"] and table.groups.tolist() == ["f", "m"]
    assert table.scores.dtype == np.float64 and table.scores.tolist() == [0.25, 0.1]
    assert table.templates.tolist() == ["t1", "t1"] and table.labels.tolist() == [1, 0]
    assert table.lines.tolist() == [3, 4] and len(table) == 2
    assert table.metric("cf_gap_pcm").value == pytest.approx(0.15)
    bare = read_scores_csv(_write(tmp_path, "id,group,score\n1,f,0.5\n2,m,0.5\n", "bare.csv"))
    assert bare.templates is None and bare.labels is None
    with pytest.raises(FairnessInputError, match="bare.csv: tpr_gap needs gold labels"):
        bare.metric("tpr_gap")


def test_metric_list(capsys):
    code, out, _ = _run(capsys, "--metric", "list")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(available_metrics())
    for name, line in zip(available_metrics(), lines, strict=True):
        assert line.startswith(name) and get_metric(name).describe() in line
    assert "[needs labels]" in lines[available_metrics().index("tpr_gap")]
    assert "[needs templates]" in lines[available_metrics().index("pert_sd")]
    code, again, _ = _run(capsys, "--list-metrics")
    assert code == 0 and again == out
    listing = _json(capsys, "--list-metrics")
    assert [m["name"] for m in listing] == available_metrics()


def test_help(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["fairness", "--help"])
    assert ei.value.code == 0
    assert "--metric" in capsys.readouterr().out


# --------------------------------------------------------------------------- bad input
LABELLED = "id,group,score,label\n1,f,0.9,1\n2,m,0.2,0\n"


@pytest.mark.parametrize(("text", "argv", "expected"), [
    # missing columns: say which exist
    ("id,grp,score\n1,f,0.5\n", ["--metric", "pert_sd"], ["no group column", "'id', 'grp', 'score'"]),
    (LABELLED, ["--metric", "tpr_gap", "--score-col", "p"], ["no score column 'p'", "'label'"]),
    ("id,score,prob,group\n1,0.5,0.5,f\n", ["--metric", "tpr_gap"], ["'score' and 'prob'", "--score-col"]),
    # scores
    ("id,group,score\n1,f,0.5\n2,m,abc\n", ["--metric", "avg_group_fairness"],
     ["line 3", "column 'score'", "'abc' is not a number"]),
    ("id,group,score\n1,f,0.5\n\n2,m,nan\n", ["--metric", "avg_group_fairness"],
     ["line 4", "column 'score'", "'nan' is not finite"]),
    ("id,group,score\n1,f,-inf\n2,m,0.5\n", ["--metric", "avg_group_fairness"], ["line 2", "not finite"]),
    ("id,group,score\n1,f,\n2,m,0.5\n", ["--metric", "avg_group_fairness"], ["line 2", "empty score"]),
    # empty and header-only files
    ("", ["--metric", "avg_group_fairness"], ["empty file", "header"]),
    ("id,group,score\n", ["--metric", "avg_group_fairness"], ["no examples, only a header"]),
    # groups
    (LABELLED, ["--metric", "tpr_gap", "--group-order", "f", "x"], ["group 'x' has no examples", "'f', 'm'"]),
    ("id,group,score\n1,f,0.5\n2,f,0.4\n", ["--metric", "avg_group_fairness"], ["at least two groups", "'f'"]),
    ("id,group,score,label\n1,f,0.9,1\n2,m,0.2,0\n3,m,0.7,1\n", ["--metric", "avg_group_fairness",
                                                                "--true-class", "0"],
     ["true class 0", "group 'f' has no examples"]),
    ("id,group,template,score\n1,f,t1,0.5\n2,m,t1,0.4\n3,f,t2,0.3\n", ["--metric", "cf_gap_pcm"],
     ["cf_gap_pcm", "group 'm' in template 't2'"]),
    # labels
    ("id,group,score\n1,f,0.9\n2,m,0.2\n", ["--metric", "fped"], ["fped needs gold labels", "no label column"]),
    ("id,group,score,label\n1,f,0.9,1\n2,m,0.2,0\n3,m,0.2,2\n", ["--metric", "tpr_gap"],
     ["line 4", "column 'label'", "'2'", "0 or 1"]),
    # metrics
    (LABELLED, ["--metric", "tpr_gapp"], ["unknown fairness metric 'tpr_gapp'", "tpr_difference, tpr_gap"]),
    (LABELLED, ["--metric", "cf_gap_pcm"], ["cf_gap_pcm is a counterfactual metric", "template column"]),
    (CF_CSV, ["--metric", "cf_gap"], ["--background-group", "cf_gap_pcm"]),
    (LABELLED, ["--metric", "tpr_gap", "--true-class", "1"], ["true_class applies only to"]),
    (LABELLED, ["--metric", "tpr_gap", "--threshold", "nan"], ["threshold must be a finite number"]),
    # rows
    ("id,group,score\n1,f,0.5\n1,m,0.3\n", ["--metric", "avg_group_fairness"],
     ["line 3", "column 'id'", "duplicate example id '1'", "first on line 2"]),
    ("id,group,score\n1,f,0.5\n2,m\n", ["--metric", "avg_group_fairness"], ["line 3", "2 fields", "header has 3"]),
    (b"id,group,score\n1,f,0.5\n2,m\xff,0.3\n", ["--metric", "avg_group_fairness"],
     ["line 3", "not UTF-8", "--unicode-errors"]),
    ('id,group,score\n1,f,0.5\n2,"m,0.3\n', ["--metric", "avg_group_fairness"], ["not valid CSV"]),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, text, argv, expected):
    path = _write(tmp_path, text)
    code, out, err = _run(capsys, path, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("embdebias: error:"), err
    if "unknown fairness metric" not in expected[0] and "background-group" not in expected[0]:
        assert str(path) in lines[0]
    for fragment in expected:
        assert fragment in lines[0]


def test_missing_file_and_missing_arguments(tmp_path, capsys):
    code, _, err = _run(capsys, tmp_path / "nope.csv", "--metric", "tpr_gap")
    assert code == 2 and "nope.csv" in err
    code, _, err = _run(capsys, "--metric", "tpr_gap")
    assert code == 2 and "SCORES.csv" in err
    code, _, err = _run(capsys, _write(tmp_path, LABELLED))
    assert code == 2 and "--metric" in err


def test_unicode_errors_replace_reads_the_file(tmp_path, capsys):
    path = _write(tmp_path, b"id,group,score\n1,f\xff,0.5\n2,m,0.3\n")
    report = _json(capsys, path, "--metric", "avg_group_fairness", "--unicode-errors", "replace")
    assert report["groups"] == {"f\ufffd": 1, "m": 1}


def test_no_traceback_in_a_subprocess(tmp_path):
    path = _write(tmp_path, "id,group,score\n1,f,0.5\n2,m,abc\n")
    res = subprocess.run([sys.executable, "-m", "embdebias", "fairness", str(path), "--metric", "tpr_gap"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1
    assert "no label column" in res.stderr  # the metric's needs are checked before the rows


def test_special_files_are_refused_without_blocking(tmp_path, capsys):
    """A FIFO or /dev/zero as the scores file: one line, exit 2, never a hang or a MemoryError."""
    import os

    from embdebias.cli import main

    fifo = tmp_path / "scores.csv"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", tmp_path):
        assert main(["fairness", str(path), "--metric", "parity_gap"]) == 2
        err = capsys.readouterr().err.strip()
        assert "not a regular file" in err and "\n" not in err
