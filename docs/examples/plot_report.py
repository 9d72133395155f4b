"""
Evaluate and compare
====================

Score the original and the hard-debiased embedding with two metrics and read the
report: each value has its 95% interval, and each debiased cell a paired comparison
with the original (a dagger marks a change within the noise).
"""

import matplotlib.pyplot as plt

import embdebias
from embdebias import HardDebias, evaluate

# The 50,000 most frequent words hold most of the WEAT word sets.
emb = embdebias.load(limit=50000)
hard = HardDebias().fit_transform(emb)
report = evaluate({"original": emb, "hard": hard}, suite=["weat", "ect"], random_state=0)
print(report.to_markdown(missing=False))

# %%
# The same numbers as a chart: WEAT's effect size per test with its interval.
# ``report.cell`` gives a value with its interval by stable keys.
tests = [t for (m, t, s) in report.rows if m == "weat" and s == "effect_size"
         and report.value("weat", t, "effect_size", "original") is not None]
fig, ax = plt.subplots(figsize=(7, 0.5 + 0.6 * len(tests)))
for offset, column in ((-0.15, "original"), (0.15, "hard")):
    cells = [report.cell("weat", t, "effect_size", column) for t in tests]
    y = [i + offset for i in range(len(tests))]
    below = [c.value - c.ci_low for c in cells]
    above = [c.ci_high - c.value for c in cells]
    ax.errorbar([c.value for c in cells], y, xerr=[below, above], fmt="o", capsize=3, label=column)
ax.axvline(0, color="grey", lw=0.8)
ax.set_yticks(range(len(tests)), [t.removeprefix("gender_") for t in tests])
ax.set_xlabel("WEAT effect size d (0 is fairer)")
ax.legend()
fig.tight_layout()
