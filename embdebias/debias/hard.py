"""Hard debiasing: neutralize and equalize (Bolukbasi et al., 2016, Section 5.1)."""

from __future__ import annotations

from itertools import chain
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._warn import warn
from .. import wordlists
from ..embedding import DEFAULT_CHUNK_ROWS, Embedding, as_embedding
from ..errors import EmbdebiasError, MissingWordsError, WordListError
from ..subspace import MissingWordsWarning, resolve_sets, resolve_subspace
from ._base import Debiaser, case_variants, place_rows, unit_rows
from ._params import WORD_LISTS, WORD_SET, WORD_SET_OR_NONE, WORD_SETS, Array

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


def equalize_rows(vectors: np.ndarray, rows: np.ndarray, basis: np.ndarray,
                  original_offsets: np.ndarray | None = None) -> np.ndarray:
    """Equalize sets of unit vectors about the subspace spanned by ``basis`` (c, d).

    Parameters
    ----------
    vectors : ndarray (n, d)
        Unit rows; the rows of the sets are overwritten.
    rows : ndarray (m, k) of int
        One equalize set a row (a pair for ``k = 2``): its words' rows in ``vectors``.
    basis : ndarray (c, d)
        Orthonormal rows spanning the subspace.
    original_offsets : ndarray (m, k, c), optional
        The subspace coordinates of every word minus its set's mean *before*
        neutralization. They orient a set whose words were all neutralized (none is
        attribute-specific), where the current offsets are rounding noise; Bolukbasi
        et al.'s code takes the sign of that noise, which makes the result arbitrary.

    Returns
    -------
    ndarray (m,) of bool
        The sets left alone because a word has the same part in the subspace as the
        set's mean (no direction to move it along).

    Notes
    -----
    For a set with mean ``mu``, let ``nu = mu - mu_B`` be the mean's part outside the
    subspace. Every word ``w`` becomes ``nu + sqrt(1 - |nu|^2) (w_B - mu_B) / |w_B - mu_B|``
    (Bolukbasi et al.'s Equalize step, which Manzini et al. apply to sets of ``k`` words):
    the words share ``nu``, so every vector orthogonal to the subspace has the same inner
    product with all of them, and all stay unit length. For a pair this is the authors'
    code: ``a = y + z g``, ``b = y - z g`` with ``y`` the mean without its gender part,
    ``z = sqrt(1 - |y|^2)`` signed by ``(a - b) . g``.
    """
    B = basis.astype(np.float64)
    x = vectors[rows].astype(np.float64)                       # (m, k, d)
    mu = x.mean(axis=1)
    nu = mu - (mu @ B.T) @ B
    scale = np.sqrt(np.clip(1.0 - np.einsum("ij,ij->i", nu, nu), 0.0, None))
    offsets = (x - mu[:, None, :]) @ B.T                         # coordinates of w_B - mu_B
    norm = np.linalg.norm(offsets, axis=2)
    if original_offsets is not None:
        weak = (norm <= EQUALIZE_TOL).any(axis=1)
        offsets[weak] = np.asarray(original_offsets, dtype=np.float64)[weak]
        norm = np.linalg.norm(offsets, axis=2)
    degenerate = (norm <= EQUALIZE_TOL).any(axis=1)
    ok = ~degenerate
    step = scale[ok, None, None] * ((offsets[ok] / norm[ok][:, :, None]) @ B)
    vectors[rows[ok]] = (nu[ok][:, None, :] + step).astype(vectors.dtype)
    return degenerate


def equalize_forms(pair: tuple[str, ...], as_written: bool = False) -> list[tuple[str, ...]]:
    """The spellings of an equalize pair (or set of ``k`` words) that hard debias equalizes.

    Bolukbasi et al.'s code equalizes the ``str.lower()``, ``str.title()`` and
    ``str.upper()`` forms of both words, not the pair as written (their list has
    ``Catholic_priest``, which becomes ``catholic_priest``, ``Catholic_Priest`` and
    ``CATHOLIC_PRIEST``); a set of ``k`` words has the same three forms. ``as_written=True``
    puts the written set first.
    """
    forms = [tuple(w.lower() for w in pair), tuple(w.title() for w in pair), tuple(w.upper() for w in pair)]
    if as_written:
        forms.insert(0, tuple(pair))
    return list(dict.fromkeys(forms))


#: What hard debias neutralizes (``neutralize=``): every word but the attribute-specific ones
#: (Bolukbasi et al., WEFE), or only the attribute's neutral words (Manzini et al.).
NEUTRALIZE_MODES = ("all", "neutral")


class HardDebias(Debiaser):
    """Hard debiasing (neutralize + equalize) of Bolukbasi et al. (2016), for ``k`` groups
    as Manzini et al. (2019) generalize it.

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

    With ``attribute=`` (race, religion or a user's attribute of ``k`` groups) the same
    three steps run on the attribute's lists: the subspace of its defining sets
    (``k - 1`` components by default), its specific words kept, its equalize sets of
    ``k`` words equalized (Manzini et al.'s multiclass hard debias). With gender's lists
    it is the gender algorithm above, unchanged.

    Which words are neutralized (``neutralize``): ``"all"`` (default) every word but the
    specific ones, as Bolukbasi et al. and WEFE's ``MulticlassHardDebias`` do;
    ``"neutral"`` only the attribute's ``neutral_words`` (gender: the professions), as
    Manzini et al.'s code does with its evaluation words; or a list of words. The
    default is ``"all"`` because the audit measures what is left in the whole
    vocabulary: after the ``"neutral"`` mode every other word keeps its bias. Every
    vector is unit-normalized in every mode.

    One deliberate difference: when all words of an equalize form were neutralized
    (none is specific), the authors' code orients the set by the sign of rounding
    noise; here it is oriented by the words' offsets before neutralization (see
    :func:`equalize_rows`). A word is equalized once, with the first set it is in
    (Manzini et al.'s race sets repeat words; their code equalizes a word again with
    every set, the last one winning).

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
        the embedding from ``definitional`` sets with ``n_components`` components.
    definitional : list of pairs or sets, or str, optional
        Definitional pairs or defining sets (default: the attribute's defining sets; for
        gender the ``definitional_pairs`` of ``lists``).
    n_components : int, optional
        Dimension of the bias subspace (default: the number of groups minus one).
    equalize : list of pairs or sets, or str, optional
        Equalize pairs or sets of ``k`` words (default: the attribute's equalize sets;
        for gender the ``equalize_pairs`` of ``lists``).
    gender_specific : list of str or str, optional
        Words exempt from neutralization (default: the attribute's specific words; for
        gender the ``gender_specific`` list of ``lists``, for "published" Bolukbasi et
        al.'s full list of 1,441 words).
    lists : {"published", "curated"}, default "published"
        The bundled list set that supplies every list not given
        (:mod:`embdebias.wordlists`).
    case_variants : bool, default False
        See above.
    attribute : Attribute or str, optional
        The protected attribute (:func:`embdebias.load_attribute`); not given: the attribute of a fitted
        ``subspace``, else gender (one that disagrees with the subspace's is an error).
    neutralize : {"all", "neutral"} or list of str, default "all"
        See above.
    chunk_rows : int
        Rows per chunk in :meth:`transform`.

    Attributes
    ----------
    subspace_ : BiasSubspace
    gender_specific_ : frozenset of str
        Words kept out of neutralization (with case variants if enabled).
    equalize_pairs_ : list of tuple of str
        The equalize forms found in the vocabulary, in list order (pairs, or sets of
        ``k`` words).
    equalize_missing_ : list of tuple of str
        Equalize sets none of whose forms has all its words in the vocabulary.
    neutralized_words_ : frozenset of str or None
        The only words neutralized (``neutralize`` other than ``"all"``), else None.
    n_features_in_ : int
    """

    def __init__(self, subspace=None, *, definitional=None, n_components: int | None = None, equalize=None,
                 gender_specific=None, lists: str = wordlists.DEFAULT_LISTS, case_variants: bool = False,
                 attribute=None, neutralize="all", chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.subspace = subspace
        self.definitional = definitional
        self.n_components = n_components
        self.equalize = equalize
        self.gender_specific = gender_specific
        self.lists = lists
        self.case_variants = case_variants
        self.attribute = attribute
        self.neutralize = neutralize
        self.chunk_rows = chunk_rows

    _suffix = "hard"
    #: Neutralize is a projection (equalize moves only its pairs' words): a run reports its
    #: certificate, of its unit-length rows (it has no edit before the scaling).
    linear = True
    _params_schema = {"subspace_": Array((None, "d"), subspace=True), "equalize_pairs_": WORD_SETS,
                      "equalize_missing_": WORD_LISTS, "gender_specific_": WORD_SET,
                      "neutralized_words_": WORD_SET_OR_NONE}
    #: Checked when a parameter file sets them (``fit`` checks the lists and modes it uses itself).
    _parameter_constraints = {
        "subspace": "no_validation", "definitional": "no_validation", "equalize": "no_validation",
        "gender_specific": "no_validation", "attribute": "no_validation",
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "lists": [StrOptions(set(wordlists.LIST_SETS))],
        "case_variants": ["boolean"],
        "neutralize": [StrOptions(set(NEUTRALIZE_MODES)), list, tuple],
        "chunk_rows": [Interval(Integral, 1, None, closed="left")],
    }

    def fit(self, embedding, y=None) -> "HardDebias":
        """Learn the bias subspace and resolve the word lists against ``embedding``."""
        emb = as_embedding(embedding)
        wordlists.check_lists(self.lists)
        attr = self._attribute()
        self.subspace_ = resolve_subspace(self.subspace, emb, pairs=self.definitional,
                                          n_components=self.n_components, lists=self.lists, attribute=attr)
        specific = specific_words(self.gender_specific, attr, self.lists)
        if self.case_variants:
            specific = case_variants(specific)
        sets = equalize_sets(self.equalize, attr, self.lists)
        self._check_set_size(sets)
        self.equalize_pairs_, self.equalize_missing_ = self._find_sets(sets, emb)
        self.gender_specific_ = frozenset(specific)
        self.neutralized_words_ = self._neutralized(attr)
        self.n_features_in_ = emb.dim
        return self

    def _check_set_size(self, sets) -> None:
        groups = self.subspace_.groups_
        bad = next((s for s in sets if groups and len(s) != len(groups)), None)
        if bad is not None:
            raise WordListError(f"equalize set {list(bad)!r} has {len(bad)} words; the bias subspace has "
                                f"{len(groups)} groups ({', '.join(groups)}): one word per group")

    def _neutralized(self, attr):
        """The words ``neutralize`` restricts neutralization to (None: every word but the specific ones)."""
        mode = self.neutralize
        if isinstance(mode, str):
            if mode not in NEUTRALIZE_MODES:
                raise EmbdebiasError(f"neutralize must be one of {', '.join(NEUTRALIZE_MODES)} or a list of words, "
                                     f"got {mode!r}")
            if mode == "all":
                return None
            return frozenset(neutral_words(attr, self.lists))
        return frozenset(wordlists.resolve_words(mode, "professions", self.lists))

    def run_info(self, embedding: Embedding) -> dict:
        """Equalize forms found and missing, gender-specific words listed and in the vocabulary."""
        emb = as_embedding(embedding)
        info = {"equalize_pairs": len(self.equalize_pairs_), "equalize_pairs_missing": len(self.equalize_missing_),
                "gender_specific": len(self.gender_specific_),
                "gender_specific_in_vocabulary": int((emb.words.rows(sorted(self.gender_specific_)) >= 0).sum())}
        if getattr(self, "neutralized_words_", None) is not None:
            info["neutralized_only"] = len(self.neutralized_words_)
        attr = getattr(self, "attribute_", None)
        if attr is not None:
            info["attribute"] = attr.name
        return info

    @classmethod
    def report_lines(cls, info: dict) -> list[str]:
        if not info:
            return []
        neutralized = ("every other word neutralized" if "neutralized_only" not in info
                       else f"only the {info['neutralized_only']:,} neutral words neutralized")
        return [f"- hard debias: {info['equalize_pairs']} equalize forms equalized"
                + (f" ({info['equalize_pairs_missing']} pairs of the list not in the vocabulary)"
                   if info.get("equalize_pairs_missing") else "")
                + (f"; {info['gender_specific_in_vocabulary']:,} of {info['gender_specific']:,} "
                   f"{info.get('attribute', 'gender')}-specific words in the vocabulary, kept; {neutralized}"
                   if "gender_specific_in_vocabulary" in info else "")]

    def _find_sets(self, sets, emb: Embedding):
        found, missing, used = [], [], set()
        for words, forms in zip(sets, self._present_forms(sets, emb), strict=True):
            if not forms:
                missing.append(words)
            for form in forms:
                if used.isdisjoint(form):  # a word is equalized once, with its first set
                    used.update(form)
                    found.append(form)
        if missing:
            warn(f"equalize: {len(missing)} of {len(sets)} {'pairs' if len(sets[0]) == 2 else 'sets'} "
                 f"not in {emb.name}: " + ", ".join("/".join(m) for m in missing[:15])
                 + (" ..." if len(missing) > 15 else ""), MissingWordsWarning)
        return found, missing

    def _present_forms(self, sets, emb: Embedding) -> list[list[tuple[str, ...]]]:
        """For each set, its forms (:func:`equalize_forms`) of different words all in ``emb``."""
        forms = [equalize_forms(words, self.case_variants) for words in sets]
        flat = list(chain.from_iterable(forms))
        found = emb.rows(list(chain.from_iterable(flat))) >= 0  # one lookup call
        present, at = set(), 0
        for form in flat:
            if found[at:at + len(form)].all() and len(set(form)) == len(form):
                present.add(form)
            at += len(form)
        return [[form for form in set_forms if form in present] for set_forms in forms]

    def _rows(self, emb: Embedding):
        """``(mask of the rows neutralize keeps, (m, k) rows of the equalize sets)`` in ``emb``."""
        specific = list(self.gender_specific_)
        neutral = sorted(getattr(self, "neutralized_words_", None) or ())
        sets = self.equalize_pairs_
        set_words = [w for form in sets for w in form]
        rows = emb.words.rows(specific + neutral + set_words)  # one lookup call
        specific_rows = rows[:len(specific)]
        if neutral:
            keep = np.ones(len(emb), dtype=bool)
            neutral_rows = rows[len(specific):len(specific) + len(neutral)]
            keep[neutral_rows[neutral_rows >= 0]] = False
        else:
            keep = np.zeros(len(emb), dtype=bool)
        keep[specific_rows[specific_rows >= 0]] = True
        set_rows = rows[len(specific) + len(neutral):]
        if (set_rows < 0).any():
            raise MissingWordsError(f"HardDebias: equalize words missing from {emb.name}; "
                                    f"transform the embedding it was fitted on", [])
        k = len(sets[0]) if sets else 2
        return keep, set_rows.reshape(len(sets), k)

    def _prepare(self, emb: Embedding):
        basis = self.subspace_.components_.astype(np.float32)
        keep, set_rows = self._rows(emb)
        fixed_rows, fixed = self._equalized_rows(emb, basis, keep, set_rows)

        def neutralize(rows, block, out):
            neutralize_rows(block, out, keep[rows], basis)
            place_rows(out, rows, fixed_rows, fixed)

        return neutralize

    def _equalized_rows(self, emb: Embedding, basis, keep, set_rows):
        """``(rows, vectors)``: the final vectors of the equalize sets' rows (rows sorted).

        Computed before the pass over the vocabulary from those rows alone (neutralize
        works row by row), so the pass writes every row once and never goes back.
        """
        sets = self.equalize_pairs_
        if not sets:
            return np.zeros(0, np.int64), np.zeros((0, emb.dim), np.float32)
        rows = np.unique(set_rows)
        original = emb.take(rows)
        vectors = neutralize_rows(original, np.empty_like(original), keep[rows], basis)
        # The sets' parts in the subspace before neutralization orient sets that lose them.
        at = np.searchsorted(rows, set_rows)
        unit = unit_rows(original.astype(np.float64))[at]
        original_offsets = (unit - unit.mean(axis=1, keepdims=True)) @ self.subspace_.components_.T
        skipped = equalize_rows(vectors, at, self.subspace_.components_, original_offsets)
        if skipped.any():
            warn("equalize: sets with a word whose projection is its set's mean's, left alone: "
                 + ", ".join("/".join(s) for s, bad in zip(sets, skipped, strict=True) if bad))
        return rows, vectors


def specific_words(given, attr, lists: str) -> list[str]:
    """The words kept out of neutralization: ``given``, else the attribute's (gender's: the
    gender-specific list of ``lists``); with no attribute (sets of no named attribute), none."""
    if given is None:
        return list(attr.specific_words) if attr is not None else []
    return wordlists.resolve_words(given, "gender_specific", lists)


def equalize_sets(given, attr, lists: str) -> list[tuple[str, ...]]:
    """The sets hard debias equalizes: ``given``, else the attribute's (gender's: the equalize
    pairs of ``lists``); with no attribute, none."""
    if given is None:
        return list(attr.equalize_sets) if attr is not None else []
    return resolve_sets(given, lists, role="equalize_pairs")


def neutral_words(attr, lists: str) -> list[str]:
    """The attribute's neutral words (gender's: the professions of ``lists``); none without an attribute."""
    return list(attr.neutral_words) if attr is not None else []
