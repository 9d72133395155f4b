"""
A sweep
=======

Many embeddings x methods x parameters at once (:doc:`/user_guide/sweeps`): here the built-in
GloVe at 50,000 words, soft debias over three values of lambda and hard debias, run one after
another in this process. The table has one row per point and (metric, test, statistic).
"""

import tempfile

import embdebias

config = {
    "suite": ["direct_bias", "similarity"],
    "bootstrap": 50,
    "embeddings": [{"path": "glove-6b-50d", "label": "GloVe 50k", "limit": 50000}],
    "methods": {"hard": {}, "soft": {"lam": [0.05, 0.2, 1.0]}},
}
table = embdebias.sweep(config, tempfile.mkdtemp(), serial=True, log=lambda line: None)
headline = table[(table["metric"] == "direct_bias") & (table["statistic"] == "direct_bias_original")]
print(headline[["method", "parameters", "value", "ci_low", "ci_high"]].to_string(index=False))

# %%
# Bias left against soft debias's lambda (numbers from this example's code, seed 0).
import json  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402

soft = headline[headline["method"] == "soft"].assign(lam=lambda t: [json.loads(p)["lam"] for p in t["parameters"]])
soft = soft.sort_values("lam")
fig, ax = plt.subplots(figsize=(5, 3))
ax.errorbar(soft["lam"], soft["value"], yerr=[soft["value"] - soft["ci_low"], soft["ci_high"] - soft["value"]],
            fmt="o-", capsize=3)
ax.set_xscale("log")
ax.set_xlabel("soft debias lambda")
ax.set_ylabel("DirectBias left")
fig.tight_layout()
