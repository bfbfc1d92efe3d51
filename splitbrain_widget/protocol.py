"""Wire messages, error codes and the tool result, as written down in ``docs/protocol.md``.

``js/protocol.js`` is the other translation of the same page.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 1 << 20  # 1 MiB of JSON from a view, whatever it carries
MAX_ERROR_TEXT = 500

ErrorCode = Literal[
    "no_view",
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
    "internal_error",
]
ERROR_CODES: tuple[str, ...] = ErrorCode.__args__  # type: ignore[attr-defined]
Op = Literal["apply", "reset", "state"]


# -- kernel -> view ---------------------------------------------------------------------------


class RequestMessage(TypedDict):
    kind: Literal["request"]
    id: str
    op: Op
    payload: dict[str, Any]


# -- view -> kernel ---------------------------------------------------------------------------


class ErrorInfo(BaseModel):
    """What went wrong: a code from the shared table, words for people and models, and a hint."""

    model_config = ConfigDict(frozen=True)

    code: ErrorCode
    message: str = Field(max_length=4 * MAX_ERROR_TEXT)
    hint: str | None = None


class ReplyMessage(BaseModel):
    kind: Literal["reply"]
    id: str = Field(max_length=200)
    view_id: str = Field(max_length=200)
    ok: bool
    state: dict[str, Any] | None = None
    error: ErrorInfo | None = None


class EventMessage(BaseModel):
    kind: Literal["event"]
    view_id: str = Field(max_length=200)
    type: Literal["attached", "ready", "detached", "state", "error"]
    payload: Any = None


class ChatMessage(BaseModel):
    kind: Literal["chat"]
    text: str = Field(max_length=20_000)


class CancelMessage(BaseModel):
    kind: Literal["cancel"]


class SkipWaitMessage(BaseModel):
    kind: Literal["skip_wait"]


class ApprovalMessage(BaseModel):
    kind: Literal["approval"]
    id: str = Field(max_length=200)
    approved: bool


class SetMessage(BaseModel):
    kind: Literal["set"]
    values: dict[str, Any] = Field(max_length=1000)


ViewMessage = ReplyMessage | EventMessage | ChatMessage | CancelMessage | SkipWaitMessage | ApprovalMessage | SetMessage
_view_message: TypeAdapter[ViewMessage] = TypeAdapter(Annotated[ViewMessage, Field(discriminator="kind")])


class ProtocolError(ValueError):
    """A message from a view had the wrong shape or size; it is dropped."""


def parse_view_message(content: Any) -> ViewMessage:
    """Validate a custom message from a view, or raise :class:`ProtocolError` saying why."""
    if not isinstance(content, dict):
        raise ProtocolError(f"expected a JSON object, got {type(content).__name__}")
    size = json_size(content)
    if size > MAX_MESSAGE_BYTES and content.get("kind") == "reply" and "state" in content:
        # Settle the request all the same, with the marker instead of the state.
        content = {**content, "state": {"_truncated": True, "bytes": size}}
        size = json_size(content)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {size} bytes exceeds the {MAX_MESSAGE_BYTES}-byte limit")
    try:
        return _view_message.validate_python(content)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "kind"
        raise ProtocolError(f"bad {content.get('kind')!r} message: {where}: {first['msg']}") from None


def json_size(value: Any) -> int:
    """Length of ``value`` as compact JSON; a value that cannot be encoded counts as unbounded."""
    try:
        # Characters, not ASCII-escaped bytes: the view bounds states the same way (JSON.stringify length).
        return len(json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return MAX_MESSAGE_BYTES + 1


def bounded_state(state: Any, limit: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """A target's state as a JSON object no larger than ``limit``; bigger or non-object states are replaced."""
    if not isinstance(state, dict):
        return {"_invalid": f"expected an object, got {type(state).__name__}"}
    size = json_size(state)
    if size > limit:
        return {"_truncated": True, "bytes": size}
    return state


def request(request_id: str, op: Op, payload: dict[str, Any]) -> RequestMessage:
    """Build a kernel -> view request."""
    return {"kind": "request", "id": request_id, "op": op, "payload": payload}


# -- what every tool returns ------------------------------------------------------------------


class ChangedValue(TypedDict):
    value: Any
    unit: NotRequired[str]


class ToolResult(BaseModel):
    """The result of one tool call, identical for Python callers and the model.

    ``ok`` says whether the call did what it asked: for a call that goes to the page, that the page
    answered it. ``applied`` says whether a page applied (or answered) the call; it is None only for
    calls that never go to a page (``get_parameters``, ``list_targets``). A change that reached no
    page is *kept, not applied*: ``ok=False`` with ``applied=False``, ``kept=True`` and the code
    saying why (``no_view``, ``protocol_mismatch``, ``not_ready``, ``timeout``); the kernel holds the
    values and every page that becomes ready gets them. ``error`` says what went wrong, ``changed``
    holds the values a set or reset changed (with units), ``values`` the current values where a call
    reads them, ``state`` the state the target reported, and ``views_applied`` how many views confirmed.
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
    answered_by: str | None = Field(default=None, exclude=True)  # the view whose reply won (audit only)

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
