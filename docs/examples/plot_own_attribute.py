"""
Your own attribute file
=======================

An attribute is data: one JSON file with its groups and defining sets (see
:doc:`/user_guide/attributes`). Here a small "age" attribute, written to a temporary
directory, is read, fitted and removed with hard debias.
"""

import json
import tempfile
from pathlib import Path

import embdebias
from embdebias import BiasSubspace, HardDebias, evaluate

folder = Path(tempfile.mkdtemp())
(folder / "age.json").write_text(json.dumps({
    "name": "age",
    "groups": ["young", "old"],
    "defining_sets": [["young", "old"], ["youth", "elderly"], ["younger", "older"], ["boy", "man"],
                      ["girl", "woman"], ["child", "adult"]],
    "neutral_words": "professions",
}))
age = embdebias.load_attribute(folder / "age.json")
print(age.name, age.groups, f"{len(age.defining_sets)} defining sets")

emb = embdebias.load(limit=50000)
sub = BiasSubspace(attribute=age).fit(emb)
hard = HardDebias(subspace=sub).fit_transform(emb)

# %%
# Direct bias of the professions on the age direction, before and after, with intervals
# (numbers from this example's code, seed 0).
report = evaluate({"original": emb, "hard": hard}, suite=["direct_bias"], attribute=age, bootstrap=200,
                  random_state=0)
print(report)
