"""Rules between parameters: parsed when the manifest loads, checked in the kernel before anything is
sent, narrowing a seek, and refused in the planner's answers (against a fake view)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.features._seek import seek
from splitbrain_widget.manifest import Manifest, ManifestError

from .fake_view import FakeView

BASE: dict[str, Any] = {
    "id": "species",
    "data": {
        "shares": {
            "rabbits": {"type": "number", "value": 0.3, "min": 0, "max": 1},
            "foxes": {"type": "number", "value": 0.2, "min": 0, "max": 1},
        },
        "grid": {"width": {"type": "integer", "value": 10, "min": 1, "max": 100}},
    },
    "observables": {"carrots": {"unit": "kg", "depends_on": ["rabbits"]}},
    "constraints": [
        {"expr": "rabbits + foxes <= 1", "message": "the two shares add up to at most 1"},
        {"expr": "0 <= rabbits - foxes < 0.9 and grid.width * 2 >= 4"},
    ],
}


def manifest(**changes: Any) -> Manifest:
    return Manifest.from_dict({**BASE, **changes})


@pytest.fixture
def sim(tmp_path: Path) -> sb.TargetWidget:
    (tmp_path / "species.html").write_text("<!doctype html><title>species</title>", encoding="utf-8")
    (tmp_path / "species.json").write_text(json.dumps(BASE), encoding="utf-8")
    widget = sb.TargetWidget("species", targets_dir=tmp_path)
    FakeView(widget, state_of=lambda v: {"carrots": round(10 * v["shares.rabbits"], 6)})
    return widget


def test_the_rules_are_parsed_with_their_names_resolved() -> None:
    rules = manifest().rules
    assert [r.paths for r in rules] == [
        ("shares.rabbits", "shares.foxes"),
        ("shares.rabbits", "shares.foxes", "grid.width"),
    ]
    values = {"shares.rabbits": 0.7, "shares.foxes": 0.4, "grid.width": 10}
    assert not rules[0].holds(values) and rules[1].holds(values)
    assert rules[0].describe(values) == (
        "the two shares add up to at most 1 (rabbits + foxes <= 1, with shares.rabbits = 0.7, shares.foxes = 0.4)"
    )
    assert not rules[1].holds({**values, "shares.foxes": 0.8})  # the chain: 0 <= -0.1 fails


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("rabbits + wolves <= 1", "unknown parameter 'wolves'"),
        ("__import__('os').system('x')", "is not allowed in a constraint"),
        ("rabbits.__class__ == 1", "unknown parameter 'rabbits.__class__'"),
        ("len(rabbits) < 2", "'len(rabbits)' is not allowed"),
        ("rabbits == 'many'", "''many'' is not allowed"),
        ("rabbits <", "expected an expression over parameters"),
        ("[rabbits][0] < 1", "is not allowed"),
    ],
)
def test_a_rule_that_is_not_arithmetic_over_parameters_is_refused_naming_it(expr: str, problem: str) -> None:
    with pytest.raises(ManifestError) as info:
        manifest(constraints=[{"expr": expr}])
    assert any(p.startswith("constraints.0.expr: ") and problem in p for p in info.value.problems), info.value.problems


def test_a_rule_that_cannot_be_evaluated_does_not_hold() -> None:
    (rule,) = manifest(constraints=[{"expr": "rabbits / foxes < 2"}]).rules
    assert rule.holds({"shares.rabbits": 0.3, "shares.foxes": 0.2})
    assert not rule.holds({"shares.rabbits": 0.3, "shares.foxes": 0})  # 1/0: cannot be shown to hold


def test_a_change_that_breaks_a_rule_is_refused_before_anything_is_sent(sim: sb.TargetWidget) -> None:
    view = sim.host
    assert isinstance(view, FakeView)
    refused = sim.set_parameter("rabbits", 0.9)
    assert not refused.ok and refused.error is not None and refused.error.code == "invalid_value"
    assert refused.error.message.startswith("refused by a constraint: the two shares add up to at most 1")
    assert "shares.rabbits = 0.9, shares.foxes = 0.2" in refused.error.message
    assert view.requests == [] and sim.values["shares.rabbits"] == 0.3  # nothing sent, nothing changed
    both = sim.set_parameters({"rabbits": 0.7, "foxes": 0.1})
    assert both.ok and sim.values["shares.rabbits"] == 0.7 and view.values["shares.rabbits"] == 0.7


def test_seek_searches_only_the_part_of_the_range_that_keeps_the_rules(sim: sb.TargetWidget) -> None:
    sim.set_parameters({"foxes": 0.1})  # the rules leave rabbits in 0.1 .. 0.9 (>= foxes, <= 1 - foxes)
    found = seek(sim, "carrots", 3, vary="rabbits")
    assert found.ok, found.error
    assert all(0.1 <= e["value"] <= 0.9 + 1e-9 for e in found.evaluations)  # foxes <= rabbits <= 1 - foxes
    assert sim.values["shares.rabbits"] == pytest.approx(0.3, abs=0.01)
    beyond = seek(sim, "carrots", 9.5, vary="rabbits")  # 0.95 breaks the first rule: out of reach, not tried
    assert not beyond.ok
    assert all(e["value"] <= 0.9 + 1e-9 for e in beyond.evaluations)


def test_the_offline_planner_answers_with_the_rule(sim: sb.TargetWidget) -> None:
    answer = sb.Agent(sim).ask("set rabbits to 0.95")
    assert "the two shares add up to at most 1" in answer.text
    assert sim.values["shares.rabbits"] == 0.3
