"""The verdict on one call of an agent, the chat panel or an MCP client (never the student's own
Python code): the lesson policy first (:mod:`splitbrain_widget.core._lesson`: what a teacher lets
them change, within which range, under whose approval), then the widget's approval policy.

A policy per parameter path, leaf name or tool (``"auto"``, ``"ask"``, ``"deny"``; ``"*"`` for the
rest) lives in the widget's ``approval`` trait; "ask" goes to the chat panel through
:meth:`TargetWidget.ask_approval`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..core._approval import policy_for
from ..core._lesson import Lesson, LessonError, current_lesson
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
    paths = touched_paths(sim, tool, arguments)
    try:
        lesson = current_lesson()
        refused = _lesson_refusal(lesson, sim, tool, arguments, paths) if lesson is not None else None
    except LessonError as exc:  # nothing runs under a policy half read
        refused = f"the lesson policy cannot be read: {exc}"
    if refused is not None:
        return ToolResult.failure("denied", refused, op=tool)
    lesson_asks = lesson.needs_approval(sim.target_id, paths) if lesson is not None else []
    policies = dict(sim.approval)
    if not policies and not lesson_asks:
        return None
    level, asking = policy_for(policies, tool, paths) if policies else ("auto", [])
    if lesson_asks and level != "deny":
        level, asking = "ask", sorted({*asking, *lesson_asks})
    if level == "auto":
        return None
    if level == "deny":
        return ToolResult.failure("denied", f"the approval policy denies changing {', '.join(asking)}", op=tool)
    approved, why = await (ask or sim.ask_approval)(tool, arguments, asking)
    return None if approved else ToolResult.failure("denied", why, op=tool)


def _lesson_refusal(
    lesson: Lesson, sim: TargetWidget, tool: str, arguments: dict[str, Any], paths: list[str]
) -> str | None:
    """Why the lesson refuses this call, or None. Its parameter names are checked against the
    target's manifest first: a rule naming no parameter is a policy half read."""
    target_id, manifest = sim.target_id, sim.schema
    rules = lesson.policy.targets.get(target_id)
    for path in (rules.parameters or {}) if rules is not None else {}:
        if path not in manifest.parameters:
            raise LessonError(
                f"{lesson.source}: field 'targets.{target_id}.parameters.{path}': {target_id}'s manifest has no "
                f"parameter '{path}' (expected a dotted path: {', '.join(manifest.parameters)})"
            )
    values: dict[str, Any] = {}
    raw = arguments.get("values") if tool == "set_parameters" else None
    if isinstance(raw, dict):
        for name, value in raw.items():
            try:
                values[manifest.resolve(str(name)).path] = value
            except ParameterError:
                values[str(name)] = value
    action = arguments.get("name") if tool == "run_action" else None
    refused = lesson.refusal(target_id, paths, values, action if isinstance(action, str) else None)
    return refused if refused is not None or tool != "seek" else lesson.seek_refusal(target_id, paths)
