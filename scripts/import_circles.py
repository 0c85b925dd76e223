"""No import circle between the package's modules, counting every import: at the top, inside functions and under
TYPE_CHECKING (a circle hidden in a function is still two modules that each need the other). Run by `make lint`.

    python scripts/import_circles.py        # exit 1 and one line per circle when there is one

A module is a file under lib/, models/, neurons/ or benchmarks/, named as the package names it (`audionet.lib.core.audio`);
`from audionet.lib.miner import pool` imports the package `pool` (its __init__), `from audionet.lib.miner.pool
import build` the module `build` when there is one. A package's own __init__ importing its modules is no circle
unless one of them imports the package back.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("lib", "models", "neurons", "benchmarks")


def module_files(root: Path) -> dict[str, Path]:
    """Every module's name (`audionet.lib.core.audio`, a package as its folder's name) and its file."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join(("audionet", *parts))] = path
    return found


def imported(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `path` (the module `name`) imports, wherever in the file the import sits."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                # `from a.b import c`: the module a.b.c when there is one, else a name in a.b
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    resolved = set()
    for target in targets:
        while target and target not in modules:  # `import audionet.lib.core.audio.Audio` style: its module
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


def graph(root: Path) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imported(path, name, modules) for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def main() -> int:
    found = circles(graph(ROOT))
    for component in found:
        print("import circle: " + " <-> ".join(component), file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
