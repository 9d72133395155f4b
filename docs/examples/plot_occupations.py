"""
Professions on the gender direction
===================================

Fit Bolukbasi et al.'s gender direction on the built-in GloVe 6B 50d, debias the
embedding with hard and soft debiasing, and draw the professions that lean furthest
towards either side, before and after (the figure of ``embdebias run``).
"""

import embdebias
from embdebias import BiasSubspace, HardDebias, SoftDebias
from embdebias.report.figures import occupation_figure

# The 20,000 most frequent words: enough for the professions, fast to debias.
emb = embdebias.load(limit=20000)
sub = BiasSubspace(n_components=1).fit(emb)
print(f"the gender direction explains {sub.explained_variance_ratio_[0]:.0%} of the definitional pairs' variance")

hard = HardDebias(subspace=sub).fit_transform(emb)
soft = SoftDebias(lam=0.2, subspace=sub).fit_transform(emb)

# %%
# Each panel ranks the professions by their projection on the original direction
# ("she" side > 0). Hard debiasing neutralizes the gender-neutral ones to 0 (words of the
# gender-specific list, such as "actress", keep theirs); soft debiasing shrinks them all.
# The 20,000 most frequent words miss about a third of the 320 professions: allow that
# here (the figure's caption says how many it kept); the default allows a fifth.
fig = occupation_figure({"original": emb, "soft": soft, "hard": hard}, top=10, subspace=sub, max_missing=0.5)
