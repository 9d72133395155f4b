"""Build the documentation site and screenshot its front page and one gallery page.

For a person to look at, not for CI: it needs Debian's ``chromium`` (``apt-get install -y
chromium``). Writes ``front.png`` and ``gallery.png`` into ``--out`` (default
``docs/_build/screenshots``)::

    python docs/screenshots.py [--out DIR] [--no-build]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
HTML = DOCS / "_build" / "html"
PAGES = {"front.png": "index.html", "gallery.png": "auto_examples/plot_occupations.html"}


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("screenshots: no chromium found (apt-get install -y chromium)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DOCS / "_build" / "screenshots")
    ap.add_argument("--no-build", action="store_true", help="screenshot the site built last")
    args = ap.parse_args(argv)
    if not args.no_build:
        subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", str(DOCS), str(HTML)], check=True)
    args.out.mkdir(parents=True, exist_ok=True)
    chromium = browser()
    for shot, page in PAGES.items():
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1280,1400", f"--screenshot={args.out / shot}", (HTML / page).as_uri()],
                       check=True, capture_output=True, timeout=120)
        print(args.out / shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
