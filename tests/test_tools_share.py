"""tools/check_quoted.py (quoted numbers are a run's) and tools/check_docs_site.py (no machine path in
the built site, formulas offline), each shown to fail on what it must catch."""

import importlib.util
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
