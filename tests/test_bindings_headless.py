"""Bound pages on the headless runtime: steered through their manifest only, on the virtual clock.

The pages in tests/fixtures/bound_pages know nothing of splitbrain. Marked ``browser``: they skip
without Chromium (and fail under SPLITBRAIN_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from splitbrain_widget.headless import HeadlessTarget

from .browser_env import require_browser

pytestmark = pytest.mark.browser

BOUND_PAGES = Path(__file__).parent / "fixtures" / "bound_pages"


@pytest.fixture(autouse=True)
def _browser() -> None:
    require_browser()


def _variant(tmp_path: Path, page: str, change: dict[str, Any], name: str = "variant") -> Path:
    """A copy of a fixture page whose manifest has ``change`` merged in at the top level."""
    shutil.copy(BOUND_PAGES / f"{page}.html", tmp_path / f"{name}.html")
    manifest = json.loads((BOUND_PAGES / f"{page}.json").read_text(encoding="utf-8"))
    manifest.update(change, id=name)
    (tmp_path / f"{name}.json").write_text(json.dumps(manifest), encoding="utf-8")
    return tmp_path / f"{name}.json"


def test_top_level_globals_are_set_read_back_and_move_with_virtual_time() -> None:
    with HeadlessTarget(BOUND_PAGES / "globals.json") as sim:
        first = sim.fetch_state()
        assert first.ok, first.error
        assert first.state is not None
        assert {k: first.state[k] for k in ("motion.speed", "motion.gain", "motion.label", "t", "gravity")} == {
            "motion.speed": 2,
            "motion.gain": 1,
            "motion.label": "plain",
            "t": 0,
            "gravity": 9.81,
        }

        result = sim.set_parameters({"speed": 5, "gain": 3, "label": "steered"})
        assert result.ok, result.error
        assert result.state is not None
        assert result.state["motion.speed"] == 5  # a top-level let, no window property
        assert result.state["motion.gain"] == 3 and result.state["motion.label"] == "steered"  # var config.*
        assert result.state["redraws"] >= 2, "the after function ran"

        advanced = sim.advance(1.0)
        assert advanced["t"] == pytest.approx(1.0) and advanced["count"] == 10

        reset = sim.reset()
        assert reset.ok and reset.state is not None
        assert reset.state["motion.speed"] == 2 and reset.state["motion.label"] == "plain"


def test_form_controls_are_set_like_a_person_and_read_back() -> None:
    with HeadlessTarget(BOUND_PAGES / "form.json") as sim:
        result = sim.set_parameters(
            {"speed": 12.5, "count": 42, "name": "comet", "trail": True, "mode": "chaotic", "color": "red"}
        )
        assert result.ok, result.error
        state = result.state
        assert state is not None
        assert {k: state[f"settings.{k}"] for k in ("speed", "count", "name", "trail", "mode", "color")} == {
            "speed": 12.5,
            "count": 42,
            "name": "comet",
            "trail": True,
            "mode": "chaotic",
            "color": "red",
        }
        # The page's own model followed the events, as it would a person's input.
        assert state["model_mode"] == "chaotic" and state["model_trail"] is True and state["model_count"] == 42
        assert state["shown_speed"] == 12.5 and state["events"] > 0

        clamped = sim.set_parameter("speed", 49.9)  # the range input steps by 0.5: the page holds 50
        assert clamped.ok and clamped.state is not None and clamped.state["settings.speed"] == 50


def test_a_const_answers_target_error_naming_the_binding(tmp_path: Path) -> None:
    data = json.loads((BOUND_PAGES / "globals.json").read_text(encoding="utf-8"))["data"]
    data["motion"]["g"] = {"type": "number", "value": 9.81, "bind": {"global": "GRAVITY"}}
    with HeadlessTarget(_variant(tmp_path, "globals", {"data": data})) as sim:
        result = sim.set_parameter("g", 1.6)
        assert not result.ok and result.error is not None
        assert result.error.code == "target_error"
        assert result.error.message.startswith("motion.g: bind.global 'GRAVITY' is a const and cannot be written")


def test_a_missing_global_is_null_in_the_state_and_named_under_errors(tmp_path: Path) -> None:
    observables = {"bias": {"read": {"global": "BIAS"}}}
    with HeadlessTarget(_variant(tmp_path, "globals", {"observables": observables})) as sim:
        result = sim.fetch_state()
        assert result.ok and result.state is not None, result.error
        assert result.state["bias"] is None
        assert result.state["_errors"]["bias"].startswith("bias: read.global 'BIAS' is not defined in the page")


def test_a_missing_global_to_set_answers_target_error_naming_it(tmp_path: Path) -> None:
    data = {"g": {"bias": {"type": "number", "value": 0, "bind": {"global": "BIAS"}}}}
    with HeadlessTarget(_variant(tmp_path, "globals", {"data": data, "observables": {}})) as sim:
        result = sim.set_parameter("bias", 1)
        assert not result.ok and result.error is not None and result.error.code == "target_error"
        assert result.error.message.startswith("g.bias: bind.global 'BIAS' is not defined in the page"), result.error


def test_an_action_clicks_the_pages_button() -> None:
    # The fixture's ready condition waits for a global its page sets in a timer: the headless
    # clock runs a frame at a time until the page is ready.
    with HeadlessTarget(BOUND_PAGES / "button.json") as sim:
        act = sim.act
        result = act("run")
        assert result.ok, result.error
        assert result.state is not None and result.state["runs"] == 10
        assert act("reset_view").state["resets"] == 1
        off = act("off")
        assert (
            not off.ok and off.error is not None and "actions.off: bind.click '#off' is disabled" in off.error.message
        )


def test_a_wait_step_runs_virtual_time_until_it_holds_or_fails_naming_itself(tmp_path: Path) -> None:
    """The globals page grows ``particles`` every 0.1 s of its clock: "wait for 20" takes 2 s of it."""
    actions = {
        "grow": {"bind": [{"wait": "particles.length >= 20", "timeout": 10}, {"call": "redraw"}]},
        "never": {"bind": [{"wait": "particles.length > 1000", "timeout": 3}, {"call": "redraw"}]},
    }
    with HeadlessTarget(_variant(tmp_path, "globals", {"actions": actions})) as sim:
        first = sim.fetch_state().state
        grown = sim.act("grow")
        assert grown.ok, grown.error
        assert grown.state["count"] == 20 and grown.state["t"] == pytest.approx(2.0)
        assert first["t"] == 0 and grown.state["redraws"] == first["redraws"] + 1  # the step after the wait ran
        never = sim.act("never")
        assert not never.ok and never.error is not None and never.error.code == "target_error"
        assert "actions.never: bind[0].wait: 'particles.length > 1000' did not hold within 3 s" in never.error.message
        after = sim.fetch_state().state
        assert after["t"] == pytest.approx(5.0) and after["redraws"] == first["redraws"] + 1  # the step after: not run
