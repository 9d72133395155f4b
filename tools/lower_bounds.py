"""Print pip constraints pinning every ``>=`` bound of pyproject.toml to its lower bound.

CI's minimum-versions job installs with them (``pip install --constraint``), so the bounds the
package claims are the versions it is tested with::

    python tools/lower_bounds.py > lower.txt && pip install --constraint lower.txt '.[test]'
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
_BOUND = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)")


def lower_bounds(pyproject: Path = PYPROJECT, extras: tuple[str, ...] = ("test",)) -> dict[str, str]:
    """Each requirement's name and ``>=`` bound, over the dependencies and the given extras."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    bounds: dict[str, str] = {}
    for requirement in requirements:
        match = _BOUND.match(requirement)
        if match:
            bounds[match.group(1).lower()] = match.group(2)
    return bounds


def main(argv: list[str]) -> int:
    for name, version in sorted(lower_bounds(extras=tuple(argv) or ("test",)).items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
