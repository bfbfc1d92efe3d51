"""Goals on an observable become ONE seek call ("make it land at 50 m"); sets of parameters stay sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent._planner import LABEL, PlannerContext, plan, summarise
from splitbrain_widget.manifest import Manifest

Calls = list[tuple[str, dict[str, Any]]]


def context(target: str) -> PlannerContext:
    manifest = sb.load_target(target).manifest
    return PlannerContext(manifest, manifest.defaults(), [])


def seek(observable: str, goal: float | str, vary: str) -> tuple[str, dict[str, Any]]:
    return ("seek", {"observable": observable, "goal": goal, "vary": vary})


def sets(**values: Any) -> tuple[str, dict[str, Any]]:
    return ("set_parameters", {"values": {k.replace("__", "."): v for k, v in values.items()}})


def planned(target: str, request: str) -> Calls:
    result = plan(request, context(target))
    assert result.refusal is None, result.refusal
    return [(c.tool, c.args) for c in result.calls]


def same_calls(got: Calls, want: Calls) -> bool:
    """Equal, numbers within a part in a thousand (unit conversions)."""

    def approx(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: approx(v) for k, v in value.items()}
        return pytest.approx(value, rel=1e-3) if isinstance(value, float) else value

    return got == [(tool, approx(args)) for tool, args in want]


def test_the_builtin_targets_declare_what_moves_their_observables() -> None:
    assert context("projectile").manifest.observables["range"].depends_on[:2] == ("launch.speed", "launch.angle")
    assert context("pendulum").manifest.observables["period"].depends_on[0] == "pendulum.length"


GOALS: list[tuple[str, str, Calls]] = [
    # a value, on the observable named or meant; the first of its depends_on is varied
    ("projectile", "make it land at 50 m", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "Make it land at 50 m.", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "make the projectile land at 50 m", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "make the range 50 m", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "set the range to 50", [seek("range", 50.0, "launch.speed")]),  # in the observable's unit
    ("projectile", "I want a range of 50 metres", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "aim for a range of 50 m", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "aim for a range of fifty m", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "make the max height 10 m", [seek("max_height", 10.0, "launch.speed")]),
    ("projectile", "make the flight time 3 s", [seek("flight_time", 3.0, "launch.speed")]),
    ("pendulum", "make the period 3 s", [seek("period", 3.0, "pendulum.length")]),
    ("pendulum", "make the period 3 seconds", [seek("period", 3.0, "pendulum.length")]),
    ("pendulum", "set the period to 3 s", [seek("period", 3.0, "pendulum.length")]),
    ("pendulum", "change the period to 3 s", [seek("period", 3.0, "pendulum.length")]),
    ("waves", "make the wavelength 20 cm", [seek("wavelength", 0.2, "sources.frequency")]),
    # units converted to the observable's
    ("projectile", "make it land 0.05 km away", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "make it land at 164 ft", [seek("range", 49.987, "launch.speed")]),
    ("projectile", "make the range 5000 cm", [seek("range", 50.0, "launch.speed")]),
    ("pendulum", "make the period 2500 ms", [seek("period", 2.5, "pendulum.length")]),
    ("pendulum", "set the period to 0.05 min", [seek("period", 3.0, "pendulum.length")]),
    # extremes
    ("projectile", "as far as possible by changing the angle", [seek("range", "max", "launch.angle")]),
    ("projectile", "maximise the range by varying the angle", [seek("range", "max", "launch.angle")]),
    ("projectile", "make it go as far as possible", [seek("range", "max", "launch.speed")]),
    ("projectile", "as short as possible", [seek("flight_time", "min", "launch.speed")]),
    ("projectile", "minimise the flight time", [seek("flight_time", "min", "launch.speed")]),
    ("projectile", "make the flight as short as possible", [seek("flight_time", "min", "launch.speed")]),
    ("projectile", "as high as possible", [seek("max_height", "max", "launch.speed")]),
    (
        "projectile",
        "make it fly as high as possible by changing the angle",
        [seek("max_height", "max", "launch.angle")],
    ),
    ("pendulum", "make the period as short as possible", [seek("period", "min", "pendulum.length")]),
    # the parameter to vary, named
    ("projectile", "make it land at 50 m by changing the angle", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "make it land at 50 m using the speed", [seek("range", 50.0, "launch.speed")]),
    ("projectile", "make it land at 50 m, by changing the launch angle", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "make the range 40 m by varying the gravity", [seek("range", 40.0, "environment.gravity")]),
    ("projectile", "change the angle so that it lands at 50 m", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "use the speed to make the range 40 m", [seek("range", 40.0, "launch.speed")]),
    ("pendulum", "make the period 3 s by varying the length", [seek("period", 3.0, "pendulum.length")]),
    ("pendulum", "make the period 3 s by changing gravity", [seek("period", 3.0, "environment.gravity")]),
    ("pendulum", "change the amplitude so that the period is 2.1 s", [seek("period", 2.1, "pendulum.amplitude")]),
    # with changes: they go first, in one set_parameters call, then the seek
    (
        "projectile",
        "set drag to 0.02 and make it land at 50 m",
        [sets(environment__drag=0.02), seek("range", 50.0, "launch.speed")],
    ),
    (
        "projectile",
        "make it land at 50 m and hide the vectors",
        [sets(display__show_vectors=False), seek("range", 50.0, "launch.speed")],
    ),
    (
        "projectile",
        "gravity 1.62, then make it land at 50 m by changing the angle",
        [sets(environment__gravity=1.62), seek("range", 50.0, "launch.angle")],
    ),
    # the request fixes the default parameter: the next of depends_on is varied
    (
        "projectile",
        "set the speed to 30 and make it land at 50 m",
        [sets(launch__speed=30.0), seek("range", 50.0, "launch.angle")],
    ),
]


@pytest.mark.parametrize(("target", "request_text", "expected"), GOALS)
def test_a_goal_becomes_one_seek_call(target: str, request_text: str, expected: Calls) -> None:
    got = planned(target, request_text)
    assert same_calls(got, expected), got


SETS: list[tuple[str, str, Calls]] = [
    ("projectile", "set the speed to 30", [sets(launch__speed=30.0)]),
    ("projectile", "make the angle 30 degrees", [sets(launch__angle=30.0)]),
    ("projectile", "change the angle to 30", [sets(launch__angle=30.0)]),
    ("projectile", "launch speed 72 km/h", [sets(launch__speed=20.0)]),
    ("projectile", "set the launch height to 10 m", [sets(launch__height=10.0)]),
    ("projectile", "make the height 10 m", [sets(launch__height=10.0)]),
    ("projectile", "launch from 10 m", [sets(launch__height=10.0)]),
    ("pendulum", "set the length to 2 m", [sets(pendulum__length=2.0)]),
    ("pendulum", "make the amplitude 10 degrees", [sets(pendulum__amplitude=10.0)]),
    ("orbits", "make the distance 1.5 AU", [sets(planet__distance=1.5)]),  # a parameter and an observable
    ("orbits", "speed 30 km/s", [sets(planet__speed=30.0)]),
    ("boids", "number of boids 200", [sets(flock__count=200)]),  # "boids" is an observable too
]


@pytest.mark.parametrize(("target", "request_text", "expected"), SETS)
def test_a_request_that_names_a_parameter_sets_it_and_seeks_nothing(
    target: str, request_text: str, expected: Calls
) -> None:
    got = planned(target, request_text)
    assert same_calls(got, expected), got


REFUSED = [
    ("projectile", "make the range 50 kg", "cannot convert kg"),
    ("projectile", "make the range 50 wibbles", 'unit "wibbles"'),
    ("projectile", "maximise the range to 50 m", "say one"),
    ("projectile", "make it land at 50 m by changing the vectors", "only vary a number parameter"),
    ("projectile", "make it land at 50 m by changing the wibble", 'which parameter "the wibble" is'),
    ("projectile", "make the range 50 m and the flight time 3 s", "one goal at a time"),
    ("projectile", "make it land at 50 m by changing the angle and set the angle to 30", "both set and varied"),
    ("projectile", "make the range 50 m or 60 m", "more than one number"),
    ("projectile", "increase the range to 50 m", "I can set"),  # a change of an observable: no guess
    ("projectile", "make the range above 50 m", "I can set"),
    ("projectile", "double the range", "I can set"),
    ("projectile", "don't make it land at 50 m", "what not to do"),
    ("projectile", "hit a target 50 m away", "I can set"),
    ("pendulum", "make it land at 50 m", "nothing this target reports"),
    ("pendulum", "make the pendulum as long as possible", "period or pendulum.length"),  # its length?
]


@pytest.mark.parametrize(("target", "request_text", "reason"), REFUSED)
def test_goals_it_cannot_read_are_refused_and_change_nothing(target: str, request_text: str, reason: str) -> None:
    result = plan(request_text, context(target))
    assert result.calls == [] and result.refusal is not None
    assert result.refusal.startswith(LABEL) and reason in result.refusal


# -- no depends_on: the planner asks which parameter to vary ---------------------------------

LAUNCHER = {
    "id": "launcher",
    "data": {
        "launch": {
            "angle": {"type": "number", "unit": "deg", "value": 45, "min": 0, "max": 90},
            "speed": {"type": "number", "unit": "m/s", "value": 20, "min": 0, "max": 100},
            "count": {"type": "integer", "value": 1, "min": 1, "max": 5, "readonly": True},
        },
        "display": {"show_vectors": {"type": "boolean", "value": True}, "theme": {"type": "string", "value": "a"}},
    },
    "observables": {"range": {"unit": "m"}, "flight_time": {"unit": "s", "depends_on": ["launch.speed"]}},
}


def launcher() -> PlannerContext:
    manifest = Manifest.from_dict(LAUNCHER)
    return PlannerContext(manifest, manifest.defaults(), [])


def test_without_depends_on_it_asks_which_parameter_to_vary_naming_the_number_parameters() -> None:
    result = plan("make it land at 50 m", launcher())
    assert result.calls == [] and result.refusal is not None
    assert result.refusal.startswith(f"{LABEL}: Which parameter should I change to bring range to 50 m?")
    assert "launch.angle, launch.speed;" in result.refusal  # no switch, string or read-only parameter
    assert "show_vectors" not in result.refusal and "launch.count" not in result.refusal
    assert "I can set" not in result.refusal  # a question, not a refusal


def test_without_depends_on_a_named_parameter_is_varied() -> None:
    assert [c.args for c in plan("make it land at 50 m by changing the angle", launcher()).calls] == [
        {"observable": "range", "goal": 50.0, "vary": "launch.angle"}
    ]


def test_when_the_request_sets_every_parameter_of_depends_on_it_asks_which_other() -> None:
    result = plan("set the speed to 30 and make the flight time 3 s", launcher())
    assert result.calls == [] and result.refusal is not None
    assert "Which parameter should I change to bring flight time to 3 s?" in result.refusal
    assert "I can vary launch.angle;" in result.refusal


def test_a_fixture_without_depends_on_names_its_observable_by_description() -> None:
    manifest = Manifest.from_file(Path(__file__).parent / "fixtures" / "planner" / "hopper.json")
    result = plan("make it land 30 m away", PlannerContext(manifest, manifest.defaults(), []))
    assert result.refusal is not None and "bring downrange to 30 m?" in result.refusal


def test_every_seek_the_table_plans_is_plain_json() -> None:
    for target, request, _ in GOALS:
        for call in plan(request, context(target)).calls:
            assert json.loads(json.dumps(call.args, allow_nan=False)) == call.args, request


# -- summaries ---------------------------------------------------------------------------------


def test_the_summary_of_a_reached_goal_says_what_changed_and_the_value_reached() -> None:
    ctx = context("projectile")
    p = plan("make it land at 50 m", ctx)
    result = {
        "ok": True,
        "op": "seek",
        "changed": {"launch.speed": {"value": 22.1359, "unit": "m/s"}},
        "state": {"range": 50.0004, "flight_time": 3.19},
        "evaluations": [{"value": 20.0 + i, "observable": 40.0 + i} for i in range(9)],
    }
    assert (
        summarise(p, [result], ctx)
        == "Offline planner: Changed launch speed to 22.14 m/s: range is now 50 m (9 tries)."
    )


def test_the_summary_of_an_extreme_reads_the_state_marked_as_page_data() -> None:
    ctx = context("projectile")
    p = plan("as far as possible by changing the angle", ctx)
    result = {
        "ok": True,
        "op": "seek",
        "changed": {"launch.angle": {"value": 45.0, "unit": "deg"}},
        "page_data": {"note": "data", "state": json.dumps({"range": 40.77})},
        "evaluations": [{"value": 45.0, "observable": 40.77}],
    }
    text = summarise(p, [result], ctx)
    assert text == "Offline planner: Changed launch angle to 45 deg: range is now 40.77 m, the maximum found (1 try)."


def test_the_summary_of_an_unreachable_goal_says_the_error_and_that_the_value_went_back() -> None:
    ctx = context("projectile")
    p = plan("make it land at 5 km", ctx)
    result = {
        "ok": False,
        "op": "seek",
        "evaluations": [{"value": 100.0, "observable": 1019.4}] * 6,
        "error": {
            "code": "goal_unreachable",
            "message": "range cannot reach 5000 m by changing launch.speed: the closest is 1019 m at 100 m/s",
        },
    }
    assert summarise(p, [result], ctx) == (
        "Offline planner: Could not bring range to 5000 m: range cannot reach 5000 m by changing launch.speed: "
        "the closest is 1019 m at 100 m/s; launch speed went back to 20 m/s (6 tries) (5 km = 5000 m)."
    )


def test_the_summary_of_a_failure_says_once_where_the_tool_left_the_parameter() -> None:
    ctx = context("projectile")
    p = plan("as far as possible by changing the angle", ctx)
    result = {
        "ok": False,
        "op": "seek",
        "evaluations": [{"value": 40.0, "observable": 30.0}] * 3,
        "error": {
            "code": "goal_unreachable",
            "message": "range did not reach its maximum within max_evals = 3 tries; launch.angle is back at 45 deg",
            "hint": "raise max_evals, or raise tol",
        },
    }
    assert summarise(p, [result], ctx) == (
        "Offline planner: Could not maximise range: range did not reach its maximum within max_evals = 3 tries; "
        "launch.angle is back at 45 deg (raise max_evals, or raise tol) (3 tries)."
    )


def test_the_summary_of_a_goal_the_page_does_not_measure() -> None:
    ctx = context("pendulum")
    p = plan("make the period 3 s", ctx)
    result = {"ok": False, "op": "seek", "error": {"code": "not_measured", "message": "the page reported no period"}}
    assert summarise(p, [result], ctx) == "Offline planner: Could not bring period to 3 s: the page reported no period."


def test_the_summary_of_a_change_then_a_goal_says_both_in_order() -> None:
    ctx = context("projectile")
    p = plan("set drag to 0.02 and make it land at 50 m", ctx)
    results = [
        {"ok": True, "changed": {"environment.drag": {"value": 0.02, "unit": "1/m"}}},
        {
            "ok": True,
            "changed": {"launch.speed": {"value": 24.6, "unit": "m/s"}},
            "state": {"range": 50.0},
            "evaluations": [{"value": 24.6, "observable": 50.0}] * 7,
        },
    ]
    assert summarise(p, results, ctx) == (
        "Offline planner: Set drag to 0.02 1/m; changed launch speed to 24.6 m/s: range is now 50 m (7 tries)."
    )


# -- through the agent, on a fake page ---------------------------------------------------------


def test_the_offline_agent_reaches_a_goal_with_the_seek_tool() -> None:
    import math

    from splitbrain_widget.agent import Agent

    from .fake_view import FakeView

    def textbook(values: dict[str, Any]) -> dict[str, Any]:  # the range without drag, from the ground
        speed, angle, g = values["launch.speed"], values["launch.angle"], values["environment.gravity"]
        return {"range": round(speed**2 * math.sin(math.radians(2 * angle)) / g, 3)}

    sim = sb.TargetWidget("projectile")
    FakeView(sim, state_of=textbook)
    text = Agent(sim).ask("make it land at 30 m by changing the angle").text
    assert text.startswith("Offline planner: Changed launch angle to ") and "range is now 30" in text, text
    assert textbook(dict(sim.values))["range"] == pytest.approx(30, rel=0.01)
    assert sim.values["launch.speed"] == 20  # only the parameter named was varied
