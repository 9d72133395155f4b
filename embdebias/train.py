"""Train Word2Vec or fastText embeddings on a text corpus streamed from disk (gensim).

:func:`train_embedding` is what ``embdebias train`` runs: it reads the corpus as a
:class:`~embdebias.text.LineCorpus` (never all in memory; one pass for the
vocabulary, one per epoch), trains gensim's ``Word2Vec`` or ``FastText`` on it and
writes the vectors atomically in any supported format. :func:`train_model` returns
the trained gensim model itself.

Defaults, and why
-----------------
====================== ============= =====================================================
option                 default       why
====================== ============= =====================================================
``model``              ``word2vec``  the family of the issue's benchmark and of paper 004
``sg``                 1 (skip-gram) Mikolov et al. (2013) and the word2vec and fastText
                                     documentation: skip-gram does better on small
                                     corpora and rare words, CBOW is faster on large
                                     ones; corpora trained here are small
``vector_size``        100           gensim's and fastText's default; 300 is for corpora
                                     of billions of words (GoogleNews, Common Crawl)
``window``             5             gensim's and fastText's default
``min_count``          5             gensim's and fastText's default; rarer words get
                                     poor vectors
``epochs``             5             gensim's and fastText's default
``negative``           5             negative sampling, gensim's default
``sample``             1e-3          frequent-word down-sampling, gensim's default
``workers``            all cores     the CPUs this process may run on
``seed``               0             as every random step in embdebias
fastText n-grams       3 to 6        fastText's and gensim's ``min_n``/``max_n``
fastText ``bucket``    2,000,000     fastText's and gensim's
====================== ============= =====================================================

Reproducibility
---------------
gensim draws the initial vectors from numpy's ``default_rng(seed)`` and the
negative samples and window sizes from a generator seeded with ``seed``; the
vocabulary order is by frequency, ties in corpus order. With ``workers=1`` training
is single-threaded, so the same corpus, options, seed and gensim version give
bit-identical vectors on the same machine (``PYTHONHASHSEED`` plays no part: gensim
4 no longer seeds vectors with ``hash()``; the tests check both). With several
workers the threads take the jobs in an order set by the operating system and
update the shared vectors without locks (as the original word2vec and fastText do),
so vectors differ from run to run, by a little; scores computed on them differ
within their own noise. Use ``workers=1`` (``--workers 1``) for bit-exact results,
at the price of one core.

Errors
------
gensim reads the corpus in a producer thread during training and does not pass an
error there on (its workers then wait for jobs forever). Here the pass ends at the
first error (every later pass ends at once) and the error is raised in the caller's
thread when gensim returns. The corpus is checked in full during the vocabulary scan,
before training starts; an interrupted or failed training writes nothing.
"""

from __future__ import annotations

import numbers
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ._warn import warn
from .embedding import Embedding, owned
from .errors import CorpusError, EmbdebiasError, quote
from .text import TOKEN_PATTERN, LineCorpus

#: The model families this module trains.
MODELS = ("word2vec", "fasttext")
#: gensim options that only fastText takes.
FASTTEXT_ONLY = ("min_n", "max_n", "bucket")

__all__ = ["MODELS", "train_model", "train_embedding", "save_model", "embedding_of", "default_workers"]


def default_workers() -> int:
    """The number of CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _model_class(model: str):
    if model == "word2vec":
        from gensim.models import Word2Vec

        return Word2Vec
    if model == "fasttext":
        from gensim.models import FastText

        return FastText
    hint = " (GloVe is count-based and not trained here; use the built-in glove-6b-50d)" \
        if str(model).lower() == "glove" else ""
    raise EmbdebiasError(f"unknown model {quote(model)}; choose one of {', '.join(MODELS)}{hint}")


def _check_int(name: str, value, least: int, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least \
            or (most is not None and value > most):
        bound = f"between {least} and {most}" if most is not None else f">= {least}"
        raise EmbdebiasError(f"{name} must be an integer {bound}, got {quote(value)}")
    return int(value)


def _check_params(model: str, params: dict, gensim_params: dict) -> dict:
    """gensim's keyword arguments from ours, each checked (an EmbdebiasError names the bad one)."""
    sg = int(params["sg"]) if isinstance(params["sg"], bool) else params["sg"]
    out = {"sg": _check_int("sg", sg, 0, 1),
           "vector_size": _check_int("vector_size", params["vector_size"], 1),
           "window": _check_int("window", params["window"], 1),
           "min_count": _check_int("min_count", params["min_count"], 1),
           "epochs": _check_int("epochs", params["epochs"], 1),
           "negative": _check_int("negative", params["negative"], 0),
           "seed": _check_int("seed", params["seed"], 0, 2**32 - 1),
           "workers": default_workers() if params["workers"] is None
           else _check_int("workers", params["workers"], 1)}
    sample = params["sample"]
    if isinstance(sample, bool) or not isinstance(sample, numbers.Real) or not 0 <= sample < float("inf"):
        raise EmbdebiasError(f"sample must be a finite number >= 0, got {quote(sample)}")
    out["sample"] = float(sample)
    if out["negative"] == 0 and not gensim_params.get("hs"):
        raise EmbdebiasError("negative=0 trains nothing without hierarchical softmax (hs=1)")
    _check_gensim_params(model, gensim_params)
    if model == "fasttext":
        _warn_bucket_size(gensim_params.get("bucket", FASTTEXT_BUCKET), out["vector_size"])
    return {**gensim_params, **out}


#: gensim's (and fastText's) number of n-gram hash buckets.
FASTTEXT_BUCKET = 2_000_000
#: Above this many bytes of n-gram vectors, ``train_model`` warns before training.
BUCKET_WARN_BYTES = 100_000_000


def _warn_bucket_size(bucket, dim: int) -> None:
    """fastText keeps ``bucket`` x ``dim`` float32 n-gram vectors in memory (and in a ``.ft.bin`` output),
    whatever the corpus's size: say so before training when that is large."""
    if isinstance(bucket, bool) or not isinstance(bucket, numbers.Integral):
        return  # gensim refuses it
    size = int(bucket) * dim * 4
    if size > BUCKET_WARN_BYTES:
        warn(f"fastText's {int(bucket):,} n-gram buckets x {dim} dimensions take {size / 1e6:,.0f} MB of "
             f"memory, and of a .ft.bin output; a small corpus needs far fewer (bucket=100000, on the "
             f"command line --bucket 100000: {100_000 * dim * 4 / 1e6:,.0f} MB)")


def refuse_vector_file(corpus) -> None:
    """A vector file given as the corpus (its format detected by :func:`embdebias.io.detect_format`) is a
    :class:`CorpusError` with a hint: training on its numbers would give nonsense vectors."""
    from .errors import UnknownFormatError
    from .io import detect_format
    from .text import check_corpus_path

    path = check_corpus_path(corpus)
    try:
        fmt = detect_format(path)
    except (UnknownFormatError, EmbdebiasError, OSError):  # not a vector file: a corpus, or the reader's to refuse
        return
    raise CorpusError(path, f"a {fmt} vector file, not a text corpus: train reads text, one sentence or paragraph "
                            f"a line; to use these vectors give them to run, score or debias (embdebias run "
                            f"{path} --out-dir DIR)")


def _check_gensim_params(model: str, gensim_params: dict) -> None:
    """Refuse fastText options for Word2Vec and the arguments train_model sets itself."""
    given = [name for name in FASTTEXT_ONLY if name in gensim_params]
    if model != "fasttext" and given:
        raise EmbdebiasError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to model='fasttext' only")
    for name in ("corpus_iterable", "corpus_file", "sentences", "callbacks"):
        if name in gensim_params:
            raise EmbdebiasError(f"{name} is set by train_model itself; give the corpus as its first argument")


class _Guarded:
    """The corpus as gensim iterates it: an error ends the pass and is kept for the caller.

    gensim iterates the training corpus in a producer thread and drops an exception
    raised there, leaving its workers waiting for jobs forever; so the pass ends
    instead (and every later pass ends at once) and :meth:`reraise` raises the error
    in the caller's thread once gensim returns.
    """

    def __init__(self, corpus: Iterable[list[str]]):
        self.corpus = corpus
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[list[str]]:
        if self.error is not None:
            return
        try:
            yield from self.corpus
        except GeneratorExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - raised again by reraise()
            self.error = exc

    def reraise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error


class _ProgressBar:
    """One tqdm bar over the vocabulary scan and every epoch, in bytes of the corpus file.

    The corpus reports the bytes it reads (:attr:`LineCorpus.progress`), which is the
    real progress of training: gensim's producer thread reads only a few jobs ahead
    of its workers. gensim's epoch callbacks (:meth:`callback`) name the pass.
    """

    def __init__(self, corpus: LineCorpus, epochs: int, desc: str):
        from tqdm import tqdm

        self.epochs = epochs
        self.bar = tqdm(total=corpus.size * (epochs + 1), unit="B", unit_scale=True, unit_divisor=1024,
                        desc=desc, dynamic_ncols=True)
        self.bar.set_postfix_str("vocabulary")
        corpus.progress = self.bar.update
        self._corpus = corpus

    def callback(self):
        """A gensim callback that names the epoch on the bar."""
        from gensim.models.callbacks import CallbackAny2Vec

        bar, epochs = self.bar, self.epochs

        class _Epochs(CallbackAny2Vec):
            def __init__(self):
                self.epoch = 0

            def on_epoch_begin(self, model):
                self.epoch += 1
                bar.set_postfix_str(f"epoch {self.epoch}/{epochs}")

        return _Epochs()

    def write(self, log: Callable[[str], None], message: str) -> None:
        """``log(message)`` with the bar cleared first and drawn again after."""
        from tqdm import tqdm

        with tqdm.external_write_mode(file=self.bar.fp):
            log(message)

    def close(self, clear: bool = False) -> None:
        """Close the bar; ``clear`` erases it (on an error, whose message then stands alone)."""
        self._corpus.progress = None
        if clear:
            self.bar.leave = False
        self.bar.close()


def _check_vocabulary(model, corpus: LineCorpus, min_count: int) -> None:
    """A corpus without tokens, or without a word reaching ``min_count``, is an error."""
    if model.corpus_total_words == 0:  # (an empty file is refused by the reader)
        raise CorpusError(corpus.path, "empty corpus: no word tokens (only blank lines or punctuation); expected "
                                       "UTF-8 text, one sentence or paragraph a line")
    if len(model.wv) == 0:
        word, count = max(model.raw_vocab.items(), key=lambda item: item[1])
        raise CorpusError(corpus.path, f"no word occurs min_count={min_count} times in its "
                                       f"{model.corpus_total_words} tokens (the most frequent, {quote(word)}, occurs "
                                       f"{count} times); lower min_count (--min-count) or give a larger corpus")


def train_model(corpus, model: str = "word2vec", *, sg: int = 1, vector_size: int = 100, window: int = 5,
                min_count: int = 5, epochs: int = 5, negative: int = 5, sample: float = 1e-3,
                workers: int | None = None, seed: int = 0, lowercase: bool = True,
                token_pattern: str = TOKEN_PATTERN,
                transform: Callable[[Iterator[str]], Iterable[str]] | None = None,
                unicode_errors: str = "strict", progress: bool = False, log: Callable[[str], None] | None = None,
                **gensim_params):
    """Train a gensim ``Word2Vec`` or ``FastText`` model on a corpus file, streamed.

    Parameters
    ----------
    corpus : path-like
        UTF-8 text, plain or gzip (by its magic bytes), one sentence or paragraph a
        line; a regular file (it is read once for the vocabulary and once per epoch).
        Lines are lower-cased and tokenized as in :mod:`embdebias.text.corpus`.
    model : {"word2vec", "fasttext"}
    sg : {1, 0}
        1 skip-gram (default), 0 CBOW. See the module docstring for every default.
    vector_size, window, min_count, epochs, negative, sample
        gensim's options of the same names (dimension, context window, least count of
        a kept word, passes over the corpus, negative samples, down-sampling
        threshold).
    workers : int, optional
        Training threads (default: every CPU this process may use). ``workers=1`` is
        bit-for-bit reproducible; more threads are not (module docstring).
    seed : int
        gensim's seed, in [0, 2**32).
    lowercase : bool
        Lower-case the text before tokenizing (default True).
    token_pattern : str
        Regular expression of a token (default :data:`embdebias.text.TOKEN_PATTERN`).
    transform : callable, optional
        ``transform(lines) -> iterable of lines`` applied to the raw lines of every
        pass before tokenization, e.g. counterfactual data augmentation: training sees
        the transformed stream, nothing is written to disk. It must give the same lines
        on every pass.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8 in the corpus: an error naming the line and byte offset
        (strict, default), dropped (ignore) or U+FFFD (replace).
    progress : bool
        Show a progress bar (bytes of the corpus over the vocabulary scan and every
        epoch).
    log : callable, optional
        Receives a line on the vocabulary and one on the training time.
    **gensim_params
        Any other option of gensim's ``Word2Vec`` or ``FastText`` (``hs``, ``alpha``,
        ``max_final_vocab``; for fastText ``min_n``, ``max_n``, ``bucket``).

    Returns
    -------
    gensim.models.Word2Vec or gensim.models.FastText
        The trained model; ``corpus_count`` (sentences) and ``corpus_total_words``
        describe the corpus as tokenized.

    Raises
    ------
    CorpusError
        The corpus is not a regular file, is empty, binary (a NUL byte), undecodable
        (strict), damaged gzip, or has no word reaching ``min_count``.
    EmbdebiasError
        An unknown model or a bad option value.
    """
    cls = _model_class(model)
    refuse_vector_file(corpus)
    kwargs = _check_params(model, dict(sg=sg, vector_size=vector_size, window=window, min_count=min_count,
                                       epochs=epochs, negative=negative, sample=sample, workers=workers,
                                       seed=seed), gensim_params)
    stream = LineCorpus(corpus, lowercase=lowercase, token_pattern=token_pattern, transform=transform,
                        unicode_errors=unicode_errors)
    try:
        trainer = cls(**kwargs)
    except TypeError as exc:  # an option gensim does not know
        raise EmbdebiasError(f"gensim {cls.__name__}: {exc}") from None
    guarded = _Guarded(stream)
    bar = _ProgressBar(stream, kwargs["epochs"], f"train {model}") if progress else None
    failed = True
    try:
        t0 = time.perf_counter()
        trainer.build_vocab(corpus_iterable=guarded, keep_raw_vocab=True)
        guarded.reraise()
        _check_vocabulary(trainer, stream, kwargs["min_count"])
        trainer.raw_vocab = defaultdict(int)  # what gensim leaves without keep_raw_vocab
        if log is not None:
            message = (f"vocabulary: {len(trainer.wv)} words occur at least {kwargs['min_count']} times in "
                       f"{trainer.corpus_total_words} tokens, {trainer.corpus_count} sentences "
                       f"({time.perf_counter() - t0:.1f} s)")
            bar.write(log, message) if bar is not None else log(message)
        t1 = time.perf_counter()
        trainer.train(corpus_iterable=guarded, total_examples=trainer.corpus_count,
                      total_words=trainer.corpus_total_words, epochs=trainer.epochs,
                      callbacks=[bar.callback()] if bar is not None else ())
        guarded.reraise()
        failed = False
    finally:
        trainer.callbacks = ()  # the model stays picklable
        if bar is not None:
            bar.close(clear=failed)
    if log is not None:
        seconds = time.perf_counter() - t1
        log(f"trained {model} ({'skip-gram' if kwargs['sg'] else 'CBOW'}, {kwargs['vector_size']} dimensions, "
            f"{trainer.epochs} epoch{'s' * (trainer.epochs != 1)}, {kwargs['workers']} "
            f"worker{'s' * (kwargs['workers'] != 1)}) in {seconds:.1f} s "
            f"({trainer.epochs * trainer.corpus_total_words / max(seconds, 1e-9):,.0f} words/s)")
    return trainer


def embedding_of(model, *, name: str | None = None, copy: bool = False) -> Embedding:
    """The word vectors of a trained gensim model as an :class:`~embdebias.embedding.Embedding`.

    Parameters
    ----------
    model : gensim model or KeyedVectors
        For fastText, the full word vectors (the word's own vector averaged with its
        n-grams'), as gensim gives them.
    name : str, optional
        Label (default "gensim").
    copy : bool
        False (default): share the model's vector array, which is marked read-only
        (the model can no longer be trained further); True: copy it.

    Returns
    -------
    Embedding
        In frequency order, like gensim's vocabulary.
    """
    kv = getattr(model, "wv", model)
    if not copy:
        owned(kv.vectors)
    return Embedding.from_gensim(kv, name=name, copy=True if copy else None)


def save_model(model, out, format: str | None = None, *, inputs=(), embedding: Embedding | None = None) -> str:
    """Write a trained model's vectors to ``out`` atomically; returns the format written.

    A fastText model written as ``fasttext-bin`` (``.ft.bin``) keeps its sub-word
    n-grams, output layer and settings (:func:`embdebias.io.gensim_formats.write_fasttext_model`):
    fastText and gensim's ``load_facebook_model`` then give vectors to unseen words.
    Every other case writes the word vectors with :func:`embdebias.io.save`.

    Parameters
    ----------
    model : gensim model
    out : path-like
    format : str, optional
        One of :data:`embdebias.io.FORMATS` (default: from the name, as everywhere).
    inputs : sequence of path-like
        Files being read (the corpus): writing over one is refused.
    embedding : Embedding, optional
        The model's vectors already wrapped (saves wrapping them again).

    Returns
    -------
    str
    """
    from . import io

    fmt = io.output_format(out, format)
    if fmt == "fasttext-bin" and hasattr(model, "wv") and hasattr(model.wv, "vectors_ngrams"):
        from .io.gensim_formats import write_fasttext_model

        write_fasttext_model(model, out, inputs=inputs)
        return fmt
    emb = embedding if embedding is not None else embedding_of(model, copy=True)
    return io.save(emb, out, format=fmt, inputs=inputs)


def train_embedding(corpus, out=None, model: str = "word2vec", *, format: str | None = None,
                    name: str | None = None, **params) -> Embedding:
    """Train on ``corpus`` (:func:`train_model`) and write the vectors to ``out`` (what ``embdebias train`` runs).

    Parameters
    ----------
    corpus : path-like
        The text corpus (see :func:`train_model`).
    out : path-like, optional
        Output path, written atomically at the end (an interrupted or failed run
        leaves no file and no temporary). Its format and name are checked before
        training starts.
    model : {"word2vec", "fasttext"}
    format : str, optional
        Output format (default: from the name of ``out``, as :func:`embdebias.io.save`);
        ``fasttext-bin`` of a fastText model keeps its sub-words (:func:`save_model`).
    name : str, optional
        Label of the result (default: the name of ``out``, else ``"MODEL CORPUS"``).
    **params
        :func:`train_model`'s options (``sg``, ``vector_size``, ``window``,
        ``min_count``, ``epochs``, ``workers``, ``seed``, ``transform``,
        ``unicode_errors``, ``progress``, ``log``, ...).

    Returns
    -------
    Embedding
        The trained word vectors, in memory, in frequency order.
    """
    from . import io
    from ._atomic import check_output, check_replaceable

    fmt = None
    if out is not None:  # bad output settings fail before any work
        fmt = io.output_format(out, format)
        check_output(out, inputs=(corpus,))
        from .io.native import NATIVE_FILES

        check_replaceable(out, directory=fmt == "native", contents=NATIVE_FILES if fmt == "native" else None)
    trained = train_model(corpus, model, **params)
    emb = embedding_of(trained, name=name or (Path(out).name if out is not None else f"{model} {Path(corpus).name}"))
    if out is not None:
        save_model(trained, out, fmt, inputs=(corpus,), embedding=emb)
    return emb
