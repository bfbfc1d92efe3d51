"""Which widgets the MCP server serves, under which ids, and the MCP tools they make.

A widget keeps the id it was first served under (its target's id, ``_2`` and on for a second of the
same target) while it lives; a closed widget leaves the catalog. Every widget's tools are the rows
of the agent's tool table offered for it (:func:`splitbrain_widget.agent.specs_for`), named
``<id>__<tool>`` with the schema the built-in agent sees, so a client that lists the tools again after
``notifications/tools/list_changed`` (Claude Code, VS Code, Cursor, the Inspector) always has the
exact schemas of the targets shown now.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from ..agent import Skill, ToolSpec, offers, scope_of, specs_for
from ..widget import TargetWidget, live_widgets
from ._apps import views_of

SEPARATOR = "__"
MAX_ID = 40  # characters of a widget's id (tool names stay within 64, what OpenAI-style clients take)


@dataclass(frozen=True)
class Served:
    """One served widget: its id and the widget."""

    id: str
    widget: TargetWidget

    @property
    def title(self) -> str:
        manifest = self.widget.schema
        return manifest.title or manifest.id


@dataclass(frozen=True)
class McpTool:
    """One MCP tool: its name, the widget it steers, and the agent's spec of it (name, schema)."""

    name: str
    served: Served
    spec: ToolSpec


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")[:MAX_ID] or "widget"
    return slug if slug[0].isalpha() else f"w_{slug}"[:MAX_ID]


class Catalog:
    """The served widgets: the ones given (``widgets``), or (None) every widget of the process that can
    answer now: displayed (a view attached), on a headless page, an MCP App's (its views come with the
    calls), and the ones added by name.

    A widget that is neither (made but not displayed, or left behind by a cell run again: the widget
    registry keeps it until it is closed) is not offered, so a client never sees tools that can only
    time out; it appears when its view attaches."""

    def __init__(self, widgets: Iterable[TargetWidget] | None = None, skills: tuple[Skill, ...] = ()) -> None:
        self._lock = threading.Lock()
        self._given: weakref.WeakSet[TargetWidget] | None = None
        self._ids: weakref.WeakKeyDictionary[TargetWidget, str] = weakref.WeakKeyDictionary()
        self._taken: set[str] = set()
        self._pinned: weakref.WeakSet[TargetWidget] = weakref.WeakSet()  # added by name: served without a view
        self.skills = skills
        if widgets is not None:
            self._given = weakref.WeakSet()
            self.add(widgets)

    @property
    def every_live_widget(self) -> bool:
        return self._given is None

    def add(self, widgets: Iterable[TargetWidget]) -> None:
        """Serve these widgets too (a catalog of every live widget has them already)."""
        for widget in widgets:
            if not isinstance(widget, TargetWidget):
                raise TypeError(f"serve_mcp(*widgets): expected TargetWidget or HeadlessTarget, got {widget!r}")
            (self._given if self._given is not None else self._pinned).add(widget)
            self._id(widget)

    def _id(self, widget: TargetWidget) -> str:
        with self._lock:
            known = self._ids.get(widget)
            if known is not None:
                return known
            base = _slug(widget.target_id)
            name, n = base, 1
            while name in self._taken:
                n += 1
                name = f"{base[: MAX_ID - 4]}_{n}"
            self._taken.add(name)
            self._ids[widget] = name
            return name

    def served(self) -> list[Served]:
        """The widgets served now, oldest first."""
        live = live_widgets()
        if self._given is not None:
            given = self._given
            live = [w for w in live if w in given]
        else:
            pinned = self._pinned
            live = [w for w in live if w in pinned or w.views > 0 or w.can_advance or views_of(w) is not None]
        return [Served(self._id(w), w) for w in live]

    def find(self, widget_id: str) -> Served | None:
        return next((s for s in self.served() if s.id == widget_id), None)

    def tools(self) -> list[McpTool]:
        """Every served widget's tools, named ``<id>__<tool>``."""
        return [
            McpTool(f"{served.id}{SEPARATOR}{spec.name}", served, spec)
            for served in self.served()
            for spec in specs_for(served.widget, self.skills)
        ]

    def tool(self, name: str) -> tuple[Served, str] | None:
        """The served widget and the tool of the table an MCP tool name calls, if that widget offers it
        (checked without building every tool's schema: this runs on every call)."""
        widget_id, _, tool = name.partition(SEPARATOR)
        served = self.find(widget_id)
        if served is None or not offers(served.widget, tool, self.skills):
            return None
        return served, tool

    def skills_of(self, served: Served) -> list[Skill]:
        """The skills a served widget's target has (beside it, and the ones the server was given)."""
        return list(scope_of(served.widget, self.skills).skills)
