"""A synthetic embedding for the debiaser tests: the bundled lists' words, Zhao et al.'s
definition words and filler, with a planted gender direction."""

from __future__ import annotations

import numpy as np
from synthetic import bundled_vocabulary

from embdebias.data import wordlists
from embdebias.embedding import Embedding

#: Options of a quick fit on :func:`gendered_embedding`, for the tests that need a fitted
#: estimator of every method (its row map, its parameter file, its command line), not a
#: converged one: 100 RLACE steps, 60 RAN words a side for 5 epochs (0.15 and 0.05 s of CPU,
#: against 2.5 and 1 s with 3,000 steps and 1,000 words for 30 epochs).
QUICK_FIT = {"rlace": {"max_iter": 100, "evaluate_every": 50}, "ran": {"n_words": 60, "n_epochs": 5},
             "double-hard": {"n_words": 100, "n_candidates": 3}}


def gendered_embedding(n_filler: int = 1200, dim: int = 16, seed: int = 0, strength: float = 2.5) -> Embedding:
    rng = np.random.default_rng(seed)
    male = wordlists.load_words("zhao2018_male")
    female = wordlists.load_words("zhao2018_female")
    words = list(dict.fromkeys(bundled_vocabulary() + male + female + ["he", "she"]))
    words += [f"filler{i}" for i in range(n_filler)]
    g = rng.normal(size=dim)
    g /= np.linalg.norm(g)
    pairs = wordlists.definitional_pairs("curated") + wordlists.equalize_pairs("curated")
    fem = {f.lower() for f, _ in pairs} | set(female) | {"she"}
    mas = {m.lower() for _, m in pairs} | set(male) | {"he"}
    sign = np.array([1.0 if w in fem else -1.0 if w in mas else 0.0 for w in words])
    vecs = rng.normal(size=(len(words), dim))
    # filler words lean to one side or the other: labels for INLP and RLACE to find
    lean = np.where(sign == 0, rng.normal(scale=0.8, size=len(words)), 0.0)
    vecs += (strength * sign + lean)[:, None] * g
    return Embedding(words, vecs.astype(np.float32), name="gendered")
