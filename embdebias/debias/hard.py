"""Hard debiasing: neutralize and equalize (Bolukbasi et al., 2016, Section 5.1)."""

from __future__ import annotations

import warnings

import numpy as np

from .. import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..subspace import MissingWordsWarning
from ._base import case_variants, check_dim, fit_bias_subspace, map_chunks, subtract_projection, unit_rows


def equalize_rows(vectors: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Equalize pairs of unit vectors about the subspace spanned by ``basis`` (k, d).

    For a pair ``(a, b)`` with mean ``mu``, let ``nu = mu - mu_B`` be the mean's part
    outside the subspace. Both words become ``nu + sqrt(1 - |nu|^2) (w_B - mu_B) / |w_B - mu_B|``
    (Bolukbasi et al., Equalize step): they share ``nu``, so every vector orthogonal to
    the subspace has the same inner product with both, and their parts in the
    subspace are opposite, so the pair is symmetric about it; both stay unit length.

    ``vectors[rows_a]`` and ``vectors[rows_b]`` are overwritten. Returns a boolean mask of
    the pairs that were left alone because both words have the same part in the
    subspace (no direction to equalize along).
    """
    B = basis.astype(np.float64)
    a = vectors[rows_a].astype(np.float64)
    b = vectors[rows_b].astype(np.float64)
    mu = (a + b) / 2.0
    mu_b = (mu @ B.T) @ B
    nu = mu - mu_b
    scale = np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", nu, nu), 0.0, None))[:, None]
    out = []
    degenerate = np.zeros(len(rows_a), dtype=bool)
    for w in (a, b):
        diff = (w @ B.T) @ B - mu_b
        norm = np.linalg.norm(diff, axis=1, keepdims=True)
        degenerate |= norm[:, 0] <= 1e-6
        out.append(nu + scale * np.divide(diff, norm, out=np.zeros_like(diff), where=norm > 1e-6))
    ok = ~degenerate
    vectors[rows_a[ok]] = out[0][ok].astype(vectors.dtype)
    vectors[rows_b[ok]] = out[1][ok].astype(vectors.dtype)
    return degenerate


class HardDebias:
    """Hard debiasing (neutralize + equalize) of Bolukbasi et al. (2016).

    Every vector is first unit-normalized. **Neutralize**: every word that is not
    gender-specific loses its projection on the bias subspace and is renormalized.
    **Equalize**: for every equalize pair whose two words are in the vocabulary, both
    words are moved to be symmetric about the subspace, so that each neutral word is
    equidistant from them (see :func:`equalize_rows`). Gender-specific words keep
    their (normalized) vectors.

    Case variants: Bolukbasi et al.'s lists are lower-case, but vocabularies such as
    word2vec's are case-sensitive. With ``case_variants=True`` (default) the lower-,
    Title- and UPPER-case forms of every listed word count as gender-specific too
    ("She", "KING" are as gender-specific as "she", "king"; other mixed-case spellings
    are not matched), and every equalize pair is also applied
    to its lower-, Title- and UPPER-case forms where both words of the form exist.
    With ``case_variants=False`` the lists are matched exactly (the behaviour of
    Bolukbasi et al.'s code, which neutralizes "Queen").

    Parameters
    ----------
    subspace : BiasSubspace, optional
        A fitted (or unfitted) bias subspace; default: fitted on the embedding from
        ``definitional`` pairs with ``n_components`` components.
    definitional : list of pairs or str, optional
        Definitional pairs (default: the ten of Bolukbasi et al.).
    n_components : int, default 1
        Dimension ``k`` of the bias subspace.
    equalize : list of pairs or str, optional
        Equalize pairs (default: the bundled ``equalize_pairs`` list).
    gender_specific : list of str or str, optional
        Words exempt from neutralization (default: the bundled seed list; pass an
        expanded list from :func:`embdebias.debias.expand_gender_specific` to follow
        the paper fully).
    case_variants : bool, default True
        See above.
    chunk_rows : int
        Rows per chunk in :meth:`transform`.

    Attributes
    ----------
    subspace_ : BiasSubspace
    gender_specific_ : frozenset of str
        Words kept out of neutralization: the gender-specific list (with case
        variants if enabled) and the words of the equalize pairs found.
    equalize_pairs_ : list of (str, str)
        The equalize pairs found in the vocabulary (with case variants).
    equalize_missing_ : list of (str, str)
        Equalize pairs (lower-case form) none of whose forms are fully in the vocabulary.
    n_features_in_ : int
    """

    def __init__(self, subspace=None, *, definitional=None, n_components: int = 1, equalize=None,
                 gender_specific=None, case_variants: bool = True, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.equalize = equalize
        self.gender_specific = gender_specific
        self.case_variants = case_variants
        self.chunk_rows = chunk_rows

    def fit(self, embedding, y=None) -> "HardDebias":
        """Learn the bias subspace and resolve the word lists against ``embedding``."""
        emb = as_embedding(embedding)
        self.subspace_ = fit_bias_subspace(self.subspace, self.definitional, self.n_components, emb)
        specific = wordlists.resolve_words(self.gender_specific, wordlists.gender_specific)
        if self.case_variants:
            specific = case_variants(specific)

        pairs = wordlists.resolve_pairs(self.equalize, wordlists.equalize_pairs)
        found, missing, used = [], [], set()
        for f, m in pairs:
            forms = [(f, m)]
            if self.case_variants:
                forms = list(dict.fromkeys([(f, m), (f.lower(), m.lower()), (f.title(), m.title()),
                                            (f.upper(), m.upper())]))
            hit = False
            for a, b in forms:
                if a in emb and b in emb:
                    hit = True
                    if a in used or b in used or a == b:
                        continue  # a word is equalized once, with its first pair
                    used.update((a, b))
                    found.append((a, b))
            if not hit:
                missing.append((f, m))
        if missing:
            warnings.warn(f"equalize: {len(missing)} of {len(pairs)} pairs not in {emb.name}: "
                          + ", ".join(f"{a}/{b}" for a, b in missing[:15])
                          + (" ..." if len(missing) > 15 else ""), MissingWordsWarning, stacklevel=2)
        self.equalize_pairs_ = found
        self.equalize_missing_ = missing
        # Equalize pairs are gender-specific by definition; neutralizing them first would
        # leave equalize no gender component to work with.
        self.gender_specific_ = frozenset(specific).union(w for p in found for w in p)
        self.n_features_in_ = emb.dim
        return self

    def _specific_mask(self, emb: Embedding) -> np.ndarray:
        mask = np.zeros(len(emb), dtype=bool)
        rows, _ = emb.rows(self.gender_specific_)
        mask[rows] = True
        return mask

    def transform(self, embedding, *, out=None, progress: bool = False, name: str | None = None) -> Embedding:
        """A new, hard-debiased embedding (unit-length rows).

        Parameters
        ----------
        embedding : Embedding or gensim KeyedVectors
        out : None, ndarray or path
            Where the result goes: in memory (None), a given ``(n, d)`` float32 array,
            or a native-format directory written chunk by chunk (bounded memory).
        progress : bool
            Show a progress bar.
        """
        emb = as_embedding(embedding)
        check_dim(emb, self.n_features_in_, "HardDebias")
        basis = self.subspace_.components_.astype(np.float32)
        specific = self._specific_mask(emb)

        def neutralize(start, stop, block, out):
            out[...] = block
            unit_rows(out)
            coords = out @ basis.T
            coords[specific[start:stop]] = 0.0  # gender-specific rows keep their direction
            subtract_projection(out, coords, basis)
            unit_rows(out)

        pairs = self.equalize_pairs_
        rows_a = np.array([emb.index(a) for a, _ in pairs], dtype=np.int64)
        rows_b = np.array([emb.index(b) for _, b in pairs], dtype=np.int64)

        def finish(dest):
            if len(pairs):
                skipped = equalize_rows(dest, rows_a, rows_b, self.subspace_.components_)
                if skipped.any():
                    warnings.warn("equalize: pairs with identical projections left alone: "
                                  + ", ".join(f"{a}/{b}" for (a, b), s in zip(pairs, skipped) if s),
                                  stacklevel=3)

        return map_chunks(emb, neutralize, out=out, chunk_rows=self.chunk_rows, finish=finish,
                          progress=progress, name=name or f"{emb.name} (hard)")

    def fit_transform(self, embedding, y=None, **kwargs) -> Embedding:
        return self.fit(embedding).transform(embedding, **kwargs)
