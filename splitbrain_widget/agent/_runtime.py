"""The pydantic-ai runtime: the only module of ours that imports pydantic_ai.

It turns our pieces into one pydantic-ai run: the manifest's tools (:mod:`._tools`) as a toolset
that executes in the browser, the offline planner (:mod:`._planner`) as a FunctionModel, and the
guards as one capability (retry with backoff, fallback, truncation, loop detection, compaction).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_ai import Agent as PaiAgent
from pydantic_ai import (
    AgentRunResultEvent,
    CancellationToken,
    ModelAPIError,
    ModelHTTPError,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    RetryModelRequest,
    RunCancelled,
    RunContext,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolFailed,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelAuthenticationError, ModelQuotaExceededError
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
from pydantic_core import SchemaValidator, core_schema

from ..core._audit import CallSource, make_source, use_source
from ..protocol import ToolResult
from . import _approval, _retry
from ._events import AgentEvent, Fallback, RetryWait, TextDelta, ToolCallFinished, ToolCallProgress, ToolCallStarted
from ._loops import LoopDetector, LoopLimits
from ._models import ModelSetupError
from ._skills import Skill, SkillBook, confirm_paths
from ._tools import BY_NAME, Scope, ToolContext, call_label, execute, for_model, system_prompt, tool_specs
from .planner import _plan as _planner

if TYPE_CHECKING:
    from ..widget import TargetWidget

TRUNCATED_MESSAGE = (
    "NOT executed: the arguments were truncated in transit; nothing changed; re-issue in smaller pieces."
)
LOCAL_SERVERS = (("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234))
CONTEXT_WINDOWS = {"gpt-4": 128_000, "gpt-5": 400_000, "claude": 200_000, "gemini": 1_000_000, "offline": 10**9}
DEFAULT_WINDOW = 32_000
_ANY_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


class RunStopped(Exception):
    """The loop detector's hard limit ended the run."""


# -- models -----------------------------------------------------------------------------------


def build_model(spec: Any, *, base_url: str | None = None, api_key: str | None = None, state: RunState) -> Model:
    """A pydantic-ai model from ``"offline"``, ``"openai:<name>"``, ``"anthropic:<name>"``,
    ``"google:<name>"``, ``"ollama:<name>"``, ``"local"`` or a model object."""
    if isinstance(spec, Model):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSetupError(f"model must be a string such as 'offline' or 'openai:gpt-4o-mini', got {spec!r}")
    spec = spec.strip()
    if spec == "offline":
        return offline_model(state)
    provider, _, name = spec.partition(":")
    if spec == "local":
        base_url, name = find_local_server(base_url)
        provider = "openai"
    elif not name:
        if base_url is None:
            raise ModelSetupError(
                f"unknown model {spec!r}: use 'offline', 'openai:<name>', 'anthropic:<name>', 'google:<name>', "
                "'ollama:<name>', 'local', or pass base_url= for any OpenAI-compatible server"
            )
        provider, name = "openai", spec
    try:
        if provider in ("openai", "ollama"):
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            if provider == "ollama":
                base_url = base_url or "http://127.0.0.1:11434/v1"
                api_key = api_key or "ollama"
            if base_url is not None and api_key is None:
                api_key = os.environ.get("OPENAI_API_KEY") or "not-needed"
            chat = OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
            if provider == "ollama" or spec == "local":
                chat._splitbrain_label = f"{'local' if spec == 'local' else 'ollama'}:{name}"  # type: ignore[attr-defined]
            return chat
        if provider == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            return AnthropicModel(name, provider=AnthropicProvider(api_key=api_key, base_url=base_url))
        if provider in ("google", "gemini"):
            from pydantic_ai.models.google import GoogleModel
            from pydantic_ai.providers.google import GoogleProvider

            return GoogleModel(name, provider=GoogleProvider(api_key=api_key, base_url=base_url))
    except ImportError as exc:
        extra = {"ollama": "openai", "gemini": "google"}.get(provider, provider)
        raise ModelSetupError(
            f"model {spec!r} needs the {extra} client: pip install 'splitbrain-widget[{extra}]' ({exc})"
        ) from None
    except Exception as exc:  # missing API key and similar provider set-up errors
        detail = str(exc).split(" For testing", 1)[0].strip()  # pydantic-ai's hint about its own test model
        raise ModelSetupError(
            f"could not set up model {spec!r}: {detail} Set the provider's key in the kernel's environment "
            "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY) or pass api_key=."
        ) from None
    raise ModelSetupError(f"unknown provider {provider!r} in {spec!r}: use openai, anthropic, google or ollama")


def find_local_server(base_url: str | None = None, timeout: float = 0.5) -> tuple[str, str]:
    """The first local OpenAI-compatible server that answers ``/v1/models``, and its first model."""
    candidates = [(base_url.rstrip("/"), "the given base_url")] if base_url else []
    candidates += [(f"http://127.0.0.1:{port}/v1", f"{name} (port {port})") for name, port in LOCAL_SERVERS]
    tried = []
    for url, label in candidates:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=timeout) as response:
                listing = json.loads(response.read(1 << 20))
        except (urllib.error.URLError, OSError, ValueError):
            tried.append(label)
            continue
        models = [str(m["id"]) for m in listing.get("data", []) if isinstance(m, dict) and m.get("id")]
        if models:
            return url, models[0]
        tried.append(f"{label}: answered but lists no models")
    raise ModelSetupError(
        "model='local' found no local OpenAI-compatible server. Tried: "
        + "; ".join(tried)
        + ". Start one (for example `ollama serve` and `ollama pull qwen2.5`), or pass base_url=."
    )


def model_label(model: Model) -> str:
    label = getattr(model, "_splitbrain_label", None)
    if isinstance(label, str):
        return label
    name = getattr(model, "model_name", None) or type(model).__name__
    system = getattr(model, "system", "") or ""
    if not system or system == "function" or system in str(name):
        return str(name)
    return f"{system}:{name}"


class StickyChain(WrapperModel):
    """The primary model and its fallbacks; once moved to a fallback, the chain stays there."""

    def __init__(self, models: Sequence[Model]) -> None:
        super().__init__(models[0])
        self.models = list(models)
        self.index = 0

    def _refresh_http_client(self) -> None:
        # Each ask() runs on a fresh event loop: every model of the chain, not only the active one,
        # must drop HTTP clients bound to the previous loop, or a later fallback fails.
        for model in self.models:
            model._refresh_http_client()

    @asynccontextmanager
    async def _run_scope(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for model in self.models:
                await stack.enter_async_context(model._run_scope())
            yield

    def has_next(self) -> bool:
        return self.index + 1 < len(self.models)

    def advance(self) -> tuple[str, str]:
        before = model_label(self.wrapped)
        self.index += 1
        self.wrapped = self.models[self.index]
        return before, model_label(self.wrapped)


# -- the offline planner as a model -----------------------------------------------------------


def offline_model(state: RunState) -> FunctionModel:
    """The planner, speaking through the same agent loop and tools as a real model."""

    def decide(messages: list[ModelMessage]) -> ModelResponse:
        prompt, answered = _last_prompt(messages)
        if not answered:
            ctx = state.planner_context()
            plan, loads = _skill_plan(state, prompt, ctx)
            state.plan = plan
            if plan.refusal is not None or (plan.question is not None and not loads):
                return ModelResponse(
                    parts=[TextPart(plan.refusal or plan.question or "")], model_name="offline-planner"
                )
            calls = [_planner.PlannedCall("load_skill", {"name": name}) for name in loads] + plan.calls
            parts = [ToolCallPart(call.tool, call.args, tool_call_id=f"offline-{i}") for i, call in enumerate(calls)]
            return ModelResponse(parts=parts, model_name="offline-planner")
        if state.plan is not None and state.plan.question is not None:
            return ModelResponse(parts=[TextPart(state.plan.question)], model_name="offline-planner")
        # this run's calls, structured (a loaded skill is no change to report)
        results = [record.result for record in state.tool_calls if record.name != "load_skill"]
        text = _planner.summarise(state.plan or _planner.Plan(), results, state.planner_context())
        return ModelResponse(parts=[TextPart(text)], model_name="offline-planner")

    def function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return decide(messages)

    async def stream_function(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = decide(messages)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            yield {
                i: DeltaToolCall(name=c.tool_name, json_args=json.dumps(c.args), tool_call_id=c.tool_call_id)
                for i, c in enumerate(calls)
            }
            return
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        words = text.split(" ")
        for i, word in enumerate(words):
            yield word + (" " if i < len(words) - 1 else "")

    return FunctionModel(function, stream_function=stream_function, model_name="offline-planner")


def _skill_plan(state: RunState, prompt: str, ctx: _planner.PlannerContext) -> tuple[_planner.Plan, list[str]]:
    """The offline planner with skills: the plan for ``prompt`` and the skills to load first.

    A skill whose ``when`` fits the request is loaded (once per conversation). While a fitting or
    loaded skill lists ``confirm_before``, a plan that would change one of those parameters (a set,
    a seek, a reset that moves one) is not run: the planner asks (the skill's ``confirm_question``,
    then what it would do) and keeps the plan. A "yes" next runs it, if the target and the values are
    still those it was made for; a reply that asks for nothing (the student's prediction) keeps it
    waiting; a new request drops it.
    """
    skills = state.skills()
    loads = [s.name for s in skills if s.fits(prompt) and s.name not in state.ever_loaded]
    pending, state.pending = state.pending, None
    if pending is not None and _planner.is_yes(prompt):
        plan, target, values = pending
        if target == ctx.manifest.id and values == dict(ctx.values):
            return plan, loads
        return _planner.Plan(
            refusal=f"{_planner.LABEL}: The target or its values changed since I asked, so I did not make that "
            "change; ask again."
        ), loads
    plan = _planner.plan(prompt, ctx)
    if pending is not None and plan.refusal is not None:  # an answer to the question, not a request
        state.pending = pending
        waiting = _planner.describe_calls(pending[0], ctx)
        return _planner.Plan(question=f'{_planner.LABEL}: Thanks. Say "yes" and I will {waiting}.'), loads
    ruling = [s for s in skills if s.name in loads or s.name in state.ever_loaded]
    for skill in ruling:
        guarded = confirm_paths(skill, ctx.manifest)
        touched = [p for p in _moved_paths(state, plan, ctx) if p in guarded]
        if touched:
            state.pending = (plan, ctx.manifest.id, dict(ctx.values))
            question = f"{skill.confirm_question} " if skill.confirm_question else ""
            changes = _planner.describe_calls(plan, ctx)
            names = _planner.join_words(sorted(set(touched)))
            ask = f'The guide "{skill.name}" asks me to check with you before changing {names}'
            text = f'{_planner.LABEL}: {question}{ask}: shall I {changes}? Say "yes" to go ahead.'
            return _planner.Plan(question=text), loads
    return plan, loads


def _moved_paths(state: RunState, plan: _planner.Plan, ctx: _planner.PlannerContext) -> list[str]:
    """The parameter paths a plan's calls would change: what a set or a seek names, and what a reset
    moves back to its default."""
    from ._approval import touched_paths

    paths = [p for call in plan.calls for p in touched_paths(state.sim, call.tool, call.args)]
    if any(call.tool == "reset" for call in plan.calls):
        defaults = ctx.manifest.defaults()
        paths += [path for path, value in ctx.values.items() if defaults.get(path) != value]
    return paths


def _last_prompt(messages: list[ModelMessage]) -> tuple[str, bool]:
    """The latest user prompt, and whether tool results for it have come back since."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    return str(part.content), i != len(messages) - 1
    return "", False


# -- one run's state --------------------------------------------------------------------------


@dataclass
class ToolCallRecord:
    """One tool call of a run: what the model asked, and what came back."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool


@dataclass
class RunState:
    sim: TargetWidget
    emit: Callable[[AgentEvent], None]
    loop_limits: LoopLimits
    max_retries: int
    backoff: tuple[float, ...] = _retry.BACKOFF_S
    store: dict[str, str] = field(default_factory=dict)
    plan: _planner.Plan | None = None
    truncated_ids: set[str] = field(default_factory=set)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    loops: LoopDetector = field(default_factory=LoopDetector)
    skip_wait: asyncio.Event | None = None
    loop: asyncio.AbstractEventLoop | None = None
    stop_reason: str | None = None
    retries_this_step: int = 0
    chain: StickyChain | None = None
    compactions: int = 0
    window: int = DEFAULT_WINDOW
    request: str = ""  # the text this run answers
    source: CallSource | None = None  # who asked: the audit's source of every call this run makes
    book: SkillBook = field(default_factory=SkillBook)
    loaded_skills: list[str] = field(default_factory=list)  # loaded in this run, in order
    ever_loaded: set[str] = field(default_factory=set)  # loaded in this conversation (the history has them)
    # a plan the offline planner asked the user to confirm, with the target and values it was made for
    pending: tuple[_planner.Plan, str, dict[str, Any]] | None = None

    def skills(self) -> tuple[Skill, ...]:
        """The skills of the active target (the given ones first; one that does not fit it is left out)."""
        return tuple(self.book.usable(self.sim.target))

    def scope(self) -> Scope:
        return Scope(self.sim.schema, _target_ids(self.sim), self.skills())

    def planner_context(self) -> _planner.PlannerContext:
        from ..manifest.registry import list_targets

        targets = [(t.id, t.title) for t in list_targets(*self.sim.targets_dirs)]
        return _planner.PlannerContext(self.sim.schema, dict(self.sim.values), targets)


# -- tools ------------------------------------------------------------------------------------


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
        state.loops.record(name, tool_args, bool(payload.get("ok")), payload)
        return self._finish(call_id, name, tool_args, payload)

    def _finish(self, call_id: str, name: str, args: dict[str, Any], payload: dict[str, Any]) -> Any:
        assert self.state is not None
        ok = bool(payload.get("ok"))
        self.state.tool_calls.append(ToolCallRecord(name, args, payload, ok))
        self.state.emit(ToolCallFinished(call_id, name, args, payload, ok, call_label(name, args)))
        if not ok:
            raise ToolFailed(failure_text(payload))
        return payload


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


def _target_ids(sim: TargetWidget) -> list[str]:
    from ..manifest.registry import list_targets

    return list_targets(*sim.targets_dirs).ids()


# -- guards -----------------------------------------------------------------------------------


class Guards(AbstractCapability[Any]):
    """Retry with backoff, fallback, truncation and compaction, around every model request."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.state.retries_this_step = 0
        compacted = compact(ctx.messages, self.state.window)
        if compacted is not None:
            ctx.messages[:] = compacted
            request_context.messages[:] = compacted
            self.state.compactions += 1
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if response.finish_reason == "length":
            for part in calls:
                self.state.truncated_ids.add(part.tool_call_id)
                if isinstance(part.args, str):  # cut-off JSON: make it parse, so the call reaches our refusal
                    try:
                        json.loads(part.args)
                    except ValueError:
                        part.args = {}
        known = set(BY_NAME)
        for part in calls:
            if part.tool_name not in known:
                verdict = self.state.loops.check_unknown(part.tool_name, known)
                if verdict.stop:
                    self.state.stop_reason = verdict.message
                    raise RunStopped(verdict.message)
        return response

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        state = self.state
        chain = state.chain
        if not isinstance(error, ModelAPIError):
            raise error
        status = error.status_code if isinstance(error, ModelHTTPError) else None
        model = model_label(chain.wrapped) if chain else "model"
        hopeless = isinstance(error, ModelQuotaExceededError | ModelAuthenticationError) or status in (401, 403)
        if not hopeless and _retry.is_retryable(status) and state.retries_this_step < state.max_retries:
            headers = getattr(error, "headers", None) or {}
            delay, source = _retry.retry_delay(
                state.retries_this_step, headers, getattr(error, "body", None), state.backoff
            )
            hint = getattr(error, "retry_after", None)
            if source == "backoff" and hint is not None:  # pydantic-ai parsed a hint we did not see
                delay, source = min(float(hint), _retry.MAX_WAIT_S), "provider"
            state.retries_this_step += 1
            if state.skip_wait is not None:
                state.skip_wait.clear()  # before the event, so a skip asked for while it is shown counts
            state.emit(RetryWait(delay, source, state.retries_this_step, model, status))
            await self._wait(delay)
            raise RetryModelRequest()
        if chain is not None and chain.has_next():
            before, after = chain.advance()
            state.retries_this_step = 0
            reason = f"{type(error).__name__}" + (f" (HTTP {status})" if status else "")
            state.emit(Fallback(before, after, reason))
            raise RetryModelRequest()
        raise error

    async def _wait(self, seconds: float) -> None:
        skip = self.state.skip_wait
        if skip is None:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(skip.wait(), seconds)


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """A rough count (4 characters a token) — enough to pick a compaction tier."""
    total = 0
    for message in messages:
        for part in getattr(message, "parts", []):
            content = getattr(part, "content", None) or getattr(part, "args", None) or ""
            total += len(content if isinstance(content, str) else json.dumps(content, default=str))
    return total // 4


def compact(messages: list[ModelMessage], window: int, keep_turns: int = 3) -> list[ModelMessage] | None:
    """Fold everything before the last ``keep_turns`` user turns into one summary, past 70% of the window.

    The system prompt and target schema are instructions, re-sent on every request, so they survive.
    Cutting only at user-turn boundaries keeps every tool call with its result.
    """
    if estimate_tokens(messages) < 0.7 * window:
        return None
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    if len(starts) <= keep_turns:
        return None
    cut = starts[-keep_turns]
    lines = []
    for message in messages[:cut]:
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart):
                lines.append(f"user: {str(part.content)[:200]}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"called {part.tool_name} {json.dumps(part.args, default=str)[:200]}")
            elif isinstance(part, TextPart):
                lines.append(f"assistant: {part.content[:200]}")
    summary = "[Summary of the earlier conversation, compacted to save context]\n" + "\n".join(lines[-60:])
    return [ModelRequest(parts=[UserPromptPart(summary)]), *messages[cut:]]


def repair_history(messages: list[ModelMessage], reason: str) -> list[ModelMessage]:
    """Give every tool call a result: calls left without one (cancelled, timed out, crashed) get an explicit error."""
    answered = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    repaired: list[ModelMessage] = []
    for message in messages:
        repaired.append(message)
        if isinstance(message, ModelResponse):
            missing = [p for p in message.parts if isinstance(p, ToolCallPart) and p.tool_call_id not in answered]
            if missing:
                content = json.dumps(ToolResult.failure("cancelled", reason).for_model())
                repaired.append(
                    ModelRequest(
                        parts=[ToolReturnPart(p.tool_name, content, tool_call_id=p.tool_call_id) for p in missing]
                    )
                )
    # Two requests in a row (our repair followed by the next turn's request) are fine for every provider
    # we support; pydantic-ai merges them when it maps messages.
    return repaired


# -- running ----------------------------------------------------------------------------------


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
    ) -> None:
        self.sim = sim
        self.stream = stream
        self.loop_limits = loop_limits or LoopLimits()
        self.state = RunState(sim, lambda e: None, self.loop_limits, max_retries, tuple(backoff))
        self.state.book = SkillBook(skills)
        self.state.book.for_target(sim.target)  # a malformed skill of the active target fails here, naming its file
        # base_url and api_key belong to the primary; fallbacks bring their own (objects, or keys from the env)
        models = [build_model(model, base_url=base_url, api_key=api_key, state=self.state)]
        models += [build_model(m, state=self.state) for m in fallback]
        self.chain = StickyChain(models)
        self.state.chain = self.chain
        self.state.window = context_window or _window_for(model_label(models[0]))
        self.extra_instructions = instructions
        self.usage_limits = UsageLimits(**(usage_limits or {"request_limit": 40}))  # type: ignore[arg-type]
        self.history: list[ModelMessage] = []
        self.token: CancellationToken | None = None
        self.agent = PaiAgent(
            self.chain,
            instructions=self._instructions,
            toolsets=[toolset(self.state)],
            capabilities=[Guards(self.state)],
            model_settings=ModelSettings(max_retries=0) if not isinstance(models[0], FunctionModel) else None,
            retries=3,
        )

    @property
    def model_name(self) -> str:
        return model_label(self.chain.wrapped)

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
        self, text: str, emit: Callable[[AgentEvent], None], source: CallSource | None = None
    ) -> tuple[RunOutcome, list[ToolCallRecord]]:
        state = self.state
        state.emit = emit
        state.request = text
        state.source = source if source is not None else make_source(f"agent: {text}")
        state.tool_calls = []
        state.loaded_skills = []
        state.truncated_ids = set()
        state.stop_reason = None
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
        try:
            if self.streams():
                async with self.agent.run_stream_events(text, **options) as events:
                    handle = events
                    async for event in events:
                        if (
                            isinstance(event, PartStartEvent)
                            and isinstance(event.part, TextPart)
                            and event.part.content
                        ):
                            emit(TextDelta(event.part.content))
                        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                            emit(TextDelta(event.delta.content_delta))
                        elif isinstance(event, AgentRunResultEvent):
                            output = str(event.result.output)
            else:
                async with self.agent.iter(text, **options) as run:
                    handle = run
                    async for _node in run:
                        pass
                    output = str(run.result.output) if run.result is not None else ""
                    emit(TextDelta(output))
        except RunCancelled as exc:
            stopped = "cancelled"
            if hasattr(exc, "all_messages"):
                messages = list(exc.all_messages())
                handle = None
        except RunStopped as exc:
            stopped = str(exc)
        except UsageLimitExceeded as exc:
            stopped = f"usage limit reached: {exc}"
        except UnexpectedModelBehavior as exc:
            stopped = f"the model misbehaved: {exc}"
        except ModelAPIError as exc:
            stopped = f"the model failed: {type(exc).__name__}: {exc}"
        except BaseExceptionGroup as group:  # FallbackExceptionGroup and friends
            stopped = f"every model failed: {group}"
        if handle is not None:
            with contextlib.suppress(Exception):
                messages = list(handle.all_messages())
            with contextlib.suppress(Exception):
                usage = _usage(handle.usage)
        if stopped is not None:
            reason = "cancelled" if stopped == "cancelled" else f"the run stopped: {stopped}"
            self.history = repair_history(messages, reason)
            if not output:
                output = f"Stopped: {stopped.rstrip('.')}." if stopped != "cancelled" else "Cancelled."
        else:
            self.history = messages
        state.ever_loaded.update(state.loaded_skills)  # their bodies are in the history now
        return RunOutcome(output, self.history, usage, stopped), list(state.tool_calls)

    def forget(self) -> None:
        """Start the conversation afresh: no history, so no skill counts as loaded, nothing pending."""
        self.history = []
        self.state.ever_loaded.clear()
        self.state.pending = None


def _usage(usage: Any) -> dict[str, int]:
    return {
        "requests": int(getattr(usage, "requests", 0) or 0),
        "input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
    }


def _window_for(label: str) -> int:
    for prefix, window in CONTEXT_WINDOWS.items():
        if prefix in label:
            return window
    return DEFAULT_WINDOW
