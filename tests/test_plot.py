import numpy as np
import pytest

from embdebias.debias import HardDebias
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.report.figures import occupation_figure, occupation_projections, plot_occupations

PAIRS = [("she", "he"), ("woman", "man"), ("girl", "boy")]
JOBS = ["nurse", "engineer", "teacher", "pilot", "baker", "dancer"]


@pytest.fixture
def toy():
    rng = np.random.default_rng(1)
    d = 12
    g = rng.normal(size=d)
    words, vecs = [], []
    for f, m in PAIRS:
        b = rng.normal(size=d)
        words += [f, m]
        vecs += [b + g, b - g]
    for i, j in enumerate(JOBS):
        words.append(j)
        vecs.append(rng.normal(size=d) + (1.5 if i % 2 == 0 else -1.5) * g)
    return Embedding(words, np.array(vecs), name="orig")


def test_projections_signs_and_shared_direction(toy):
    hard = HardDebias(definitional=PAIRS, equalize=[], gender_specific=[w for p in PAIRS for w in p]).fit_transform(toy)
    words, proj, missing = occupation_projections({"orig": toy, "hard": hard}, JOBS + ["zzz"], max_missing=0.5)
    assert words == JOBS and missing == ["zzz"]
    assert (proj["orig"][0::2] > 0).all() and (proj["orig"][1::2] < 0).all()  # she side positive
    assert np.abs(proj["hard"]).max() < 1e-5


def test_figure_has_one_panel_per_embedding(toy):
    other = Embedding(toy.words, toy.vectors * 2, name="scaled")
    fig = occupation_figure({"a": toy, "b": other, "c": toy}, JOBS, top=2)
    axes = fig.get_axes()
    assert len(axes) == 3
    assert [t.get_text() for t in axes[0].get_yticklabels()] == \
        [t.get_text() for t in axes[2].get_yticklabels()]
    assert len(axes[0].patches) == 4  # top 2 on each side


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_plot_writes_file(toy, tmp_path, suffix, magic):
    out = plot_occupations({"orig": toy}, tmp_path / f"fig{suffix}", JOBS)
    data = out.read_bytes()
    assert data.startswith(magic) and len(data) > 1000
    assert [p.name for p in tmp_path.iterdir()] == [f"fig{suffix}"]


def test_plot_errors(toy, tmp_path):
    with pytest.raises(EmbdebiasError, match="format"):
        plot_occupations({"orig": toy}, tmp_path / "fig.bmp", JOBS)
    with pytest.raises(MissingWordsError, match="zz1"):
        occupation_projections({"orig": toy}, ["zz1", "zz2", "nurse"])
