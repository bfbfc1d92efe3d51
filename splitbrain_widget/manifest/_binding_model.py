"""Where a bound manifest says a page keeps its values and its readings: the parameter, observable,
action and ready bindings (the registry turns them into the page's glue, js/page/bindings.js)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    field_serializer,
    model_serializer,
    model_validator,
)

from ._errors import kind_of, shown
from ._names import attribute, events_list, js_path, non_blank, true_only

DOM_EVENTS = ("input", "change")


JsPath = Annotated[str, Field(strict=True), AfterValidator(js_path)]


Selector = Annotated[str, Field(strict=True), AfterValidator(non_blank)]


Source = Annotated[str, Field(strict=True), AfterValidator(non_blank)]


DomEvent = Literal["input", "change"]


class _Binding(BaseModel):
    """One of a few shapes told apart by which key it has (``global``, ``selector``, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True)
    KINDS: ClassVar[tuple[str, ...]] = ()  # the keys that say which shape this is, exactly one of them
    SHAPES: ClassVar[str] = ""  # the shapes in words, for error messages

    @model_validator(mode="before")
    @classmethod
    def _one_kind(cls, raw: Any) -> Any:
        if isinstance(raw, _Binding):
            return raw
        if not isinstance(raw, dict):
            raise ValueError(f"expected {cls.SHAPES}, got {kind_of(raw)} ({shown(raw)})")
        given = [k for k in cls.KINDS if raw.get(k) is not None or (k == "global" and raw.get("global_") is not None)]
        if not given:
            raise ValueError(f"expected {cls.SHAPES}, got {shown(raw)}")
        if len(given) > 1:
            raise ValueError(f"give only one of {' or '.join(repr(k) for k in given)}; expected {cls.SHAPES}")
        return raw

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys that are set: ``{"global": "sim.speed"}``, as the manifest says it."""
        return {k: v for k, v in handler(self).items() if v is not None}

    @property
    def kind(self) -> str:
        """Which shape this is: the one of its kind keys that is set."""
        return next(k for k in self.KINDS if getattr(self, "global_" if k == "global" else k) is not None)

    def _only_with(self, field: str, kind: str) -> None:
        if getattr(self, field) is not None and self.kind != kind:
            raise ValueError(f'@{field}: applies only to a {{"{kind}": ...}} binding')


class ParameterBinding(_Binding):
    """Where a bound page keeps a parameter: ``{"global": "sim.speed"}`` or ``{"selector": "#speed"}``.

    ``event`` (selector only): the events fired after the value is set, as a person's input fires
    them (default ``input`` then ``change``). ``after``: a global function called once the value is set.
    """

    KINDS = ("global", "selector")
    SHAPES = '{"global": "<dotted path>"} or {"selector": "<CSS selector>"}, optionally with "after"'

    global_: JsPath | None = Field(default=None, alias="global")
    selector: Selector | None = None
    event: Annotated[tuple[DomEvent, ...], BeforeValidator(events_list)] | None = None
    after: JsPath | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ParameterBinding:
        self._only_with("event", "selector")
        return self

    @field_serializer("event")
    def _event_list(self, event: tuple[str, ...] | None) -> list[str] | None:
        return None if event is None else list(event)


class ObservableRead(_Binding):
    """Where a bound page's observable is read: a global, a JS expression, or an element.

    ``{"selector": "#stats", "attr": "text", "number": true}``: ``attr`` is ``text`` (the trimmed
    text, the default), ``value`` or an attribute name; ``number`` takes the first number in it.
    """

    KINDS = ("global", "expr", "selector")
    SHAPES = '{"global": "<dotted path>"}, {"expr": "<JS expression>"} or {"selector": "<CSS selector>"}'

    global_: JsPath | None = Field(default=None, alias="global")
    expr: Source | None = None
    selector: Selector | None = None
    attr: Annotated[str, Field(strict=True), AfterValidator(attribute)] | None = None
    number: StrictBool | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ObservableRead:
        self._only_with("attr", "selector")
        self._only_with("number", "selector")
        return self


class ActionBinding(_Binding):
    """What an action does on a bound page: ``{"click": "<CSS selector>"}`` or ``{"call": "<function path>"}``."""

    KINDS = ("click", "call")
    SHAPES = '{"click": "<CSS selector>"} or {"call": "<dotted path of a function>"}'

    click: Selector | None = None
    call: JsPath | None = None


class ReadyCondition(_Binding):
    """When a bound page is ready: ``{"load": true}`` (the default), ``{"global": path}`` or ``{"selector": css}``.

    ``global``: the value exists and is not ``undefined``; ``selector``: an element matches.
    """

    KINDS = ("load", "global", "selector")
    SHAPES = '{"load": true}, {"global": "<dotted path>"} or {"selector": "<CSS selector>"}'

    load: Annotated[StrictBool, AfterValidator(true_only)] | None = None
    global_: JsPath | None = Field(default=None, alias="global")
    selector: Selector | None = None
