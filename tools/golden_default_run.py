"""Extract the golden numbers of the default run for ``tests/test_golden.py``.

Reads a default run's ``evaluation.json`` (the report format of version 2, intervals as
sibling rows, or version 3) and writes every cell of its ``original`` column -- value and
interval -- to ``tests/data/golden_default_run.json``. The golden point values were made before
the redesign of issue 19 (``embdebias run`` on GloVe 6B 50d, every default); the intervals
were regenerated in issue 21, when the resamples stopped depending on the column's name
and the quality numbers got bootstrap intervals (the point values did not change).

    python tools/golden_default_run.py /work/golden/run/evaluation.json tests/data/golden_default_run.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from embdebias.report import Report  # noqa: E402


def golden(evaluation: dict, column: str = "original") -> dict:
    report = Report.from_dict(evaluation)
    cells = [[m, t, s, *(report.cell(m, t, s, column) or (None, None, None))] for m, t, s in report.rows]
    source = "embdebias run (every default) on glove-6b-50d: values from before issue 19, intervals of issue 21"
    return {"source": source, "column": column,
            "params": {k: evaluation["params"].get(k) for k in ("suite", "random_state", "bootstrap_resamples",
                                                                 "bootstrap_level", "lists", "max_missing")},
            "cells": cells}


def main(argv=None) -> int:
    src, dst = (argv or sys.argv[1:])[:2]
    data = golden(json.loads(Path(src).read_text(encoding="utf-8")))
    head = json.dumps({k: v for k, v in data.items() if k != "cells"}, indent=1)[:-2]
    cells = ",\n".join("  " + json.dumps(c) for c in data["cells"])
    Path(dst).write_text(f'{head},\n "cells": [\n{cells}\n ]\n}}\n', encoding="utf-8")
    print(f"{dst}: {len(data['cells'])} cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
