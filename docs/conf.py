"""Sphinx configuration of the embdebias documentation (build: ``python -m sphinx -W docs docs/_build``)."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document the checkout, not another installed copy
os.environ.setdefault("MPLBACKEND", "Agg")

import embdebias  # noqa: E402

project = "embdebias"
author = "The embdebias developers"
copyright = "2026, The embdebias developers"
release = embdebias.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinxarg.ext",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {
    "members": True,
    # scikit-learn's generated metadata-routing methods, documented by scikit-learn.
    "exclude-members": "set_fit_request, set_transform_request, set_score_request, get_metadata_routing, set_output",
}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# numpydoc's own docstring validation is off: the API pages render what the docstrings say.
numpydoc_validation_checks: set[str] = set()
# The docstrings cross-reference with Sphinx roles; a name numpydoc cannot resolve is not an error.
nitpicky = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable/", None),
}
# The build stays offline (CI has no network guarantee): intersphinx resolves nothing unless
# EMBDEBIAS_DOCS_INTERSPHINX=1.
if os.environ.get("EMBDEBIAS_DOCS_INTERSPHINX") != "1":
    intersphinx_mapping = {}

# The gallery prints the warnings its examples raise; a warning shown with the file it points at
# would put the build machine's absolute path into the page: show its category and message only.
warnings.formatwarning = lambda message, category, filename, lineno, line=None: f"{category.__name__}: {message}\n"

# Formulas render offline: MathJax 3 (SVG output, one self-contained script) from the docs dependency
# django-static-mathjax, copied into the site's _static/mathjax/ when the build finishes; no CDN.
mathjax_path = "mathjax/tex-svg.js"


def _mathjax_script() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    script = (Path(spec.origin).parent / "static" / "mathjax" / "es5" / "tex-svg.js") if spec and spec.origin else None
    if script is None or not script.is_file():
        raise RuntimeError("the docs need MathJax from the package django-static-mathjax: pip install '.[docs]'")
    return script


def _copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / "mathjax"
        target.mkdir(parents=True, exist_ok=True)
        (target / "tex-svg.js").write_bytes(_mathjax_script().read_bytes())


def setup(app):
    _mathjax_script()  # fail at the start of a build, not at its end
    app.connect("build-finished", _copy_mathjax)


def _bare_figures(block, block_vars, gallery_conf):
    """sphinx-gallery scraper for the bare ``matplotlib.figure.Figure`` objects an example
    holds in its variables (embdebias draws without pyplot, which the default scraper reads)."""
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import figure_rst

    seen = block_vars.setdefault("_embdebias_seen_figures", set())
    paths = []
    for value in list(block_vars["example_globals"].values()):
        if isinstance(value, Figure) and value.canvas.manager is None and id(value) not in seen:
            seen.add(id(value))
            path = next(block_vars["image_path_iterator"])
            value.savefig(path, dpi=100)
            paths.append(path)
    return figure_rst(paths, gallery_conf["src_dir"])


sphinx_gallery_conf = {
    "image_scrapers": ("matplotlib", _bare_figures),
    "examples_dirs": str(Path(__file__).parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "min_reported_time": 0,
    # The execution-times pages load jQuery and DataTables from a CDN: not written (the site stays offline).
    "write_computation_times": False,
}

# The gallery's scraper is a function, which Sphinx cannot pickle into its environment cache.
suppress_warnings = ["config.cache"]

html_theme = "pydata_sphinx_theme"
html_title = f"embdebias {release}"
html_static_path = ["_static"]  # the occupation figure of the front page, the bias card's JSON Schema
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
