"""One row format and one table for every benchmark (used by run_all.py and reproduce.py).

Each ``bench_*.py`` module's ``run(...)`` returns its own list of dicts (the keys differ
per module).  :func:`normalise` turns them into :class:`Row` s with the columns of the
combined table -- benchmark | size | ours | baseline | ratio | peak memory | note -- so
the per-module differences live in one adapter per module here and nowhere else.
:func:`format_table` prints rows as a fixed-width text table, :func:`markdown_table`
as Markdown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Row:
    """One line of the combined table.

    Attributes
    ----------
    group : str
        The bench module the row came from ("load", "hard", "soft", "weat", "run").
    benchmark, size : str
        What was measured and on what size.
    ours_s : float or None
        Seconds taken by embdebias.
    baseline : str
        What the baseline is ("" when there is none).
    baseline_s : float or None
        Seconds taken by the baseline (possibly scaled, which ``baseline`` then says).
    ratio : float or None
        ``baseline_s / ours_s`` (> 1: embdebias is faster).
    peak_mb : float or None
        Peak resident memory of the measured process above its imports, MiB.
    note : str
    """

    group: str
    benchmark: str
    size: str = ""
    ours_s: float | None = None
    baseline: str = ""
    baseline_s: float | None = None
    ratio: float | None = None
    peak_mb: float | None = None
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _ratio(base, ours):
    return base / ours if base is not None and ours else None


# -- adapters, one per bench module ---------------------------------------------------------


def _from_generic(group: str, rows: list[dict]) -> list[Row]:
    """Rows already shaped like :class:`Row` (bench_hard, bench_soft, and run_all's own)."""
    out = []
    for r in rows:
        base_s = r.get("baseline_s")
        ours = r.get("ours_s")
        out.append(Row(group, r["benchmark"], r.get("size", ""), ours, r.get("baseline", "") or "",
                       base_s, r.get("ratio", _ratio(base_s, ours)), r.get("peak_mb"), r.get("note", "")))
    return out


def _from_load(rows: list[dict]) -> list[Row]:
    """bench_load: one dict per load; gensim loads become the baselines of ours on the same file."""
    gensim = {r["input"]: r for r in rows if r["case"].startswith("gensim")}
    # The native format has no gensim reader; its baseline is gensim's fastest load in the run.
    fastest = min(gensim.values(), key=lambda r: r["seconds"]) if gensim else None
    out = []
    for r in rows:
        if r["case"].startswith("gensim"):
            continue
        size = f"{r['rows']:,} x {r['dim']}"
        base = gensim.get(r["input"]) or (fastest if r["input"] == "native" else None)
        note = f"file {r['file_mb']:,.0f} MiB; matrix {r['matrix_mb']:,.0f} MiB"
        if "floor_s" in r:
            note += (f"; {r['gb_per_s']:.2f} GB/s, floor {r['floor_s']:.2f} s (memcpy "
                     f"{r['floor_memcpy_gbs']:.1f} GB/s, fresh matrix write {r['floor_fresh_write_s']:.2f} s)")
        if base is not None:
            note += f"; gensim peak {base['rss_over_base_mb']:,.0f} MiB"
        if r["input"] == "native" and base is not None:
            note += " (baseline: gensim's fastest load of the same vectors)"
        out.append(Row("load", f"load {r['case'].removeprefix('embdebias ')}", size, r["seconds"],
                       base["case"] if base else "", base["seconds"] if base else None,
                       _ratio(base["seconds"], r["seconds"]) if base else None,
                       r["rss_over_base_mb"], note))
    if not gensim:
        for row in out:
            row.note += "; gensim skipped"
    return out


def _from_weat(rows: list[dict]) -> list[Row]:
    """bench_weat: ``case``, ``ours_s``, optional scaled baseline."""
    out = []
    size = ""
    for r in rows:
        if r["case"] == "load default embedding":
            size = r.get("note", "").split(" via ")[0]
            continue
        scaled = r.get("baseline_scaled_s")
        out.append(Row("weat", r["case"].strip(), size, r.get("ours_s"),
                       "per-partition Python loop (scaled)" if scaled is not None else "",
                       scaled, r.get("ratio", _ratio(scaled, r.get("ours_s"))), None, r.get("note", "")))
    return out


ADAPTERS = {"load": _from_load, "weat": _from_weat}


def normalise(group: str, rows: list[dict]) -> list[Row]:
    """Turn one bench module's ``run()`` rows into :class:`Row` s."""
    return ADAPTERS.get(group, lambda rs: _from_generic(group, rs))(rows)


# -- output ----------------------------------------------------------------------------------

COLUMNS = ("benchmark", "size", "ours", "baseline", "ratio", "peak memory", "note")


def _cells(r: Row) -> list[str]:
    base = ""
    if r.baseline_s is not None:
        base = f"{fmt_seconds(r.baseline_s)} ({r.baseline})" if r.baseline else fmt_seconds(r.baseline_s)
    elif r.baseline:
        base = r.baseline
    return [r.benchmark, r.size, fmt_seconds(r.ours_s), base,
            f"{r.ratio:,.1f}x" if r.ratio is not None else "-",
            f"{r.peak_mb:,.0f} MiB" if r.peak_mb is not None else "-", r.note]


def fmt_seconds(s) -> str:
    if s is None:
        return "-"
    if s < 0.01:
        return f"{s * 1000:.2f} ms"
    if s < 100:
        return f"{s:.2f} s"
    return f"{s:,.0f} s"


def format_table(rows: list[Row], *, note_width: int | None = None) -> str:
    """A fixed-width text table with the columns of :data:`COLUMNS`."""
    cells = [_cells(r) for r in rows]
    if note_width is not None:
        cells = [c[:-1] + [c[-1] if len(c[-1]) <= note_width else c[-1][:note_width - 3] + "..."]
                 for c in cells]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(COLUMNS)]
    right = {2, 4, 5}

    def line(values):
        return " | ".join(v.rjust(w) if i in right else v.ljust(w)
                          for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    out = [line(COLUMNS), "-+-".join("-" * w for w in widths)]
    out += [line(c) for c in cells]
    return "\n".join(out)


def markdown_table(header: list[str], body: list[list[str]], *, left: int = 2) -> str:
    """A Markdown table; the first ``left`` columns left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join(["---"] * left + ["---:"] * (len(header) - left)) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in body]
    return "\n".join(lines)
