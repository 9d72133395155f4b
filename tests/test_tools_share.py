"""tools/check_quoted.py (quoted numbers are a run's) and tools/check_docs_site.py (no machine path in
the built site, formulas offline), each shown to fail on what it must catch."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPORT = "# report\n\n| all | Definition | 0.698 [0.65, 0.74] |\n**Is 'original' biased? Yes**: 1 of 2.\n"


def test_quoted_numbers_must_be_lines_of_the_run(tmp_path, capsys):
    check = _tool("check_quoted")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.md").write_text(REPORT)
    good = tmp_path / "good.md"
    good.write_text("intro 0.5\n<!-- quoted from report.md of: embdebias run --out-dir DIR -->\n"
                    "| all | Definition | 0.698 [0.65, 0.74] |\n\n**Is 'original' biased? Yes**: 1 of 2.\n"
                    "<!-- end quoted -->\nafter\n")
    assert check.main([str(tmp_path / "run"), str(good)]) == 0
    stale = tmp_path / "stale.md"
    stale.write_text(good.read_text().replace("0.74]", "0.75]"))
    assert check.main([str(tmp_path / "run"), str(stale)]) == 1
    assert "| all | Definition | 0.698 [0.65, 0.75] |" in capsys.readouterr().err
    bare = tmp_path / "bare.md"
    bare.write_text("| all | Definition | 0.698 [0.65, 0.74] |\n")
    assert check.main([str(tmp_path / "run"), str(bare)]) == 2


def test_the_readme_and_front_page_mark_what_they_quote():
    check = _tool("check_quoted")
    for page in ("README.md", "docs/index.md"):
        blocks = check.quoted_blocks((ROOT / page).read_text(encoding="utf-8"))
        assert blocks and all(cmd.startswith("embdebias run") and lines for cmd, lines in blocks), page


def test_docs_site_check_finds_machine_paths_and_remote_math(tmp_path, capsys):
    check = _tool("check_docs_site")
    site = tmp_path / "site"
    (site / "_static" / "mathjax").mkdir(parents=True)
    (site / "_static" / "mathjax" / "tex-svg.js").write_text("// MathJax")
    (site / "index.html").write_text('<script src="_static/mathjax/tex-svg.js"></script><span class="math">x</span>')
    assert check.main([str(site)]) == 0
    (site / "example.html").write_text("<pre>UserWarning at /work/build/embdebias/x.py:3</pre>"
                                       '<script src="https://cdn.example.org/mathjax.js"></script>'
                                       '<span class="math">y</span>')
    assert check.main([str(site)]) == 1
    err = capsys.readouterr().err
    assert "example.html:1: a machine path ('/work/b')" in err
    assert "example.html: loads a script from the network" in err
    assert "example.html: has formulas but does not load the bundled MathJax" in err


def _leaderboard_frame():
    import math

    import pandas as pd

    rows = []
    # (method, DirectBias, SVM accuracy, WordSim rho): c is the fairest by bias left, b by
    # recoverability (0.42 is nearer chance than a's 0.7), a keeps the most quality
    for method, bias, acc, rho in (("none", 0.18, 1.0, 0.50), ("a", 0.05, 0.70, 0.60), ("b", 0.05, 0.42, 0.40),
                                   ("c", 0.01, 0.99, 0.45)):
        for metric, test, stat, value in (("direct_bias", "professions", "direct_bias_original", bias),
                                          ("residual", "gender", "classification_accuracy", acc),
                                          ("similarity", "wordsim353", "spearman", rho)):
            rows.append(dict(label="E", method=method, metric=metric, test=test, statistic=stat, value=value,
                             ci_low=value - 0.01, ci_high=value + 0.01, n_scored=300.0, error=None, key=method,
                             seconds=60.0, versions='{"embdebias": "9.9"}'))
    rows.append(dict(label="E", method="d", metric=None, test=None, statistic=None, value=math.nan, ci_low=math.nan,
                     ci_high=math.nan, n_scored=math.nan, error="MissingWordsError: 99 of 100 missing", key="d",
                     seconds=1.0, versions=None))
    return pd.DataFrame(rows)


def test_the_leaderboard_ranks_fairer_first_in_each_measures_direction():
    board = _tool("leaderboard")
    text = board.page(_leaderboard_frame(), "python tools/leaderboard.py", {"E": (1000, 50, 300, 320)})
    table = [line for line in text.splitlines() if re.match(r"\| (\d+|-) \| ", line)]
    # ordered by bias left (lower first), the tie a/b broken by recoverability (nearer 0.5 first)
    assert [line.split(" | ")[1] for line in table] == ["c", "b", "a", "none", "d"]
    b = table[1]
    assert "0.050 [0.04, 0.06] (2nd)" in b and "0.420 [0.41, 0.43] (1st)" in b and "0.400 [0.39, 0.41] (4th)" in b
    assert "0.600 [0.59, 0.61] (1st)" in table[2]  # quality: higher is better
    assert table[-1].startswith("| - | d | not scored: MissingWordsError: 99 of 100 missing |")
    assert "fairer first" in text.lower() and "1,000 x 50" in text and "embdebias 9.9" in text
    assert "its 5 points took 4 worker-minutes" in text  # 4 x 60 s + 1 s


def test_the_leaderboard_says_why_bias_left_is_missing():
    board = _tool("leaderboard")
    frame = _leaderboard_frame()
    frame.loc[frame["statistic"] == "direct_bias_original", "value"] = float("nan")
    text = board.page(frame, "python tools/leaderboard.py", {"E": (10_000, 50, 85, 320)})
    assert "85 of the 320 profession words" in text
    table = [line for line in text.splitlines() if re.match(r"\| \d+ \| ", line)]
    assert [line.split(" | ")[1] for line in table] == ["b", "a", "c", "none"]  # by recoverability alone
