"""Run a suite of bias and quality metrics over one or more embeddings.

:func:`evaluate` returns a :class:`Report`: one row per (metric, test, statistic), one
column per embedding, like a paper's table, plus every metric's full result (including
the out-of-vocabulary words of each set) and the parameters used.

The default suite (:data:`DEFAULT_SUITE`), and the choices behind it:

``weat``
    The seven ``gender`` WEAT tests (male vs female terms against career/family,
    math/arts, ...); ``weat_groups=("gender", "caliskan")`` adds Caliskan et al.'s ten.
    Rows: effect size and p-value.
``rnsb``
    One RNSB over the identity terms (the gender tests' male and female terms): RNSB
    measures sentiment, which the tests' attribute sets do not change, so one run over
    the identity terms is the meaningful unit.  Rows: RNSB (mean over ``rnsb_runs``),
    its standard deviation, the classifier's held-out accuracy.
``ect``
    One ECT per gender test, comparing its two target sets (male vs female terms) over
    the union of its attribute sets, plus one over the professions (Dev & Phillips'
    own setting).  Row: Spearman's rho.
``bat``
    The Bias Analogy Test on ``sembias`` (default: the SemBias of ``lists``, Zhao et
    al.'s 440 lines for "published"), with Zhao et al.'s prediction rule in the
    female-positive convention (direction ``she - he``).  Rows:
    Definition / Stereotype / None fractions, over all instances and the Sub subset.
``direct_bias``
    ``DirectBias_c`` over the professions of ``lists`` (Bolukbasi et al.'s 320).  The gender direction is, by default, each
    embedding's own, fitted with :class:`~embdebias.subspace.BiasSubspace` on the
    definitional pairs (so a debiased embedding is measured along the direction it
    still has); pass ``subspace`` to measure every embedding along one direction.
``similarity`` / ``analogy``
    WordSim353 and SimLex-999 Spearman correlations, and Google analogy accuracy over
    the ``analogy_restrict_vocab`` most frequent words: what debiasing costs.

Any word set losing more than ``max_missing`` of its words raises
:class:`~embdebias.errors.MissingWordsError` naming the words.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._atomic import atomic_file
from .embedding import as_embedding
from .errors import EmbdebiasError
from .metrics._common import DEFAULT_MAX_MISSING, to_builtin

#: Metrics run by default, in report order.
DEFAULT_SUITE = ("weat", "rnsb", "ect", "bat", "direct_bias", "similarity", "analogy")

#: Display names of the metrics (the first element of each row key).
METRIC_TITLES = {
    "weat": "WEAT", "rnsb": "RNSB", "ect": "ECT", "bat": "BAT", "direct_bias": "Direct bias",
    "similarity": "Word similarity", "analogy": "Analogy",
}

_REPORT_VERSION = 1


@dataclass
class Report:
    """Scores of several embeddings, one row per (metric, test, statistic).

    Attributes
    ----------
    embeddings : list of str
        Column names, in order.
    rows : list of (metric, test, statistic)
        Row keys, in order (``metric`` is a key of :data:`METRIC_TITLES`).
    values : dict
        ``{(metric, test, statistic): {embedding: float or None}}``.
    details : dict
        ``{embedding: {"metric/test": result.to_dict()}}``, with the out-of-vocabulary
        words of every set under ``"missing"``.
    params : dict
        The parameters of the run.
    data : dict
        ``{metric: description}``: which word lists and data set each metric's table
        used, where they come from (published or curated) and how many items they hold
        (see :func:`data_sources`).
    """

    embeddings: list[str]
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    values: dict[tuple[str, str, str], dict[str, float | None]] = field(default_factory=dict)
    details: dict[str, dict[str, dict]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)

    # -- building --------------------------------------------------------------------
    def add(self, embedding: str, metric: str, test: str, statistic: str, value) -> None:
        key = (metric, test, statistic)
        if key not in self.values:
            self.rows.append(key)
            self.values[key] = {}
        value = None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value
        self.values[key][embedding] = value if value is None or isinstance(value, (int, bool)) else float(value)

    @classmethod
    def combine(cls, reports) -> "Report":
        """The columns of several reports side by side, in the order given.

        Rows are the union of the reports' rows in first-seen order; a cell a report
        does not have stays empty. Column names must be distinct.
        """
        reports = list(reports)
        if not reports:
            raise EmbdebiasError("Report.combine: no reports given")
        out = cls([], params=dict(reports[0].params), data=dict(reports[0].data))
        for rep in reports:
            out.data.update({k: v for k, v in rep.data.items() if k not in out.data})
            clash = set(out.embeddings) & set(rep.embeddings)
            if clash:
                raise EmbdebiasError(f"Report.combine: column(s) {', '.join(sorted(clash))} in two reports")
            out.embeddings.extend(rep.embeddings)
            for key in rep.rows:
                if key not in out.values:
                    out.rows.append(key)
                    out.values[key] = {}
                out.values[key].update(rep.values[key])
            out.details.update(rep.details)
        return out

    # -- access ----------------------------------------------------------------------
    def value(self, metric: str, test: str, statistic: str, embedding: str | None = None):
        """One cell; ``embedding`` may be omitted when there is only one column."""
        if embedding is None:
            if len(self.embeddings) != 1:
                raise EmbdebiasError(f"the report has {len(self.embeddings)} embeddings; name one")
            embedding = self.embeddings[0]
        try:
            return self.values[(metric, test, statistic)].get(embedding)
        except KeyError:
            raise EmbdebiasError(f"no row ({metric!r}, {test!r}, {statistic!r}) in the report") from None

    @property
    def missing(self) -> dict[str, dict[str, dict[str, list[str]]]]:
        """``{embedding: {"metric/test": {set: [out-of-vocabulary words]}}}`` (non-empty only)."""
        out: dict = {}
        for emb, results in self.details.items():
            for key, res in results.items():
                sets = {k: v for k, v in (res.get("missing") or {}).items() if v}
                if sets:
                    out.setdefault(emb, {})[key] = sets
        return out

    # -- serialisation -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-serialisable dict (see :meth:`from_dict`)."""
        return to_builtin({
            "version": _REPORT_VERSION,
            "embeddings": list(self.embeddings),
            "rows": [{"metric": m, "test": t, "statistic": s, "values": dict(self.values[(m, t, s)])}
                     for m, t, s in self.rows],
            "details": self.details,
            "params": self.params,
            "data": self.data,
        })

    @classmethod
    def from_dict(cls, data: Mapping) -> "Report":
        """Rebuild a report from :meth:`to_dict`'s output."""
        try:
            report = cls(list(data["embeddings"]), details=dict(data.get("details", {})),
                         params=dict(data.get("params", {})), data=dict(data.get("data", {})))
            for row in data["rows"]:
                key = (row["metric"], row["test"], row["statistic"])
                report.rows.append(key)
                report.values[key] = dict(row["values"])
        except (KeyError, TypeError) as exc:
            raise EmbdebiasError(f"not an embdebias report: missing or malformed {exc}") from None
        return report

    def to_json(self, path, *, indent: int = 2) -> None:
        """Write :meth:`to_dict` as JSON to ``path`` (atomically)."""
        with atomic_file(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, indent=indent, allow_nan=False)
                fh.write("\n")

    @classmethod
    def from_json(cls, path) -> "Report":
        with open(path, encoding="utf-8") as fh:
            try:
                return cls.from_dict(json.load(fh))
            except json.JSONDecodeError as exc:
                raise EmbdebiasError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None

    # -- display -----------------------------------------------------------------------
    def to_markdown(self, *, digits: int = 3, missing: bool = True) -> str:
        """Markdown tables, one per metric, rows = tests x statistics, columns = embeddings.

        With ``missing=True`` a last section lists the out-of-vocabulary words.
        """
        parts = []
        metrics = list(dict.fromkeys(m for m, _, _ in self.rows))
        for metric in metrics:
            parts.append(f"### {METRIC_TITLES.get(metric, metric)}\n")
            if metric in self.data:
                parts.append(f"Data: {self.data[metric]}\n")
            header = ["test", "statistic", *self.embeddings]
            lines = ["| " + " | ".join(header) + " |",
                     "| " + " | ".join(["---", "---"] + ["---:"] * len(self.embeddings)) + " |"]
            last_test = None
            for m, t, s in self.rows:
                if m != metric:
                    continue
                cells = [_fmt(self.values[(m, t, s)].get(e), s, digits) for e in self.embeddings]
                lines.append("| " + " | ".join([t if t != last_test else "", s, *cells]) + " |")
                last_test = t
            parts.append("\n".join(lines) + "\n")
        if missing:
            oov = self.missing
            if oov:
                parts.append("### Out-of-vocabulary words\n")
                for emb, per in oov.items():
                    for key, sets in per.items():
                        listed = "; ".join(f"{k}: {', '.join(v[:20])}{' ...' if len(v) > 20 else ''}"
                                           for k, v in sets.items())
                        parts.append(f"- {emb}, {key}: {listed}")
                parts.append("")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.to_markdown()


def _fmt(v, statistic: str, digits: int) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if "p-value" in statistic:
        return f"{v:.{digits}g}"
    return f"{v:.{digits}f}"


def _named_embeddings(embeddings) -> dict:
    if isinstance(embeddings, Mapping):
        items = [(str(k), as_embedding(v, name=str(k))) for k, v in embeddings.items()]
    elif isinstance(embeddings, (list, tuple)) and not (
            len(embeddings) == 2 and not hasattr(embeddings[0], "vectors")
            and not hasattr(embeddings[0], "index_to_key") and hasattr(embeddings[1], "shape")):
        items = []
        for e in embeddings:
            emb = as_embedding(e)
            items.append((emb.name, emb))
    else:
        emb = as_embedding(embeddings)
        items = [(emb.name, emb)]
    if not items:
        raise EmbdebiasError("evaluate: no embeddings given")
    out: dict = {}
    for name, emb in items:
        unique, k = name, 2
        while unique in out:
            unique, k = f"{name}-{k}", k + 1
        out[unique] = emb
    return out


def suite_options(names) -> dict:
    """Turn a list of metric names, WEAT groups and WEAT test ids into :func:`evaluate` options.

    ``["weat", "bat"]`` -> ``{"suite": ("weat", "bat")}``; ``["caliskan"]`` -> the WEAT
    metric over that group; ``["weat6", "gender_math_arts"]`` -> those WEAT tests.
    Unknown names raise :class:`EmbdebiasError` listing what is known.
    """
    from . import wordlists

    tests = wordlists.weat_tests()
    groups = sorted({t.group for t in tests})
    by_id = {t.id: t for t in tests}
    suite, weat_groups, weat_tests = [], [], []
    for name in names:
        if name in DEFAULT_SUITE:
            suite.append(name)
        elif name in groups:
            weat_groups.append(name)
        elif name in by_id:
            weat_tests.append(by_id[name])
        else:
            raise EmbdebiasError(f"unknown test {name!r}; known: metrics {', '.join(DEFAULT_SUITE)}; "
                                 f"WEAT groups {', '.join(groups)}; WEAT tests {', '.join(by_id)}")
    if (weat_groups or weat_tests) and "weat" not in suite:
        suite.insert(0, "weat")
    options = {"suite": tuple(suite)}
    if weat_tests:
        options["weat_tests"] = weat_tests + [t for g in weat_groups for t in wordlists.weat_tests(g)]
    elif weat_groups:
        options["weat_groups"] = tuple(weat_groups)
    return options


def _list_text(info: dict, unit: str) -> str:
    where = f" (`{info['path']}`)" if info.get("path") else ""
    return f"{info['name']}: {info['source']}, {info['size']:,} {unit}{where}"


_WEAT_GROUP_SOURCES = {
    "caliskan": "Caliskan et al. (2017)'s stimuli as published",
    "gender": "curated by the embdebias authors after Caliskan et al. (2017) and Garg et al. (2018)",
}


def data_sources(suite, *, lists: str, weat_tests, neutral_words, sembias, direction: str,
                 analogy_restrict_vocab: int, similarity_datasets) -> dict[str, str]:
    """One line per metric: which lists and data set it uses, their source and size."""
    from . import wordlists

    out = {}
    if "weat" in suite:
        groups = list(dict.fromkeys(t.group for t in weat_tests))
        out["weat"] = (f"{len(weat_tests)} WEAT tests from `wordlists/weat_tests.json`: "
                       + "; ".join(f"group {g}: {_WEAT_GROUP_SOURCES.get(g, 'user tests')}" for g in groups))
    if "rnsb" in suite:
        out["rnsb"] = ("identity terms: the male and female terms of the gender WEAT tests (curated); "
                       "sentiment words: the VADER lexicon (Hutto & Gilbert 2014), |valence| >= 1")
    neutral = None
    if "direct_bias" in suite or "ect" in suite:
        neutral = _list_text(wordlists.source_of(neutral_words, "professions", lists), "words")
    if "ect" in suite:
        out["ect"] = f"the gender WEAT tests' target and attribute sets (curated); {neutral}"
    if "bat" in suite:
        info = wordlists.source_of(None if sembias is None else Path(sembias), "sembias", lists)
        out["bat"] = f"{_list_text(info, 'lines')}; direction she - he"
    if "direct_bias" in suite:
        out["direct_bias"] = f"{neutral}; direction: {direction}"
    if "similarity" in suite:
        out["similarity"] = f"{', '.join(similarity_datasets)} (as shipped with gensim's test data)"
    if "analogy" in suite:
        out["analogy"] = (f"Google analogy questions (gensim's test data), answers searched among the "
                          f"{analogy_restrict_vocab:,} most frequent words; a question with a word "
                          f"outside them is not scored")
    return out


def evaluate(embeddings, suite=None, *, subspace=None, sembias=None, random_state: int | None = 0,
             max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True,
             weat_groups=("gender",), weat_tests=None, n_permutations: int = 100_000,
             exact_limit: int = 1_000_000, bootstrap: int = 0, rnsb_runs: int = 10,
             rnsb_C: float = 1.0, identity_terms=None, neutral_words=None, c: float = 1.0,
             similarity_datasets=("wordsim353", "simlex999"), analogy_restrict_vocab: int = 30_000,
             lists: str = "published", direction_name: str | None = None, progress=None) -> Report:
    """Score one or more embeddings with a suite of metrics (see the module docstring).

    Parameters
    ----------
    embeddings : Embedding, KeyedVectors, list of them, or dict name -> embedding
        Columns of the report (a list uses each embedding's ``name``).
    suite : sequence of str, optional
        Metrics to run, from :data:`DEFAULT_SUITE` (default: all of them).
    subspace : BiasSubspace or array, optional
        Gender direction for ``direct_bias``; default each embedding's own fitted one.
    sembias : path, optional
        SemBias-format file for BAT (default: the SemBias file of ``lists``).
    random_state : int or None, default 0
        Seed of every random step (WEAT permutations and bootstrap, RNSB splits).
    max_missing : float, default 0.2
        Largest fraction of any word set that may be out of vocabulary.
    lowercase : bool, default True
        Fall back to lowercase forms of words whose exact form is missing (reported).
    weat_groups : sequence of str, default ("gender",)
        Groups of bundled WEAT tests; add "caliskan" for Caliskan et al.'s ten.
    weat_tests : list of WeatTest, optional
        Explicit tests (replaces ``weat_groups``).
    n_permutations, exact_limit, bootstrap
        Passed to :func:`~embdebias.metrics.weat`.
    rnsb_runs, rnsb_C, identity_terms
        Passed to :func:`~embdebias.metrics.rnsb`.
    neutral_words : list of str, optional
        Words for direct bias and the professions ECT (default: bundled professions).
    c : float, default 1.0
        Direct-bias exponent.
    similarity_datasets : sequence of str
        Word-similarity datasets.
    analogy_restrict_vocab : int, default 30_000
    lists : {"published", "curated"}, default "published"
        The bundled list set for the professions (direct bias, ECT) and SemBias (BAT):
        Bolukbasi et al.'s 320 professions and Zhao et al.'s SemBias by default, so the
        numbers compare with published ones. Every table names the data it used
        (:attr:`Report.data`).
    direction_name : str, optional
        What ``subspace`` is, for the report (e.g. "the original embedding's").
    progress : callable, optional
        Called as ``progress(embedding_name, metric)`` before each metric runs.

    Returns
    -------
    Report
    """
    from . import metrics, wordlists
    from .metrics.projection import gender_direction

    named = _named_embeddings(embeddings)
    suite = tuple(DEFAULT_SUITE if suite is None else ([suite] if isinstance(suite, str) else suite))
    unknown = [m for m in suite if m not in DEFAULT_SUITE]
    if unknown:
        raise EmbdebiasError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_SUITE)}")
    if weat_tests is None:
        weat_tests = [t for g in weat_groups for t in wordlists.weat_tests(g)] if weat_groups else []
        known_groups = {t.group for t in wordlists.weat_tests()}
        bad = [g for g in (weat_groups or ()) if g not in known_groups]
        if bad:
            raise EmbdebiasError(f"unknown WEAT group(s) {', '.join(bad)}; known: {', '.join(sorted(known_groups))}")
    gender_tests = [t for t in wordlists.weat_tests("gender")] if "ect" in suite else []
    neutral_name = "professions" if neutral_words is None else "neutral words"
    wordlists.check_lists(lists)
    neutral_given = neutral_words
    if neutral_words is None and ("direct_bias" in suite or "ect" in suite):
        neutral_words = wordlists.professions(lists)
    common = dict(max_missing=max_missing, lowercase=lowercase)

    report = Report(list(named))
    report.params = to_builtin({
        "suite": list(suite), "random_state": random_state, "max_missing": max_missing,
        "lowercase": lowercase, "weat_tests": [t.id for t in weat_tests],
        "n_permutations": n_permutations, "exact_limit": exact_limit, "bootstrap": bootstrap,
        "rnsb_runs": rnsb_runs, "rnsb_C": rnsb_C, "c": c, "sembias": str(sembias) if sembias else "bundled",
        "similarity_datasets": list(similarity_datasets), "analogy_restrict_vocab": analogy_restrict_vocab,
        "direction": "given" if subspace is not None else "each embedding's own BiasSubspace",
        "bat_direction": "she - he", "lists": lists,
    })
    report.data = data_sources(
        suite, lists=lists, weat_tests=weat_tests,
        neutral_words=neutral_given,
        sembias=sembias, analogy_restrict_vocab=analogy_restrict_vocab,
        similarity_datasets=similarity_datasets,
        direction=(direction_name or "the given subspace") if subspace is not None
        else "each embedding's own, fitted on its definitional pairs")
    for name, emb in named.items():
        details = report.details.setdefault(name, {})

        def step(metric):
            if progress is not None:
                progress(name, metric)

        if "weat" in suite:
            step("weat")
            for t in weat_tests:
                r = metrics.weat(emb, t, n_permutations=n_permutations, exact_limit=exact_limit,
                                 random_state=random_state, bootstrap=bootstrap, **common)
                details[f"weat/{t.id}"] = r.to_dict()
                report.add(name, "weat", t.id, "effect size", r.effect_size)
                report.add(name, "weat", t.id, "p-value", r.p_value)
                if bootstrap:
                    report.add(name, "weat", t.id, f"CI {r.ci_level:.0%} low", r.ci[0])
                    report.add(name, "weat", t.id, f"CI {r.ci_level:.0%} high", r.ci[1])
        if "rnsb" in suite:
            step("rnsb")
            r = metrics.rnsb(emb, identity_terms, C=rnsb_C, n_runs=rnsb_runs, random_state=random_state, **common)
            details["rnsb/identity terms"] = r.to_dict()
            report.add(name, "rnsb", "identity terms", "RNSB (KL)", r.rnsb)
            report.add(name, "rnsb", "identity terms", "RNSB std", r.rnsb_std)
            report.add(name, "rnsb", "identity terms", "classifier accuracy", r.accuracy)
        if "ect" in suite:
            step("ect")
            for t in gender_tests:
                r = metrics.ect(emb, t, **common)
                details[f"ect/{t.id}"] = r.to_dict()
                report.add(name, "ect", t.id, "Spearman rho", r.correlation)
            if gender_tests:
                t0 = gender_tests[0]
                r = metrics.ect(emb, t0.X, t0.Y, neutral_words, **common)
                details[f"ect/{neutral_name}"] = r.to_dict()
                report.add(name, "ect", neutral_name, "Spearman rho", r.correlation)
        if "bat" in suite:
            step("bat")
            r = metrics.bat(emb, sembias, lists=lists, **common)
            details["bat/sembias"] = r.to_dict()
            for subset, prefix in (("all", ""), ("sub", "sub_")):
                for stat in ("definition", "stereotype", "none"):
                    report.add(name, "bat", subset, stat.capitalize(), getattr(r, prefix + stat))
                report.add(name, "bat", subset, "instances scored",
                           r.n_scored if subset == "all" else r.sub_n_scored)
        if "direct_bias" in suite:
            step("direct_bias")
            g, _ = gender_direction(emb, subspace)
            r = metrics.direct_bias(emb, neutral_words, c=c, subspace=g, **common)
            r.direction = "given" if subspace is not None else "BiasSubspace fitted on this embedding"
            r.words_name = neutral_name
            details[f"direct_bias/{neutral_name}"] = r.to_dict()
            report.add(name, "direct_bias", neutral_name, f"DirectBias_{c:g}", r.direct_bias)
            report.add(name, "direct_bias", neutral_name, "words scored", r.n_words)
        if "similarity" in suite:
            step("similarity")
            for ds in similarity_datasets:
                r = metrics.word_similarity(emb, ds, lowercase=lowercase)
                details[f"similarity/{r.dataset}"] = r.to_dict()
                report.add(name, "similarity", r.dataset, "Spearman rho", r.spearman)
                report.add(name, "similarity", r.dataset, "pairs scored", r.n_pairs)
        if "analogy" in suite:
            step("analogy")
            r = metrics.analogy(emb, restrict_vocab=analogy_restrict_vocab, lowercase=lowercase)
            details[f"analogy/{r.dataset}"] = r.to_dict()
            report.add(name, "analogy", r.dataset, "accuracy", r.accuracy)
            report.add(name, "analogy", r.dataset, "semantic accuracy", r.semantic_accuracy)
            report.add(name, "analogy", r.dataset, "syntactic accuracy", r.syntactic_accuracy)
            report.add(name, "analogy", r.dataset, "questions scored", r.n_questions)
    return report
