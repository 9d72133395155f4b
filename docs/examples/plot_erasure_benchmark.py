"""
An erasure benchmark
====================

Every eraser side by side on the same words (:mod:`embdebias.benchmark`): here LEACE and its
orth form (mean projection) on the first 5,000 words of the built-in GloVe, 3 seeds, probes
trained and scored on words the erasers never saw (``protocol="heldout"``). The linear probe
falls to chance; the RBF-SVM and the MLP still find gender. ``embdebias benchmark`` runs every
eraser on the whole vocabulary (``benchmarks/results/erasure.md`` holds that table).
"""

import embdebias

result = embdebias.erasure_benchmark("glove-6b-50d", limit=5000, methods="leace,orth", seeds=3,
                                     protocol="heldout", quality=False)
columns = ["method", "linear", "linear_low", "linear_high", "rbf", "mlp", "certificate", "distortion"]
print(result.summary[columns].round(4).to_string(index=False))

# %%
# Probe accuracy against distortion, one point per method, with the seeds' 95 % intervals
# (the figure ``embdebias benchmark`` writes). The dashed line is the majority class.
from embdebias.benchmark import plot  # noqa: E402

fig = plot(result.summary)
