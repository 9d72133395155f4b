"""Training word2vec and fastText on a streamed corpus: the API, the command line, the corpus reader.

The corpora are made here: a few thousand lines with a planted structure (words of
one topic share their sentences), small enough to train in well under a second with
small vectors and few epochs.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdebias import io
from embdebias.cli import main
from embdebias.errors import CorpusError, EmbdebiasError
from embdebias.text.corpus import MAX_SENTENCE_WORDS, TOKEN_PATTERN, LineCorpus, tokenize
from embdebias.text.reader import char_end as _char_end
from embdebias.train import default_workers, train_embedding, train_model

ANIMALS = ["cat", "dog", "horse", "cow", "sheep", "goat"]
TOOLS = ["hammer", "saw", "drill", "wrench", "chisel", "pliers"]
FILLER = ["the", "a", "of", "and", "to", "in", "with", "near"]
#: Small and fast: every test trains in well under a second.
FAST = dict(vector_size=16, epochs=3, min_count=2, workers=1)


def _planted_lines(n: int = 3000, seed: int = 0) -> list[str]:
    """Sentences of one topic each (animals or tools) mixed with filler words, punctuated and cased."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        topic = ANIMALS if i % 2 else TOOLS
        words = [str(w) for w in rng.choice(topic, 5)] + [str(w) for w in rng.choice(FILLER, 4)]
        rng.shuffle(words)
        words[0] = words[0].capitalize()
        lines.append(" ".join(words[:4]) + ", " + " ".join(words[4:]) + ".\n")
    return lines


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("train") / "corpus.txt"
    path.write_text("".join(_planted_lines()), encoding="utf-8")
    return path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cos(emb, a, b) -> float:
    u, v = emb[a], emb[b]
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


def _one_error_line(capsys) -> str:
    """The error line: one line on stderr, after the progress bar it erased (if it was shown)."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    line = err.rsplit("\r", 1)[-1].strip()
    assert line.startswith("embdebias: error:")
    return line


# --------------------------------------------------------------------------- the API
@pytest.mark.parametrize("model", ["word2vec", "fasttext"])
def test_training_finds_the_planted_topics(corpus, model):
    extra = {"bucket": 2000} if model == "fasttext" else {}
    emb = train_embedding(corpus, model=model, **{**FAST, "epochs": 5}, **extra)
    assert set(ANIMALS + TOOLS + FILLER) <= set(emb.words.tolist())
    assert emb.dim == 16 and emb.name == f"{model} corpus.txt"
    within = np.mean([_cos(emb, a, b) for topic in (ANIMALS, TOOLS) for a in topic for b in topic if a < b])
    across = np.mean([_cos(emb, a, b) for a in ANIMALS for b in TOOLS])
    assert within > across + 0.2
    # Lower-cased, punctuation dropped, frequency order (gensim's vocabulary order).
    assert "Cat" not in emb and "," not in emb
    counts = Counter(t for line in _planted_lines() for t in tokenize(line))
    assert [counts[w] for w in emb.words.tolist()] == sorted(counts.values(), reverse=True)


def test_train_model_returns_the_gensim_model_with_the_defaults(corpus):
    from gensim.models import Word2Vec

    model = train_model(corpus, vector_size=8, epochs=1, workers=1)
    assert isinstance(model, Word2Vec)
    assert (model.sg, model.window, model.min_count, model.negative, model.sample, model.seed) == (1, 5, 5, 5, 1e-3, 0)
    assert model.corpus_count == 3000 and model.corpus_total_words == 3000 * 9
    assert model.callbacks == ()  # the progress callback is not left on the model
    assert train_model(corpus, sg=0, vector_size=8, epochs=1, workers=1).sg == 0
    assert default_workers() >= 1


def test_workers_1_is_bit_for_bit_reproducible_and_the_seed_matters(corpus):
    a = train_embedding(corpus, **FAST, seed=7)
    b = train_embedding(corpus, **FAST, seed=7)
    c = train_embedding(corpus, **FAST, seed=8)
    assert a.words.tolist() == b.words.tolist() == c.words.tolist()
    assert np.array_equal(a.vectors, b.vectors)
    assert not np.array_equal(a.vectors, c.vectors)


def test_reproducible_whatever_the_hash_seed(corpus, tmp_path):
    """gensim 4 no longer seeds vectors with hash(): PYTHONHASHSEED plays no part."""
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"h{hash_seed}.bin"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "embdebias", "-q", "train", str(corpus), "--out", str(out),
                        "--dim", "16", "--epochs", "2", "--min-count", "2", "--workers", "1"],
                       check=True, env=env, capture_output=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("name, fmt", [("v", "native"), ("v.embd", "native"), ("v.bin", "word2vec-bin"),
                                       ("v.bin.gz", "word2vec-bin"), ("v.txt", "word2vec-text"),
                                       ("v.vec", "fasttext-vec"), ("v.glove.txt", "glove"), ("v.kv", "gensim-kv"),
                                       ("v.ft.bin", "fasttext-bin")])
def test_every_output_format_round_trips(corpus, tmp_path, name, fmt):
    out = tmp_path / name
    emb = train_embedding(corpus, out, **FAST)
    assert io.detect_format(out) == fmt
    back = io.load(out)
    assert back.words.tolist() == emb.words.tolist()
    if fmt in ("word2vec-text", "fasttext-vec", "glove"):
        assert np.allclose(back.vectors, emb.vectors, atol=1e-5)
    else:
        assert np.array_equal(back.vectors, emb.vectors)
    assert emb.name == name
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(name)) == []  # no temporary


def test_a_fasttext_model_written_as_ft_bin_keeps_its_subwords(corpus, tmp_path):
    from gensim.models.fasttext import load_facebook_model

    out = tmp_path / "ft.ft.bin"
    emb = train_embedding(corpus, out, model="fasttext", **FAST, bucket=5000, min_n=2, max_n=4)
    loaded = load_facebook_model(str(out))
    assert (loaded.wv.min_n, loaded.wv.max_n, loaded.wv.bucket) == (2, 4, 5000)
    assert np.allclose(loaded.wv["hammer"], emb["hammer"], atol=1e-6)
    oov = loaded.wv["hammers"]  # not in the corpus: built from its n-grams
    assert np.linalg.norm(oov) > 0 and _cos_vec(oov, emb["hammer"]) > 0.5
    assert np.array_equal(io.load(out).vectors, emb.vectors)
    # In another format a fastText model writes its word vectors (no n-grams).
    other = tmp_path / "ft.bin"
    train_embedding(corpus, other, model="fasttext", **FAST, bucket=5000)
    assert io.detect_format(other) == "word2vec-bin" and other.stat().st_size < out.stat().st_size


def _cos_vec(u, v) -> float:
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


def test_gzip_corpus_trains_the_same_vectors(corpus, tmp_path):
    gz = tmp_path / "corpus.gzipped"  # detected by its magic bytes, not its name
    gz.write_bytes(gzip.compress(corpus.read_bytes()))
    a = train_embedding(corpus, **FAST)
    b = train_embedding(gz, **FAST)
    assert a.words.tolist() == b.words.tolist() and np.array_equal(a.vectors, b.vectors)


# --------------------------------------------------------------------------- the transform hook
def test_transform_sees_raw_lines_on_every_pass_and_training_sees_its_output(corpus):
    calls = []

    def lions(lines):
        calls.append(0)
        for line in lines:
            assert line.endswith("\n") and line[0].isupper()  # raw: case and punctuation kept
            calls[-1] += 1
            yield line.replace("cat", "lion").replace("Cat", "Lion")

    before = _digest(corpus)
    model = train_model(corpus, transform=lions, **FAST)
    assert calls == [3000] * (1 + FAST["epochs"])  # the vocabulary pass and one per epoch
    assert "lion" in model.wv and "cat" not in model.wv
    assert _digest(corpus) == before


def test_transform_may_add_lines(corpus):
    doubled = train_model(corpus, transform=lambda lines: (x for line in lines for x in (line, line.upper())),
                          **FAST)
    assert doubled.corpus_count == 6000 and doubled.corpus_total_words == 2 * 27000
    keep_case = train_model(corpus, transform=lambda lines: (line.upper() for line in lines), lowercase=False,
                            **FAST)
    assert "CAT" in keep_case.wv and "cat" not in keep_case.wv


def test_an_error_in_the_transform_during_training_is_raised_not_a_hang(corpus, tmp_path):
    passes = []

    def breaks_in_epoch_two(lines):
        passes.append(1)
        for i, line in enumerate(lines):
            if len(passes) == 3 and i == 100:
                raise RuntimeError("augmenter broke")
            yield line

    out = tmp_path / "broken.bin"
    with pytest.raises(RuntimeError, match="augmenter broke"):
        train_embedding(corpus, out, transform=breaks_in_epoch_two, **FAST)
    assert len(passes) >= 3 and list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- the corpus reader
def test_tokenize_and_the_default_pattern():
    assert tokenize("She didn't say: \"well-known\", 42 times_two -- 'quoted'.") == \
        ["she", "didn't", "say", "well-known", "42", "times_two", "quoted"]
    assert tokenize("Élan naïve ŒUVRE", lowercase=False) == ["Élan", "naïve", "ŒUVRE"]
    assert tokenize("a''b a-'b --x-- ---") == ["a", "b", "a", "b", "x"]


_TEXT = st.text(alphabet=st.sampled_from(list("ab Z9_'-.,;:!?\"()\t\r\x0b\x0c\x1c") + ["é", "’", "Ω", "\u2028"]),
                max_size=60)
_PLAIN = "plain words that keep control bytes rare " * 1250 + "\n"


@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=8), st.booleans())
def test_the_fast_path_gives_exactly_the_regex_tokens(tmp_path_factory, lines, lowercase):
    path = tmp_path_factory.mktemp("prop") / "c.txt"
    # A plain first line keeps the control bytes under the share that makes a binary file.
    text = _PLAIN + "\n".join(lines)
    path.write_text(text, encoding="utf-8", newline="")
    regex = re.compile(TOKEN_PATTERN)
    expected = [t for t in (regex.findall(line.lower() if lowercase else line) for line in text.split("\n")) if t]
    assert list(LineCorpus(path, lowercase=lowercase)) == expected
    # Through a transform (no fast path) and in tiny blocks, the same tokens.
    assert list(LineCorpus(path, lowercase=lowercase, transform=lambda ls: ls)) == expected


def test_long_lines_come_in_gensims_sentence_length(tmp_path):
    from gensim.models.word2vec import MAX_WORDS_IN_BATCH

    assert MAX_SENTENCE_WORDS == MAX_WORDS_IN_BATCH
    path = tmp_path / "long.txt"
    path.write_text(" ".join(f"w{i}" for i in range(25_000)) + "\nshort line\n", encoding="utf-8")
    sentences = list(LineCorpus(path, block_bytes=1 << 20))  # the whole line in one block
    assert [len(s) for s in sentences] == [10_000, 10_000, 5_000, 2]
    assert sum(sentences[:3], []) == [f"w{i}" for i in range(25_000)]
    pieces = list(LineCorpus(path))  # 64 KiB blocks: the line is also cut at spaces between blocks
    assert max(map(len, pieces)) <= MAX_SENTENCE_WORDS and sum(pieces, []) == sum(sentences, [])


def test_a_file_without_line_ends_streams_in_blocks(tmp_path):
    path = tmp_path / "oneline.txt"
    words = [f"wörd{i}" for i in range(2000)]
    path.write_text(" ".join(words), encoding="utf-8")
    pieces = list(LineCorpus(path, block_bytes=64))
    assert len(pieces) > 100 and sum(pieces, []) == words  # cut at spaces only: no token split
    assert max(len(block.encode()) for block in LineCorpus(path, block_bytes=64).blocks()) < 2 * 64


def test_char_end_keeps_utf8_characters_whole():
    assert _char_end("abc".encode()) == 3
    assert _char_end("aé".encode()) == 3
    assert _char_end("aé".encode()[:-1]) == 1
    assert _char_end("a€".encode()[:-1]) == 1 and _char_end("a€".encode()[:-2]) == 1
    assert _char_end("a😀".encode()[:-1]) == 1 and _char_end("a😀".encode()) == 5


def test_lines_keep_their_ends(tmp_path):
    path = tmp_path / "ends.txt"
    path.write_bytes(b"one\r\ntwo\n\nthree")
    assert list(LineCorpus(path).lines()) == ["one\r\n", "two\n", "\n", "three"]
    assert list(LineCorpus(path)) == [["one"], ["two"], ["three"]]


def test_progress_reports_every_byte_of_each_pass(corpus):
    stream = LineCorpus(corpus, block_bytes=4096)
    seen = []
    stream.progress = seen.append
    list(stream)
    assert sum(seen) == corpus.stat().st_size and len(seen) > 5


# --------------------------------------------------------------------------- bad input
def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data, where, message", [
    (b"", None, "empty corpus: an empty file"),
    (b"... !!!\n\n,,\n", None, "empty corpus: no word tokens"),
    (b"one two\nthree\x00four\n", "line 2, byte offset 13", "a NUL byte: a binary file"),
    (b"\xff\xfeh\x00i\x00", "line 1, byte offset 3", "a NUL byte"),  # UTF-16
    (b"fine line\ncaf\xe9 au lait\n", "line 2, byte offset 13", "not UTF-8 text"),
])
def test_bad_corpora_exit_2_with_one_line_naming_the_file(tmp_path, capsys, data, where, message):
    path = _write(tmp_path / "bad.txt", data)
    out = tmp_path / "out.bin"
    assert main(["train", str(path), "--out", str(out), "--min-count", "1"]) == 2  # with a progress bar
    line = _one_error_line(capsys)
    assert "bad.txt" in line and message in line
    if where:
        assert f"({where})" in line
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]
    with pytest.raises(CorpusError, match=re.escape(message)):
        train_embedding(path, min_count=1, workers=1)


def test_undecodable_bytes_are_accepted_on_request(tmp_path):
    path = _write(tmp_path / "latin1.txt", b"caf\xe9 au lait\n" * 20)
    ignore = train_embedding(path, unicode_errors="ignore", **{**FAST, "min_count": 1})
    replace = train_embedding(path, unicode_errors="replace", **{**FAST, "min_count": 1})
    assert "caf" in ignore and "caf" in replace and "au" in replace
    gz = _write(tmp_path / "latin1.gz", gzip.compress(b"ok\n" * 3 + b"caf\xe9\n"))
    with pytest.raises(CorpusError, match=r"latin1.gz \(line 4, byte offset 12\): in the decompressed text"):
        train_embedding(gz, min_count=1)
    with pytest.raises(EmbdebiasError, match="unicode_errors must be one of"):
        train_embedding(path, unicode_errors="surrogateescape")


def test_a_truncated_gzip_corpus(corpus, tmp_path, capsys):
    path = _write(tmp_path / "cut.gz", gzip.compress(corpus.read_bytes())[:2000])
    assert main(["-q", "train", str(path), "--out", str(tmp_path / "o.bin")]) == 2
    assert "truncated or damaged gzip data" in _one_error_line(capsys)


def test_no_word_reaching_min_count_says_so(corpus, tmp_path, capsys):
    assert main(["train", str(corpus), "--out", str(tmp_path / "o.bin"), "--min-count", "100000"]) == 2
    line = _one_error_line(capsys)
    assert "no word occurs min_count=100000 times" in line and "--min-count" in line and "corpus.txt" in line


def test_a_directory_a_fifo_or_a_missing_file_is_not_a_corpus(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, message in ((tmp_path, "is a directory"), (fifo, "not a regular file"),
                          (tmp_path / "nope.txt", "no such file")):
        assert main(["-q", "train", str(path), "--out", str(tmp_path / "o.bin")]) == 2
        line = _one_error_line(capsys)
        assert message in line and str(path) in line
    assert not (tmp_path / "o.bin").exists()


@pytest.mark.parametrize("argv, message", [
    (["--model", "glove"], "unknown model 'glove'; choose one of word2vec, fasttext"),
    (["--bucket", "10"], "--bucket applies to --model fasttext only"),
    (["--format", "nope"], "unknown format 'nope'"),
    (["--token-pattern", "(a)b"], "capturing group"),
    (["--token-pattern", "a*"], "matches the empty string"),
    (["--token-pattern", "[a"], "is not a regular expression"),
    (["--cda-mode", "replace"], "--cda-mode and --cda-option need --cda"),
])
def test_bad_options_exit_2_with_one_line_before_any_work(corpus, tmp_path, capsys, argv, message):
    out = tmp_path / "o.bin"
    assert main(["train", str(corpus), "--out", str(out), *argv]) == 2
    assert message in _one_error_line(capsys)
    assert not out.exists()


def test_a_gz_name_for_a_format_that_cannot_be_compressed(corpus, tmp_path, capsys):
    assert main(["train", str(corpus), "--out", str(tmp_path / "o.embd.gz")]) == 2
    assert "cannot be gzip-compressed" in _one_error_line(capsys)


@pytest.mark.parametrize("argv", [["--dim", "0"], ["--epochs", "-1"], ["--window", "x"], ["--workers", "0"],
                                  ["--sample", "-0.1"], ["--sample", "inf"], ["--seed", "-1"],
                                  ["--min-count", "0"], ["--arch", "glove"]])
def test_bad_numbers_are_usage_errors(corpus, tmp_path, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(["train", str(corpus), "--out", str(tmp_path / "o.bin"), *argv])
    assert exc.value.code == 2
    assert f"argument {argv[0]}" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("params, message", [
    ({"vector_size": 0}, "vector_size must be an integer >= 1"),
    ({"window": 2.5}, "window must be an integer"),
    ({"min_count": True}, "min_count must be an integer"),
    ({"seed": 2**32}, "seed must be an integer between 0 and 4294967295"),
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"sample": float("nan")}, "sample must be a finite number"),
    ({"negative": 0}, "negative=0 trains nothing"),
    ({"sg": 2}, "sg must be an integer between 0 and 1"),
    ({"bucket": 10}, "bucket applies to model='fasttext' only"),
    ({"callbacks": ()}, "callbacks is set by train_model itself"),
    ({"no_such_option": 1}, "gensim Word2Vec"),
    ({"transform": "upper"}, "transform must be a callable"),
    ({"model": "GloVe"}, "GloVe is count-based"),
])
def test_bad_api_arguments_are_project_errors(corpus, params, message):
    with pytest.raises(EmbdebiasError, match=re.escape(message)):
        train_embedding(corpus, **{"workers": 1, **params})


# --------------------------------------------------------------------------- the command line
def test_cli_trains_what_the_api_trains_and_leaves_the_input_alone(corpus, tmp_path, capsys):
    before = _digest(corpus)
    out = tmp_path / "sub" / "cli.bin"  # one missing directory level is created
    assert main(["train", str(corpus), "--out", str(out), "--dim", "16", "--epochs", "3", "--min-count", "2",
                 "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "train word2vec" in err and "epoch 3/3" in err  # the progress bar
    assert "vocabulary: 20 words occur at least 2 times in 27000 tokens, 3000 sentences" in err
    assert "skip-gram, 16 dimensions, 3 epochs, 1 worker)" in err and f"-> {out}" in err
    api = train_embedding(corpus, **FAST)
    cli = io.load(out)
    assert cli.words.tolist() == api.words.tolist() and np.array_equal(cli.vectors, api.vectors)
    assert _digest(corpus) == before


def test_cli_quiet_cbow_fasttext_options(corpus, tmp_path, capsys):
    out = tmp_path / "ft.vec"
    assert main(["-q", "train", str(corpus), "--model", "fasttext", "--arch", "cbow", "--out", str(out),
                 "--dim", "8", "--epochs", "1", "--min-count", "2", "--bucket", "1000", "--min-n", "2",
                 "--max-n", "3", "--window", "2", "--negative", "3", "--sample", "0", "--seed", "3"]) == 0
    assert capsys.readouterr().err == ""
    assert io.load(out).dim == 8


def test_cli_keep_case_and_token_pattern(corpus, tmp_path):
    out = tmp_path / "cased.txt"
    assert main(["-q", "train", str(corpus), "--out", str(out), "--keep-case", "--token-pattern", r"\S+",
                 "--min-count", "1", "--dim", "4", "--epochs", "1", "--workers", "1"]) == 0
    words = set(io.load(out).words.tolist())
    assert "Cat" in words and "cat," in words


def test_existing_output_needs_force_and_the_corpus_is_never_overwritten(corpus, tmp_path, capsys):
    out = tmp_path / "v.bin"
    argv = ["-q", "train", str(corpus), "--out", str(out), "--dim", "4", "--epochs", "1", "--min-count", "2"]
    assert main(argv) == 0
    assert main(argv) == 2 and "exists; use --force" in _one_error_line(capsys)
    assert main(argv + ["--force"]) == 0
    before = _digest(corpus)
    assert main(["-q", "train", str(corpus), "--out", str(corpus), "--format", "word2vec-text", "--force"]) == 2
    assert "refusing to write over the input" in _one_error_line(capsys)
    assert _digest(corpus) == before
    with pytest.raises(EmbdebiasError, match="refusing to write over the input"):
        train_embedding(corpus, corpus, format="glove")


def test_an_output_that_could_not_be_replaced_fails_before_training(corpus, tmp_path, monkeypatch, capsys):
    from gensim.models import Word2Vec

    monkeypatch.setattr(Word2Vec, "train", lambda *a, **k: pytest.fail("trained before refusing"))
    user_dir = tmp_path / "mine"
    user_dir.mkdir()
    (user_dir / "notes.txt").write_text("keep", encoding="utf-8")
    assert main(["-q", "train", str(corpus), "--out", str(user_dir), "--force"]) == 2
    assert "not an embdebias output" in _one_error_line(capsys)
    assert main(["-q", "train", str(corpus), "--out", str(user_dir), "--format", "word2vec-bin", "--force"]) == 2
    assert "is a directory" in _one_error_line(capsys)
    assert (user_dir / "notes.txt").read_text(encoding="utf-8") == "keep"


# --------------------------------------------------------------------------- interruption
def _interrupt_in_epoch(monkeypatch, epoch: int, exc=KeyboardInterrupt):
    from gensim.models import Word2Vec

    original = Word2Vec._train_epoch
    seen = []

    def train_epoch(self, *args, **kwargs):
        seen.append(1)
        if len(seen) == epoch:
            raise exc()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Word2Vec, "_train_epoch", train_epoch)
    return seen


@pytest.mark.parametrize("name", ["v.bin", "v.embd", "v.kv"])
def test_an_interrupted_train_leaves_no_output_and_no_temporary(corpus, tmp_path, monkeypatch, capsys, name):
    seen = _interrupt_in_epoch(monkeypatch, 2)
    out = tmp_path / name
    assert main(["train", str(corpus), "--out", str(out), "--dim", "4", "--epochs", "3", "--min-count", "2"]) == 130
    assert "embdebias: interrupted" in capsys.readouterr().err
    assert len(seen) == 2 and list(tmp_path.iterdir()) == []


def test_a_failure_while_writing_leaves_no_output(corpus, tmp_path, monkeypatch):
    import embdebias.io.word2vec_bin as w2v

    def broken(emb, path, *, inputs=()):
        from embdebias._atomic import atomic_file

        with atomic_file(path, inputs=inputs) as tmp:
            tmp.write_bytes(b"half")
            raise KeyboardInterrupt

    monkeypatch.setattr(w2v, "write_word2vec_bin", broken)
    with pytest.raises(KeyboardInterrupt):
        train_embedding(corpus, tmp_path / "v.bin", **FAST)
    assert list(tmp_path.iterdir()) == []


def test_an_exception_in_training_propagates_with_no_output(corpus, tmp_path, monkeypatch):
    _interrupt_in_epoch(monkeypatch, 1, exc=lambda: MemoryError("no room"))
    with pytest.raises(MemoryError):
        train_embedding(corpus, tmp_path / "v.txt", **FAST)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- --cda glue
def test_cda_trains_on_the_augmented_stream(tmp_path, capsys):
    """--cda: the counterfactual of every gendered line is trained on, and never written to disk."""
    corpus = tmp_path / "he.txt"
    corpus.write_text("".join(f"he said that the king is {w} today\n" for w in ("tall", "old", "kind", "wise") * 30),
                      encoding="utf-8")
    plain, cda = tmp_path / "plain.bin", tmp_path / "cda.bin"
    common = ["--dim", "4", "--epochs", "1", "--min-count", "2", "--workers", "1"]
    assert main(["-q", "train", str(corpus), "--out", str(plain), *common]) == 0
    assert main(["-q", "train", str(corpus), "--out", str(cda), "--cda", "--cda-mode", "two-sided",
                 "--cda-option", "intervention=naive", *common]) == 0
    assert "she" not in io.load(plain) and "queen" not in io.load(plain)
    assert "she" in io.load(cda) and "queen" in io.load(cda) and "he" in io.load(cda)  # two-sided keeps both
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cda.bin", "he.txt", "plain.bin"]
    assert main(["-q", "train", str(corpus), "--out", str(tmp_path / "x.bin"), "--cda", "--cda-mode", "bad"]) == 2
    assert "mode must be one of two-sided, replace, got 'bad'" in _one_error_line(capsys)
    assert main(["-q", "train", str(corpus), "--out", str(tmp_path / "x.bin"), "--cda", "--cda-option", "x"]) == 2
    assert "KEY=VALUE" in _one_error_line(capsys)
    assert main(["-q", "train", str(corpus), "--out", str(tmp_path / "x.bin"), "--cda-mode", "replace"]) == 2
    assert "need --cda" in _one_error_line(capsys)


# --------------------------------------------------------------------------- the benchmark
def test_bench_train_smoke(tmp_path):
    """benchmarks/bench_train.py on a tiny generated corpus: the three cases see the same corpus."""
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        import bench_train
    finally:
        sys.path.remove(str(bench))
    corpus = tmp_path / "gen.txt"
    bench_train.generate(corpus, words=20_000)
    result = bench_train.run(corpus, epochs=1, repeats=1, workers=1, workdir=tmp_path, log=lambda m: None)
    assert result["same_corpus_and_vocabulary"] and len(result["rows"]) == 3
    assert result["rows"][1]["overhead"] is None and result["rows"][0]["overhead"] is not None
    text = bench_train.format_result(result)
    assert "vs LineSentence" in text and "baseline" in text and ": yes." in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen.txt"]  # the temporary directory is gone
