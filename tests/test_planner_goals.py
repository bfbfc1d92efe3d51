"""Goals on an observable become ONE seek call ("make it land at 50 m"); sets of parameters stay sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent.planner import LABEL, PlannerContext, plan, summarise
from splitbrain_widget.manifest import Manifest

Calls = list[tuple[str, dict[str, Any]]]


def context(target: str) -> PlannerContext:
    manifest = sb.load_target(target).manifest
    return PlannerContext(manifest, manifest.defaults(), [])


def seek(observable: str, goal: float | str, vary: str, tol: float | None = None) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"observable": observable, "goal": goal, "vary": vary}
    return ("seek", args if tol is None else {**args, "tol": tol})


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
    # an observable named with its abbreviation written out; what the flight reaches is no launch height
    ("projectile", "make the ball reach a maximum height of 15 m", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "make the maximum height 15 m", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "I want a maximum height of 1500 cm", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "make it reach a height of 15 m", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "make it fly 15 m high", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "make the apex 15 m", [seek("max_height", 15.0, "launch.speed")]),
    ("projectile", "make the distance 50 m", [seek("range", 50.0, "launch.speed")]),  # was launch.height 50
    # a duration the thing named lasts
    ("projectile", "make the flight last 3 seconds", [seek("flight_time", 3.0, "launch.speed")]),
    ("projectile", "make it fly for 3 s", [seek("flight_time", 3.0, "launch.speed")]),
    ("projectile", "make the flight take 3 s", [seek("flight_time", 3.0, "launch.speed")]),
    ("projectile", "I want the flight to last 3000 ms", [seek("flight_time", 3.0, "launch.speed")]),
    ("orbits", "make the kepler period last 1.5 years", [seek("kepler_period", 547.88, "planet.distance")]),
    # a number whose word ends the observable's name: "in wavelengths"; a group to vary ("the probe")
    (
        "waves",
        "move the probe so that the path difference is one wavelength",
        [seek("path_difference_wavelengths", 1.0, "probe.y")],
    ),
    (
        "waves",
        "make the path difference 2 wavelengths by moving the probe",
        [seek("path_difference_wavelengths", 2.0, "probe.y")],
    ),
    (
        "waves",
        "move the probe so that the path difference is 0.02 m",
        [seek("path_difference", 0.02, "probe.y")],
    ),
    (
        "waves",
        "make the path difference one wavelength by moving the sources",
        [seek("path_difference_wavelengths", 1.0, "sources.separation")],  # the first of depends_on in the group
    ),
    # a value named by its meaning, with the tolerance it implies
    ("orbits", "make the orbit circular", [seek("eccentricity", 0.0, "planet.speed", tol=0.01)]),
    ("orbits", "circularize the orbit", [seek("eccentricity", 0.0, "planet.speed", tol=0.01)]),
    ("orbits", "make the orbit a circle", [seek("eccentricity", 0.0, "planet.speed", tol=0.01)]),
    (
        "orbits",
        "make the orbit circular by changing the distance",
        [seek("eccentricity", 0.0, "planet.distance", tol=0.01)],
    ),
    # an inclusive bound: a window wholly inside it, 1% past the edge, 10% of the bound wide
    ("orbits", "make the planet escape from the star", [seek("eccentricity", 1.06, "planet.speed", tol=0.05)]),
    ("orbits", "let the planet escape", [seek("eccentricity", 1.06, "planet.speed", tol=0.05)]),
    ("orbits", "make the eccentricity at least 1", [seek("eccentricity", 1.06, "planet.speed", tol=0.05)]),
    ("boids", "a polarization of at least 0.95", [seek("polarization", 1.007, "rules.alignment", tol=0.0475)]),
    ("projectile", "make the range at least 50 m", [seek("range", 53.0, "launch.speed", tol=2.5)]),
    ("projectile", "make the range 50 m or more", [seek("range", 53.0, "launch.speed", tol=2.5)]),
    ("projectile", "make the flight time at most 2 s", [seek("flight_time", 1.88, "launch.speed", tol=0.1)]),
    (
        "boids",
        "make the whole flock fly in nearly the same direction, a polarization of at least 0.95",
        [seek("polarization", 1.007, "rules.alignment", tol=0.0475)],  # the first clause restates the goal
    ),
    # a parameter kept as it is is not varied
    ("projectile", "keeping that drag, make it land 2 km away", [seek("range", 2000.0, "launch.speed")]),
    ("projectile", "make it land at 50 m, keeping the speed", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "with the same speed, make it land at 50 m", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "keep the speed fixed and make it land at 50 m", [seek("range", 50.0, "launch.angle")]),
    ("projectile", "without changing the speed, make it land at 50 m", [seek("range", 50.0, "launch.angle")]),
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
    ("pendulum", "make it swing for 3 s", "(period?); name the observable"),  # the period, or how long it swings?
    ("pendulum", "make each swing last 2 s", "name the observable"),
    ("projectile", "make the time 3 s", "I can set"),  # no observable named, no duration: no guess
    ("projectile", "make the range at least 0 m", "no scale"),
    ("projectile", "make the range above 50 m", "strict bound on range"),
    ("projectile", "keeping the angle, make it land at 50 m by changing the angle", "both kept and varied"),
    ("projectile", "keeping that drag, set drag to 0.1", "both kept and set"),
    ("projectile", "set drag to 5 and make it land at 50 m", "above the maximum 0.5"),  # no seek after a bad set
    ("orbits", "don't let the planet escape", "what not to do"),
    ("orbits", "make the speed circular", "I can set"),  # a parameter named: no orbit
    ("waves", "make the path difference one wavelength by moving the display", "which parameter"),
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


# -- tolerances, bounds and kept parameters through the reply --------------------------------


def test_a_bound_that_a_set_breaks_is_refused_before_anything_is_sent() -> None:
    result = plan("set drag to 5 and make it land at 50 m", context("projectile"))
    assert result.calls == [] and result.refusal is not None
    assert result.refusal.startswith(f"{LABEL}: Could not set parameters: environment.drag: 5.0 is above")
    assert result.refusal.endswith("so I did not bring range to 50 m either.")


def test_the_summary_of_a_bound_says_the_bound_not_the_window() -> None:
    ctx = context("boids")
    p = plan("a polarization of at least 0.95", ctx)
    failure = {
        "ok": False,
        "op": "seek",
        "evaluations": [{"value": 5.0, "observable": 0.9}],
        "error": {"code": "goal_unreachable", "message": "polarization peaks at 0.9 at rules.alignment = 5"},
    }
    text = summarise(p, [failure], ctx)
    assert text.startswith("Offline planner: Could not bring polarization to at least 0.95: polarization peaks")
    assert "(polarization at least 0.95: sought within 0.9595..1.054)" in text
    reached = {"ok": True, "changed": {"rules.alignment": {"value": 5.0}}, "state": {"polarization": 0.99}}
    assert summarise(p, [reached], ctx) == (
        "Offline planner: Changed alignment weight to 5: polarization is now 0.99 "
        "(polarization at least 0.95: sought within 0.9595..1.054)."
    )


def test_the_summary_of_a_circular_orbit_says_the_tolerance() -> None:
    ctx = context("orbits")
    p = plan("make the orbit circular", ctx)
    failure = {"ok": False, "op": "seek", "error": {"code": "goal_unreachable", "message": "no"}}
    assert summarise(p, [failure], ctx).startswith(
        "Offline planner: Could not bring eccentricity to 0 within 0.01 (circular): no"
    )


def test_a_kept_parameter_is_said_in_the_reply() -> None:
    ctx = PlannerContext(context("projectile").manifest, {**context("projectile").values, "environment.drag": 0.05})
    p = plan("keeping that drag, make it land 2 km away", ctx)
    assert "drag kept at 0.05 1/m" in p.notes


def test_a_restated_goal_is_said_in_the_reply() -> None:
    p = plan("make the whole flock fly in nearly the same direction, a polarization of at least 0.95", context("boids"))
    assert '"make the whole flock fly in nearly the same direction" read as the polarization goal' in p.notes


def test_every_window_lies_inside_its_bound() -> None:
    for target, request, bound, above in [
        ("boids", "a polarization of at least 0.95", 0.95, True),
        ("orbits", "make the planet escape from the star", 1.0, True),
        ("projectile", "make the flight time at most 2 s", 2.0, False),
        ("projectile", "make the range at least 50 km", 50000.0, True),
    ]:
        (call,) = plan(request, context(target)).calls
        low, high = call.args["goal"] - call.args["tol"], call.args["goal"] + call.args["tol"]
        assert (low > bound) if above else (high < bound), request


# -- goals on a manifest unlike the built-in targets -------------------------------------------

VOYAGE = {
    "id": "voyage",
    "data": {
        "ships": {"speed": {"type": "number", "unit": "km/h", "value": 20, "min": 1, "max": 60}},
        "sonar": {
            "x": {"type": "number", "unit": "m", "value": 0, "min": -100, "max": 100},
            "y": {"type": "number", "unit": "m", "value": 0, "min": -100, "max": 100},
        },
    },
    "observables": {
        "voyage_time": {"unit": "h", "depends_on": ["ships.speed"]},
        "echo_delay": {"unit": "s", "depends_on": ["sonar.y", "sonar.x"]},
        "echo_delay_periods": {"depends_on": ["sonar.y", "sonar.x"]},
        "max_depth": {"unit": "m", "depends_on": ["sonar.x"]},
        "orbit_eccentricity": {"depends_on": ["ships.speed"]},
    },
}


def voyage() -> PlannerContext:
    manifest = Manifest.from_dict(VOYAGE)
    return PlannerContext(manifest, manifest.defaults(), [])


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("make the voyage last 3 hours", [seek("voyage_time", 3.0, "ships.speed")]),
        ("make the voyage last 90 min", [seek("voyage_time", 1.5, "ships.speed")]),
        ("move the sonar so that the echo delay is 2 periods", [seek("echo_delay_periods", 2.0, "sonar.y")]),
        ("make the echo delay 2 s by moving the sonar", [seek("echo_delay", 2.0, "sonar.y")]),
        ("make the maximum depth 40 m", [seek("max_depth", 40.0, "sonar.x")]),
        ("make the orbit circular", [seek("orbit_eccentricity", 0.0, "ships.speed", tol=0.01)]),
        ("make the voyage time at least 2 h", [seek("voyage_time", 2.12, "ships.speed", tol=0.1)]),
    ],
)
def test_goals_come_from_the_manifest_not_from_the_builtin_targets(request_text: str, expected: Calls) -> None:
    result = plan(request_text, voyage())
    assert result.refusal is None, result.refusal
    got = [(c.tool, c.args) for c in result.calls]
    assert same_calls(got, expected), got


def test_keeping_every_parameter_an_observable_depends_on_asks_which_other() -> None:
    result = plan("keeping the speed, make the voyage last 3 hours", voyage())
    assert result.calls == [] and result.refusal is not None
    assert "Which parameter should I change to bring voyage time to 3 h?" in result.refusal
    assert "ships.speed" not in result.refusal.split("I can vary", 1)[1]


def test_a_seek_that_was_not_made_after_a_failed_set_is_said_not_made() -> None:
    ctx = context("projectile")
    p = plan("set drag to 0.02 and make it land at 50 m", ctx)
    failed = {"ok": False, "error": {"code": "no_view", "message": "no view is open"}}
    assert summarise(p, [failed], ctx) == (
        "Offline planner: Could not set parameters: no view is open; so I did not try to bring range to 50 m."
    )


def test_a_count_of_what_the_page_measures_is_a_goal_and_a_removal_is_not_guessed() -> None:
    ctx = context("boids")
    goal = plan("make the largest cluster 50 boids", ctx)
    assert [(c.tool, c.args["observable"], c.args["goal"]) for c in goal.calls] == [("seek", "largest_cluster", 50)]
    assert [c.args for c in plan("put 300 boids in the sky", ctx).calls] == [{"values": {"flock.count": 300}}]
    for request in ("remove 20 boids", "kill 20 boids", "take away 20 boids"):
        refused = plan(request, ctx)
        assert refused.calls == [] and "by an amount" in (refused.refusal or ""), request
