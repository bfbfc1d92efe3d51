"""Where a bound manifest says a page keeps its values and its readings: the parameter, observable,
action and ready bindings (the registry turns them into the page's glue, js/page/bindings.js)."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    Tag,
    field_serializer,
    model_serializer,
    model_validator,
)

from ._errors import SHAPE_TAG, kind_of, shown
from ._names import attribute, events_list, js_path, non_blank, true_only, true_only_all

DOM_EVENTS = ("input", "change")


JsPath = Annotated[str, Field(strict=True), AfterValidator(js_path)]


Selector = Annotated[str, Field(strict=True), AfterValidator(non_blank)]


Source = Annotated[str, Field(strict=True), AfterValidator(non_blank)]


DomEvent = Literal["input", "change", "click"]  # "click": a checkbox whose page listens to onclick


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
        given = [k for k in cls.KINDS if raw.get(k) is not None or raw.get(cls._field(k)) is not None]
        if not given:
            raise ValueError(f"expected {cls.SHAPES}, got {shown(raw)}")
        if len(given) > 1:
            raise ValueError(f"give only one of {' or '.join(repr(k) for k in given)}; expected {cls.SHAPES}")
        return raw

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys that are set: ``{"global": "sim.speed"}``, as the manifest says it."""
        return {k: v for k, v in handler(self).items() if v is not None}

    @classmethod
    def _field(cls, key: str) -> str:
        """The field a kind key names: itself, or the one it is the alias of (``global`` is ``global_``)."""
        return next((name for name, field in cls.model_fields.items() if field.alias == key), key)

    @property
    def kind(self) -> str:
        """Which shape this is: the one of its kind keys that is set."""
        return next(k for k in self.KINDS if getattr(self, self._field(k)) is not None)

    def _only_with(self, field: str, kind: str) -> None:
        if getattr(self, field) is not None and self.kind != kind:
            raise ValueError(f'@{field}: applies only to a {{"{kind}": ...}} binding')


PageValue = str | int | float | bool | None


def _scale(value: float) -> float:
    if value == 0:
        raise ValueError("expected a non-zero number (the page's value is the manifest's times scale)")
    return value


class _Conversion(BaseModel):
    """How a value crosses between the manifest and the page: ``page = value * scale + offset`` for a
    number, or ``values``: the page's value for each manifest value (``{"true": "1", "false": "0"}``,
    keyed by the manifest's value as text)."""

    scale: Annotated[float, Field(strict=False), AfterValidator(_scale)] | None = None
    offset: float | None = None
    values: dict[str, PageValue] | None = Field(default=None, min_length=1)

    def _conversion_consistent(self) -> None:
        if self.values is not None and (self.scale is not None or self.offset is not None):
            raise ValueError("give 'values' or 'scale'/'offset', not both")
        if self.values is not None:
            pages = [json.dumps(v) for v in self.values.values()]
            twice = sorted({p for p in pages if pages.count(p) > 1})
            if twice:
                raise ValueError(f"@values: two manifest values map to the same page value {twice[0]}")


class PressedRead(_Binding):
    """How a toggle button shows that it is on: ``{"attr": "aria-pressed"}`` (the default: on when the
    attribute is ``"true"``), ``{"class": "active"}`` (on while the button has the class) or
    ``{"text": "Pause"}`` (on while its trimmed label is that text: a play button that says "Pause"
    while the simulation runs)."""

    KINDS = ("attr", "class", "text")
    SHAPES = '{"attr": "<attribute>"}, {"class": "<class name>"} or {"text": "<label while on>"}'

    attr: Annotated[str, Field(strict=True), AfterValidator(attribute)] | None = None
    class_: Annotated[str, Field(strict=True, pattern=r"^[^\s]+$")] | None = Field(default=None, alias="class")
    text: Source | None = None


class ParameterBinding(_Binding, _Conversion):
    """Where a bound page keeps a parameter: ``{"global": "sim.speed"}``, ``{"selector": "#speed"}``
    or ``{"call": "frameRate"}`` (a function the page is set through, called with the value; the
    parameter then needs a ``read``), or ``{"calls": {"true": "loop", "false": "noLoop"}}`` (a function
    per value of a boolean or enum, called with nothing; it too needs a ``read``), or ``{"toggle":
    "#play", "pressed": {"text": "Pause"}}`` (a boolean shown by a button that a click turns on and
    off; ``pressed`` says how it shows that it is on, by default its ``aria-pressed``).

    ``event`` (selector only): the events fired after the value is set, as a person's input fires
    them (default ``input`` then ``change``; ``click`` for a checkbox whose page listens to its
    clicks: a plain event, which runs the page's handlers and does not toggle the box again).
    ``after``: a global function called once the value is set. ``scale`` / ``offset`` / ``values``:
    how the page stores the value (see :class:`_Conversion`).
    """

    KINDS = ("global", "selector", "call", "calls", "drag", "toggle")
    SHAPES = (
        '{"global": "<dotted path>"}, {"selector": "<CSS selector>"}, {"call": "<dotted path of a function>"}, '
        '{"calls": {"<value>": "<function>", ...}}, {"drag": "<CSS selector of a handle>"} or '
        '{"toggle": "<CSS selector of a button>"}, optionally with "after"'
    )

    global_: JsPath | None = Field(default=None, alias="global")
    selector: Selector | None = None
    call: JsPath | None = None
    # a function per value, called with no argument: {"true": "loop", "false": "noLoop"}
    calls: Annotated[dict[str, JsPath], Field(min_length=1)] | None = None
    drag: Selector | None = None  # a custom slider's handle, dragged along its track as a person does
    toggle: Selector | None = None  # a button a click turns on and off (a boolean parameter)
    pressed: PressedRead | None = None  # how the toggle shows that it is on (default: aria-pressed)
    track: Selector | None = None  # the element it slides along (default: the handle's parent)
    axis: Literal["x", "y"] | None = None  # "y": a vertical slider, its value growing upwards
    # the page's values at the track's start and end, in the page's units (as its model holds them); it
    # falls for a track whose value falls as the handle moves right (or up); default: the parameter's
    # min and max, converted with scale/offset
    span: tuple[float, float] | None = None
    # where the handle goes, when that is not the value itself: a JS expression over the parameters'
    # names (the values of the same call, else what the page holds) giving the page's value on the
    # track (a share of what is left after another handle: "triangles / 100 * occupied / 100")
    position: Source | None = None
    event: Annotated[tuple[DomEvent, ...], BeforeValidator(events_list)] | None = None
    after: JsPath | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ParameterBinding:
        self._only_with("event", "selector")
        self._only_with("track", "drag")
        self._only_with("axis", "drag")
        self._only_with("span", "drag")
        self._only_with("position", "drag")
        if self.position is not None and self.span is None:
            raise ValueError(
                "@position: a handle placed by an expression needs 'span', the page's values at its track's ends"
            )
        self._only_with("pressed", "toggle")
        if self.toggle is not None and (self.values is not None or self.scale is not None or self.offset is not None):
            raise ValueError("@toggle: a button is on or off; give no 'values', 'scale' or 'offset'")
        if self.calls is not None and (self.values is not None or self.scale is not None or self.offset is not None):
            raise ValueError(
                "@calls: a function per value converts the value itself; give no 'values', 'scale' or 'offset'"
            )
        if self.span is not None and self.span[0] == self.span[1]:
            raise ValueError(
                f"@span: expected the page's values at the track's two ends, which differ, got {list(self.span)}"
            )
        self._conversion_consistent()
        return self

    @field_serializer("event")
    def _event_list(self, event: tuple[str, ...] | None) -> list[str] | None:
        return None if event is None else list(event)

    @field_serializer("span")
    def _span_list(self, span: tuple[float, float] | None) -> list[float] | None:
        return None if span is None else list(span)


class ObservableRead(_Binding, _Conversion):
    """Where a bound page's value is read (an observable, or a parameter's model): a global, a JS
    expression, or an element.

    ``{"selector": "#stats", "attr": "text", "number": true}``: ``attr`` is ``text`` (the trimmed
    text, the default), ``value`` or an attribute name; ``number`` takes the first number in what is
    read, of any kind (a global holding ``"15"``). ``scale`` / ``offset`` / ``values``: how the page
    stores it (see :class:`_Conversion`).
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
        self._conversion_consistent()
        return self


MAX_STEPS = 20  # steps of one action
MAX_KEY = 32  # characters of a key step's key ("ArrowUp", "Enter", "p")
MAX_ASSIGN_CHARS = 10_000  # characters of an assign step's value as JSON
MAX_ARGS = 8  # arguments of one call
WAIT_S = 5.0  # a wait step's default timeout
MAX_WAIT_S = 60.0  # and its longest


def _wait_timeout(value: float) -> float:
    if not 0 < value <= MAX_WAIT_S:
        raise ValueError(f"expected seconds in (0, {MAX_WAIT_S:g}], got {value}")
    return value


Modifier = Literal["shift", "ctrl", "alt", "meta"]


def _key(value: str) -> str:
    if not 0 < len(value) <= MAX_KEY:
        raise ValueError(
            f"expected a key as KeyboardEvent.key names it ('p', ' ', 'Enter', 'ArrowUp'), got {shown(value)}"
        )
    return value


def _json_value(value: Any) -> Any:
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ValueError(f"expected a JSON value, got {shown(value)}") from None
    if len(text) > MAX_ASSIGN_CHARS:
        raise ValueError(f"expected at most {MAX_ASSIGN_CHARS} characters of JSON, got {len(text)}")
    return value


class ActionBinding(_Binding):
    """One step of what an action does on a bound page:

    - ``{"click": "<CSS selector>"}``; with ``"all": true``, every element it matches, in order;
    - ``{"key": "p", "modifiers": ["shift"], "on": "<CSS selector>"}``: a key pressed as a person
      presses it (``keydown``, ``keypress`` for a printable key, ``keyup``), at the element ``on``
      names (default: the focused element, else the page's body), bubbling up to the window;
    - ``{"call": "<function path>", "args": [...]}``;
    - ``{"set": {"<parameter>": value, ...}}``, through the parameters' own bindings (the manifest
      checks the names and values);
    - ``{"assign": "<dotted path>", "value": <JSON>}``: the page's model set to a value (a fresh copy
      each run), as data: ``{"assign": "trail", "value": []}`` clears a trace;
    - ``{"wait": "<JS expression>", "timeout": 5}``: the next step runs once the expression holds, and
      the action fails if it does not within ``timeout`` seconds (on a headless page: of the page's
      virtual time, which runs meanwhile). With ``"since": "start"`` the expression is a value, read
      when the action begins, and the wait holds once it differs from that (with ``"by": n``, once a
      number has grown by ``n``): "one more generation" is ``{"wait": "generation", "since":
      "start"}``.
    """

    KINDS = ("click", "key", "call", "set", "assign", "wait")
    SHAPES = (
        '{"click": "<CSS selector>"}, {"key": "<key>"}, {"call": "<dotted path of a function>", "args": [...]}, '
        '{"set": {"<parameter>": <value>}}, {"assign": "<dotted path>", "value": <JSON>} or '
        '{"wait": "<JS expression>", "timeout": <seconds>}'
    )

    click: Selector | None = None
    all: Annotated[StrictBool, AfterValidator(true_only_all)] | None = None
    key: Annotated[str, Field(strict=True), AfterValidator(_key)] | None = None
    modifiers: Annotated[tuple[Modifier, ...], Field(max_length=4)] | None = None
    on: Selector | None = None
    call: JsPath | None = None
    args: Annotated[tuple[Any, ...], Field(max_length=MAX_ARGS)] | None = None
    set: Annotated[dict[str, Any], Field(min_length=1)] | None = None
    assign: JsPath | None = None
    value: Annotated[Any, AfterValidator(_json_value)] = None
    wait: Source | None = None
    timeout: Annotated[float, Field(strict=False), AfterValidator(_wait_timeout)] | None = None
    since: Literal["start"] | None = None
    by: Annotated[float, Field(strict=False, gt=0)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ActionBinding:
        self._only_with("args", "call")
        self._only_with("timeout", "wait")
        self._only_with("since", "wait")
        self._only_with("all", "click")
        self._only_with("modifiers", "key")
        self._only_with("on", "key")
        if self.by is not None and self.since is None:
            raise ValueError('@by: applies only to a wait with "since": "start"')
        if self.kind == "assign" and "value" not in self.model_fields_set:
            raise ValueError("@value: an assign step needs the value to assign (JSON: a number, text, [], {}...)")
        if self.kind != "assign" and "value" in self.model_fields_set:
            raise ValueError('@value: applies only to an {"assign": ...} step')
        if self.modifiers is not None and len(set(self.modifiers)) != len(self.modifiers):
            raise ValueError(f"@modifiers: each at most once, got {list(self.modifiers)}")
        if self.args is not None:
            for i, arg in enumerate(self.args):
                try:
                    json.dumps(arg, allow_nan=False)
                except ValueError:
                    raise ValueError(f"@args.{i}: expected a JSON value, got {shown(arg)}") from None
        return self

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys that are set; an assign's ``value`` even when it is ``null``."""
        dumped = {k: v for k, v in handler(self).items() if v is not None}
        if self.assign is not None:
            dumped["value"] = handler(self).get("value")
        return dumped

    @field_serializer("modifiers")
    def _modifier_list(self, modifiers: tuple[str, ...] | None) -> list[str] | None:
        return None if modifiers is None else list(modifiers)

    @field_serializer("args")
    def _args_list(self, args: tuple[Any, ...] | None) -> list[Any] | None:
        return None if args is None else list(args)


class WhenCondition(_Binding):
    """When an action applies: ``{"expr": "!running"}``, a JS expression over the page's globals; while it is
    false the action does nothing (a "start" never stops a running page)."""

    KINDS = ("expr",)
    SHAPES = '{"expr": "<JS expression>"}'

    expr: Source | None = None


class SetupScript(BaseModel):
    """The manifest's ``setup``: a script run before the page's own scripts (``"when": "before"``, the
    default, and what a plain string means) or once the page is ready, before it says so (``"ready"``:
    for a flag the page's own script resets while loading)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    script: Source
    when: Literal["before", "ready"] = "before"


class ReadyCondition(_Binding):
    """When a bound page is ready: ``{"load": true}`` (the default), ``{"global": path}`` or ``{"selector": css}``.

    ``global``: the value exists and is not ``undefined``; ``selector``: an element matches.
    """

    KINDS = ("load", "global", "selector")
    SHAPES = '{"load": true}, {"global": "<dotted path>"} or {"selector": "<CSS selector>"}'

    load: Annotated[StrictBool, AfterValidator(true_only)] | None = None
    global_: JsPath | None = Field(default=None, alias="global")
    selector: Selector | None = None


def _one_or_many(value: Any) -> str:
    return f"{SHAPE_TAG}many" if isinstance(value, list | tuple) else f"{SHAPE_TAG}one"


ActionBind = Annotated[
    Annotated[ActionBinding, Tag(f"{SHAPE_TAG}one")]
    | Annotated[tuple[ActionBinding, ...], Field(min_length=1, max_length=MAX_STEPS), Tag(f"{SHAPE_TAG}many")],
    Discriminator(_one_or_many),
]
"""An action's ``bind``: one step, or a list of steps run in order."""


def _text_or_object(value: Any) -> str:
    return f"{SHAPE_TAG}object" if isinstance(value, dict | SetupScript) else f"{SHAPE_TAG}text"


Setup = Annotated[
    Annotated[str, Field(strict=True), Tag(f"{SHAPE_TAG}text")] | Annotated[SetupScript, Tag(f"{SHAPE_TAG}object")],
    Discriminator(_text_or_object),
]
"""The manifest's ``setup``: a script (run before the page's own), or ``{"script": ..., "when": ...}``."""
