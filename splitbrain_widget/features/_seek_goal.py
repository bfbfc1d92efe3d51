"""A seek's arguments read and checked (the goal with its unit, the parameter to vary, the range to
try), the small types a seek is made of, and the failure that says which argument is wrong."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..manifest import Manifest, Parameter, ParameterError
from ..protocol import ERROR_CODES, ErrorCode

if TYPE_CHECKING:
    pass


Extreme = Literal["max", "min"]


EXTREMES: dict[str, Extreme] = {"max": "max", "maximum": "max", "min": "min", "minimum": "min"}


NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Try:
    """One evaluation: the parameter's ``value``, the ``observable`` the page reported (None if it did
    not) and its ``index``, counted from 1."""

    value: float
    observable: float | None
    index: int


class Reached(Exception):
    """A try came within tol of the goal: the solver stops there."""

    def __init__(self, x: float) -> None:
        self.x = x


class Crossed(Exception):
    """A try landed on the other side of the goal: the root lies between it and an end."""

    def __init__(self, x: float) -> None:
        self.x = x


class OutOfTries(Exception):
    """The next try would exceed max_evals."""


class Failed(Exception):
    """The search stops with this error (the page refused a try, Stop, a deadline, nothing measured)."""

    def __init__(self, code: ErrorCode, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.hint = hint


@dataclass
class Goal:
    """What is sought: ``extreme`` ("max" / "min"), or ``value`` in the observable's unit within ``tol``."""

    extreme: Extreme | None
    value: float = 0.0
    tol: float = 0.0
    given: str = ""  # the goal as written, when it was converted from another unit


def varied_param(manifest: Manifest, vary: str) -> Parameter:
    """The parameter a seek varies: a number or integer (searched over its range), a boolean or a
    string with an ``enum`` (each of its values tried)."""
    try:
        param = manifest.resolve(vary)
    except ParameterError as exc:
        raise Failed(error_code(exc.code), exc.message, exc.hint or None) from None
    if not param.seekable:
        numbers = ", ".join(other_numbers(manifest, "")) or "none"
        kind = "string without an enum" if param.type == "string" else param.type
        raise Failed(
            "invalid_value",
            f"vary: {param.path} is a {kind} parameter; seek varies a number or integer (over its range), "
            "or a boolean or a string with an enum (each of its values)",
            f"number parameters: {numbers}",
        )
    if param.readonly:
        raise Failed("readonly", f"vary: {param.path} is read-only and cannot be varied")
    return param


def span(param: Parameter, within: tuple[float, float] | None) -> tuple[float, float]:
    """The range searched: ``within``, else the manifest's min..max (both must exist)."""
    if within is None:
        for bound, value in (("min", param.min), ("max", param.max)):
            if value is None:
                raise Failed(
                    "invalid_value",
                    f"{param.path} has no {bound} in its manifest, so the range to search is unknown",
                    "pass within=(low, high)",
                )
        lo, hi = float(param.min or 0.0), float(param.max or 0.0)
    else:
        try:
            lo, hi = (float(v) for v in within)
        except (TypeError, ValueError):
            raise Failed("invalid_value", f"within: expected two numbers (low, high), got {within!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise Failed("invalid_value", f"within: expected finite low < high, got {within!r}")
        if lo < bound_or(param.min, -math.inf) or hi > bound_or(param.max, math.inf):
            raise Failed("invalid_value", f"within: {within!r} leaves {param.path}'s range {range_text(param)}")
    if param.type == "integer":
        lo, hi = float(math.ceil(lo)), float(math.floor(hi))
    if lo >= hi:
        raise Failed(
            "invalid_value", f"{param.path}: the range {num_text(lo)}..{num_text(hi)} holds no two values to try"
        )
    return lo, hi


def parse_goal(goal: float | str, unit: str | None, tol: float | None) -> Goal:
    """The goal in the observable's unit, with its tolerance."""
    if isinstance(goal, str) and goal.strip().lower() in EXTREMES:
        return Goal(EXTREMES[goal.strip().lower()])
    given = ""
    if isinstance(goal, str):
        value, given = convert_goal(goal, unit)
    elif isinstance(goal, bool) or not isinstance(goal, int | float) or not math.isfinite(goal):
        raise Failed("invalid_value", f"goal: expected a number, a number with a unit or max / min, got {goal!r}")
    else:
        value = float(goal)
    if tol is None and value == 0:
        raise Failed(
            "invalid_value",
            "tol: a goal of 0 has no default tolerance (the default is 1% of the goal)",
            "give tol, the absolute tolerance in the observable's unit",
        )
    if tol is None:
        tol = abs(value) * 0.01
    elif isinstance(tol, bool) or not isinstance(tol, int | float) or not math.isfinite(tol) or tol <= 0:
        raise Failed("invalid_value", f"tol: expected a positive number, got {tol!r}")
    return Goal(None, value, float(tol), given)


def convert_goal(text: str, unit: str | None) -> tuple[float, str]:
    """``"0.05 km"`` -> (50.0, "0.05 km") when the observable is in m; a bare number stays as it is."""
    match = NUMBER_UNIT.match(text)
    if match is None:
        raise Failed("invalid_value", f"goal: expected a number with a unit or max / min, got {text!r}")
    value, from_unit = float(match.group(1)), match.group(2)
    if not from_unit:
        return value, ""
    if unit is None:
        raise Failed("invalid_value", f"goal: {text!r} has a unit, but the observable has none: give a plain number")
    from ..core._units import convert

    converted = convert(value, from_unit, unit)
    if converted is None:
        raise Failed("invalid_value", f"goal: {text!r} cannot be expressed in {unit}")
    return converted, (text.strip() if from_unit.strip() != unit else "")


def observable_unit(manifest: Manifest, name: str) -> str | None:
    found = manifest.observables.get(name)
    return found.unit if found is not None else None


def other_numbers(manifest: Manifest, path: str) -> list[str]:
    return [
        p.path
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and p.path != path
    ]


def error_code(code: str) -> ErrorCode:
    return code if code in ERROR_CODES else "internal_error"  # type: ignore[return-value]


def bound_or(value: float | None, default: float) -> float:
    return default if value is None else value


def range_text(param: Parameter) -> str:
    lo = "-inf" if param.min is None else num_text(param.min)
    hi = "inf" if param.max is None else num_text(param.max)
    return f"{lo}..{hi}"


def num_text(x: float) -> str:
    return f"{x:.4g}"


def wire_value(param: Parameter, x: float) -> float | int:
    return int(x) if param.type == "integer" else x


def same_value(reported: Any, x: float) -> bool:
    """A page's report of the parameter is ``x`` (a page may round what it reports)."""
    if isinstance(reported, bool) or not isinstance(reported, int | float):
        return True
    return math.isclose(reported, x, rel_tol=1e-6, abs_tol=1e-9)


def with_unit_text(x: float, unit: str | None) -> str:
    return f"{num_text(x)} {unit}" if unit else num_text(x)


def tries_text(n: int) -> str:
    return f"{n} {'try' if n == 1 else 'tries'}"


RULE_SAMPLES = 200  # points of the range checked against the manifest's constraints
RULE_REFINE = 40  # bisections of each edge of the part that keeps them


def narrow_to_rules(
    manifest: Manifest, param: Parameter, lo: float, hi: float, values: Mapping[str, Any]
) -> tuple[float, float]:
    """The part of ``lo..hi`` where every constraint holds with the other parameters as they are (an
    interval for the rules people write: sums and products under a bound). Raises :class:`Failed`
    naming the rule when no value keeps them."""
    if not manifest.rules:
        return lo, hi

    def keeps(x: float) -> bool:
        value: float = round(x) if param.type == "integer" else x
        return manifest.broken_rule({**values, param.path: value}) is None

    xs = [lo + (hi - lo) * i / (RULE_SAMPLES - 1) for i in range(RULE_SAMPLES)]
    good = [x for x in xs if keeps(x)]
    if not good:
        rule = manifest.broken_rule({**values, param.path: lo})
        said = rule.describe({**values, param.path: lo}) if rule is not None else "the manifest's constraints"
        raise Failed("invalid_value", f"no value of {param.path} in {num_text(lo)}..{num_text(hi)} keeps {said}")
    first, last = good[0], good[-1]
    if first > lo:  # refine the edge between the last value that breaks a rule and the first that keeps them
        bad = max(x for x in xs if x < first)
        for _ in range(RULE_REFINE):
            mid = (bad + first) / 2
            bad, first = (bad, mid) if keeps(mid) else (mid, first)
    if last < hi:
        bad = min(x for x in xs if x > last)
        for _ in range(RULE_REFINE):
            mid = (last + bad) / 2
            last, bad = (mid, bad) if keeps(mid) else (last, mid)
    if param.type == "integer":
        first, last = float(math.ceil(first)), float(math.floor(last))
    if first >= last:
        raise Failed("invalid_value", f"{param.path}: the constraints leave only {num_text(first)} to try")
    return first, last
