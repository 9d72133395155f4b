"""
Another attribute: religion
===========================

Audit and debias religion (Christian, Jewish, Muslim; Manzini et al. 2019's lists, bundled)
instead of gender: the subspace is fitted on religion's defining sets, hard debias
neutralizes along it, and the multi-group metrics score both embeddings.
"""

import embdebias
from embdebias import BiasSubspace, HardDebias, evaluate
from embdebias.report.figures import group_figure

# The whole vocabulary: religion's stereotype words (``pushy``, ``preachy``) are rare.
emb = embdebias.load()
religion = embdebias.load_attribute("religion")
sub = BiasSubspace(attribute=religion).fit(emb)
print(f"{religion.name}: {religion.k} groups ({', '.join(religion.groups)}), "
      f"a {sub.components_.shape[0]}-dimensional subspace")
hard = HardDebias(subspace=sub).fit_transform(emb)

# %%
# The report's first screen (``print(report)``; ``report.to_markdown()`` has every table).
# Numbers from this example's code, seed 0, 200 bootstrap resamples.
report = evaluate({"original": emb, "hard": hard}, suite=["mac", "direct_bias"], attribute=religion,
                  bootstrap=200, random_state=0)
print(report)

# %%
# Each group's words on the subspace's first two components, before and after.
fig = group_figure({"original": emb, "hard": hard}, religion, sub)
