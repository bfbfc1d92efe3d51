"""The agent's toolset: the manifest's tools run in the browser, under the approval policy, inside the run's guards.

pydantic-ai wrapper toolsets, outermost first: :class:`GuardedToolset` (events, truncated calls
refused, loops blocked, every call recorded, failures raised for the model), :class:`ApprovalToolset`
(the widget's approval policy) and :class:`BrowserToolset` (the tools). :func:`toolset` stacks them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
from pydantic_core import SchemaValidator, core_schema

from ..core._audit import use_source
from ..protocol import ToolResult
from . import _approval
from ._events import ToolCallFinished, ToolCallProgress, ToolCallStarted
from ._run_state import RunState, RunStopped, ToolCallRecord
from ._tools import BY_NAME, ToolContext, call_label, execute, for_model, split_picture, tool_specs

if TYPE_CHECKING:
    from ..core._picture import Picture
    from ..widget import TargetWidget

TRUNCATED_MESSAGE = (
    "NOT executed: the arguments were truncated in transit; nothing changed; re-issue in smaller pieces."
)
_ANY_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class BrowserToolset(AbstractToolset[Any]):
    """The tools of :data:`._tools.TOOLS` for the active manifest; calls run on the widget's async
    API, so in the browser, and return what the model reads."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    @property
    def id(self) -> str:
        return "splitbrain"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        defs = [
            ToolDefinition(
                name=s.name, parameters_json_schema=s.schema, description=s.description, sequential=not s.read_only
            )
            for s in tool_specs(self.state.scope())
        ]
        return {d.name: ToolsetTool(toolset=self, tool_def=d, max_retries=3, args_validator=_ANY_ARGS) for d in defs}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> dict[str, Any]:
        state = self.state
        call_id = ctx.tool_call_id or name

        def progress(label: str) -> None:
            state.emit(ToolCallProgress(call_id, name, tool_args, label))

        try:
            # Set here, where the call runs: the run's tasks and threads need not have inherited it.
            context = ToolContext(state.sim, state.store, progress, state.skills(), state.loaded_skills)
            with use_source(state.source):
                outcome = await execute(context, name, tool_args)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours must reach the model as a result, not kill the run
            outcome = ToolResult.failure("internal_error", f"{name} failed inside splitbrain_widget: {exc!r}")
        return for_model(outcome, state.store) if isinstance(outcome, ToolResult) else outcome


@dataclass
class ApprovalToolset(WrapperToolset[Any]):
    """Puts the calls of tools that need approval under the widget's approval policy."""

    sim: TargetWidget | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        spec = BY_NAME.get(name)
        if spec is not None and spec.needs_approval and self.sim is not None:
            denied = await _approval.verdict(self.sim, name, tool_args)
            if denied is not None:
                return denied.for_model()
        return await super().call_tool(name, tool_args, ctx, tool)


@dataclass
class GuardedToolset(WrapperToolset[Any]):
    """The run's bookkeeping around every call: events, truncated calls refused, loops blocked, each
    call recorded, and a failed result raised as ``ToolFailed`` so the model reads it as an error."""

    state: RunState | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        state = self.state
        assert state is not None
        call_id = ctx.tool_call_id or name
        label = call_label(name, tool_args)
        state.emit(ToolCallStarted(call_id, name, tool_args, label))
        if call_id in state.truncated_ids:
            result = ToolResult.failure("truncated_call", TRUNCATED_MESSAGE, op=name)
            return self._finish(call_id, name, tool_args, result.for_model())
        verdict = state.loops.check(name, tool_args)
        if not verdict.allowed:
            payload = ToolResult.failure("loop_blocked", verdict.message, op=name).for_model()
            state.emit(ToolCallFinished(call_id, name, tool_args, payload, ok=False, label=label))
            state.tool_calls.append(ToolCallRecord(name, tool_args, payload, ok=False))
            if verdict.stop:
                state.stop_reason = state.loops.stop_reason()
                raise RunStopped(state.stop_reason)
            raise ToolFailed(failure_text(payload))
        try:
            payload = await super().call_tool(name, tool_args, ctx, tool)
        except asyncio.CancelledError:
            payload = ToolResult.failure("cancelled", f"{name} was cancelled", op=name).for_model()
            state.tool_calls.append(ToolCallRecord(name, tool_args, payload, ok=False))
            state.emit(ToolCallFinished(call_id, name, tool_args, payload, ok=False, label=label))
            raise
        # a picture (``snapshot``): shown to the model, never in the events or records
        payload, picture = split_picture(payload)
        state.loops.record(name, tool_args, bool(payload.get("ok")), payload)
        result = self._finish(call_id, name, tool_args, payload)
        return result if picture is None else with_picture(result, picture)

    def _finish(self, call_id: str, name: str, args: dict[str, Any], payload: dict[str, Any]) -> Any:
        assert self.state is not None
        ok = bool(payload.get("ok"))
        self.state.tool_calls.append(ToolCallRecord(name, args, payload, ok))
        self.state.emit(ToolCallFinished(call_id, name, args, payload, ok, call_label(name, args)))
        if not ok:
            raise ToolFailed(failure_text(payload))
        return payload


def with_picture(payload: dict[str, Any], picture: Picture) -> Any:
    """The result the model reads, with the page's picture beside it as image content."""
    from pydantic_ai import BinaryContent, ToolReturn

    image = BinaryContent(bytes(picture), media_type="image/png")
    return ToolReturn(return_value=payload, content=["The page's picture:", image])


def toolset(state: RunState) -> GuardedToolset:
    """The agent's toolset: the browser tools, under the approval policy, inside the run's guards."""
    return GuardedToolset(ApprovalToolset(BrowserToolset(state), sim=state.sim), state=state)


def failure_text(payload: dict[str, Any]) -> str:
    """A failed result as the model reads it: ``code: message (hint: ...)``, not JSON inside JSON."""
    error = payload.get("error") or {}
    text = f"{error.get('code', 'error')}: {error.get('message', 'failed')}"
    if error.get("hint"):
        text += f" (hint: {error['hint']})"
    if "applied" in payload:  # a call that went for the page: say plainly whether the page has it
        text += f" [applied: {str(payload['applied']).lower()}; kept: {str(payload.get('kept', False)).lower()}]"
    return text
