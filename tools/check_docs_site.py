"""Check a built documentation site: no machine path in any page, and formulas that render offline.

    python tools/check_docs_site.py SITE_DIR [--chromium]

1. No page (``*.html``, ``*.txt``, ``*.ipynb``, ``*.py`` of the gallery) names a path of the
   machine that built it: a home, ``/tmp``, ``/work``, ``/root``, ``site-packages``, a Windows
   user directory, or the checkout's own absolute path.
2. Formulas load MathJax from the site itself (``_static/mathjax/tex-svg.js``, which must exist)
   and no page loads a script from the network.
3. With ``--chromium``: a page with formulas, opened in headless Chromium, typesets them (the DOM
   holds MathJax's ``mjx-container`` elements) and asks the network for nothing.

Exit status 1 with one line per problem.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MACHINE_PATH = re.compile(r"(?<![\w.])(/home/\w|/tmp/\w|/work/\w|/root/|/Users/\w|[A-Za-z]:\\\\Users\\\\|"
                          r"site-packages|" + re.escape(str(ROOT)) + r")")
REMOTE_SCRIPT = re.compile(r"""<script[^>]+src=["']?(?:https?:)?//""", re.I)


def machine_paths(site: Path) -> list[str]:
    found = []
    for page in sorted(site.rglob("*")):
        if page.suffix not in (".html", ".txt", ".ipynb", ".py") or not page.is_file():
            continue
        for n, line in enumerate(page.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            hit = MACHINE_PATH.search(line)
            if hit:
                found.append(f"{page.relative_to(site)}:{n}: a machine path ({hit.group(0)!r}): {line.strip()[:160]}")
    return found


def math_problems(site: Path) -> list[str]:
    out = []
    if not (site / "_static" / "mathjax" / "tex-svg.js").is_file():
        out.append("_static/mathjax/tex-svg.js is missing: formulas would not render offline")
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        if REMOTE_SCRIPT.search(text):
            out.append(f"{page.relative_to(site)}: loads a script from the network")
        if 'class="math' in text and "mathjax/tex-svg.js" not in text:
            out.append(f"{page.relative_to(site)}: has formulas but does not load the bundled MathJax")
    return out


def chromium_problems(site: Path) -> list[str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return ["--chromium: no chromium installed"]
    page = next((p for p in sorted(site.rglob("*.html")) if 'class="math' in p.read_text(encoding="utf-8")), None)
    if page is None:
        return ["no page of the site has a formula"]
    with tempfile.TemporaryDirectory() as tmp:
        net = Path(tmp) / "netlog.json"
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-background-networking", f"--user-data-dir={tmp}/profile",
                               f"--log-net-log={net}", "--virtual-time-budget=15000", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=180)
        log = json.loads(net.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    asked = [e["params"]["url"] for e in log["events"] if e["type"] == start and "url" in e.get("params", {})
             and e["params"].get("initiator") != "not an origin" and not e["params"]["url"].startswith("file:")]
    out = [f"{page.relative_to(site)}: asked the network for {url}" for url in asked]
    if "<mjx-container" not in done.stdout:
        out.append(f"{page.relative_to(site)}: its formulas were not typeset offline (no mjx-container)")
    return out


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    site = Path(args[0])
    problems = machine_paths(site) + math_problems(site)
    if "--chromium" in args[1:]:
        problems += chromium_problems(site)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
