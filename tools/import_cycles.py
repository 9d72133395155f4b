"""Count the import cycles among embdebias's top-level units.

A top-level unit is a direct child of the package: a module (``embdebias.vocab``) or a
subpackage (``embdebias.io``). Every import statement counts, the ones inside functions
included (import-linter and the interpreter only see a cycle when it runs; a layer is
broken by any of them). The cycles are reported as the strongly connected components of
more than one unit.

    python tools/import_cycles.py [--package embdebias] [--edges]

Exit status 1 when there is a cycle.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """Dotted name of the module in ``path`` (``root`` is the directory holding the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(tree: ast.AST, module: str, is_package: bool):
    """Every absolute module name an import statement of ``tree`` names (at any depth)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield base
            # ``from . import io`` names a module through its alias.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def unit_of(name: str, package: str) -> str | None:
    """The top-level unit of ``name`` within ``package``, or None for an outside name."""
    parts = name.split(".")
    if parts[0] != package or len(parts) < 2:
        return None
    return parts[1]


def unit_graph(package_dir: Path) -> dict[str, set[str]]:
    """``{unit: units it imports}`` of the package in ``package_dir``."""
    root, package = package_dir.parent, package_dir.name
    units = {p.stem if p.is_file() else p.name for p in package_dir.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    graph: dict[str, set[str]] = {u: set() for u in units}
    for path in sorted(package_dir.rglob("*.py")):
        module = module_name(path, root)
        source = unit_of(module, package)
        if source is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name in imported_modules(tree, module, path.name == "__init__.py"):
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
    graph = unit_graph(Path(args.package))
    found = cycles(graph)
    print(f"{len(found)} cycle(s) among {len(graph)} top-level units")
    for component in found:
        print("  {" + ", ".join(component) + "}")
        if args.edges:
            members = set(component)
            for unit in component:
                for target in sorted(graph[unit] & members):
                    print(f"    {unit} -> {target}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
