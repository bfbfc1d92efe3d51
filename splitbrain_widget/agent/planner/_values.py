"""A number said with a unit as a parameter's value: converted to the parameter's unit (the case as
written first: "MHz" is not "mHz"), whole where the parameter takes whole numbers."""

from __future__ import annotations

from typing import Any

from ...core import _units
from ...manifest import Parameter
from ._format import fmt, tidy


def converted_to(param: Parameter, number: float, unit: str, delta: bool = False) -> float | None:
    """``number`` in ``unit`` in the parameter's unit (a difference where ``delta``: 10 degC is 10 K);
    None where it cannot be."""
    assert param.unit is not None
    convert = _units.convert_delta if delta else _units.convert
    for spelling in dict.fromkeys([unit, unit.lower()]):
        converted = convert(number, spelling, param.unit)
        if converted is not None:
            return converted
    return None


def in_its_unit(param: Parameter, number: float, unit: str | None) -> tuple[str, Any, str] | str:
    """(path, value, the conversion in words or "") for ``number`` said in ``unit``, or why it cannot be."""
    note = ""
    if unit and not param.unit:
        if _units.is_physical(unit):  # "count 5 km"; a count noun like "200 boids" is fine
            return f"{param.path} has no unit; I cannot use {unit} for it."
    elif unit and param.unit and not _units.same(unit, param.unit):
        converted = converted_to(param, number, unit)
        if converted is None:
            return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
        number, said = tidy(converted), number  # 4.35 m is 435 cm, not 434.99999999999994
        note = f"{fmt(said)} {unit} = {fmt(number)} {param.unit}"
    if param.type == "integer" and not float(number).is_integer():
        return f"{param.path} takes whole numbers; {fmt(number)} is not one."
    value: Any = round(number) if param.type == "integer" else tidy(number)
    return param.path, value, note
