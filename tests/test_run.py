"""`embdebias run` end to end on a small generated embedding."""

import json

import pytest

from embdebias import io
from embdebias.cli import main
from synthetic import synthetic_embedding, write_word2vec_text

OUTPUTS = {"hard.embd", "soft.embd", "report.md", "report.json", "occupations.png",
           "gender_specific_expanded.txt", "evaluation_original.json", "evaluation_debiased.json",
           "run_state.json"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "small.txt"
    write_word2vec_text(synthetic_embedding(), path)
    return path


def test_run_writes_everything_and_reuses_steps(small, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small), "--out-dir", str(out)]) == 0
    assert OUTPUTS <= {p.name for p in out.iterdir()}
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporaries
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["evaluation"]["embeddings"] == ["original", "soft", "hard"]
    assert report["seeds"] == {"random_state": 0}
    assert report["reused_steps"] == []
    assert set(report["timings_s"]) >= {"load", "evaluate_original", "expand", "hard", "soft",
                                       "evaluate_debiased", "plot", "total"}
    md = (out / "report.md").read_text(encoding="utf-8")
    for heading in ("WEAT", "RNSB", "ECT", "BAT", "Direct bias"):
        assert heading in md
    assert len(io.load(out / "hard.embd")) == len(io.load(small))
    capsys.readouterr()

    mtime = (out / "hard.embd" / "vectors.npy").stat().st_mtime_ns
    assert main(["run", str(small), "--out-dir", str(out)]) == 0
    again = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert again["reused_steps"] == ["evaluate_original", "expand", "hard", "soft", "evaluate_debiased", "plot"]
    assert (out / "hard.embd" / "vectors.npy").stat().st_mtime_ns == mtime
    assert "reusing" in capsys.readouterr().err

    # a changed parameter recomputes what depends on it, and only that
    assert main(["--quiet", "run", str(small), "--out-dir", str(out), "--lambda", "0.5"]) == 0
    third = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert third["reused_steps"] == ["evaluate_original", "expand", "hard"]
    assert third["parameters"]["lambda"] == 0.5


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
    assert main(["run", str(path), "--out-dir", str(out)]) == 2
    assert "error" in capsys.readouterr().err
    assert not any(p.name.endswith(".embd") for p in out.iterdir())
