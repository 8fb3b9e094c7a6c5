"""The house's rules, checked: no import circle among fixbot's modules, and no import from a later step into an
earlier one (docs/architecture.md draws the steps).

    .venv/bin/python scripts/check_layers.py        # prints each offence, exits 1 when there is one

Every import counts, at module level or inside a function (a lazy import is still a dependency), except those under
`if TYPE_CHECKING:`. A module's layer is the one of the longest prefix in LAYERS that names it; a module may import
its own layer's modules and lower layers' only."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "sandbox", "eval")
# lowest first: each entry may import the entries above it, never those below
LAYERS = (
    ("sandbox",),
    ("bot.errors", "bot.feedback", "bot.failures", "bot.llm"),
    ("bot.checkout",),
    ("bot.environment",),
    ("bot.agent.source",),
    ("bot.agent.types", "bot.agent.options", "bot.agent.state", "bot.agent.context", "bot.agent.antipatterns"),
    ("bot.agent.search",),
    ("bot.agent.steps",),
    ("bot.agent.choose",),
    ("bot.agent.designs",),
    ("bot.agent.graph", "bot.agent"),
    ("bot.fix.types", "bot.fix.result", "bot.fix.context"),
    ("bot.fix.reproduce", "bot.fix.options"),
    ("bot.fix.locate",),
    ("bot.fix.repair",),
    ("bot.fix.verify",),
    ("bot.fix.loop",),
    ("bot.fix",),
    ("bot.init", "bot.github", "bot.action", "bot.config", "eval"),
    ("bot.cli",),
    ("bot",),
)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules `name` imports (a `from P import N` of a submodule N counts as P.N)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking(node)
            for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known)
    return {m for m in found if m in known and m != name}


def layer(name: str) -> int:
    best, rank = -1, len(LAYERS)
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    return rank


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def offences() -> list[str]:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    # a package's __init__ importing its own modules is how a package is made, not a dependency of a step
    lines = [f"circle: {' <-> '.join(c)}" for c in cycles(
        {n: {m for m in deps if not (known[n].name == "__init__.py" and m.startswith(n + "."))}
         for n, deps in graph.items()})]
    for name, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if known[name].name == "__init__.py" and dep.startswith(name + "."):
                continue
            if layer(dep) > layer(name):
                lines.append(f"upward: {name} (layer {layer(name)}) imports {dep} (layer {layer(dep)})")
    return lines


def main() -> int:
    found = offences()
    print("\n".join(found) if found else "no circle, no upward import")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
