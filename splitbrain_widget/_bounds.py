"""Bounds on what a page sends, checked where it enters Python, before it is kept.

A target page is untrusted (docs/protocol.md, *Bounds*). Its messages are bounded in size before
they get here (1 MiB of JSON each, :data:`~splitbrain_widget.protocol.MAX_MESSAGE_BYTES`), but a
size bound alone does not bound what Python makes of it: a mebibyte of ``[[],[],...]`` is 350,000
lists, about 25 MB of Python objects. So a state is also bounded in depth and in values
(``protocol.bounded_state``), its text repaired where no encoder would take it (:func:`repair_text`:
a lone surrogate, which a browser's ``JSON.stringify`` writes for a broken string and which would
make every later trait echo fail), and the states one call keeps (a sampled advance, a recording)
are bounded together (:class:`NodeBudget`).
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays in a state (the state itself is level 1; numbers, strings,
booleans and null add no level), as the view counts it (js/host/relay.js ``jsonShape``)."""
MAX_NODES = 100_000
"""Most values (every object, array, number, string, boolean and null, keys not counted) in one state."""
MAX_CALL_NODES = 1_000_000
"""Most values the states kept by one call hold together (a sampled ``advance``: every state it returns)."""
MAX_TEXT = 1_000
"""Longest string an observable may be in a recorded table; a longer one is left out (None)."""


def within(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> bool:
    """Whether the JSON ``text`` is surely within both bounds, by counting in C (no walk): a value
    holds at most one more value than its text has commas, and nests at most as deep as it has
    opening brackets. False means "measure it" (:func:`measure`), not "too big"."""
    return text.count(",") + 1 <= max_nodes and text.count("[") + text.count("{") <= max_depth


def measure(value: Any, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> tuple[int, int]:
    """(depth, values) of a JSON value, walking no further than either bound (the first one passed
    is returned, one over it); iterative, so that no nesting can exhaust Python's stack."""
    depth = nodes = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            break
        if isinstance(node, dict | list):  # objects and arrays nest; the values in them do not
            if level > depth:
                depth = level
                if depth > max_depth:
                    break
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return depth, nodes


def repair_text(value: Any, text: str) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD; ``text`` is
    its JSON (``ensure_ascii=False``), already made by the caller. The same object when there is none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass pairs what pairs and "replace" marks what is left alone.
        repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return json.loads(repaired)
    return value


class NodeBudget:
    """The values one call may keep across the states it takes (:data:`MAX_CALL_NODES`)."""

    def __init__(self, limit: int = MAX_CALL_NODES) -> None:
        self.limit = limit
        self.used = 0

    def take(self, state: Any) -> bool:
        """Count ``state`` in; False once the call's states hold more than the limit together."""
        self.used += measure(state, max_depth=MAX_DEPTH + 1, max_nodes=self.limit - self.used + 1)[1]
        return self.used <= self.limit
