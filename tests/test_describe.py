"""The simulation in words (#40): ``sim.describe()`` and the ``describe`` tool on every built-in target.

The words come from the manifest (labels, units) and from what the page itself reported: each built-in
target runs on a headless page, advanced a second so its observables are measured.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent._tools import BY_NAME, ToolContext
from splitbrain_widget.features._describe import MAX_DESCRIPTION_CHARS, describe, number_words, value_words
from splitbrain_widget.headless import HeadlessTarget
from splitbrain_widget.manifest.registry import load_target

from .browser_env import run_async

browser = pytest.mark.browser

BUILT_IN = ("pendulum", "projectile", "bouncer", "boids", "orbits", "waves")
# per target: a phrase of its parameters with their units, and an observable it measures with its unit
EXPECTED = {
    "pendulum": (r"Length 1 m", r"period [\d.]+ s"),
    "projectile": (r"angle 45 deg", r"range [\d.]+ m"),
    "bouncer": (r"speed 8 m/s", r"bounces \d+"),
    "boids": (r"Number of boids 150", r"mean speed [\d.]+ m/s"),
    "orbits": (r"distance 1 AU", r"distance [\d.e-]+ AU"),
    "waves": (r"Frequency [\d.]+ Hz", r"wavelength [\d.]+ m"),
}


@pytest.fixture(scope="module", params=BUILT_IN)
def page(request: pytest.FixtureRequest, engine: None) -> Iterator[HeadlessTarget]:
    with HeadlessTarget(str(request.param)) as sim:
        sim.advance(5.0)  # a few swings: the pendulum's period is measured
        yield sim


@browser
def test_describe_says_every_parameter_and_what_the_page_measured_with_units(page: HeadlessTarget) -> None:
    text = page.describe()
    target = page.target_id
    setting, measured = EXPECTED[target]
    assert text.startswith(f"{page.target.title}. Set: "), text
    assert re.search(setting, text), f"{target}: no {setting!r} in {text!r}"
    assert re.search(rf"The page measures: .*{measured}", text), f"{target}: no {measured!r} in {text!r}"
    for path, parameter in page.schema.parameters.items():
        name = parameter.label or path.split(".")[-1].replace("_", " ")
        assert name in text, f"{target}: {path} ({name!r}) is not said: {text!r}"


@browser
def test_the_describe_tool_fetches_a_fresh_state_first(page: HeadlessTarget) -> None:
    before = page.describe()
    page.advance(2.0)
    result = run_async(BY_NAME["describe"].run(ToolContext(page, {}), {}))
    assert isinstance(result, dict) and result["ok"] is True and "note" not in result
    assert result["text"] == page.describe()
    if page.target_id in ("pendulum", "orbits", "boids"):  # moving pages: time passed, the words say so
        assert result["text"] != before


def test_without_a_page_the_tool_describes_the_last_report_and_says_so() -> None:
    sim = sb.TargetWidget("projectile")
    result = run_async(BY_NAME["describe"].run(ToolContext(sim, {}), {}))
    assert result["ok"] is True and "no fresh state (no_view)" in result["note"]
    assert "Not measured yet: range" in result["text"] and "angle 45 deg" in result["text"]


def test_values_in_words() -> None:
    assert [number_words(x) for x in (2.00641, 12345.6, 0.000012, 3e20, 0.0, -1.5, 9.81)] == [
        "2.006",
        "12346",
        "1.2e-5",
        "3e20",
        "0",
        "-1.5",
        "9.81",
    ]
    assert value_words(True) == "on" and value_words(False) == "off"
    assert value_words(2, "m") == "2 m" and value_words([0, 12.5], "m") == "[0, 12.5] m"
    assert value_words(None) == "no value" and value_words("x" * 100).endswith("…")


def test_a_state_without_declared_observables_is_said_from_what_it_holds() -> None:
    target = load_target("projectile")
    manifest = target.manifest.model_copy(update={"observables": {}})
    text = describe(manifest, "Thing", {"launch.angle": 30}, {"launch.angle": 30, "score": 7})
    assert text == "Thing. Set: Launch angle 30 deg. The page measures: score 7."


def test_a_description_is_bounded() -> None:
    target = load_target("projectile")
    text = describe(target.manifest, "T" * 10_000, {}, {})
    assert len(text) == MAX_DESCRIPTION_CHARS and text.endswith("…")
