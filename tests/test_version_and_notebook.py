"""`embdebias --version`, and a Report shown in a notebook (Jupyter's _repr_html_ / _repr_markdown_)."""

from __future__ import annotations

import pytest

import embdebias
from embdebias.cli import main
from embdebias.report import Report


def test_version_flag_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"embdebias {embdebias.__version__}"


def _report() -> Report:
    r = Report(["original", "hard<debiased>"])
    for emb, scale in (("original", 1.0), ("hard<debiased>", 0.5)):
        r.add(emb, "indirect_bias", "professions", "mean_beta", (0.1 * scale, 0.05 * scale, 0.15 * scale))
        r.add(emb, "indirect_bias", "professions", "n_scored", 40)
    return r


def test_report_shows_itself_as_an_html_table_with_every_cell():
    html = _report()._repr_html_()
    assert html.startswith("<table>") and html.endswith("</table>")
    assert html.count("<tr>") == 1 + 2  # the header and one row per statistic
    assert "<th>hard&lt;debiased&gt;</th>" in html  # names are escaped
    assert "0.100" in html and "0.050" in html and "<td>40</td>" in html


def test_report_shows_itself_as_its_markdown():
    r = _report()
    assert r._repr_markdown_() == r.to_markdown()
