"""seek: vary one parameter until an observable reaches a goal, on real headless pages and fake views.

The tests marked ``browser`` run the projectile and pendulum targets in headless Chromium (they skip
without it, and fail under SPLITBRAIN_REQUIRE_BROWSER=1). The others answer from a :class:`FakeView`
at the host seam, with the textbook formulas as the page's measurements: no browser.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.features import _seek_search
from splitbrain_widget.features._seek import seek
from splitbrain_widget.features._seek_goal import Try
from splitbrain_widget.headless import HeadlessTarget

from .fake_view import FakeView

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
browser = pytest.mark.browser


def textbook(values: dict[str, Any]) -> dict[str, Any]:
    """The projectile's range without drag, from a ground launch."""
    speed, angle = values["launch.speed"], values["launch.angle"]
    return {"range": round(speed**2 * math.sin(math.radians(2 * angle)) / values["environment.gravity"], 3)}


class MeasuringView(FakeView):
    """A live page that measures its period over time: the reply to a change says null, and a state
    report sent right after it carries the period (when ``measures``)."""

    measures = True

    def _serve(self) -> None:
        while (message := self._inbox.get()) is not None:
            self.values.update(message["payload"].get("values", {}))
            reply = {"kind": "reply", "id": message["id"], "view_id": self.view_id, "ok": True}
            self.sim.receive_view_message(reply | {"state": {**self.values, "period": None}})
            if self.measures:
                length, g = self.values["pendulum.length"], self.values["environment.gravity"]
                self._event("state", {**self.values, "period": round(2 * math.pi * math.sqrt(length / g), 4)})


def fake_projectile() -> tuple[sb.TargetWidget, FakeView]:
    sim = sb.TargetWidget("projectile")
    return sim, FakeView(sim, state_of=textbook)


def why(result: sb.ToolResult) -> str:
    """A failed result's error message."""
    assert not result.ok and result.error is not None, result
    return result.error.message


def page_state(sim: HeadlessTarget) -> dict[str, Any]:
    """What the page reports now (no simulated time passes)."""
    return sim.advance(0)


def range_of(result: sb.ToolResult) -> float:
    assert result.state is not None
    value: float = result.state["range"]
    return value


# -- without a browser ----------------------------------------------------------------------------


def test_a_goal_with_a_unit_is_converted_and_every_try_is_reported_as_it_happens() -> None:
    sim, _view = fake_projectile()
    tries: list[Try] = []
    result = seek(sim, "range", "0.05 km", vary="speed", on_try=tries.append)
    assert result.ok, result
    assert abs(range_of(result) - 50) <= 0.5  # tol: 1% of the goal in the observable's unit (m)
    assert result.evaluations is not None and len(result.evaluations) <= 15
    assert [t.index for t in tries] == list(range(1, len(result.evaluations) + 1))
    assert [{"value": t.value, "observable": t.observable} for t in tries] == result.evaluations
    assert result.changed == {"launch.speed": {"value": sim.values["launch.speed"], "unit": "m/s"}}
    assert "(goal 50 m (0.05 km))" in result.message and result.for_model()["evaluations"] == result.evaluations
    assert "evaluations" not in sb.ToolResult(ok=True).model_dump()  # only seek's results carry it


def test_max_evals_bounds_the_tries_and_a_failure_puts_the_value_back() -> None:
    sim, view = fake_projectile()
    before = dict(sim.values)
    result = seek(sim, "range", 50, vary="speed", max_evals=3)
    assert not result.ok and result.error is not None and result.error.code == "goal_unreachable"
    assert result.evaluations is not None and len(result.evaluations) == 3
    assert "max_evals = 3" in why(result) and "launch.speed is back at 20 m/s" in why(result)
    assert sim.values == before and view.values["launch.speed"] == 20
    assert len(view.requests) == 4  # three tries and one apply of the original value


def test_cancelled_and_a_failing_callback_leave_no_half_made_change() -> None:
    sim, view = fake_projectile()
    before = dict(sim.values)
    tries: list[Try] = []
    stopped = seek(sim, "range", 50, vary="speed", on_try=tries.append, cancelled=lambda: len(tries) >= 2)
    assert stopped.error is not None and stopped.error.code == "cancelled" and len(tries) == 2
    assert sim.values == before

    def boom(_: Try) -> None:
        raise RuntimeError("the chat panel went away")

    with pytest.raises(RuntimeError, match="chat panel"):
        seek(sim, "range", 50, vary="speed", on_try=boom)
    assert sim.values == before and view.values["launch.speed"] == before["launch.speed"]


def test_what_cannot_be_varied_is_refused_and_nothing_is_sent() -> None:
    sim, view = fake_projectile()
    flag = seek(sim, "range", 50, vary="show_vectors", within=(0, 1))
    assert flag.error is not None and flag.error.code == "invalid_value"
    assert "within: display.show_vectors is a boolean; seek tries each of its values" in why(flag)
    unknown = seek(sim, "range", 50, vary="sped")
    assert unknown.error is not None and unknown.error.code == "unknown_param" and "launch.speed" in str(unknown)
    tower = seek(sim, "range", 50, vary="speed", within=(10, 200))
    assert tower.error is not None and tower.error.code == "invalid_value" and "0..100" in why(tower)
    assert view.requests == []


def test_a_boolean_is_varied_by_trying_each_value() -> None:
    sim = sb.TargetWidget("projectile")
    FakeView(sim, state_of=lambda v: {**textbook(v), "range": 80.0 if v["display.show_vectors"] else 20.0})
    reached = seek(sim, "range", 80, vary="show_vectors")
    assert reached.ok, reached
    assert sim.values["display.show_vectors"] is True and reached.changed["display.show_vectors"]["value"] is True
    assert [e["value"] for e in reached.evaluations or []] == [False, True]
    assert "with display.show_vectors = true" in reached.message
    lowest = seek(sim, "range", "min", vary="show_vectors")
    assert lowest.ok and sim.values["display.show_vectors"] is False, lowest
    assert "is smallest, 20 m, with display.show_vectors = false among false, true" in lowest.message
    missed = seek(sim, "range", 50, vary="show_vectors")
    assert missed.error is not None and missed.error.code == "goal_unreachable"
    assert "no value of display.show_vectors brings range to 50 m (tried false, true); closest:" in why(missed)
    assert sim.values["display.show_vectors"] is False  # put back where it was


def test_an_enum_is_varied_by_trying_each_of_its_values_and_a_depends_on_names_it() -> None:
    from splitbrain_widget.manifest import Manifest

    sim = sb.TargetWidget("bouncer")
    colors = list(sim.schema.parameters["display.color"].enum or ())
    FakeView(sim, state_of=lambda v: {"bounces": colors.index(v["display.color"])})
    result = seek(sim, "bounces", 3, vary="color")
    assert result.ok, result
    assert sim.values["display.color"] == colors[3]
    assert [e["value"] for e in result.evaluations or []] == colors[:4]  # it stops at the first that reaches it
    raw = sim.schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    raw["observables"]["bounces"]["depends_on"] = ["display.color"]
    assert Manifest.from_dict(raw).varies("bounces") == ("display.color",)


def test_an_integer_parameter_is_tried_at_whole_values() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(sim, state_of=lambda values: {"echo": 3 * values["settings.count"]})
    result = seek(sim, "echo", 12, vary="count")
    assert result.ok, result
    assert sim.values["settings.count"] == 4 and result.changed["settings.count"]["value"] == 4
    assert result.evaluations is not None and all(isinstance(e["value"], int) for e in result.evaluations)


def test_an_observable_the_page_does_not_report_is_not_measured_at_once() -> None:
    sim, view = fake_projectile()
    before = dict(sim.values)
    result = seek(sim, "height", 30, vary="angle")
    assert result.error is not None and result.error.code == "not_measured"
    assert "does not report height" in why(result) and "range" in why(result)
    assert result.evaluations == [{"value": 0.0, "observable": None}]
    assert sim.values == before and len(view.requests) == 2  # one try, one apply of the original value


def test_a_live_page_is_waited_on_until_a_state_report_carries_the_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = sb.TargetWidget("pendulum")
    view = MeasuringView(sim)
    result = seek(sim, "period", "3 s", vary="length")
    assert result.ok, result
    assert result.state is not None and abs(result.state["period"] - 3) <= 0.03
    assert result.evaluations is not None and all(e["observable"] is not None for e in result.evaluations)

    before = dict(sim.values)
    view.measures = False  # a page that stops measuring: not reported within the wait, never a loop
    monkeypatch.setattr(_seek_search, "LIVE_WAIT_S", 0.3)
    silent = seek(sim, "period", 2, vary="length")
    assert silent.error is not None and silent.error.code == "not_measured"
    assert "did not report period at pendulum.length = 0.1 m" in why(silent)
    assert silent.evaluations == [{"value": 0.1, "observable": None}] and sim.values == before


# -- on real pages --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def projectile_page(engine: None) -> Iterator[HeadlessTarget]:
    with HeadlessTarget("projectile") as sim:
        yield sim


@pytest.fixture
def projectile(projectile_page: HeadlessTarget) -> HeadlessTarget:
    assert projectile_page.reset().ok
    return projectile_page


@browser
@pytest.mark.parametrize("drag", [0, 0.02])
def test_projectile_lands_at_50_m_by_its_speed(projectile: HeadlessTarget, drag: float) -> None:
    assert projectile.set_parameters({"drag": drag}).ok
    tries: list[Try] = []
    result = seek(projectile, "range", "50 m", vary="launch.speed", on_try=tries.append)
    assert result.ok, result
    assert abs(range_of(result) - 50) <= 0.5
    assert result.evaluations is not None and len(result.evaluations) <= 15 and len(tries) == len(result.evaluations)
    assert page_state(projectile)["range"] == range_of(result)  # the state is the page's, at the answer
    assert result.changed["launch.speed"]["value"] == projectile.values["launch.speed"]
    assert result.message.startswith("range reached") and "launch.speed = " in result.message


@browser
def test_the_longest_range_is_at_45_degrees_without_drag_and_lower_with_it(projectile: HeadlessTarget) -> None:
    still = seek(projectile, "range", "max", vary="angle")
    assert still.ok, still
    assert abs(projectile.values["launch.angle"] - 45) <= 1
    assert projectile.set_parameters({"drag": 0.02}).ok
    dragged = seek(projectile, "range", "max", vary="angle")
    assert dragged.ok, dragged
    assert projectile.values["launch.angle"] < 44 and range_of(dragged) < range_of(still)
    assert page_state(projectile)["range"] == range_of(dragged)


@browser
def test_a_range_out_of_reach_names_the_peak_and_puts_the_angle_back(projectile: HeadlessTarget) -> None:
    assert projectile.set_parameters({"angle": 30}).ok
    before = dict(projectile.values)
    result = seek(projectile, "range", 500, vary="angle")
    assert result.error is not None and result.error.code == "goal_unreachable"
    assert "range peaks at 40.7" in why(result) and "launch.angle = 45" in why(result)
    assert "500 m needs more than this range allows" in why(result) and "launch.speed" in str(result)
    assert projectile.values == before and page_state(projectile)["launch.angle"] == 30

    kept = seek(projectile, "range", 500, vary="angle", keep_closest=True)
    assert kept.error is not None and kept.error.code == "goal_unreachable" and "keep_closest" in why(kept)
    assert abs(projectile.values["launch.angle"] - 45) <= 1
    assert kept.changed["launch.angle"]["value"] == projectile.values["launch.angle"]


@browser
def test_an_observable_the_page_does_not_report_fails_with_the_values_back(projectile: HeadlessTarget) -> None:
    before = dict(projectile.values)
    result = seek(projectile, "apex", 10, vary="angle")
    assert result.error is not None and result.error.code == "not_measured"
    assert "max_height" in why(result) and projectile.values == before


@browser
def test_a_pendulum_of_3_s_period_by_its_length(engine: None) -> None:
    with HeadlessTarget("pendulum") as sim:
        result = seek(sim, "period", "3 s", vary="pendulum.length")
        assert result.ok, result
        assert result.state is not None and abs(result.state["period"] - 3) <= 0.03
        assert result.evaluations is not None and len(result.evaluations) <= 15
        assert abs(page_state(sim)["period"] - 3) <= 0.03  # the page still swings at that length


@browser
def test_a_double_pendulum_swings_slower_each_mode_tried_on_the_page(engine: None) -> None:
    """The pendulum's ``mode`` (an enum) varied on a headless page: each value tried, its period waited
    for on the page's clock, the slower one kept."""
    with HeadlessTarget("pendulum", timeout=60) as sim:
        result = sim.seek("period", "max", vary="mode")
        assert result.ok, result
        periods = {e["value"]: e["observable"] for e in result.evaluations or []}
        assert set(periods) == {"simple", "double"} and periods["double"] > periods["simple"]
        assert sim.values["pendulum.mode"] == "double" == result.state["pendulum.mode"]
