"""The target manifest: config, schema and documentation in one JSON file.

The reference format loads unchanged::

    {"id": "preset-01", "type": "apply",
     "data": {"settings": {"speed": {"type": "number", "unit": "m/s", "value": 8.0}}}}

Parameters live in groups under ``data`` (groups may nest). A node is a parameter when it has a
``type`` whose value is a string; any other object is a group. Parameters are addressed by dotted
path (``settings.speed``) or, when unique, by leaf name (``speed``).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

ParamType = Literal["number", "integer", "boolean", "string", "array"]
ItemType = Literal["number", "integer", "boolean", "string"]
PARAM_TYPES: tuple[str, ...] = ("number", "integer", "boolean", "string", "array")
MAX_STRING_LENGTH = 10_000
MAX_ARRAY_LENGTH = 10_000


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

    name: str
    unit: str | None = None
    depends_on: tuple[str, ...] = ()
    settles_in: float | None = Field(default=None, gt=0, le=3600, strict=True)
    description: str | None = None

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
    csp: str | None = None
    parameters: dict[str, Parameter] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _normalise_observables(cls, raw: Any) -> Any:
        return _observables_by_name(raw)

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


# -- observables ------------------------------------------------------------------------------


def _observables_by_name(raw: Any) -> Any:
    """``observables`` as ``{name: {"name": name, ...}}``, whether given as a list or an object."""
    if isinstance(raw, dict) and isinstance(raw.get("observables"), list):
        raw = dict(raw)
        obs = {}
        for i, entry in enumerate(raw["observables"]):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ValueError(f"observables[{i}] must be an object with a 'name' string")
            obs[entry["name"]] = entry
        raw["observables"] = obs
    if isinstance(raw, dict) and isinstance(raw.get("observables"), dict):
        raw = dict(raw)
        raw["observables"] = {
            k: ({"name": k, **v} if isinstance(v, dict) and "name" not in v else v)
            for k, v in raw["observables"].items()
        }
    return raw


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
        if not key or "." in key:
            problems.append(_problem(here, "names must be non-empty and must not contain '.'", key))
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
    loc: tuple[str | int, ...] = tuple(p for p in err["loc"] if p != "function-after[_consistent()]")
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
