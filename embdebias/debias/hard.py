"""Hard debiasing: neutralize and equalize (Bolukbasi et al., 2016, Section 5.1)."""

from __future__ import annotations

import warnings
from itertools import chain

import numpy as np

from .. import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import MissingWordsError
from ..subspace import MissingWordsWarning, resolve_subspace
from ._base import Debiaser, case_variants, unit_rows

#: Below this norm a pair's gender part counts as absent (both words neutralized).
EQUALIZE_TOL = 1e-5

#: Bytes of input rows :func:`neutralize_rows` works on at a time: the rows, their
#: scratch copy and the unit output stay in one core's L2 cache through its passes,
#: so main memory sees each input row read once and each output row written once.
NEUTRALIZE_BYTES = 1 << 19


def neutralize_rows(block: np.ndarray, out: np.ndarray, keep: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Write into ``out`` the rows of ``block`` without their part in the subspace, at unit length.

    Parameters
    ----------
    block : ndarray (m, d), float32
        The rows (only read).
    out : ndarray (m, d), float32
        Receives the result; zero rows stay zero.
    keep : ndarray (m,), bool
        Rows that keep their part in the subspace (gender-specific words): only scaled
        to unit length.
    basis : ndarray (k, d), float32
        Orthonormal rows spanning the subspace.

    Notes
    -----
    Bolukbasi et al. unit-normalize a row, remove its projection and normalize again;
    removing the projection of the row as it is and normalizing once gives the same
    unit vector (the first scaling only scales the projection with it) in one pass
    fewer. The work goes in blocks of :data:`NEUTRALIZE_BYTES`.
    """
    m, d = block.shape
    step = max(NEUTRALIZE_BYTES // (4 * max(d, 1)), 1)
    scratch = np.empty((min(step, m), d), dtype=np.float32)
    for lo in range(0, m, step):
        hi = min(lo + step, m)
        rows, projection = block[lo:hi], scratch[:hi - lo]
        # einsum, not BLAS: at k = 1 BLAS is no faster, and its threads, on a busy machine,
        # can make a product of a few thousand rows take ten times longer.
        coords = np.einsum("ij,kj->ik", rows, basis)
        coords[keep[lo:hi]] = 0.0
        np.einsum("ik,kj->ij", coords, basis, out=projection)
        np.subtract(rows, projection, out=projection)
        unit_rows(projection, out=out[lo:hi])
    return out


def equalize_rows(vectors: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray, basis: np.ndarray,
                  original_diff: np.ndarray | None = None) -> np.ndarray:
    """Equalize pairs of unit vectors about the subspace spanned by ``basis`` (k, d).

    For a pair ``(a, b)`` with mean ``mu``, let ``nu = mu - mu_B`` be the mean's part
    outside the subspace. Both words become ``nu + sqrt(1 - |nu|^2) (w_B - mu_B) / |w_B - mu_B|``
    (Bolukbasi et al., Equalize step): they share ``nu``, so every vector orthogonal to
    the subspace has the same inner product with both, and their parts in the
    subspace are opposite, so the pair is symmetric about it; both stay unit length.
    With ``k = 1`` this is the authors' code: ``a = y + z g``, ``b = y - z g`` with
    ``y`` the mean without its gender part, ``z = sqrt(1 - |y|^2)`` signed by
    ``(a - b) . g``.

    ``original_diff`` (m, k), optional: the subspace coordinates of ``a - b`` before
    neutralization. It orients a pair whose two words were both neutralized (neither
    is in the gender-specific list), where the current difference is rounding noise;
    the authors' code takes the sign of that noise, which makes the result arbitrary.

    ``vectors[rows_a]`` and ``vectors[rows_b]`` are overwritten. Returns a boolean mask of
    the pairs that were left alone because both words have the same part in the
    subspace (no direction to equalize along).
    """
    B = basis.astype(np.float64)
    a = vectors[rows_a].astype(np.float64)
    b = vectors[rows_b].astype(np.float64)
    mu = (a + b) / 2.0
    nu = mu - (mu @ B.T) @ B
    scale = np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", nu, nu), 0.0, None))[:, None]
    half = (a - b) @ B.T / 2.0          # coordinates of a_B - mu_B (and -(b_B - mu_B))
    norm = np.linalg.norm(half, axis=1)
    if original_diff is not None:
        weak = norm <= EQUALIZE_TOL
        half[weak] = np.asarray(original_diff, dtype=np.float64)[weak] / 2.0
        norm = np.linalg.norm(half, axis=1)
    degenerate = norm <= EQUALIZE_TOL
    ok = ~degenerate
    step = scale[ok] * ((half[ok] / norm[ok, None]) @ B)
    vectors[rows_a[ok]] = (nu[ok] + step).astype(vectors.dtype)
    vectors[rows_b[ok]] = (nu[ok] - step).astype(vectors.dtype)
    return degenerate


def equalize_forms(pair: tuple[str, str], as_written: bool = False) -> list[tuple[str, str]]:
    """The spellings of an equalize pair that hard debias equalizes.

    Bolukbasi et al.'s code equalizes the ``str.lower()``, ``str.title()`` and
    ``str.upper()`` forms of both words, not the pair as written (their list has
    ``Catholic_priest``, which becomes ``catholic_priest``, ``Catholic_Priest`` and
    ``CATHOLIC_PRIEST``). ``as_written=True`` puts the written pair first.
    """
    a, b = pair
    forms = [(a.lower(), b.lower()), (a.title(), b.title()), (a.upper(), b.upper())]
    if as_written:
        forms.insert(0, (a, b))
    return list(dict.fromkeys(forms))


class HardDebias(Debiaser):
    """Hard debiasing (neutralize + equalize) of Bolukbasi et al. (2016).

    A scikit-learn transformer over embeddings (see :class:`~embdebias.debias.Debiaser`):
    ``HardDebias().fit(emb).transform(emb)`` returns a new embedding.

    By default this is the authors' algorithm on their published lists (and it
    equals it to float32 rounding, see ``tests/test_hard.py``):

    1. the bias subspace is the PCA of the pair-centred unit vectors of the
       definitional pairs (:class:`~embdebias.subspace.BiasSubspace`);
    2. every vector is unit-normalized; **neutralize**: every word that is not in the
       gender-specific list, taken exactly as given, loses its projection on the
       subspace and is renormalized;
    3. **equalize**: for each equalize pair, its lower-, Title- and UPPER-case forms
       (not the pair as written), where both words exist, are moved to be symmetric
       about the subspace (:func:`equalize_rows`), so every neutral word is
       equidistant from them.

    One deliberate difference: when both words of an equalize form were neutralized
    (neither is gender-specific), the authors' code orients the pair by the sign of
    rounding noise; here it is oriented by the words' difference before
    neutralization (see :func:`equalize_rows`).

    ``case_variants=True`` (an option, off by default) also treats the lower-,
    Title- and UPPER-case forms of every gender-specific word as gender-specific
    and equalizes each pair as written too. It protects "She" and "KING" in a cased
    vocabulary, but the published full list holds noisy mixed-case entries
    ("NeW", "COUPLE", "Guys"), whose variants "new", "couple" and "guys" then
    escape neutralization. Measured on GloVe 6B 50d with the published lists
    (``python benchmarks/hard_reference.py``): 131 rows differ from the default,
    by up to 0.195 (largest coordinate), while the default differs from the per-word
    transcription of the authors' algorithm by at most 1.0e-7.

    Parameters
    ----------
    subspace : BiasSubspace, array or pairs, optional
        The bias subspace (see :func:`~embdebias.subspace.resolve_subspace`): a fitted
        one is used as is, an unfitted one is cloned and fitted; default: fitted on
        the embedding from ``definitional`` pairs with ``n_components`` components.
    definitional : list of pairs or str, optional
        Definitional pairs (default: the ``definitional_pairs`` of ``lists``).
    n_components : int, default 1
        Dimension ``k`` of the bias subspace.
    equalize : list of pairs or str, optional
        Equalize pairs (default: the ``equalize_pairs`` of ``lists``).
    gender_specific : list of str or str, optional
        Words exempt from neutralization (default: the ``gender_specific`` list of
        ``lists``; for "published" Bolukbasi et al.'s full list of 1,441 words).
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies every list not given
        (:mod:`embdebias.wordlists`).
    case_variants : bool, default False
        See above.
    chunk_rows : int
        Rows per chunk in :meth:`transform`.

    Attributes
    ----------
    subspace_ : BiasSubspace
    gender_specific_ : frozenset of str
        Words kept out of neutralization (with case variants if enabled).
    equalize_pairs_ : list of (str, str)
        The equalize forms found in the vocabulary, in list order.
    equalize_missing_ : list of (str, str)
        Equalize pairs none of whose forms has both words in the vocabulary.
    n_features_in_ : int
    """

    def __init__(self, subspace=None, *, definitional=None, n_components: int = 1, equalize=None,
                 gender_specific=None, lists: str = wordlists.DEFAULT_LISTS, case_variants: bool = False,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.equalize = equalize
        self.gender_specific = gender_specific
        self.lists = lists
        self.case_variants = case_variants
        self.chunk_rows = chunk_rows

    _suffix = "hard"

    def fit(self, embedding, y=None) -> "HardDebias":
        """Learn the bias subspace and resolve the word lists against ``embedding``."""
        emb = as_embedding(embedding)
        wordlists.check_lists(self.lists)
        self.subspace_ = resolve_subspace(self.subspace, emb, pairs=self.definitional,
                                          n_components=self.n_components, lists=self.lists)
        specific = wordlists.resolve_words(self.gender_specific, "gender_specific", self.lists)
        if self.case_variants:
            specific = case_variants(specific)
        pairs = wordlists.resolve_pairs(self.equalize, "equalize_pairs", self.lists)
        self.equalize_pairs_, self.equalize_missing_ = self._find_pairs(pairs, emb)
        self.gender_specific_ = frozenset(specific)
        self.n_features_in_ = emb.dim
        return self

    def run_info(self, embedding: Embedding) -> dict:
        """Equalize forms found and missing, gender-specific words listed and in the vocabulary."""
        emb = as_embedding(embedding)
        return {"equalize_pairs": len(self.equalize_pairs_), "equalize_pairs_missing": len(self.equalize_missing_),
                "gender_specific": len(self.gender_specific_),
                "gender_specific_in_vocabulary": int((emb.words.rows(sorted(self.gender_specific_)) >= 0).sum())}

    @classmethod
    def report_lines(cls, info: dict) -> list[str]:
        if not info:
            return []
        return [f"- hard debias: {info['equalize_pairs']} equalize forms equalized"
                + (f" ({info['equalize_pairs_missing']} pairs of the list not in the vocabulary)"
                   if info.get("equalize_pairs_missing") else "")
                + (f"; {info['gender_specific_in_vocabulary']:,} of {info['gender_specific']:,} "
                   f"gender-specific words in the vocabulary, kept; every other word neutralized"
                   if "gender_specific_in_vocabulary" in info else "")]

    def _find_pairs(self, pairs, emb: Embedding):
        found, missing, used = [], [], set()
        for pair, forms in zip(pairs, self._present_forms(pairs, emb), strict=True):
            if not forms:
                missing.append(pair)
            for a, b in forms:
                if a not in used and b not in used:  # a word is equalized once, with its first pair
                    used.update((a, b))
                    found.append((a, b))
        if missing:
            warnings.warn(f"equalize: {len(missing)} of {len(pairs)} pairs not in {emb.name}: "
                          + ", ".join(f"{a}/{b}" for a, b in missing[:15])
                          + (" ..." if len(missing) > 15 else ""), MissingWordsWarning, stacklevel=3)
        return found, missing

    def _present_forms(self, pairs, emb: Embedding) -> list[list[tuple[str, str]]]:
        """For each pair, its forms (:func:`equalize_forms`) with two different words both in ``emb``."""
        forms = [equalize_forms(pair, self.case_variants) for pair in pairs]
        flat = list(chain.from_iterable(forms))
        both = (emb.rows(list(chain.from_iterable(flat))) >= 0).reshape(-1, 2).all(axis=1)  # one lookup call
        present = {form for form, ok in zip(flat, both.tolist(), strict=True) if ok and form[0] != form[1]}
        return [[form for form in pair_forms if form in present] for pair_forms in forms]

    def _rows(self, emb: Embedding):
        """``(gender-specific mask, rows of the pairs' first words, of their second words)`` in ``emb``."""
        specific = list(self.gender_specific_)
        pairs = self.equalize_pairs_
        rows = emb.words.rows(specific + [a for a, _ in pairs] + [b for _, b in pairs])  # one lookup call
        mask = np.zeros(len(emb), dtype=bool)
        specific_rows = rows[:len(specific)]
        mask[specific_rows[specific_rows >= 0]] = True
        pair_rows = rows[len(specific):]
        if (pair_rows < 0).any():
            raise MissingWordsError(f"HardDebias: equalize words missing from {emb.name}; "
                                    f"transform the embedding it was fitted on", [])
        return mask, pair_rows[:len(pairs)], pair_rows[len(pairs):]

    def _prepare(self, emb: Embedding):
        basis = self.subspace_.components_.astype(np.float32)
        specific, rows_a, rows_b = self._rows(emb)
        fixed_rows, fixed = self._equalized_rows(emb, basis, specific, rows_a, rows_b)

        def neutralize(start, stop, block, out):
            neutralize_rows(block, out, specific[start:stop], basis)
            lo, hi = np.searchsorted(fixed_rows, (start, stop))
            out[fixed_rows[lo:hi] - start] = fixed[lo:hi]

        return neutralize, None

    def _equalized_rows(self, emb: Embedding, basis, specific, rows_a, rows_b):
        """``(rows, vectors)``: the final vectors of the equalize pairs' rows (rows sorted).

        Computed before the pass over the vocabulary from those rows alone (neutralize
        works row by row), so the pass writes every row once and never goes back.
        """
        pairs = self.equalize_pairs_
        if not pairs:
            return np.zeros(0, np.int64), np.zeros((0, emb.dim), np.float32)
        rows = np.unique(np.concatenate([rows_a, rows_b]))
        original = emb.take(rows)
        vectors = neutralize_rows(original, np.empty_like(original), specific[rows], basis)
        # The pairs' gender parts before neutralization orient pairs that lose them.
        components = self.subspace_.components_
        at_a, at_b = np.searchsorted(rows, rows_a), np.searchsorted(rows, rows_b)
        original_diff = (unit_rows(original[at_a].astype(np.float64))
                         - unit_rows(original[at_b].astype(np.float64))) @ components.T
        skipped = equalize_rows(vectors, at_a, at_b, components, original_diff)
        if skipped.any():
            warnings.warn("equalize: pairs with identical projections left alone: "
                          + ", ".join(f"{a}/{b}" for (a, b), s in zip(pairs, skipped, strict=True) if s), stacklevel=4)
        return rows, vectors
