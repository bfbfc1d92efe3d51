"""The agent's guards against local fake providers speaking the real wire formats.

Every test talks HTTP to a :class:`~tests.fake_providers.FakeProvider` on 127.0.0.1: OpenAI chat
completions (JSON and SSE), Anthropic messages (JSON and SSE) and Gemini generateContent (JSON and
SSE). The agent always asks for a streamed response; the ``*-json`` variants put a wrapper in front
that sends plain requests instead, so both wire paths of each provider are exercised.

A fake view (tests/fake_view.py) is attached: ``set_parameters`` reaches its page, which applies
the values and reports them, and changes ``sim.values``, which is what the tests check.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, RetryPromptPart, ToolCallPart, ToolReturnPart

import splitbrain_widget as sb
from splitbrain_widget.agent import (
    AgentResult,
    Fallback,
    RetryWait,
    ToolCallFinished,
    ToolCallStarted,
    _model_setup,
)
from splitbrain_widget.agent._model_setup import find_local_server
from splitbrain_widget.agent._models import ModelSetupError
from splitbrain_widget.agent._toolsets import TRUNCATED_MESSAGE

from .fake_providers import (
    Call,
    FakeProvider,
    HttpError,
    Turn,
    call,
    google_error,
    google_openai_compat_error,
    make_agent,
    model_object,
    say,
)
from .fake_view import FakeView

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
SPEED_12 = {"values": {"settings.speed": 12}}
DEFAULT_SPEED = 8.0
LABELS = {"openai": "openai:gpt-test", "anthropic": "anthropic:claude-test", "gemini": "google:gemini-test"}

# (provider, streamed): every provider through both of its wire paths.
WIRES = [
    pytest.param("openai", False, id="openai-json"),
    pytest.param("openai", True, id="openai-sse"),
    pytest.param("anthropic", False, id="anthropic-json"),
    pytest.param("anthropic", True, id="anthropic-sse"),
    pytest.param("gemini", False, id="gemini-json"),
    pytest.param("gemini", True, id="gemini-sse"),
]
# Where a tool call's arguments travel as a JSON string, so a cut-off one can be sent as such. A
# non-streamed Anthropic message and every Gemini response carry the arguments as a JSON object.
TRUNCATABLE = {("openai", False), ("openai", True), ("anthropic", True)}


@pytest.fixture
def sim() -> sb.TargetWidget:
    """A widget with a fake view (tests/fake_view.py) whose page applies what it is sent."""
    widget = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(widget)
    return widget


class Recorder:
    """``on_event`` for ``agent.ask``: keeps every event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def ask(
    agent: Any, text: str = "set the speed to 12 m/s", timeout: float = 20, recorder: Recorder | None = None
) -> tuple[AgentResult, Recorder]:
    """``agent.ask`` with a recorder, failing (not hanging) if the run does not end in ``timeout`` s."""
    recorder = recorder or Recorder()
    box: list[Any] = []

    def work() -> None:
        try:
            box.append(agent.ask(text, on_event=recorder))
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        agent.cancel()
        pytest.fail(f"agent.ask did not return within {timeout} s")
    outcome = box[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome, recorder


def assert_history_valid(agent: Any) -> None:
    """Every tool call in the agent's history has exactly one answer: a result, or a retry prompt for it."""
    calls = [
        p.tool_call_id
        for m in agent.history
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    ]
    answers = [
        p.tool_call_id
        for m in agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart) or (isinstance(p, RetryPromptPart) and p.tool_name is not None)
    ]
    assert sorted(calls) == sorted(answers), (calls, answers)


# -- a plain tool round -----------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_tool_round(fake, sim, provider, stream):
    server = fake(provider).script(call("set_parameters", SPEED_12), say("The speed is now 12 m/s."))
    agent = make_agent(sim, server, stream=stream)

    result, events = ask(agent)

    assert result.stopped is None
    assert result.text == "The speed is now 12 m/s."
    assert result.model == LABELS[provider] == agent.model
    assert sim.values["settings.speed"] == 12
    assert [c.name for c in result.tool_calls] == ["set_parameters"]
    assert result.tool_calls[0].arguments == SPEED_12 and result.tool_calls[0].ok
    assert result.tool_calls[0].result["changed"]["settings.speed"] == {"value": 12, "unit": "m/s"}
    assert (result.usage.requests, result.usage.tool_calls) == (2, 1)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (22, 14)
    assert agent.usage.requests == 2
    assert [type(e) for e in events.of(ToolCallStarted | ToolCallFinished)] == [ToolCallStarted, ToolCallFinished]

    # the wire: streamed or not as asked, the instructions carry the target schema with units,
    # the tool schema is the manifest's, and the tool result went back to the model
    assert [r.streamed for r in server.model_requests] == [stream, stream]
    system = server.system_text(0)
    assert "settings.speed" in system and "m/s" in system
    speed = server.tools(0)["set_parameters"]["properties"]["values"]["properties"]["settings.speed"]
    assert speed["type"] == "number" and speed["maximum"] == 50
    assert {"fetch_state", "get_parameters", "reset", "list_targets", "select_target"} <= set(server.tools(0))
    (told,) = server.tool_results(1)
    assert "settings.speed" in told and "m/s" in told
    assert server.unscripted == 0
    assert_history_valid(agent)


# -- retries ----------------------------------------------------------------------------------

RATE_LIMITS = [
    pytest.param("openai", False, HttpError(429, headers={"Retry-After": "1"}), 1.0, "Retry-After", id="openai-json"),
    pytest.param("openai", True, HttpError(429, headers={"Retry-After": "1"}), 1.0, "Retry-After", id="openai-sse"),
    pytest.param(
        "openai", True, HttpError(429, headers={"retry-after-ms": "300"}), 0.3, "retry-after-ms", id="openai-sse-ms"
    ),
    pytest.param(
        "openai",
        False,
        HttpError(429, body=google_openai_compat_error(429, "1s")),
        1.0,
        "RetryInfo",
        id="gemini-openai-compat-json",
    ),
    pytest.param(
        "openai",
        True,
        HttpError(429, body=google_openai_compat_error(429, "1s")),
        1.0,
        "RetryInfo",
        id="gemini-openai-compat-sse",
    ),
    pytest.param(
        "anthropic", False, HttpError(429, headers={"retry-after": "1"}), 1.0, "Retry-After", id="anthropic-json"
    ),
    pytest.param(
        "anthropic", True, HttpError(429, headers={"retry-after": "1"}), 1.0, "Retry-After", id="anthropic-sse"
    ),
    pytest.param("gemini", False, HttpError(429, body=google_error(429, "1s")), 1.0, "RetryInfo", id="gemini-json"),
    pytest.param("gemini", True, HttpError(429, body=google_error(429, "1s")), 1.0, "RetryInfo", id="gemini-sse"),
]


@pytest.mark.parametrize(("provider", "stream", "error", "seconds", "source"), RATE_LIMITS)
def test_rate_limit_waits_as_told_then_succeeds(fake, sim, provider, stream, error, seconds, source):
    server = fake(provider).script(error, call("set_parameters", SPEED_12), say("Done."))
    agent = make_agent(sim, server, stream=stream)

    result, events = ask(agent)

    (wait,) = events.of(RetryWait)
    assert (wait.seconds, wait.source, wait.status, wait.attempt) == (pytest.approx(seconds), source, 429, 1)
    assert wait.model == LABELS[provider]
    # and it really waited: the retry reached the provider no sooner than that after the 429
    assert server.gaps()[0] >= seconds
    assert events.events.index(wait) < events.events.index(events.of(ToolCallStarted)[0])
    assert result.stopped is None and result.text == "Done."
    assert sim.values["settings.speed"] == 12
    assert len(server.model_requests) == 3
    assert server.model_requests[1].body == server.model_requests[0].body  # the same request, sent again
    assert result.usage.requests == 2  # the failed attempt is not a model response
    assert not events.of(Fallback)


@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_503_then_success(fake, sim, provider, stream):
    server = fake(provider).script(HttpError(503), call("set_parameters", SPEED_12), say("Done."))
    agent = make_agent(sim, server, stream=stream, backoff=(0.25, 0.5))

    result, events = ask(agent)

    (wait,) = events.of(RetryWait)
    assert (wait.seconds, wait.source, wait.status, wait.attempt) == (0.25, "backoff", 503, 1)
    assert server.gaps()[0] >= 0.25  # the wait happened before the retry
    assert result.stopped is None and result.text == "Done."
    assert sim.values["settings.speed"] == 12
    assert len(server.model_requests) == 3


def test_backoff_schedule_then_give_up(fake, sim):
    """Waits follow the schedule (its last step repeating); past max_retries the run ends with a reason."""
    server = fake("openai").script(repeat=HttpError(500))
    agent = make_agent(sim, server, backoff=(0.1, 0.2, 0.3), max_retries=4)

    result, events = ask(agent)

    waits = events.of(RetryWait)
    assert [(w.seconds, w.attempt, w.source, w.status) for w in waits] == [
        (0.1, 1, "backoff", 500),
        (0.2, 2, "backoff", 500),
        (0.3, 3, "backoff", 500),
        (0.3, 4, "backoff", 500),
    ]
    assert len(server.model_requests) == 5
    # each announced wait really passed before the next attempt reached the provider
    gaps = server.gaps()
    assert len(gaps) == 4 and all(gap >= w.seconds for gap, w in zip(gaps, waits, strict=True)), gaps
    assert result.stopped and "500" in result.stopped
    assert result.text.startswith("Stopped:")
    assert sim.values["settings.speed"] == DEFAULT_SPEED


class OnWait(Recorder):
    """A recorder that calls ``action`` from another thread ``after`` seconds past each RetryWait."""

    def __init__(self, action: Callable[[], None], after: float) -> None:
        super().__init__()
        self.action, self.after = action, after
        self.acted_at: list[float] = []

    def __call__(self, event: Any) -> None:
        super().__call__(event)
        if isinstance(event, RetryWait):
            threading.Timer(self.after, self._act).start()

    def _act(self) -> None:
        self.acted_at.append(time.monotonic())
        self.action()


# A provider-given wait far longer than ask()'s 20 s limit: the run can only end in time if it is cut short.
LONG_WAIT = {"Retry-After": "100"}


def test_cancel_during_a_retry_wait(fake, sim):
    """A long provider-given wait is cancellable: the run ends, as cancelled, without the retry."""
    server = fake("openai").script(HttpError(429, headers=LONG_WAIT), say("never"))
    agent = make_agent(sim, server)
    recorder = OnWait(agent.cancel, after=0.1)

    result, _ = ask(agent, "hello", recorder=recorder)

    assert [w.seconds for w in recorder.of(RetryWait)] == [100.0]
    assert result.stopped == "cancelled"
    assert len(recorder.acted_at) == 1
    assert len(server.model_requests) == 1
    assert_history_valid(agent)


def test_skip_wait_from_another_thread_ends_the_wait(fake, sim):
    server = fake("openai").script(HttpError(429, headers=LONG_WAIT), say("Done."))
    agent = make_agent(sim, server)
    recorder = OnWait(agent.skip_wait, after=0.3)

    result, _ = ask(agent, "hello", recorder=recorder)

    assert result.text == "Done."
    assert [w.seconds for w in recorder.of(RetryWait)] == [100.0]
    # The agent waited until the skip (not less: the retry came after it), and not the 100 s (ask's limit).
    (skipped_at,) = recorder.acted_at
    retry = server.model_requests[1]
    assert retry.arrived >= skipped_at
    assert server.gaps()[0] >= 0.3


# -- fallback ---------------------------------------------------------------------------------

NEXT_PROVIDER = {"openai": "anthropic", "anthropic": "gemini", "gemini": "openai"}


def _dead_primary(fake, sim, provider: str, stream: bool, status: int):
    primary = fake(provider).script(repeat=HttpError(status))
    backup = fake(NEXT_PROVIDER[provider]).script(
        call("set_parameters", SPEED_12), say("Set on the fallback."), say("Still on the fallback.")
    )
    agent = make_agent(sim, primary, stream=stream, fallback=[model_object(backup)], max_retries=2)
    return primary, backup, agent


@pytest.mark.parametrize("status", [500, 401])
@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_dead_primary_moves_to_the_fallback_and_stays(fake, sim, provider, stream, status):
    primary, backup, agent = _dead_primary(fake, sim, provider, stream, status)

    result, events = ask(agent)

    fallback_label = LABELS[NEXT_PROVIDER[provider]]
    assert result.stopped is None and result.text == "Set on the fallback."
    assert result.model == fallback_label == agent.model
    assert sim.values["settings.speed"] == 12
    (moved,) = events.of(Fallback)
    assert (moved.from_model, moved.to_model) == (LABELS[provider], fallback_label)
    assert str(status) in moved.reason
    # a 5xx is retried first (max_retries=2); an auth error is hopeless and falls back at once
    expected_waits = 2 if status == 500 else 0
    assert len(events.of(RetryWait)) == expected_waits
    assert len(primary.model_requests) == 1 + expected_waits
    assert len(backup.model_requests) == 2

    # the next question goes straight to the fallback
    before = len(primary.model_requests)
    ask(agent, "and again")
    assert len(primary.model_requests) == before
    assert len(backup.model_requests) == 3


@pytest.mark.parametrize(("provider", "stream"), WIRES[1::2])
def test_second_ask_after_fallback_is_answered(fake, sim, provider, stream):
    _, _, agent = _dead_primary(fake, sim, provider, stream, 401)
    ask(agent)

    result, events = ask(agent, "and again")

    assert result.stopped is None and result.text == "Still on the fallback."
    assert result.model == LABELS[NEXT_PROVIDER[provider]]
    assert not events.of(Fallback)


# -- truncation -------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_truncated_response_executes_nothing(fake, sim, provider, stream):
    calls = [Call("set_parameters", SPEED_12)]
    if (provider, stream) in TRUNCATABLE:
        calls.append(Call("set_parameters", '{"values": {"settings.count": 5, "settings.mo'))
    server = fake(provider).script(
        Turn(calls=tuple(calls), finish="length"), say("They were cut off; I will send them one at a time.")
    )
    agent = make_agent(sim, server, stream=stream)
    before = dict(sim.values)

    result, events = ask(agent)

    assert sim.values == before  # nothing executed
    assert result.stopped is None
    # the model promised and did nothing: the one nudge found nothing scripted (so the answer stays), and
    # the result says no change was made
    assert result.text == "They were cut off; I will send them one at a time. (No change was made.)"
    assert result.no_change
    complete = [c for c in result.tool_calls if c.arguments == SPEED_12]
    assert len(complete) == 1 and not complete[0].ok
    assert complete[0].result["error"]["code"] == "truncated_call"
    finished = events.of(ToolCallFinished)
    assert finished and not any(e.ok for e in finished)
    told = server.tool_results(1)
    assert len(told) == len(calls)  # every call got an answer
    assert any(TRUNCATED_MESSAGE[:40] in t for t in told), told
    assert any("NOT executed: the arguments were truncated" in t for t in told)
    assert_history_valid(agent)


@pytest.mark.parametrize(("provider", "stream"), [w for w in WIRES if tuple(w.values) in TRUNCATABLE])
def test_truncated_call_itself_is_told_not_executed(fake, sim, provider, stream):
    calls = (Call("set_parameters", SPEED_12), Call("set_parameters", '{"values": {"settings.count": 5, "sett'))
    server = fake(provider).script(Turn(calls=calls, finish="length"), say("ok"))
    agent = make_agent(sim, server, stream=stream)

    ask(agent)

    told = server.tool_results(1)
    assert len(told) == 2 and all("NOT executed" in t for t in told), told


# -- loops ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_repeated_failing_call_is_blocked_then_stopped(fake, sim, provider, stream):
    server = fake(provider).script(repeat=call("set_parameters", {"values": {"settings.speed": 999}}))
    agent = make_agent(sim, server, stream=stream)

    started = time.monotonic()
    result, events = ask(agent)

    assert time.monotonic() - started < 10
    assert sim.values["settings.speed"] == DEFAULT_SPEED
    assert result.stopped and result.stopped.startswith("[LOOP BLOCKED]")
    assert "set_parameters" in result.stopped
    assert result.text.startswith("Stopped: [LOOP BLOCKED]")
    # the first failures ran and reached the model with their error; then the detector blocked
    codes = [c.result["error"]["code"] for c in result.tool_calls]
    assert codes[:3] == ["invalid_value"] * 3 and set(codes[3:]) == {"loop_blocked"}
    told = server.tool_results(-1)
    assert any("above the maximum" in t for t in told)
    assert any("[LOOP BLOCKED]" in t for t in told)
    assert len(server.model_requests) <= 10
    assert len(events.of(ToolCallStarted)) == len(events.of(ToolCallFinished)) == len(result.tool_calls)
    assert_history_valid(agent)

    # the agent is still usable
    server.repeat = say("Fine.")
    again, _ = ask(agent, "never mind")
    assert again.stopped is None and again.text == "Fine."


def test_stopped_run_keeps_its_history_and_usage(fake, sim):
    server = fake("openai").script(repeat=call("set_parameters", {"values": {"settings.speed": 999}}))
    agent = make_agent(sim, server)

    result, _ = ask(agent, "make it fast")

    assert result.stopped
    assert result.usage.requests == len(server.model_requests)
    prompts = [
        p.content for m in agent.history if isinstance(m, ModelRequest) for p in m.parts if p.part_kind == "user-prompt"
    ]
    assert prompts == ["make it fast"]
    assert any(isinstance(m, ModelResponse) for m in agent.history)
    assert_history_valid(agent)


@pytest.mark.parametrize(("provider", "stream"), WIRES)
def test_unknown_tool_repeated(fake, sim, provider, stream):
    """pydantic-ai answers each call of a tool that does not exist with "Unknown tool name ... Available
    tools: ..."; the loop detector counts them and, past the allowed repeats, ends the run with a
    ``[LOOP BLOCKED]`` reason naming the tool."""
    server = fake(provider).script(repeat=call("launch_rockets", {"count": 3}))
    agent = make_agent(sim, server, stream=stream)

    result, events = ask(agent)

    assert result.stopped and "launch_rockets" in result.stopped
    assert result.stopped.startswith("[LOOP BLOCKED]") and "unknown tool" in result.stopped
    assert result.tool_calls == [] and not events.of(ToolCallStarted)
    assert sim.values["settings.speed"] == DEFAULT_SPEED
    told = server.tool_results(1)
    assert len(told) == 1
    assert "Unknown tool name: 'launch_rockets'" in told[0] and "set_parameters" in told[0]
    assert len(server.model_requests) == 3
    assert_history_valid(agent)


# -- model="local" ----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_find_local_server(fake):
    server = fake("openai", models=("qwen-test", "other"))

    assert find_local_server(base_url=server.url + "/v1") == (server.url + "/v1", "qwen-test")
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1/models")]


def test_find_local_server_skips_dead_and_empty_servers(fake, monkeypatch):
    empty = fake("openai", models=())
    live = fake("openai", models=("llama-test",))
    monkeypatch.setattr(_model_setup, "LOCAL_SERVERS", (("Ollama", _closed_port()), ("llama.cpp", live.port)))

    assert find_local_server(base_url=empty.url + "/v1") == (live.url + "/v1", "llama-test")


def test_find_local_server_explains_when_nothing_listens(monkeypatch):
    ports = [_closed_port() for _ in range(4)]
    monkeypatch.setattr(
        _model_setup, "LOCAL_SERVERS", (("Ollama", ports[0]), ("llama.cpp", ports[1]), ("LM Studio", ports[2]))
    )

    with pytest.raises(ModelSetupError) as info:
        find_local_server(base_url=f"http://127.0.0.1:{ports[3]}/v1")

    message = str(info.value)
    assert "the given base_url" in message
    for label, port in (("Ollama", ports[0]), ("llama.cpp", ports[1]), ("LM Studio", ports[2])):
        assert f"{label} (port {port})" in message
    assert "ollama serve" in message and "base_url=" in message


def test_local_model_runs_a_tool_round(fake, sim):
    server = fake("openai", models=("qwen-test",)).script(call("set_parameters", SPEED_12), say("Done."))

    agent = sb.Agent(sim, model="local", base_url=server.url + "/v1", backoff=(0.01,))
    result, _ = ask(agent)

    assert result.text == "Done." and sim.values["settings.speed"] == 12
    assert agent.model.endswith("qwen-test")
    assert [r.body["model"] for r in server.model_requests] == ["qwen-test"] * 2


def test_local_model_with_nothing_listening(sim, monkeypatch):
    monkeypatch.setattr(_model_setup, "LOCAL_SERVERS", (("Ollama", _closed_port()),))

    with pytest.raises(ModelSetupError, match="found no local OpenAI-compatible server"):
        sb.Agent(sim, model="local", base_url=f"http://127.0.0.1:{_closed_port()}/v1")


def _tool_result_sent_back(server: FakeProvider) -> dict[str, Any]:
    """The tool message the agent sent the fake OpenAI server after its tool call, as JSON."""
    import json

    messages = server.model_requests[-1].body["messages"]
    tool = next(m for m in messages if m.get("role") == "tool")
    content = tool["content"]
    return json.loads(content) if content.lstrip().startswith("{") else {"text": content}


def test_the_model_is_told_whether_the_page_applied_the_change(fake):
    """Over the real OpenAI wire format: an applied change carries ``applied: true``; one that reached
    no page carries ``applied: false`` and ``kept: true``, not a bare ``ok``."""
    applied_sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(applied_sim)
    server = fake("openai").script(call("set_parameters", SPEED_12), say("done"))
    ask(make_agent(applied_sim, server))
    applied = _tool_result_sent_back(server)
    assert applied["ok"] is True and applied["applied"] is True and "kept" not in applied

    no_view_sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    server = fake("openai").script(call("set_parameters", SPEED_12), say("kept for later"))
    ask(make_agent(no_view_sim, server))
    text = _tool_result_sent_back(server)["error"]  # a failed call reaches the model as its error text
    assert text.startswith("no_view: ") and text.endswith("[applied: false; kept: true]")
    assert no_view_sim.values["settings.speed"] == 12  # the kernel kept it
