"""The fits that take seconds to minutes show bars only inside fit_progress (embdebias run unless --quiet)."""

import pytest
from debiaser_data import QUICK_FIT, gendered_embedding

from embdebias.debias import make_debiaser
from embdebias.debias._progress import fit_progress


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=600, dim=12)


@pytest.mark.parametrize("method, label", [("inlp", "[fit] inlp"), ("rlace", "[fit] rlace, 2 groups"),
                                           ("ran", "[fit] ran: optimize")])
def test_bars_only_when_asked(emb, capsys, method, label):
    params = {**QUICK_FIT.get(method, {}), **({"n_words": 20} if method == "ran" else {})}
    make_debiaser(method, **params).fit(emb)
    assert capsys.readouterr().err == ""
    with fit_progress(True):
        with fit_progress(False):  # nested: the inner setting holds within, the outer after
            make_debiaser(method, **params).fit(emb)
        assert capsys.readouterr().err == ""
        make_debiaser(method, **params).fit(emb)
    assert label in capsys.readouterr().err


def test_the_run_passes_its_progress_to_the_fit(emb, capsys):
    from embdebias.pipeline.run import _fit

    assert _fit(make_debiaser("inlp"), emb, False, progress=False) == []
    assert capsys.readouterr().err == ""
    _fit(make_debiaser("inlp"), emb, False, progress=True)
    assert "[fit] inlp" in capsys.readouterr().err
