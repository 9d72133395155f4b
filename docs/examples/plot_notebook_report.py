"""
A report in a notebook
======================

What a notebook shows: ``report`` on its own line is the first screen (the opening answers
and the summary table), ``report.to_markdown()`` the whole report, ``report.to_frame()`` a
DataFrame, and a figure function's result displays itself (no pyplot needed).
"""

import embdebias
from embdebias import HardDebias, SoftDebias, evaluate
from embdebias.report.figures import tradeoff_figure

emb = embdebias.load(limit=50000)
columns = {"original": emb, "soft": SoftDebias(lam=0.2).fit_transform(emb), "hard": HardDebias().fit_transform(emb)}
report = evaluate(columns, suite=["weat", "direct_bias", "residual", "similarity"], bootstrap=200, random_state=0)
print(report)  # numbers from this example's code, seed 0

# %%
# The report as a table of numbers, for pandas.
frame = report.to_frame()
print(frame[frame["statistic"] == "effect_size"][["embedding", "test", "value", "ci_low", "ci_high"]].head(6))

# %%
# The methods' trade-off: bias left against quality kept, with intervals.
fig = tradeoff_figure(report)
