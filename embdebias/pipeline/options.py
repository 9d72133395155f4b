"""The options of a run, described once (:class:`RunOptions`).

Each field names its command-line flag, type, default, help and check. From them come
the ``embdebias run`` parser (:func:`add_arguments`), :func:`~embdebias.pipeline.run_pipeline`'s
keyword arguments (:meth:`RunOptions.create`), the parameters recorded in ``report.json``
(:meth:`RunOptions.parameters`) and the "reproduce" command of the report
(:func:`reproduce_command`). The methods' own parameters (soft debias's ``--lambda``)
come from the :data:`~embdebias.debias.DEBIASERS` table the same way.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field, fields

from .. import _validation
from ..debias.table import DEBIASERS, DEFAULT_METHODS, parse_methods
from ..errors import EmbdebiasError

DEFAULT_SOURCE = "glove-6b-50d"
UNICODE_ERRORS = ("strict", "ignore", "replace")
FORMATS_TEXT = "native, word2vec-bin, word2vec-text, glove, fasttext-vec, fasttext-bin, gensim-kv"
#: The list options: (field, flag, list role, help).
LIST_FILES = (("definitional", "--definitional", "definitional_pairs",
               "definitional pairs file (default: the list set's ten pairs)"),
              ("equalize", "--equalize", "equalize_pairs", "equalize pairs file (hard only; default: the list set's)"),
              ("gender_specific", "--specific", "gender_specific",
               "gender-specific words kept by debiasing (default: the list set's; published: "
               "Bolukbasi et al.'s full list of 1,441 words)"),
              ("seeds", "--seeds", "gender_specific_seed", "seed words of --expand (default: the list set's; "
                                                           "published: Bolukbasi et al.'s 218)"))


def option(flag: str | None, help: str = "", *, rule=None, choices=None, metavar=None, report: str | None = None,
           group: str | None = None, reproduce: str | None = "changed", parse=None, append: bool = False,
           **kwargs):
    """A :class:`RunOptions` field's description.

    flag : the command-line option (None: Python only); help : its help line;
    rule : a :class:`embdebias._validation.Rule`; choices : a callable returning the
    accepted values (checked by the API; on the command line only when ``parse`` is
    None and they are fixed); report : its name in ``report.json``'s parameters (None:
    not recorded there); group : a sub-dictionary of the parameters ("evaluate");
    reproduce : when the reproduce command repeats it ("always", "changed", None);
    parse : the argparse type (default: the rule's); append : the flag is repeated, one value
    each (the field is a tuple of them).
    """
    meta = {"flag": flag, "help": help, "rule": rule, "choices": choices, "metavar": metavar,
            "report": report, "group": group, "reproduce": reproduce, "parse": parse, "append": append}
    return field(metadata=meta, **kwargs)


def _formats():
    from ..io import EXTENSIONS

    return tuple(EXTENSIONS)


def _list_sets():
    from ..data.wordlists import LIST_SETS

    return LIST_SETS


@dataclass(frozen=True)
class RunOptions:
    """Every option of ``embdebias run`` / :func:`~embdebias.pipeline.run_pipeline`.

    Field order is the order of ``report.json``'s parameters.
    """

    limit: int | None = option("--limit", "keep only the first N words (file order is frequency order)",
                               rule=_validation.POSITIVE, metavar="N", report="limit", default=None)
    input_format: str = option("--input-format", "format of the input (default: detected from the content); a "
                               "format the file cannot be is an error naming the line or byte offset",
                               metavar="FMT", report="input_format", default="auto")
    unicode_errors: str = option("--unicode-errors", "undecodable UTF-8 in the words of a word2vec, fastText or "
                                 "GloVe file: an error naming the byte offset (strict, default), drop the bytes "
                                 "(ignore) or put U+FFFD in their place (replace), as gensim's unicode_errors",
                                 choices=lambda: UNICODE_ERRORS, report="unicode_errors", default="strict")
    format: str = option("--format", f"format of the debiased embeddings: {FORMATS_TEXT} (default native)",
                         choices=_formats, metavar="FMT", report="output_format", default="native")
    attribute: tuple | None = option("--attribute", "the protected attribute(s) to audit and debias, comma-separated: "
                                     "a bundled name (gender, race, religion) or a JSON attribute file "
                                     "(default gender); several give one report section per attribute, "
                                     "each attribute's run in its own subdirectory", metavar="NAME|FILE[,...]",
                                     report="attribute", parse=_validation.argtype(lambda text: parse_attributes(text)),
                                     default=None)
    n_components: int | None = option("--components", "dimension of the bias subspace (default: k - 1 for an "
                                      "attribute of k groups, 1 for gender); a K given is used as given",
                                      rule=_validation.POSITIVE, metavar="K", report="n_components",
                                      reproduce="always", default=None)
    #: The methods' own parameters ({"lam": 0.2}), described by the DEBIASERS table.
    params: dict = field(default_factory=dict, metadata={"flag": None, "report": None})
    n_train: int = option("--n-train", "--expand: train the SVM on the N most frequent words (default 50000)",
                          rule=_validation.POSITIVE, metavar="N", report="n_train", reproduce="expand",
                          default=50_000)
    max_missing: float = option("--max-missing", "a word set that loses more than this fraction of its words to "
                                "the vocabulary is not scored, and a method whose definition words lose more "
                                "fails before anything is written (default 0.2)", rule=_validation.FRACTION,
                                metavar="F", report="max_missing", group="evaluate", default=0.2)
    min_share: float | None = option("--min-share", "a change beyond the noise counts as fairer (less fair) only "
                                     "when it removes (adds) at least this share of the original's bias; a "
                                     "smaller one is 'a small change' (default: each metric family's, 0.10 or "
                                     "more: docs/user_guide/p_values_and_intervals.md)", rule=_validation.SHARE,
                                     metavar="S", report="min_share", group="evaluate", default=None)
    sembias: str | None = option("--sembias", "SemBias-format file for BAT (default: the list set's; published: "
                                 "Zhao et al.'s 440 lines)", metavar="FILE", report="sembias", group="evaluate",
                                 default=None)
    strict: bool = option("--strict", "stop with an error on the first test that cannot be scored (default: "
                          "leave its cells empty, say why in the report and go on)", report="strict",
                          group="evaluate", default=False)
    tests: tuple | None = option("--tests", "what to score, comma-separated: metric names, WEAT groups, WEAT test "
                                 "ids, or a JSON file of your own WEAT tests (as 'embdebias score --tests'; "
                                 "default: the full suite)", metavar="T,T", report="tests", group="evaluate",
                                 parse=_validation.argtype(lambda text: parse_tests(text)), default=None)
    lexicons: tuple = option("--lexicon", "a lexicon of human ratings, METRIC=FILE with METRIC valnorm "
                             "(valence) or wat (gender association): adds that metric to the tests, so the "
                             "report shows per method the valence agreement kept beside the gender association "
                             "removed; none is bundled (their licences): a UTF-8 CSV or TSV with a header, "
                             "word and rating columns (repeatable)", metavar="METRIC=FILE", report="lexicons",
                             group="evaluate", parse=_validation.argtype(lambda text: parse_lexicon(text)),
                             append=True, default=())
    #: Further keyword arguments of ``evaluate`` (Python only, e.g. ``options``).
    evaluate: dict = field(default_factory=dict, metadata={"flag": None, "report": "*", "group": "evaluate"})
    lists: str = option("--lists", "bundled list set for every list not given: 'published' (Bolukbasi et al. "
                        "2016, SemBias of Zhao et al. 2018; comparable with the literature; default) or "
                        "'curated' (the embdebias authors' lists)", choices=_list_sets, report="lists",
                        default="published")
    expand: bool = option("--expand", "soft debias keeps the SVM expansion of the seed words instead of the "
                          "gender-specific list (opt-in; see 'embdebias expand')", report="expand", default=False)
    methods: tuple = option("--methods", "debiasing methods, comma-separated, each giving an output, a report "
                            "column and a plot panel (default hard,soft; known: {known})", metavar="M,M",
                            report="methods", parse=_validation.argtype(parse_methods), default=DEFAULT_METHODS)
    save: tuple = option("--save", "which methods' debiased vectors are written: all (default), none, or M,M of the "
                         "run's methods; the others are evaluated row by row as the metrics read them and never "
                         "written (every method's fitted parameters are: NAME.params.npz)", metavar="all|none|M,M",
                         report="save", parse=_validation.argtype(lambda text: parse_save(text)), default=("all",))
    random_state: int = option("--seed", "seed of every random step (default 0)", rule=_validation.SEED,
                               metavar="SEED", reproduce="always", default=0)
    definitional: object = option("--definitional", LIST_FILES[0][3], metavar="FILE", reproduce=None, default=None)
    equalize: object = option("--equalize", LIST_FILES[1][3], metavar="FILE", reproduce=None, default=None)
    gender_specific: object = option("--specific", LIST_FILES[2][3], metavar="FILE", reproduce=None, default=None)
    seeds: object = option("--seeds", LIST_FILES[3][3], metavar="FILE", reproduce=None, default=None)
    trust_pickle: bool = option("--trust-pickle", "load gensim .kv/.model pickles with gensim's own unpickler, "
                                "which runs any code the file names: only for files you trust (default: a "
                                "restricted reader that admits only what a KeyedVectors file needs; fastText "
                                "KeyedVectors and gensim 3 files need this)", reproduce=None, default=False)
    force: bool = option("--force", "recompute every step, and write into an existing directory that is not an "
                         "earlier run's output, replacing only files named as the run's outputs (re-running into "
                         "the same directory resumes it)", reproduce=None, default=False)

    def __post_init__(self):
        object.__setattr__(self, "methods", parse_methods(self.methods))  # "hard,soft" or a sequence
        object.__setattr__(self, "save", parse_save(self.save))
        if self.tests is not None:
            object.__setattr__(self, "tests", parse_tests(self.tests))
        if self.attribute is not None:
            object.__setattr__(self, "attribute", parse_attributes(self.attribute))
        object.__setattr__(self, "lexicons", parse_lexicons(self.lexicons))
        self._check()

    @classmethod
    def create(cls, **options) -> RunOptions:
        """Options from keywords: the fields above, plus the methods' own parameters (``lam=0.5``).

        A keyword that is neither is an error naming it; every value is checked.
        """
        names = {f.name for f in fields(cls)}
        params = {k: options.pop(k) for k in list(options) if k not in names and k in method_params()}
        unknown = sorted(set(options) - names)
        if unknown:
            raise EmbdebiasError(f"unknown run option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                                 f"the options are: {', '.join(sorted(names - {'params'} | set(method_params())))}")
        params = {**options.pop("params", {}), **params}
        return cls(**options, params=params)

    def _check(self) -> None:
        self._check_save()
        if self.tests is not None and {"suite", "tests"} & set(self.evaluate):
            raise EmbdebiasError("give the tests either as tests= or inside evaluate=, not both")
        self._check_attributes()
        for f in fields(self):
            value, meta = getattr(self, f.name), f.metadata
            if meta.get("rule") is not None and value is not None:
                meta["rule"].check(value, f.name)
            if meta.get("choices") is not None:
                _validation.check_choice(value, meta["choices"](), f.name)
        for name, value in self.params.items():
            param = method_params().get(name)
            if param is None:
                raise EmbdebiasError(f"unknown method parameter {name}; known: {', '.join(method_params())}")
            takers = [m for m, spec in DEBIASERS.items() if spec.param(name) is not None]
            if not set(takers) & set(self.methods):
                raise EmbdebiasError(f"{name} ({param.flag}) applies to method {' or '.join(takers)}, which this "
                                     f"run does not use (methods: {','.join(self.methods)})")
            DEBIASERS[takers[0]].check_param(name, value)

    def _check_save(self) -> None:
        unrun = [m for m in self.save if m not in ("all", "none") and m not in self.methods]
        if unrun:
            raise EmbdebiasError(f"save names {', '.join(unrun)}, which this run does not use (methods: "
                                 f"{','.join(self.methods)}); save all, none or some of the methods run")

    def _check_attributes(self) -> None:
        """Every attribute readable; the list set's options (gender's lists) only in a run of the
        attribute whose lists they are, alone."""
        from ..debias.configure import check_list_options

        _validation.check_choice(self.lists, _list_sets(), "lists")
        given = {flag for name, flag, _, _ in LIST_FILES if name != "seeds" and getattr(self, name) is not None}
        # (each method is checked against each attribute, before anything is written)
        for attr in self.attributes():
            check_list_options(attr, given, self.expand, self.seeds)
            for method in self.methods_for(attr):
                DEBIASERS[method].check_attribute(attr, self.lists)

    def methods_for(self, attr) -> tuple[str, ...]:
        """The methods run for ``attr``: those named; when every registered method is named
        (``--methods all``), those that can debias it (a binary method sits out an attribute of
        more groups, where naming it alone is an error)."""
        if set(self.methods) != set(DEBIASERS):
            return self.methods
        return tuple(m for m in self.methods if DEBIASERS[m].handles(attr.k))

    def narrowed_to(self, attr) -> "RunOptions":
        """These options with :meth:`methods_for` ``attr`` as the methods (and those saved among them)."""
        methods = self.methods_for(attr)
        if methods == self.methods:
            return self
        save = self.save if self.save in (("all",), ("none",)) else (
            tuple(m for m in self.save if m in methods) or ("none",))
        return dataclasses.replace(self, methods=methods, save=save)

    def saved(self, method: str) -> bool:
        """Whether ``method``'s debiased vectors are written (``--save``)."""
        return self.save == ("all",) or method in self.save

    def attributes(self) -> list:
        """The run's :class:`~embdebias.data.attributes.Attribute` objects (gender when none is given),
        each read and checked (an :class:`~embdebias.errors.AttributeFileError` names file and key)."""
        from ..data.attributes import resolve_attributes

        return resolve_attributes(list(self.attribute) if self.attribute else None, self.lists)

    def method_params(self, method: str) -> dict:
        """``{name: value}`` of ``method``'s own parameters (its defaults, unless set)."""
        return {p.name: self.params.get(p.name, p.default) for p in DEBIASERS[method].params}

    def selected_params(self) -> list:
        """``[(Param, value)]`` of the run's methods' own parameters, each name once."""
        out = {}
        for method in self.methods:
            for p in DEBIASERS[method].params:
                out.setdefault(p.name, (p, self.params.get(p.name, p.default)))
        return list(out.values())

    def parameters(self) -> dict:
        """The run's parameters as ``report.json`` records them."""
        out: dict = {}
        for f in fields(self):
            report, group = f.metadata.get("report"), f.metadata.get("group")
            where = out.setdefault(group, {}) if group else out
            if report == "*":
                where.update(getattr(self, f.name))
            elif report:
                value = getattr(self, f.name)
                where[report] = list(value) if isinstance(value, tuple) else value
            if f.name == "n_components":  # the methods' parameters follow the subspace's
                out.update({p.report_name: value for p, value in self.selected_params()})
        return out


def parse_attributes(value) -> tuple[str, ...]:
    """``"gender,race"``, a sequence of names or paths, or one :class:`~embdebias.data.attributes.Attribute`,
    as a tuple of names and paths (an Attribute stands for the file it was read from); each is read
    and checked when the run resolves it against its list set (:meth:`RunOptions.attributes`)."""
    from ..data.attributes import Attribute

    items = [value] if isinstance(value, Attribute) else (
        [n.strip() for n in value.split(",")] if isinstance(value, str) else list(value))
    names = [n.path if isinstance(n, Attribute) else str(n).strip() for n in items]
    if not names or not all(names):
        raise EmbdebiasError(f"attribute must name at least one attribute (gender, race, religion or a JSON "
                             f"file), got {value!r}")
    return tuple(names)


def parse_save(text) -> tuple[str, ...]:
    """``--save``'s value as a tuple: ``("all",)``, ``("none",)`` or known method names, each once
    (``"all"``, ``"none"``, ``"hard,inlp"`` or a sequence of names)."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else [str(n).strip() for n in text]
    if len(names) == 1 and names[0] in ("all", "none"):
        return tuple(names)
    if "all" in names or "none" in names:
        raise EmbdebiasError(f"save takes all, none or method names, not a mix: {text!r}")
    if not names or not all(names):
        raise EmbdebiasError(f"save takes all, none or method names, got {text!r}")
    return parse_methods(names)


def parse_tests(text) -> tuple[str, ...]:
    """``"weat,bat,my_tests.json"`` (or a sequence) as a tuple of test names and files, each checked
    as :func:`~embdebias.evaluate.suite_options` checks them (a user's file: its keys)."""
    from ..evaluate import suite_options

    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else [str(n) for n in text]
    if not names or not all(names):
        raise EmbdebiasError(f"tests must name at least one metric, WEAT group, test or file, got {text!r}")
    suite_options(names)
    return tuple(names)


def parse_lexicon(text) -> str:
    """One ``--lexicon`` value, ``"METRIC=FILE"``, checked and with the metric lower-cased."""
    from ..metrics.validity import parse_lexicon_spec

    return "=".join(parse_lexicon_spec(text))


def parse_lexicons(value) -> tuple[str, ...]:
    """``lexicons`` as a tuple of ``"METRIC=FILE"``: one string or a sequence of them (None: none).

    A metric given twice is an error: which file would it read?
    """
    items = () if value is None else (value,) if isinstance(value, str) else tuple(value)
    out = tuple(parse_lexicon(item) for item in items)
    metrics = [item.partition("=")[0] for item in out]
    twice = sorted({m for m in metrics if metrics.count(m) > 1})
    if twice:
        raise EmbdebiasError(f"--lexicon names {', '.join(twice)} more than once; give one lexicon per metric")
    return out


def lexicon_paths(options: RunOptions) -> list[str]:
    """The lexicon files of the run (``--lexicon``), in the order given."""
    return [item.partition("=")[2] for item in options.lexicons]


def method_params() -> dict:
    """Every registered method's parameters by name (a name shared by two methods is one parameter)."""
    return {p.name: p for spec in DEBIASERS.values() for p in spec.params}


def evaluate_kwargs(options: RunOptions, subspace=None) -> dict:
    """The keyword arguments of :func:`embdebias.evaluate.evaluate` in a run with ``options``.

    ``subspace``: the run's bias subspace, fitted on the original embedding, which every
    column is measured against. A metric's own options go in ``options=`` by metric
    (``options.evaluate["options"]``); the SemBias file is BAT's.
    """
    extra = dict(options.evaluate)
    metric_options = {name: dict(opts) for name, opts in (extra.pop("options", None) or {}).items()}
    if options.tests is not None:
        from ..evaluate import suite_options

        chosen = suite_options(options.tests)
        extra["suite"] = chosen["suite"]
        for name, opts in chosen.get("options", {}).items():
            metric_options.setdefault(name, {}).update(opts)
    if options.sembias is not None:
        metric_options.setdefault("bat", {})["sembias"] = options.sembias
    if options.lexicons:  # each lexicon's metric joins the tests (as embdebias score --lexicon)
        from ..evaluate import DEFAULT_SUITE

        suite = tuple(extra.get("suite") or DEFAULT_SUITE)
        for item in options.lexicons:
            metric, _, path = item.partition("=")
            metric_options.setdefault(metric, {})["lexicon"] = path
            suite = suite if metric in suite else (*suite, metric)
        extra["suite"] = suite
    return {"subspace": subspace, "direction_name": "the original embedding's (fitted on its definitional pairs)",
            "random_state": options.random_state, "lists": options.lists, "max_missing": options.max_missing,
            "strict": options.strict, "min_share": options.min_share, **extra, "options": metric_options}


def options_doc(indent: str = "    ") -> str:
    """The options as a docstring section: each field, its command-line flag, default and help."""
    lines = [f"{indent}Run options (keywords of ``run_pipeline``; fields of ``RunOptions``)",
             f"{indent}" + "-" * 69]
    for f in fields(RunOptions):
        flag = f.metadata.get("flag")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        lines.append(f"{indent}{f.name} : default {default!r}" + (f" (``{flag}``)" if flag else ""))
        text = f.metadata.get("help") or ("the methods' own parameters, by name (see DEBIASERS)"
                                          if f.name == "params" else "further keywords of evaluate")
        lines.append(f"{indent}    {text.replace('{known}', 'see DEBIASERS')}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser, names=None) -> None:
    """Add the options of :class:`RunOptions` (those in ``names``, default all with a flag), and with
    all of them every registered method's own parameters, to ``parser``."""
    for f in fields(RunOptions):
        if f.metadata.get("flag") and (names is None or f.name in names):
            add_field_argument(parser, f)
        if f.name == "n_components" and names is None:
            for p in method_params().values():
                parser.add_argument(p.flag, dest=p.name, type=p.rule.convert, default=None, metavar=p.metavar,
                                    help=p.help)


def add_field_argument(parser: argparse.ArgumentParser, f) -> None:
    """One :class:`RunOptions` field as a command-line option."""
    meta = f.metadata
    if f.type in ("bool", bool):
        parser.add_argument(meta["flag"], dest=f.name, action="store_true", help=meta["help"])
        return
    kwargs = {"dest": f.name, "default": f.default if f.default is not dataclasses.MISSING else None,
              "help": meta["help"].replace("{known}", ", ".join(DEBIASERS))}
    if meta.get("parse") is not None:
        kwargs["type"] = meta["parse"]
    elif meta.get("rule") is not None:
        kwargs["type"] = meta["rule"].parse
    elif meta.get("choices") is not None and meta.get("metavar") is None:
        kwargs["choices"] = meta["choices"]()
    if meta.get("metavar"):
        kwargs["metavar"] = meta["metavar"]
    if meta.get("append"):  # repeated flag: None when not given (the field's default is then used)
        kwargs.update(action="append", default=None)
    parser.add_argument(meta["flag"], **kwargs)


def field_named(name: str):
    """The :class:`RunOptions` field ``name``."""
    return next(f for f in fields(RunOptions) if f.name == name)


def from_namespace(args: argparse.Namespace) -> RunOptions:
    """The :class:`RunOptions` of parsed ``embdebias run`` arguments."""
    values = {f.name: getattr(args, f.name) for f in fields(RunOptions)
              if f.metadata.get("flag") and not (f.metadata.get("append") and getattr(args, f.name) is None)}
    params = {name: getattr(args, name) for name in method_params() if getattr(args, name, None) is not None}
    return RunOptions.create(**values, params=params)


def reproduce_command(source, options: RunOptions, lists: dict) -> list[str]:
    """The ``embdebias run`` command line that repeats a run of ``source`` with ``options``.

    The options said "always" come first (with the methods' own parameters after the
    subspace's), then those that differ from their defaults, then the switches, then the
    lists read from a user's file (``lists``: the run's lists as its report describes them).
    """
    source = str(source) if source is not None else DEFAULT_SOURCE
    always, changed, switches = [], [], []
    for f in fields(RunOptions):
        if f.name == "params":
            always += [x for p, value in options.selected_params() for x in (p.flag, str(value))]
            continue
        words = _command_words(f, options)
        if isinstance(getattr(options, f.name), bool):
            switches += words
        else:
            (always if f.metadata.get("reproduce") == "always" else changed).extend(words)
    return (["embdebias", "run"] + ([source] if source != DEFAULT_SOURCE else []) + ["--out-dir", "DIR"]
            + always + changed + switches + _list_file_options(lists))


def _command_words(f, options: RunOptions) -> list[str]:
    """The flag and value of field ``f`` in the reproduce command (none if it is not repeated)."""
    flag, when, value = f.metadata.get("flag"), f.metadata.get("reproduce"), getattr(options, f.name)
    if flag is None or when is None or value is None or value is False:
        return []
    if value is True:
        return [flag]
    if f.metadata.get("append"):  # the flag once per value
        return [word for item in value for word in (flag, item)] if when == "always" or value != f.default else []
    repeated = (when == "always" or (when == "changed" and value != f.default)
                or (when == "expand" and options.expand))
    return [flag, ",".join(value) if isinstance(value, tuple) else str(value)] if repeated else []


def _list_file_options(lists: dict) -> list[str]:
    """``--definitional FILE`` etc. for the lists a run read from users' files."""
    out = []
    for _, flag, role, _ in LIST_FILES:
        info = lists.get(role, {})
        if info.get("source") == "user file":
            out += [flag, info["path"]]
    return out
