"""The approval policy's verdict on one agent call (the toolset's approval wrapper asks this).

A policy per parameter path, leaf name or tool (``"auto"``, ``"ask"``, ``"deny"``; ``"*"`` for the
rest) lives in the widget's ``approval`` trait; "ask" goes to the chat panel through
:meth:`TargetWidget.ask_approval`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..core._approval import policy_for
from ..manifest import ParameterError
from ..protocol import ToolResult
from ._tools import BY_NAME

if TYPE_CHECKING:
    from ..widget import TargetWidget


def touched_paths(sim: TargetWidget, tool: str, arguments: dict[str, Any]) -> list[str]:
    """The parameter paths a call would change, as its tool's definition names them (resolved
    through the manifest where they can be)."""
    spec = BY_NAME.get(tool)
    names = spec.touches(sim.schema, arguments) if spec is not None and isinstance(arguments, dict) else []
    paths = []
    for name in names:
        try:
            paths.append(sim.schema.resolve(name).path)
        except ParameterError:
            paths.append(name)
    return paths


Ask = Callable[[str, dict[str, Any], list[str]], Awaitable[tuple[bool, str]]]


async def verdict(sim: TargetWidget, tool: str, arguments: dict[str, Any], ask: Ask | None = None) -> ToolResult | None:
    """None to go ahead, or a ``denied`` result saying why. An "ask" goes to ``ask(tool, arguments,
    paths)`` (an MCP client's elicitation) where given, else to the widget's chat panel."""
    policies = dict(sim.approval)
    if not policies:
        return None
    level, asking = policy_for(policies, tool, touched_paths(sim, tool, arguments))
    if level == "auto":
        return None
    if level == "deny":
        return ToolResult.failure("denied", f"the approval policy denies changing {', '.join(asking)}", op=tool)
    approved, why = await (ask or sim.ask_approval)(tool, arguments, asking)
    return None if approved else ToolResult.failure("denied", why, op=tool)
