"""A manifest's parts: a parameter (its type, unit, range, binding and the coercion of its values),
an observable and an action."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    model_serializer,
    model_validator,
)

from ._binding_model import ActionBind, ActionBinding, ObservableRead, ParameterBinding, WhenCondition
from ._coerce import MAX_ARRAY_LENGTH, ItemType, ParamType, check_scalar, coerce_value
from ._errors import ParameterError, detail
from ._names import plain_name


def _key(value: Any) -> str:
    """A value as a ``values`` map's key: its text as JavaScript's ``String()`` writes it (``true``, ``1``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


MAX_WORDS_CHARS = 60  # an alias or a named value's name: a few words
MAX_NAMED = 20  # named values of one parameter


def _spoken_name(text: str) -> str:
    """An alias or a named value's name: a few words people say, trimmed and lower-cased."""
    words = " ".join(text.split()).lower()
    if not words or len(words) > MAX_WORDS_CHARS:
        raise ValueError(f"expected a few words (1 to {MAX_WORDS_CHARS} characters), got {text!r}")
    if not any(c.isalpha() for c in words):
        raise ValueError(f"expected words, got {text!r} (a number is no name)")
    return words


SpokenName = Annotated[str, Field(strict=True), AfterValidator(_spoken_name)]
Aliases = Annotated[tuple[SpokenName, ...], Field(max_length=MAX_NAMED)]


class Action(BaseModel):
    """Something a target can be told to do (``run``, ``reset_view``), by name.

    On a bound page ``bind`` says how (click a button, call a function); any other page handles
    actions itself with ``SplitBrain.onAction``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(strict=True), AfterValidator(plain_name)]
    description: str | None = None
    label: str | None = None
    aliases: Aliases = ()  # other names people use for it ("fire" for launch)
    bind: ActionBind | None = None
    when: WhenCondition | None = None

    @model_validator(mode="after")
    def _when_needs_bind(self) -> Action:
        if self.when is not None and self.bind is None:
            raise ValueError("@when: applies only to an action with a 'bind' (on a bound page)")
        return self

    @property
    def steps(self) -> tuple[ActionBinding, ...]:
        """The bound steps, in order (one, or the list the manifest gives)."""
        if self.bind is None:
            return ()
        return self.bind if isinstance(self.bind, tuple) else (self.bind,)

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if isinstance(self.bind, tuple):
            out["bind"] = [step.model_dump(mode="json") for step in self.bind]
        return out


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
    aliases: Aliases = ()  # other names people use for it ("air resistance" for drag)
    named: Annotated[dict[SpokenName, Any], Field(max_length=MAX_NAMED)] | None = None  # {"moon": 1.62}
    bind: ParameterBinding | None = None
    read: ObservableRead | None = None  # the page's model, when it is not where the value is set
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
                    check_scalar(self, self.type, option, "enum entry")
                except ParameterError as exc:
                    raise ValueError(f"@enum.{i}: {detail(exc)}") from None
        if self.bind is not None and self.bind.selector is not None and self.type == "array":
            raise ValueError("@bind.selector: a form control holds one value; bind an array parameter to a global")
        self._check_binding()
        if self.named is not None:
            if self.type == "array":
                raise ValueError("'named' does not apply to array parameters")
            named = {}
            for key, option in self.named.items():
                try:
                    named[key] = coerce_value(self, option, "named value")
                except ParameterError as exc:
                    raise ValueError(f"@named.{key}: {detail(exc)}") from None
            object.__setattr__(self, "named", named)
        if self.value is None:
            raise ValueError("@value: the default value is required")
        # The default must satisfy the parameter's own schema.
        try:
            object.__setattr__(self, "value", coerce_value(self, self.value, "default value"))
        except ParameterError as exc:
            raise ValueError(f"@value: default {detail(exc)}") from None
        return self

    def _check_binding(self) -> None:
        """``read`` only beside a ``bind``; a ``call`` needs a ``read``; conversions that fit the type."""
        if self.read is not None and self.bind is None:
            raise ValueError("@read: a parameter's own read applies only beside its 'bind' (on a bound page)")
        if self.bind is not None and self.bind.call is not None and self.read is None:
            raise ValueError(
                "@bind.call: a parameter set through a call needs a 'read' saying where the page holds the value"
            )
        if self.bind is not None and self.bind.calls is not None:
            if self.read is None:
                raise ValueError(
                    "@bind.calls: a parameter set through calls needs a 'read' saying where the page holds the value"
                )
            if self.type != "boolean" and not self.enum:
                raise ValueError("@bind.calls: a function per value applies to a boolean or an enum parameter")
            self._check_values("bind", self.bind.calls, key="calls")
        if self.bind is not None and self.bind.drag is not None:
            if self.read is None:
                raise ValueError("@bind.drag: a dragged control needs a 'read' saying where the page holds the value")
            if self.type not in ("number", "integer") or (
                self.bind.span is None and (self.min is None or self.max is None)
            ):
                raise ValueError(
                    "@bind.drag: a dragged control sets a number or integer parameter with a 'min' and a 'max' "
                    "(its track runs from one to the other), or a 'span' naming the values at the track's ends"
                )
        if self.bind is not None and self.bind.toggle is not None and self.type != "boolean":
            raise ValueError(
                f"@bind.toggle: a button that is on or off sets a boolean parameter, this one is {self.type}"
            )
        for field, conv in (("bind", self.bind), ("read", self.read)):
            if conv is None:
                continue
            if (conv.scale is not None or conv.offset is not None) and self.type not in ("number", "integer"):
                raise ValueError(f"@{field}.scale: 'scale' and 'offset' apply only to number and integer parameters")
            if conv.values is not None:
                self._check_values(field, conv.values)

    def _check_values(self, field: str, values: dict[str, Any], key: str = "values") -> None:
        """Every key of a ``values`` (or ``calls``) map is a value of this parameter (as text); a boolean
        or enum maps them all."""
        where = f"{field}.{key}"
        if self.type == "array":
            raise ValueError(f"@{where}: '{key}' does not apply to array parameters")
        for value in values:
            raw: Any = value
            if self.type == "boolean":
                raw = {"true": True, "false": False}.get(value, value)
            elif self.type in ("number", "integer"):
                try:
                    raw = float(value)
                except ValueError:
                    raise ValueError(f"@{where}.{value}: expected a number as the key, got {value!r}") from None
            try:
                coerce_value(self, raw, "values key")
            except ParameterError as exc:
                raise ValueError(f"@{where}.{value}: {detail(exc)}") from None
        every = ["true", "false"] if self.type == "boolean" else [_key(e) for e in self.enum or []]
        missing = [k for k in every if k not in values]
        if missing:
            what = "value" if key == "values" else "function"
            raise ValueError(f"@{where}: no page {what} for {', '.join(missing)} (each value needs one)")

    @property
    def seekable(self) -> bool:
        """Whether a seek can vary it: a number over its range, a boolean or an enum value by value
        (read-only or not: that is checked apart)."""
        return self.type in ("number", "integer", "boolean") or (self.type == "string" and bool(self.enum))

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
        return coerce_value(self, value, "value")


class Observable(BaseModel):
    """A quantity the target reports in its state (for example ``range`` in m).

    ``depends_on`` names the parameters that move it (dotted paths, most influential first); the
    manifest checks them against its parameters. ``settles_in`` says how many simulated seconds
    after a change it takes to show the change's effect (a flock's mean speed); a goal seeker lets
    that much time pass before it reads it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, Field(strict=True), AfterValidator(plain_name)]
    unit: str | None = None
    depends_on: tuple[str, ...] = ()
    settles_in: float | None = Field(default=None, gt=0, le=3600, strict=True)
    description: str | None = None
    aliases: Aliases = ()  # other names people use for it ("distance" for range)
    read: ObservableRead | None = None

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``depends_on`` and ``aliases`` dump as lists, and not at all when empty."""
        out: dict[str, Any] = handler(self)
        for key in ("depends_on", "aliases"):
            if key in out:
                if getattr(self, key):
                    out[key] = list(getattr(self, key))
                else:
                    del out[key]
        return out
