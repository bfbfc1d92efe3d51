"""One set of tool tests for every home of a target: a widget behind the fake view, and a headless page.

The tool surface is one implementation (TargetWidget); each home is a host under it. These tests
run unchanged against both, so a host that breaks a tool fails here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

import splitbrain_widget as sb

from .browser_env import require_browser, run_async
from .fake_view import FakeView

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
HOSTS = [pytest.param("fake", id="fake-view"), pytest.param("headless", id="headless", marks=pytest.mark.browser)]


def make(host: str, target: str = "demo") -> sb.TargetWidget:
    if host == "headless":
        require_browser()
        return sb.HeadlessTarget(target, targets_dir=FIXTURES)
    widget = sb.TargetWidget(target, targets_dir=FIXTURES)
    FakeView(widget)
    return widget


@pytest.fixture(params=HOSTS)
def sim(request: pytest.FixtureRequest) -> Iterator[sb.TargetWidget]:
    widget = make(request.param)
    yield widget
    widget.close()


def test_a_set_is_applied_on_the_page_and_reported(sim: sb.TargetWidget) -> None:
    result = sim.set_parameters({"speed": 12, "mode": "manual"})
    assert result.ok and result.applied and result.views_applied == 1
    assert result.state is not None and result.state["settings.speed"] == 12
    assert result.state["settings.mode"] == "manual"
    assert result.changed["settings.speed"] == {"value": 12, "unit": "m/s"}
    assert sim.values["settings.speed"] == 12


def test_bad_input_is_refused_naming_the_parameter_and_nothing_changes(sim: sb.TargetWidget) -> None:
    unknown = sim.set_parameter("sped", 3)
    assert unknown.error is not None and unknown.error.code == "unknown_param" and "speed" in (unknown.error.hint or "")
    invalid = sim.set_parameter("speed", 1000)
    assert invalid.error is not None and invalid.error.code == "invalid_value" and "maximum" in invalid.error.message
    assert sim.values["settings.speed"] == 8.0


def test_reset_restores_the_defaults_on_the_page(sim: sb.TargetWidget) -> None:
    sim.set_parameter("count", 7)
    result = sim.reset()
    assert result.ok and result.applied and result.state is not None and result.state["settings.count"] == 3
    assert sim.values["settings.count"] == 3


def test_fetch_state_reads_what_the_page_reports(sim: sb.TargetWidget) -> None:
    sim.set_parameter("color", "blue")
    state = sim.fetch_state()
    assert state.ok and state.applied and state.state is not None and state.state["display.color"] == "blue"


def test_the_async_twins_take_the_same_path(sim: sb.TargetWidget) -> None:
    async def run() -> sb.ToolResult:
        return await sim.aset_parameter("count", 9)

    result = run_async(run())
    assert result.ok and result.state is not None and result.state["settings.count"] == 9


def test_the_audit_records_every_call(sim: sb.TargetWidget) -> None:
    sim.set_parameter("count", 5)
    sim.set_parameter("count", 99)
    first, second = sim.audit[-2], sim.audit[-1]
    assert (first.op, first.ok, first.views_applied) == ("set_parameters", True, 1)
    assert (second.ok, second.code) == (False, "invalid_value")


def test_the_agent_steers_any_home(sim: sb.TargetWidget) -> None:
    answer = sb.Agent(sim).ask("set the speed to 14")
    assert answer.tool_calls[0].ok and sim.values["settings.speed"] == 14
    assert answer.tool_calls[0].result["applied"] is True
    assert "Set speed to 14 m/s" in answer.text


@pytest.mark.browser
@pytest.mark.parametrize(("speed", "angle"), [(20.0, 30.0), (15.0, 45.0), (25.0, 60.0)])
def test_the_projectile_page_measures_the_textbook_range_headless(speed: float, angle: float) -> None:
    require_browser()
    with sb.HeadlessTarget("projectile") as page:
        assert page.set_parameters({"speed": speed, "angle": angle, "drag": 0, "height": 0}).ok
        state = page.advance(10)  # simulated seconds: the flight is over well before
        expected = speed**2 * math.sin(math.radians(2 * angle)) / 9.81
        assert state["range"] == pytest.approx(expected, rel=1e-3)
