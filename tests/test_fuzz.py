"""Fuzzing with hypothesis: manifests, values and view messages never crash anything and stay bounded."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import splitbrain_widget as sb
from splitbrain_widget import Manifest, ManifestError, ParameterError
from splitbrain_widget.core._bridge import MAX_SEEN_VIEWS
from splitbrain_widget.protocol import ProtocolError, parse_view_message

from .test_manifest import REFERENCE, RICH

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
    st.sampled_from(["number", "integer", "boolean", "string", "array", "value", "type", "apply", "1e999", "NaN"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6), st.dictionaries(st.text(max_size=12), children, max_size=6)
    ),
    max_leaves=40,
)


@FAST
@given(json_values)
def test_any_json_as_a_manifest_loads_or_names_what_is_wrong(raw: Any) -> None:
    try:
        Manifest.from_dict(raw, source="fuzz.json")
    except ManifestError as exc:
        assert str(exc).startswith("fuzz.json: ")
        assert len(str(exc)) < 200_000


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    return out


@FAST
@given(st.data())
def test_mutated_manifests_load_or_name_the_field(data: st.DataObject) -> None:
    raw = copy.deepcopy(data.draw(st.sampled_from([REFERENCE, RICH])))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(raw)[1:]))
        node = raw
        for key in path[:-1]:
            node = node[key]
        if not isinstance(node, dict):
            continue
        if data.draw(st.booleans()):
            node[path[-1]] = data.draw(json_values)
        else:
            node.pop(path[-1], None)
    try:
        manifest = Manifest.from_dict(raw, source="m.json")
    except ManifestError as exc:
        assert exc.problems and all(":" in p for p in exc.problems)
        return
    for param in manifest.parameters.values():  # whatever loaded satisfies its own schema
        assert param.check_value(param.value) == param.value


@FAST
@given(st.sampled_from(sorted(Manifest.from_dict(RICH).parameters)), json_values)
def test_any_value_is_coerced_or_refused_clearly(path: str, value: Any) -> None:
    manifest = Manifest.from_dict(RICH)
    param = manifest.parameters[path]
    try:
        result = manifest.coerce(path, value)
    except ParameterError as exc:
        assert exc.code in ("invalid_value", "readonly")
        assert path in str(exc) and len(str(exc)) < 2000
        return
    assert param.check_value(result) == result
    if isinstance(result, float):
        assert math.isfinite(result)
    if param.min is not None and isinstance(result, int | float) and not isinstance(result, bool):
        assert result >= param.min


view_messages = st.fixed_dictionaries(
    {"kind": st.sampled_from(["reply", "event", "chat", "cancel", "approval", "set", "skip_wait", "request", "x"])},
    optional={
        "id": json_values,
        "view_id": json_values,
        "ok": json_values,
        "state": json_values,
        "error": json_values,
        "type": st.one_of(st.sampled_from(["attached", "ready", "detached", "state", "error"]), json_values),
        "payload": json_values,
        "text": json_values,
        "approved": json_values,
        "values": json_values,
    },
)


@FAST
@given(st.one_of(view_messages, json_values))
def test_any_view_message_parses_or_is_refused(content: Any) -> None:
    try:
        parse_view_message(content)
    except ProtocolError as exc:
        assert len(str(exc)) < 5000


def test_deeply_nested_and_huge_messages_are_refused_without_crashing() -> None:
    deep: Any = {}
    for _ in range(100_000):
        deep = {"a": deep}
    for content in (
        {"kind": "event", "view_id": "v", "type": "state", "payload": deep},
        {"kind": "event", "view_id": "v", "type": "state", "payload": {"n": float("nan")}},
    ):
        try:
            parse_view_message(content)
        except ProtocolError:
            continue
        raise AssertionError("accepted an unbounded message")
    # an oversized reply settles its request with a marker instead of the state
    reply = parse_view_message(
        {"kind": "reply", "id": "r", "view_id": "v", "ok": True, "state": {"blob": "x" * (2 << 20)}}
    )
    assert reply.state is not None and reply.state["_truncated"] is True and reply.state["bytes"] > 2 << 20  # type: ignore[union-attr]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(view_messages.filter(lambda m: m["kind"] not in ("chat", "set")), json_values), max_size=40))
def test_a_widget_survives_any_stream_of_view_messages(messages: list[Any]) -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES, timeout=0.2)
    before = dict(sim.values)
    for content in messages:
        sim._receive(content)  # never raises
    assert sim.values == before  # nothing a view sends changes the kernel's values behind its back
    assert len(sim.bridge.views) <= MAX_SEEN_VIEWS
    assert sim.bridge.pending == {}


def test_the_view_table_is_bounded() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    for i in range(2000):
        sim._receive({"kind": "event", "view_id": f"v{i}", "type": "attached", "payload": {"protocol": 1}})
    assert len(sim.bridge.views) == MAX_SEEN_VIEWS
