"""One rule per kind of parameter, applied alike by the API and by argparse (embdebias._validation)."""

import argparse

import numpy as np
import pytest

from embdebias import _validation as v
from embdebias.errors import EmbdebiasError


@pytest.mark.parametrize("rule, good, bad", [
    (v.SEED, [0, 2**32 - 1, np.int64(7)], [-1, 2**32, 1.0, True, "3"]),
    (v.POSITIVE, [1, 10**9], [0, -3, 2.5, None]),
    (v.COUNT, [0, 5], [-1, 0.0]),
    (v.NONNEGATIVE, [0, 0.2, np.float32(3)], [-1e-9, float("nan"), float("inf"), "0.2", False]),
    (v.FRACTION, [0, 0.5, 1], [1.01, -0.1, float("nan")]),
    (v.PRECISION_TARGET, [None, 1, 0.8], [0, 1.5, "none"]),
    (v.MAX_RANK, [None, "n_train", 3], [0, "all", 2.0]),
])
def test_check_accepts_and_refuses_with_the_name_and_the_rule(rule, good, bad):
    for value in good:
        assert rule.check(value, "x") is value
    for value in bad:
        with pytest.raises(EmbdebiasError) as exc:
            rule.check(value, "x")
        assert str(exc.value) == f"x must be {rule.expected}, got {value!r}"


def test_parse_gives_argparse_the_same_text():
    assert v.NONNEGATIVE.parse("0.5") == 0.5 and v.SEED.parse("12") == 12
    assert v.PRECISION_TARGET.parse("None") is None and v.MAX_RANK.parse("all") is None
    assert v.MAX_RANK.parse("n_train") == "n_train"
    for rule, text in ((v.NONNEGATIVE, "-1"), (v.NONNEGATIVE, "abc"), (v.SEED, "2**40"), (v.POSITIVE, "0")):
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            rule.parse(text)
        assert str(exc.value) == f"must be {rule.expected}, got '{text}'"


@pytest.mark.parametrize("argv, api, message", [
    (["--components", "0"], {"n_components": 0}, "n_components must be an integer >= 1"),
    (["--seed", "-1"], {"random_state": -1}, "random_state must be an integer in [0, 2**32)"),
    (["--max-missing", "2"], {"max_missing": 2}, "max_missing must be a number in [0, 1]"),
    (["--limit", "0"], {"limit": 0}, "limit must be an integer >= 1"),
])
def test_run_options_fail_alike_in_the_cli_and_the_api(tmp_path, capsys, argv, api, message):
    from embdebias.cli import main
    from embdebias.pipeline import run_pipeline

    with pytest.raises(SystemExit) as exc:
        main(["run", "--out-dir", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1
    assert f"argument {argv[0]}: {message.split(' ', 1)[1]}" in err[0]
    with pytest.raises(EmbdebiasError) as exc:
        run_pipeline(None, tmp_path / "o", **api)
    assert str(exc.value).startswith(message)
    assert not (tmp_path / "o").exists()


def test_the_estimators_use_the_rules():
    from synthetic import synthetic_embedding

    from embdebias.debias import HardDebias, SoftDebias

    emb = synthetic_embedding(n_filler=10)
    with pytest.raises(EmbdebiasError, match=r"^n_components must be an integer >= 1, got 0"):
        HardDebias(n_components=0).fit(emb)
    # a method's own parameter: the estimator's _parameter_constraints, in scikit-learn's words (issue 30)
    with pytest.raises(EmbdebiasError, match=r"^The 'lam' parameter of SoftDebias must be a float in the range "
                                             r"\[0\.0, inf\)\. Got -0\.5 instead\."):
        SoftDebias(lam=-0.5).fit(emb)
