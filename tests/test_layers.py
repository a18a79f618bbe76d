"""The house rule, checked on every run: the import graphs of `timothy/` and `app/` have no
cycle, no import in the core runs back up a layer, and the core never imports the app or Qt.

Imports are read from the source (every `import` and `from ... import`, also those inside
functions), so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The core's layers, top first (ARCHITECTURE.md). A module may import its own package or
# anything on a lower layer; never a higher one.
CORE_LAYERS: list[set[str]] = [
    {"cli"},
    {"health", "assistant"},
    {"settings"},
    {"chat"},
    {"retrieval", "memory"},
    {"providers"},
    {"store"},
    {"tokens", "secrets", "logs"},
    {"paths", "text", "errors", "heap", "lazy", "__init__"},
]


def modules(package: str) -> dict[str, Path]:
    base = ROOT / package
    found = {}
    for path in base.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules among `known` that the module `name` (at `path`) imports."""
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets.add(module)
            targets.update(f"{module}.{alias.name}" for alias in node.names)
    # `from timothy.store import Memory` imports the package timothy.store. A module's own
    # ancestors are left out: importing any submodule runs its package's __init__ first.
    return {t for t in targets if t in known and t != name and not name.startswith(t + ".")}


def graph(package: str) -> dict[str, set[str]]:
    found = modules(package)
    return {name: imported(name, path, found) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def room(module: str) -> str:
    """A module's room: its package under timothy/ or app/ (a top-level file is its own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def rooms(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    joined: dict[str, set[str]] = {}
    for source, targets in edges.items():
        joined.setdefault(room(source), set()).update(
            room(t) for t in targets if room(t) != room(source)
        )
    return joined


def layer_of(name: str) -> int:
    for depth, layer in enumerate(CORE_LAYERS):
        if name in layer:
            return depth
    raise AssertionError(f"timothy/{name} is on no layer: add it to CORE_LAYERS")


def test_the_core_has_no_cycle_of_modules_or_packages() -> None:
    edges = graph("timothy")
    assert cycles(edges) == []
    assert cycles(rooms(edges)) == []


def test_no_import_in_the_core_runs_back_up_a_layer() -> None:
    upward = [
        f"{source} -> {target}"
        for source, targets in graph("timothy").items()
        for target in targets
        if room(source) != room(target) and layer_of(room(target)) < layer_of(room(source))
    ]
    assert upward == []


def test_the_app_has_no_cycle_of_modules_or_packages() -> None:
    edges = graph("app")
    assert cycles(edges) == []
    assert cycles(rooms(edges)) == []


def test_the_core_imports_neither_the_app_nor_qt() -> None:
    offending = []
    for name, path in modules("timothy").items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offending += [
                f"{name}: {n}" for n in names if n.split(".")[0] in ("app", "PySide6", "PyQt6")
            ]
    assert offending == []


def test_the_checker_sees_a_cycle_and_an_upward_import() -> None:
    """The checks above can fail: a made-up graph with both faults is caught."""
    edges = {"timothy.store.a": {"timothy.chat.b"}, "timothy.chat.b": {"timothy.store.a"}}
    assert cycles(edges) == [["timothy.chat.b", "timothy.store.a"]]
    assert layer_of(room("timothy.chat.b")) < layer_of(room("timothy.store.a"))
