"""ARCHITECTURE.md's module tables match the tree: every module listed, every listed module there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "splitbrain_widget"
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
ROWS = re.findall(r"^\| `([^`]+)`", TEXT, re.M)  # the first cell of each table row


def python_modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}


def js_modules() -> set[str]:
    js = ROOT / "js"
    return {
        p.relative_to(ROOT).as_posix()
        for p in js.rglob("*.js")
        if "node_modules" not in p.parts and "tests" not in p.relative_to(js).parts
    }


def listed_js() -> set[str]:
    """``js/view/widget.js``, ``panel.js`` in one row: the later names share the first one's folder."""
    found: set[str] = set()
    for row in re.findall(r"^\| (`js/[^|]+)\|", TEXT, re.M):
        names = re.findall(r"`([^`]+)`", row)
        folder = names[0].rsplit("/", 1)[0]
        found |= {name if "/" in name else f"{folder}/{name}" for name in names}
    return found


def test_every_python_module_has_a_row_and_every_row_a_module() -> None:
    listed = {row for row in ROWS if row.endswith(".py")}
    modules = python_modules()
    assert not modules - listed, f"modules ARCHITECTURE.md does not list: {sorted(modules - listed)}"
    assert not listed - modules, f"ARCHITECTURE.md lists modules that do not exist: {sorted(listed - modules)}"


def test_every_js_module_is_listed_and_every_listed_one_exists() -> None:
    listed, modules = listed_js(), js_modules()
    assert not modules - listed, f"JS modules ARCHITECTURE.md does not list: {sorted(modules - listed)}"
    assert not listed - modules, f"ARCHITECTURE.md lists JS modules that do not exist: {sorted(listed - modules)}"


def test_every_path_the_text_names_exists() -> None:
    named = set(re.findall(r"`((?:js|core|hosts|features|agent|manifest|chat)/[\w/]+\.(?:py|js|mjs))`", TEXT))
    missing = [n for n in named if not ((PACKAGE / n).exists() or (ROOT / n).exists())]
    assert not missing, missing
