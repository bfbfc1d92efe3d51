"""Wire messages, error codes and the tool result, as written down in ``docs/protocol.md``.

``js/protocol.js`` is the other translation of the same page. ``docs/protocol.schema.json`` is the JSON
Schema generated from the definitions here (:func:`json_schema`; regenerate it with
``python -m tests.test_protocol_schema``), and ``tests/fixtures/protocol_examples.json`` holds the
example messages that both translations and the schema are tested against.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, get_args, get_type_hints

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails
from typing_extensions import TypedDict

from ._bounds import MAX_DEPTH, MAX_NODES, measure, repair_text, within

PROTOCOL_VERSION = 1  # the major version: a view announces it in `attached`, the kernel compares only it
PROTOCOL_MINOR = 9  # the compatible additions within the major version this translation knows
MAX_MESSAGE_BYTES = 1 << 20  # 1 MiB of JSON from a view, whatever it carries
MAX_CODE_TEXT = 200_000  # characters of the code a ``code`` message carries (the panel's "Copy as code")
MAX_ERROR_TEXT = 500
MAX_ID = 200  # characters of a request, view or approval id from a view
MAX_ACTION_NAME = 200  # characters of an action's name in an ``action`` request
MAX_PICTURE_SIDE = 1024  # pixels of a snapshot's width or height (the page scales its picture down to fit)
MAX_PICTURE_BYTES = 512 * 1024  # bytes of a snapshot's PNG (base64 in the reply: a third more)
MAX_PICTURE_BASE64 = 4 * ((MAX_PICTURE_BYTES + 2) // 3)

ErrorCode = Literal[
    "no_view",
    "deferred",
    "protocol_mismatch",
    "not_ready",
    "timeout",
    "cancelled",
    "unknown_param",
    "invalid_value",
    "readonly",
    "unknown_target",
    "target_error",
    "truncated_call",
    "loop_blocked",
    "denied",
    "goal_unreachable",
    "not_measured",
    "page_hidden",
    "internal_error",
]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)
ValuesOp = Literal["apply", "reset", "state", "snapshot"]
Op = Literal["apply", "reset", "state", "action", "snapshot"]


class ProtocolError(ValueError):
    """A message had the wrong shape or size; it is dropped."""


# -- kernel -> view ---------------------------------------------------------------------------
# TypedDicts: the kernel builds these as plain dicts and sends them as they are.


class RequestPayload(TypedDict, total=False):
    """``values`` (dotted path -> value, already validated) for ``apply`` and ``reset``; nothing for ``state``
    and ``snapshot``."""

    values: dict[str, Any]


class ValuesRequest(TypedDict):
    """Apply values, reset to the manifest defaults, ask for a fresh state or for a picture of the page
    (``snapshot``, 1.8); a view applies each id once."""

    kind: Literal["request"]
    id: Annotated[str, Field(min_length=1)]
    op: ValuesOp
    payload: RequestPayload


class ActionPayload(TypedDict):
    """The name of one of the manifest's ``actions`` (1.5)."""

    name: Annotated[str, Field(min_length=1, max_length=MAX_ACTION_NAME)]


class ActionRequest(TypedDict):
    """Run the manifest's action ``payload.name`` on the page (press its Run button, say); answered like
    ``apply`` (1.5)."""

    kind: Literal["request"]
    id: Annotated[str, Field(min_length=1)]
    op: Literal["action"]
    payload: ActionPayload


RequestMessage = Annotated[ValuesRequest | ActionRequest, Field(discriminator="op")]


class TextEvent(TypedDict):
    """A piece of the assistant's answer."""

    kind: Literal["text"]
    text: str


class ToolStartedEvent(TypedDict):
    """The agent called a tool."""

    kind: Literal["tool_started"]
    call_id: str
    name: str
    arguments: dict[str, Any]
    label: NotRequired[str]  # the arguments as the chip shows them ("speed = 12"), from the tool's definition


class ToolProgressEvent(TypedDict):
    """A running call says how far it got (a seek's latest try); the chip shows ``label``."""

    kind: Literal["tool_progress"]
    call_id: str
    name: str
    arguments: dict[str, Any]
    label: str


class ToolFinishedEvent(TypedDict):
    """A tool call ended; ``result`` is what the model was given (``ToolResult.for_model()``)."""

    kind: Literal["tool_finished"]
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool
    label: NotRequired[str]


class RetryWaitEvent(TypedDict):
    """The run waits ``seconds`` before retrying ``model``; ``source`` says where the wait came from."""

    kind: Literal["retry_wait"]
    seconds: float
    source: str
    attempt: int
    model: str
    status: int | None


class RunDeadlineEvent(TypedDict):
    """A run started that ends, stopped, after ``seconds`` (its run_timeout): the panel counts them down."""

    kind: Literal["run_deadline"]
    seconds: float


class FallbackEvent(TypedDict):
    """The run moved to the next model and stays there."""

    kind: Literal["fallback"]
    from_model: str
    to_model: str
    reason: str


class BusyEvent(TypedDict):
    """A chat message came while the agent was still answering the previous one; it was not run."""

    kind: Literal["busy"]
    text: str


class ControlErrorEvent(TypedDict):
    """A change from the parameter inspector (a ``set`` message) failed; ``text`` says why."""

    kind: Literal["control_error"]
    text: str


ChatEvent = Annotated[
    TextEvent
    | ToolStartedEvent
    | ToolProgressEvent
    | ToolFinishedEvent
    | RetryWaitEvent
    | RunDeadlineEvent
    | FallbackEvent
    | BusyEvent
    | ControlErrorEvent,
    Field(discriminator="kind"),
]


class ChatEventMessage(TypedDict):
    """The chat panel's live feed."""

    kind: Literal["chat_event"]
    event: ChatEvent


class ApprovalRequestMessage(TypedDict):
    """The agent wants to run ``tool``; ``asking`` lists the parameters (or the tool) whose policy is "ask"."""

    kind: Literal["approval_request"]
    id: str
    tool: str
    arguments: dict[str, Any]
    asking: list[str]
    label: NotRequired[str]


class ApprovalClosedMessage(TypedDict):
    """The approval request ``id`` was answered, timed out or cancelled."""

    kind: Literal["approval_closed"]
    id: str


class CodeMessage(TypedDict):
    """The answer to ``copy_code``: the audit's changes as a Python cell (``sim.audit.to_code()``)."""

    kind: Literal["code"]
    text: Annotated[str, Field(max_length=MAX_CODE_TEXT)]


KernelMessage = (
    ValuesRequest | ActionRequest | ChatEventMessage | ApprovalRequestMessage | ApprovalClosedMessage | CodeMessage
)
_kernel_message: TypeAdapter[KernelMessage] = TypeAdapter(
    Annotated[
        RequestMessage | ChatEventMessage | ApprovalRequestMessage | ApprovalClosedMessage | CodeMessage,
        Field(discriminator="kind"),
    ]
)
_chat_event_message: TypeAdapter[ChatEventMessage] = TypeAdapter(ChatEventMessage)


def request(request_id: str, op: Op, payload: Mapping[str, Any]) -> ValuesRequest | ActionRequest:
    """Build a kernel -> view request; ``payload["values"]`` is sent for ``apply`` and ``reset``,
    ``payload["name"]`` for ``action``."""
    if op == "action":
        return {"kind": "request", "id": request_id, "op": op, "payload": {"name": str(payload["name"])}}
    body: RequestPayload = {}
    if op not in ("state", "snapshot") and "values" in payload:
        body["values"] = payload["values"]
    return {"kind": "request", "id": request_id, "op": op, "payload": body}


def chat_event(event: Mapping[str, Any]) -> ChatEventMessage:
    """Build a ``chat_event`` from an agent event as a dict (``dataclasses.asdict``); raises
    :class:`ProtocolError` when the event is not one the panel knows."""
    message = {"kind": "chat_event", "event": dict(event)}
    try:
        return _chat_event_message.validate_python(message, strict=True)
    except ValidationError as exc:
        raise ProtocolError(_describe(exc, message, tagged=False)) from None


def approval_request(
    approval_id: str, tool: str, arguments: dict[str, Any], asking: list[str], label: str = ""
) -> ApprovalRequestMessage:
    """Build the panel's Approve / Deny prompt for one tool call (``label``: the arguments in short)."""
    message: ApprovalRequestMessage = {
        "kind": "approval_request",
        "id": approval_id,
        "tool": tool,
        "arguments": arguments,
        "asking": asking,
    }
    if label:
        message["label"] = label
    return message


def approval_closed(approval_id: str) -> ApprovalClosedMessage:
    """Build the notice that closes the prompt ``approval_id``."""
    return {"kind": "approval_closed", "id": approval_id}


def code_message(text: str) -> CodeMessage:
    """Build the ``code`` reply; code longer than :data:`MAX_CODE_TEXT` is replaced by a comment saying
    so (half a cell would not run)."""
    if len(text) > MAX_CODE_TEXT:
        text = (
            f"# the code is {len(text):,} characters, more than the panel copies ({MAX_CODE_TEXT:,});\n"
            "# run print(sim.audit.to_code()) or sim.to_cell() in a cell instead\n"
        )
    return {"kind": "code", "text": text}


def parse_kernel_message(content: Any) -> KernelMessage:
    """Validate a kernel -> view message as a view reads it (tests, fake frontends), or raise :class:`ProtocolError`."""
    if not isinstance(content, dict):
        raise ProtocolError(f"expected a JSON object, got {type(content).__name__}")
    try:
        return _kernel_message.validate_python(content, strict=True)
    except ValidationError as exc:
        raise ProtocolError(_describe(exc, content)) from None


# -- view -> kernel ---------------------------------------------------------------------------
# Models: the kernel reads these as objects. Validation is strict (no "1" for 1, no 1 for true),
# as the JSON Schema says; fields a message carries beyond these are ignored (docs/protocol.md, Versions).


class ErrorInfo(BaseModel):
    """What went wrong: a code from the shared table, words for people and models, and a hint."""

    model_config = ConfigDict(frozen=True)

    code: ErrorCode
    message: str = Field(max_length=4 * MAX_ERROR_TEXT)
    hint: str | None = None


class PictureData(BaseModel):
    """A picture of the page (1.8): a PNG in base64, at most :data:`MAX_PICTURE_SIDE` pixels a side and
    :data:`MAX_PICTURE_BYTES` bytes; what it holds is checked where it is decoded (``core/_picture.py``)."""

    model_config = ConfigDict(frozen=True)

    png: str = Field(min_length=1, max_length=MAX_PICTURE_BASE64)
    width: int = Field(ge=1, le=MAX_PICTURE_SIDE)
    height: int = Field(ge=1, le=MAX_PICTURE_SIDE)


class ReplyMessage(BaseModel):
    """The answer to request ``id``: :class:`OkReply` or :class:`ErrorReply`."""

    kind: Literal["reply"]
    id: str = Field(max_length=MAX_ID)
    view_id: str = Field(max_length=MAX_ID)
    ok: bool
    state: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    picture: PictureData | None = None


class OkReply(ReplyMessage):
    """The target handled the request; ``state`` is what it reported."""

    ok: Literal[True]
    state: dict[str, Any]
    error: None = None


class ErrorReply(ReplyMessage):
    """The request failed; ``error.code`` says why."""

    ok: Literal[False]
    state: None = None
    error: ErrorInfo
    picture: None = None


class EventMessage(BaseModel):
    """Something a view reports outside a request: one of the ``*Event`` models below."""

    kind: Literal["event"]
    view_id: str = Field(max_length=MAX_ID)
    type: Literal["attached", "ready", "detached", "state", "error", "visibility"]
    payload: Any = None


class AttachedPayload(TypedDict):
    """The handshake: ``protocol`` is the view's major version, an integer in every version."""

    protocol: int
    user_agent: NotRequired[str]
    visible: NotRequired[bool]  # 1.6: whether the notebook's page was visible when the view rendered


class ErrorPayload(TypedDict):
    """What failed outside a request."""

    code: ErrorCode
    message: Annotated[str, Field(max_length=4 * MAX_ERROR_TEXT)]


class AttachedEvent(EventMessage):
    """A view rendered (also after a page reload)."""

    type: Literal["attached"]
    payload: AttachedPayload


class ReadyEvent(EventMessage):
    """The view's target called ``SplitBrain.ready()``; a payload, if any, is ignored."""

    type: Literal["ready"]


class DetachedEvent(EventMessage):
    """The view was removed or its page is going away (best effort); a payload, if any, is ignored."""

    type: Literal["detached"]


class StateEvent(EventMessage):
    """A state the target reported on its own."""

    type: Literal["state"]
    payload: dict[str, Any]


class VisibilityPayload(TypedDict):
    """Whether the notebook's page can be seen (1.6): ``cause`` is the browser event that said so."""

    visible: bool
    # "visibilitychange", "freeze" or "resume" today; a bounded string, so a later cause is no
    # reason to drop the event
    cause: NotRequired[Annotated[str, Field(max_length=40)]]


class VisibilityEvent(EventMessage):
    """The notebook's page went to the background or came back (a tab switch, a laptop lid) (1.6)."""

    type: Literal["visibility"]
    payload: VisibilityPayload


class ErrorEvent(EventMessage):
    """The target or the view failed outside a request."""

    type: Literal["error"]
    payload: ErrorPayload


class ChatMessage(BaseModel):
    """Chat panel input."""

    kind: Literal["chat"]
    text: str = Field(max_length=20_000)


class CancelMessage(BaseModel):
    """The chat panel's Stop (or the retry banner's Abort) button."""

    kind: Literal["cancel"]


class SkipWaitMessage(BaseModel):
    """End a retry wait now."""

    kind: Literal["skip_wait"]


class ApprovalMessage(BaseModel):
    """The person's decision on approval request ``id``."""

    kind: Literal["approval"]
    id: str = Field(max_length=MAX_ID)
    approved: bool


class SetMessage(BaseModel):
    """A control in the parameter inspector moved; validated and audited like any call."""

    kind: Literal["set"]
    values: dict[str, Any] = Field(max_length=1000)


class CopyCodeMessage(BaseModel):
    """The chat panel's "Copy as code" button: the kernel answers with a ``code`` message."""

    kind: Literal["copy_code"]


class ActMessage(BaseModel):
    """An action's button in the parameter inspector: run it like any call (validated, audited) (1.5)."""

    kind: Literal["act"]
    name: str = Field(min_length=1, max_length=MAX_ACTION_NAME)


class PictureMessage(BaseModel):
    """A view's picture of its page (1.8), taken after the page settled from a change (at most once a
    second): the kernel keeps the last one for the notebook's saved outputs."""

    kind: Literal["picture"]
    view_id: str = Field(max_length=MAX_ID)
    picture: PictureData


ViewMessage = (
    OkReply
    | ErrorReply
    | AttachedEvent
    | ReadyEvent
    | DetachedEvent
    | StateEvent
    | ErrorEvent
    | VisibilityEvent
    | ChatMessage
    | CancelMessage
    | SkipWaitMessage
    | ApprovalMessage
    | SetMessage
    | CopyCodeMessage
    | ActMessage
    | PictureMessage
)


def _reply_tag(reply: Any) -> str | None:
    # By hand, not Field(discriminator="ok"): pydantic would match 1 to Literal[True]; the schema does not.
    ok = reply.get("ok") if isinstance(reply, dict) else getattr(reply, "ok", None)
    return "ok=true" if ok is True else "ok=false" if ok is False else None


_view_message: TypeAdapter[ViewMessage] = TypeAdapter(
    Annotated[
        Annotated[
            Annotated[OkReply, Tag("ok=true")] | Annotated[ErrorReply, Tag("ok=false")],
            Discriminator(_reply_tag, custom_error_type="reply_ok", custom_error_message="ok should be true or false"),
        ]
        | Annotated[
            AttachedEvent | ReadyEvent | DetachedEvent | StateEvent | ErrorEvent | VisibilityEvent,
            Field(discriminator="type"),
        ]
        | ChatMessage
        | CancelMessage
        | SkipWaitMessage
        | ApprovalMessage
        | SetMessage
        | CopyCodeMessage
        | ActMessage
        | PictureMessage,
        Field(discriminator="kind"),
    ]
)


def _kinds(*messages: Any) -> tuple[str, ...]:
    # A tuple, not a set: ``content.get("kind") in VIEW_MESSAGE_KINDS`` must not hash what a view sent.
    return tuple(sorted({value for message in messages for value in get_args(get_type_hints(message)["kind"])}))


VIEW_MESSAGE_KINDS = _kinds(*get_args(ViewMessage))  # what a view may send: the kernel's tap takes these
KERNEL_MESSAGE_KINDS = _kinds(*get_args(KernelMessage))


def parse_view_message(content: Any) -> ViewMessage:
    """Validate a custom message from a view, or raise :class:`ProtocolError` saying why.

    What a page sent is bounded here, before anything keeps it: a lone surrogate in its text is
    replaced by U+FFFD, and a state nested too deeply or holding too many values is replaced by the
    ``_truncated`` marker (``_bounds.py``; docs/protocol.md, *Bounds*).
    """
    if not isinstance(content, dict):
        raise ProtocolError(f"expected a JSON object, got {type(content).__name__}")
    carries_state = content.get("kind") == "reply" and "state" in content
    try:
        text = _json_text(content)
    except RecursionError:
        if not carries_state:
            raise ProtocolError("message nested deeper than JSON's encoder goes") from None
        # A reply settles its request all the same, with a marker instead of its state.
        content = {**content, "state": {"_truncated": True, "code": "too_deep", "limit": MAX_DEPTH}}
        text = _json_text(content)
    if len(text) > MAX_MESSAGE_BYTES and carries_state:
        content = {**content, "state": {"_truncated": True, "bytes": len(text)}}
        text = _json_text(content)
    if len(text) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {len(text)} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")
    content = repair_text(content, text)
    try:
        message = _view_message.validate_python(content, strict=True)
    except ValidationError as exc:
        raise ProtocolError(_describe(exc, content)) from None
    if isinstance(message, OkReply):
        message.state = bounded_state(message.state)
    elif isinstance(message, StateEvent):
        message.payload = bounded_state(message.payload)
    return message


def _json_text(value: Any) -> str:
    """``value`` as compact JSON, counted in characters as the view counts them (``JSON.stringify``);
    RecursionError past the encoder's depth."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"not a JSON message: {exc}") from None


def _describe(exc: ValidationError, content: Mapping[str, Any], *, tagged: bool = True) -> str:
    """``bad 'event' message: payload.protocol: Input should be a valid integer``, from the first error.

    pydantic's location holds the discriminating values of the tagged unions it went through (the
    kind unless the adapter was of one message, ``tagged=False``; a reply's ok, an event's type, a
    chat event's kind); the path given is the message's own.
    """
    first: ErrorDetails = exc.errors(include_url=False)[0]
    kind = content.get("kind")
    parts = [str(part) for part in first["loc"][1 if tagged else 0 :]]
    if kind in ("reply", "event", "request") and parts:  # a reply's ok, an event's type, a request's op
        parts = parts[1:]
    if kind == "chat_event" and len(parts) > 1 and parts[0] == "event":
        parts = ["event", *parts[2:]]
    if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        parts.append(str(first.get("ctx", {}).get("discriminator", "kind")).strip("'"))
    elif first["type"] == "reply_ok":
        parts.append("ok")
    return f"bad {kind!r} message: {'.'.join(parts) or 'kind'}: {first['msg']}"


# -- headless engine <-> host page (docs/protocol.md section 4) ---------------------------------
# Spoken only between the engine and the host page it ships with, never between versions: in the
# schema's $defs (EngineToHostPage, HostPageToEngine), not among its top-level directions. The
# engine checks what the host page sends by hand, state by state (hosts/_headless_page.py), so
# that a sampled advance is bounded as it arrives; these types say what that code accepts.


class HostSendOp(TypedDict):
    """A kernel -> view message of section 1, as the comm would deliver it."""

    op: Literal["send"]
    msg: dict[str, Any]


class HostValuesOp(TypedDict):
    """The ``values`` trait changed."""

    op: Literal["values"]
    values: dict[str, Any]


class HostReloadOp(TypedDict):
    """Load the page again, ``html`` replacing it when given."""

    op: Literal["reload"]
    html: NotRequired[str]


class HostHeightOp(TypedDict):
    """The iframe's height in pixels (the notebook view's sandbox frame sends it)."""

    op: Literal["height"]
    px: Annotated[float, Field(ge=0)]


class HostAdvanceOp(TypedDict):
    """Run the page's virtual clock ``ms`` forward (in steps of ``every`` ms when given)."""

    op: Literal["advance"]
    token: Annotated[str, Field(min_length=1)]
    ms: Annotated[float, Field(ge=0)]
    every: NotRequired[Annotated[float, Field(gt=0)]]
    max_chars: NotRequired[Annotated[int, Field(gt=0)]]


class HostCancelOp(TypedDict):
    """The engine gave up on advance ``token``."""

    op: Literal["cancel"]
    token: Annotated[str, Field(min_length=1)]


HostOp = HostSendOp | HostValuesOp | HostReloadOp | HostHeightOp | HostAdvanceOp | HostCancelOp
_host_op: TypeAdapter[HostOp] = TypeAdapter(Annotated[HostOp, Field(discriminator="op")])


class AdvanceOk(TypedDict):
    """A plain advance ended: the page's state then."""

    ok: Literal[True]
    state: dict[str, Any]


class SampledAdvanceOk(TypedDict):
    """A sampled advance ended: the states no ``_samples`` part carried, and the number of steps."""

    ok: Literal[True]
    states: list[Any]
    samples: Annotated[int, Field(ge=1)]


class AdvanceFailed(TypedDict):
    """An advance refused, cancelled or failed."""

    ok: Literal[False]
    error: ErrorInfo


class AdvanceResultMessage(TypedDict):
    """Advance ``token`` ended, once per ``advance`` op."""

    kind: Literal["_advance"]
    view_id: str
    token: str
    result: AdvanceOk | SampledAdvanceOk | AdvanceFailed


class AdvanceSamplesMessage(TypedDict):
    """The next states of the sampled advance ``token``, in step order, while it runs."""

    kind: Literal["_samples"]
    view_id: str
    token: str
    states: list[Any]


HostPageMessage = AdvanceResultMessage | AdvanceSamplesMessage
_host_page_message: TypeAdapter[HostPageMessage] = TypeAdapter(Annotated[HostPageMessage, Field(discriminator="kind")])


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every kernel <-> view message, as committed in
    ``docs/protocol.schema.json``: ``#/$defs/KernelToView`` and ``#/$defs/ViewToKernel``, one per direction,
    and the headless engine's ``#/$defs/EngineToHostPage`` and ``#/$defs/HostPageToEngine`` (section 4).

    pydantic's OpenAPI ``discriminator`` annotations are left out: ``oneOf`` says the same in plain JSON Schema.
    """
    directions: dict[str, TypeAdapter[Any]] = {
        "KernelToView": _kernel_message,
        "ViewToKernel": _view_message,
        "EngineToHostPage": _host_op,
        "HostPageToEngine": _host_page_message,
    }
    tops, definitions = TypeAdapter.json_schemas(
        [(name, "validation", adapter) for name, adapter in directions.items()], ref_template="#/$defs/{model}"
    )
    defs = {**definitions.get("$defs", {}), **{name: tops[(name, "validation")] for name in directions}}
    version = f"{PROTOCOL_VERSION}.{PROTOCOL_MINOR}"
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:splitbrain-widget:protocol:{version}",
        "title": f"splitbrain wire protocol {version}: kernel <-> view messages",
        "$comment": "Generated from splitbrain_widget/protocol.py by `python -m tests.test_protocol_schema`; "
        "do not edit. docs/protocol.md is the definition.",
        "oneOf": [{"$ref": "#/$defs/KernelToView"}, {"$ref": "#/$defs/ViewToKernel"}],
        "$defs": dict(sorted(defs.items())),
    }
    cleaned: dict[str, Any] = _without_discriminators(schema)
    return cleaned


def _without_discriminators(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _without_discriminators(value)
            for key, value in node.items()
            if not (key == "discriminator" and isinstance(value, dict) and "propertyName" in value)
        }
    if isinstance(node, list):
        return [_without_discriminators(item) for item in node]
    return node


def json_size(value: Any) -> int:
    """Length of ``value`` as compact JSON; a value that cannot be encoded counts as unbounded."""
    try:
        # Characters, not ASCII-escaped bytes: the view bounds states the same way (JSON.stringify length).
        return len(json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return MAX_MESSAGE_BYTES + 1


def bounded_state(state: Any, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """A target's state as a JSON object within every bound of a state, else the marker that replaces it:
    ``{"_invalid": why}`` for a non-object, ``{"_truncated": true, "bytes": n}`` past ``limit``
    characters of JSON, ``{"_truncated": true, "code": "too_deep" | "too_many_values", "limit": n}``
    past :data:`~splitbrain_widget.MAX_DEPTH` levels or
    :data:`~splitbrain_widget.MAX_NODES` values."""
    if not isinstance(state, dict):
        return {"_invalid": f"expected an object, got {type(state).__name__}"}
    too_deep = {"_truncated": True, "code": "too_deep", "limit": MAX_DEPTH}
    try:
        text = _json_text(state)
    except RecursionError:
        return too_deep
    except ProtocolError as exc:
        return {"_invalid": str(exc)}
    if len(text) > limit:
        return {"_truncated": True, "bytes": len(text)}
    if not within(text):  # counted in C first: most states need no walk at all
        depth, nodes = measure(state)
        if depth > MAX_DEPTH:
            return too_deep
        if nodes > MAX_NODES:
            return {"_truncated": True, "code": "too_many_values", "limit": MAX_NODES}
    return state


# -- what every tool returns ------------------------------------------------------------------


class ChangedValue(TypedDict):
    """A value a set or reset left: on a bound page, what the page's model holds, and ``asked`` (1.9)
    where that differs from the value asked (a drag lands on a pixel; a page keeps its own value)."""

    value: Any
    unit: NotRequired[str]
    asked: NotRequired[Any]


def changed_value(value: Any, unit: str | None) -> ChangedValue:
    """A value as ``changed`` carries it: with its parameter's unit where it has one."""
    return {"value": value, "unit": unit} if unit else {"value": value}


class ToolResult(BaseModel):
    """The result of one tool call, identical for Python callers and the model.

    ``ok`` says whether the call did what it asked: for a call that goes to the page, that the page
    answered it. ``applied`` says whether a page applied (or answered) the call; it is None only for
    calls that never go to a page (``get_parameters``, ``list_targets``). A change that reached no
    page is *kept, not applied*: ``ok=False`` with ``applied=False``, ``kept=True`` and the code
    saying why (``no_view``, ``protocol_mismatch``, ``not_ready``, ``timeout``); the kernel holds the
    values and every page that becomes ready gets them. ``error`` says what went wrong, ``changed``
    holds the values a set or reset changed (with units), ``values`` the current values where a call
    reads them, ``state`` the state the target reported, ``views_applied`` how many views confirmed,
    and ``evaluations`` (``seek`` only) every value tried with the observable the page reported there.
    """

    model_config = ConfigDict(frozen=True)

    ok: bool
    op: str = ""
    target: str = ""
    error: ErrorInfo | None = None
    message: str = ""
    changed: dict[str, ChangedValue] = Field(default_factory=dict)
    values: dict[str, Any] | None = None
    parameters: dict[str, dict[str, Any]] | None = None
    targets: list[dict[str, Any]] | None = None
    state: dict[str, Any] | None = None
    applied: bool | None = None
    kept: bool = False
    views_applied: int = 0
    # seek: every try in order, {"value": x, "observable": y} (y None where the page reported none)
    evaluations: list[dict[str, Any]] | None = Field(default=None, exclude_if=lambda v: v is None)
    answered_by: str | None = Field(default=None, exclude=True)  # the view whose reply won (audit only)
    picture: PictureData | None = Field(default=None, exclude=True)  # a snapshot's PNG (never the model's text)

    @classmethod
    def failure(cls, code: ErrorCode, message: str, *, hint: str | None = None, **fields: Any) -> ToolResult:
        """A failed result with one error."""
        return cls(ok=False, error=ErrorInfo(code=code, message=message, hint=hint), **fields)

    def for_model(self) -> dict[str, Any]:
        """The compact JSON the model sees: empty fields dropped, but ``ok`` and (for calls that go to
        the page) ``applied`` always there, so "kept for later" never reads like "done"."""
        compact = self.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {"ok": self.ok}
        if self.applied is not None:
            compact["applied"] = self.applied
        return compact

    def __str__(self) -> str:
        if not self.ok and self.error is not None:
            hint = f" ({self.error.hint})" if self.error.hint else ""
            return f"{self.error.code}: {self.error.message}{hint}"
        return self.message or "ok"
