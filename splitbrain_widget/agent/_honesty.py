"""What the model claims never counts; what the page applied does.

An answer is judged against its tool calls: a request that asks for a change, answered with no
change tool call that succeeded, is marked ``no_change`` (and the model gets one nudge to call the
tool or say it cannot); a reply that only echoes tool output (``<tool_response>{...}``, a bare JSON
object) is replaced by a sentence built from the tool results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..widget import TargetWidget
    from ._run_state import ToolCallRecord

CHANGE_TOOLS = frozenset({"set_parameters", "reset", "run_action", "seek", "select_target"})
NUDGE = (
    "No change was made: your answer called no tool that changed the simulation. If the request asks "
    "for a change, call the tool for it now; if it cannot be done, say so in one line."
)
NO_CHANGE_NOTE = "No change was made."
_CHANGE_VERB = re.compile(
    r"^(?:please |can you |could you |would you |now )*(?:set|change|make|increase|decrease|raise|lower|turn|switch|"
    r"put|move|reset|double|halve|speed up|slow down|launch|show|hide|use|give)\b",
    re.IGNORECASE,
)
_ECHO = re.compile(r"^\s*(?:<tool_(?:response|call|result)>|```json\s*\{|\{)", re.IGNORECASE)


def asks_for_change(request: str, sim: TargetWidget) -> bool:
    """Whether the request asks for a change: the offline planner maps it to a change tool, or it
    opens with a verb of change ("set", "make", "turn", ...)."""
    from .planner import PlannerContext, plan

    try:
        planned = plan(request, PlannerContext(sim.schema, dict(sim.values)))
    except Exception:  # the planner's reading is a hint here, never a reason to fail the answer
        planned = None
    if planned is not None and any(call.tool in CHANGE_TOOLS for call in planned.calls):
        return True
    return bool(_CHANGE_VERB.match(request.strip()))


def made_change(calls: Sequence[ToolCallRecord]) -> bool:
    """Whether a change tool call succeeded (the page applied it, or the seek reached its end), or its
    change is kept to apply when the page can take it (a view reloading mid-call)."""
    return any(call.name in CHANGE_TOOLS and (call.ok or call.result.get("kept") is True) for call in calls)


def echoed(text: str) -> bool:
    """Whether the text is tool output echoed back rather than a sentence."""
    stripped = text.strip()
    if not stripped or not _ECHO.match(stripped):
        return False
    if stripped.startswith("{"):
        try:
            return isinstance(json.loads(stripped), dict)
        except ValueError:
            return False
    return True


def from_results(calls: Sequence[ToolCallRecord], sim: TargetWidget) -> str:
    """One sentence from the tool results: what was changed or read (the planner's own wording)."""
    from .planner import Plan, PlannedCall, PlannerContext, summarise

    if not calls:
        return NO_CHANGE_NOTE
    done = Plan(calls=[PlannedCall(call.name, call.arguments) for call in calls])
    try:
        return summarise(done, [call.result for call in calls], PlannerContext(sim.schema, dict(sim.values)))
    except Exception:
        ok = [call.name for call in calls if call.ok]
        return f"Ran {', '.join(ok)}." if ok else NO_CHANGE_NOTE
