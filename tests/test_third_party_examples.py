"""The third-party pages under examples/third_party: each manifest loads, binds everything, and its page assembles.

The pages are other people's code, unchanged apart from inlining (see each folder's README); the
manifests steer them through globals, form controls and top-level ``let`` variables. The tests
without a browser check the files; the ``browser`` ones run each page headless (virtual clock).
``EXAMPLES`` is shared with tests/browser/test_third_party_browser.py.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget import registry

from .browser_env import require_browser

ROOT = Path(__file__).resolve().parents[1]
THIRD_PARTY = ROOT / "examples" / "third_party"


@dataclass(frozen=True)
class Example:
    """One page: how it is steered, values to apply (none a default) and what its actions do."""

    name: str
    kind: (
        str  # "globals" | "form controls" | "top-level let" | "custom sliders" | "calls" | "form controls and globals"
    )
    license: str  # a phrase its LICENSE file holds
    changes: dict[str, Any]
    clock: str  # an observable that counts frames ("" when the page has none)
    alone: tuple[str, ...] = ()  # changes applied one by one after the others (they change how the rest reads)
    actions: dict[str, dict[str, Any]] = field(default_factory=dict)  # action -> state entries it leads to
    # parameter -> a JS expression of what the page's own model holds, read in the page itself (not
    # through the bindings); where the model is in a closure, what the page itself shows of it
    model: dict[str, str] = field(default_factory=dict)
    settle: float = 0.0  # simulated seconds before the model has taken a change (the page's next frame)
    late: tuple[str, ...] = ()  # observables the page shows only after a while (null until then)
    # values the page cannot hold exactly, set after the others: it keeps the nearest it can (a drag lands
    # on a pixel), and the state and sim.values must say that one
    nearest: dict[str, Any] = field(default_factory=dict)

    @property
    def page(self) -> Path:
        return THIRD_PARTY / self.name / f"{self.name}.html"

    def load(self) -> registry.Target:
        return sb.load_target(self.page)


EXAMPLES = (
    Example(
        "euler_fluid",
        "globals",
        "MIT License",
        {
            "solver.gravity": -3.5,
            "solver.iterations": 60,
            "solver.over_relaxation": 1.5,
            "solver.time_step": 0.01,
            "solver.paused": True,
            "display.show_pressure": True,
            "display.show_smoke": False,
            "display.show_streamlines": True,
            "display.show_velocities": True,
        },
        clock="frame",
        model={
            "solver.gravity": "scene.gravity",
            "solver.iterations": "scene.numIters",
            "solver.over_relaxation": "scene.overRelaxation",
            "solver.time_step": "scene.dt",
            "solver.paused": "scene.paused",
            "display.show_pressure": "scene.showPressure",
            "display.show_smoke": "scene.showSmoke",
        },
        actions={
            "tank": {"scene": 0, "cells_high": 50, "solver.gravity": -9.81, "display.show_pressure": True},
            "paint": {"scene": 2, "cells_high": 100, "solver.over_relaxation": 1.0},
            "hires_tunnel": {"scene": 3, "cells_high": 200, "solver.iterations": 100},
            "wind_tunnel": {"scene": 1, "cells_high": 100, "solver.gravity": 0.0, "display.show_smoke": True},
        },
    ),
    Example(
        "lorossi_boids",
        "form controls",
        "Attribution 4.0 International",
        {
            "flock.separation": 1.25,
            "flock.alignment": 2.0,
            "flock.cohesion": 0.35,
            "flock.view_range": 120,
            "look.hue": 200,
            "look.show_trail": False,
            "look.show_stats": True,
            "flock.time_changing": True,
        },
        clock="",
        alone=("flock.time_changing",),
        # the birds' factors live in a closure; the page's own labels show the ones they use now
        model={
            "flock.separation": "Number(document.querySelector('label[for=separation] .value').textContent)",
            "flock.alignment": "Number(document.querySelector('label[for=alignment] .value').textContent)",
            "flock.cohesion": "Number(document.querySelector('label[for=cohesion] .value').textContent)",
            "flock.view_range": "Number(document.querySelector('label[for=viewrange] .value').textContent)",
            "look.hue": "Number(document.querySelector('label[for=hue] .value').textContent)",
        },
        settle=0.1,
        actions={
            "draw_obstacles": {"draw_button": "Done"},
            "erase_obstacles": {"draw_button": "Draw obstacles"},  # leaves draw mode
            "erase_all_obstacles": {},
            "add_boid": {},
            "remove_boid": {},
            "reset": {},
        },
    ),
    Example(
        "double_pendulum",
        "top-level let",
        "MIT License",
        {
            "pendulum.length1": 90,
            "pendulum.length2": 150,
            "pendulum.mass1": 20,
            "pendulum.mass2": 5,
            "pendulum.gravity": 0.5,
        },
        clock="frame",
        model={"pendulum.length1": "r1", "pendulum.length2": "r2", "pendulum.mass1": "m1", "pendulum.gravity": "g"},
    ),
    Example(
        "ncase_polygons",
        "custom sliders",
        "CC0 1.0 Universal",
        {"segregation.min_same": 33, "segregation.max_same": 75, "board.occupied": 60, "board.triangles": 30},
        clock="",
        actions={"start": {"running": True}, "stop": {"running": False}, "new_board": {"steps": 0}},
        # the sliders' values as the page's model holds them (what its drag handlers wrote)
        model={
            "segregation.min_same": "BIAS * 100",
            "segregation.max_same": "NONCONFORM * 100",
            "board.occupied": "(1 - EMPTINESS) * 100",
            "board.triangles": "RATIO_TRIANGLES * 100",
        },
        nearest={"segregation.min_same": 33.3},  # its 400-pixel slider keeps 33.25 %
    ),
    Example(
        "fire",
        "form controls and globals",
        "MIT License",
        {
            "fire.floor": True,
            "fire.ring": False,
            "fire.swirls": True,
            "fire.swirl_probability": 20,
            "solver.iterations": 20,
            "solver.gravity": -2.0,
            "solver.paused": True,
        },
        clock="frame",  # the page's own counter, which counts paused frames too
        actions={"step": {"solver.paused": True}, "restart": {"hottest": 0, "swirl_count": 0}},
        model={
            "fire.floor": "scene.burningFloor",
            "fire.ring": "scene.burningObstacle",
            "fire.swirls": "scene.showSwirls",
            "fire.swirl_probability": "Number(scene.swirlProbability)",  # the page stores the slider's text
            "solver.iterations": "scene.numIters",
            "solver.paused": "scene.paused",
        },
    ),
    Example(
        "triple_pendulum",
        "form controls and globals",
        "Permission is hereby granted, free of charge",
        {"sim.substeps": 100, "sim.gravity": -5.0, "sim.paused": False},
        clock="",  # no frame counter of its own (tests below run its clock)
        actions={
            "restart": {"configuration": 1, "sim.paused": True},  # the next of its six chains, paused
            "run": {"sim.paused": False},
            "step": {"sim.paused": True},
            "clear_trail": {"trail": 0},
        },
        model={"sim.substeps": "scene.numSubSteps", "sim.gravity": "scene.gravity", "sim.paused": "scene.paused"},
    ),
    Example(
        "snakes_ladders",
        "calls",
        "MIT License",
        {"sketch.speed": 12, "sketch.running": False},
        clock="",  # paused by its own change; tests/test_third_party_examples.py::test_snakes_ladders_* run its clock
        actions={"step": {}, "finish_game": {}},
        late=("average_rolls",),  # the sketch's <p> is empty until a first game ends
        # p5's own instance, not the globals the bindings read
        model={"sketch.speed": "p5.instance._targetFrameRate", "sketch.running": "p5.instance._loop"},
    ),
    Example(
        "nolan_life",
        "toggle buttons",
        "The MIT License (MIT)",
        {"life.running": True},
        clock="",  # no counter of its own: tests/test_third_party_examples.py::test_nolan_life_* run it
        # from an empty board: five cells pressed, a generation, nothing while paused, a random
        # board of 600 cells, every live one pressed dead
        actions={
            "glider": {"alive": 5},
            "step": {"alive": 5},
            "one_more": {"alive": 5},
            "randomize": {"cells": 600},
            "clear": {"alive": 0},
        },
        model={"life.running": "playing"},
    ),
    Example(
        "particle_life",
        "globals",
        "Copyright (c) 2022 Hunar Ahmad",
        {
            "particles.viscosity": 1.2,
            "particles.gravity": 0.2,
            "particles.wall_repel": 20,
            "particles.explore": True,
            "drawing.radius": 2.0,
            "drawing.circles": True,
            "drawing.clusters": True,
        },
        clock="",  # no frame counter of its own (its fps is measured on the wall clock)
        actions={"random_rules": {"colors": 4}, "symmetric_rules": {"atoms": 2000}, "scatter": {"atoms": 2000}},
        model={
            "particles.viscosity": "settings.viscosity",
            "particles.gravity": "settings.gravity",
            "drawing.clusters": "settings.drawings.clusters",
            "drawing.radius": "settings.atoms.radius",
        },
    ),
)
IDS = [e.name for e in EXAMPLES]


def same(a: Any, b: Any) -> bool:
    """Equal, numbers within a rounding error (a slider reports "1.25", a page may round)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return bool(a == b)


# -- the files ------------------------------------------------------------------------------------


def test_every_folder_is_an_example() -> None:
    folders = sorted(p.name for p in THIRD_PARTY.iterdir() if p.is_dir())
    assert folders == sorted(IDS)
    listed = (THIRD_PARTY / "README.md").read_text(encoding="utf-8")
    for name in IDS:
        assert f"[{name}]({name}/)" in listed, f"examples/third_party/README.md does not list {name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_the_manifest_loads_and_binds_everything(example: Example) -> None:
    target = example.load()
    manifest = target.manifest
    assert target.id == manifest.id == example.name
    assert manifest.bound
    assert manifest.title and manifest.description
    unbound = [p.path for p in manifest.parameters.values() if p.bind is None]
    assert not unbound, f"{example.name}: parameters without bind: {unbound}"
    unread = [name for name, o in manifest.observables.items() if o.read is None]
    assert not unread, f"{example.name}: observables without read: {unread}"
    assert all(a.bind is not None for a in manifest.actions.values())
    assert manifest.csp is None, "every example runs under the default CSP"
    kinds = {p.bind.kind for p in manifest.parameters.values() if p.bind is not None}
    expected = {
        "form controls": {"selector"},
        "custom sliders": {"drag"},
        "calls": {"call", "calls"},
        "form controls and globals": {"selector", "global"},
        "toggle buttons": {"toggle"},
    }
    assert kinds == expected.get(example.kind, {"global"})
    assert set(example.changes) == set(manifest.parameters), "the test changes every parameter"
    assert set(example.actions) == set(manifest.actions), "the test runs every action"
    for path, value in example.changes.items():
        param = manifest.parameters[path]
        assert param.check_value(value) == value and not same(value, param.value), path


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_it_is_listed_from_its_folder(example: Example) -> None:
    listing = sb.list_targets(THIRD_PARTY / example.name)
    assert example.name in listing.ids()
    assert not [p for p in listing.problems if example.name in p], listing.problems


_RESOURCE = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href)\s*=\s*[\"']?([^\"'\s>]+)", re.I
)


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_the_page_is_self_contained_and_assembles(example: Example) -> None:
    page = example.page.read_text(encoding="utf-8")
    markup = re.sub(r"(<(script|style)\b[^>]*>).*?(</\2)", r"\1\3", page, flags=re.S | re.I)
    outside = [url for url in _RESOURCE.findall(markup) if not url.startswith("data:")]
    assert not outside, f"{example.name} loads {outside}: inline it"
    styles = "".join(re.findall(r"<style\b[^>]*>(.*?)</style", page, flags=re.S | re.I))
    assert not re.search(r"url\(\s*(?![\"']?data:)", styles), "a CSS url() that is not a data: URL"
    html = example.load().html
    head = html[: html.lower().find("<script")]
    assert f'content="{registry.DEFAULT_CSP}"' in head, "the default CSP comes first"
    assert registry.target_api_script() in html
    assert html.count("<script") > page.count("<script"), "the target API and the bindings are added"
    assert page.replace("\r\n", "\n").strip()[-200:] in html.replace("\r\n", "\n"), "the page itself is kept whole"


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_license_and_provenance_are_beside_it(example: Example) -> None:
    folder = THIRD_PARTY / example.name
    license_text = (folder / "LICENSE").read_text(encoding="utf-8")
    assert example.license in license_text
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert re.search(r"\b[0-9a-f]{40}\b", readme), "the README names the commit"
    assert "github.com/" in readme and "**Inlined**" in readme and "**Changed**" in readme
    if "p5" in (folder / f"{example.name}.html").read_text(encoding="utf-8")[:2000]:
        assert "LESSER GENERAL PUBLIC LICENSE" in (folder / "P5-LICENSE.txt").read_text(encoding="utf-8")
        assert "LGPL-2.1" in readme


# -- headless, on the virtual clock ----------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_headless_apply_read_back_and_advance(example: Example) -> None:
    """On the virtual clock too; lorossi_boids gets ready in a 50 ms timer of its own, which runs
    because the clock moves on by itself, a frame at a time, until the page is ready."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    manifest = example.load().manifest
    with HeadlessTarget(example.page, timeout=30) as sim:
        reply = sim.fetch_state()
        assert reply.ok and reply.state is not None, reply.error
        first = reply.state
        missing = [k for k in [*manifest.parameters, *manifest.observables] if k not in first]
        assert not missing, f"the first state lacks {missing}: {first}"
        for path, param in manifest.parameters.items():
            assert same(first[path], param.value), (path, first[path], param.value)
        together = {p: v for p, v in example.changes.items() if p not in example.alone}
        result = sim.set_parameters(together)
        assert result.ok and result.state is not None, result.error
        applied = result.state
        wrong = {p: applied.get(p) for p, v in together.items() if not same(applied.get(p), v)}
        assert not wrong, f"read back differs from what was applied: {wrong}"
        for path in example.alone:
            alone = sim.set_parameter(path, example.changes[path])
            assert alone.ok and alone.state is not None, (path, alone.error)
            assert same(alone.state[path], example.changes[path]), (path, alone.state)
        if example.clock:
            before = applied[example.clock]
            after = sim.advance(2.0)
            assert after[example.clock] > before, (before, after)
            assert all(after.get(name) is not None for name in manifest.observables if name not in example.late), after


@pytest.mark.browser
@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_after_every_set_the_state_and_the_kernel_s_values_are_what_the_page_s_own_model_holds(
    example: Example,
) -> None:
    """Read in the page itself, not through the bindings: the reported state, and ``sim.values``, are
    never a value the page did not take (a drag lands on a pixel, and the page keeps its nearest)."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    assert example.model, "every example names where its page's model is"
    together = {p: v for p, v in example.changes.items() if p not in example.alone}
    with HeadlessTarget(example.page, timeout=30) as sim:
        for values in (
            {p: v for p, v in together.items() if p in example.model},
            *({p: v} for p, v in together.items()),
            *({p: v} for p, v in example.nearest.items()),
        ):
            result = sim.set_parameters(values)
            assert result.ok and result.state is not None, (values, result.error)
            if example.settle:
                sim.advance(example.settle)
            state = sim.fetch_state().state or {}
            for path, expression in example.model.items():
                held = sim.host.page._frame_evaluate(expression)
                assert same(state[path], held), (values, path, state[path], held)
                assert same(sim.values[path], held), (values, path, sim.values[path], held)


@pytest.mark.browser
def test_snakes_ladders_speed_is_frame_rate_pausing_is_no_loop_and_a_game_can_be_waited_for() -> None:
    """The sketch's speed is p5's frameRate(n) and running is loop() / noLoop(), set through calls;
    ``finish_game`` is a wait step: it runs the sketch's clock on until the game being played ends."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    page = THIRD_PARTY / "snakes_ladders" / "snakes_ladders.html"
    with HeadlessTarget(page, timeout=30) as sim:
        ev = sim.host.page._frame_evaluate
        assert sim.set_parameter("speed", 10).ok
        frame = sim.fetch_state().state["frame"]
        assert sim.advance(2.0)["frame"] == frame + 20  # 10 frames a second, of the page's own clock
        paused = sim.set_parameter("running", False)
        assert paused.ok and paused.state["sketch.running"] is False and ev("p5.instance._loop") is False
        frame = sim.fetch_state().state["frame"]
        assert sim.advance(2.0)["frame"] <= frame + 1  # paused (p5 may finish the frame it was in)
        frame = sim.fetch_state().state["frame"]
        assert sim.act("step").state["frame"] == frame + 1  # redraw(): one frame
        assert sim.act("finish_game").state["frame"] == frame + 1  # its `when`: nothing while paused
        assert sim.set_parameter("running", True).ok
        games = sim.fetch_state().state["games"]
        finished = sim.act("finish_game")
        assert finished.ok, finished.error
        state = finished.state
        assert state["games"] == games + 1 and state["rolls"] == 0 and state["spot"] == -1
        rolls = ev("rolls.slice(0, index)")  # what the page's own list holds
        assert state["average_rolls"] == pytest.approx(sum(rolls) / len(rolls))


@pytest.mark.browser
def test_fire_checkboxes_take_a_click_and_without_it_the_model_s_refusal_is_told(tmp_path: Path) -> None:
    """The fire page's checkboxes change its model in their onclick handlers. Set with a click event,
    the model follows; set with the default input/change events, the box shows the value and the model
    does not: the parameter's ``read`` says so (``target_error`` naming both), not ``ok``."""
    require_browser()
    import json
    import shutil

    from splitbrain_widget.headless import HeadlessTarget

    folder = THIRD_PARTY / "fire"
    with HeadlessTarget(folder / "fire.html", timeout=30) as sim:
        taken = sim.set_parameter("floor", True)
        assert taken.ok and taken.state["fire.floor"] is True, taken.error
        assert sim.host.page._frame_evaluate("[scene.burningFloor, burningFloor.checked]") == [True, True]
    shutil.copy(folder / "fire.html", tmp_path / "fire_noclick.html")
    manifest = json.loads((folder / "fire.json").read_text(encoding="utf-8"))
    del manifest["data"]["fire"]["floor"]["bind"]["event"]
    manifest["id"] = "fire_noclick"
    (tmp_path / "fire_noclick.json").write_text(json.dumps(manifest), encoding="utf-8")
    with HeadlessTarget(tmp_path / "fire_noclick.html", timeout=30) as sim:
        refused = sim.set_parameter("floor", True)
        assert not refused.ok and refused.error is not None and refused.error.code == "target_error"
        assert "fire.floor: set true, the page holds false" in refused.error.message
        assert sim.values["fire.floor"] is False
        assert sim.host.page._frame_evaluate("[scene.burningFloor, burningFloor.checked]") == [False, False]  # put back


@pytest.mark.browser
def test_triple_pendulum_fewer_substeps_drift_further_from_the_analytic_chain() -> None:
    """The page's point, through its notched slider (``values``): PBD with 1 sub-step a frame drifts
    from the analytic motion far more than with 10,000, from the same start and the same time."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    page = THIRD_PARTY / "triple_pendulum" / "triple_pendulum.html"
    drift = {}
    for substeps in (1, 10000):
        with HeadlessTarget(page, timeout=30) as sim:
            set_ = sim.set_parameters({"substeps": substeps, "paused": False})
            assert set_.ok and set_.state["sim.substeps"] == substeps, set_.error
            notch = sim.host.page._frame_evaluate("document.getElementById('stepsSlider').value")
            assert notch == {1: "0", 10000: "5"}[substeps]  # the slider's notch, set as a person sets it
            drift[substeps] = sim.advance(1.0)["divergence"]
    assert drift[1] > 10 * drift[10000], drift


@pytest.mark.browser
def test_nolan_life_runs_by_its_own_button_and_its_cells_are_pressed_as_a_person_presses_them() -> None:
    """The toggle's label says Pause while it runs (Start, then Resume, when not); a second set to
    what it shows does not press it again; `one_more` waits for the board's own next generation on
    the page's clock; `clear` presses every live cell, also while it runs."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(THIRD_PARTY / "nolan_life" / "nolan_life.html", timeout=30) as sim:
        ev = sim.host.page._frame_evaluate
        board = (
            "Array.from(document.querySelectorAll('#gol-table td'), (td) => +td.classList.contains('alive')).join('')"
        )
        assert sim.act("glider").ok and ev("document.querySelectorAll('#gol-table td.alive').length") == 5
        assert sim.act("glider").ok  # its `when`: not on a board that has cells
        assert ev("document.querySelectorAll('#gol-table td.alive').length") == 5
        assert ev("document.querySelector('#btn-pauseplay').textContent") == "Start"
        running = sim.set_parameter("running", True)
        assert running.ok and running.state["life.running"] is True and running.state["label"] == "Pause"
        assert sim.set_parameter("running", True).ok and ev("playing") is True  # showing Pause: not pressed again
        before = ev(board)
        more = sim.act("one_more")
        assert more.ok, more.error
        after = ev(board)
        assert after != before and more.state["alive"] == 5  # the glider moved on, one generation
        cleared = sim.act("clear")  # while it runs
        assert cleared.ok and cleared.state["alive"] == 0
        paused = sim.set_parameter("running", False)
        assert paused.ok and paused.state["label"] == "Resume" and ev("playing") is False
        assert sim.set_parameter("running", False).ok and ev("playing") is False  # not flipped back
        assert sim.act("one_more").ok  # paused: its `when` does nothing
        assert sim.values["life.running"] is False


@pytest.mark.browser
def test_particle_life_s_keys_are_pressed_on_its_canvas_as_a_person_presses_them() -> None:
    """R draws new rules from a new seed, S makes each pair's rules mutual, O scatters the atoms: the
    page's own shortcuts, which it listens for on its canvas; its lil-gui panel follows the model."""
    require_browser()
    from splitbrain_widget.headless import HeadlessTarget

    with HeadlessTarget(THIRD_PARTY / "particle_life" / "particle_life.html", timeout=30) as sim:
        ev = sim.host.page._frame_evaluate
        seed = sim.fetch_state().state["seed"]
        assert sim.act("random_rules").state["seed"] != seed
        assert ev("String(settings.seed)") == ev("location.hash.slice(1)")  # the page's own record of it
        mutual = (
            "settings.colors.every((a) => settings.colors.every((b) => settings.rules[a][b] === settings.rules[b][a]))"
        )
        assert ev(mutual) is False
        assert sim.act("symmetric_rules").ok and ev(mutual) is True
        before = ev("atoms.slice(0, 20).map((a) => [a[0], a[1]])")
        assert sim.act("scatter").ok and ev("atoms.slice(0, 20).map((a) => [a[0], a[1]])") != before
        assert sim.set_parameter("viscosity", 1.5).ok
        shown = "settings.gui.controllersRecursive().find((c) => c.property === 'viscosity').$input.value"
        sim.advance(0.1)  # the panel's controls follow the model on its next frames (lil-gui's listen)
        assert float(ev(shown)) == 1.5
