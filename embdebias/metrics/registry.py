"""The metrics that :func:`embdebias.evaluation` runs, behind one registry.

Each metric is a small object: what it is called, how to read it, which statistics it
reports (machine keys, with display labels), which word lists or data it needs, and how
to score one *unit* of work (a WEAT test, the SemBias file, a similarity data set) on one
embedding. :func:`embdebias.evaluation` is a loop over these objects, so a unit that cannot
be scored becomes empty cells with its reason instead of stopping the others, and a new
metric is one more class registered with :func:`register`.

Statistic keys are stable (``effect_size``, ``p_value``, ``n_scored``, ...); the labels
are for people and may change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import wordlists
from ..errors import EmbdebiasError
from .uncertainty import Sample, ect_correlations, mean_of, rnsb_values, weat_effect_sizes

_WEAT_GROUP_SOURCES = {
    "caliskan": "Caliskan et al. (2017)'s stimuli as published",
    "gender": "curated by the embdebias authors after Caliskan et al. (2017) and Garg et al. (2018)",
}

#: Machine key of the number of items (words, pairs, lines, questions) a row scored.
N_SCORED = "n_scored"


@dataclass
class EvalContext:
    """Everything the metrics share in one :func:`~embdebias.evaluation` call."""

    lists: str = wordlists.DEFAULT_LISTS
    max_missing: float = 0.2
    lowercase: bool = True
    random_state: int | None = 0
    weat_tests: list = field(default_factory=list)
    n_permutations: int = 100_000
    exact_limit: int = 1_000_000
    rnsb_runs: int = 10
    rnsb_C: float = 1.0
    identity_terms: list | None = None
    neutral_words: list | None = None
    neutral_source: object = None
    neutral_name: str = "professions"
    c: float = 1.0
    sembias: object = None
    similarity_datasets: tuple = ("wordsim353", "simlex999")
    analogy_restrict_vocab: int = 30_000
    subspace: object = None
    direction_name: str | None = None
    reference: object = None
    reference_name: str = ""
    templates: object = None
    _reference_direction: tuple | None = None
    _probes: dict = field(default_factory=dict)
    _template_set: object = None

    @property
    def common(self) -> dict:
        return dict(max_missing=self.max_missing, lowercase=self.lowercase)

    def gender_tests(self) -> list:
        return wordlists.weat_tests("gender")

    def neutral(self) -> list:
        if self.neutral_words is None:
            self.neutral_words = wordlists.professions(self.lists)
        return self.neutral_words

    @property
    def reference_label(self) -> str:
        """Which direction the "original direction" rows use."""
        return self.direction_name or (
            "the given subspace" if self.subspace is not None
            else f"fitted on the definitional pairs in '{self.reference_name}' (the first column)")

    def reference_direction(self):
        """``(g, label)``: the one direction every column is measured on ("original")."""
        if self._reference_direction is None:
            from .projection import gender_direction

            g, _ = gender_direction(self.reference, self.subspace, lists=self.lists)
            self._reference_direction = (g, self.reference_label)
        return self._reference_direction

    def template_set(self):
        """The extrinsic templates (the bundled ones unless ``templates`` names a file)."""
        if self._template_set is None:
            from ..fairness.templates import TemplateSet, load_templates

            t = self.templates
            self._template_set = t if isinstance(t, TemplateSet) else load_templates(t)
        return self._template_set

    def probe(self, emb):
        """The sentiment probe fitted on ``emb`` (once per embedding in the evaluation)."""
        if id(emb) not in self._probes:
            from .extrinsic import fit_probe

            self._probes[id(emb)] = (emb, fit_probe(emb, self.template_set(), random_state=self.random_state,
                                                    lowercase=self.lowercase))
        return self._probes[id(emb)][1]

    def list_text(self, value, role: str, unit: str) -> str:
        """``name: source, size unit (path)`` of a list argument, for the report."""
        info = wordlists.source_of(value, role, self.lists)
        where = f" (`{info['path']}`)" if info.get("path") else ""
        return f"{info['name']}: {info['source']}, {info['size']:,} {unit}{where}"


class Metric:
    """One metric as :func:`~embdebias.evaluation` sees it (subclass and :func:`register`).

    Attributes
    ----------
    name, title : str
        Machine key and display title.
    legend : str
        How to read it: what it measures and which way is fairer.
    statistics : dict
        ``{statistic key: display label}``, in display order.
    """

    name = ""
    title = ""
    legend = ""
    statistics: dict = {}

    def units(self, ctx: EvalContext) -> list[str]:
        """The units of work (one result each), e.g. the WEAT test ids."""
        return [self.name]

    def tests(self, unit: str) -> list[str]:
        """The report's test rows that ``unit`` fills."""
        return [unit]

    def legend_for(self, ctx: EvalContext) -> str:
        return self.legend

    def data(self, ctx: EvalContext) -> str:
        """Which lists and data set the metric used: their source and size."""
        return ""

    def score(self, emb, unit: str, ctx: EvalContext):
        """``(result, {test: {statistic: value}}, {(test, statistic): Sample})`` of ``unit`` on ``emb``.

        The samples (see :mod:`embdebias.metrics.uncertainty`) are the items each bias
        statistic was computed from, for its bootstrap interval and the paired comparison
        with the reference column; quality statistics have none.
        """
        raise NotImplementedError


def _set_vectors(emb, sets: dict, ctx: EvalContext) -> tuple[dict, dict]:
    """``({set: found words}, {set: unit vectors})`` of named word sets, as the metrics look them up."""
    from ._common import lookup, unit_vectors

    looks = {k: lookup(emb, words, name=k, max_missing=1.0, min_size=0, lowercase=ctx.lowercase)
             for k, words in sets.items()}
    return {k: lk.words for k, lk in looks.items()}, {k: unit_vectors(emb, lk.rows) for k, lk in looks.items()}


class Weat(Metric):
    name, title = "weat", "WEAT"
    legend = ("Effect size d (Caliskan et al. 2017): how much more the first target set (male terms) "
              "associates with the first attribute set than the second target set (female terms) "
              "does, in pooled standard deviations; 0 is fairer, |d| >= 0.8 is large. p-value: "
              "one-sided permutation test (exact, or Monte-Carlo with its standard error; "
              "'< x' when no permutation reached d).")
    statistics = {"effect_size": "effect size d", "p_value": "p-value", N_SCORED: "words scored"}

    def units(self, ctx):
        return [t.id for t in ctx.weat_tests]

    def legend_for(self, ctx):
        titles = "; ".join(f"{t.id}: {t.title}" for t in ctx.weat_tests)
        return f"{self.legend} Tests: {titles}."

    def data(self, ctx):
        groups = list(dict.fromkeys(t.group for t in ctx.weat_tests))
        return (f"{len(ctx.weat_tests)} WEAT tests from `wordlists/weat_tests.json`: "
                + "; ".join(f"group {g}: {_WEAT_GROUP_SOURCES.get(g, 'user tests')}" for g in groups))

    def score(self, emb, unit, ctx):
        from .weat import weat

        test = next(t for t in ctx.weat_tests if t.id == unit)
        r = weat(emb, test, n_permutations=ctx.n_permutations, exact_limit=ctx.exact_limit,
                 random_state=ctx.random_state, **ctx.common)
        cells = {"effect_size": r.effect_size, "p_value": r.p_value, "p_value_se": r.p_value_se,
                 "n_permutations": r.n_permutations, N_SCORED: r.n_scored}
        words, vec = _set_vectors(emb, {k: getattr(test, k).words for k in "XYAB"}, ctx)
        cos = {x + a: vec[x] @ vec[a].T for x in "XY" for a in "AB"}
        sample = Sample(words, weat_effect_sizes(cos), fairer="zero")
        return r, {unit: cells}, {(unit, "effect_size"): sample}


class Rnsb(Metric):
    name, title = "rnsb", "RNSB"
    legend = ("RNSB (Sweeney & Najafian 2019): KL divergence from uniform of the identity terms' "
              "predicted probability of negative sentiment; 0 is fairer. Mean and standard "
              "deviation over classifier runs; the classifier's held-out accuracy says how far to "
              "trust it.")
    statistics = {"rnsb": "RNSB (KL)", "rnsb_std": "RNSB std", "accuracy": "classifier accuracy",
                  N_SCORED: "identity terms scored"}

    def units(self, ctx):
        return ["identity terms"]

    def data(self, ctx):
        who = ("the male and female terms of the gender WEAT tests (curated)" if ctx.identity_terms is None
               else f"{len(ctx.identity_terms)} given identity terms")
        return f"identity terms: {who}; sentiment words: the VADER lexicon (Hutto & Gilbert 2014), |valence| >= 1"

    def score(self, emb, unit, ctx):
        from .rnsb import rnsb

        r = rnsb(emb, ctx.identity_terms, C=ctx.rnsb_C, n_runs=ctx.rnsb_runs,
                 random_state=ctx.random_state, **ctx.common)
        sample = Sample({"identity": list(r.probabilities), "runs": list(range(len(r.run_probabilities)))},
                        rnsb_values(r.run_probabilities))
        return r, {unit: {"rnsb": r.rnsb, "rnsb_std": r.rnsb_std, "accuracy": r.accuracy,
                          N_SCORED: r.n_scored}}, {(unit, "rnsb"): sample}


class Ect(Metric):
    name, title = "ect", "ECT"
    legend = ("ECT (Dev & Phillips 2019): Spearman correlation between the attribute words' "
              "similarities to the mean male-term vector and to the mean female-term vector; "
              "1 is fairer.")
    statistics = {"spearman": "Spearman rho", N_SCORED: "attribute words scored"}

    def units(self, ctx):
        tests = ctx.gender_tests()
        return [t.id for t in tests] + ([ctx.neutral_name] if tests else [])

    def data(self, ctx):
        return (f"the gender WEAT tests' target and attribute sets (curated); "
                f"{ctx.list_text(ctx.neutral_source, 'professions', 'words')}")

    def score(self, emb, unit, ctx):
        from .ect import ect

        tests = ctx.gender_tests()
        by_id = {t.id: t for t in tests}
        if unit in by_id:
            t = by_id[unit]
            r = ect(emb, t, **ctx.common)
            attributes = list(t.A.words) + list(t.B.words)
        else:
            t, attributes = tests[0], ctx.neutral()
            r = ect(emb, t.X, t.Y, attributes, **ctx.common)
        words, vec = _set_vectors(emb, {"X": t.X.words, "Y": t.Y.words, "attributes": attributes}, ctx)
        sample = Sample(words, ect_correlations(vec["X"], vec["Y"], vec["attributes"]), fairer="higher")
        return r, {unit: {"spearman": r.correlation, N_SCORED: r.n_scored}}, {(unit, "spearman"): sample}


class Bat(Metric):
    name, title = "bat", "BAT"
    legend = ("BAT (Zhao et al. 2018, as in Fersini et al.): the share of SemBias lines whose pair "
              "best aligned with she - he is the gender-definition pair (higher is better), the "
              "stereotype pair (lower is fairer) or an unrelated pair (None; high when the gender "
              "direction itself was lost). sub: the last 40 lines, whose definition pairs are held "
              "out of the debiasing lists.")
    statistics = {"definition": "Definition", "stereotype": "Stereotype", "none": "None",
                  N_SCORED: "lines scored"}

    def units(self, ctx):
        return ["sembias"]

    def data(self, ctx):
        from pathlib import Path

        value = None if ctx.sembias is None else Path(ctx.sembias)
        return f"{ctx.list_text(value, 'sembias', 'lines')}; direction she - he of each column"

    def tests(self, unit):
        return ["all", "sub"]

    def score(self, emb, unit, ctx):
        from .bat import bat

        r = bat(emb, ctx.sembias, lists=ctx.lists, **ctx.common)
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


class DirectBias(Metric):
    name, title = "direct_bias", "Direct bias"
    legend = ("DirectBias_c (Bolukbasi et al. 2016): mean |cos(w, g)|^c over the professions; 0 is "
              "fairer. Original direction: g fitted once, on the first column, so every column is "
              "measured on the same axis. Own direction: g re-fitted on each column's definitional "
              "pairs; after debiasing the gender information may sit on a new axis, which only "
              "this row shows.")
    statistics = {"direct_bias_original": "DirectBias (original direction)",
                  "direct_bias_own": "DirectBias (own direction)", N_SCORED: "words scored"}

    def units(self, ctx):
        return [ctx.neutral_name]

    def data(self, ctx):
        return (f"{ctx.list_text(ctx.neutral_source, 'professions', 'words')}; original direction: "
                f"{ctx.reference_label}; own direction: fitted on each column's definitional pairs")

    def score(self, emb, unit, ctx):
        from ..subspace import resolve_subspace
        from .projection import DirectBiasResult, projections

        g, label = ctx.reference_direction()
        own_g = resolve_subspace(None, emb, lists=ctx.lists).direction_
        cells, samples, first = {}, {}, None
        for stat, direction in (("direct_bias_original", g), ("direct_bias_own", own_g)):
            p = projections(emb, ctx.neutral(), subspace=direction, **ctx.common)
            per_word = np.abs(np.asarray(p.projections)) ** ctx.c
            cells[stat] = float(per_word.mean())
            samples[(unit, stat)] = Sample({"items": p.words}, mean_of(per_word))
            first = first or p
        r = DirectBiasResult(cells["direct_bias_original"], float(ctx.c), len(first.words), first.missing,
                             first.lowercased, f"original: {label}", unit)
        cells[N_SCORED] = r.n_scored
        return r, {unit: cells}, samples


class Similarity(Metric):
    name, title = "similarity", "Word similarity"
    legend = ("Spearman correlation of cosine similarity with human similarity ratings; higher "
              "means more of the semantic quality is kept.")
    statistics = {"spearman": "Spearman rho", N_SCORED: "pairs scored"}

    def units(self, ctx):
        return list(ctx.similarity_datasets)

    def data(self, ctx):
        return f"{', '.join(ctx.similarity_datasets)} (as shipped with gensim's test data)"

    def score(self, emb, unit, ctx):
        from .quality import word_similarity

        r = word_similarity(emb, unit, lowercase=ctx.lowercase)
        return r, {unit: {"spearman": r.spearman, N_SCORED: r.n_scored}}, {}


class Analogy(Metric):
    name, title = "analogy", "Analogy"
    legend = ("3CosAdd accuracy on the Google analogy questions; higher means more of the semantic "
              "quality is kept. Only questions whose four words are among the most frequent words "
              "(see Data) are scored.")
    statistics = {"accuracy": "accuracy", "semantic_accuracy": "semantic accuracy",
                  "syntactic_accuracy": "syntactic accuracy", N_SCORED: "questions scored"}

    def units(self, ctx):
        return ["google_analogy"]

    def data(self, ctx):
        return (f"Google analogy questions (gensim's test data); questions and answers restricted to "
                f"the {ctx.analogy_restrict_vocab:,} most frequent words, as gensim does: a question "
                f"with a word outside them is not scored (its words are listed as out of vocabulary)")

    def score(self, emb, unit, ctx):
        from .quality import analogy

        r = analogy(emb, restrict_vocab=ctx.analogy_restrict_vocab, lowercase=ctx.lowercase)
        return r, {unit: {"accuracy": r.accuracy, "semantic_accuracy": r.semantic_accuracy,
                          "syntactic_accuracy": r.syntactic_accuracy, N_SCORED: r.n_scored}}, {}


def _binomial_interval(p: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` over ``n`` items."""
    if not n or not np.isfinite(p):
        return float("nan"), float("nan")
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def _correlation_interval(r: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Fisher-z interval of a Pearson correlation over ``n`` pairs."""
    if n <= 3 or not np.isfinite(r):
        return float("nan"), float("nan")
    f = np.arctanh(np.clip(r, -0.999999, 0.999999))
    return float(np.tanh(f - z / np.sqrt(n - 3))), float(np.tanh(f + z / np.sqrt(n - 3)))


class Residual(Metric):
    name, title = "residual", "Residual bias"
    legend = ("Is the gender bias still recoverable? (Gonen & Goldberg 2019.) The 500 most male- and "
              "500 most female-biased words of the original (by cosine with he - she, gender-specific "
              "words left out) are clustered with 2-means in each column: accuracy 0.5 means the "
              "bias is gone, 1.0 that it is fully recoverable. An RBF SVM trained on 1,000 of the "
              "5,000 most biased words predicts the other 4,000 (0.5 is fair). Neighbour correlation: "
              "Pearson r between a word's original bias and the male share of its 100 nearest "
              "neighbours in the column (0 is fair). Re-fitted direction: direct bias along the "
              "direction fitted again on each column's definitional pairs, and that direction's "
              "|cos| with the original one. Intervals here are analytic (Wilson for the accuracies, "
              "Fisher z for r), because a bootstrap would refit k-means and the SVM each time; "
              "they hold the words fixed.")
    statistics = {"cluster_accuracy": "clustering accuracy", "classification_accuracy": "SVM accuracy",
                  "neighbour_correlation": "neighbour correlation r",
                  "refit_direct_bias": "DirectBias (re-fitted direction)",
                  "direction_cosine": "abs. cosine, re-fitted vs original direction",
                  "refit_variance_ratio": "explained variance of the re-fitted direction",
                  N_SCORED: "words clustered"}

    def units(self, ctx):
        return ["gender"]

    def data(self, ctx):
        return (f"candidates: the first 50,000 alphabetic words of '{ctx.reference_name}' minus "
                f"{ctx.list_text(None, 'gender_specific', 'words')}; bias of a word: its cosine with "
                f"he - she in '{ctx.reference_name}'; re-fitted direction measured on "
                f"{ctx.list_text(ctx.neutral_source, 'professions', 'words')}")

    def score(self, emb, unit, ctx):
        from .residual import refit_direction_bias, residual_bias

        r = residual_bias(ctx.reference, emb, random_state=ctx.random_state, lists=ctx.lists,
                          max_missing=ctx.max_missing, lowercase=ctx.lowercase)
        refit = refit_direction_bias(emb, ctx.neutral(), original=ctx.reference, lists=ctx.lists,
                                     max_missing=ctx.max_missing, lowercase=ctx.lowercase)
        n_cluster = sum(len(v) for v in r.cluster_words.values())
        cells = {"cluster_accuracy": r.cluster_accuracy, "classification_accuracy": r.classification_accuracy,
                 "neighbour_correlation": r.neighbour_correlation, "refit_direct_bias": refit.direct_bias,
                 "direction_cosine": refit.direction_cosine, "refit_variance_ratio": refit.refit_variance_ratio,
                 N_SCORED: n_cluster}
        n_classify = sum(len(v) for v in r.classify_words.values())
        for stat, (lo, hi) in (("cluster_accuracy", _binomial_interval(r.cluster_accuracy, n_cluster)),
                               ("classification_accuracy", _binomial_interval(r.classification_accuracy, r.n_test)),
                               ("neighbour_correlation", _correlation_interval(r.neighbour_correlation, n_classify))):
            cells[f"{stat}_ci_low"], cells[f"{stat}_ci_high"] = lo, hi
        return r, {unit: cells}, {}


class IndirectBias(Metric):
    name, title = "indirect_bias", "Indirect bias"
    legend = ("Bolukbasi et al.'s (2016) indirect bias beta(w, v): the share of the similarity of two "
              "words that is due to their gender components, averaged over every pair of the "
              "professions whose similarity is defined (|w.v| >= 0.001); 0 is fairer. Direction: "
              "the original's. The interval is the normal one of a mean over pairs, treated as independent.")
    statistics = {"mean_beta": "mean beta over pairs", N_SCORED: "pairs scored"}

    def units(self, ctx):
        return [ctx.neutral_name]

    def data(self, ctx):
        return f"every pair of {ctx.list_text(ctx.neutral_source, 'professions', 'words')}"

    def score(self, emb, unit, ctx):
        from .residual import indirect_bias

        g, _ = ctx.reference_direction()
        r = indirect_bias(emb, ctx.neutral(), subspace=g, lists=ctx.lists, max_missing=ctx.max_missing,
                          lowercase=ctx.lowercase)
        beta = np.asarray(r.beta, dtype=np.float64)
        beta = beta[np.isfinite(beta)]
        # Tens of thousands of pairs: a normal interval of their mean (pairs sharing a word
        # are not independent, so it is on the narrow side; the legend says so).
        half = 1.959964 * beta.std(ddof=1) / np.sqrt(beta.size) if beta.size > 1 else float("nan")
        return r, {unit: {"mean_beta": r.mean_beta, "mean_beta_ci_low": r.mean_beta - half,
                          "mean_beta_ci_high": r.mean_beta + half, N_SCORED: r.n_scored}}, {}


class Analogies(Metric):
    name, title = "analogies", "Generated gender analogies"
    legend = ("Bolukbasi et al.'s (2016) generated analogies she : he :: x : y: for each x among the "
              "50,000 most frequent words, the y within distance 1 whose difference x - y best "
              "aligns with she - he; the top pairs are listed per column. Mean score: mean "
              "cos(she - he, x - y) of the top 50 (lower after debiasing means fewer gendered analogies).")
    statistics = {"mean_score": "mean score of the top 50", N_SCORED: "pairs listed"}

    def units(self, ctx):
        return ["she:he"]

    def data(self, ctx):
        return "the column's own 50,000 most frequent words"

    def score(self, emb, unit, ctx):
        from .residual import gender_analogies

        pairs = gender_analogies(emb, n=50, lowercase=ctx.lowercase)
        result = AnalogyListResult([list(p) for p in pairs])
        return result, {unit: {"mean_score": result.value, N_SCORED: len(pairs)}}, {}


@dataclass
class AnalogyListResult:
    """The pairs of :func:`~embdebias.metrics.residual.gender_analogies` as a metric result."""

    pairs: list
    missing: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        return float(np.mean([p[2] for p in self.pairs])) if self.pairs else float("nan")

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "missing": {}, "value": self.value, "n_scored": len(self.pairs),
                "listing": ", ".join(f"{x}:{y} ({score:.2f})" for x, y, score in self.pairs[:20])}


class Extrinsic(Metric):
    name, title = "extrinsic", "Extrinsic bias"
    legend = ("Bias of a model built on the embedding, with Czarnowska et al. (2021)'s generalized metrics. "
              "A sentiment probe (logistic regression on the mean of a sentence's unit word vectors, "
              "trained on VADER lexicon words, never on a template word) scores sentences that differ "
              "only in a female or male identity term; the rows compare its P(positive). "
              "Between the genders: the score gap (female minus male; positive: female terms read as "
              "more positive) and the counterfactual PCM, the mean |female - male| over every "
              "template and pair of counterpart terms (my mother / my father, Mary / John). The group PCM, BCM and MCM of two groups "
              "are |gap|, |gap|/2 and |gap| exactly, so they have no interval of their own. Over "
              "terms (each term its own group): the counterfactual BCM and MCM (range, std) say how "
              "much the identity term moves the score at all, within a gender as well as across. "
              "FPED, FNED and TPR gap (emotion only) take the emotion word's polarity as gold label "
              "and call a sentence positive at or above the family's median score. 0 is fairer for "
              "every bias row. The probe's held-out accuracy and the template accuracy and AUC say "
              "how far to trust it. Intervals: bootstrap over templates and terms; an absolute "
              "value near 0 can have an interval above it (a resample's |difference| is rarely "
              "smaller), so the signed gap's interval says whether 0 is plausible.")

    @property
    def statistics(self):
        from .extrinsic import STATISTICS

        return {**{s.key: s.label for s in STATISTICS}, "accuracy": "probe accuracy (held-out lexicon words)",
                "template_accuracy": "template accuracy", "template_auc": "template AUC",
                "threshold": "decision threshold", N_SCORED: "sentences scored"}

    def units(self, ctx):
        return list(ctx.template_set().families)

    def data(self, ctx):
        ts = ctx.template_set()
        groups = ", ".join(f"{len(v)} {g}" for g, v in ts.groups.items())
        fams = "; ".join(f"{f.name}: {len(f.templates)} templates x {len(f.units) // max(len(f.templates), 1)} "
                         f"fillers on average ({len(f.units)} counterfactual templates)"
                         for f in ts.families.values())
        if hasattr(ctx.templates, "families"):
            where = "a template set given in Python"
        else:
            info = wordlists.describe(ctx.templates or "extrinsic_templates", ctx.lists)
            where = f"`{info['path']}` ({info['source']})"
        return (f"templates: {where}; identity terms: {groups}; {fams}. Probe: trained on VADER "
                f"(Hutto & Gilbert 2014) words with |valence| >= 1, minus every template word")

    def score(self, emb, unit, ctx):
        from .extrinsic import STATISTICS, extrinsic_result, grid_keys, grid_statistic, sample_items, score_family
        from .uncertainty import Sample

        probe = ctx.probe(emb)
        fs = score_family(probe, ctx.template_set(), unit, max_missing=ctx.max_missing)
        r = extrinsic_result(fs, probe)
        cells = {**r.statistics, "accuracy": r.accuracy, "template_accuracy": r.template_accuracy,
                 "template_auc": r.template_auc, "threshold": r.threshold, N_SCORED: r.n_scored}
        fairer = {s.key: s.fairer for s in STATISTICS}
        samples = {(unit, key): Sample(sample_items(fs, key), grid_statistic(fs, key, r.threshold), fairer[key])
                   for key in grid_keys(fs)}
        return r, {unit: {k: v for k, v in cells.items() if v is not None}}, samples


class OccupationBias(Metric):
    name, title = "occupation_bias", "Occupation bias (Lu et al.)"
    legend = ("Lu et al.'s (2020) aggregate occupation bias for an embedding: B(o) = mean cos(o, male "
              "terms) - mean cos(o, female terms) per occupation; AOB = mean |B(o)| (0 is fairer), "
              "signed AOB = mean B(o) (positive: occupations lean male; 0 is fairer). Intervals: "
              "bootstrap over the occupations, the gendered terms held fixed.")
    statistics = {"aob": "AOB", "signed_aob": "signed AOB", N_SCORED: "occupations scored"}

    def units(self, ctx):
        return ["lu2020"]

    def data(self, ctx):
        return (f"Lu et al. (2020)'s occupations (`wordlists/lu2020/occupations.txt`); male and female terms: "
                f"{ctx.list_text(None, 'definitional_pairs', 'pairs')}")

    def score(self, emb, unit, ctx):
        from .occupation import lu_occupations, occupation_bias, occupation_bias_statistic, occupation_cosines

        r = occupation_bias(emb, lists=ctx.lists, **ctx.common)
        looks, cos_m, cos_f = occupation_cosines(emb, lu_occupations(), r.male, r.female, max_missing=1.0,
                                                 lowercase=ctx.lowercase)
        items = {"occupations": looks[0].words}
        samples = {(unit, "aob"): Sample(items, occupation_bias_statistic(cos_m, cos_f, False)),
                   (unit, "signed_aob"): Sample(items, occupation_bias_statistic(cos_m, cos_f, True), "zero")}
        return r, {unit: {"aob": r.aob, "signed_aob": r.signed_aob, N_SCORED: r.n_scored}}, samples


#: The registered metrics, in report order.
REGISTRY: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add a metric (an instance of a :class:`Metric` subclass) to the registry."""
    if not metric.name:
        raise EmbdebiasError("a metric needs a name")
    REGISTRY[metric.name] = metric
    return metric


for _cls in (Weat, Rnsb, Ect, Bat, DirectBias, IndirectBias, Residual, Analogies, OccupationBias, Extrinsic,
             Similarity, Analogy):
    register(_cls())


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (case-insensitive)."""
    key = str(name).lower()
    if key not in REGISTRY:
        raise EmbdebiasError(f"unknown metric {name!r}; known: {', '.join(REGISTRY)}")
    return REGISTRY[key]
