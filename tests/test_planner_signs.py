"""The offline planner never inverts a request: a property test over generated requests.

Every numeric parameter of every built-in manifest (and of two made-up manifests), values of both
signs, written as digits, as "minus" / "negative" / "−", as number words ("thirty five", "a hundred
and twenty", "one and a half", "zero point five"), with and without the unit, in several phrasings
and with a correction ("30, no wait, 40"). The planner must do exactly what was asked (that one
parameter, that value) or refuse: a change of the other sign, or of another parameter, is a failure.
The spoken forms are written here by a small speller of our own, not by the planner's reader.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from functools import cache

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent.planner import PlannerContext, plan
from splitbrain_widget.manifest import Manifest, Parameter

from .test_planner_generated import ASCII, BUILTIN

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]  # fmt: skip
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spell(n: int, *, style: int = 0) -> str:
    """An integer 0..9999 in words (``style`` picks among the ways people say it)."""
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + ("" if not ones else ("-" if style % 2 else " ") + ONES[ones])
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        head = ("a hundred" if style % 2 else "one hundred") if hundreds == 1 else f"{ONES[hundreds]} hundred"
        return head if not rest else f"{head} {'and ' if style % 3 == 0 else ''}{spell(rest, style=style)}"
    thousands, rest = divmod(n, 1000)
    head = f"{spell(thousands)} thousand"
    return head if not rest else f"{head} {spell(rest, style=style)}"


def spoken(value: float, style: int) -> list[str]:
    """Ways to write ``value``: digits, and words where they say it exactly."""
    forms = []
    magnitude = abs(value)
    if value == int(value) and magnitude < 10000:
        forms.append(spell(int(magnitude), style=style))
    elif magnitude in (0.25, 0.5, 0.75, 1.5, 2.5):
        forms.append({0.25: "a quarter", 0.5: "zero point five", 0.75: "three quarters",
                      1.5: "one and a half", 2.5: "two and a half"}[magnitude])  # fmt: skip
    digits = f"{magnitude:g}"
    if value >= 0:
        return [digits, *forms]
    signs = ["minus ", "negative ", "-", "−"]
    return [f"{signs[style % 4]}{digits}", *(f"{('minus ', 'negative ')[style % 2]}{f}" for f in forms)]


def values_for(p: Parameter) -> list[float]:
    """Values inside the range (both signs where it has them) and a few outside it."""
    low = p.min if p.min is not None else -100.0
    high = p.max if p.max is not None else 100.0
    inside = {low, high, (low + high) / 2, low + (high - low) / 4}
    picks = {round(v, 2) if p.type == "number" else round(v) for v in inside}
    picks |= {0.5, 1.5, 0.25, 2, 7, 12, 35, 45, 90, 120, 250, -5, -30, -0.1, -120, -1.5, -12}  # of both signs
    if p.type == "integer":
        picks = {float(round(v)) for v in picks}
    if p.step:  # a value the manifest's step would round is not what this test is about
        picks = {v for v in picks if math.isclose(v / p.step, round(v / p.step), abs_tol=1e-9)}
    return sorted(picks)


TEMPLATES = (
    "set the {name} to {value}{unit}",
    "{name} {value}{unit}",
    "make the {name} {value}{unit} please",
    "change {name} to {value}{unit}",
    "set the {name} to {other}, no wait, {value}{unit}",
    "put the {name} at {value}{unit}",
    "{name} = {value}{unit}",
    "could you set {name} to {value}{unit}",
    "set {name} {value}{unit} now",
)

MADE_UP = {
    "thermo": {
        "id": "thermo",
        "type": "apply",
        "title": "Thermostat",
        "data": {
            "room": {
                "temperature": {"type": "number", "min": -40, "max": 60, "unit": "degC", "value": 20},
                "offset": {"type": "number", "min": -10, "max": 10, "value": 0},
            },
            "heater": {"power": {"type": "integer", "min": 0, "max": 3000, "unit": "W", "value": 1000}},
        },
    },
    "ledger": {
        "id": "ledger",
        "type": "apply",
        "title": "Ledger",
        "data": {
            "account": {
                "balance": {"type": "number", "min": -5000, "max": 5000, "value": 0},
                "rate": {"type": "number", "min": -0.5, "max": 0.5, "value": 0.01},
            }
        },
    },
}


@cache
def manifests() -> dict[str, Manifest]:
    found = {t: sb.load_target(t).manifest for t in BUILTIN}
    found |= {k: Manifest.from_dict(v, source=f"{k} (made up)") for k, v in MADE_UP.items()}
    return found


def requests() -> Iterator[tuple[str, str, str, float]]:
    """(manifest id, request, the parameter's path, the value asked for)."""
    for mid, manifest in manifests().items():
        for p in manifest.parameters.values():
            if p.readonly or p.type not in ("number", "integer"):
                continue
            name = p.name.replace("_", " ")
            unit = ASCII.get(p.unit or "", p.unit or "")
            for n, (value, template) in enumerate(itertools.product(values_for(p), TEMPLATES)):
                for k, form in enumerate(spoken(value, n)):
                    other = spoken(-value if value else 7, n + 1)[0]
                    with_unit = f" {unit}" if unit and (n + k) % 2 else ""
                    text = template.format(name=name, value=form, unit=with_unit, other=other)
                    yield mid, text, p.path, value


def test_the_generated_requests_are_enough() -> None:
    assert sum(1 for _ in requests()) >= 10_000


def test_no_request_changes_the_other_sign_or_another_parameter() -> None:
    wrong: list[str] = []
    done = refused = 0
    for mid, text, path, value in requests():
        manifest = manifests()[mid]
        result = plan(text, PlannerContext(manifest, manifest.defaults()))
        if not result.calls:
            refused += 1
            continue
        calls = [(c.tool, c.args) for c in result.calls]
        if len(calls) != 1 or calls[0][0] != "set_parameters":
            wrong.append(f"{mid}: {text!r} -> {calls}")
            continue
        values = calls[0][1]["values"]
        got = values.get(path)
        if set(values) != {path} or got is None or not math.isclose(float(got), value, rel_tol=1e-9, abs_tol=1e-12):
            wrong.append(f"{mid}: {text!r} -> {values} (asked {path} = {value})")
            continue
        done += 1
    print(f"{done} done exactly, {refused} refused, {len(wrong)} wrong")
    assert not wrong, "\n".join(wrong[:40])
    assert done > refused  # most of them are understood, not merely refused


@pytest.mark.parametrize(
    ("request_text", "path", "value"),
    [
        ("set the speed to minus five", "settings.speed", -5),  # the sign kept: set_parameters refuses it (>= 0)
        ("set the gravity to a hundred and twenty", "environment.gravity", 120),
        ("set the angle to thirty-five", "launch.angle", 35),
        ("set the angle to 30, no wait, 40", "launch.angle", 40),
        ("set the angle to thirty degrees, sorry, forty degrees", "launch.angle", 40),
        ("make the angle minus a bit", "launch.angle", None),
    ],
)
def test_spoken_numbers_on_the_projectile(request_text: str, path: str, value: float | None) -> None:
    target = "bouncer" if "speed" in request_text else "projectile"
    manifest = sb.load_target(target).manifest
    result = plan(request_text, PlannerContext(manifest, manifest.defaults()))
    if value is None:
        assert not result.calls and result.refusal
    else:
        assert [c.args["values"] for c in result.calls] == [{path: value}], result


@pytest.mark.parametrize(
    ("target", "request_text", "expected"),
    [
        ("projectile", "use moon gravity", {"environment.gravity": 1.62}),  # the manifest names it: no guess
        ("projectile", "gravity like on Mars", {"environment.gravity": 3.71}),
        ("projectile", "turn the air resistance off", {"environment.drag": 0}),
        ("projectile", "slow motion please", {"simulation.time_scale": 0.25}),
        ("projectile", "set the launch angle to 40", {"launch.angle": 40}),
        ("pendulum", "make the string length 2 m", {"pendulum.length": 2}),
        ("pendulum", "damping off", {"environment.damping": 0}),
        ("waves", "put the sources out of phase", {"sources.phase": 180}),
    ],
)
def test_the_manifest_says_how_people_talk_about_it(target: str, request_text: str, expected: dict[str, float]) -> None:
    manifest = sb.load_target(target).manifest
    result = plan(request_text, PlannerContext(manifest, manifest.defaults()))
    assert [c.args["values"] for c in result.calls] == [expected], result


def test_a_year_is_the_orbital_period_because_the_manifest_says_so() -> None:
    manifest = sb.load_target("orbits").manifest
    result = plan("make a year last 500 days", PlannerContext(manifest, manifest.defaults()))
    assert [c.tool for c in result.calls] == ["seek"] and result.calls[0].args["observable"] == "orbital_period"


def test_a_named_value_alone_belongs_to_the_one_parameter_that_has_it() -> None:
    manifest = sb.load_target("pendulum").manifest  # "moon" names a gravity only; "off" is too short alone
    assert [c.args["values"] for c in plan("moon", PlannerContext(manifest, manifest.defaults())).calls] == [
        {"environment.gravity": 1.62}
    ]
    assert not plan("turn it off", PlannerContext(manifest, manifest.defaults())).calls


@pytest.mark.parametrize("request_text", ["fire", "press fire", "shoot the cannon"])
def test_an_actions_aliases_name_it(request_text: str) -> None:
    raw = {
        "id": "cannon",
        "type": "apply",
        "data": {"s": {"power": {"type": "number", "value": 1, "min": 0, "max": 5}}},
        "actions": {"launch": {"description": "send the ball off", "aliases": ["fire", "shoot"]}},
    }
    manifest = Manifest.from_dict(raw, source="cannon (made up)")
    result = plan(request_text, PlannerContext(manifest, manifest.defaults()))
    assert [(c.tool, c.args) for c in result.calls] == [("run_action", {"name": "launch"})]
    without = Manifest.from_dict({**raw, "actions": {"launch": {"description": "send the ball off"}}}, source="x")
    assert not plan(request_text, PlannerContext(without, without.defaults())).calls  # the alias is what names it
