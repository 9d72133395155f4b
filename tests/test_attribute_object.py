"""Gender is an attribute like any other, and one place configures a method (issue 30, items 1-2).

Small planted embeddings: every test is fast.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from embdebias import BiasSubspace, Embedding
from embdebias.data.attributes import Attribute, as_attribute, given_attribute, load_attribute
from embdebias.debias import HardDebias, SoftDebias
from embdebias.debias.configure import configure
from embdebias.errors import AttributeFileError, EmbdebiasError

PACKAGE = Path(__file__).resolve().parents[1] / "embdebias"


def _embedding(words, n_filler: int = 2000, dim: int = 24, seed: int = 3) -> Embedding:
    words = list(dict.fromkeys(words)) + [f"filler{i}" for i in range(n_filler)]
    return Embedding(words, np.random.default_rng(seed).normal(size=(len(words), dim)).astype(np.float32),
                     name="planted")


@pytest.fixture(scope="module")
def emb():
    race = load_attribute("race")
    return _embedding([w for s in race.defining_sets + race.equalize_sets for w in s]
                      + list(race.specific_words) + list(race.neutral_words))


def test_gender_is_a_resolved_attribute_with_its_published_lists():
    gender = as_attribute("gender")
    assert isinstance(gender, Attribute) and gender.direction_words == ("she", "he")
    assert gender.uses_gender_lists and gender.neutral_name == "professions"
    race = as_attribute("race")
    assert not race.uses_gender_lists and not race.direction_words and race.neutral_name == "neutral words"
    with pytest.warns(FutureWarning, match="attribute=None for gender is deprecated"):
        assert as_attribute(None) == gender


@pytest.mark.parametrize("estimator", [HardDebias, SoftDebias])
def test_a_debiaser_given_a_race_subspace_debiases_race(emb, estimator):
    """The issue's first check: the subspace carries its attribute, and the estimator takes its lists from it."""
    sub = BiasSubspace(attribute="race").fit(emb)
    assert sub.attribute_.name == "race"
    from_subspace = estimator(subspace=sub).fit_transform(emb)
    named = estimator(attribute="race").fit_transform(emb)
    np.testing.assert_array_equal(from_subspace.vectors, named.vectors)
    assert estimator(subspace=sub).fit(emb).attribute_.name == "race"


def test_an_attribute_that_disagrees_with_the_subspace_is_an_error_naming_both(emb):
    sub = BiasSubspace(attribute="race").fit(emb)
    with pytest.raises(AttributeFileError, match="'religion'.*fitted subspace is of attribute 'race'"):
        HardDebias(subspace=sub, attribute="religion").fit(emb)
    with pytest.raises(AttributeFileError, match="'race'"):
        given_attribute("gender", carried=sub.attribute_)


def test_sets_of_three_words_without_an_attribute_have_no_attribute():
    sets = [("a1", "b1", "c1"), ("a2", "b2", "c2")]
    emb = _embedding([w for s in sets for w in s], n_filler=50, dim=8)
    sub = BiasSubspace(sets).fit(emb)
    assert sub.attribute_ is None and sub.groups_ == ("group 1", "group 2", "group 3")


def test_components_are_honoured_as_given_for_three_groups(emb):
    race = load_attribute("race")
    assert configure("hard", attribute=race, n_components=1).n_components == 1
    assert configure("hard", attribute=race).n_components == 2  # default k - 1


def test_one_place_checks_an_option_with_one_message():
    gender, race = load_attribute("gender"), load_attribute("race")
    with pytest.raises(EmbdebiasError, match="^--seeds needs --expand$"):
        configure("soft", attribute=gender, seeds=["he"])
    with pytest.raises(EmbdebiasError, match="--specific applies to gender; the attribute race brings its own"):
        configure("hard", attribute=race, gender_specific=["x"])
    with pytest.raises(EmbdebiasError, match=r"The 'n_iterations' parameter of INLP must be an int in the range "
                                             r"\[1, inf\)\. Got 0 instead\. \(--inlp-iterations\)"):
        configure("inlp", attribute=gender, params={"n_iterations": 0})
    with pytest.raises(EmbdebiasError, match="--lambda applies to --method soft only, not hard"):
        configure("hard", attribute=gender, params={"lam": 0.5})


def test_run_options_refuse_what_debias_refuses():
    from embdebias.pipeline.options import RunOptions

    with pytest.raises(EmbdebiasError, match="^--seeds needs --expand$"):
        RunOptions.create(seeds="seeds.txt")
    with pytest.raises(EmbdebiasError, match=r"The 'n_iterations' parameter of INLP must be an int"):
        RunOptions.create(methods="inlp", n_iterations=0)


def test_the_cli_and_the_estimator_say_the_same(capsys):
    from embdebias.cli import main
    from embdebias.debias.inlp import INLP

    assert main(["debias", "--method", "inlp", "--inlp-iterations", "0", "--out", "unused.embd"]) == 2
    cli = capsys.readouterr().err
    with pytest.raises(EmbdebiasError) as exc:
        INLP(n_iterations=0)._validate()
    assert str(exc.value) in cli


def _branches_on_gender(path: Path) -> list[str]:
    """``is_default_attribute(...)`` calls and ``attribute is None`` comparisons in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) \
                == "is_default_attribute":
            found.append(f"{path.name}:{node.lineno} is_default_attribute")
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Is) \
                and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None \
                and ast.unparse(node.left).split(".")[-1] == "attribute":
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_module_but_the_resolver_branches_on_gender():
    resolver = PACKAGE / "data" / "attributes.py"
    found = [b for p in sorted(PACKAGE.rglob("*.py")) if p != resolver for b in _branches_on_gender(p)]
    assert not found, found
