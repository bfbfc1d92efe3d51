"""A value checked and converted to a parameter's type: numbers, integers, booleans, strings,
enums and arrays, with the manifest's range and the error that says what was expected."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ._errors import ParameterError, detail, shown

if TYPE_CHECKING:
    from ._parameter import Parameter

import contextlib
import json
import math
from typing import Any


def unwrap(value: Any) -> Any:
    """``{"value": x}`` -> ``x``; anything else unchanged."""
    if isinstance(value, dict) and "value" in value and len(value) <= 2 and set(value) <= {"value", "unit"}:
        return value["value"]
    return value


def coerce_value(param: Parameter, value: Any, what: str) -> Any:
    value = unwrap(value)
    if param.type == "array":
        return coerce_array(param, value, what)
    result = check_scalar(param, param.type, value, what)
    if param.enum is not None and result not in param.enum:
        options = ", ".join(json.dumps(e) for e in param.enum)
        raise _invalid(param, f"expected one of {options}, got {shown(value)}", hint=f"choose one of {options}")
    return result


def coerce_array(param: Parameter, value: Any, what: str) -> list[Any]:
    if isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
    if not isinstance(value, list | tuple):
        raise _invalid(param, f"expected {param.describe()}, got {shown(value)}")
    if len(value) > MAX_ARRAY_LENGTH:
        raise _invalid(param, f"expected at most {MAX_ARRAY_LENGTH} elements, got {len(value)}")
    if param.length is not None and len(value) != param.length:
        raise _invalid(param, f"expected exactly {param.length} elements, got {len(value)}: {shown(value)}")
    item_type = param.item_type or "number"
    out = []
    for i, item in enumerate(value):
        try:
            out.append(check_scalar(param, item_type, unwrap(item), f"element {i}"))
        except ParameterError as exc:
            raise _invalid(param, f"element {i}: {detail(exc)}") from None
    return out


def check_scalar(param: Parameter, kind: str, value: Any, what: str) -> Any:
    """Validate one scalar of type ``kind`` (with the parameter's bounds)."""
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _invalid(param, f"expected true or false, got {shown(value)}")
    if kind == "string":
        if not isinstance(value, str):
            raise _invalid(param, f"expected a string, got {shown(value)}")
        if len(value) > MAX_STRING_LENGTH:
            raise _invalid(param, f"expected at most {MAX_STRING_LENGTH} characters, got {len(value)}")
        return value
    # number / integer
    number: int | float
    if isinstance(value, bool):
        raise _invalid(param, f"expected {_expect(param, kind)}, got a boolean ({shown(value)})")
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str):
        try:
            text = value.strip()
            number = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise _invalid(param, f"expected {_expect(param, kind)}, got {shown(value)}") from None
    else:
        raise _invalid(param, f"expected {_expect(param, kind)}, got {shown(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise _invalid(param, f"expected a finite {kind}, got {shown(value)}")
    if kind == "integer" and not isinstance(number, int):
        if not number.is_integer():
            raise _invalid(param, f"expected an integer, got {shown(value)}")
        number = int(number)
    if param.min is not None and number < param.min:
        raise _invalid(param, f"{shown(number)} is below the minimum {param.min:g}{_unit(param)}", hint=_range(param))
    if param.max is not None and number > param.max:
        raise _invalid(param, f"{shown(number)} is above the maximum {param.max:g}{_unit(param)}", hint=_range(param))
    return number


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


ParamType = Literal["number", "integer", "boolean", "string", "array"]


ItemType = Literal["number", "integer", "boolean", "string"]


PARAM_TYPES: tuple[str, ...] = ("number", "integer", "boolean", "string", "array")


MAX_STRING_LENGTH = 10_000


MAX_ARRAY_LENGTH = 10_000
