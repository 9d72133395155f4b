"""Count the import cycles of embdebias, among its modules and among its top-level units.

Every import statement counts, the ones inside functions included (the interpreter only
meets a cycle when the import runs, so a function-level import hides it; a layer or a
module's place is broken by any of them). The source is parsed, never imported. Cycles
are reported as the strongly connected components of more than one node, at two grains:

* **modules**: ``embdebias.io._common -> embdebias.io.detect`` is an edge. ``from P
  import n`` is an edge to the module ``P.n`` when there is one, else to ``P`` (the
  package's ``__init__``, which defines ``n``); ``import P.m`` is an edge to ``P.m``. The
  parent packages an import initialises on the way are not edges: every submodule would
  otherwise close a circle with the ``__init__`` that imports it.
* **units**: a top-level unit is a direct child of the package, a module
  (``embdebias.vocab``) or a subpackage (``embdebias.io``); imports inside a unit are
  not edges.

    python tools/import_cycles.py [--package embdebias] [--edges]

Exit status 1 when there is a cycle at either grain.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """Dotted name of the module in ``path`` (``root`` is the directory holding the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class ParsedModule:
    """One module of the package: its file and syntax tree."""

    path: Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


def parse_package(package_dir: Path) -> dict[str, ParsedModule]:
    """``{module name: ParsedModule}`` of every ``.py`` file under ``package_dir`` (parsed once:
    the graphs below take the result, so that a caller building several parses the files once)."""
    root = package_dir.parent
    return {module_name(path, root): ParsedModule(path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
            for path in sorted(package_dir.rglob("*.py"))}


def import_statements(body):
    """The ``import`` and ``from ... import`` statements of ``body`` at any depth (functions,
    classes, ``if``, ``try``, ``with``, ``match`` included). Only statements are visited: an
    import is never inside an expression, and skipping them keeps the walk fast."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from import_statements(getattr(node, field, ()))


def absolute_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module name of a ``from BASE import ...`` in ``module``."""
    base = node.module or ""
    if not node.level:
        return base
    anchor = (module if is_package else module.rpartition(".")[0]).split(".")
    anchor = anchor[:len(anchor) - node.level + 1]
    return ".".join(anchor + ([base] if base else []))


def imported_modules(parsed: ParsedModule, module: str):
    """Every absolute module name an import statement of ``parsed`` names (at any depth)."""
    for node in import_statements(parsed.tree.body):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        else:
            base = absolute_base(node, module, parsed.is_package)
            yield base
            # ``from . import io`` names a module through its alias.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def module_targets(parsed: ParsedModule, module: str, modules: set[str]):
    """The modules of ``modules`` that the import statements of ``parsed`` execute (at any depth).

    See the module's docstring for the rule; a name outside ``modules`` (the standard
    library, numpy, a name that is no module) is no target.
    """
    for node in import_statements(parsed.tree.body):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
            continue
        base = absolute_base(node, module, parsed.is_package)
        for alias in node.names:
            if f"{base}.{alias.name}" in modules:
                yield f"{base}.{alias.name}"
            elif base in modules:
                yield base


def module_graph(package_dir: Path, parsed: dict[str, ParsedModule] | None = None) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` of the package in ``package_dir``."""
    parsed = parse_package(package_dir) if parsed is None else parsed
    modules = set(parsed)
    return {module: set(module_targets(p, module, modules)) - {module} for module, p in parsed.items()}


def unit_of(name: str, package: str) -> str | None:
    """The top-level unit of ``name`` within ``package``, or None for an outside name."""
    parts = name.split(".")
    if parts[0] != package or len(parts) < 2:
        return None
    return parts[1]


def unit_graph(package_dir: Path, parsed: dict[str, ParsedModule] | None = None) -> dict[str, set[str]]:
    """``{unit: units it imports}`` of the package in ``package_dir``."""
    package = package_dir.name
    parsed = parse_package(package_dir) if parsed is None else parsed
    units = {p.stem if p.is_file() else p.name for p in package_dir.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    graph: dict[str, set[str]] = {u: set() for u in units}
    for module, p in parsed.items():
        source = unit_of(module, package)
        if source is None:
            continue
        for name in imported_modules(p, module):
            target = unit_of(name, package)
            if target in units and target != source:
                graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default=str(Path(__file__).resolve().parent.parent / "embdebias"),
                        help="directory of the package (default: this repository's embdebias/)")
    parser.add_argument("--edges", action="store_true", help="also print the edges inside each cycle")
    args = parser.parse_args(argv)
    package_dir = Path(args.package)
    parsed = parse_package(package_dir)
    status = 0
    for grain, graph in (("modules", module_graph(package_dir, parsed)),
                         ("top-level units", unit_graph(package_dir, parsed))):
        found = cycles(graph)
        status |= bool(found)
        print(f"{len(found)} cycle(s) among {len(graph)} {grain}")
        for component in found:
            print("  {" + ", ".join(component) + "}")
            if args.edges:
                members = set(component)
                for node in component:
                    for target in sorted(graph[node] & members):
                        print(f"    {node} -> {target}")
    return status


if __name__ == "__main__":
    sys.exit(main())
