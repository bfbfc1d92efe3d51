"""The complete examples of docs/writing-targets.md run as written: the kit's spring (section 7)
and the bound oscillator, someone else's page steered through its manifest (section 8); each
page and manifest is taken from the doc's code blocks and run on a headless page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from splitbrain_widget import load_target

from .browser_env import require_browser

DOC = Path(__file__).resolve().parent.parent / "docs" / "writing-targets.md"


def _example(tmp_path: Path, heading: str, name: str) -> Path:
    """Write the first html and json blocks after ``heading`` as ``name``.html / .json."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", 1)]
    html = re.search(r"```html\n(.*?)```", section, re.S)
    manifest = re.search(r"```json\n(.*?)```", section, re.S)
    assert html and manifest, f"{heading}: the section holds an html and a json block"
    (tmp_path / f"{name}.html").write_text(html.group(1), encoding="utf-8")
    (tmp_path / f"{name}.json").write_text(manifest.group(1), encoding="utf-8")
    return tmp_path / f"{name}.html"


def kit_example(tmp_path: Path) -> Path:
    return _example(tmp_path, "## 7. The target kit", "spring")


def bound_example(tmp_path: Path) -> Path:
    return _example(tmp_path, "## 8. Steering a page you did not write", "oscillator")


def test_the_kit_example_is_a_kit_page_whose_parameters_are_the_manifests(tmp_path: Path) -> None:
    target = load_target(kit_example(tmp_path))
    assert target.manifest.kit and not target.manifest.bound
    assert "params:" not in target.page_html  # the kit takes the manifest's
    assert target.html.count("data-splitbrain-kit-params>") == 1


def test_the_bindings_example_loads_bound_and_its_page_knows_nothing_of_splitbrain(tmp_path: Path) -> None:
    target = load_target(bound_example(tmp_path))
    assert target.manifest.bound and set(target.manifest.actions) == {"kick"}
    assert "SplitBrain" not in target.page_html


@pytest.mark.browser
def test_the_kit_example_runs_headless(tmp_path: Path, engine: None) -> None:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(str(kit_example(tmp_path)), timeout=30) as sim:
        changed = sim.set_parameters({"amplitude": 0.2, "stiffness": 80})
        assert changed.ok and changed.state is not None, changed.error
        assert changed.state["spring.amplitude"] == 0.2 and changed.state["x"] == pytest.approx(0.2)
        after = sim.advance(1.0)
        assert after["t"] == pytest.approx(1.0, abs=0.02)
        assert after["energy"] == pytest.approx(0.5 * 80 * 0.2**2, rel=1e-2)  # ½kA²: its Euler step keeps it within 1 %
        refused = sim.set_parameter("stiffness", 500)
        assert not refused.ok and refused.error is not None and refused.error.code == "invalid_value"


@pytest.mark.browser
def test_the_bindings_example_is_steered_headless(tmp_path: Path, engine: None) -> None:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(str(bound_example(tmp_path)), timeout=30) as sim:
        first = sim.fetch_state()
        assert first.ok and first.state is not None, first.error
        assert first.state["spring.stiffness"] == 20 and first.state["spring.damped"] is False
        changed = sim.set_parameters({"stiffness": 50, "mass": 2, "damped": True})
        assert changed.ok and changed.state is not None, changed.error
        assert [changed.state[k] for k in ("spring.stiffness", "spring.mass", "spring.damped")] == [50, 2, True]
        assert changed.state["energy"] == 0  # at rest until kicked
        kicked = sim.act("kick")
        assert kicked.ok, kicked.error
        after = sim.advance(0.5)
        assert after["energy"] > 0 and after["x"] != 0, after
        assert after["shown_x"] == pytest.approx(after["x"], abs=0.001)  # the page's read-out, 3 decimals


# -- the sections on what real pages need (docs/writing-targets.md, section 8) --------------------------


def _headless(tmp_path: Path, heading: str, name: str) -> Any:
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    return HeadlessTarget(str(_example(tmp_path, heading, name)), timeout=30)


def _page(sim: Any, expression: str) -> Any:
    """What the page itself holds, read by evaluating in it (not through the bindings)."""
    return sim.host.page._frame_evaluate(expression)


@pytest.mark.browser
def test_read_beside_bind_refuses_a_value_the_model_did_not_take(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### When the page's model decides", "flock") as sim:
        taken = sim.set_parameter("population", 120)
        assert taken.ok and taken.state["flock.population"] == 120, taken.error
        assert _page(sim, "flock.count") == 120
        refused = sim.set_parameter("population", 500)
        assert not refused.ok and refused.error is not None and refused.error.code == "target_error"
        assert "flock.population: set 500, the page holds 120" in refused.error.message
        assert sim.values["flock.population"] == 120  # the kernel kept what the page holds
        assert _page(sim, "[flock.count, document.getElementById('count').value]") == [120, "120"]  # field put back
        assert sim.fetch_state().state["flock.population"] == 120


@pytest.mark.browser
def test_conversions_scale_number_and_values_both_ways(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Values the page stores differently", "shares") as sim:
        first = sim.fetch_state().state
        assert first["market.share"] == 25 and first["market.label"] == 15 and first["market.tax"] is False
        changed = sim.set_parameters({"share": 33, "tax": True, "label": 20})
        assert changed.ok, changed.error
        assert _page(sim, "[market.share, document.querySelector('input[name=tax]:checked').value]") == [0.33, "1"]
        assert changed.state["market.share"] == 33 and changed.state["market.tax"] is True
        from splitbrain_widget import Agent

        answer = Agent(sim).ask("set the share to 12%")  # the offline planner speaks the manifest's unit
        assert answer.ok and _page(sim, "market.share") == pytest.approx(0.12), answer.text


@pytest.mark.browser
def test_a_setting_that_is_a_call_is_set_and_read_through_functions(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Settings that exist only as calls", "ticker") as sim:
        assert sim.set_parameter("speed", 24).ok and _page(sim, "rate") == 24
        clamped = sim.set_parameter("speed", 100)
        assert not clamped.ok and "sketch.speed: set 100, the page holds 60" in clamped.error.message
        assert sim.values["sketch.speed"] == 24
        paused = sim.set_parameter("running", False)
        assert paused.ok and paused.state["sketch.running"] is False and _page(sim, "looping") is False
        assert sim.set_parameter("running", True).ok and _page(sim, "looping") is True


@pytest.mark.browser
def test_actions_run_their_steps_and_a_toggle_minds_its_when(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Actions as small programs", "pendulums") as sim:
        assert sim.act("start").ok and sim.act("start").ok
        assert _page(sim, "running") is True  # "start" on a running page did nothing
        assert sim.act("stop").ok and _page(sim, "running") is False
        restarted = sim.act("restart")
        assert restarted.ok, restarted.error
        assert _page(sim, "[theta1, theta2, trail.length]") == [1.0, -1.0, 0]
        assert restarted.state["trail"] == 0 and sim.values["arms.theta1"] == 1.0  # the kernel follows the page
        t0 = _page(sim, "performance.now()")
        recorded = sim.act("record")  # the wait runs the virtual clock on: exactly 30 frames
        assert recorded.ok, recorded.error
        assert recorded.state["trail"] == 30 and recorded.state["running"] is False
        assert _page(sim, "[trail.length, running]") == [30, False]
        assert 29 * 1000 / 60 <= _page(sim, "performance.now()") - t0 <= 31 * 1000 / 60


@pytest.mark.browser
def test_constraints_are_refused_before_anything_is_sent(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Rules between parameters", "species") as sim:
        refused = sim.set_parameter("rabbits", 0.9)
        assert not refused.ok and refused.error.code == "invalid_value"
        assert "the two shares add up to at most 1" in refused.error.message
        assert _page(sim, "shares.rabbits") == 0.3 and sim.values["shares.rabbits"] == 0.3
        assert sim.set_parameters({"rabbits": 0.7, "foxes": 0.1}).ok and _page(sim, "shares.rabbits") == 0.7


@pytest.mark.browser
def test_setup_when_ready_runs_after_the_page_s_own_scripts(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### `setup` when it is needed", "embedded") as sim:
        assert sim.fetch_state().state["embedded"] is True and _page(sim, "window.EMBED") is True


@pytest.mark.browser
def test_a_custom_slider_is_dragged_and_its_own_label_follows(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Controls people drag", "dial") as sim:
        dragged = sim.set_parameter("speed", 30)
        assert dragged.ok, dragged.error
        held = _page(sim, "model.speed")
        assert held == pytest.approx(30, abs=0.5)  # one pixel of a 200-pixel rail is 0.5
        assert dragged.state["dial.speed"] == held and dragged.state["shown"] == 30  # the page's own label
        assert _page(sim, "document.getElementById('label').textContent") == "30"
        back = sim.set_parameter("speed", 75)
        assert back.ok and _page(sim, "model.speed") == pytest.approx(75, abs=0.5)


@pytest.mark.browser
def test_keys_toggle_buttons_and_boards_are_steered_as_a_person_does(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "### Keys, toggle buttons and boards", "life") as sim:
        assert sim.act("glider").ok
        assert _page(sim, "cells.filter(Boolean).length") == 5
        nxt = sim.act("next")  # the N key
        assert nxt.ok and nxt.state["generation"] == 1 and _page(sim, "generation") == 1
        assert nxt.state["alive"] == 5  # a glider keeps its five cells
        running = sim.set_parameter("running", True)
        assert running.ok and running.state["life.running"] is True
        assert _page(sim, "[timer !== null, play.textContent]") == [True, "Pause"]
        assert sim.set_parameter("running", True).ok and _page(sim, "timer !== null") is True  # not flipped back
        before = _page(sim, "generation")
        more = sim.act("one_more")  # the board's own timer, on the page's virtual clock
        assert more.ok, more.error
        assert more.state["generation"] == before + 1
        assert sim.set_parameter("running", False).ok and _page(sim, "[timer, play.textContent]") == [None, "Play"]
        assert sim.act("one_more").ok  # stopped: its `when` does nothing
        assert _page(sim, "generation") == before + 1
        cleared = sim.act("clear")
        assert cleared.ok, cleared.error
        assert cleared.state["alive"] == 0 and cleared.state["recorded"] == 0
        assert _page(sim, "[cells.some(Boolean), counts.length]") == [False, 0]
        assert sim.act("clear").ok  # a clear board: nothing to click


@pytest.mark.browser
def test_a_handle_placed_by_another_value_is_dragged_where_its_expression_says(tmp_path: Path, engine: None) -> None:
    with _headless(tmp_path, "**A handle placed by another value", "share") as sim:
        quarter = sim.set_parameter("share", 25)
        assert quarter.ok, quarter.error
        assert _page(sim, "parseFloat(knob.style.left)") == pytest.approx(40, abs=1.5)  # 0.2 of 200 px
        assert sim.values["mix.share"] == pytest.approx(_page(sim, "model.share * 100"))
        assert _page(sim, "model.share") == pytest.approx(0.25, abs=0.01)
        both = sim.set_parameters({"used": 0.5, "share": 50})
        assert both.ok, both.error
        assert _page(sim, "[model.used, parseFloat(knob.style.left)]") == [0.5, pytest.approx(50, abs=1.5)]
        assert sim.values["mix.share"] == pytest.approx(_page(sim, "model.share * 100"), abs=1e-9)
