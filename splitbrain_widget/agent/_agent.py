"""Agent: say what you want, and a model steers the target through the browser-executed tools."""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import _lesson_log, _twins
from ..core._audit import call_source, current_source
from ..core._lesson import LessonRefused, current_lesson, require
from ..core._seam import blocking_wait_hears, cannot_hear_in_cell
from . import _honesty, _skills
from ._budget import DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_TOKENS, DEFAULT_REQUEST_TIMEOUT_S, DEFAULT_RUN_TIMEOUT_S
from ._events import AgentEvent, Done
from ._loops import LoopLimits
from ._skills import Skill

if TYPE_CHECKING:
    from ..widget import TargetWidget
    from ._run_state import ToolCallRecord
    from ._runtime import Runtime

JOIN_SLICE_S = 0.1
_IDS = itertools.count(1)


@dataclass
class Usage:
    """What a run (or every run so far) cost: model requests, tokens, and tool calls (browser ones included)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.tool_calls += other.tool_calls


@dataclass
class AgentResult:
    """One answer: the final ``text``, every tool call with its result, the usage, and why it stopped early."""

    text: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    stopped: str | None = None
    skills: list[str] = field(default_factory=list)  # the skills this answer loaded, in order
    no_change: bool = False  # the request asked for a change and no change tool call succeeded

    @property
    def ok(self) -> bool:
        return self.stopped is None

    def __str__(self) -> str:
        return self.text


def _usage_of(usage: dict[str, int], calls: Sequence[Any]) -> Usage:
    return Usage(
        requests=usage.get("requests", 0),
        input_tokens=usage.get("input_tokens", 0),
        output_tokens=usage.get("output_tokens", 0),
        tool_calls=len(calls),
    )


class Agent:
    """An agent that steers a :class:`~splitbrain_widget.TargetWidget` in plain language.

    Args:
        sim: the widget to steer.
        model: ``"offline"`` (the built-in deterministic planner), ``"openai:<name>"``,
            ``"anthropic:<name>"``, ``"google:<name>"``, ``"ollama:<name>"``, ``"local"`` (the first
            local OpenAI-compatible server found), or a pydantic-ai model object. Default: the
            ``SPLITBRAIN_MODEL`` environment variable, else ``"offline"``; an API key in the
            environment alone never switches to a paid model.
        fallback: further models, tried in order when one fails (429, quota, 5xx, auth); once the
            run moved to a fallback it stays there.
        base_url, api_key: point an OpenAI-compatible model at any server.
        max_retries: retries per request on 429 / 5xx.
        backoff: the waits between those retries, in seconds, when the provider names none
            (Retry-After, retry-after-ms and Google's RetryInfo take precedence).
        usage_limits: pydantic-ai usage limits per run (default ``{"request_limit": 40}``).
        loop_limits: the loop detector's thresholds.
        context_window: tokens a request may fill (default: what a local server says, else by model
            name); compaction counts the instructions and tools with the history, from 70% of it.
        stream: request streamed responses (text arrives as deltas); False asks for whole responses.
        skills: guides the agent may load when it needs them (``load_skill``): a folder of ``*.md``
            skills, a file, a :class:`Skill`, Markdown text with a front matter, or a list of those;
            the active target's own skills (``<id>.skills/``) come after these. The system prompt
            lists them, never their bodies (docs/writing-targets.md, "Skills").
        max_tokens: the output cap of each model request (1024: answers are a line or two); an
            answer that reaches it ends with ``stopped="length"`` and says it was cut off.
        request_timeout: seconds one model request may take, streamed to its last chunk (120).
        idle_timeout: seconds to wait for a response's next chunk, or its first byte (60).
        run_timeout: seconds one whole answer may take, tool calls and retry waits included (300);
            past it the answer ends with ``stopped="deadline: ..."`` and says what was done.
            None lifts any of these bounds.
        vision: offer the ``snapshot`` tool, which shows the model the page's picture (a model that
            takes images: GPT-4o, Claude, Gemini). Off by default: the offline planner and text-only
            local models take no images.

    Every call an answer makes is audited with the request as its source (``sim.audit[-1].source``
    is ``"agent: <text>"``, or ``"chat: <message>"`` from the chat panel) and this agent's
    :attr:`id` (``agent_id``), which is how :meth:`to_code` finds this agent's changes.
    """

    def __init__(
        self,
        sim: TargetWidget,
        model: Any = None,
        *,
        fallback: Sequence[Any] = (),
        base_url: str | None = None,
        api_key: str | None = None,
        max_retries: int = 5,
        backoff: Sequence[float] = (3, 5, 10, 15, 30),
        usage_limits: dict[str, int] | None = None,
        loop_limits: LoopLimits | None = None,
        instructions: str | None = None,
        context_window: int | None = None,
        stream: bool = True,
        skills: str | Path | Skill | Iterable[str | Path | Skill] | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT_S,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT_S,
        run_timeout: float | None = DEFAULT_RUN_TIMEOUT_S,
        vision: bool = False,
    ) -> None:
        from ._budget import Bounds
        from ._runtime import Runtime  # pydantic-ai is imported here, not with the package

        for name, bound in (
            ("max_tokens", max_tokens),
            ("request_timeout", request_timeout),
            ("idle_timeout", idle_timeout),
            ("run_timeout", run_timeout),
        ):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float) or bound <= 0):
                raise ValueError(f"Agent({name}={bound!r}): expected a positive number, or None for no bound")

        self.sim = sim
        chosen = model if model is not None else (os.environ.get("SPLITBRAIN_MODEL") or "offline")
        lesson = current_lesson()
        if lesson is not None:  # before any model is set up: agents at all, the models, an answer's bounds
            if not lesson.policy.agents.enabled:
                raise LessonRefused(lesson.rule("turns agents off"))
            for candidate in (chosen, *fallback):
                refusal = lesson.model_refusal(candidate, base_url or os.environ.get("OPENAI_BASE_URL"))
                if refusal is not None:
                    raise LessonRefused(refusal)
            requests, run_timeout = lesson.bounded((usage_limits or {}).get("request_limit", 40), run_timeout)
            usage_limits = {**(usage_limits or {}), "request_limit": requests or 40}
        self._runtime: Runtime = Runtime(
            sim,
            chosen,
            fallback=fallback,
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            backoff=tuple(backoff),
            loop_limits=loop_limits,
            usage_limits=usage_limits,
            instructions=instructions,
            context_window=context_window,
            stream=stream,
            skills=_skills.given(skills),
            bounds=Bounds(
                int(max_tokens) if max_tokens is not None else None, request_timeout, idle_timeout, run_timeout
            ),
            vision=bool(vision),
        )
        self.usage = Usage()
        self._lock = threading.Lock()
        self.id = f"agent-{next(_IDS)}"  # tags the audit entries of this agent's calls
        self._first_run: float | None = None  # when this agent first answered (time.time())

    @property
    def model(self) -> str:
        """The model currently answering (a fallback once the primary failed)."""
        return self._runtime.model_name

    @property
    def history(self) -> list[Any]:
        """The conversation so far (pydantic-ai messages); every tool call in it has a result."""
        return list(self._runtime.history)

    def clear_history(self) -> None:
        self._runtime.forget()

    @property
    def skills(self) -> list[Skill]:
        """The skills the agent may load for the active target (given ones first, then the target's)."""
        return list(self._runtime.state.skills())

    # -- asking ---------------------------------------------------------------------------------

    async def aask(self, text: str, *, on_event: Callable[[AgentEvent], None] | None = None) -> AgentResult:
        """Answer ``text``, steering the target as needed; awaitable. A lesson that turns agents off
        (since this agent was made) refuses it before anything reaches a model."""
        require(lambda policy: policy.agents.enabled, "turns agents off")
        before = _lesson_log.observed(self.sim.state, self.sim.schema.parameters)
        emit = on_event or (lambda event: None)
        if self._first_run is None:
            self._first_run = time.time()
        ambient = current_source()  # the chat panel's "chat: <message>", else this request
        tag = ambient.text if ambient is not None and ambient.text else f"agent: {text}"
        with call_source(tag, agent_id=self.id) as source:
            started = time.monotonic()
            outcome, calls = await self._runtime.run(text, emit, source)
            usage = _usage_of(outcome.usage, calls)
            loaded = list(self._runtime.state.loaded_skills)
            # a language model's answer is judged by what the page applied; the offline planner's replies
            # already say exactly what it did and did not do
            judged = self._runtime.nudges()
            wanted = judged and _honesty.asks_for_change(text, self.sim)
            limit = self._runtime.bounds.run_timeout
            left = None if limit is None else limit - (time.monotonic() - started)  # one deadline for both runs
            if wanted and outcome.stopped is None and not _honesty.made_change(calls) and (left is None or left > 0):
                # one bounded nudge: call the tool, or say it cannot be done (what it claims never counts)
                nudged, more = await self._runtime.run(_honesty.NUDGE, emit, source, deadline=left)
                calls = [*calls, *more]
                usage.add(_usage_of(nudged.usage, more))
                if nudged.stopped is None:  # a nudge that failed leaves the first answer (still no change)
                    outcome = nudged
                loaded += [s for s in self._runtime.state.loaded_skills if s not in loaded]
        self.usage.add(usage)
        answer = outcome.text
        if judged and _honesty.echoed(answer):  # "<tool_response>{...}" is no answer: say what the results say
            answer = _honesty.from_results(calls, self.sim)
        no_change = wanted and not _honesty.made_change(calls)
        if no_change and _honesty.NO_CHANGE_NOTE not in answer:
            answer = f"{answer.rstrip()} ({_honesty.NO_CHANGE_NOTE})".lstrip()
        result = AgentResult(answer, calls, usage, self.model, outcome.stopped, loaded, no_change)
        _lesson_log.write(
            "chat" if tag.startswith("chat:") else "agent",
            tag,
            text,
            [{"tool": c.name, "arguments": c.arguments, "result": c.result} for c in calls],
            widget=_lesson_log.model_id_of(self.sim),
            before=before,
            after=_lesson_log.observed(self.sim.state, self.sim.schema.parameters),
            answer=answer[: _lesson_log.MAX_TEXT_CHARS],
            model=self.model,
            tokens={"requests": usage.requests, "input": usage.input_tokens, "output": usage.output_tokens},
        )
        emit(Done(result))
        return result

    def ask(self, text: str, *, on_event: Callable[[AgentEvent], None] | None = None) -> AgentResult:
        """Blocking :meth:`aask`: works in a plain notebook cell while the tools run in the browser.

        The run happens on a worker thread with its own event loop. A KeyboardInterrupt (the
        notebook's Stop) cancels it: pending browser calls close as ``cancelled`` and the history
        stays valid; the interrupt is then re-raised. Where a cell that blocks cannot hear the page
        (ipykernel < 7, marimo) it raises RuntimeError at once, naming what to use instead.
        """
        if not blocking_wait_hears(self.sim):
            raise RuntimeError(cannot_hear_in_cell("agent.ask()", "`await agent.aask(...)`"))
        return _twins.blocking(
            lambda: self.aask(text, on_event=on_event), name="splitbrain-agent", on_interrupt=self.cancel
        )

    def events(self, text: str) -> Iterator[AgentEvent]:
        """Run ``text`` and yield events as they happen (text deltas, tool calls, retry waits, fallback, done)."""
        if not blocking_wait_hears(self.sim):
            raise RuntimeError(cannot_hear_in_cell("agent.events()", "`async for event in agent.aevents(...)`"))
        events: queue.Queue[AgentEvent | BaseException | None] = queue.Queue()

        def work() -> None:
            try:
                self.ask(text, on_event=events.put)
            except BaseException as exc:
                events.put(exc)
            finally:
                events.put(None)

        threading.Thread(target=work, name="splitbrain-agent-events", daemon=True).start()
        while True:
            try:
                item = events.get(timeout=JOIN_SLICE_S)
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                self.cancel()
                raise
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def aevents(self, text: str) -> AsyncIterator[AgentEvent]:
        """The async twin of :meth:`events`."""
        events: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        task = asyncio.ensure_future(self.aask(text, on_event=events.put_nowait))
        task.add_done_callback(lambda _: events.put_nowait(None))
        while True:
            item = await events.get()
            if item is None:
                break
            yield item
        await task

    # The names of 0.1, kept as aliases: "stream" is a widget's value coalescing (sim.stream).
    stream = events
    astream = aevents

    def to_code(self, var: str = "sim") -> str:
        """The changes this agent's answers made, as a Python cell (see ``sim.audit.to_code``): the
        entries of ``sim.audit`` tagged with this agent's :attr:`id`, with their requests as comments."""
        from ..core._to_code import to_code

        entries, dropped = self.sim.audit.snapshot()
        mine = [e for e in entries if e.agent_id == self.id]
        # Calls dropped from the log could be this agent's only if it answered before the oldest one kept.
        ran_before = self._first_run is not None and (not entries or self._first_run < entries[0].time)
        nothing = "# nothing to reproduce: this agent changed no value"
        return to_code(mine, var=var, dropped=dropped if ran_before else 0, nothing=nothing)

    def cancel(self) -> None:
        """Stop the running answer; pending browser calls close as ``cancelled``."""
        self._runtime.cancel()

    def skip_wait(self) -> None:
        """End a retry wait early (the next attempt starts now)."""
        self._runtime.skip_wait()

    def __repr__(self) -> str:
        return f"<Agent model={self.model!r} target={self.sim.target_id!r} requests={self.usage.requests}>"
