"""`embdebias run` end to end on a small generated embedding."""

import json

import pytest

from embdebias import io
from embdebias.cli import main
from synthetic import synthetic_embedding, write_word2vec_text

OUTPUTS = {"hard.embd", "soft.embd", "report.md", "report.json", "occupations.png",
           "evaluation.json", "run_state.json"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


def test_run_writes_everything_and_reuses_steps(small, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out)]) == 0
    assert OUTPUTS <= {p.name for p in out.iterdir()}
    assert not [p for p in out.iterdir() if p.name.startswith(".") and p.name != ".embdebias-run"]  # no temporaries
    assert not (out / "embdebias-partial").exists()  # committed
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["evaluation"]["embeddings"] == ["original", "soft", "hard"]
    assert report["seeds"] == {"random_state": 0}
    assert report["reused_steps"] == []
    assert set(report["timings_s"]) >= {"load", "hard", "soft", "evaluate", "plot", "total"}
    # the debiased columns are compared with the original, and the verdict says how
    evaluation = report["evaluation"]
    assert {c["embedding"] for c in evaluation["comparisons"]} == {"soft", "hard"}
    assert {c["reference"] for c in evaluation["comparisons"]} == {"original"}
    assert set(evaluation["verdict"]) == {"soft", "hard"}
    assert "### Verdict" in (out / "report.md").read_text(encoding="utf-8")
    assert "expand" not in report["timings_s"]  # the SVM expansion is opt-in
    assert not (out / "gender_specific_expanded.txt").exists()
    md = (out / "report.md").read_text(encoding="utf-8")
    for heading in ("WEAT", "RNSB", "ECT", "BAT", "Direct bias"):
        assert heading in md
    # every table names its data; the run names its lists
    assert "Data: published:sembias: SemBias, Zhao et al. (2018), published, 440 lines" in md
    assert "Data: published:professions: Bolukbasi et al. (2016), published, 320 words" in md
    assert "List set: **published**" in md
    assert "- gender_specific: published:gender_specific (Bolukbasi et al. (2016), published (full list), 1,441 entries)" in md
    assert report["lists"]["equalize_pairs"]["size"] == 52
    assert len(io.load(out / "hard.embd")) == len(io.load(small))
    capsys.readouterr()

    mtime = (out / "hard.embd" / "vectors.npy").stat().st_mtime_ns
    assert main(["run", str(small), "--out-dir", str(out)]) == 0
    again = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert again["reused_steps"] == ["hard", "soft", "evaluate", "plot"]
    assert (out / "hard.embd" / "vectors.npy").stat().st_mtime_ns == mtime
    assert "reusing" in capsys.readouterr().err

    # a changed parameter recomputes what depends on it, and only that
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    third = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert third["reused_steps"] == ["hard"]
    assert third["parameters"]["lambda"] == 0.5

    # --expand recomputes soft (its list changes), not hard
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--lambda", "0.5", "--expand",
                 "--n-train", "1500"]) == 0
    fourth = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert fourth["reused_steps"] == ["hard"]
    assert (out / "gender_specific_expanded.txt").is_file()
    assert fourth["lists"]["gender_specific_seed"]["size"] == 218
    assert "--expand" in (out / "report.md").read_text(encoding="utf-8")


def test_run_curated_lists_and_custom_files(small, tmp_path):
    out = tmp_path / "out"
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("she he\nwoman man\ngirl boy\n", encoding="utf-8")
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--lists", "curated",
                 "--definitional", str(pairs)]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["parameters"]["definitional_pairs"] == [["she", "he"], ["woman", "man"], ["girl", "boy"]]
    assert report["lists"]["definitional_pairs"]["source"] == "user file"
    assert report["lists"]["equalize_pairs"]["name"] == "curated:equalize_pairs"
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Data: curated:sembias: embdebias curated, SemBias format, 260 lines" in md
    assert "--lists curated" in md and f"--definitional {pairs}" in md
    # a changed list file is a changed input: nothing is reused
    pairs.write_text("she he\nwoman man\n", encoding="utf-8")
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--lists", "curated",
                 "--definitional", str(pairs)]) == 0
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["reused_steps"] == []


def test_run_bad_list_options_fail_before_any_work(small, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:  # argparse: usage line, error line, status 2
        main(["run", str(small), "--out-dir", str(out), "--lists", "paper"])
    assert exc.value.code == 2 and "invalid choice: 'paper'" in capsys.readouterr().err
    bad = tmp_path / "eq.txt"
    bad.write_text("king queen\nking king\n", encoding="utf-8")
    assert main(["run", str(small), "--out-dir", str(out), "--equalize", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "eq.txt:2" in err[0] and "twice" in err[0]
    assert not out.exists()


def test_run_other_output_format(small, tmp_path):
    out = tmp_path / "out"
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--format", "word2vec-bin",
                 "--limit", "2400"]) == 0
    assert io.detect_format(out / "hard.bin") == "word2vec-bin"
    assert len(io.load(out / "soft.bin")) == 2400


def test_run_malformed_input_fails_before_any_work(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\nshe 1 2 3\nhe 1 nan 3\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(bad), "--out-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.txt" in err[0]
    assert not out.exists()


def test_run_fails_on_missing_word_sets_before_debiasing(tmp_path, capsys):
    # Keep only a little of the vocabulary: WEAT sets lose too many words.
    from synthetic import synthetic_embedding

    emb = synthetic_embedding(n_filler=10)
    keep = [w for i, w in enumerate(emb.words) if i % 3 == 0 or i < 60]
    path = tmp_path / "sparse.txt"
    write_word2vec_text(emb.subset(keep), path)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out-dir", str(out), "--strict"]) == 2
    assert "error" in capsys.readouterr().err
    assert not any(p.name.endswith(".embd") for p in out.iterdir())
    # tolerant by default: the run finishes and the report says what was not scored, and why
    assert main(["--quiet", "run", str(path), "--out-dir", str(tmp_path / "tolerant")]) == 0
    md = (tmp_path / "tolerant" / "report.md").read_text(encoding="utf-8")
    assert "### Not scored" in md and "not in the vocabulary" in md



def test_fingerprinting_on_its_thread_equals_the_fingerprint_and_reports_what_reading_raised():
    """The run's background fingerprint is Embedding.fingerprint(); an error surfaces in result();
    cancel() stops it and result() then refuses, rather than give a digest of part of the rows."""
    import threading

    import numpy as np

    from embdebias.embedding import Embedding
    from embdebias.errors import NonFiniteError
    from embdebias.pipeline.run import Fingerprinting

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    emb = Embedding(words, rng.standard_normal((300, 8)).astype(np.float32))
    assert Fingerprinting(emb).result() == emb.fingerprint()

    bad = rng.standard_normal((300, 8)).astype(np.float32)
    bad[250, 3] = np.nan
    with pytest.raises(NonFiniteError, match=r"row 250"):
        Fingerprinting(Embedding(words, bad, copy=False)).result()

    started, release = threading.Event(), threading.Event()

    class Slow:
        def _fingerprint_parts(self):
            yield b"words"
            started.set()
            release.wait(5)
            yield b"rows"

    job = Fingerprinting(Slow())
    assert started.wait(5)
    threading.Timer(0.05, release.set).start()
    job.cancel()
    with pytest.raises(RuntimeError, match="cancelled"):
        job.result()
