"""A report and its figures in a notebook or a Python session (issue 36, item 4): str/repr are the
first screen, the full Markdown is to_markdown(), a figure displays itself, and the
out-of-vocabulary words are listed once per word list."""

from embdebias.report import Report
from embdebias.report._notebook import ReportFigure

WORDS = [f"w{i}" for i in range(25)]


def _report() -> Report:
    r = Report(["original", "hard"])
    for emb, scale in (("original", 1.0), ("hard", 0.5)):
        r.add(emb, "direct_bias", "professions", "direct_bias_original", (0.2 * scale, 0.1 * scale, 0.3 * scale))
        # the same list loses the same words in both columns and two metrics; another list in one only
        r.details[emb] = {"direct_bias/professions": {"missing": {"professions": WORDS}},
                          "weat/weat6": {"missing": {"professions": WORDS,
                                                     **({"X: male names": ["zed"]} if emb == "hard" else {})}}}
    return r


def test_str_and_repr_are_the_first_screen_not_the_whole_report():
    r = _report()
    full = r.to_markdown()
    for text in (str(r), repr(r)):
        assert text.startswith("Report of 2 embedding(s) (original, hard), 1 rows")
        assert "### Summary" in text and "0.200 [0.10, 0.30]" in text
        assert "Out-of-vocabulary" not in text and "report.to_markdown()" in text
        assert len(text) < len(full)
    assert "### Out-of-vocabulary words" in full


def test_out_of_vocabulary_words_listed_once_per_list():
    lines = [ln for ln in _report().to_markdown().splitlines() if ln.startswith("- professions:")
             or ln.startswith("- X: male names")]
    assert len(lines) == 2
    assert lines[0] == ("- professions: " + ", ".join(WORDS[:20]) + " ... (25 in all) -- missing in every column; "
                        "lost to direct_bias/professions, weat/weat6")
    assert lines[1] == "- X: male names: zed -- missing in hard; lost to weat/weat6"


def test_a_report_figure_displays_itself_as_png():
    fig = ReportFigure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    png = fig._repr_png_()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000


def test_run_says_how_much_it_will_write_above_a_gigabyte():
    from embdebias.pipeline.run import vectors_size_note

    assert vectors_size_note(400_000, 50, ["soft", "hard"]) is None  # 0.16 GB: the default run says nothing
    note = vectors_size_note(400_000, 300, ["soft", "hard", "inlp"])  # 1.44 GB
    assert note.startswith("[save] this run will write about 1.4 GB of debiased vectors (3 methods x 400,000 words")
    assert "--save none writes none" in note


def test_a_missing_words_warning_points_at_the_users_line():
    import warnings

    import numpy as np

    from embdebias import BiasSubspace, Embedding, HardDebias
    from embdebias.subspace import MissingWordsWarning

    words = ["she", "he", "woman", "man", "her", "his", "girl", "boy", "doctor", "nurse", "table"]
    emb = Embedding(words, np.random.default_rng(0).normal(size=(len(words), 8)).astype("float32"), name="toy")
    for call in (lambda: BiasSubspace(n_components=1).fit(emb), lambda: HardDebias().fit_transform(emb)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        missing = [w for w in caught if issubclass(w.category, MissingWordsWarning)]
        assert missing and {w.filename for w in missing} == {__file__}


def test_a_report_figure_function_returns_one_figure_with_its_caption_facts():
    """A notebook shows a cell's last expression: a (figure, info) tuple would show as text."""
    from embdebias.report.figures import weat_caption, weat_forest_figure

    r = Report(["original", "hard"])
    for emb, d in (("original", 0.9), ("hard", 0.1)):
        r.add(emb, "weat", "weat6", "effect_size", (d, d - 0.3, d + 0.3))
    fig = weat_forest_figure(r)
    assert isinstance(fig, ReportFigure) and fig._repr_png_().startswith(b"\x89PNG")
    assert fig.info["tests"] == 1 and "1 tests" in weat_caption(fig.info)
