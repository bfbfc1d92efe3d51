"""How the planner writes values, names and lists in its replies, and reads a state out of a tool result."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...manifest import Manifest, Parameter
from ._context import PlannerContext


def describe_param(p: Parameter) -> str:
    unit = f" ({p.unit})" if p.unit else ""
    return f"{p.name}{unit}"


def short_name(path: str, ctx: PlannerContext) -> str:
    leaf = path.rsplit(".", 1)[-1]
    same = [p for p in ctx.manifest.parameters.values() if p.name == leaf]
    return leaf if len(same) == 1 else path


def with_unit_text(changed: Any) -> str:
    if isinstance(changed, Mapping):
        return value_text(changed.get("value"), changed.get("unit"))
    return value_text(changed, None)


def value_text(value: Any, unit: str | None) -> str:
    text = fmt(value) if isinstance(value, float) else json.dumps(value) if not isinstance(value, str) else value
    return f"{text} {unit}" if unit and value is not None else text


def fmt(number: Any) -> str:
    if isinstance(number, float):
        return f"{number:.4g}" if not number.is_integer() else f"{number:g}"
    return str(number)


def tidy(number: float) -> float:
    """Round away float noise: 8.333333333 -> 8.333."""
    if number == 0 or not math.isfinite(number):
        return number
    digits = 4 - math.floor(math.log10(abs(number)))
    return round(number, max(digits, 0))


def join_words(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def page_state(result: Mapping[str, Any]) -> dict[str, Any]:
    """The state in a tool result: bare, or marked as page data (a JSON string) by the agent's tools."""
    state = result.get("state")
    page = result.get("page_data")
    if state is None and isinstance(page, Mapping):
        text = page.get("state") or page.get("preview")
        try:
            state = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            state = None
    return dict(state) if isinstance(state, Mapping) else {}


def aim_phrase(name: str, goal: Any, manifest: Manifest, aim: str = "") -> str:
    """ "bring range to 50 m", "maximise range", "bring polarization to at least 0.95"."""
    label = name.replace("_", " ")
    if aim:
        return f"bring {label} to {aim}"
    if goal in ("max", "min"):
        return f"{'maximise' if goal == 'max' else 'minimise'} {label}"
    obs = manifest.observables.get(name)
    return f"bring {label} to {value_text(goal, obs.unit if obs else None)}"
