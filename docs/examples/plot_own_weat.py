"""
Your own WEAT test
==================

A WEAT test is four word sets: targets X and Y, attributes A and B. Write them in the format
of the bundled ``weat_tests.json`` and pass the file where a test name goes (``--tests FILE``
at the command line).
"""

import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

import embdebias
from embdebias import HardDebias, evaluate
from embdebias.evaluate import suite_options

test_file = Path(tempfile.mkdtemp()) / "my_weat.json"
test_file.write_text(json.dumps([{
    "id": "kitchen_garage",
    "title": "Kitchen vs garage words and female vs male terms",
    "X": {"name": "kitchen", "words": ["cook", "bake", "dish", "oven", "recipe", "kitchen", "pan", "soup"]},
    "Y": {"name": "garage", "words": ["car", "engine", "tool", "wrench", "garage", "repair", "truck", "drill"]},
    "A": {"name": "female", "words": ["she", "her", "woman", "girl", "mother", "daughter", "sister", "wife"]},
    "B": {"name": "male", "words": ["he", "his", "man", "boy", "father", "son", "brother", "husband"]},
}]))

emb = embdebias.load(limit=50000)
hard = HardDebias().fit_transform(emb)
report = evaluate({"original": emb, "hard": hard}, **suite_options([test_file]), bootstrap=200, random_state=0)
print(report.to_markdown(summary=False, missing=False))

# %%
# The effect size with its interval, before and after (numbers from this example's code, seed 0).
cells = {name: report.cell("weat", "kitchen_garage", "effect_size", name) for name in report.embeddings}
fig, ax = plt.subplots(figsize=(5, 2))
for y, (name, c) in enumerate(cells.items()):
    ax.errorbar(c.value, y, xerr=[[c.value - c.ci_low], [c.ci_high - c.value]], fmt="o", capsize=3)
ax.set_yticks(range(len(cells)), list(cells))
ax.axvline(0, color="grey", lw=0.8)
ax.set_xlabel("WEAT effect size d (0 is fairer)")
fig.tight_layout()
