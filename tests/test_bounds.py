"""Bounds on what a page sends, where it enters Python (splitbrain_widget/_bounds.py, protocol.parse_view_message)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from splitbrain_widget import _bounds, registry
from splitbrain_widget.hosts._headless_page import _Samples
from splitbrain_widget.protocol import OkReply, StateEvent, bounded_state, parse_view_message


def nested(containers: int) -> object:
    """1 inside ``containers`` arrays and objects (as js/tests/widget.test.mjs nests them)."""
    value: object = 1
    for i in range(containers):
        value = [value] if i % 2 else {"a": value}
    return value


def test_depth_and_values_are_measured_without_recursion() -> None:
    assert _bounds.measure({"a": [1, 2, {"b": None}]}) == (3, 6)
    depth, _ = _bounds.measure(nested(100_000), max_depth=10)
    assert depth == 11  # stops one past the bound: no walk of the rest, no RecursionError


def test_the_view_counts_values_as_python_does() -> None:
    """js/host/relay.js bounds a state before it crosses the comm (jsonShape, its test in
    js/tests/widget.test.mjs uses these shapes): the same limit, the same counts."""
    relay = (Path(__file__).parents[1] / "js" / "host" / "relay.js").read_text()
    limits = dict(re.findall(r"export const (MAX_STATE_VALUES|MAX_STATE_DEPTH) = ([\d_]+);", relay))
    assert int(limits["MAX_STATE_VALUES"]) == _bounds.MAX_NODES and int(limits["MAX_STATE_DEPTH"]) == _bounds.MAX_DEPTH
    assert _bounds.measure({}) == (1, 1)
    assert _bounds.measure({"a": 1, "b": [1, 2, []], "c": {"d": "x,y["}}) == (3, 8)
    assert _bounds.measure([[], [[]], {}]) == (3, 5)
    assert _bounds.measure({"energy": [[] for _ in range(_bounds.MAX_NODES - 2)]})[1] == _bounds.MAX_NODES


def test_a_state_past_a_bound_is_replaced_by_a_marker_naming_it() -> None:
    assert bounded_state({"x": nested(_bounds.MAX_DEPTH - 1)}) == {"x": nested(_bounds.MAX_DEPTH - 1)}
    assert bounded_state({"x": nested(_bounds.MAX_DEPTH)}) == {"_truncated": True, "code": "too_deep", "limit": 32}
    wide = {"x": [[] for _ in range(_bounds.MAX_NODES)]}
    assert bounded_state(wide) == {"_truncated": True, "code": "too_many_values", "limit": 100_000}
    assert len(json.dumps(wide)) < 1 << 20  # under the size bound: it is the values that count


def test_a_reply_nested_past_the_json_encoder_still_settles_its_request() -> None:
    content = {"kind": "reply", "id": "r1", "view_id": "v", "ok": True, "state": {"x": nested(5000)}}
    message = parse_view_message(content)
    assert isinstance(message, OkReply)
    assert message.state == {"_truncated": True, "code": "too_deep", "limit": 32}


def test_lone_surrogates_are_repaired_wherever_they_are() -> None:
    content = json.loads(
        '{"kind": "event", "view_id": "v", "type": "state", "payload": {"s": "a\\ud800b", "k\\udfff": ["\\udbff"]}}'
    )
    message = parse_view_message(content)
    assert isinstance(message, StateEvent)
    assert message.payload == {"s": "a\ufffdb", "k\ufffd": ["\ufffd"]}
    json.dumps(message.payload, ensure_ascii=False).encode("utf-8")  # what the trait echo does
    paired = json.loads('{"kind": "event", "view_id": "v", "type": "state", "payload": {"s": "\\ud83d\\ude00"}}')
    assert parse_view_message(paired).payload == {"s": "\U0001f600"}  # type: ignore[union-attr]


def test_a_sampled_advance_keeps_only_what_its_caller_keeps_within_its_budget() -> None:
    samples = _Samples(3, keep=lambda state: {"e": state.get("e")})
    assert samples.add([{"e": 1, "big": list(range(50_000))}, {"e": 2}])
    assert samples.add([{"e": 3}]) and samples.complete()
    assert samples.states == [{"e": 1}, {"e": 2}, {"e": 3}]
    greedy = _Samples(20)
    assert not greedy.add([{"big": list(range(90_000))} for _ in range(20)])
    assert "more than 1,000,000 values" in greedy.why() and greedy.states == []


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1:8000/x", True),
        ("http://127.0.0.1:8001/x", False),
        ("https://a.example.org/api/v", True),
        ("https://example.org/api/v", False),
        ("https://a.example.org/other", False),
        ("https://a.example.org:8443/api/v", False),
    ],
)
def test_the_network_a_manifest_names_is_all_a_headless_page_may_reach(url: str, allowed: bool) -> None:
    sources = registry.network_sources(
        "default-src 'none'; connect-src http://127.0.0.1:8000 https://*.example.org/api/; img-src data:"
    )
    assert sources == ("http://127.0.0.1:8000", "https://*.example.org/api/")
    assert registry.network_allowed(url, sources) is allowed
    assert registry.network_sources(None) == () and not registry.network_allowed(url, ())


def test_the_sandbox_frame_refuses_navigation_unless_the_policy_speaks_of_frames() -> None:
    assert "frame-src 'none'" not in registry.sandbox_html()  # DEFAULT_CSP: default-src 'none' covers it
    assert registry.DEFAULT_CSP in registry.sandbox_html()
    relaxed = registry.sandbox_html("script-src 'unsafe-inline'; connect-src http://x")
    assert "connect-src http://x; frame-src 'none'" in relaxed
    embeds = registry.sandbox_html("script-src 'unsafe-inline'; frame-src https://video.example")
    assert "frame-src 'none'" not in embeds
