"""What a run gives to share (issue 36): report.html (one self-contained page, opened in headless
Chromium when it is installed), the bias card (valid against the schema docs/ publishes), and the
commands that make them for an existing run directory."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from embdebias import io
from embdebias.cli import main
from embdebias.report.html import page
from schema_subset import errors
from synthetic import synthetic_embedding, write_word2vec_text

SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "_static" / "bias-card.schema.json").read_text())
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    where = tmp_path_factory.mktemp("share")
    small = where / "small.txt"
    write_word2vec_text(synthetic_embedding(), small)
    assert main(["--quiet", "run", str(small), "--out-dir", str(where / "out")]) == 0
    return small, where / "out"


def test_run_writes_one_self_contained_page(run):
    _, out = run
    html = (out / "report.html").read_text(encoding="utf-8")
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))
    drawn = [name for name, fig in meta["figures"].items() if "caption" in fig]
    assert len(drawn) >= 3
    assert html.count('src="data:image/png;base64,') == len(drawn)  # every figure drawn, embedded
    assert (out / "report.html").stat().st_size < 2_000_000
    assert 'http-equiv="Content-Security-Policy"' in html and "default-src 'none'" in html
    # nothing that would fetch: no script, no external style, no web address in an attribute
    assert not re.search(r"<script|<link|<iframe|url\(", html, re.I)
    assert not re.findall(r"""(?:src|href)\s*=\s*["']?(?!data:|#)[a-z][a-z0-9+.-]*:""", html, re.I)
    assert "Is 'original' biased?" in html and "<h3>Summary</h3>" in html
    assert html.count("<table>") >= 5
    assert "<details><summary>Verdict</summary>" in html and "<details><summary>Run</summary>" in html
    assert "reproduce: <code>embdebias run " in html
    assert "&lt;br&gt;" not in html  # the comparison table's line breaks are breaks


def test_report_command_remakes_the_page_and_the_markdown(run, tmp_path, capsys):
    _, out = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "report.html").unlink()
    assert main(["report", str(copy), "--html"]) == 0
    assert capsys.readouterr().out.strip() == str(copy / "report.html")
    assert (copy / "report.html").read_bytes() == (out / "report.html").read_bytes()
    assert main(["report", str(copy)]) == 0
    assert capsys.readouterr().out == (out / "report.md").read_text(encoding="utf-8")


def test_card_is_valid_and_names_the_run(run, capsys):
    small, out = run
    card = json.loads((out / "report.card.json").read_text(encoding="utf-8"))
    assert errors(card, SCHEMA) == []
    assert card["embedding"]["fingerprint"] == io.load(small).fingerprint()
    assert card["embedding"]["source"] == "small.txt"  # no machine path
    assert card["attribute"] == {"name": "gender", "groups": ["female", "male"]}
    assert card["methods"] == ["soft", "hard"] and card["columns"] == ["original", "soft", "hard"]
    assert set(card["verdict"]) == {"soft", "hard"}
    weat = next(h for h in card["headline"] if h["metric"] == "weat")
    assert weat["columns"]["original"]["ci_low"] <= weat["columns"]["original"]["value"]
    assert weat["columns"]["hard"]["outcome"] in ("improved", "worse", "no significant change")
    assert any(h["kind"] == "quality" for h in card["headline"]) and card["quality_kept"]["hard"]
    assert card["command"].startswith("embdebias run ") and str(small.parent) not in json.dumps(card)
    md = (out / "report.card.md").read_text(encoding="utf-8")
    assert md.startswith("### Bias card: small.txt (gender)") and "| measure | fairer | original | soft | hard |" in md
    assert f"`{card['embedding']['fingerprint']}`" in md and "- **Verdict, hard**: " in md
    report_md = (out / "report.md").read_text(encoding="utf-8")
    for h in card["headline"]:
        for entry in h["columns"].values():
            if entry.get("mark"):  # the summary table's words, on the card too
                assert f"({entry['mark']})" in md and entry["mark"] in report_md
    assert main(["card", str(out)]) == 0
    assert capsys.readouterr().out == md
    assert main(["card", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == card


def test_schema_check_catches_a_broken_card(run):
    _, out = run
    card = json.loads((out / "report.card.json").read_text(encoding="utf-8"))
    del card["command"]
    card["embedding"]["words"] = "many"
    card["headline"][0]["columns"]["original"]["outcome"] = "better"
    found = errors(card, SCHEMA)
    assert any("no 'command'" in e for e in found)
    assert any("$.embedding.words" in e for e in found)
    assert any("outcome" in e for e in found)


def test_card_of_a_directory_without_a_run_is_one_line(tmp_path, capsys):
    assert main(["card", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / 'report.json'}: no such file" in err
    (tmp_path / "report.json").write_text("[1, 2]")
    assert main(["report", str(tmp_path), "--html"]) == 2
    assert "expected a JSON object" in capsys.readouterr().err


# -- headless Chromium ------------------------------------------------------------------------------

def _chromium(page_path: Path, tmp_path: Path, *args) -> tuple[str, list[str]]:
    """Open ``page_path`` in headless Chromium: its DOM, and the URLs the page itself asked the network
    for (Chromium's NetLog, the browser's own background requests left out: their initiator is
    'not an origin', a page's is its origin, 'null' for a file)."""
    net = tmp_path / f"{page_path.stem}.netlog.json"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
                           f"--log-net-log={net}", *args, page_path.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(net.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    jobs = [e["params"] for e in log["events"] if e["type"] == start and "url" in e.get("params", {})]
    asked = [job["url"] for job in jobs if job.get("initiator") != "not an origin"
             and not job["url"].startswith(("file:", "data:"))]
    return done.stdout, asked


def _coloured_pixels(png: Path) -> int:
    """How many pixels of a screenshot are strongly coloured (the figures' bars and points; the
    page's text and tables are grey)."""
    from matplotlib.image import imread

    rgb = imread(png)[..., :3]
    return int(((rgb.max(axis=2) - rgb.min(axis=2)) > 0.35).sum())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (CI installs it)")
def test_page_renders_offline_in_headless_chromium(run, tmp_path):
    _, out = run
    html = out / "report.html"
    dom, asked = _chromium(html, tmp_path, "--dump-dom")
    assert asked == []
    assert dom.count("<table>") == html.read_text(encoding="utf-8").count("<table>") >= 5
    assert dom.count("<img ") >= 3
    shot = tmp_path / "report.png"
    _, asked = _chromium(html, tmp_path, f"--screenshot={shot}", "--window-size=1280,4000")
    assert asked == [] and shot.stat().st_size > 10_000
    # the figures were drawn: the same page with its images left out (its coloured text kept) has a fifth of the colour at most
    bare = tmp_path / "bare.html"
    bare.write_text(page((out / "report.md").read_text(encoding="utf-8")), encoding="utf-8")
    bare_shot = tmp_path / "bare.png"
    _chromium(bare, tmp_path, f"--screenshot={bare_shot}", "--window-size=1280,4000")
    assert _coloured_pixels(shot) > 5 * max(_coloured_pixels(bare_shot), 1000)
    # the tables were drawn: their header cells' background colour (#f0f2f5) is on the screen
    from matplotlib.image import imread

    rgb = np.round(imread(shot)[..., :3] * 255)
    assert (np.abs(rgb - [240, 242, 245]).max(axis=2) <= 1).sum() > 1000


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (CI installs it)")
def test_chromium_check_sees_a_request_a_page_makes(tmp_path):
    canary = tmp_path / "canary.html"
    canary.write_text('<html><body><img src="http://canary.invalid/x.png"><p>a page that fetches</p></body></html>')
    _, asked = _chromium(canary, tmp_path, "--dump-dom")
    assert asked == ["http://canary.invalid/x.png"]


def test_card_calls_a_change_what_the_summary_table_calls_it():
    """A small significant change is a small change on the card, as in the report: never "better"."""
    from embdebias.report.card import _entry, _number
    from embdebias.report.model import Report

    r = Report(["original", "oscar"])
    r.add("original", "direct_bias", "professions", "direct_bias_original", (0.177, 0.16, 0.19))
    r.add("oscar", "direct_bias", "professions", "direct_bias_original", (0.171, 0.16, 0.18))
    key = ("direct_bias", "professions", "direct_bias_original")
    small = {"change": -0.006, "ci_low": -0.008, "ci_high": -0.004, "outcome": "small change", "share": 0.034}
    entry = _entry(r, key, "oscar", {("oscar", *key): small})
    assert entry["mark"] == "small change, 3 % removed"
    assert _number(entry) == "0.171 [0.16, 0.18] (small change, 3 % removed)"
    fairer = dict(small, outcome="improved", share=0.6)
    assert _number(_entry(r, key, "oscar", {("oscar", *key): fairer})).endswith("(fairer, 60 % removed)")
    assert _number(_entry(r, key, "original", {})) == "0.177 [0.16, 0.19]"
