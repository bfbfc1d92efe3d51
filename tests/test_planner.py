"""The offline planner: a corpus of phrasings with the tool calls they must produce, and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent import _units
from splitbrain_widget.agent._planner import LABEL, PlannerContext, plan, summarise
from splitbrain_widget.manifest import Manifest

HERE = Path(__file__).parent
BUILTIN = ("bouncer", "projectile", "pendulum", "orbits", "boids", "waves")
TARGETS = [("bouncer", "Bouncing ball"), ("launcher", "Launcher"), ("swing", "Pendulum"), ("projectile", "Projectile")]


def context(target: str, **values: Any) -> PlannerContext:
    if target in BUILTIN:
        manifest = sb.load_target(target).manifest
    else:
        manifest = Manifest.from_file(HERE / "fixtures" / "planner" / f"{target}.json")
    return PlannerContext(manifest, {**manifest.defaults(), **values}, TARGETS)


def sets(**values: Any) -> list[tuple[str, dict[str, Any]]]:
    return [("set_parameters", {"values": {k.replace("__", "."): v for k, v in values.items()}})]


# (target, request, expected calls)
CORPUS: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    # absolute sets, many phrasings
    ("bouncer", "set the speed to 12", sets(settings__speed=12.0)),
    ("bouncer", "Set speed to 12.", sets(settings__speed=12.0)),
    ("bouncer", "speed 12", sets(settings__speed=12.0)),
    ("bouncer", "speed = 12", sets(settings__speed=12.0)),
    ("bouncer", "make the speed 12 m/s", sets(settings__speed=12.0)),
    ("bouncer", "change speed to 7.5", sets(settings__speed=7.5)),
    ("bouncer", "settings.speed to 3", sets(settings__speed=3.0)),
    ("bouncer", "speed to zero", sets(settings__speed=0.0)),
    ("bouncer", "set the speed to ten", sets(settings__speed=10.0)),
    ("bouncer", "please set speed to 20!", sets(settings__speed=20.0)),
    ("bouncer", "set the size to 30", sets(display__size=30.0)),
    ("bouncer", "size 10 px", sets(display__size=10.0)),
    ("bouncer", "make the radius 25", sets(display__size=25.0)),
    ("bouncer", "velocity 9", sets(settings__speed=9.0)),
    # units converted to the manifest's unit
    ("bouncer", "speed 36 km/h", sets(settings__speed=10.0)),
    ("bouncer", "set the speed to 30 km/h", sets(settings__speed=8.3333)),
    ("bouncer", "speed 10 mph", sets(settings__speed=4.4704)),
    ("bouncer", "speed 20 knots", sets(settings__speed=10.289)),
    ("launcher", "angle 45 degrees", sets(launch__angle=45.0)),
    ("launcher", "set the angle to 0.5 rad", sets(launch__angle=28.648)),
    ("launcher", "launch height 300 cm", sets(launch__height=3.0)),
    ("launcher", "height 10 ft", sets(launch__height=3.048)),
    ("launcher", "gravity 2 g", sets(world__gravity=19.613)),
    ("launcher", "speed 72 km/h", sets(launch__speed=20.0)),
    ("swing", "length 50 cm", sets(pendulum__length=0.5)),
    ("swing", "amplitude 0.2 rad", sets(pendulum__amplitude=11.459)),
    # enums and strings
    ("bouncer", "make it red", sets(display__color="red")),
    ("bouncer", "set the colour to purple", sets(display__color="purple")),
    ("bouncer", "color hotpink", sets(display__color="hotpink")),
    ("bouncer", "use gold", sets(display__color="gold")),
    ("launcher", "neon theme", sets(display__theme="neon")),
    ("launcher", "switch the theme to chalk", sets(display__theme="chalk")),
    ("swing", "double mode", sets(pendulum__mode="double")),
    ("swing", "make it a double pendulum", sets(pendulum__mode="double")),
    # booleans
    ("bouncer", "show the trail", sets(display__show_trail=True)),
    ("bouncer", "show trails", sets(display__show_trail=True)),
    ("bouncer", "hide the trail", sets(display__show_trail=False)),
    ("bouncer", "turn off trail", sets(display__show_trail=False)),
    ("bouncer", "turn on the trail", sets(display__show_trail=True)),
    ("bouncer", "enable trail", sets(display__show_trail=True)),
    ("bouncer", "disable the trail", sets(display__show_trail=False)),
    ("bouncer", "toggle the trail", sets(display__show_trail=True)),
    ("launcher", "hide vectors", sets(display__show_vectors=False)),
    ("launcher", "toggle vectors", sets(display__show_vectors=False)),
    ("launcher", "show the velocity vectors", sets(display__show_vectors=True)),
    ("swing", "show the trail", sets(display__show_trail=True)),
    ("launcher", "show_vectors off", sets(display__show_vectors=False)),
    # relative changes
    ("bouncer", "faster", sets(settings__speed=10.0)),
    ("bouncer", "slower", sets(settings__speed=6.4)),
    ("bouncer", "a bit faster", sets(settings__speed=8.8)),
    ("bouncer", "a bit slower", sets(settings__speed=7.2727)),
    ("bouncer", "much faster", sets(settings__speed=16.0)),
    ("bouncer", "double the speed", sets(settings__speed=16.0)),
    ("bouncer", "halve the speed", sets(settings__speed=4.0)),
    ("bouncer", "triple the size", sets(display__size=48.0)),
    ("bouncer", "bigger", sets(display__size=20.0)),
    ("bouncer", "make the ball smaller", sets(display__size=12.8)),
    ("bouncer", "increase speed by 5", sets(settings__speed=13.0)),
    ("bouncer", "decrease the speed by 2 m/s", sets(settings__speed=6.0)),
    ("bouncer", "increase the size by 50%", sets(display__size=24.0)),
    ("bouncer", "decrease the size by 10%", sets(display__size=14.4)),
    ("bouncer", "raise the speed by 18 km/h", sets(settings__speed=13.0)),
    ("launcher", "double the gravity", sets(world__gravity=19.62)),
    ("launcher", "a bit less drag", sets(world__drag=0.0)),
    ("launcher", "more drag", sets(world__drag=0.01)),  # from zero, one step
    ("launcher", "lower the launch height by 1", sets(launch__height=0.0)),
    ("launcher", "steeper angle", None),  # refused: "steeper" is not understood
    ("swing", "a bit less damping", sets(pendulum__damping=0.090909)),
    ("swing", "more damping", sets(pendulum__damping=0.125)),
    ("swing", "longer", sets(pendulum__length=1.25)),
    ("swing", "shorter pendulum", sets(pendulum__length=0.8)),
    ("swing", "increase the steps", sets(pendulum__steps=5)),
    ("swing", "stronger gravity", sets(world__gravity=12.262)),
    ("bouncer", "much much faster than that", sets(settings__speed=16.0)),
    ("bouncer", "double the speed", sets(settings__speed=16.0)),
    # clamped to the range
    ("bouncer", "triple the speed", sets(settings__speed=24.0)),
    ("launcher", "double the angle", sets(launch__angle=90.0)),
    # several changes in one sentence
    ("bouncer", "set the speed to 12 and make it red", sets(settings__speed=12.0, display__color="red")),
    (
        "bouncer",
        "speed 5, size 20, show the trail",
        sets(settings__speed=5.0, display__size=20.0, display__show_trail=True),
    ),
    ("bouncer", "make it orange; double the size", sets(display__color="orange", display__size=32.0)),
    (
        "launcher",
        "angle 30 and speed 15 then hide vectors",
        sets(launch__angle=30.0, launch__speed=15.0, display__show_vectors=False),
    ),
    ("swing", "length 2 m and damping 0", sets(pendulum__length=2.0, pendulum__damping=0.0)),
    ("swing", "set amplitude to 10 degrees, gravity to 1.62", sets(pendulum__amplitude=10.0, world__gravity=1.62)),
    ("launcher", "gravity 1.62 plus drag 0.05", sets(world__gravity=1.62, world__drag=0.05)),
    # reset
    ("bouncer", "reset", [("reset", {})]),
    ("bouncer", "Reset!", [("reset", {})]),
    ("bouncer", "reset everything", [("reset", {})]),
    ("launcher", "restore defaults", [("reset", {})]),
    ("swing", "start over", [("reset", {})]),
    ("swing", "back to default", [("reset", {})]),
    # switching targets
    ("bouncer", "switch to the launcher", [("select_target", {"target": "launcher"})]),
    ("bouncer", "switch to pendulum", [("select_target", {"target": "swing"})]),
    ("launcher", "go to bouncer", [("select_target", {"target": "bouncer"})]),
    ("launcher", "open the pendulum simulation", [("select_target", {"target": "swing"})]),
    ("swing", "load the bouncing ball target", [("select_target", {"target": "bouncer"})]),
    ("bouncer", "which targets are there?", [("list_targets", {})]),
    # questions
    ("bouncer", "what is the speed?", [("get_parameters", {})]),
    ("bouncer", "what's the size", [("get_parameters", {})]),
    ("bouncer", "how fast is it?", [("get_parameters", {})]),
    ("launcher", "what is the range?", [("get_state", {})]),
    ("launcher", "how far did it go?", [("get_state", {})]),
    ("launcher", "how high did it get", [("get_state", {})]),
    ("launcher", "what is the flight time", [("get_state", {})]),
    ("swing", "what is the period?", [("get_state", {})]),
    ("swing", "what's the energy", [("get_state", {})]),
    ("bouncer", "how many bounces so far?", [("get_state", {})]),
    ("bouncer", "what can I change?", [("get_parameters", {})]),
    ("bouncer", "help", [("get_parameters", {})]),
    ("swing", "what is going on?", [("get_state", {})]),
    # the built-in simulations
    ("projectile", "set the angle to 30 degrees", sets(launch__angle=30.0)),
    ("projectile", "launch speed 72 km/h", sets(launch__speed=20.0)),
    ("projectile", "launch from 10 m", sets(launch__height=10.0)),
    ("projectile", "show the vectors", sets(display__show_vectors=True)),
    ("projectile", "double the gravity", sets(environment__gravity=19.62)),
    ("projectile", "gravity 1.62 and angle 60", sets(environment__gravity=1.62, launch__angle=60.0)),
    ("projectile", "what is the range?", [("get_state", {})]),
    ("projectile", "how high did it get?", [("get_state", {})]),
    ("projectile", "what is the flight time", [("get_state", {})]),
    ("pendulum", "length 2 m", sets(pendulum__length=2.0)),
    ("pendulum", "length 80 cm", sets(pendulum__length=0.8)),
    ("pendulum", "double pendulum", sets(pendulum__mode="double")),
    ("pendulum", "amplitude 10 degrees", sets(pendulum__amplitude=10.0)),
    ("pendulum", "hide the plot", sets(display__show_plot=False)),
    ("pendulum", "what is the period?", [("get_state", {})]),
    ("orbits", "star mass 2", sets(star__mass=2.0)),
    ("orbits", "planet speed 30 km/s", sets(planet__speed=30.0)),
    ("orbits", "turn off the trails", sets(display__trails=False)),
    ("orbits", "what is the eccentricity", [("get_state", {})]),
    ("orbits", "distance 1.5", sets(planet__distance=1.5)),
    ("boids", "count 200", sets(flock__count=200)),
    ("boids", "separation 2", sets(rules__separation=2.0)),
    ("boids", "how many clusters?", [("get_state", {})]),
    ("boids", "max speed 5", sets(flock__max_speed=5.0)),
    ("waves", "frequency 2", sets(sources__frequency=2.0)),
    ("waves", "source separation 0.3", sets(sources__separation=0.3)),
    ("waves", "show nodal lines", sets(display__show_nodal_lines=True)),
    ("waves", "what is the wavelength?", [("get_state", {})]),
    ("bouncer", "switch to the projectile", [("select_target", {"target": "projectile"})]),
]

REFUSALS = [
    ("bouncer", "make it fly"),
    ("bouncer", "stop"),
    ("bouncer", ""),
    ("bouncer", "set size to 2 km"),  # length cannot become pixels
    ("bouncer", "speed 12 kg"),
    ("bouncer", "make it teal"),  # not in the enum, no parameter named
    ("bouncer", "switch to the rocket"),  # no such target
    ("launcher", "steeper angle"),
    ("launcher", "what is the meaning of life?"),
    ("swing", "set the length"),  # no number
    ("launcher", "set the speed to 12 and make it fly"),  # half understood: refuse all, change nothing
    ("bouncer", "write me a poem about balls"),
    ("projectile", "use moon gravity"),  # no number: it does not guess 1.62
    ("pendulum", "faster"),  # no speed-like parameter
    ("orbits", "make the orbit prettier"),
]


@pytest.mark.parametrize(("target", "request_text", "expected"), [c for c in CORPUS if c[2] is not None])
def test_the_corpus_maps_to_the_expected_calls(target: str, request_text: str, expected: list[Any]) -> None:
    result = plan(request_text, context(target))
    assert result.refusal is None, result.refusal
    got = [(c.tool, c.args) for c in result.calls]
    assert [g[0] for g in got] == [e[0] for e in expected]
    for (_, got_args), (_, want_args) in zip(got, expected, strict=True):
        if "values" in want_args:
            assert got_args["values"].keys() == want_args["values"].keys()
            for key, want in want_args["values"].items():
                have = got_args["values"][key]
                if isinstance(want, float):
                    assert have == pytest.approx(want, rel=1e-3), key
                else:
                    assert have == want, key
        else:
            assert got_args == want_args


@pytest.mark.parametrize(("target", "request_text"), REFUSALS)
def test_requests_it_cannot_map_are_refused_with_what_it_can_do(target: str, request_text: str) -> None:
    result = plan(request_text, context(target))
    assert result.calls == [] and result.refusal is not None
    assert result.refusal.startswith(LABEL)
    if "no target" not in result.refusal:
        assert "I can set" in result.refusal


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) + len(REFUSALS) >= 100


def test_ambiguous_names_ask_which_one() -> None:
    manifest = Manifest.from_dict(
        {
            "id": "two",
            "data": {"a": {"speed": {"type": "number", "value": 1}}, "b": {"speed": {"type": "number", "value": 2}}},
        }
    )
    result = plan("speed 3", PlannerContext(manifest, manifest.defaults(), []))
    assert result.refusal is not None and "a.speed or b.speed" in result.refusal


def test_the_summary_says_what_changed_with_units_and_conversions() -> None:
    ctx = context("bouncer")
    p = plan("speed 36 km/h and make it red", ctx)
    result = {
        "ok": True,
        "changed": {"settings.speed": {"value": 10.0, "unit": "m/s"}, "display.color": {"value": "red"}},
    }
    text = summarise(p, [result], ctx)
    assert text == "Offline planner: Set speed to 10 m/s and color to red (36 km/h = 10 m/s)."


def test_the_summary_reports_errors_from_the_tools() -> None:
    ctx = context("bouncer")
    p = plan("speed 500", ctx)
    error = {
        "ok": False,
        "error": {"code": "invalid_value", "message": "settings.speed: 500 is above the maximum 50 m/s"},
    }
    assert "Could not set parameters: settings.speed: 500 is above the maximum 50 m/s" in summarise(p, [error], ctx)


def test_the_summary_answers_questions_from_page_state() -> None:
    ctx = context("launcher")
    p = plan("what is the range?", ctx)
    text = summarise(p, [{"ok": True, "state": {"range": 40.77}}], ctx)
    assert text == "Offline planner: Range is 40.77 m (as reported by the page)."


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (30, "km/h", "m/s", 8.3333),
        (45, "deg", "rad", 0.7854),
        (1, "mi", "m", 1609.344),
        (2, "g", "m/s^2", 19.6133),
        (500, "g", "kg", 0.5),
        (25, "°C", "K", 298.15),
        (1.5, "min", "s", 90),
    ],
)
def test_unit_conversion(value: float, source: str, target: str, expected: float) -> None:
    assert _units.convert(value, source, target) == pytest.approx(expected, rel=1e-4)


def test_incompatible_units_do_not_convert() -> None:
    assert _units.convert(3, "kg", "m/s") is None
    assert _units.convert(3, "furlongs", "m") is None


def test_the_corpus_file_is_valid_json_for_reuse() -> None:
    json.dumps([[t, r, e] for t, r, e in CORPUS])


@pytest.mark.parametrize(
    "request_text", ["make the projectile land at 50 m", "aim for a range of 50 m", "hit a target 50 m away"]
)
def test_goals_on_observables_are_refused_not_guessed(request_text: str) -> None:
    result = plan(request_text, context("projectile"))
    assert result.calls == [] and result.refusal is not None


def test_a_question_reads_the_state_marked_as_page_data() -> None:
    from splitbrain_widget.agent._tools import for_model
    from splitbrain_widget.protocol import ToolResult

    ctx = context("projectile")
    p = plan("what is the range?", ctx)
    marked = for_model(ToolResult(ok=True, op="state", state={"range": 50.0}), {})
    assert summarise(p, [marked], ctx) == "Offline planner: Range is 50 m (as reported by the page)."
