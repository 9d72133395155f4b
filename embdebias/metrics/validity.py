r"""Validity against human norms: ValNorm (Toney & Caliskan 2021) and WAT (Du, Wu & Lan 2019).

* ``valnorm``: for each word of a valence lexicon, the single-category WEAT effect size
  (SC-WEAT) against Caliskan et al.'s 25 pleasant and 25 unpleasant words (WEAT 1's ``A`` and
  ``B``): :math:`(\operatorname{mean}_a \cos(w, a) - \operatorname{mean}_b \cos(w, b)) /
  \operatorname{std}_{x \in A \cup B} \cos(w, x)` (``ddof=1``, as the rest of embdebias), and
  Pearson's r between these and the lexicon's human valence ratings. Higher is better: a
  debiaser that lowers it removed some of the embedding's agreement with human valence, a cost
  the similarity and analogy tests miss.
* ``wat``: for each word of a gender-association lexicon, its mean association with the
  definitional pairs, :math:`\operatorname{mean}_{(x, y)} (\cos(w, x) - \cos(w, y))` with ``x``
  the female word of each pair (a positive score: female-associated), and Pearson's r with the
  human ratings (``orientation="male"`` when the file's positive ratings are male). It reads
  as a bias number: r near 0 means the embedding no longer carries the gender associations
  people make.

**Lexicons are never bundled** (Bellezza et al. 1986, ANEW and Warriner et al. 2013 for
valence; the WAT scores: restrictive or no licences). The user gives the file, in the format
of the facts tables (:mod:`embdebias.data.facts`): a header line, then one word and one rating
a line, separated by tabs or commas; ``value_column`` names the rating column (default the
second). A word listed twice, a rating that is not a number or a missing column is one line
naming the file and the line; lexicon words out of the vocabulary beyond ``max_missing``
name the file and the words. The interval of r is Fisher's z (and a bootstrap over the words
in :func:`~embdebias.evaluate.evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from ..errors import EmbdebiasError
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, fisher_z_interval
from .base import N_SCORED, Metric, Option, register
from .factual import pearson_of
from .trust import single_category_weat

#: The one line that says how to supply a lexicon (none is bundled).
LEXICON_HELP = ("is not bundled (the published lexicons carry restrictive or no licences): give your copy as a "
                "UTF-8 CSV or TSV file with a header and word, rating columns, e.g. options={{'{metric}': "
                "{{'lexicon': 'FILE'}}}} or on the command line embdebias run (or score) --lexicon {metric}=FILE")
#: The metrics that read a user's lexicon (``--lexicon METRIC=FILE`` of ``score`` and ``run``).
LEXICON_METRICS = ("valnorm", "wat")


def parse_lexicon_spec(text) -> tuple[str, str]:
    """``"valnorm=FILE"`` as ``(metric, path)``: the one reading of ``--lexicon`` (``score`` and ``run``).

    The metric is one of :data:`LEXICON_METRICS` (case-insensitive); anything else is an
    :class:`~embdebias.errors.EmbdebiasError` quoting the text. The file is read later, by the metric.
    """
    from ..errors import quote

    metric, sep, path = str(text).partition("=")
    metric = metric.strip().lower()
    if not sep or metric not in LEXICON_METRICS or not path.strip():
        raise EmbdebiasError(f"--lexicon takes METRIC=FILE with METRIC one of {', '.join(LEXICON_METRICS)}, "
                             f"got {quote(text)}")
    return metric, path.strip()


@dataclass
class ValidityResult(MetricResult):
    """Result of :func:`valnorm` and :func:`wat`.

    Attributes
    ----------
    r : float
        Pearson's r between the embedding's per-word scores and the human ratings.
    ci : tuple of float
        Its Fisher-z interval (95 %).
    spearman : float
        Spearman's rho of the same.
    scores, ratings : list of float
        Per word, in the order of ``words``.
    words : list of str
        The lexicon words scored.
    missing : dict
        ``{"lexicon": [words out of the vocabulary]}``, keyed by set as every metric's result
        (the report lists them by set).
    lexicon, column : str
        The file read and its rating column.
    """

    r: float
    ci: tuple
    spearman: float
    scores: list
    ratings: list
    words: list
    missing: dict
    lexicon: str = ""
    column: str = ""
    measure: str = ""
    extra: dict = field(default_factory=dict)

    value_field = "r"

    @property
    def n_scored(self) -> int:
        return len(self.words)


def read_lexicon(path, value_column: str | None = None, metric: str = "valnorm"):
    """The ``(words, ratings)`` of a user's lexicon file (see the module docstring); None is an error
    saying how to supply one."""
    from ..data.facts import read_facts

    if path is None:
        raise EmbdebiasError(f"{metric}: a lexicon " + LEXICON_HELP.format(metric=metric))
    table = read_facts(path, value_column=value_column)
    return table, list(table.values), np.array(list(table.values.values()), dtype=np.float64)


def _result(scores, ratings, look, table, measure) -> ValidityResult:
    from scipy.stats import spearmanr

    if len(look.words) < 4 or np.ptp(ratings) == 0 or np.ptp(scores) == 0:
        raise EmbdebiasError(f"{table.path}: {len(look.words)} lexicon word(s) scored; expected at least 4 "
                             f"words with ratings and scores that vary")
    r = float(np.corrcoef(scores, ratings)[0, 1])
    return ValidityResult(r, fisher_z_interval(r, len(scores)), float(spearmanr(scores, ratings).statistic),
                          scores.tolist(), ratings.tolist(), list(look.words), {"lexicon": list(look.missing)},
                          table.path,
                          table.column, measure)


def _positions(look, words) -> np.ndarray:
    """Rows of the lexicon of the words found (``look.words`` keeps the lexicon's spelling)."""
    where = {w: i for i, w in enumerate(words)}
    return np.array([where[w] for w in look.words], dtype=np.int64)


def _lexicon_lookup(emb, words, table, max_missing, lowercase):
    return lookup(emb, words, name=f"lexicon {table.path}", lowercase=lowercase, max_missing=max_missing)


def valnorm(embedding, lexicon, *, value_column: str | None = None, pleasant=None, unpleasant=None, ddof: int = 1,
            max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> ValidityResult:
    """ValNorm: Pearson's r between each lexicon word's SC-WEAT against pleasant and unpleasant
    words and its human valence rating (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or KeyedVectors
    lexicon : path
        The user's valence lexicon (header; word and rating columns).
    value_column : str, optional
        The rating column (default the second).
    pleasant, unpleasant : sequence of str, optional
        Attribute words (default Caliskan et al.'s 25 + 25, WEAT 1's).
    ddof : int
        Of the SC-WEAT's standard deviation.

    Returns
    -------
    ValidityResult
    """
    emb = as_emb(embedding)
    table, words, ratings = read_lexicon(lexicon, value_column, "valnorm")
    weat1 = wordlists.weat_test("weat1")
    a = lookup(emb, pleasant or weat1.A.words, name="pleasant", lowercase=lowercase, max_missing=max_missing)
    b = lookup(emb, unpleasant or weat1.B.words, name="unpleasant", lowercase=lowercase, max_missing=max_missing)
    look = _lexicon_lookup(emb, words, table, max_missing, lowercase)
    keep = _positions(look, words)
    scores = single_category_weat(unit_vectors(emb, look.rows), unit_vectors(emb, a.rows),
                                  unit_vectors(emb, b.rows), ddof)
    return _result(scores, ratings[keep], look, table, "SC-WEAT, pleasant vs unpleasant")


def wat(embedding, lexicon, *, value_column: str | None = None, pairs=None, orientation: str = "female",
        lists: str = wordlists.DEFAULT_LISTS, max_missing: float = DEFAULT_MAX_MISSING,
        lowercase: bool = True) -> ValidityResult:
    """WAT validity: Pearson's r between each lexicon word's mean association with the gendered base
    pairs (``pairs``, default the list set's definitional pairs, female word first) and the human
    gender-association rating; ``orientation``: which gender the file's positive ratings mean."""
    from .trust import pair_scores

    if orientation not in ("female", "male"):
        raise EmbdebiasError(f"wat: orientation must be 'female' or 'male', got {orientation!r}")
    emb = as_emb(embedding)
    table, words, ratings = read_lexicon(lexicon, value_column, "wat")
    look = _lexicon_lookup(emb, words, table, max_missing, lowercase)
    scores = pair_scores(emb, look.words, pairs or wordlists.definitional_pairs(lists), lowercase)
    per_word = scores["association"].mean(axis=1) * (1.0 if orientation == "female" else -1.0)
    keep = _positions(look, words)
    out = _result(per_word, ratings[keep], look, table, "mean cos(w, female) - cos(w, male) over the base pairs")
    out.extra = {"pairs": [f"{x}/{y}" for x, y in scores["pairs"]]}
    return out


class _Validity(Metric):
    statistics = {"r": "Pearson r", "spearman": "Spearman rho", N_SCORED: "words"}
    scope = "gender"

    def params(self, opts):
        return {k: None if v is None else str(v) for k, v in opts.items()}

    def data(self, ctx):
        # read here, before any scoring: a bad or missing lexicon stops the evaluation with its one
        # line (exit 2 on the command line) instead of leaving empty cells
        opts = ctx.opts(self.name)
        table, words, _ = read_lexicon(opts["lexicon"], opts["value_column"], self.name)
        return f"the user's lexicon `{table.path}` (not bundled): {len(words)} words, rating column {table.column!r}"

    def cells(self, r: ValidityResult, unit: str, fairer: str):
        cells = {"r": (r.r, *r.ci), "spearman": r.spearman, N_SCORED: r.n_scored}
        sample = Sample({"items": r.words}, pearson_of(np.asarray(r.scores), np.asarray(r.ratings)), fairer=fairer)
        return r, {unit: cells}, {(unit, "r"): sample}


@register
class ValNorm(_Validity):
    name, title = "valnorm", "ValNorm (agreement with human valence norms)"
    function = "valnorm"
    kind = "quality"
    legend = ("Pearson r between each lexicon word's single-category WEAT against Caliskan et al.'s pleasant "
              "and unpleasant words and the human valence rating of the user's lexicon (Toney & Caliskan "
              "2021). Higher is better: debiasing should keep it.")
    headline = (("", "r", "higher (better)"),)
    scope = "any"
    options = {"lexicon": Option(None, "the valence lexicon (CSV/TSV with a header: word, rating); not bundled"),
               "value_column": Option(None, "its rating column (default: the second)")}

    def score(self, emb, unit, ctx):
        opts = ctx.opts(self.name)
        r = valnorm(emb, opts["lexicon"], value_column=opts["value_column"], **ctx.common)
        return self.cells(r, unit, "higher")


def _orientation(value) -> str:
    if value not in ("female", "male"):
        raise EmbdebiasError(f"expected 'female' or 'male', got {value!r}")
    return str(value)


@register
class Wat(_Validity):
    name, title = "wat", "WAT (agreement with human gender associations)"
    function = "wat"
    legend = ("Pearson r between each lexicon word's mean association with the definitional pairs (female "
              "minus male cosine) and the human gender-association rating of the user's WAT file (Du, Wu & "
              "Lan 2019). Near 0 is fairer: the embedding no longer carries the associations people make.")
    headline = (("", "r", "0"),)
    options = {"lexicon": Option(None, "the gender-association ratings (CSV/TSV with a header: word, rating); "
                                       "not bundled"),
               "value_column": Option(None, "its rating column (default: the second)"),
               "orientation": Option("female", "which gender the file's positive ratings mean", _orientation)}

    def score(self, emb, unit, ctx):
        opts = ctx.opts(self.name)
        r = wat(emb, opts["lexicon"], value_column=opts["value_column"], orientation=opts["orientation"],
                lists=ctx.lists, **ctx.common)
        return self.cells(r, unit, "zero")
