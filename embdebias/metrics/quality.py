r"""What debiasing costs: word-similarity correlation and analogy accuracy.

* :func:`word_similarity` -- Spearman's rank correlation between the cosine similarity
  of word pairs and human ratings, on WordSim353 (``wordsim353.tsv``) or SimLex-999
  (``simlex999.txt``), the copies gensim ships in ``gensim/test/test_data/``, or any
  file in the same format (``#`` comments; ``word1<TAB>word2<TAB>score``).
* :func:`analogy` -- accuracy on the Google analogy questions (``questions-words.txt``,
  ``: section`` headers, ``a b c d`` per line) by 3CosAdd: the answer to *a : b :: c : ?*
  is the word ``x`` maximizing :math:`\cos(x, \hat b - \hat a + \hat c)` (hats: unit
  vectors), excluding ``a``, ``b`` and ``c``.  As is common (Mikolov et al. 2013; gensim's
  ``evaluate_word_analogies``) both the question words and the candidates are restricted
  to the ``restrict_vocab`` most frequent words (the first rows; default 30,000), and a
  question with a word outside them is not scored but counted as out of vocabulary.
  Scoring: the dot products of the few distinct question words with the unit-normalized
  restricted vocabulary, combined per question (:func:`analogy_answers`), about 20 times
  fewer multiply-adds than one product per question, and after the most frequent words only
  the sub-blocks of candidates whose upper bound reaches a question's best so far are
  scored (the answers are the same as scoring all of them); a best answer ahead of the next by
  less than float32 rounding is decided in float64 (earlier versions let the rounding of
  one float32 product decide such near ties).

Case: a word whose exact form is missing is looked up in lowercase (``lowercase=True``),
as for the bias metrics; gensim instead compares upper-cased forms.  For a lowercase
vocabulary (GloVe) the two are the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._case import rows_with_lowercase
from .._rows import unit_rows
from .._threads import one_thread
from ..data.wordlists import _stamp, read_text
from ..errors import EmbdebiasError, WordListError
from .base import N_SCORED, Metric, Option, positive_int, register, string_tuple
from ._common import MetricResult, as_emb
from ._resample import EXACT_RANK_SUMS, Sample, mean_of, per_draw, rank_row_dot, ranks_in_resamples

#: Known evaluation files (name -> file in gensim's test data).
DATASETS = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt",
            "google_analogy": "questions-words.txt"}


def dataset_path(name_or_path) -> Path:
    """Path of a known dataset name (see :data:`DATASETS`) or of a given file.

    A known name is a file of gensim's bundled test data (``gensim/test/test_data/``, where
    ``gensim.test.utils.datapath`` looks), found without importing gensim: importing it
    (all of gensim) cost about 0.7 s of every evaluation."""
    s = str(name_or_path)
    if s in DATASETS:
        return _gensim_test_data() / DATASETS[s]
    p = Path(s)
    if not p.is_file():
        raise WordListError(f"{s}: evaluation file not found (known names: {', '.join(DATASETS)})")
    return p


def _gensim_test_data() -> Path:
    """gensim's test-data folder, from where the installed package is (not importing it)."""
    from importlib.util import find_spec

    spec = find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise WordListError("the bundled evaluation files (wordsim353, simlex999, google_analogy) are gensim's "
                            "test data: install gensim, or give the path of a file")
    return Path(next(iter(spec.submodule_search_locations))) / "test" / "test_data"


def _word_rows(vocab, words, lowercase: bool) -> np.ndarray:
    """Rows of ``words`` (any shape of nested lists) with the lower-case fallback; -1 if missing."""
    flat = np.asarray(words, dtype=object)
    unique, inverse = np.unique(flat.ravel().astype(str), return_inverse=True)
    rows, _ = rows_with_lowercase(vocab, unique.tolist(), lowercase)
    return rows[inverse].reshape(flat.shape)


@dataclass
class SimilarityResult(MetricResult):
    """Result of :func:`word_similarity`."""

    spearman: float
    pearson: float
    n_pairs: int
    n_oov: int
    oov_pairs: list[tuple[str, str]]
    dataset: str
    missing: dict[str, list[str]] = field(default_factory=dict)

    value_field = "spearman"

    @property
    def n_scored(self) -> int:
        """Word pairs scored."""
        return self.n_pairs

    @property
    def oov_ratio(self) -> float:
        total = self.n_pairs + self.n_oov
        return self.n_oov / total if total else 0.0


def read_word_pairs(path) -> list[tuple[int, str, str, float]]:
    """``(line, word1, word2, score)`` rows of a word-similarity file."""
    path = Path(path)
    out = []
    for lineno, raw in enumerate(read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if len(parts) < 3:
            raise WordListError(f"{path}:{lineno}: expected 'word1<TAB>word2<TAB>score', got {line!r}")
        try:
            score = float(parts[2])
        except ValueError:
            raise WordListError(f"{path}:{lineno}: score {parts[2]!r} is not a number") from None
        out.append((lineno, parts[0].strip(), parts[1].strip(), score))
    if not out:
        raise WordListError(f"{path}: no word pairs")
    return out


def word_similarity(embedding, dataset="wordsim353", *, restrict_vocab: int | None = None,
                    lowercase: bool = True) -> SimilarityResult:
    """Spearman (and Pearson) correlation of cosine similarity with human scores.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    dataset : str or path, default "wordsim353"
        "wordsim353", "simlex999" or a file in the same format.
    restrict_vocab : int, optional
        Only use the first ``restrict_vocab`` words (default: all).
    lowercase : bool, default True
        Fall back to lowercase forms of missing words.
    """
    return _similarity(embedding, dataset, restrict_vocab=restrict_vocab, lowercase=lowercase)[0]


def _similarity(embedding, dataset, *, restrict_vocab: int | None = None, lowercase: bool = True):
    """``(SimilarityResult, Sample)``: the result of :func:`word_similarity` and the pairs it was
    computed from (keyed by line number), for the bootstrap over pairs."""
    from scipy.stats import pearsonr, spearmanr

    emb = as_emb(embedding)
    if restrict_vocab is not None:
        emb = emb.head(restrict_vocab)
    path = dataset_path(dataset)
    rows = read_word_pairs(path)
    pair_rows = _word_rows(emb.words, [[a, b] for _, a, b, _ in rows], lowercase).reshape(-1, 2)
    r1, r2 = pair_rows[:, 0], pair_rows[:, 1]
    ok = (r1 >= 0) & (r2 >= 0)
    oov_pairs = [(a, b) for (_, a, b, _), k in zip(rows, ok) if not k]
    missing = sorted({w for (_, a, b, _), (ra, rb) in zip(rows, pair_rows) for w, r in ((a, ra), (b, rb)) if r < 0})
    if ok.sum() < 3:
        raise EmbdebiasError(f"{path.name}: only {int(ok.sum())} word pairs are in the vocabulary of {emb.name}")
    u1 = unit_rows(emb.take(r1[ok], np.float64))
    u2 = unit_rows(emb.take(r2[ok], np.float64))
    sims = np.einsum("ij,ij->i", u1, u2)
    human = np.array([s for (_, _, _, s), k in zip(rows, ok) if k])
    result = SimilarityResult(
        spearman=float(spearmanr(sims, human).statistic), pearson=float(pearsonr(sims, human).statistic),
        n_pairs=int(ok.sum()), n_oov=int((~ok).sum()), oov_pairs=oov_pairs,
        dataset=DATASETS_NAME.get(path.name, str(path)), missing={"words": missing})
    keys = [str(line) for (line, _, _, _), k in zip(rows, ok) if k]
    return result, Sample({"items": keys}, spearman_of(sims, human), fairer="higher")


def spearman_of(x, y):
    """``stat`` of Spearman's rho of paired values ``x``, ``y`` (one set "items"): the Pearson
    correlation of the ranks within each resample (ties averaged, as :func:`scipy.stats.spearmanr`;
    the ranks by :func:`~embdebias.metrics._resample.ranks_in_resamples`, without a sort per resample).

    The human scores ``y`` are every column's: their centred ranks on a draw are computed once
    for all the columns scored on it (:func:`_shared_centred_ranks`)."""
    rank_x, rank_y = _centred_ranks(np.asarray(x, np.float64)), _shared_centred_ranks(np.asarray(y, np.float64))

    def stat(idx):
        (rx, ssx), (ry, ssy) = rank_x(idx["items"]), rank_y(idx["items"])
        with np.errstate(all="ignore"):
            return rank_row_dot(rx, ry) / np.sqrt(ssx * ssy)
    return stat


def _centred_ranks(values: np.ndarray):
    """``ranks(idx) -> (ranks centred per row, their sums of squares)`` of ``values`` in each resample.

    A row's ranks sum to ``n (n + 1) / 2`` whatever the ties, a sum of halves exact in float64,
    so their mean is ``(n + 1) / 2`` exactly: the centre is that number, not a mean computed
    again per row (the same float); the sums of squares by
    :func:`~embdebias.metrics._resample.rank_row_dot` (exact, the same float).
    ``tests/test_bootstrap_fast.py`` compares both with the plain form."""
    rank = ranks_in_resamples(values)

    def centred(idx):
        r = rank(idx)
        if r.shape[1] > EXACT_RANK_SUMS:
            r -= r.mean(axis=1, keepdims=True)
        else:
            r -= (r.shape[1] + 1) / 2.0
        return r, rank_row_dot(r, r)
    return centred


@lru_cache(maxsize=8)
def _shared_by_content(data: bytes, shape: tuple):
    return per_draw(_centred_ranks(np.frombuffer(data, np.float64).reshape(shape)))


def _shared_centred_ranks(values: np.ndarray):
    """:func:`_centred_ranks` of ``values``, one per distinct content (a data set's human scores,
    the same in every column), each draw's answer kept while the draw lives (:func:`per_draw`)."""
    return _shared_by_content(np.ascontiguousarray(values).tobytes(), values.shape)


DATASETS_NAME = {v: k for k, v in DATASETS.items()}


@dataclass
class AnalogyResult(MetricResult):
    """Result of :func:`analogy`.

    ``accuracy`` is over the scored questions; ``sections`` maps each section to
    ``[correct, scored, out_of_vocabulary]``; ``missing["words"]`` lists the question
    words outside the restricted vocabulary.
    """

    accuracy: float
    semantic_accuracy: float
    syntactic_accuracy: float
    n_correct: int
    n_questions: int
    n_oov: int
    restrict_vocab: int
    sections: dict[str, list[int]]
    dataset: str
    missing: dict[str, list[str]] = field(default_factory=dict)

    value_field = "accuracy"

    @property
    def n_scored(self) -> int:
        """Questions scored."""
        return self.n_questions


def read_analogies(path) -> list[tuple[str, list[tuple[str, str, str, str]]]]:
    """``[(section, [(a, b, c, d), ...]), ...]`` from a questions-words-format file.

    Parsed once per version of the file (its path, modification and change times, inode and
    size): evaluating several embeddings reads the questions once.
    """
    return [(name, list(questions)) for name, questions in _read_analogies_cached(*_stamp(Path(path)))]


@lru_cache(maxsize=4)
def _read_analogies_cached(path: Path, version: tuple = ()) -> tuple:
    sections: list[tuple[str, list]] = []
    for lineno, raw in enumerate(read_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(":"):
            sections.append((line[1:].strip(), []))
            continue
        parts = line.split()
        if len(parts) != 4:
            raise WordListError(f"{path}:{lineno}: expected four words 'a b c d', got {line!r}")
        if not sections:
            raise WordListError(f"{path}:{lineno}: question before the first ': section' line")
        sections[-1][1].append(tuple(parts))
    return tuple((name, tuple(questions)) for name, questions in sections)


def analogy(embedding, dataset="google_analogy", *, restrict_vocab: int = 30_000,
            lowercase: bool = True, batch_size: int = 512) -> AnalogyResult:
    """3CosAdd accuracy on analogy questions (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    dataset : str or path, default "google_analogy"
        "google_analogy" (gensim's ``questions-words.txt``) or a file in that format.
    restrict_vocab : int, default 30_000
        Questions and candidate answers use only the first ``restrict_vocab`` words.
    lowercase : bool, default True
        Fall back to lowercase forms of missing words.
    batch_size : int
        Questions per block of scores (memory: ``batch_size`` x 1,024 floats).
    """
    return _analogy(embedding, dataset, restrict_vocab=restrict_vocab, lowercase=lowercase,
                    batch_size=batch_size)[0]


def _analogy(embedding, dataset="google_analogy", *, restrict_vocab: int = 30_000, lowercase: bool = True,
             batch_size: int = 512):
    """``(AnalogyResult, {statistic: Sample})``: :func:`analogy`'s result and, per accuracy, the
    scored questions (keyed by their place in the file) with whether each was answered."""
    emb = as_emb(embedding)
    if restrict_vocab < 1:
        raise EmbdebiasError(f"restrict_vocab must be >= 1, got {restrict_vocab}")
    head = emb.head(restrict_vocab)
    path = dataset_path(dataset)
    names, section_of, syntactic, distinct, word_of = _analogy_questions(path)
    rows, _ = rows_with_lowercase(head.words, distinct, lowercase)
    quads = rows[word_of]
    ok = (quads >= 0).all(axis=1)
    q_ok = quads[ok]
    correct = np.zeros(len(quads), dtype=bool)
    if q_ok.size:
        vocab = unit_rows(head.take(slice(0, len(head))))
        correct[np.flatnonzero(ok)] = analogy_answers(vocab, q_ok[:, :3], batch_size) == q_ok[:, 3]
    per_section = {}
    for si, name in enumerate(names):
        m = section_of == si
        per_section[name] = [int(correct[m].sum()), int((m & ok).sum()), int((m & ~ok).sum())]

    def acc(mask):
        n = int((mask & ok).sum())
        return float(correct[mask].sum() / n) if n else float("nan")

    everything = np.ones(len(quads), dtype=bool)
    samples = {stat: Sample({"items": [str(i) for i in np.flatnonzero(mask & ok)]},
                            mean_of(correct[mask & ok]), fairer="higher")
               for stat, mask in (("accuracy", everything), ("semantic_accuracy", ~syntactic),
                                  ("syntactic_accuracy", syntactic))}
    result = AnalogyResult(
        accuracy=acc(everything), semantic_accuracy=acc(~syntactic), syntactic_accuracy=acc(syntactic),
        n_correct=int(correct.sum()), n_questions=int(ok.sum()), n_oov=int((~ok).sum()),
        restrict_vocab=int(restrict_vocab), sections=per_section,
        dataset=DATASETS_NAME.get(path.name, str(path)),
        missing={"words": sorted(word for word, row in zip(distinct, rows.tolist(), strict=True) if row < 0)})
    return result, samples


def _analogy_questions(path: Path) -> tuple:
    """``(section names, section of each question, whether each is syntactic, the distinct
    words (sorted), each question's four words as indices into them)`` of a questions file.

    Depends only on the file (its version, as :func:`read_analogies`): every column of an
    evaluation looks up the same few hundred distinct words instead of sorting the ~78,000
    words of the questions again. The arrays are read-only (shared through the cache).
    """
    return _analogy_questions_cached(*_stamp(Path(path)))


@lru_cache(maxsize=4)
def _analogy_questions_cached(path: Path, version: tuple = ()) -> tuple:
    sections = _read_analogies_cached(path, version)
    names = tuple(name for name, _ in sections)
    section_of = np.array([si for si, (_, qs) in enumerate(sections) for _ in qs], dtype=np.int64)
    syntactic = np.array([name.startswith("gram") for name in names], dtype=bool)[section_of]
    flat = np.array([word for _, qs in sections for q in qs for word in q], dtype=str)
    distinct, inverse = np.unique(flat, return_inverse=True)
    word_of = inverse.astype(np.int64).reshape(-1, 4)
    for array in (section_of, syntactic, word_of):
        array.flags.writeable = False
    return names, section_of, syntactic, distinct.tolist(), word_of


#: Candidate columns per block of analogy scores: the block of question-word x candidate
#: dot products (a few MB) stays in the cache while every question reads it.
_ANALOGY_COLUMNS = 1024

#: Candidate columns per sub-block of a pruned block (see :func:`analogy_answers`): on GloVe
#: 6B 50d, about 3% of (question, sub-block of 16) pairs can hold a contender after the first
#: block, 7% of sub-blocks of 32; smaller sub-blocks prune more but cost more bounds.
_ANALOGY_SUB_COLUMNS = 16


#: The most frequent candidates, scored for every question: their best seeds the pruning.
_ANALOGY_SEED_COLUMNS = 256


def rounding_margin(dim: int) -> float:
    """A score gap that float32 rounding cannot close, for 3CosAdd scores of unit vectors.

    A float32 dot product of two unit vectors of ``dim`` components is within
    ``gamma = dim u / (1 - dim u)`` (``u = 2**-24``) of its exact value; a score is three of
    them and two additions, so within ``3 gamma + 8 u``; two scores compared, twice that;
    and twice again for safety.
    """
    u = 2.0 ** -24
    gamma = dim * u / (1.0 - dim * u)
    return 4.0 * (3.0 * gamma + 8.0 * u)


def analogy_answers(vocab: np.ndarray, abc: np.ndarray, batch_size: int = 512,
                    columns: int = _ANALOGY_COLUMNS, sub_columns: int = _ANALOGY_SUB_COLUMNS,
                    seed_columns: int = _ANALOGY_SEED_COLUMNS) -> np.ndarray:
    r"""3CosAdd answers: for each row ``(a, b, c)`` of ``abc``, the row ``x`` of ``vocab``
    (unit vectors) other than ``a``, ``b``, ``c`` maximizing :math:`x \cdot (b - a + c)`.

    The score is :math:`x \cdot b - x \cdot a + x \cdot c`, so rather than one matrix
    product per question (questions x vocabulary x dimension multiply-adds), the dot
    products of the few distinct question words with each block of candidates are computed
    once and combined per question (:math:`x \cdot b - x \cdot a` once per distinct pair).
    The answer is decided in float64: a question whose best float32 score is not ahead of
    every other by more than :func:`rounding_margin` has its contenders re-scored exactly,
    so ties closer than float32 rounding go to the float64 winner (and exact ties to the
    first row), never to the rounding of one way of summing.

    Parameters
    ----------
    vocab : ndarray of shape (n, dim), float32
        Unit rows (the candidates).
    abc : ndarray of shape (questions, 3), int
        Rows of each question's ``a``, ``b`` and ``c``.
    batch_size : int, default 512
        Questions per batch of scores among the seed columns.
    columns : int, default 1024
        Candidates per block (one small product each).
    sub_columns : int, default 16
        Candidates per sub-block after the seed columns, the unit of pruning (a power of two).
    seed_columns : int, default 256
        The first (most frequent) candidates, scored for every question.

    Returns
    -------
    ndarray of shape (questions,), int64
        The row of each question's answer.

    Notes
    -----
    Let ``s(q, x) = fl(offset[q, x] + dot[c_q, x])`` be the float32 score of candidate ``x``
    for question ``q`` (``offset[q, x] = fl(dot[b_q, x] - dot[a_q, x])`` from the block's
    product, -inf for ``q``'s own words), ``B_q`` its best over all candidates and ``m`` the
    margin. The contenders of ``q`` are the candidates with ``s(q, x) >= fl(B_q - m)``; the
    float64 winner is always one of them (the margin exceeds twice the float32 error of a
    score), and :func:`_decide` picks it.

    *A floor*: each question's best so far ``b_q`` (always ``<= B_q``) starts from its best
    score over the question words themselves less two margins (:func:`_question_word_floor`),
    not from -inf: on the Google questions the answer is nearly always one of them.

    *Seed columns* (the ``seed_columns`` most frequent words, where most answers are): every
    score is computed; each batch of scores is read once for its rows' maxima, and only a row
    whose maximum is within the margin of its best so far is searched for its contenders
    (:func:`_near_best`). This raises ``b_q`` further.

    *The other candidates* are pruned by sub-blocks ``T`` of ``sub_columns`` candidates:
    rounding to nearest is monotone, so for every ``x`` in ``T``,
    ``s(q, x) <= fl(max_T offset[q] + max_T dot[c_q])``, the bound of ``(q, T)``, computed from
    the maxima of the distinct pairs and words (a few hundred rows each) by a gather and an
    add. A sub-block whose bound is below ``fl(b_q - m)`` holds no contender (``b_q <= B_q``,
    so ``fl(b_q - m) <= fl(B_q - m)``) and is not scored; the others are scored with the
    same float32 operations as the seed columns (so the same ``s``), ``b_q`` is raised to
    their maximum, and every candidate within the margin of it is kept. The maximum ``B_q``
    is never in a pruned sub-block, so the final ``b_q`` is ``B_q``, and the final filter
    against it leaves exactly the contenders above: the same set, so the same answers, as
    scoring every candidate (``tests/test_analogy_pruning.py`` compares the sets). The
    bounds themselves are pruned the same way, by coarse blocks of sub-blocks
    (:func:`_kept_sub_blocks`). On GloVe 6B 50d (30,000 words) about 3.5% of (question,
    sub-block) pairs after the seed columns are scored, on the first 30,000 rows of
    ``benchmarks/scale.py``'s 300-dimensional file 4.6% (5.7% and 6.9% without the floor).

    The products run on one thread: they are small (the distinct words by ``columns``
    candidates), and a second BLAS thread would spin on the other core through all the
    combining that follows each of them, doubling the CPU time for nothing. Neither choice
    changes an answer: those are decided in float64. Memory per block: the coarse bounds,
    questions x ``columns / (8 sub_columns)`` floats, the bounds of the sub-blocks they
    keep, and the kept sub-blocks' scores, ``batch_size x columns`` at a time; for the floor,
    the distinct words' own product and ``2 x batch_size`` of its rows.
    """
    return _decide(vocab, abc, *_contenders(vocab, abc, batch_size, columns, sub_columns, seed_columns))


def _contenders(vocab, abc, batch_size, columns, sub_columns, seed_columns) -> tuple[np.ndarray, np.ndarray]:
    """``(question, candidate)`` of every contender (see :func:`analogy_answers`)."""
    if sub_columns < 1 or sub_columns & (sub_columns - 1):
        raise EmbdebiasError(f"sub_columns must be a power of two, got {sub_columns}")
    n, dim = vocab.shape
    words, inverse = np.unique(abc, return_inverse=True)
    inverse = inverse.reshape(abc.shape)
    # the distinct (a, b) pairs as one integer each: a 1-D unique is ~15x faster than axis=0's
    # (same order, the rows sorted lexicographically)
    pair_keys, pair_of = np.unique(inverse[:, 0] * len(words) + inverse[:, 1], return_inverse=True)
    pairs = np.stack(np.divmod(pair_keys, len(words)), axis=1)
    pair_of = pair_of.reshape(-1)
    c_words = np.unique(inverse[:, 2], return_inverse=True)
    c_words_of = (inverse[:, 2], *c_words, np.empty(len(c_words[0]) * min(columns, n), dtype=np.float32))
    word_vectors = vocab[words]
    margin = np.float32(rounding_margin(dim))
    own_question, own_column = _own_words(abc)
    found = []                                         # (question, candidate, float32 score) near the best
    # the products and offsets of whole blocks go to reused buffers: a fresh array of a few MB
    # per block costs more in page faults than the product itself (the values are the same)
    dots_buffer = np.empty((len(words), min(columns, n)), dtype=np.float32)
    offsets_buffer = np.empty((2, len(pairs), min(columns, n)), dtype=np.float32)
    with one_thread():
        best = _question_word_floor(word_vectors, pairs, pair_of, inverse, margin, batch_size)  # raised below
        for start in range(0, n, columns):
            stop = min(n, start + columns)
            whole = stop - start == dots_buffer.shape[1]
            dots = np.matmul(word_vectors, vocab[start:stop].T, out=dots_buffer if whole else None)
            # mode="clip" (the rows are valid): take buffers its output with the default "raise"
            offsets = np.subtract(np.take(dots, pairs[:, 1], axis=0, out=offsets_buffer[0] if whole else None,
                                          mode="clip"),
                                  np.take(dots, pairs[:, 0], axis=0, out=offsets_buffer[1] if whole else None,
                                          mode="clip"),
                                  out=offsets_buffer[0] if whole else None)   # (distinct pairs, block)
            lo, hi = np.searchsorted(own_column, [start, stop])
            full = min(max(seed_columns - start, 0), stop - start)           # this block's columns scored in full
            split = np.searchsorted(own_column[lo:hi], start + full) + lo
            if full:
                found += _first_block(offsets[:, :full], dots[:, :full], pair_of, inverse[:, 2],
                                      (own_question[lo:split], own_column[lo:split] - start),
                                      best, margin, batch_size, start)
            if full < stop - start:
                found += _pruned_block(offsets[:, full:], dots[:, full:], pair_of, c_words_of,
                                       (own_question[split:hi], own_column[split:hi] - start - full),
                                       best, margin, start + full, sub_columns, batch_size * columns)
    question, candidate, score = (np.concatenate(parts) for parts in zip(*found, strict=True))
    near = score >= best[question] - margin
    return question[near], candidate[near]


def _question_word_floor(word_vectors, pairs, pair_of, inverse, margin, batch_size) -> np.ndarray:
    """A float32 lower bound of each question's best score ``B_q`` (see :func:`analogy_answers`):
    its best over the question words themselves (``word_vectors``, the distinct ``a``, ``b``,
    ``c``; on the Google questions the answer ``d`` is nearly always one of them) less twice
    the margin; -inf if they are all its own words.

    These scores ``s'`` come from a product of their own, whose float32 rounding may differ
    from the blocks' (another shape), but both are within ``m / 2`` of the exact score
    (:func:`rounding_margin`: ``m`` is four times one score's error bound), so
    ``fl(s' - 2m) <= s <= B_q``. Starting the pruning from it instead of -inf leaves every
    argument of :func:`analogy_answers` intact (the best so far never exceeds ``B_q``, the
    final best is still ``B_q``), so the same contenders, while about a third fewer sub-blocks
    are scored (1.90 -> 1.27 million per column at 300 dimensions, 1.58 -> 0.97 on GloVe 50d).
    """
    dots = word_vectors @ word_vectors.T
    offsets = dots[pairs[:, 1]] - dots[pairs[:, 0]]
    floor = np.empty(len(pair_of), dtype=np.float32)
    buffers = np.empty((2, min(batch_size, len(pair_of)), len(dots)), dtype=np.float32)   # reused: no page faults
    for q0 in range(0, len(pair_of), batch_size):
        q1 = min(len(pair_of), q0 + batch_size)
        scores = np.take(offsets, pair_of[q0:q1], axis=0, mode="clip", out=buffers[0, :q1 - q0])
        scores += np.take(dots, inverse[q0:q1, 2], axis=0, mode="clip", out=buffers[1, :q1 - q0])
        scores[np.arange(q1 - q0)[:, None], inverse[q0:q1]] = -np.inf         # a question's own words
        floor[q0:q1] = scores.max(axis=1)
    return floor - 2 * margin


def _first_block(offsets, dots, pair_of, c_of, own, best, margin, batch_size, start) -> list:
    """:func:`_near_best` over every score of the seed columns (candidates numbered from
    ``start``), in batches of ``batch_size`` questions; ``own`` is ``(question, column)`` of the
    questions' own words among them."""
    n_questions, width = len(pair_of), offsets.shape[1]
    block_question, block_column = _by_question(*own)
    # two reused buffers of (batch, block) scores: no allocation per batch
    buffers = np.empty((2, min(batch_size, n_questions), width), dtype=np.float32)
    found = []
    for q0 in range(0, n_questions, batch_size):
        q1 = min(n_questions, q0 + batch_size)
        scores = np.take(offsets, pair_of[q0:q1], axis=0, mode="clip", out=buffers[0, :q1 - q0])
        scores += np.take(dots, c_of[q0:q1], axis=0, mode="clip", out=buffers[1, :q1 - q0])
        e0, e1 = np.searchsorted(block_question, [q0, q1])
        scores[block_question[e0:e1] - q0, block_column[e0:e1]] = -np.inf   # a question's own words
        found += _near_best(scores, best[q0:q1], margin, q0, start)
    return found


def _pruned_block(offsets, dots, pair_of, c_words_of, own, best, margin, start, size, max_scores) -> list:
    """``[(question, candidate, score)]`` of a later block: every candidate within ``margin``
    of its question's best (updated), scoring only the sub-blocks of ``size`` columns whose
    bound reaches the best so far minus the margin (see :func:`analogy_answers`), at most
    ``max_scores`` scores at a time. Candidates are numbered from ``start``; ``c_words_of`` is
    as :func:`_kept_sub_blocks` takes it."""
    question, sub, offset_row, dot_row, n_sub = _kept_sub_blocks(offsets, dots, pair_of, c_words_of,
                                                                 best - margin, size)
    if not question.size:
        return []
    kept = question * n_sub + sub                                             # ascending
    own_key = own[0] * n_sub + own[1] // size
    at = np.minimum(np.searchsorted(kept, own_key), kept.size - 1)
    hit = kept[at] == own_key                                                 # own words in a kept sub-block
    order = np.argsort(at[hit], kind="stable")                                # in the order of the kept rows
    own_at, own_place = at[hit][order], own[1][hit][order] % size
    # the sub-blocks as rows: offsets[p, sub * size:(sub + 1) * size] is row p * n_sub + sub
    offsets, dots = _padded(offsets, n_sub * size).reshape(-1, size), _padded(dots, n_sub * size).reshape(-1, size)
    found = []
    step = max(1, max_scores // size)
    for k0 in range(0, kept.size, step):
        k1 = min(kept.size, k0 + step)
        scores = np.take(offsets, offset_row[k0:k1], axis=0)
        scores += np.take(dots, dot_row[k0:k1], axis=0)
        m0, m1 = np.searchsorted(own_at, [k0, k1])
        scores[own_at[m0:m1] - k0, own_place[m0:m1]] = -np.inf                # a question's own words
        found += _near_best_scored(scores, question[k0:k1], sub[k0:k1] * size + start, best, margin)
    return found


#: Sub-blocks per coarse block: a question's sub-blocks are bounded only inside the coarse
#: blocks (``_ANALOGY_FAN x sub_columns`` candidates) whose own bound it passes.
_ANALOGY_FAN = 8
_FAN_SHIFT = _ANALOGY_FAN.bit_length() - 1                                    # a power of two


def _kept_sub_blocks(offsets, dots, pair_of, c_words_of, threshold, size) -> tuple:
    """``(question, sub-block, its row of offsets, its row of dots, n_sub)`` of every
    (question, sub-block of ``size`` columns) whose bound reaches the question's
    ``threshold``, in (question, sub-block) order; a row is that of
    ``offsets`` or ``dots`` reshaped to rows of ``size`` columns (``p * n_sub + sub``).
    ``c_words_of`` is ``(each question's row of dots, the distinct such rows, each question's
    place among them, a buffer for their rows of dots)``.

    Two levels: the bound of a coarse block of ``_ANALOGY_FAN`` sub-blocks is at least each of
    theirs (a maximum of maxima), so a question below it in a coarse block is below it in every
    sub-block there; on GloVe about 30% of (question, coarse block) pairs pass, and only their
    sub-blocks are bounded. The block is padded with -inf to whole coarse blocks. The maxima of
    ``dots`` are taken over the rows of the questions' ``c`` words only (about half of the
    distinct words; the others are ``a`` or ``b`` words, which enter through ``offsets``).
    """
    n_coarse = -(-offsets.shape[1] // (size * _ANALOGY_FAN))
    n_sub = n_coarse * _ANALOGY_FAN
    c_of, c_words, c_rank, buffer = c_words_of
    # a reused buffer: a fresh array per block costs its page faults, as much as the maxima it saves
    c_dots = np.take(dots, c_words, axis=0, mode="clip",
                     out=buffer[:c_words.size * dots.shape[1]].reshape(c_words.size, -1))
    fine = [_sub_block_max(_padded(x, n_sub * size), n_sub) for x in (offsets, c_dots)]
    coarse = [_sub_block_max(x, n_coarse) for x in fine]
    bound = np.take(coarse[0], pair_of, axis=0)                               # (questions, coarse blocks)
    bound += np.take(coarse[1], c_rank, axis=0)
    question, block = np.divmod(np.flatnonzero(bound >= threshold[:, None]), n_coarse)
    # a coarse block's sub-blocks as one row: fine[0][p, block * fan:(block + 1) * fan] is row p * n_coarse + block
    offset_row = pair_of[question] * n_coarse + block
    bound = np.take(fine[0].reshape(-1, _ANALOGY_FAN), offset_row, axis=0)
    bound += np.take(fine[1].reshape(-1, _ANALOGY_FAN), c_rank[question] * n_coarse + block, axis=0)
    row = np.flatnonzero(bound >= threshold[question][:, None])
    row, place = row >> _FAN_SHIFT, row & (_ANALOGY_FAN - 1)              # divmod, without a division
    question, sub = question[row], block[row] * _ANALOGY_FAN + place
    return question, sub, offset_row[row] * _ANALOGY_FAN + place, c_of[question] * n_sub + sub, n_sub


def _padded(x: np.ndarray, width: int) -> np.ndarray:
    """``x`` with -inf columns up to ``width`` (the last block's last sub-block; no copy if none)."""
    if x.shape[1] == width:
        return x
    return np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=-np.inf)


def _sub_block_max(x: np.ndarray, n_sub: int) -> np.ndarray:
    """Maxima of ``n_sub`` equal runs of columns of ``x`` (their length a power of two), by
    halving: each step takes the larger of neighbouring columns, a pass over a strided view
    (twice as fast as ``np.maximum.reduceat`` and exact all the same)."""
    while x.shape[1] > n_sub:
        x = np.maximum(x[:, 0::2], x[:, 1::2])
    return x


def _near_best_scored(scores, question, first_column, best, margin) -> list:
    """``[(question, candidate, score)]`` of scored sub-blocks (rows of ``scores``, questions
    ascending, ``first_column`` the candidate of each row's first score, ``scores.shape[1]`` a
    power of two): each question's best is raised to its rows' maximum, then every finite
    score within ``margin`` of it is kept (-inf marks a question's own words and the padding
    of the last block).

    The scores within ``margin`` of the best *before* these rows are a superset (a best only
    rises) holding every score above that best, so their maxima raise it as the maxima of all
    the rows would; the superset is then narrowed to the raised best. One pass over the
    scores, not two (a row maximum per question, then the comparison).
    """
    size = scores.shape[1]
    flat = scores.ravel()
    hits = np.flatnonzero(scores >= (best[question] - margin)[:, None])
    hits = hits[flat[hits] > -np.inf]
    row, place = hits >> (size.bit_length() - 1), hits & (size - 1)          # divmod, without a division
    hit_question, hit_score = question[row], flat[hits]
    np.maximum.at(best, hit_question, hit_score)
    near = hit_score >= best[hit_question] - margin
    return [(hit_question[near], first_column[row[near]] + place[near], hit_score[near])]


def _own_words(abc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(question, column)`` of every question's own words, in column order."""
    question = np.repeat(np.arange(len(abc)), abc.shape[1])
    column = abc.ravel()
    order = np.argsort(column, kind="stable")
    return question[order], column[order]


def _by_question(question: np.ndarray, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same pairs in question order (a batch of questions is then one slice)."""
    order = np.argsort(question, kind="stable")
    return question[order], column[order]


def _near_best(scores: np.ndarray, best: np.ndarray, margin, q0: int, start: int) -> list:
    """``[(question, candidate, score)]`` arrays of a block whose rows' best scores so far are
    ``best`` (updated): for each row whose block maximum is within ``margin`` of that best (no
    other row can hold a contender), its maximum, and for the rare such row whose runner-up is
    within ``margin`` of it, every candidate that close."""
    top = scores.max(axis=1)
    live = np.flatnonzero(top >= best - margin)
    np.maximum(best, top, out=best)
    if not live.size:
        return []
    sub = scores[live]
    col = sub.argmax(axis=1)
    out = [(live + q0, col + start, top[live])]
    sub[np.arange(live.size), col] = -np.inf
    edge = top[live] - margin
    close = np.flatnonzero(sub.max(axis=1) >= edge)
    if close.size:
        hit_q, hit_c = np.nonzero(sub[close] >= edge[close][:, None])
        out.append((live[close[hit_q]] + q0, hit_c + start, sub[close[hit_q], hit_c]))
    return out


def _decide(vocab: np.ndarray, abc: np.ndarray, question: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """The answer of every question among its contenders ``(question, candidate)``.

    A question with one contender gets it; the others are scored in float64 (a question's
    own words at -inf) and the highest wins, the first row on a tie.
    """
    answer = np.zeros(len(abc), dtype=np.int64)
    n_contenders = np.bincount(question, minlength=len(abc))
    single = n_contenders[question] == 1
    answer[question[single]] = candidate[single]
    q, c = question[~single], candidate[~single]
    if q.size:
        def rows(r):
            return vocab[r].astype(np.float64)

        exact = np.einsum("ij,ij->i", rows(abc[q, 1]) - rows(abc[q, 0]) + rows(abc[q, 2]), rows(c))
        exact[(abc[q] == c[:, None]).any(axis=1)] = -np.inf
        order = np.lexsort((c, -exact, q))             # per question: best score, then first row
        first = np.ones(order.size, dtype=bool)
        first[1:] = q[order[1:]] != q[order[:-1]]
        answer[q[order[first]]] = c[order[first]]
    return answer


@register
class Similarity(Metric):
    name, title = "similarity", "Word similarity"
    headline = (("*", "spearman", "higher (better)"),)
    function = "word_similarity"
    kind = "quality"
    legend = ("Spearman correlation of cosine similarity with human similarity ratings; higher "
              "means more of the semantic quality is kept.")
    statistics = {"spearman": "Spearman rho", N_SCORED: "pairs scored"}
    options = {"datasets": Option(("wordsim353", "simlex999"), "word-similarity data sets (names or files)",
                                  string_tuple)}

    def params(self, opts):
        return {"datasets": [str(d) for d in opts["datasets"]]}

    def units(self, ctx):
        return list(ctx.opts(self.name)["datasets"])

    def data(self, ctx):
        return f"{', '.join(map(str, ctx.opts(self.name)['datasets']))} (as shipped with gensim's test data)"

    def score(self, emb, unit, ctx):
        r, sample = _similarity(emb, unit, lowercase=ctx.lowercase)
        return r, {unit: {"spearman": r.spearman, N_SCORED: r.n_scored}}, {(unit, "spearman"): sample}


@register
class Analogy(Metric):
    name, title = "analogy", "Analogy"
    headline = (("", "accuracy", "higher (better)"),)
    function = "analogy"
    kind = "quality"
    legend = ("3CosAdd accuracy on the Google analogy questions; higher means more of the semantic "
              "quality is kept. Only questions whose four words are among the most frequent words "
              "(see Data) are scored.")
    statistics = {"accuracy": "accuracy", "semantic_accuracy": "semantic accuracy",
                  "syntactic_accuracy": "syntactic accuracy", N_SCORED: "questions scored"}
    options = {"restrict_vocab": Option(30_000, "questions and answers among this many most frequent words",
                                        positive_int)}

    def units(self, ctx):
        return ["google_analogy"]

    def data(self, ctx):
        n = ctx.opts(self.name)["restrict_vocab"]
        return (f"Google analogy questions (gensim's test data); questions and answers restricted to "
                f"the {n:,} most frequent words, as gensim does: a question "
                f"with a word outside them is not scored (its words are listed as out of vocabulary)")

    def score(self, emb, unit, ctx):
        r, samples = _analogy(emb, restrict_vocab=ctx.opts(self.name)["restrict_vocab"], lowercase=ctx.lowercase)
        return r, {unit: {"accuracy": r.accuracy, "semantic_accuracy": r.semantic_accuracy,
                          "syntactic_accuracy": r.syntactic_accuracy, N_SCORED: r.n_scored}}, \
            {(unit, stat): sample for stat, sample in samples.items()}
