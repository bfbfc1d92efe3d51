"""Messages from views are validated and size-bounded before anything acts on them."""

from __future__ import annotations

import pytest

from splitbrain_widget.protocol import (
    MAX_MESSAGE_BYTES,
    EventMessage,
    ProtocolError,
    ReplyMessage,
    ToolResult,
    bounded_state,
    parse_view_message,
)


def test_a_reply_parses() -> None:
    msg = parse_view_message({"kind": "reply", "id": "r1", "view_id": "v", "ok": True, "state": {"x": 1}})
    assert isinstance(msg, ReplyMessage) and msg.state == {"x": 1}


def test_an_error_reply_parses() -> None:
    msg = parse_view_message(
        {"kind": "reply", "id": "r1", "view_id": "v", "ok": False, "error": {"code": "target_error", "message": "boom"}}
    )
    assert isinstance(msg, ReplyMessage) and msg.error is not None and msg.error.code == "target_error"


def test_an_event_parses() -> None:
    msg = parse_view_message({"kind": "event", "view_id": "v", "type": "attached", "payload": {"protocol": 1}})
    assert isinstance(msg, EventMessage) and msg.type == "attached"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ([1], "expected a JSON object"),
        ({"kind": "nope"}, "bad 'nope' message"),
        ({"kind": "reply", "id": "r1", "ok": True}, "view_id"),
        ({"kind": "reply", "id": 3, "view_id": "v", "ok": True}, "id"),
        ({"kind": "reply", "id": "r", "view_id": "v", "ok": False, "error": {"code": "weird", "message": "m"}}, "code"),
        ({"kind": "event", "view_id": "v", "type": "explode"}, "type"),
        ({"kind": "chat", "text": "x" * 30_000}, "text"),
        ({"kind": "event", "view_id": "v", "type": "state", "payload": "x" * (MAX_MESSAGE_BYTES + 1)}, "exceeds"),
        ({"kind": "event", "view_id": "v", "type": "state", "payload": {"x": float("nan")}}, "not a JSON message"),
    ],
)
def test_bad_messages_are_refused_with_a_reason(content: object, why: str) -> None:
    with pytest.raises(ProtocolError, match=why):
        parse_view_message(content)


def test_states_are_bounded() -> None:
    assert bounded_state({"x": 1}) == {"x": 1}
    assert bounded_state({"x": "y" * 100}, limit=50) == {"_truncated": True, "bytes": 108}
    assert "_invalid" in bounded_state([1, 2])


def test_tool_result_for_the_model_drops_empty_fields() -> None:
    ok = ToolResult(ok=True, op="apply", changed={"s.speed": {"value": 3, "unit": "m/s"}})
    assert ok.for_model() == {"ok": True, "op": "apply", "changed": {"s.speed": {"value": 3, "unit": "m/s"}}}
    bad = ToolResult.failure("timeout", "too slow", hint="raise the timeout")
    assert bad.for_model()["error"] == {"code": "timeout", "message": "too slow", "hint": "raise the timeout"}
    assert str(bad) == "timeout: too slow (raise the timeout)"


def test_waiting_on_a_predicate_that_reads_the_bridge_does_not_deadlock() -> None:
    import asyncio
    import time

    from splitbrain_widget.core._bridge import Bridge

    bridge = Bridge()
    assert bridge.wait_until(lambda: bool(bridge.live_views()), time.monotonic() + 0.2) is False
    assert asyncio.run(bridge.await_until(lambda: bool(bridge.ready_views()), time.monotonic() + 0.2)) is False


def test_an_oversized_reply_still_settles_its_request_with_a_marker() -> None:
    message = parse_view_message(
        {"kind": "reply", "id": "r1", "view_id": "v", "ok": True, "state": {"b": "é" * 1_200_000}}
    )
    assert isinstance(message, ReplyMessage) and message.state is not None and message.state["_truncated"] is True


def test_sizes_count_characters_like_the_view() -> None:
    from splitbrain_widget.protocol import json_size

    assert json_size({"b": "é" * 10}) == len('{"b":"' + "é" * 10 + '"}')


def test_events_and_replies_keep_the_shapes_the_bridge_reads() -> None:
    """Typed per type, but still an EventMessage / ReplyMessage whose payload is a plain dict."""
    attached = parse_view_message(
        {"kind": "event", "view_id": "v", "type": "attached", "payload": {"protocol": 1, "user_agent": "ua"}}
    )
    assert isinstance(attached, EventMessage) and attached.payload == {"protocol": 1, "user_agent": "ua"}
    assert type(attached.payload) is dict
    error = parse_view_message(
        {"kind": "event", "view_id": "v", "type": "error", "payload": {"code": "target_error", "message": "boom"}}
    )
    assert isinstance(error, EventMessage) and type(error.payload) is dict
    reply = parse_view_message(
        {"kind": "reply", "id": "r", "view_id": "v", "ok": False, "error": {"code": "not_ready", "message": "m"}}
    )
    assert isinstance(reply, ReplyMessage) and reply.state is None and reply.error is not None


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ({"kind": "event", "view_id": "v", "type": "attached", "payload": {"protocol": "1"}}, "payload.protocol"),
        ({"kind": "event", "view_id": "v", "type": "boom"}, "type"),
        ({"kind": "reply", "id": "r", "view_id": "v", "ok": 1, "state": {}}, "ok"),
        (
            {"kind": "reply", "id": "r", "view_id": "v", "ok": False, "error": {"code": "x", "message": "m"}},
            "error.code",
        ),
        ({"kind": "set", "values": []}, "values"),
    ],
)
def test_a_refusal_names_the_field_by_its_path_in_the_message(content: dict[str, object], where: str) -> None:
    with pytest.raises(ProtocolError, match=rf"^bad '{content['kind']}' message: {where}: "):
        parse_view_message(content)


def test_the_kernel_refuses_what_pydantic_would_coerce() -> None:
    for content in (
        {"kind": "reply", "id": "r", "view_id": "v", "ok": "true", "state": {}},
        {"kind": "event", "view_id": "v", "type": "attached", "payload": {"protocol": True}},
        {"kind": "approval", "id": "a1", "approved": 1},
    ):
        with pytest.raises(ProtocolError):
            parse_view_message(content)


def test_a_request_carries_values_only_where_its_op_uses_them() -> None:
    from splitbrain_widget.protocol import request

    assert request("r1", "apply", {"values": {"a": 1}}) == {
        "kind": "request",
        "id": "r1",
        "op": "apply",
        "payload": {"values": {"a": 1}},
    }
    assert request("r2", "state", {}) == {"kind": "request", "id": "r2", "op": "state", "payload": {}}
