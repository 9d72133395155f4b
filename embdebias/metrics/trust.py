r"""How far to trust a bias number: seed-word sensitivity, internal consistency, test-retest
reliability and agreement between metrics (issue 34).

Four readings, each from data the evaluation already has:

* **seed-word sensitivity** (Antoniak & Mimno 2021, "Bad Seeds"): for a statistic computed
  from word sets (a metric's :class:`~embdebias.metrics.base.Sample`), the range of the
  statistic when one word of one set is left out, the words whose removal moves it most,
  and the 2.5-97.5 % spread over random half subsets of every set (seeded). Leaving one word
  out is one row of the sample's index arrays, so every removal of a set is one vectorised
  call of the metric's own resampling statistic (for WEAT: each removal is a rank-one change
  of the set's mean, ``(n mean - v_i) / (n - 1)``, which the weighted means compute).
  The band differs from the bootstrap interval: the bootstrap draws *with replacement*
  (sampling noise of a set of that size), the band asks how far the number depends on
  *which* words were chosen (no word repeated, sets smaller by one or by half).
* **internal consistency across base pairs** (Du, Fang & Nguyen 2021): each definitional
  pair ``(x, y)`` as its own direction, the per-word scores of the neutral words (direct-bias
  projection ``cos(w, x - y)``, RIPA ``w . unit(x - y)``, the association
  ``cos(w, x) - cos(w, y)``, the residual direction ``cos(w, unit(x) - unit(y))``), and
  Cronbach's :math:`\alpha` over the pairs (items = pairs,
  observations = words): :math:`\alpha = \frac{k}{k-1}(1 - \sum_j \operatorname{var} s_j /
  \operatorname{var} \sum_j s_j)`, sample variances (``ddof=1``), as their paper defines it.
* **test-retest reliability** across embeddings trained with different seeds: the
  intraclass correlation of the per-word scores (words = subjects, embeddings = raters),
  ICC(2,1) (two-way random effects, absolute agreement, one rater: Du et al.'s test-retest
  form) and ICC(3,1) (two-way mixed, consistency: their inter-rater form), with a percentile
  bootstrap interval over the words (seeded).
* **agreement between metrics**: Kendall's :math:`\tau_b` between every two metric families'
  rankings of the columns (each family's bias magnitude: the mean over its headline rows of
  the bias read in its own direction, ``Metric.headline``'s "fairer"), with a bootstrap
  interval whose resamples draw the same items for every column of a row (as the paired
  comparisons do); and the correlation of the per-word scores of the measures that score words.
"""

from __future__ import annotations

import numpy as np

from ..errors import EmbdebiasError
from ._resample import Sample, bias_of, resample_rng

__all__ = ["SEED_WORD_METRICS", "WORD_MEASURES", "agreement_matrix", "cronbach_alpha", "half_subset_spread",
           "icc", "icc_interval", "kendall_tau_b", "leave_one_out", "pair_scores", "sensitivity",
           "word_sensitivity", "word_level_agreement"]

#: The metrics whose statistics are computed from word sets (the seed-word bands); the others'
#: samples hold SemBias lines, similarity pairs, analogy questions or templates.
SEED_WORD_METRICS = ("weat", "wefat", "ect", "rnsb", "ripa", "mac", "rnd", "same", "generalized_weat",
                     "direct_bias")
#: Resamples of the half-subset spread (each a random half of every set).
N_HALVES = 200
#: Words named per band: those whose removal moves the statistic most.
TOP_WORDS = 3


def leave_one_out(sample: Sample) -> dict:
    """The statistic of ``sample`` with each item of each set left out, one set at a time.

    Returns
    -------
    dict
        ``{"full": value, "low", "high": the range over every removal, "removals": [(set,
        item, value), ...]}``. A set of one item is not left out (nothing would remain).
    """
    sizes = {g: len(keys) for g, keys in sample.groups.items()}
    removals = []
    for g, n in sizes.items():
        if n < 2:
            continue
        # row i of the index array keeps every item but i
        keep = np.arange(n)[None, :].repeat(n, 0)[~np.eye(n, dtype=bool)].reshape(n, n - 1)
        idx = {h: (keep if h == g else np.arange(m)[None, :].repeat(n, 0)) for h, m in sizes.items()}
        with np.errstate(all="ignore"):
            values = np.asarray(sample.stat(idx), dtype=np.float64)
        removals += [(g, key, float(v)) for key, v in zip(sample.groups[g], values)]
    finite = [v for _, _, v in removals if np.isfinite(v)]
    return {"full": sample.value(), "low": min(finite) if finite else float("nan"),
            "high": max(finite) if finite else float("nan"), "removals": removals}


def half_subset_spread(sample: Sample, rng: np.random.Generator, n_draws: int = N_HALVES) -> dict:
    """The 2.5-97.5 % range and standard deviation of the statistic over ``n_draws`` random
    half subsets of every set drawn without replacement (``ceil(n / 2)`` items of a set of ``n``)."""
    idx = {}
    for g, keys in sample.groups.items():
        n = len(keys)
        order = rng.permuted(np.arange(n)[None, :].repeat(n_draws, 0), axis=1)
        idx[g] = np.sort(order[:, : max(1, (n + 1) // 2)], axis=1)
    with np.errstate(all="ignore"):
        values = np.asarray(sample.stat(idx), dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return {"low": float("nan"), "high": float("nan"), "sd": float("nan"), "n": int(values.size)}
    lo, hi = np.quantile(values, [0.025, 0.975])
    return {"low": float(lo), "high": float(hi), "sd": float(values.std(ddof=1)), "n": int(values.size)}


def word_sensitivity(sample: Sample, rng: np.random.Generator, n_draws: int = N_HALVES,
                     top: int = TOP_WORDS) -> dict:
    """The seed-word band of one statistic: leave-one-out range, the ``top`` words whose removal
    moves it most (``{"set", "word", "value", "shift"}``), and the half-subset spread."""
    loo = leave_one_out(sample)
    moved = sorted((r for r in loo["removals"] if np.isfinite(r[2])), key=lambda r: -abs(r[2] - loo["full"]))
    words = [{"set": g, "word": str(k), "value": v, "shift": v - loo["full"]} for g, k, v in moved[:top]]
    halves = half_subset_spread(sample, rng, n_draws)
    return {"value": loo["full"], "loo_low": loo["low"], "loo_high": loo["high"], "n_removals": len(loo["removals"]),
            "most_moving": words, "half_low": halves["low"], "half_high": halves["high"], "half_sd": halves["sd"],
            "sign_holds": _sign_holds(loo, sample.fairer)}


def _sign_holds(loo: dict, fairer: str) -> bool | None:
    """Whether every leave-one-out value has the full value's sign (for statistics read against 0)."""
    if fairer != "zero" or not loo["removals"]:
        return None
    full = np.sign(loo["full"])
    return bool(all(np.sign(v) == full for _, _, v in loo["removals"] if np.isfinite(v)))


def sensitivity(samples: dict, seed, n_draws: int = N_HALVES) -> list[dict]:
    """Seed-word bands of every word-set statistic of an evaluation's ``samples``
    (``{(embedding, metric, test, statistic): Sample}``), each half-subset draw seeded by the
    run's ``seed`` and the row's key (never the column), as the bootstrap intervals are."""
    out = []
    for (emb, metric, test, stat), sample in samples.items():
        if metric not in SEED_WORD_METRICS:
            continue
        band = word_sensitivity(sample, resample_rng(seed, "halves", metric, test, stat), n_draws)
        out.append({"embedding": emb, "metric": metric, "test": test, "statistic": stat, **band})
    return out


# -- reliability: Cronbach's alpha and the intraclass correlation ------------------------------------------


def cronbach_alpha(scores) -> float:
    r"""Cronbach's :math:`\alpha` of ``scores``, an ``(observations, items)`` array (for the
    internal consistency across base pairs: words x pairs).

    :math:`\alpha = \frac{k}{k-1}\left(1 - \frac{\sum_j \operatorname{var}(s_{\cdot j})}
    {\operatorname{var}(\sum_j s_{\cdot j})}\right)`, sample variances (``ddof=1``), as Du et
    al. (2021) use it. Raises :class:`~embdebias.errors.EmbdebiasError` for fewer than two items
    or two observations.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] < 2 or scores.shape[1] < 2:
        raise EmbdebiasError(f"Cronbach's alpha needs at least 2 observations of at least 2 items, got an "
                             f"array of shape {scores.shape}")
    k = scores.shape[1]
    item_variance = scores.var(axis=0, ddof=1).sum()
    total_variance = scores.sum(axis=1).var(ddof=1)
    return float(k / (k - 1) * (1.0 - item_variance / total_variance))


ICC_FORMS = ("icc2", "icc3")


def icc(scores, form: str = "icc2") -> np.ndarray | float:
    """The intraclass correlation of ``scores``, an ``(..., subjects, raters)`` array.

    ``form="icc2"``: ICC(2,1), two-way random effects, absolute agreement, one rater (Shrout &
    Fleiss 1979; Du et al.'s test-retest form: subjects = words, raters = embeddings trained
    with different seeds); ``"icc3"``: ICC(3,1), two-way mixed, consistency (their inter-rater
    form). From the two-way ANOVA mean squares of rows (``MSR``), columns (``MSC``) and error
    (``MSE``): ICC(2,1) = (MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE) / n), ICC(3,1) =
    (MSR - MSE) / (MSR + (k-1) MSE). Leading axes are independent matrices (bootstrap resamples).
    """
    if form not in ICC_FORMS:
        raise EmbdebiasError(f"icc: form must be one of {', '.join(ICC_FORMS)}, got {form!r}")
    x = np.asarray(scores, dtype=np.float64)
    n, k = x.shape[-2:]
    if n < 2 or k < 2:
        raise EmbdebiasError(f"icc needs at least 2 subjects and 2 raters, got {n} x {k}")
    grand = x.mean(axis=(-2, -1), keepdims=True)
    rows = x.mean(axis=-1, keepdims=True)
    cols = x.mean(axis=-2, keepdims=True)
    msr = k * ((rows - grand) ** 2).sum(axis=(-2, -1)) / (n - 1)
    msc = n * ((cols - grand) ** 2).sum(axis=(-2, -1)) / (k - 1)
    mse = ((x - rows - cols + grand) ** 2).sum(axis=(-2, -1)) / ((n - 1) * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "icc2":
            out = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        else:
            out = (msr - mse) / (msr + (k - 1) * mse)
    return float(out) if np.ndim(out) == 0 else out


def icc_interval(scores, form: str = "icc2", n_boot: int = 1000, random_state=0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`icc` over the subjects (words drawn with
    replacement, the raters kept), seeded by ``random_state``."""
    x = np.asarray(scores, dtype=np.float64)
    rng = resample_rng(random_state, "icc", form)
    draws = rng.integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    values = np.asarray(icc(x[draws], form))
    values = values[np.isfinite(values)]
    if values.size < 10:
        return float("nan"), float("nan")
    tail = (1 - level) / 2
    lo, hi = np.quantile(values, [tail, 1 - tail])
    return float(lo), float(hi)


# -- per-word scores with each base pair as its own direction -------------------------------------------

#: The per-word measures of :func:`pair_scores`, in display order.
WORD_MEASURES = ("projection", "ripa", "association", "residual")


def pair_scores(emb, words, pairs, lowercase: bool = True) -> dict:
    """Per-word scores of ``words`` with each definitional pair as its own direction.

    Parameters
    ----------
    emb : Embedding
    words : sequence of str
        The neutral words scored (e.g. the professions).
    pairs : sequence of (str, str)
        The base pairs ``(x, y)``; a pair with a word out of the vocabulary is dropped.

    Returns
    -------
    dict
        ``{"words", "pairs", "projection", "ripa", "association", "residual"}``: each measure an
        ``(words, pairs)`` array: ``cos(w, x - y)`` (direct bias's projection), ``w . unit(x - y)``
        (RIPA, ``w`` not normalised), ``cos(w, x) - cos(w, y)`` (WEAT's association with one word a
        side) and ``cos(w, unit(x) - unit(y))`` (the residual direction).

    Notes
    -----
    The residual direction is the bias of a word in Gonen & Goldberg's residual tests
    (:func:`~embdebias.metrics.residual.male_direction`: both words unit-normalised before their
    difference, which is normalised again), one pair at a time. Du et al. (2021) define the
    internal consistency of the other measures by taking each base pair as the measure's
    direction; the residual tests have one direction (``he - she``), so the same choice is made
    for it: each definitional pair's ``unit(x) - unit(y)`` in its place, and Cronbach's alpha
    over the pairs. It differs from the projection only when ``x`` and ``y`` have different
    norms (on a unit-normalised embedding the two are equal). The pairs are read in the list
    set's order (``woman/man``: female first), the opposite of the residual tests' ``he - she``;
    alpha is the same under a sign change of every pair.

    Raises
    ------
    EmbdebiasError
        Fewer than two pairs in the vocabulary (no consistency to measure), naming them.
    """
    from ._common import as_emb, lookup

    emb = as_emb(emb)
    look = lookup(emb, words, name="neutral words", lowercase=lowercase)
    flat = [w for p in pairs for w in p]
    rows, _ = _rows(emb, flat, lowercase)
    found = (rows[0::2] >= 0) & (rows[1::2] >= 0)
    kept = [tuple(p) for p, ok in zip(pairs, found) if ok]
    if len(kept) < 2:
        missing = [f"{x}/{y}" for (x, y), ok in zip(pairs, found) if not ok]
        raise EmbdebiasError(f"base pairs: {len(kept)} of {len(pairs)} pair(s) in the vocabulary of {emb.name}, "
                             f"expected at least 2 (missing: {', '.join(missing[:10]) or 'none'})")
    vx = np.asarray(emb.vectors[rows[0::2][found]], dtype=np.float64)
    vy = np.asarray(emb.vectors[rows[1::2][found]], dtype=np.float64)
    w = np.asarray(emb.vectors[look.rows], dtype=np.float64)
    unit = _unit(vx - vy)
    wn = _unit(w)
    ux, uy = _unit(vx), _unit(vy)
    return {"words": list(look.words), "pairs": kept, "projection": wn @ unit.T, "ripa": w @ unit.T,
            "association": wn @ ux.T - wn @ uy.T, "residual": wn @ _unit(ux - uy).T}


def _rows(emb, words, lowercase):
    from .._case import rows_with_lowercase

    return rows_with_lowercase(emb.words, list(words), lowercase)


def _unit(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


def internal_consistency(scores: dict) -> dict:
    """``{measure: {"alpha", "per_pair": [mean |score| of each pair]}}`` of :func:`pair_scores`."""
    return {m: {"alpha": cronbach_alpha(scores[m]), "per_pair": np.abs(scores[m]).mean(axis=0).tolist()}
            for m in WORD_MEASURES}


def word_level_agreement(scores: dict) -> dict:
    """Spearman correlation of every two per-word measures over the words (each word's score the mean
    over the pairs), plus the SC-WEAT / WEFAT effect size (the association standardised by the
    spread of the word's similarities to both sides' words): ``{"measures", "matrix"}``."""
    from scipy.stats import spearmanr

    per_word = {m: scores[m].mean(axis=1) for m in WORD_MEASURES}
    if "sc_weat" in scores:
        per_word["sc_weat"] = np.asarray(scores["sc_weat"], dtype=np.float64)
    names = list(per_word)
    matrix = np.atleast_2d(spearmanr(np.column_stack([per_word[n] for n in names])).statistic)
    return {"measures": names, "matrix": matrix.tolist()}


# -- agreement between metric families across columns ---------------------------------------------------


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of rankings along the last axis (leading axes: independent resamples);
    NaN where one ranking is constant."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    i, j = np.triu_indices(x.shape[-1], 1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (sx * sy).sum(-1) / np.sqrt((sx * sx).sum(-1) * (sy * sy).sum(-1))


def _fairer(word: str) -> str | None:
    """A headline's "fairer" entry as the resampling engine's direction (None: not a bias direction)."""
    word = str(word).split()[0] if word else ""
    return {"lower": "lower", "higher": "higher", "0": "zero"}.get(word)


def family_biases(report, samples: dict, n_boot: int, seed) -> dict:
    """``{family: (point (columns,), resampled (n_boot, columns))}``: each metric family's mean
    bias magnitude over its headline rows, per column, from the rows every column scored."""
    from .base import METRICS

    columns = report.embeddings
    out = {}
    for name in report.metrics():
        metric = METRICS.get(name)
        if metric is None or metric.kind == "quality":
            continue
        tests = list(dict.fromkeys(t for (m, t, _) in report.rows if m == name))
        # a headline's test: "*" every test, "" the metric's first, else the one named
        rows = [(t, s, _fairer(f)) for (m, t, s) in report.rows if m == name
                for (ht, hs, f) in metric.headline
                if hs == s and (ht == "*" or ht == t or (ht == "" and t == tests[0])) and _fairer(f)]
        rows = [r for r in dict.fromkeys(rows) if all((c, name, r[0], r[1]) in samples for c in columns)]
        if not rows:
            continue
        point, boot = [], []
        for test, stat, fairer in rows:
            point.append([bias_of(np.array([samples[(c, name, test, stat)].value()]), fairer)[0] for c in columns])
            boot.append(np.column_stack([_paired_draws(samples[(c, name, test, stat)], n_boot,
                                                       resample_rng(seed, "agreement", name, test, stat), fairer)
                                         for c in columns]))
        out[name] = (np.mean(point, axis=0), np.mean(boot, axis=0))
    return out


def _paired_draws(sample: Sample, n_boot: int, rng: np.random.Generator, fairer: str) -> np.ndarray:
    """The bias magnitude over ``n_boot`` resamples; ``rng`` is a fresh generator of the row, so
    every column whose sets have the same sizes draws the same items."""
    idx = {g: rng.integers(0, len(keys), size=(n_boot, len(keys))) for g, keys in sample.groups.items()}
    with np.errstate(all="ignore"):
        return bias_of(np.asarray(sample.stat(idx), dtype=np.float64), fairer)


def agreement_matrix(report, samples: dict, n_boot: int = 200, seed=0, level: float = 0.95) -> dict | None:
    """Kendall's tau-b between every two metric families' rankings of the report's columns, with a
    bootstrap interval; None with fewer than three columns or two families.

    Returns
    -------
    dict
        ``{"families", "columns", "tau": matrix, "ci_low": matrix, "ci_high": matrix, "n_boot",
        "level", "unit": "columns"}`` (NaN as None where a ranking is constant).
    """
    if len(report.embeddings) < 3:
        return None
    fam = family_biases(report, samples, n_boot, seed)
    if len(fam) < 2:
        return None
    names = list(fam)
    k = len(names)
    tau, low, high = (np.full((k, k), np.nan) for _ in range(3))
    tail = (1 - level) / 2
    for a in range(k):
        for b in range(k):
            tau[a, b] = kendall_tau_b(fam[names[a]][0], fam[names[b]][0])
            draws = kendall_tau_b(fam[names[a]][1], fam[names[b]][1])
            draws = draws[np.isfinite(draws)]
            if draws.size >= 10:
                low[a, b], high[a, b] = np.quantile(draws, [tail, 1 - tail])

    def clean(m):
        return [[None if not np.isfinite(v) else float(v) for v in row] for row in m]

    return {"families": names, "columns": list(report.embeddings), "tau": clean(tau), "ci_low": clean(low),
            "ci_high": clean(high), "n_boot": n_boot, "level": level, "unit": "columns"}


# -- the evaluation's trust readings ---------------------------------------------------------------------

#: Resamples of the agreement's bootstrap (each recomputes every headline row of every column).
N_AGREEMENT = 200


def _consistency(ctx) -> dict | None:
    """Alpha across the definitional pairs and the word-level agreement on the reference column
    (the attribute whose defining sets are the list set's pairs: gender); None otherwise."""
    from .. import wordlists

    attribute = ctx.attribute_or_default()
    if not attribute.uses_gender_lists or ctx.reference is None:
        return None
    opts = ctx.options.get("direct_bias", {})
    words = ctx.neutral(opts.get("neutral_words"))
    scores = pair_scores(ctx.reference, words, wordlists.definitional_pairs(ctx.lists), ctx.lowercase)
    scores["sc_weat"] = sc_weat_of_pairs(ctx.reference, scores, ctx.lowercase)
    out = {"embedding": ctx.reference_name, "n_words": len(scores["words"]),
           "pairs": [f"{x}/{y}" for x, y in scores["pairs"]], **internal_consistency(scores)}
    return {"consistency": out, "word_agreement": word_level_agreement(scores)}


def sc_weat_of_pairs(emb, scores: dict, lowercase: bool = True) -> np.ndarray:
    """The SC-WEAT (WEFAT) effect size of each scored word with the pairs' first words as ``A`` and
    second words as ``B``: ``(mean cos(w, A) - mean cos(w, B)) / std_{x in A u B} cos(w, x)`` (ddof=1)."""
    from ._common import as_emb

    emb = as_emb(emb)
    rows, _ = _rows(emb, scores["words"], lowercase)
    first, _ = _rows(emb, [x for x, _ in scores["pairs"]], lowercase)
    second, _ = _rows(emb, [y for _, y in scores["pairs"]], lowercase)
    return single_category_weat(_unit(np.asarray(emb.vectors[rows], np.float64)),
                                _unit(np.asarray(emb.vectors[first], np.float64)),
                                _unit(np.asarray(emb.vectors[second], np.float64)))


def single_category_weat(w: np.ndarray, a: np.ndarray, b: np.ndarray, ddof: int = 1) -> np.ndarray:
    """SC-WEAT effect size of each unit row of ``w`` against unit attribute rows ``a`` and ``b``
    (Caliskan et al. 2017's WEFAT; Toney & Caliskan 2021's ValNorm): the difference of the mean
    cosines over the standard deviation (``ddof``) of the word's cosines with ``a`` and ``b`` together."""
    ca, cb = w @ a.T, w @ b.T
    spread = np.concatenate([ca, cb], axis=1).std(axis=1, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (ca.mean(axis=1) - cb.mean(axis=1)) / spread


def assess(report, samples: dict, ctx, seed, n_agreement: int = N_AGREEMENT) -> dict:
    """Every trust reading of an evaluation (:attr:`Report.trust <embdebias.report.model.Report.trust>`):
    the seed-word bands, the agreement of the metric families across the columns, and on the
    reference column the internal consistency across base pairs and the word-level agreement
    (a reason instead when they cannot be computed)."""
    out = {"sensitivity": sensitivity(samples, seed), "agreement": agreement_matrix(report, samples, n_agreement,
                                                                                   seed)}
    try:
        out.update(_consistency(ctx) or {"consistency_note": "base pairs are gender's definitional pairs: "
                                                             "not computed for this attribute"})
    except EmbdebiasError as exc:
        out["consistency_note"] = str(exc)
    return out


# -- test-retest reliability across training seeds ---------------------------------------------------------

#: Fewest embeddings an ICC is computed from (two raters give an ICC, but no one should trust it).
MIN_RETEST = 3


def reliability(embeddings, words=None, pairs=None, *, lists: str | None = None, lowercase: bool = True,
                n_boot: int = 1000, random_state=0, level: float = 0.95) -> dict:
    """Test-retest reliability of the per-word measures across embeddings of one corpus trained with
    different seeds (Du et al. 2021): per measure, the ICC(2,1) and ICC(3,1) of the per-word scores
    (words = subjects, embeddings = raters; each word's score the mean over the base pairs), with a
    bootstrap interval of ICC(2,1) over the words.

    Parameters
    ----------
    embeddings : dict name -> Embedding, or list of Embedding
        Three or more.
    words : sequence of str, optional
        The words scored (default: the list set's professions); those in every embedding are used.
    pairs : sequence of (str, str), optional
        The base pairs (default the list set's definitional pairs); those in every embedding are used.

    Returns
    -------
    dict
        ``{"embeddings", "n_words", "pairs", "measures": {measure: {"icc2", "icc3", "ci_low",
        "ci_high"}}}`` for the measures of :data:`WORD_MEASURES` and ``sc_weat``.

    Raises
    ------
    EmbdebiasError
        Fewer than three embeddings, or fewer than two words or two pairs common to all.
    """
    from .. import wordlists
    from ..embedding import as_embedding

    lists = lists or wordlists.DEFAULT_LISTS
    named = embeddings if isinstance(embeddings, dict) else {getattr(e, "name", str(i)): e
                                                            for i, e in enumerate(embeddings)}
    named = {str(k): as_embedding(v, name=str(k)) for k, v in named.items()}
    if len(named) < MIN_RETEST:
        raise EmbdebiasError(f"reliability: expected at least {MIN_RETEST} embeddings of the same corpus trained "
                             f"with different seeds, got {len(named)} ({', '.join(named) or 'none'})")
    words = list(words) if words is not None else wordlists.professions(lists)
    pairs = [tuple(p) for p in (pairs if pairs is not None else wordlists.definitional_pairs(lists))]
    common = [w for w in words if all(_rows(e, [w], lowercase)[0][0] >= 0 for e in named.values())] \
        if len(words) < 5000 else words
    both = [p for p in pairs if all((_rows(e, list(p), lowercase)[0] >= 0).all() for e in named.values())]
    if len(common) < 2 or len(both) < 2:
        raise EmbdebiasError(f"reliability: {len(common)} word(s) and {len(both)} base pair(s) are in every "
                             f"embedding; expected at least 2 of each")
    per_emb = []
    for emb in named.values():
        scores = pair_scores(emb, common, both, lowercase)
        scores["sc_weat"] = sc_weat_of_pairs(emb, scores, lowercase)
        per_emb.append(scores)
    measures = {}
    for m in (*WORD_MEASURES, "sc_weat"):
        matrix = np.column_stack([s[m].mean(axis=1) if s[m].ndim == 2 else s[m] for s in per_emb])
        lo, hi = icc_interval(matrix, "icc2", n_boot, random_state, level)
        measures[m] = {"icc2": icc(matrix, "icc2"), "icc3": icc(matrix, "icc3"), "ci_low": lo, "ci_high": hi}
    return {"embeddings": list(named), "n_words": len(common), "pairs": [f"{x}/{y}" for x, y in both],
            "measures": measures, "level": level}
