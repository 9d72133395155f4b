"""Matplotlib figures: occupations projected on the gender direction."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from .. import wordlists
from .._atomic import atomic_file
from ..embedding import Embedding, as_embedding
from ..errors import EmbdebiasError, MissingWordsError
from ..metrics.projection import projections
from ..subspace import MissingWordsWarning, resolve_subspace

SHE_COLOR = "#c2185b"
HE_COLOR = "#1565c0"
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def occupation_projections(embeddings: dict[str, Embedding], words=None, *, subspace=None,
                           max_missing: float = 0.5, lists: str = wordlists.DEFAULT_LISTS,
                           ) -> tuple[list[str], dict[str, np.ndarray], list[str]]:
    """Projections of occupation words on the gender direction of the first embedding.

    The direction is fitted on the first embedding (the original, in the usual
    original / soft / hard comparison) and the same direction is used for every
    embedding, so the panels share one axis: positive is the "she" side.

    ``words`` defaults to the professions of ``lists`` (Bolukbasi et al.'s 320 for
    "published"), and the direction to one fitted on its definitional pairs.

    Returns ``(words, {name: projections}, missing)``: the words present in every
    embedding, their cosine with the direction per embedding, and the words left out.
    """
    if not embeddings:
        raise EmbdebiasError("plot needs at least one embedding")
    words = wordlists.resolve_words(words, "professions", lists)
    first = next(iter(embeddings.values()))
    direction = resolve_subspace(subspace, first, lists=lists).direction_
    if not words:
        raise EmbdebiasError("occupations: the word list is empty")
    present = [w for w in words if all(w in e for e in embeddings.values())]
    present_set = set(present)
    missing = [w for w in words if w not in present_set]
    if len(missing) > max_missing * len(words):
        raise MissingWordsError(
            f"occupations: {len(missing)} of {len(words)} words are missing from at least one "
            f"embedding (more than {max_missing:.0%}): {', '.join(missing[:20])}", missing)
    if not present:
        raise MissingWordsError(f"occupations: none of the {len(words)} words is in every embedding",
                                missing)
    if missing:
        warnings.warn(f"occupations: {len(missing)} word(s) left out (not in every embedding): "
                      f"{', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}",
                      MissingWordsWarning, stacklevel=2)
    # The metric itself, on the words every panel has: one definition of a projection.
    proj = {name: np.asarray(projections(emb, present, subspace=direction, max_missing=0.0,
                                         lowercase=False).projections)
            for name, emb in embeddings.items()}
    return present, proj, missing


def occupation_figure(embeddings, words=None, *, top: int = 20, subspace=None,
                      lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.5):
    """A figure with one panel per embedding: occupations sorted by projection.

    ``top`` selects the ``top`` most she-leaning and ``top`` most he-leaning
    occupations of the FIRST embedding. Every panel shows those same words in the
    same rows, sorted by the first embedding's projection, so a word's bar can be
    followed across panels; bars are coloured by side (she-side positive, he-side
    negative) in each panel.
    """
    # A bare Figure (no pyplot): no GUI backend, no global state to clean up.
    from matplotlib.figure import Figure

    if not isinstance(embeddings, dict):
        embeddings = {e.name: e for e in map(as_embedding, embeddings)}
    present, proj, _ = occupation_projections(embeddings, words, subspace=subspace, lists=lists,
                                              max_missing=max_missing)
    first = proj[next(iter(proj))]
    order = np.argsort(first)
    if top and 2 * top < len(present):
        keep = np.concatenate([order[:top], order[-top:]])
    else:
        keep = order
    shown = [present[i] for i in keep]
    lim = max(max(np.abs(p[keep]).max() for p in proj.values()) * 1.1, 0.05)

    n = len(proj)
    height = max(4.0, 0.22 * len(shown) + 1.5)
    fig = Figure(figsize=(4.2 * n, height))
    axes = fig.subplots(1, n, squeeze=False)
    idx = np.argsort(first[keep])
    for ax, (name, p) in zip(axes[0], proj.items()):
        vals = p[keep]
        colors = [SHE_COLOR if v > 0 else HE_COLOR for v in vals[idx]]
        ax.barh(np.arange(len(idx)), vals[idx], color=colors, height=0.75)
        ax.set_yticks(np.arange(len(idx)))
        ax.set_yticklabels([shown[i] for i in idx], fontsize=8)
        ax.set_ylim(-0.7, len(idx) - 0.3)
        ax.axvline(0, color="0.3", linewidth=0.8)
        ax.set_xlim(-lim, lim)
        ax.set_title(f"{name}\nmean |proj| {np.abs(p).mean():.3f} ({len(present)} words)", fontsize=10)
        ax.set_xlabel("projection on gender direction\n(he side  <  0  <  she side)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    named = words is None or isinstance(words, (str, bytes, os.PathLike))
    source = wordlists.describe("professions" if words is None else words, lists)["name"] if named \
        else "given words"
    fig.suptitle(f"Occupations ({source}) on the gender direction of {next(iter(proj))}", fontsize=11)
    fig.tight_layout()
    return fig


def plot_occupations(embeddings, out, words=None, *, top: int = 20, subspace=None,
                     lists: str = wordlists.DEFAULT_LISTS, max_missing: float = 0.5) -> Path:
    """Draw :func:`occupation_figure` and save it atomically to ``out`` (PNG, SVG or PDF)."""
    out = Path(out)
    if top < 0:
        raise EmbdebiasError(f"top must be >= 0, got {top}")
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise EmbdebiasError(f"{out}: unknown figure format {out.suffix!r}; use .png, .svg or .pdf")
    fig = occupation_figure(embeddings, words, top=top, subspace=subspace, lists=lists,
                            max_missing=max_missing)
    values = embeddings.values() if isinstance(embeddings, dict) else embeddings
    inputs = [getattr(e, "path", None) for e in values]
    with atomic_file(out, inputs=inputs) as tmp:
        fig.savefig(tmp, format=fmt, dpi=120)
    return out
