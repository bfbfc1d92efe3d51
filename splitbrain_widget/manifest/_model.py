"""The target manifest: config, schema and documentation in one JSON file.

The reference format loads unchanged::

    {"id": "preset-01", "type": "apply",
     "data": {"settings": {"speed": {"type": "number", "unit": "m/s", "value": 8.0}}}}

Parameters live in groups under ``data`` (groups may nest). A node is a parameter when it has a
``type`` whose value is a string; any other object is a group. Parameters are addressed by dotted
path (``settings.speed``) or, when unique, by leaf name (``speed``).

A *bound* manifest (:attr:`Manifest.bound`) steers a page that knows nothing of splitbrain: each
parameter says where its value lives (``"bind": {"global": "sim.speed"}`` or
``{"selector": "#speed"}``), each observable where to read it (``"read": {"expr": "..."}``), and the
registry generates the glue (``_bindings.py``, ``js/bindings.js``).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidationError,
    field_serializer,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..protocol import MAX_ACTION_NAME

ParamType = Literal["number", "integer", "boolean", "string", "array"]
ItemType = Literal["number", "integer", "boolean", "string"]
PARAM_TYPES: tuple[str, ...] = ("number", "integer", "boolean", "string", "array")
MAX_STRING_LENGTH = 10_000
MAX_ARRAY_LENGTH = 10_000
# A dotted path of JavaScript identifiers (``sim.params.speed``): what a binding may name in a page.
JS_PATH_PATTERN = r"^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a parameter's, group's, observable's or action's name
ACTION_NAME_PATTERN = NAME_PATTERN
MAX_NAME = MAX_ACTION_NAME  # characters: what an ``action`` request carries (protocol.py)
# What every JavaScript object has (Object.prototype's members and a function's prototype): never a name.
_OBJECT_MEMBERS = frozenset(
    [
        "constructor",
        "prototype",
        "toString",
        "toLocaleString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
    ]
)
DOM_EVENTS = ("input", "change")


class ParameterError(ValueError):
    """A parameter name or value was refused.

    ``code`` is one of ``unknown_param``, ``invalid_value`` or ``readonly``; ``hint`` suggests
    what to do instead (the closest real names, the allowed range).
    """

    def __init__(self, code: str, message: str, *, name: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.name = name
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ManifestError(ValueError):
    """A manifest failed to load; ``problems`` lists ``"<field path>: <what was expected>"`` lines."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in problems))


# -- bindings: where a bound page keeps its values ---------------------------------------------

# Words a generated accessor cannot name (``() => (delete)`` would not compile and would take every
# other accessor of the page down with it).
_RESERVED_WORDS = (
    "arguments await break case catch class const continue debugger default delete do else enum eval export "
    "extends false finally for function if implements import in instanceof interface let new null package "
    "private protected public return static super switch this throw true try typeof var void while with yield"
)
_JS_RESERVED = frozenset(_RESERVED_WORDS.split())
_JS_PATH_EXAMPLE = "expected a dotted path of JavaScript identifiers such as 'sim.speed'"


def _js_path(value: str) -> str:
    if not re.fullmatch(JS_PATH_PATTERN, value):
        raise ValueError(f"{_JS_PATH_EXAMPLE}, got {_show(value)}")
    reserved = next((part for part in value.split(".") if part in _JS_RESERVED), None)
    if reserved is not None:
        raise ValueError(f"'{reserved}' is a JavaScript reserved word; {_JS_PATH_EXAMPLE}, got {_show(value)}")
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("expected a non-empty string")
    return value


def _attribute(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_:][-A-Za-z0-9_:.]*", value):
        raise ValueError(f"expected 'text', 'value' or an attribute name such as 'data-count', got {_show(value)}")
    return value


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot name a parameter, a group, an observable or an action; None when it can.

    A name is a plain identifier (:data:`NAME_PATTERN`, at most :data:`MAX_NAME` characters) that no
    JavaScript object already has: names become keys of the objects a page is given and reads, where
    ``__proto__`` would set a prototype and ``constructor`` shadow one.
    """
    if not isinstance(value, str) or not re.fullmatch(NAME_PATTERN, value):
        return f"expected letters, digits and '_', not starting with a digit, got {_show(value)}"
    if len(value) > MAX_NAME:
        return f"expected at most {MAX_NAME} characters, got {len(value)}"
    if value.startswith("__") or value in _OBJECT_MEMBERS:
        return f"{_show(value)} is a name every JavaScript object has already (choose another)"
    return None


def _plain_name(value: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _true(value: bool) -> bool:
    if not value:
        raise ValueError("expected true; leave 'ready' out to wait for the page's load event")
    return value


def _events(value: Any) -> Any:
    if isinstance(value, list | tuple) and not value:
        raise ValueError("expected 'input', 'change' or a list of them, got an empty list")
    return (value,) if isinstance(value, str) else value


JsPath = Annotated[str, Field(strict=True), AfterValidator(_js_path)]
"""A dotted path of JS identifiers into the page's global scope (``window`` properties and top-level ``let``)."""
Selector = Annotated[str, Field(strict=True), AfterValidator(_non_blank)]
Source = Annotated[str, Field(strict=True), AfterValidator(_non_blank)]
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
            raise ValueError(f"expected {cls.SHAPES}, got {_kind(raw)} ({_show(raw)})")
        given = [k for k in cls.KINDS if raw.get(k) is not None or (k == "global" and raw.get("global_") is not None)]
        if not given:
            raise ValueError(f"expected {cls.SHAPES}, got {_show(raw)}")
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
    event: Annotated[tuple[DomEvent, ...], BeforeValidator(_events)] | None = None
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
    attr: Annotated[str, Field(strict=True), AfterValidator(_attribute)] | None = None
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

    load: Annotated[StrictBool, AfterValidator(_true)] | None = None
    global_: JsPath | None = Field(default=None, alias="global")
    selector: Selector | None = None


class Action(BaseModel):
    """Something a target can be told to do (``run``, ``reset_view``), by name.

    On a bound page ``bind`` says how (click a button, call a function); any other page handles
    actions itself with ``SplitBrain.onAction``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(strict=True), AfterValidator(_plain_name)]
    description: str | None = None
    label: str | None = None
    bind: ActionBinding | None = None


class Parameter(BaseModel):
    """One steerable value of a target, with its type, unit, range and default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ParamType
    value: Any = None
    unit: str | None = None
    label: str | None = None
    description: str | None = None
    min: float | None = None
    max: float | None = None
    step: float | None = Field(default=None, gt=0)
    enum: list[Any] | None = Field(default=None, min_length=1)
    readonly: StrictBool = False
    length: int | None = Field(default=None, ge=1, le=MAX_ARRAY_LENGTH)
    items: ItemType | None = None
    bind: ParameterBinding | None = None
    path: str = Field(default="", exclude=True)

    @model_validator(mode="after")
    def _consistent(self) -> Parameter:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        numeric = self.type in ("number", "integer") or self.item_type in ("number", "integer")
        for bound in ("min", "max", "step"):
            if getattr(self, bound) is not None and not numeric:
                raise ValueError(f"'{bound}' applies only to number, integer or numeric array parameters")
        if (self.length is not None or self.items is not None) and self.type != "array":
            raise ValueError("'length' and 'items' apply only to array parameters")
        if self.enum is not None:
            if self.type == "array":
                raise ValueError("'enum' does not apply to array parameters")
            for i, option in enumerate(self.enum):
                try:
                    _check_scalar(self, self.type, option, "enum entry")
                except ParameterError as exc:
                    raise ValueError(f"@enum.{i}: {_detail(exc)}") from None
        if self.bind is not None and self.bind.selector is not None and self.type == "array":
            raise ValueError("@bind.selector: a form control holds one value; bind an array parameter to a global")
        if self.value is None:
            raise ValueError("@value: the default value is required")
        # The default must satisfy the parameter's own schema.
        try:
            object.__setattr__(self, "value", _coerce_value(self, self.value, "default value"))
        except ParameterError as exc:
            raise ValueError(f"@value: default {_detail(exc)}") from None
        return self

    @property
    def name(self) -> str:
        """The leaf name (last segment of the dotted path)."""
        return self.path.rsplit(".", 1)[-1]

    @property
    def item_type(self) -> str | None:
        """The element type of an array parameter (declared, or inferred from the default)."""
        if self.type != "array":
            return None
        if self.items is not None:
            return self.items
        if isinstance(self.value, list | tuple) and self.value:
            if all(isinstance(v, bool) for v in self.value):
                return "boolean"
            if all(isinstance(v, str) for v in self.value):
                return "string"
        return "number"

    def describe(self) -> str:
        """What a valid value looks like, in words: ``number in m/s, 0..50``."""
        kind = f"array of {self.length or 'any number of'} {self.item_type}s" if self.type == "array" else self.type
        parts = [kind]
        if self.unit:
            parts.append(f"in {self.unit}")
        if self.min is not None or self.max is not None:
            lo = "-inf" if self.min is None else f"{self.min:g}"
            hi = "inf" if self.max is None else f"{self.max:g}"
            parts.append(f"from {lo} to {hi}")
        if self.enum is not None:
            parts.append("one of " + ", ".join(json.dumps(e) for e in self.enum))
        return " ".join(parts)

    def coerce(self, value: Any) -> Any:
        """Return ``value`` validated against this parameter, or raise :class:`ParameterError`."""
        if self.readonly:
            raise ParameterError(
                "readonly",
                f"{self.path} is read-only and cannot be set",
                name=self.path,
                hint="read it with get_parameters",
            )
        return self.check_value(value)

    def check_value(self, value: Any) -> Any:
        """Like :meth:`coerce`, but a read-only parameter's value is checked rather than refused."""
        return _coerce_value(self, value, "value")


class Observable(BaseModel):
    """A quantity the target reports in its state (for example ``range`` in m).

    ``depends_on`` names the parameters that move it (dotted paths, most influential first); the
    manifest checks them against its parameters. ``settles_in`` says how many simulated seconds
    after a change it takes to show the change's effect (a flock's mean speed); a goal seeker lets
    that much time pass before it reads it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(strict=True), AfterValidator(_plain_name)]
    unit: str | None = None
    depends_on: tuple[str, ...] = ()
    settles_in: float | None = Field(default=None, gt=0, le=3600, strict=True)
    description: str | None = None
    read: ObservableRead | None = None

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``depends_on`` dumps as a list, and not at all when empty."""
        out: dict[str, Any] = handler(self)
        if "depends_on" in out:
            if self.depends_on:
                out["depends_on"] = list(self.depends_on)
            else:
                del out["depends_on"]
        return out


class Manifest(BaseModel):
    """A target's manifest. Build one with :meth:`from_dict`, :meth:`from_file` or :meth:`from_json`.

    Every pydantic entry point (``Manifest(**raw)``, ``model_validate``, ``model_validate_json``)
    builds the same manifest, ``parameters`` included, or raises a ``ValidationError`` whose
    locations name the failing fields (``data.settings.speed.type``). ``from_dict`` and friends
    raise :class:`ManifestError` instead, with the source file in front of every problem.
    ``parameters`` is derived from ``data`` and cannot be passed in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    type: Literal["apply"] = "apply"
    title: str | None = None
    description: str | None = None
    data: dict[str, Any]
    observables: dict[str, Observable] = Field(default_factory=dict)
    actions: dict[str, Action] = Field(default_factory=dict)
    csp: str | None = None
    ready: ReadyCondition | None = None
    setup: Annotated[str, Field(strict=True)] | None = None
    kit: StrictBool = False
    parameters: dict[str, Parameter] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _normalise_observables(cls, raw: Any) -> Any:
        return _by_name(_observables_by_name(raw), "actions")

    @property
    def bound(self) -> bool:
        """Whether the page is steered through bindings (the registry generates its handlers).

        True when any parameter has ``bind``, any observable ``read``, or ``ready`` / ``setup`` is given.
        """
        bound_params = (p for p, param in self.parameters.items() if param.bind is not None)
        read_observables = (name for name, o in self.observables.items() if o.read is not None)
        return _bound_by(bound_params, read_observables, self.ready, self.setup) is not None

    # -- construction -------------------------------------------------------------------------

    @model_validator(mode="wrap")
    @classmethod
    def _build_parameters(cls, raw: Any, handler: ModelWrapValidatorHandler[Manifest]) -> Manifest:
        """Collect ``parameters`` from ``data`` on every entry point, reporting all problems at once."""
        if not isinstance(raw, dict):
            return handler(raw)  # an existing Manifest, or a type error pydantic reports itself
        problems: list[InitErrorDetails] = []
        params: dict[str, Parameter] = {}
        if "parameters" in raw:
            problems.append(
                _problem(("parameters",), "unknown field; parameters are declared under 'data'", raw["parameters"])
            )
            raw = {k: v for k, v in raw.items() if k != "parameters"}
        data = raw.get("data")
        if isinstance(data, dict):
            _collect(data, ("data",), [], params, problems)
            if not data:
                problems.append(_problem(("data",), "expected at least one parameter group", data))
        raw = _resolve_depends_on(raw, params, problems, complete=isinstance(data, dict) and bool(data))
        _check_bindings(raw, params, problems)
        try:
            manifest = handler(raw)
        except ValidationError as exc:
            if not problems:
                raise
            errors: list[InitErrorDetails] = [
                InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
                for e in exc.errors()
            ]
            raise ValidationError.from_exception_data(cls.__name__, [*errors, *problems]) from None
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        object.__setattr__(manifest, "parameters", params)
        return manifest

    @classmethod
    def from_dict(cls, raw: Any, *, source: str = "") -> Manifest:
        """Validate a decoded manifest; raise :class:`ManifestError` naming every failing field."""
        if not isinstance(raw, dict):
            raise ManifestError(source, [f"(top level): expected a JSON object, got {_kind(raw)}"])
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise ManifestError(source, _format_errors(exc)) from None

    @classmethod
    def from_json(cls, text: str, *, source: str = "") -> Manifest:
        """Parse and validate manifest JSON text."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(source, [f"line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"]) from None
        return cls.from_dict(raw, source=source)

    @classmethod
    def from_file(cls, path: str | Path) -> Manifest:
        """Load a manifest file; errors name the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ManifestError(str(path), [f"cannot read: {exc}"]) from None
        return cls.from_json(text, source=str(path))

    # -- lookups ------------------------------------------------------------------------------

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default value, by dotted path."""
        return {path: p.value for path, p in self.parameters.items()}

    def resolve(self, name: str) -> Parameter:
        """Find a parameter by dotted path (with or without ``data.``) or unique leaf name."""
        return _resolve(self.parameters, name, f" in target {self.id}")

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """The closest real parameter paths to ``name``."""
        return _suggest(self.parameters, name, n)

    def varies(self, observable: str) -> tuple[str, ...]:
        """The parameters that move ``observable`` (dotted paths, most influential first); ``()`` when none.

        Raises ``KeyError`` for an observable the manifest does not declare.
        """
        if observable not in self.observables:
            known = ", ".join(self.observables) or "none"
            raise KeyError(f"unknown observable '{observable}' in target {self.id} (observables: {known})")
        return self.observables[observable].depends_on

    def names(self) -> str:
        """All parameter paths, comma separated."""
        return ", ".join(self.parameters)

    def coerce(self, name: str, value: Any) -> Any:
        """Return ``value`` validated for parameter ``name``, or raise :class:`ParameterError`."""
        return self.resolve(name).coerce(value)

    def coerce_many(self, values: Mapping[str, Any], *, allow_readonly: bool = False) -> dict[str, Any]:
        """Validate several values; keys come back as dotted paths. Fails on the first bad one."""
        out: dict[str, Any] = {}
        for name, value in values.items():
            param = self.resolve(name)
            out[param.path] = param.check_value(value) if allow_readonly else param.coerce(value)
        return out


def _resolve(parameters: Mapping[str, Parameter], name: str, where: str = "") -> Parameter:
    """:meth:`Manifest.resolve` on a parameter table (``where`` ends the unknown-name message)."""
    if not isinstance(name, str) or not name:
        raise ParameterError("unknown_param", f"parameter names are strings, got {_kind(name)}", name=str(name))
    key = name.removeprefix("data.")
    if key in parameters:
        return parameters[key]
    candidates = [p for p in parameters.values() if p.name == key]
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        paths = ", ".join(p.path for p in candidates)
        raise ParameterError(
            "unknown_param", f"'{name}' is ambiguous: it names {paths}", name=name, hint=f"use one of {paths}"
        )
    suggestions = _suggest(parameters, key)
    known = ", ".join(parameters)
    hint = f"did you mean {' or '.join(suggestions)}?" if suggestions else f"known parameters: {known}"
    raise ParameterError("unknown_param", f"unknown parameter '{name}'{where}", name=name, hint=hint)


def _suggest(parameters: Mapping[str, Parameter], name: str, n: int = 3) -> list[str]:
    by_leaf = {p.name: p.path for p in parameters.values()}
    options = list(parameters) + list(by_leaf)
    found = difflib.get_close_matches(name, options, n=n, cutoff=0.6)
    if not found:
        found = [o for o in options if name.lower() in o.lower()][:n]
    out: list[str] = []
    for f in found:
        path = by_leaf.get(f, f) if f not in parameters else f
        if path not in out:
            out.append(path)
    return out


# -- observables and actions ------------------------------------------------------------------


def _observables_by_name(raw: Any) -> Any:
    """``observables`` as ``{name: {"name": name, ...}}``, whether given as a list or an object."""
    return _by_name(raw, "observables")


def _by_name(raw: Any, field: str) -> Any:
    """``raw[field]`` as ``{name: {"name": name, ...}}``, whether given as a list or an object."""
    if isinstance(raw, dict) and isinstance(raw.get(field), list):
        raw = dict(raw)
        entries = {}
        for i, entry in enumerate(raw[field]):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ValueError(f"{field}[{i}] must be an object with a 'name' string")
            entries[entry["name"]] = entry
        raw[field] = entries
    if isinstance(raw, dict) and isinstance(raw.get(field), dict):
        raw = dict(raw)
        raw[field] = {
            k: ({"name": k, **v} if isinstance(v, dict) and "name" not in v else v) for k, v in raw[field].items()
        }
    return raw


def _bound_by(bound_params: Iterable[str], read_observables: Iterable[str], ready: object, setup: object) -> str | None:
    """What makes a manifest bound, in words (``data.settings.speed has 'bind'``); None when it is not."""
    for path in bound_params:
        return f"data.{path} has 'bind'"
    for name in read_observables:
        return f"observables.{name} has 'read'"
    if ready is not None:
        return "it has 'ready'"
    if setup is not None:
        return "it has 'setup'"
    return None


def _check_bindings(raw: dict[str, Any], params: Mapping[str, Parameter], problems: list[InitErrorDetails]) -> None:
    """In a bound manifest everything needs a binding; in any other, actions are the page's own business."""
    try:
        raw = _by_name(raw, "actions")
    except ValueError:
        return  # pydantic reports the malformed list
    observables = raw.get("observables") if isinstance(raw.get("observables"), dict) else {}
    actions = raw.get("actions") if isinstance(raw.get("actions"), dict) else {}
    assert isinstance(observables, dict) and isinstance(actions, dict)
    bound_params = (path for path, param in params.items() if param.bind is not None)
    read_observables = (name for name, entry in observables.items() if _has(entry, "read"))
    reason = _bound_by(bound_params, read_observables, raw.get("ready"), raw.get("setup"))
    for key, entry in actions.items():
        if isinstance(entry, dict) and entry.get("name", key) != key:
            problems.append(_problem(("actions", key, "name"), f"expected {key!r}, the action's key", entry["name"]))
    if reason is None:
        for key, entry in actions.items():
            if _has(entry, "bind"):
                problems.append(
                    _problem(
                        ("actions", key, "bind"),
                        "only a bound manifest binds actions (one whose parameters have 'bind'); "
                        "a page that is not bound handles its actions with SplitBrain.onAction",
                        entry["bind"],
                    )
                )
        return
    why = f"the manifest is bound ({reason})"
    missing: list[tuple[tuple[str, ...], str, str]] = [
        (("data", *path.split(".")), "bind", f"every parameter needs a 'bind': {ParameterBinding.SHAPES}")
        for path, param in params.items()
        if param.bind is None
    ]
    missing += [
        (("observables", name), "read", f"every observable needs a 'read': {ObservableRead.SHAPES}")
        for name, entry in observables.items()
        if isinstance(entry, dict) and not _has(entry, "read")
    ]
    missing += [
        (("actions", key), "bind", f"every action needs a 'bind': {ActionBinding.SHAPES}")
        for key, entry in actions.items()
        if isinstance(entry, dict) and not _has(entry, "bind")
    ]
    for where, field, needed in missing:
        problems.append(_problem((*where, field), f"missing; {why}, so {needed}", None))


def _has(entry: Any, key: str) -> bool:
    return isinstance(entry, dict) and entry.get(key) is not None


def _resolve_depends_on(
    raw: dict[str, Any], params: Mapping[str, Parameter], problems: list[InitErrorDetails], *, complete: bool
) -> dict[str, Any]:
    """Check every observable's ``depends_on`` against the parameters; leaf names become dotted paths.

    Entries that are not strings are left to pydantic. An unknown name is not reported when it may
    name a parameter that failed to load (``complete`` false, or a problem under its path).
    """
    try:
        raw = _observables_by_name(raw)
    except ValueError:
        return raw  # pydantic reports the malformed list
    observables = raw.get("observables")
    if not isinstance(observables, dict):
        return raw
    broken = {
        ".".join(str(part) for part in p["loc"][1:k])
        for p in problems
        if p["loc"][:1] == ("data",)
        for k in range(2, len(p["loc"]) + 1)
    }
    broken |= {b.rsplit(".", 1)[-1] for b in broken}
    variable = [path for path, p in params.items() if p.type in ("number", "integer") and not p.readonly]
    expected = "expected a number or integer parameter: " + (
        f"one of {', '.join(variable)}" if variable else "this manifest has none that can be set"
    )
    resolved: dict[str, Any] = {}
    for name, entry in observables.items():
        deps = entry.get("depends_on") if isinstance(entry, dict) else None
        if not isinstance(deps, list):
            resolved[name] = entry
            continue
        seen: dict[str, int] = {}
        out: list[Any] = []
        for i, dep in enumerate(deps):
            out.append(dep)
            if not isinstance(dep, str):
                continue
            loc = ("observables", name, "depends_on", i)
            if not dep:
                problems.append(_problem(loc, f"empty name; {expected}", dep))
                continue
            try:
                param = _resolve(params, dep)
            except ParameterError as exc:
                if complete and dep.removeprefix("data.") not in broken:
                    found = str(exc) if exc.hint.startswith("did you mean") else exc.message
                    problems.append(_problem(loc, f"{found}; {expected}", dep))
                continue
            if param.type not in ("number", "integer"):
                kind = ("an " if param.type == "array" else "a ") + param.type
                problems.append(_problem(loc, f"{param.path} is {kind} parameter; {expected}", dep))
            elif param.readonly:
                problems.append(_problem(loc, f"{param.path} is read-only; {expected}", dep))
            elif param.path in seen:
                first = f"depends_on.{seen[param.path]}"
                problems.append(_problem(loc, f"repeats {param.path} (also {first}); list each parameter once", dep))
            else:
                seen[param.path] = i
                out[-1] = param.path
        resolved[name] = {**entry, "depends_on": out}
    return {**raw, "observables": resolved}


# -- value coercion ---------------------------------------------------------------------------


def unwrap(value: Any) -> Any:
    """``{"value": x}`` -> ``x``; anything else unchanged."""
    if isinstance(value, dict) and "value" in value and len(value) <= 2 and set(value) <= {"value", "unit"}:
        return value["value"]
    return value


def _coerce_value(param: Parameter, value: Any, what: str) -> Any:
    value = unwrap(value)
    if param.type == "array":
        return _coerce_array(param, value, what)
    result = _check_scalar(param, param.type, value, what)
    if param.enum is not None and result not in param.enum:
        options = ", ".join(json.dumps(e) for e in param.enum)
        raise _invalid(param, f"expected one of {options}, got {_show(value)}", hint=f"choose one of {options}")
    return result


def _coerce_array(param: Parameter, value: Any, what: str) -> list[Any]:
    if isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
    if not isinstance(value, list | tuple):
        raise _invalid(param, f"expected {param.describe()}, got {_show(value)}")
    if len(value) > MAX_ARRAY_LENGTH:
        raise _invalid(param, f"expected at most {MAX_ARRAY_LENGTH} elements, got {len(value)}")
    if param.length is not None and len(value) != param.length:
        raise _invalid(param, f"expected exactly {param.length} elements, got {len(value)}: {_show(value)}")
    item_type = param.item_type or "number"
    out = []
    for i, item in enumerate(value):
        try:
            out.append(_check_scalar(param, item_type, unwrap(item), f"element {i}"))
        except ParameterError as exc:
            raise _invalid(param, f"element {i}: {_detail(exc)}") from None
    return out


def _check_scalar(param: Parameter, kind: str, value: Any, what: str) -> Any:
    """Validate one scalar of type ``kind`` (with the parameter's bounds)."""
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _invalid(param, f"expected true or false, got {_show(value)}")
    if kind == "string":
        if not isinstance(value, str):
            raise _invalid(param, f"expected a string, got {_show(value)}")
        if len(value) > MAX_STRING_LENGTH:
            raise _invalid(param, f"expected at most {MAX_STRING_LENGTH} characters, got {len(value)}")
        return value
    # number / integer
    number: int | float
    if isinstance(value, bool):
        raise _invalid(param, f"expected {_expect(param, kind)}, got a boolean ({_show(value)})")
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str):
        try:
            text = value.strip()
            number = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise _invalid(param, f"expected {_expect(param, kind)}, got {_show(value)}") from None
    else:
        raise _invalid(param, f"expected {_expect(param, kind)}, got {_show(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise _invalid(param, f"expected a finite {kind}, got {_show(value)}")
    if kind == "integer" and not isinstance(number, int):
        if not number.is_integer():
            raise _invalid(param, f"expected an integer, got {_show(value)}")
        number = int(number)
    if param.min is not None and number < param.min:
        raise _invalid(param, f"{_show(number)} is below the minimum {param.min:g}{_unit(param)}", hint=_range(param))
    if param.max is not None and number > param.max:
        raise _invalid(param, f"{_show(number)} is above the maximum {param.max:g}{_unit(param)}", hint=_range(param))
    return number


def _detail(exc: ParameterError) -> str:
    """The part of a ParameterError message after the parameter name."""
    return exc.message.split(": ", 1)[-1]


def _invalid(param: Parameter, detail: str, hint: str = "") -> ParameterError:
    return ParameterError(
        "invalid_value",
        f"{param.path or 'value'}: {detail}",
        name=param.path,
        hint=hint or f"expected {param.describe()}",
    )


def _expect(param: Parameter, kind: str) -> str:
    return f"a {kind}" + (f" in {param.unit}" if param.unit else "")


def _unit(param: Parameter) -> str:
    return f" {param.unit}" if param.unit else ""


def _range(param: Parameter) -> str:
    lo = "-inf" if param.min is None else f"{param.min:g}"
    hi = "inf" if param.max is None else f"{param.max:g}"
    return f"allowed range {lo} to {hi}{_unit(param)}"


def _show(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, allow_nan=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for t, n in names.items():
        if isinstance(value, t):
            return n
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


# -- walking the data tree ---------------------------------------------------------------------


_PROBLEM = "manifest_field"  # the error type of a problem found while collecting parameters


def _problem(loc: tuple[str | int, ...], message: str, value: Any) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError(_PROBLEM, "{problem}", {"problem": message}), loc=loc, input=value)


def _collect(
    node: dict[str, Any],
    loc: tuple[str, ...],
    prefix: list[str],
    out: dict[str, Parameter],
    problems: list[InitErrorDetails],
) -> None:
    for key, child in node.items():
        here = (*loc, key)
        problem = name_problem(key)
        if problem is not None:
            problems.append(_problem(here, problem, key))
            continue
        if not isinstance(child, dict):
            problems.append(
                _problem(
                    here,
                    f"expected a parameter object (with 'type' and 'value') or a group, got {_kind(child)}",
                    child,
                )
            )
            continue
        if "type" in child and not isinstance(child["type"], dict):
            _collect_parameter(child, here, ".".join([*prefix, key]), out, problems)
        elif not child:
            problems.append(_problem(here, "empty group", child))
        elif "value" in child:
            problems.append(_problem((*here, "type"), f"missing; expected one of {', '.join(PARAM_TYPES)}", child))
        else:
            _collect(child, here, [*prefix, key], out, problems)


def _collect_parameter(
    raw: dict[str, Any], loc: tuple[str, ...], path: str, out: dict[str, Parameter], problems: list[InitErrorDetails]
) -> None:
    if raw.get("type") not in PARAM_TYPES:
        problems.append(
            _problem(
                (*loc, "type"),
                f"expected one of {', '.join(PARAM_TYPES)}, got {_show(raw.get('type'))}",
                raw.get("type"),
            )
        )
        return
    if "value" not in raw:
        problems.append(_problem((*loc, "value"), "missing; every parameter needs a default value", raw))
        return
    if "path" in raw:  # derived from where the parameter sits; a manifest cannot set it
        problems.append(_problem((*loc, "path"), "unknown field", raw["path"]))
        return
    try:
        out[path] = Parameter.model_validate({**raw, "path": path})
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            where, message = _describe(err)
            problems.append(_problem((*loc, *where), message, err.get("input") if where else raw))


def _describe(err: Any) -> tuple[tuple[str | int, ...], str]:
    """One pydantic error as (field location, what was expected)."""
    loc: tuple[str | int, ...] = tuple(p for p in err["loc"] if not str(p).startswith("function-"))
    msg: str = err["msg"].removeprefix("Value error, ")
    kind = err["type"]
    if kind == _PROBLEM:
        return loc, msg
    if msg.startswith("@"):  # a validator naming the field it refused: "@value: ..."
        field, msg = msg[1:].split(": ", 1)
        loc = (*loc, *field.split("."))
    if kind == "extra_forbidden":
        msg = "unknown field"
    elif kind == "missing":
        msg = "missing; this field is required"
    elif kind == "literal_error":
        msg = "expected " + msg.removeprefix("Input should be ")
    if kind not in ("missing", "extra_forbidden", "value_error"):
        msg += f" (got {_show(err.get('input'))})"
    return loc, msg


def _format_errors(exc: ValidationError) -> list[str]:
    """``"<field path>: <what was expected>"`` lines, one per problem."""
    lines = []
    for err in exc.errors(include_url=False):
        loc, msg = _describe(err)
        where = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{where}: {msg}")
    return lines
