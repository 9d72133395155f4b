"""``report.html`` of ``embdebias run``: the run's report as one self-contained HTML file.

The page is the run's Markdown report (:func:`embdebias.report.run.render_report`, from
the run's ``report.json``) turned into HTML, so that every part a renderer adds to the
Markdown report shows up here too; nothing is computed twice. Deliberate choices:

- The opening (the title, the opening answers, the summary and comparison tables and the
  figures) is shown open; every later section (``###`` or ``##``: the verdict, each metric's
  table, the word lists, the run) is a collapsible ``<details>`` element, closed.
- Every figure the report links is embedded as a ``data:image/png;base64`` URI read from the
  run directory; a figure file that is missing is said in the page's text.
- The page opens offline and asks the network for nothing: no script, no external style
  sheet, no font, and a Content-Security-Policy ``<meta>`` that allows only inline styles and
  ``data:`` images, so a browser refuses any request. A link in the Markdown to a web address is
  kept as text, never an ``href``; a relative link (a multi-attribute run's sections) stays one.
- Markdown is converted for the subset the report uses (headings, pipe tables, bullets with
  one level of nesting, images, paragraphs, ``**bold**``, ``*italic*``, ```code```, links and
  the ``<br>`` line breaks of the comparison table's cells); every text is HTML-escaped first.
"""

from __future__ import annotations

import base64
import re
from html import escape
from pathlib import Path

#: The page's file name in a run's directory.
REPORT_HTML = "report.html"
#: The page's Content-Security-Policy: nothing may be fetched, images only from data: URIs.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 72rem;
       margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.3rem; margin-top: 2rem; } h3 { font-size: 1.1rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.88rem; }
th, td { border: 1px solid #c8c8c8; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f0f2f5; } td.num { text-align: right; white-space: nowrap; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #e3e3e3; }
figcaption { font-size: 0.88rem; color: #444; }
details { border-top: 1px solid #ddd; padding: 0.4rem 0; } summary { cursor: pointer; font-weight: 600; }
code { background: #f4f4f4; padding: 0 0.2rem; word-break: break-all; }
.missing-figure { color: #8a3b00; } .wide { overflow-x: auto; }
"""

_TABLE_RULE = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)\s*$")
_HEADING = re.compile(r"^(?P<hashes>#{1,4})\s+(?P<text>.*)$")
_BULLET = re.compile(r"^(?P<indent>\s*)- (?P<text>.*)$")


def inline(text: str) -> str:
    """One line of Markdown as HTML: escaped, then code spans, bold, italic and links."""
    out, pos = [], 0
    for match in re.finditer(r"`([^`]+)`", text):  # code spans are taken verbatim
        out.append(_emphasis(escape(text[pos:match.start()], quote=False)))
        out.append(f"<code>{escape(match.group(1), quote=False)}</code>")
        pos = match.end()
    out.append(_emphasis(escape(text[pos:], quote=False)))
    return "".join(out).replace("&lt;br&gt;", "<br>")  # the one tag the Markdown tables use (a line break)


def _emphasis(html: str) -> str:
    html = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html)
    html = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", html)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", _link, html)


def _link(match) -> str:
    text, target = match.group(1), match.group(2)
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return f"{text} ({target})"  # a web address stays text: the page requests nothing
    return f'<a href="{target}">{text}</a>'


def _cell_class(cell: str) -> str:
    return ' class="num"' if re.match(r"^[-+−]?\d|^n/a$", cell) else ""


def _table(lines: list[str]) -> str:
    def cells(line: str) -> list[str]:
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

    head = "".join(f"<th>{inline(c)}</th>" for c in cells(lines[0]))
    body = "".join("<tr>" + "".join(f"<td{_cell_class(c)}>{inline(c)}</td>" for c in cells(line)) + "</tr>"
                   for line in lines[2:])
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _bullets(lines: list[str]) -> str:
    html, depth = [], 0
    for line in lines:
        match = _BULLET.match(line)
        level = 1 if len(match.group("indent")) >= 2 else 0
        if level > depth:
            html.append("<ul>")
        elif level < depth:
            html.append("</li></ul></li>")
        elif html:
            html.append("</li>")
        depth = level
        html.append(f"<li>{inline(match.group('text'))}")
    html.append("</li></ul></li>" if depth else "</li>")
    return "<ul>" + "".join(html) + "</ul>"


def _figure(alt: str, src: str, figures, caption: str | None) -> str:
    """A figure with its PNG as a data URI: the file ``src`` (a bare name) in the first of the
    directories ``figures`` that holds it."""
    found = [] if "/" in src or "\\" in src else [Path(d) / src for d in figures if (Path(d) / src).is_file()]
    path = found[0] if found else None
    cap = f"<figcaption>{inline(caption)}</figcaption>" if caption else ""
    if path is None:
        return f'<p class="missing-figure">Figure {escape(src)} ({escape(alt)}) is not in the run directory.</p>{cap}'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<figure><img alt="{escape(alt)}" src="data:image/png;base64,{data}">{cap}</figure>'


def _blocks(lines: list[str]):
    """``(kind, payload)`` of each block: heading, table, bullets, image, paragraph."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif heading := _HEADING.match(line):
            yield "heading", (len(heading.group("hashes")), heading.group("text"))
            i += 1
        elif line.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            yield "table", lines[i:j]
            i = j
        elif _BULLET.match(line):
            j = i + 1
            while j < len(lines) and _BULLET.match(lines[j]):
                j += 1
            yield "bullets", lines[i:j]
            i = j
        elif image := _IMAGE.match(line):
            yield "image", (image.group("alt"), image.group("src"))
            i += 1
        else:
            j = i + 1
            while j < len(lines) and lines[j].strip() and not _starts_block(lines, j):
                j += 1
            yield "paragraph", " ".join(s.strip() for s in lines[i:j])
            i = j


def _starts_block(lines: list[str], j: int) -> bool:
    line = lines[j]
    return bool(_HEADING.match(line) or _BULLET.match(line) or _IMAGE.match(line) or line.startswith("|"))


def markdown_to_html(markdown: str, figures=()) -> str:
    """The body of the page: ``markdown`` (the subset the reports use) as HTML.

    Parameters
    ----------
    markdown : str
        A report's Markdown.
    figures : sequence of path, optional
        The directories (searched in order) whose PNG files the report's images name; they are
        embedded as data URIs (none: every image is said to be missing).

    Returns
    -------
    str
        HTML: the opening open, every section from the first one titled ``Verdict`` or the
        first ``##`` heading on as a closed ``<details>``.
    """
    html: list[str] = []
    blocks = list(_blocks(markdown.splitlines()))
    collapsing, open_details = False, False
    for n, (kind, payload) in enumerate(blocks):
        if kind == "heading":
            level, text = payload
            collapsing = collapsing or level == 2 or (level == 3 and text.strip() == "Verdict")
            if collapsing and level >= 2:
                html.append("</details>" if open_details else "")
                open_details = True
                html.append(f"<details><summary>{inline(text)}</summary>")
                continue
            html.append(f"<h{level}>{inline(text)}</h{level}>")
        elif kind == "table":
            html.append(_table(payload))
        elif kind == "bullets":
            html.append(_bullets(payload))
        elif kind == "image":
            caption = None
            following = blocks[n + 1] if n + 1 < len(blocks) else None
            if following and following[0] == "paragraph" and following[1].startswith("*Figure"):
                caption = following[1]
                blocks[n + 1] = ("skip", None)
            html.append(_figure(*payload, figures, caption))
        elif kind == "paragraph":
            html.append(f"<p>{inline(payload)}</p>")
    if open_details:
        html.append("</details>")
    return "\n".join(h for h in html if h)


def page(markdown: str, figures=(), *, title: str = "embdebias report") -> str:
    """A whole HTML page (see :func:`markdown_to_html`), with its style and security policy inline."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
            f"{markdown_to_html(markdown, figures)}\n</body></html>\n")


def run_html(run_dir, meta: dict | None = None, markdown: str | None = None, figures=None) -> str:
    """The HTML page of the run in ``run_dir``: its Markdown report (``markdown``, default
    rendered again from its ``report.json``; ``meta``: that file's contents, default read)
    with the figures embedded (from the directories ``figures``, default ``run_dir``)."""
    from .rundir import read_run, render_run_markdown

    run_dir = Path(run_dir)
    if meta is None:
        meta = read_run(run_dir)
    if markdown is None:
        markdown = render_run_markdown(run_dir, meta)
    title = f"embdebias report: {meta.get('embedding', {}).get('name', run_dir.name)}"
    return page(markdown, (run_dir,) if figures is None else figures, title=title)


def write_html(run_dir, meta: dict | None = None, markdown: str | None = None, *, inputs=(),
               figures=None) -> Path:
    """Write ``report.html`` into ``run_dir`` (atomically; :func:`embdebias.report.html.run_html`)."""
    from .._atomic import atomic_file

    run_dir = Path(run_dir)
    text = run_html(run_dir, meta, markdown, figures)
    with atomic_file(run_dir / REPORT_HTML, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return run_dir / REPORT_HTML
