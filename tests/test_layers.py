"""The package's layers: imports point one way, never into another layer's private names, no circles.

The layers, bottom first (ARCHITECTURE.md): the wire vocabulary (``protocol``, ``_bounds``), the
manifest, the core, the hosts, the features, the agent, the chat, then the faces users import
(``widget``, ``headless``, ``sweep``, ``registry``, the package itself). A module may import its
own layer and the layers below. Imports under ``if TYPE_CHECKING:`` run for the type checker only
and may name a face's class in an annotation, never a private name.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "splitbrain_widget"
LAYERS = ("protocol", "manifest", "core", "hosts", "features", "agent", "chat", "faces", "mcp")
BOTTOM = {"protocol", "_bounds"}  # top-level modules of the first layer
PACKAGES = {"manifest", "core", "hosts", "features", "agent", "chat", "mcp"}
# Handoffs: a face hands a call to another public entry, imported inside the call it serves, so no
# import made at load closes a circle: the one way up, to the MCP server (``sb.serve_mcp``,
# ``sim.serve_mcp()``, ``python -m splitbrain_widget mcp``), and ``sim.sweep`` to ``sb.sweep`` (whose
# pages are HeadlessTargets, which are TargetWidgets).
HANDOFFS = {
    ("splitbrain_widget.widget", "splitbrain_widget.sweep"),
    ("splitbrain_widget", "splitbrain_widget.mcp"),
    ("splitbrain_widget.widget", "splitbrain_widget.mcp"),
    ("splitbrain_widget.__main__", "splitbrain_widget.mcp"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    """The layer a module of the package belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return "faces"  # the package itself: the public API
    if parts[1] in BOTTOM:
        return "protocol"
    return parts[1] if parts[1] in PACKAGES else "faces"


@dataclass(frozen=True)
class Import:
    importer: str
    line: int
    module: str
    name: str | None  # the name imported from ``module``, for ``from module import name``
    typing_only: bool


def imports_of(path: Path, modules: set[str]) -> list[Import]:
    """Every import of the package's own modules that ``path`` makes, at any depth (lazy ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    importer = module_name(path)
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "splitbrain_widget":
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:  # from .pkg import module
                    found.append(Import(importer, node.lineno, sub, None, id(node) in typing_only))
                else:
                    found.append(Import(importer, node.lineno, source, alias.name, id(node) in typing_only))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "splitbrain_widget":
                    found.append(Import(importer, node.lineno, alias.name, None, id(node) in typing_only))
    return found


def all_imports() -> tuple[set[str], list[Import]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return modules, [i for p in paths for i in imports_of(p, modules)]


def test_every_module_belongs_to_a_layer() -> None:
    modules, _ = all_imports()
    top = sorted(m for m in modules if m.count(".") == 1 and layer_of(m) == "faces")
    # the faces: each a public module (or the package's entry points), no stray internals at the top
    assert all(not m.rsplit(".", 1)[1].startswith("_") or m.endswith(("__main__", "_server_extension")) for m in top), (
        top
    )


def test_imports_point_down_and_never_into_another_layers_private_names() -> None:
    _, imports = all_imports()
    wrong = []
    for imp in imports:
        here, there = layer_of(imp.importer), layer_of(imp.module)
        if here == there:
            continue
        where = f"{imp.importer}:{imp.line} imports {imp.module}{'.' + imp.name if imp.name else ''}"
        if imp.name is not None and imp.name.startswith("_") and not imp.name.startswith("__"):
            wrong.append(f"{where}: a private name of the {there} layer")
        elif (
            LAYERS.index(there) > LAYERS.index(here)
            and not imp.typing_only
            and (imp.importer, imp.module) not in HANDOFFS
        ):
            wrong.append(f"{where}: the {there} layer is above the {here} layer")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle() -> None:
    modules, imports = all_imports()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in imports:
        # a handoff is the one import up, made inside the call it serves: it closes no circle at import
        handoff = (imp.importer, imp.module) in HANDOFFS
        if not imp.typing_only and not handoff and imp.module in modules and imp.module != imp.importer:
            graph[imp.importer].add(imp.module)
    # Tarjan's strongly connected components: a component of more than one module is a circle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not circles, circles


@pytest.mark.parametrize("layer", [name for name in LAYERS if name not in ("faces", "mcp")])
def test_importing_a_layer_loads_nothing_above_it(layer: str) -> None:
    """Run for real, in a fresh interpreter: the package first (its faces load lazily), then the layer."""
    target = "splitbrain_widget.protocol" if layer == "protocol" else f"splitbrain_widget.{layer}"
    code = (
        "import json, sys\n"
        "import splitbrain_widget\n"
        "before = set(sys.modules)\n"
        f"import {target}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('splitbrain_widget') and m not in before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    above = [m for m in loaded if LAYERS.index(layer_of(m)) > LAYERS.index(layer)]
    assert not above, f"importing {target} loaded {above}"
