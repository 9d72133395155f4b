"""A small synthetic embedding whose vocabulary holds the bundled word lists.

Gendered words get a planted gender component, so the bias subspace, debiasing and
the metrics have something real to find; filler words are random.
"""

from __future__ import annotations

import numpy as np

from embdebias import wordlists
from embdebias.embedding import Embedding


def bundled_vocabulary() -> list[str]:
    """Every word of both list sets (published and curated), lower-cased."""
    words = []
    for lists in wordlists.LIST_SETS:
        words += [w for p in wordlists.definitional_pairs(lists) for w in p]
        words += [w for p in wordlists.equalize_pairs(lists) for w in p]
        words += wordlists.gender_specific_seed(lists) + wordlists.professions(lists)
        for line in wordlists.sembias_path(lists).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                words += [w for pair in line.split("\t") for w in pair.split(":")]
    for t in wordlists.weat_tests("gender"):
        for s in (t.X, t.Y, t.A, t.B):
            words += list(s.words)
    words += ["good", "bad", "happy", "sad", "love", "hate", "nice", "awful", "great", "terrible"]
    return list(dict.fromkeys(w.lower() for w in words))


def synthetic_embedding(n_filler: int = 1500, dim: int = 24, seed: int = 0) -> Embedding:
    rng = np.random.default_rng(seed)
    g = rng.normal(size=dim)
    g /= np.linalg.norm(g)
    # the curated pairs are female first (the published equalize pairs are not oriented)
    pairs = wordlists.definitional_pairs("curated") + wordlists.equalize_pairs("curated")
    female = {f.lower() for f, _ in pairs}
    male = {m.lower() for _, m in pairs}
    words = bundled_vocabulary()
    words += [f"filler{i}" for i in range(n_filler)]
    vecs = rng.normal(size=(len(words), dim))
    sign = np.array([1.0 if w in female else -1.0 if w in male else 0.0 for w in words])
    vecs += 2.5 * sign[:, None] * g
    # professions lean a little to one side, like real embeddings' stereotypes
    prof = set(wordlists.professions()) | set(wordlists.professions("curated"))
    lean = np.array([rng.normal() if w in prof else 0.0 for w in words])
    vecs += 0.8 * lean[:, None] * g
    return Embedding(words, vecs.astype(np.float32), name="synthetic")


def write_word2vec_text(emb: Embedding, path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{len(emb)} {emb.dim}\n")
        for w, v in zip(emb.words, emb.vectors):
            fh.write(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n")
