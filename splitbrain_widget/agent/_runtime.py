"""The run itself: one pydantic-ai agent for one :class:`~splitbrain_widget.agent.Agent`, and each request run on it.

The door to pydantic-ai: ``Agent`` imports this module when it is created, and with it the pieces
it assembles (:mod:`._model_setup`, :mod:`._toolsets`, :mod:`._guards`, :mod:`._history`). A run
streams its text as events and ends in a :class:`RunOutcome`, stopped or not, with a history in
which every tool call has its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai import Agent as PaiAgent
from pydantic_ai import (
    AgentRunResultEvent,
    CancellationToken,
    ModelAPIError,
    PartDeltaEvent,
    PartStartEvent,
    RunCancelled,
    TextPart,
    TextPartDelta,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.exceptions import ModelRequestTimeout
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.settings import ModelSettings

from ..core._audit import CallSource, make_source
from . import _retry
from ._budget import Bounds
from ._events import AgentEvent, RunDeadline, TextDelta
from ._guards import Guards
from ._history import compact, repair_history, window_for
from ._loops import LoopDetector, LoopLimits
from ._model_chain import StickyChain, model_label
from ._model_setup import asks_its_server, build_model, no_tools_warning, server_facts
from ._run_state import RunState, RunStopped, ToolCallRecord
from ._skills import Skill, SkillBook
from ._tools import system_prompt
from ._toolsets import toolset

if TYPE_CHECKING:
    from ..widget import TargetWidget


@dataclass
class RunOutcome:
    text: str
    messages: list[ModelMessage]
    usage: dict[str, int]
    stopped: str | None


class Runtime:
    """Everything pydantic-ai for one :class:`~splitbrain_widget.agent.Agent`."""

    def __init__(
        self,
        sim: TargetWidget,
        model: Any,
        *,
        fallback: Sequence[Any] = (),
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 5,
        backoff: tuple[float, ...] = _retry.BACKOFF_S,
        loop_limits: LoopLimits | None = None,
        usage_limits: dict[str, int] | None = None,
        instructions: str | None = None,
        context_window: int | None = None,
        stream: bool = True,
        skills: Sequence[Skill] = (),
        bounds: Bounds | None = None,
        vision: bool = False,
    ) -> None:
        self.sim = sim
        self.bounds = bounds or Bounds()
        self.stream = stream
        self.loop_limits = loop_limits or LoopLimits()
        self.state = RunState(sim, lambda e: None, self.loop_limits, max_retries, tuple(backoff))
        self.state.vision = vision
        self.state.book = SkillBook(skills)
        self.state.book.for_target(sim.target)  # a malformed skill of the active target fails here, naming its file
        # base_url and api_key belong to the primary; fallbacks bring their own (objects, or keys from the env)
        models = [build_model(model, base_url=base_url, api_key=api_key, state=self.state)]
        models += [build_model(m, state=self.state) for m in fallback]
        self.chain = StickyChain(models)
        self.state.chain = self.chain
        # what the server behind the model says of it: its context, and whether tools reach the model at all
        self.server = server_facts(models[0]) if asks_its_server(model, base_url) else None
        if self.server is not None and self.server.tools is False:
            warnings.warn(no_tools_warning(model_label(models[0]), self.server), UserWarning, stacklevel=3)
        served = self.server.context if self.server is not None else None
        self.state.window = context_window or served or window_for(model_label(models[0]))
        self.state.reserve = self.bounds.max_tokens or 0
        self.extra_instructions = instructions
        self.usage_limits = UsageLimits(**(usage_limits or {"request_limit": 40}))  # type: ignore[arg-type]
        self.history: list[ModelMessage] = []
        self.token: CancellationToken | None = None
        self._handle: Any = None  # the run in progress (its messages and usage, should it end early)
        self.agent = PaiAgent(
            self.chain,
            instructions=self._instructions,
            toolsets=[toolset(self.state)],
            capabilities=[Guards(self.state)],
            model_settings=None if isinstance(models[0], FunctionModel) else self._settings(),
            retries=3,
        )

    def _settings(self) -> ModelSettings:
        """pydantic-ai's settings for the bounds: the cap is sent to the provider, the deadlines enforced here."""
        bounds = self.bounds
        settings = ModelSettings(max_retries=0)
        if bounds.max_tokens is not None:
            settings["max_tokens"] = bounds.max_tokens
        if bounds.request_timeout is not None:
            settings["request_timeout"] = bounds.request_timeout
        if bounds.idle_timeout is not None:
            settings["timeout"] = bounds.idle_timeout
        return settings

    @property
    def model_name(self) -> str:
        return model_label(self.chain.wrapped)

    def nudges(self) -> bool:
        """Whether a "no change was made" answer gets its one nudge: a language model's, not a scripted
        function's (the offline planner's refusals are already honest)."""
        return not isinstance(self.chain.wrapped, FunctionModel)

    def streams(self) -> bool:
        """Stream (text deltas as they come) unless asked not to or the model cannot."""
        model = self.chain.wrapped
        return self.stream and not (isinstance(model, FunctionModel) and model.stream_function is None)

    def _instructions(self) -> str:
        sim = self.sim
        text = system_prompt(self.state.scope(), dict(sim.values))
        return f"{text}\n{self.extra_instructions}" if self.extra_instructions else text

    def cancel(self) -> None:
        if self.token is not None:
            self.token.cancel()

    def skip_wait(self) -> None:
        """End a retry wait early; callable from any thread."""
        event, loop = self.state.skip_wait, self.state.loop
        if event is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(event.set)

    async def run(
        self,
        text: str,
        emit: Callable[[AgentEvent], None],
        source: CallSource | None = None,
        deadline: float | None = None,
    ) -> tuple[RunOutcome, list[ToolCallRecord]]:
        """Answer ``text``; ``deadline``: seconds this run may take (default: the run_timeout bound)."""
        state = self.state
        state.emit = emit
        state.request = text
        state.source = source if source is not None else make_source(f"agent: {text}")
        state.tool_calls = []
        state.loaded_skills = []
        state.truncated_ids = set()
        state.stop_reason = None
        state.overflowed = state.refit = False
        state.loops = LoopDetector(self.loop_limits, known_tools=frozenset())
        state.skip_wait = asyncio.Event()
        state.loop = asyncio.get_running_loop()
        self.token = CancellationToken()
        history = repair_history(self.history, "the previous run ended before this call finished")
        stopped: str | None = None
        output = ""
        messages: list[ModelMessage] = history
        usage: dict[str, int] = {}
        options: dict[str, Any] = {
            "message_history": history,
            "usage_limits": self.usage_limits,
            "cancellation_token": self.token,
        }
        handle: Any = None  # the run, so a run that ends early still yields its messages and usage
        deadline = self.bounds.run_timeout if deadline is None else deadline
        if deadline is not None:
            emit(RunDeadline(deadline))
        self._handle = None
        try:
            async with asyncio.timeout(deadline):
                output, handle = await self._drive(text, options, emit)
        except TimeoutError:
            stopped = f"deadline: the answer took longer than its run_timeout of {deadline:g} s"
            self.cancel()
        except RunCancelled as exc:
            stopped = "cancelled"
            if hasattr(exc, "all_messages"):
                messages = list(exc.all_messages())
                handle = self._handle = None
        except RunStopped as exc:
            stopped = str(exc)
        except UsageLimitExceeded as exc:
            stopped = f"usage limit reached: {exc}"
        except UnexpectedModelBehavior as exc:
            stopped = f"the model misbehaved: {exc}"
        except ModelRequestTimeout as exc:
            limit = self.bounds.request_timeout
            stopped = f"deadline: a model request took longer than its request_timeout of {limit:g} s ({exc})"
        except ModelAPIError as exc:
            stopped = f"the model failed: {type(exc).__name__}: {exc}"
        except BaseExceptionGroup as group:  # FallbackExceptionGroup and friends
            stopped = f"every model failed: {group}"
        if handle is None:
            handle = self._handle  # a run that ended early: its messages and usage so far
        if handle is not None:
            with contextlib.suppress(Exception):
                messages = list(handle.all_messages())
            with contextlib.suppress(Exception):
                usage = _usage(handle.usage)
        if stopped is not None:
            if state.overflowed:  # the turn that did not fit does not stay: the conversation goes on from before it
                kept = compact(history, state.window, keep_turns=2, overhead=state.overhead, force=True)
                self.history = kept or history
            else:
                reason = "cancelled" if stopped == "cancelled" else f"the run stopped: {stopped}"
                self.history = repair_history(messages, reason)
            if not output:
                output = f"Stopped: {stopped.rstrip('.')}." if stopped != "cancelled" else "Cancelled."
        else:
            self.history = messages
            last = _cut_off(messages)
            if last is not None:  # the last answer was cut off: say so, never pass it as finished
                stopped = "length"
                cap = self.bounds.max_tokens
                written = last.usage.output_tokens
                if cap is not None and (not written or written >= cap):
                    why = f"the answer reached its output cap (max_tokens={cap})"
                else:  # the server stopped it short of the cap: the context was full
                    why = f"the answer filled the model's context window after {written} tokens"
                output = f"{output.rstrip()} [cut off: {why}]"
        state.ever_loaded.update(state.loaded_skills)  # their bodies are in the history now
        return RunOutcome(output, self.history, usage, stopped), list(state.tool_calls)

    async def _drive(self, text: str, options: dict[str, Any], emit: Callable[[AgentEvent], None]) -> tuple[str, Any]:
        """Run the agent on ``text``, streaming its text as events; (the output, the run's handle)."""
        output = ""
        if self.streams():
            async with self.agent.run_stream_events(text, **options) as events:
                self._handle = events
                async for event in events:
                    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart) and event.part.content:
                        emit(TextDelta(event.part.content))
                    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                        emit(TextDelta(event.delta.content_delta))
                    elif isinstance(event, AgentRunResultEvent):
                        output = str(event.result.output)
        else:
            async with self.agent.iter(text, **options) as run:
                self._handle = run
                async for _node in run:
                    pass
                output = str(run.result.output) if run.result is not None else ""
                emit(TextDelta(output))
        return output, self._handle

    def forget(self) -> None:
        """Start the conversation afresh: no history, so no skill counts as loaded, nothing pending."""
        self.history = []
        self.state.ever_loaded.clear()
        self.state.pending = None


def _cut_off(messages: list[ModelMessage]) -> ModelResponse | None:
    """The run's last model response if it was cut off (finish reason ``length``: the cap, or a full context)."""
    last = next((m for m in reversed(messages) if isinstance(m, ModelResponse)), None)
    return last if last is not None and getattr(last, "finish_reason", None) == "length" else None


def _usage(usage: Any) -> dict[str, int]:
    return {
        "requests": int(getattr(usage, "requests", 0) or 0),
        "input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
    }
