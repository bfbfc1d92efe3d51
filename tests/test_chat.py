"""The chat panel's kernel side: messages start the agent, approvals, the transcript, no secrets."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

import splitbrain_widget as sb
from splitbrain_widget.agent import Agent
from splitbrain_widget.core._secrets import REDACTED, redact

from .fake_view import FakeView

FIXTURES = Path(__file__).parent / "fixtures" / "targets"


def chat_sim(*, view: bool = True, **kwargs: Any) -> tuple[sb.TargetWidget, list[dict[str, Any]]]:
    """A chat widget with (unless ``view=False``) a fake view whose page applies what it is sent;
    the panel's messages (custom messages over the comm) are recorded."""
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES, chat=True, timeout=1, **kwargs)
    sent: list[dict[str, Any]] = []
    sim.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    if view:
        FakeView(sim)
    return sim, sent


def say(sim: sb.TargetWidget, text: str) -> None:
    sim.receive_view_message({"kind": "chat", "text": text})
    assert sim._chat is not None and sim._chat.wait_idle(30)


def test_a_chat_message_runs_the_default_offline_agent_and_fills_the_transcript() -> None:
    sim, sent = chat_sim()
    assert sim.chat_enabled
    say(sim, "set the speed to 12")
    assert sim.values["settings.speed"] == 12
    roles = [e["role"] for e in sim.transcript]
    assert roles == ["user", "tool", "assistant"]
    assert sim.transcript[1]["name"] == "set_parameters" and sim.transcript[1]["ok"]
    assert sim.transcript[2]["text"].startswith("Offline planner: Set speed to 12 m/s")
    kinds = [m["event"]["kind"] for m in sent if m["kind"] == "chat_event"]
    assert kinds[:3] == ["run_deadline", "tool_started", "tool_finished"] and "text" in kinds
    assert not sim.chat_busy and sim.chat_model == "offline-planner"


def test_sim_chat_attaches_another_agent() -> None:
    sim, _ = chat_sim()
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("from my model")]))
    sim.chat(Agent(sim, model))
    say(sim, "hello")
    assert sim.transcript[-1]["text"] == "from my model"


def test_a_message_while_busy_is_refused_politely() -> None:
    sim, sent = chat_sim()
    release = threading.Event()

    def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        release.wait(10)
        return ModelResponse(parts=[TextPart("done")])

    sim.chat(Agent(sim, FunctionModel(slow)))
    sim.receive_view_message({"kind": "chat", "text": "first"})
    sim.receive_view_message({"kind": "chat", "text": "second"})
    release.set()
    assert sim._chat is not None and sim._chat.wait_idle(10)
    assert any(m["kind"] == "chat_event" and m["event"]["kind"] == "busy" for m in sent)
    assert [e["text"] for e in sim.transcript if e["role"] == "user"] == ["first"]


def test_stop_cancels_the_run() -> None:
    sim, _ = chat_sim()
    entered = threading.Event()

    async def never(values: Any, **kwargs: Any) -> Any:
        entered.set()
        import asyncio

        await asyncio.sleep(60)

    sim.aset_parameters = never  # type: ignore[method-assign]
    sim.receive_view_message({"kind": "chat", "text": "set the speed to 3"})
    assert entered.wait(10)
    sim.receive_view_message({"kind": "cancel"})
    assert sim._chat is not None and sim._chat.wait_idle(10)
    assert sim.transcript[-1]["role"] == "assistant" and sim.transcript[-1]["stopped"] == "cancelled"


def test_a_denied_parameter_is_never_changed() -> None:
    sim, _ = chat_sim(approval={"settings.speed": "deny"})
    say(sim, "set the speed to 12")
    assert sim.values["settings.speed"] == 8.0
    tool = next(e for e in sim.transcript if e["role"] == "tool")
    assert not tool["ok"] and tool["result"]["error"]["code"] == "denied"


@pytest.mark.parametrize(("approved", "speed"), [(True, 12), (False, 8.0)])
def test_ask_shows_approve_deny_and_the_decision_reaches_the_model(approved: bool, speed: float) -> None:
    sim, sent = chat_sim(approval={"speed": "ask"})
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart("set_parameters", {"values": {"settings.speed": 12}}, tool_call_id="c")]
            )
        seen.append(str(messages[-1].parts[0].content))  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart("ok")])

    sim.chat(Agent(sim, FunctionModel(respond)))

    def answer() -> None:  # the panel: wait for the request, then click
        for _ in range(500):
            request = next((m for m in sent if m["kind"] == "approval_request"), None)
            if request is not None:
                sim.receive_view_message({"kind": "approval", "id": request["id"], "approved": approved})
                return
            threading.Event().wait(0.01)

    clicker = threading.Thread(target=answer)
    clicker.start()
    say(sim, "speed 12")
    clicker.join(5)
    request = next(m for m in sent if m["kind"] == "approval_request")
    assert request["asking"] == ["settings.speed"] and request["tool"] == "set_parameters"
    assert any(m["kind"] == "approval_closed" for m in sent)
    assert sim.values["settings.speed"] == speed
    assert isinstance(sim.host, FakeView) and sim.host.values["settings.speed"] == speed  # the page has it too
    if not approved:
        assert "denied" in seen[0] and "the user denied this change" in seen[0]


def test_ask_without_a_view_is_denied_with_a_reason() -> None:
    sim, _ = chat_sim(view=False, approval={"*": "ask"})
    say(sim, "set the speed to 12")
    tool = next(e for e in sim.transcript if e["role"] == "tool")
    assert "no view of the widget is open" in tool["result"]["error"]["message"]


def test_bad_policies_are_refused() -> None:
    import traitlets

    with pytest.raises(traitlets.TraitError, match="expected one of auto, ask, deny"):
        sb.TargetWidget("demo", targets_dir=FIXTURES, approval={"speed": "maybe"})


def test_a_control_move_sets_the_value_like_any_call() -> None:
    sim, _ = chat_sim()
    sim.receive_view_message({"kind": "set", "values": {"settings.count": 6}})
    for _ in range(500):
        if len(sim.audit):  # the call ended (the value is written as it is sent, before that)
            break
        threading.Event().wait(0.01)
    assert sim.values["settings.count"] == 6
    assert sim.audit[-1].op == "set_parameters"


def test_keys_never_reach_the_transcript_events_or_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdefSECRET"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    sim, sent = chat_sim()
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(f"my key is {secret}")]))
    sim.chat(Agent(sim, model))
    say(sim, f"remember {secret}")
    sim.set_parameter("mode", "manual")
    everything = repr(sim.transcript) + repr(sent) + repr(sim.audit.to_list()) + repr(sim.get_state())
    assert secret not in everything and REDACTED in repr(sim.transcript)


def test_redact_catches_key_shapes_without_the_environment() -> None:
    assert redact({"a": ["sk-ant-abcdefghijklmnopqrstu"]}, secrets=[]) == {"a": [REDACTED]}


def test_stream_coalesces_to_the_latest_value_per_parameter() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    view = FakeView(sim)
    release = threading.Event()
    applied: list[dict[str, Any]] = []
    original = sim.set_parameters

    def slow_apply(values: Any, **kwargs: Any) -> Any:
        applied.append(dict(values))
        release.wait(5)
        return original(values)

    sim.set_parameters = slow_apply  # type: ignore[method-assign]
    sim.stream({"speed": 1})  # the first batch is held "in flight" until release
    for i in range(2, 50):
        sim.stream({"speed": i, "count": 1 + i % 9})
    release.set()
    assert sim.flush_stream(10)
    assert applied[-1] == {"settings.speed": 49, "settings.count": 5}  # the latest values won
    assert len(applied) <= 3 and sim.stream_stats.coalesced > 80
    assert sim.values["settings.speed"] == 49
    assert view.values["settings.speed"] == 49 and sim.stream_stats.failed == 0


def test_flush_stream_is_false_when_the_page_applied_nothing() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)  # no view: every batch is kept, not applied
    sim.stream({"speed": 3})
    assert sim.flush_stream(10) is False
    assert sim.stream_stats.failed == 1 and sim.stream_stats.last_error.startswith("no_view:")
    assert sim.values["settings.speed"] == 3  # kept
    FakeView(sim)
    sim.stream({"speed": 4})
    assert sim.flush_stream(10) is True  # a later flush speaks of the batches since the last one


def test_stream_refuses_bad_values_at_once() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    with pytest.raises(sb.ParameterError, match="above the maximum"):
        sim.stream({"speed": 1000})


@pytest.mark.parametrize(
    ("policies", "tool", "paths", "expected"),
    [
        ({"seek": "deny", "launch.speed": "auto"}, "seek", ["launch.speed"], ("deny", ["seek"])),  # the tool's own
        ({"launch.speed": "deny"}, "seek", ["launch.speed"], ("deny", ["launch.speed"])),  # the path's
        ({"set_parameters": "ask"}, "set_parameters", ["a.speed"], ("ask", ["set_parameters"])),
        ({"speed": "ask", "seek": "deny"}, "seek", ["a.speed"], ("deny", ["seek"])),  # the strictest wins
        ({"seek": "ask", "speed": "deny"}, "seek", ["a.speed"], ("deny", ["a.speed"])),
        ({"*": "ask"}, "seek", ["a.speed"], ("ask", ["a.speed"])),
        ({"*": "ask", "speed": "auto"}, "set_parameters", ["a.speed"], ("auto", [])),
        ({"reset": "deny"}, "reset", [], ("deny", ["reset"])),
        ({}, "select_target", [], ("auto", [])),
    ],
)
def test_the_approval_policy_of_a_call_is_the_strictest_that_applies(
    policies: dict[str, str], tool: str, paths: list[str], expected: tuple[str, list[str]]
) -> None:
    from splitbrain_widget.core._approval import policy_for

    assert policy_for(policies, tool, paths) == expected
