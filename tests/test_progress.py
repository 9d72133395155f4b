"""Progress on the long steps (issue 31, item 6): evaluate shows a bar over its columns' metrics,
and a callable still receives every (column, metric)."""

from __future__ import annotations

from synthetic import synthetic_embedding

from embdebias.evaluate import evaluate


def test_evaluate_shows_a_bar_over_the_columns_metrics(capsys):
    emb = synthetic_embedding(n_filler=100, dim=8)
    evaluate({"a": emb, "b": emb}, ["direct_bias", "ect"], bootstrap=0, progress=True)
    err = capsys.readouterr().err
    assert "[evaluate]" in err and "b: ect" in err
    seen = []
    evaluate({"a": emb}, ["direct_bias", "ect"], bootstrap=0, progress=lambda *step: seen.append(step))
    assert seen == [("a", "direct_bias"), ("a", "ect")]
    evaluate({"a": emb}, ["direct_bias"], bootstrap=0)
    assert "[evaluate]" not in capsys.readouterr().err  # no bar unless asked
    evaluate({"a": emb}, ["direct_bias"], bootstrap=20, progress=True)
    assert "every column: bootstrap intervals and comparisons" in capsys.readouterr().err  # the last step too
