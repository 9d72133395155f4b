r"""Bias Analogy Test on the SemBias format (Zhao, Zhou, Li, Wang & Chang, 2018).

**Format.** UTF-8 text, one instance per line, four ``a:b`` word pairs separated by tabs:
column 1 a gender-definition pair (``man:woman``), columns 2 and 3 pairs unrelated to
gender ("none"), column 4 a gender-stereotype pair (``doctor:nurse``).  The first word of
every pair is the male-associated one.  Blank lines and lines starting with ``#`` are
ignored.  The original SemBias file has 440 instances whose last 40 (the "Sub" subset)
use definition pairs held out from the authors' training; here the subset is the last
``n_sub`` (default 40) instances of whatever file is given.

**Test.** For every instance the predicted pair is the one whose difference
:math:`b - a` (female minus male) has the largest cosine with the gender direction
:math:`she - he` (computed from unit-normalized vectors); this is Zhao et al.'s rule
(largest cosine of :math:`a - b` with :math:`he - she`) in the project's one sign
convention.  A good embedding picks the definition pair;
a biased one is drawn to the stereotype pair.  Reported: the fractions of instances
predicted as Definition / Stereotype / None, over all instances and over the subset.

**Missing words.** An instance with any out-of-vocabulary word is skipped (all four
candidates are needed for the comparison) and counted; the fractions are over the
instances that were scored.  If more than ``max_missing`` of the instances are skipped,
:class:`~embdebias.errors.MissingWordsError` names the missing words.

**Direction.** One sign convention holds everywhere in embdebias: the gender direction
is **female-positive**. By default it is :math:`she - he` (Zhao et al.'s :math:`he - she`,
negated together with the pair differences, so the prediction is theirs);
``direction`` may give another female-positive vector, or a fitted
:class:`~embdebias.subspace.BiasSubspace`, whose ``direction_`` is female-positive too:
``bat(e, direction=sub)`` and ``bat(e, direction=sub.direction_)`` are the same test.

**Data.** By default the published SemBias of Zhao et al. (440 lines, Sub = the last
40); ``lists="curated"`` selects the project's own SemBias-format set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._rows import unit_rows
from ..data.sembias import SemBiasInstance, read_sembias  # noqa: F401 (SemBiasInstance: its old home)
from ..errors import DimensionError, MissingWordsError
from .base import N_SCORED, Metric, Option, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, check_max_missing, lookup, unit_vectors
from ._resample import Sample, mean_of

#: Labels of the four columns of a SemBias line.
COLUMN_LABELS = ("definition", "none", "none", "stereotype")


@dataclass
class BatResult(MetricResult):
    """Result of :func:`bat`: fractions of predictions per category.

    ``definition + stereotype + none == 1`` over the scored instances; the ``sub_``
    fields are the same over the last ``n_sub`` instances of the file.
    """

    definition: float
    stereotype: float
    none: float
    n_lines: int
    n_scored: int
    n_skipped: int
    sub_definition: float
    sub_stereotype: float
    sub_none: float
    sub_n_lines: int
    sub_n_scored: int
    sub_n_skipped: int
    missing: dict[str, list[str]]
    skipped_lines: list[int] = field(default_factory=list)
    predictions: list[int] = field(default_factory=list)  # column 0-3 per line, -1 skipped
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    path: str = ""
    direction: str = "she - he"

    value_field = "definition"


def _fractions(pred: np.ndarray) -> tuple[float, float, float]:
    pred = pred[pred >= 0]
    if pred.size == 0:
        return float("nan"), float("nan"), float("nan")
    labels = np.array(COLUMN_LABELS)[pred]
    return (float(np.mean(labels == "definition")), float(np.mean(labels == "stereotype")),
            float(np.mean(labels == "none")))


def _direction(emb, direction, lowercase: bool):
    """The unit female-positive direction and its label (see the module docstring)."""
    if direction is None:
        ends = lookup(emb, ["she", "he"], name="BAT: the direction words she, he",
                      lowercase=lowercase, max_missing=0.0)
        she, he = unit_vectors(emb, ends.rows)
        g, label = she - he, "she - he"
    elif hasattr(direction, "direction_"):
        g, label = np.asarray(direction.direction_, dtype=np.float64), "BiasSubspace.direction_ (female positive)"
    else:
        g, label = np.asarray(direction, dtype=np.float64).ravel(), "given vector (female positive)"
    if g.shape != (emb.dim,):
        raise DimensionError(f"BAT: direction has shape {g.shape}, the embedding has dimension {emb.dim}")
    return unit_rows(g, copy=True), label


def _instance_rows(emb, instances, lowercase: bool):
    """``(rows (n, 4, 2), lookup)``: the row of every word of every instance (-1 if missing)."""
    words = [w for inst in instances for pair in inst.pairs for w in pair]
    lk = lookup(emb, words, name="BAT words", lowercase=lowercase, max_missing=1.0, min_size=0)
    row_of = dict(zip(lk.words, lk.rows.tolist()))
    rows = np.array([row_of.get(w, -1) for w in words], dtype=np.int64).reshape(len(instances), 4, 2)
    return rows, lk


def _predict(emb, rows: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Column (0-3) of the pair whose female-minus-male difference best aligns with ``g``."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    vecs = unit_vectors(emb, rows.ravel()).reshape(len(rows), 4, 2, emb.dim)
    diff = vecs[:, :, 1] - vecs[:, :, 0]  # female minus male: the same sign as g
    norms = np.linalg.norm(diff, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(norms > 0, (diff @ g) / norms, -np.inf)
    return np.argmax(cos, axis=1)


def bat(embedding, path=None, *, direction=None, lists: str = "published", n_sub: int = 40,
        max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> BatResult:
    """Bias Analogy Test of ``embedding`` on a SemBias-format file.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    path : str or Path, optional
        A SemBias-format file; default the SemBias file of ``lists``
        (:func:`embdebias.wordlists.sembias_path`).
    direction : array of shape (d,) or BiasSubspace, optional
        Gender direction oriented female-positive; default ``she - he``.
    lists : {"published", "curated"}, default "published"
        Which bundled SemBias file is the default: Zhao et al.'s or the project's.
    n_sub : int, default 40
        Size of the "Sub" subset (the last ``n_sub`` instances).
    max_missing : float, default 0.2
        Largest fraction of instances that may be skipped for missing words.
    lowercase : bool, default True
        Fall back to lowercase forms of missing words.
    """
    emb = as_emb(embedding)
    max_missing = check_max_missing(max_missing)
    if path is None:
        from ..wordlists import sembias_path

        path = sembias_path(lists)
    instances = read_sembias(path)

    g, label = _direction(emb, direction, lowercase)
    rows, lk = _instance_rows(emb, instances, lowercase)
    ok = (rows >= 0).all(axis=(1, 2))
    n = len(instances)
    skipped_words = list(lk.missing)
    if n and (1 - ok.mean()) > max_missing:
        raise MissingWordsError(
            f"BAT: {int((~ok).sum())} of {n} SemBias instances in {path} have words not in the "
            f"vocabulary of {emb.name} (more than the allowed {max_missing:.0%}): "
            f"{', '.join(map(repr, skipped_words[:30]))}"
            f"{f' and {len(skipped_words) - 30} more' if len(skipped_words) > 30 else ''}",
            skipped_words)
    pred = np.full(n, -1, dtype=np.int64)
    pred[ok] = _predict(emb, rows[ok], g)

    sub = pred[max(0, n - int(n_sub)):]
    d, s, no = _fractions(pred)
    sd, ss, sn = _fractions(sub)
    return BatResult(
        definition=d, stereotype=s, none=no, n_lines=n, n_scored=int(ok.sum()),
        n_skipped=int((~ok).sum()), sub_definition=sd, sub_stereotype=ss, sub_none=sn,
        sub_n_lines=int(sub.size), sub_n_scored=int((sub >= 0).sum()),
        sub_n_skipped=int((sub < 0).sum()), missing={"sembias": skipped_words},
        skipped_lines=[instances[i].line for i in np.flatnonzero(~ok)], predictions=pred.tolist(),
        lowercased={"sembias": dict(lk.lowercased)} if lk.lowercased else {},
        path=str(path), direction=label)


@register
class Bat(Metric):
    name, title = "bat", "BAT"
    # Definition is how well she - he still finds the gender-definition pairs: a quality number
    headline = (("all", "stereotype", "lower"), ("all", "definition", "higher (better)"))
    function = "bat"
    legend = ("BAT (Zhao et al. 2018, as in Fersini et al.): the share of SemBias lines whose pair "
              "best aligned with she - he is the gender-definition pair (higher is better), the "
              "stereotype pair (lower is fairer) or an unrelated pair (None; high when the gender "
              "direction itself was lost). sub: the last 40 lines, whose definition pairs are held "
              "out of the debiasing lists.")
    statistics = {"definition": "Definition", "stereotype": "Stereotype", "none": "None",
                  N_SCORED: "lines scored"}
    options = {"sembias": Option(None, "SemBias-format file (default: the SemBias file of lists)")}

    def params(self, opts):
        return {"sembias": str(opts["sembias"]) if opts["sembias"] else "bundled", "direction": "she - he"}

    def units(self, ctx):
        return ["sembias"]

    def data(self, ctx):
        sembias = ctx.opts(self.name)["sembias"]
        value = None if sembias is None else Path(sembias)
        return f"{ctx.list_text(value, 'sembias', 'lines')}; direction she - he of each column"

    def tests(self, unit):
        return ["all", "sub"]

    def score(self, emb, unit, ctx):
        r = bat(emb, ctx.opts(self.name)["sembias"], lists=ctx.lists, **ctx.common)
        cells, samples = {}, {}
        pred = np.asarray(r.predictions)
        lines = np.arange(pred.size)
        for test, prefix, part in (("all", "", lines), ("sub", "sub_", lines[pred.size - r.sub_n_lines:])):
            cells[test] = {stat: getattr(r, prefix + stat) for stat in ("definition", "stereotype", "none")}
            cells[test][N_SCORED] = r.n_scored if test == "all" else r.sub_n_scored
            scored = part[pred[part] >= 0]
            for stat, columns, fairer in (("definition", (0,), "higher"), ("stereotype", (3,), "lower"),
                                          ("none", (1, 2), "lower")):
                hit = np.isin(pred[scored], columns).astype(np.float64)
                samples[(test, stat)] = Sample({"items": scored.tolist()}, mean_of(hit), fairer)
        return r, cells, samples
