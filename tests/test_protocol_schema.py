"""The protocol as a checked contract (docs/protocol.md, "How the translations are kept in step").

``docs/protocol.schema.json`` is generated from ``splitbrain_widget/protocol.py``; the shared examples in
``tests/fixtures/protocol_examples.json`` pass or fail alike in the pydantic models, the schema and (in
``js/tests/protocol_schema.test.mjs``) ``js/protocol.js``; and what the kernel really sends matches.

After changing a message in protocol.py, regenerate the schema: ``.venv/bin/python -m tests.test_protocol_schema``.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from splitbrain_widget import protocol
from splitbrain_widget.core._audit import AuditLog
from splitbrain_widget.protocol import ProtocolError, ToolResult

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "docs" / "protocol.schema.json"
EXAMPLES_PATH = ROOT / "tests" / "fixtures" / "protocol_examples.json"
REGENERATE = ".venv/bin/python -m tests.test_protocol_schema"
DIRECTIONS = {"kernel_to_view": "KernelToView", "view_to_kernel": "ViewToKernel"}
PARSERS: dict[str, Callable[[Any], Any]] = {
    "kernel_to_view": protocol.parse_kernel_message,
    "view_to_kernel": protocol.parse_view_message,
}


def generated_schema_text() -> str:
    """The schema file as the generator writes it."""
    return json.dumps(protocol.json_schema(), indent=2, ensure_ascii=False) + "\n"


@functools.cache
def committed_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


@functools.cache
def validator(direction: str) -> Draft202012Validator:
    """The committed schema's definition of one direction."""
    return Draft202012Validator({"$ref": f"#/$defs/{DIRECTIONS[direction]}", "$defs": committed_schema()["$defs"]})


def examples() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXAMPLES_PATH.read_text(encoding="utf-8"))
    return loaded


def cases(group: str) -> list[Any]:
    return [
        pytest.param(direction, entry, id=f"{direction}-{index}-{entry.get('note') or entry.get('why')}")
        for direction in DIRECTIONS
        for index, entry in enumerate(examples()[direction][group])
    ]


# -- the schema -------------------------------------------------------------------------------


def test_the_committed_schema_is_the_one_protocol_py_generates() -> None:
    committed = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
    generated = generated_schema_text()
    if committed != generated:
        diff = difflib.unified_diff(
            committed.splitlines(), generated.splitlines(), "committed", "generated", n=1, lineterm=""
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"docs/protocol.schema.json differs from protocol.py: regenerate it with `{REGENERATE}`\n{shown}")


def test_the_schema_is_valid_json_schema_of_this_version() -> None:
    schema = committed_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"urn:splitbrain-widget:protocol:{protocol.PROTOCOL_VERSION}.{protocol.PROTOCOL_MINOR}"


def test_the_doc_states_the_version_of_the_code() -> None:
    doc = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    version = f"{protocol.PROTOCOL_VERSION}.{protocol.PROTOCOL_MINOR}"
    assert doc.splitlines()[0] == f"# splitbrain wire protocol — version {version}"
    assert (
        f"`PROTOCOL_VERSION = {protocol.PROTOCOL_VERSION}`" in doc
        and f"`PROTOCOL_MINOR = {protocol.PROTOCOL_MINOR}`" in doc
    )


def test_the_kinds_the_kernel_takes_are_the_schemas() -> None:
    def kinds(direction: str) -> set[str]:
        return {leaf["properties"]["kind"]["const"] for leaf, path in leaves(DIRECTIONS[direction]) if not path}

    assert kinds("view_to_kernel") == set(protocol.VIEW_MESSAGE_KINDS)
    assert kinds("kernel_to_view") == set(protocol.KERNEL_MESSAGE_KINDS)
    assert {"kind": "reply"} not in protocol.VIEW_MESSAGE_KINDS  # an unhashable kind is simply not one


# -- the examples -----------------------------------------------------------------------------


@pytest.mark.parametrize(("direction", "entry"), cases("valid"))
def test_a_valid_example_parses_and_matches_the_schema(direction: str, entry: dict[str, Any]) -> None:
    PARSERS[direction](entry["message"])
    errors = list(validator(direction).iter_errors(entry["message"]))
    assert not errors, f"the schema refuses it: {best_match(errors).message}"


@pytest.mark.parametrize(("direction", "entry"), cases("invalid"))
def test_an_invalid_example_is_refused_by_the_models_and_the_schema(direction: str, entry: dict[str, Any]) -> None:
    assert entry["why"].strip(), "every invalid example says why it is invalid"
    with pytest.raises(ProtocolError):
        PARSERS[direction](entry["message"])
    assert not validator(direction).is_valid(entry["message"]), "the schema accepts it"


KERNEL_BUILDERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "request": lambda m: protocol.request(m["id"], m["op"], m["payload"]),
    "chat_event": lambda m: protocol.chat_event(m["event"]),
    "approval_request": lambda m: protocol.approval_request(
        m["id"], m["tool"], m["arguments"], m["asking"], m.get("label", "")
    ),
    "approval_closed": lambda m: protocol.approval_closed(m["id"]),
    "code": lambda m: protocol.code_message(m["text"]),
}


def test_every_kernel_message_has_a_builder() -> None:
    assert set(KERNEL_BUILDERS) == set(protocol.KERNEL_MESSAGE_KINDS)


@pytest.mark.parametrize(
    "entry",
    [e for e in examples()["kernel_to_view"]["valid"] if not e.get("other_version")],
    ids=lambda e: e["note"],
)
def test_the_kernels_builders_make_the_valid_examples(entry: dict[str, Any]) -> None:
    message = entry["message"]
    assert KERNEL_BUILDERS[message["kind"]](message) == message


def leaves(name: str, path: tuple[str, ...] = ()) -> Iterator[tuple[dict[str, Any], tuple[str, ...]]]:
    """Every message shape under a definition, with the path of the field it sits at (chat events
    sit at ``event``): the object schemas at the ends of its ``oneOf`` branches."""
    yield from _leaves(committed_schema()["$defs"][name], path)


def _leaves(node: dict[str, Any], path: tuple[str, ...]) -> Iterator[tuple[dict[str, Any], tuple[str, ...]]]:
    if "$ref" in node:
        yield from leaves(node["$ref"].rsplit("/", 1)[-1], path)
    elif "oneOf" in node:
        for branch in node["oneOf"]:
            yield from _leaves(branch, path)
    elif node.get("type") == "object" and "kind" in node.get("properties", {}):
        yield node, path
        for field, sub in node["properties"].items():
            if "oneOf" in sub:
                yield from _leaves(sub, (*path, field))


def _at(message: Any, path: tuple[str, ...]) -> Any:
    for field in path:
        message = message.get(field) if isinstance(message, dict) else None
    return message


def _consts(leaf: dict[str, Any]) -> dict[str, Any]:
    return {field: sub["const"] for field, sub in leaf["properties"].items() if "const" in sub}


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_the_examples_cover_every_message_shape(direction: str) -> None:
    """A valid example of every shape; an invalid one of every shape that has more than its tags."""
    groups = examples()[direction]
    for leaf, path in leaves(DIRECTIONS[direction]):
        title = f"{leaf['title']} (at {'.'.join(path) or 'the top'})"
        shape = Draft202012Validator(leaf | {"$defs": committed_schema()["$defs"]})
        assert any(shape.is_valid(_at(e["message"], path)) for e in groups["valid"]), f"no valid example of {title}"
        consts = _consts(leaf)
        if set(leaf.get("required", [])) - set(consts):
            tagged = [e for e in groups["invalid"] if _consts_match(_at(e["message"], path), consts)]
            assert tagged, f"no invalid example of {title}"


def _consts_match(message: Any, consts: dict[str, Any]) -> bool:
    return isinstance(message, dict) and all(
        field in message and type(message[field]) is type(value) and message[field] == value
        for field, value in consts.items()
    )


# -- what the kernel really sends -------------------------------------------------------------


class _StubWidget:
    """The part of TargetWidget the chat controller uses; records what it sends."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.transcript: list[dict[str, Any]] = []
        self.bridge = self
        self.audit = AuditLog()
        self.on_send: Callable[[dict[str, Any]], None] = lambda message: None

    def send(self, content: dict[str, Any]) -> None:
        self.sent.append(content)
        self.on_send(content)

    def live_views(self) -> list[str]:
        return ["v-1"]

    async def aset_parameters(self, values: dict[str, Any]) -> ToolResult:  # the panel's controls are awaited
        return ToolResult.failure("invalid_value", f"settings.speed must be at most 50, got {values['settings.speed']}")


def test_what_the_chat_controller_sends_matches_the_schema() -> None:
    """Every agent event, a busy notice, a failed control, an approval and the code, through the real controller."""
    from splitbrain_widget.agent import _events as ev
    from splitbrain_widget.chat._controller import ChatController

    sim = _StubWidget()
    controller = ChatController(sim)  # type: ignore[arg-type]
    arguments = {"values": {"settings.speed": 12}}
    finished = ToolResult(ok=True, op="set_parameters", applied=True, views_applied=1).for_model()
    for event in [
        ev.TextDelta("Setting the speed."),
        ev.ToolCallStarted("c1", "set_parameters", arguments),
        ev.ToolCallProgress("c2", "seek", {"observable": "range", "goal": 50}, "range → 50: try 1, 20 → 40.8"),
        ev.ToolCallFinished("c1", "set_parameters", arguments, finished, True),
        ev.RetryWait(2.5, "Retry-After", 1, "openai:gpt-4o-mini", 429),
        ev.RetryWait(4.0, "backoff", 2, "openai:gpt-4o-mini", None),
        ev.RunDeadline(300.0),
        ev.Fallback("openai:gpt-4o-mini", "offline", "HTTP 503"),
        ev.Done(result=None),
    ]:
        controller._on_event(event)
    release = threading.Event()
    controller._worker = threading.Thread(target=release.wait)
    controller._worker.start()
    try:
        controller.on_chat("and now red")  # still answering: busy
    finally:
        release.set()
        controller._worker.join()
    controller._control("set", {"settings.speed": 80})
    sim.on_send = lambda m: controller.on_approval(m["id"], True) if m["kind"] == "approval_request" else None
    assert asyncio.run(controller.approve("set_parameters", arguments, ["settings.speed"]))[0] is True
    controller.on_copy_code()

    for message in sim.sent:
        protocol.parse_kernel_message(message)
        errors = list(validator("kernel_to_view").iter_errors(message))
        assert not errors, f"{message}: {best_match(errors).message}"
    sent_events = {m["event"]["kind"] for m in sim.sent if m["kind"] == "chat_event"}
    schema_events = {leaf["properties"]["kind"]["const"] for leaf, path in leaves("KernelToView") if path}
    assert sent_events == schema_events
    assert {m["kind"] for m in sim.sent} == {"chat_event", "approval_request", "approval_closed", "code"}


def test_code_longer_than_the_bound_becomes_a_comment_that_says_so() -> None:
    fits = "x" * protocol.MAX_CODE_TEXT
    assert protocol.code_message(fits)["text"] == fits
    too_long = protocol.code_message(fits + "x")
    assert too_long["text"].startswith("# the code is 200,001 characters") and len(too_long["text"]) < 200
    protocol.parse_kernel_message(protocol.code_message(fits))
    assert validator("kernel_to_view").is_valid(protocol.code_message(fits))
    with pytest.raises(ProtocolError, match="text"):
        protocol.parse_kernel_message({"kind": "code", "text": fits + "x"})
    assert not validator("kernel_to_view").is_valid({"kind": "code", "text": fits + "x"})


def test_an_event_the_panel_does_not_know_is_refused_by_the_builder() -> None:
    with pytest.raises(ProtocolError, match=r"event\.kind"):
        protocol.chat_event({"kind": "done", "result": None})
    with pytest.raises(ProtocolError, match=r"event\.seconds"):
        protocol.chat_event(
            {"kind": "retry_wait", "seconds": "2", "source": "s", "attempt": 1, "model": "m", "status": None}
        )


if __name__ == "__main__":
    SCHEMA_PATH.write_text(generated_schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH.relative_to(ROOT)}")
