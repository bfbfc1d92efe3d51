"""A simulation as a file of its own (#42, ``sim.to_html``): opened in Chromium with every request
blocked, the target runs at the widget's values, a control changes it, and the file names no URL
outside itself."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb

from .. import hostile
from .harness import wait_for

pytestmark = pytest.mark.browser

# XML namespaces are names, not addresses: nothing is fetched from them
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xhtml"}


def _target_state(page: Any) -> dict[str, Any]:
    sandbox = page.locator(".splitbrain-view iframe").first.element_handle().content_frame()
    target = sandbox.locator("iframe").element_handle().content_frame()
    return dict(json.loads(target.evaluate("() => document.body.dataset.state || '{}'")))


def test_to_html_runs_the_target_offline_at_its_values_and_its_controls_steer_it(
    offline_page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    page, refused = offline_page
    sim = sb.TargetWidget("projectile")
    sim.set_parameters({"launch.angle": 30, "launch.speed": 20, "launch.height": 0})  # no view: kept
    exported = sim.to_html(tmp_path / "projectile.html")
    assert exported.size == (tmp_path / "projectile.html").stat().st_size > 0
    text = exported.path.read_text(encoding="utf-8")
    outside = set(re.findall(r"https?://[^\s\"'<>)\\]+", text)) - NAMESPACES
    assert outside == set(), f"the file names URLs outside itself: {sorted(outside)[:10]}"

    page.goto(exported.path.as_uri())
    wait_for(
        lambda: page.evaluate("() => document.querySelector('.splitbrain-view')?.dataset.status") == "ready",
        timeout=30,
        what="the exported page's target to be ready",
    )
    wait_for(lambda: _target_state(page).get("launch.angle") == 30, timeout=15, what="the widget's values on the page")
    number = page.locator('.sb-row[data-path="launch.angle"] input[type=number]')
    number.fill("60")
    number.press("Enter")
    state = wait_for(
        lambda: (s := _target_state(page)).get("launch.angle") == 60 and s,
        timeout=15,
        what="the control to change the page",
    )
    assert state["range"] == pytest.approx(20**2 * math.sin(math.radians(120)) / 9.81, rel=1e-3)
    observables = page.locator(".sb-observables")
    observables.scroll_into_view_if_needed()
    wait_for(lambda: "35.31" in observables.inner_text(), timeout=15, what="the observables shown")
    assert refused == [], f"requests left the file: {refused}"


def test_to_html_without_controls_is_the_page_alone(offline_page: tuple[Any, list[str]], tmp_path: Path) -> None:
    page, refused = offline_page
    exported = sb.TargetWidget("pendulum").to_html(tmp_path / "pendulum.html", controls=False)
    page.goto(exported.path.as_uri())
    wait_for(
        lambda: page.evaluate("() => document.querySelector('.splitbrain-view')?.dataset.status") == "ready",
        timeout=30,
        what="the pendulum ready",
    )
    assert page.locator(".sb-panel").count() == 0
    assert page.title() == "Pendulum"
    assert refused == []


def test_the_replay_steps_reach_the_values_the_kernel_had(offline_page: tuple[Any, list[str]], tmp_path: Path) -> None:
    from splitbrain_widget.core._audit import call_source

    page, refused = offline_page
    sim = sb.TargetWidget("projectile")
    sim.set_parameters({"launch.angle": 30})
    with call_source("chat: make it steeper"):
        sim.set_parameters({"launch.angle": 60, "launch.speed": 25})
    exported = sim.to_html(tmp_path / "replay.html")
    page.goto(exported.path.as_uri())
    wait_for(
        lambda: page.evaluate("() => document.querySelector('.splitbrain-view')?.dataset.status") == "ready",
        timeout=30,
        what="the page ready",
    )
    replay = page.locator(".sb-replay")
    labels = replay.locator("ol button").all_inner_texts()
    assert labels == [
        "start: the manifest's defaults",
        "python → angle = 30",
        "chat: make it steeper → angle = 60, speed = 25",
    ], labels
    assert replay.get_attribute("data-step") == "2", "it opens where the widget was"
    wait_for(lambda: _target_state(page).get("launch.angle") == 60, timeout=15, what="the last step's values")
    replay.get_by_role("button", name="Previous").click()
    state = wait_for(lambda: (s := _target_state(page)).get("launch.angle") == 30 and s, timeout=15, what="step 2")
    assert state["launch.speed"] == 20
    assert "Step 2 of 3: python → angle = 30" in replay.locator(".sb-replay-now").inner_text()
    replay.locator("ol button").nth(0).click()
    wait_for(lambda: _target_state(page).get("launch.angle") == 45, timeout=15, what="the defaults")
    replay.get_by_role("button", name="Next").click()
    replay.get_by_role("button", name="Next").click()
    state = wait_for(
        lambda: (s := _target_state(page)).get("launch.angle") == 60 and s, timeout=15, what="the end again"
    )
    assert state["launch.speed"] == 25 and sim.values["launch.speed"] == 25
    assert refused == []


# -- the security suite's hostile pages, exported: the file is a home of its own ----------------------

STAYING = [name for name, attack in hostile.PAGES.items() if attack.expect == "answers"]


@pytest.fixture(scope="module")
def request_log() -> Iterator[hostile.RequestLog]:
    with hostile.request_log() as server:
        yield server


@pytest.mark.parametrize("name", STAYING)
def test_a_hostile_page_exported_reaches_nothing(
    name: str, browser: Any, request_log: hostile.RequestLog, tmp_path: Path
) -> None:
    """The page runs from the file as in a notebook (answers its sets), and not one request reaches the
    loopback server that every address of the page points at."""
    pages = hostile.write_pages(tmp_path / "pages", request_log.url)
    before = request_log.count()
    exported = sb.TargetWidget(name, targets_dir=pages).to_html(tmp_path / f"{name}.html")
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.goto(exported.path.as_uri())
        wait_for(
            lambda: page.evaluate("() => document.querySelector('.splitbrain-view')?.dataset.status") == "ready",
            timeout=30,
            what=f"{name} ready",
        )
        number = page.locator('.sb-row[data-path="settings.speed"] input[type=number]')
        answered = lambda: page.evaluate("() => splitbrainExport.answered()")  # noqa: E731
        for speed in ("3", "4"):  # after every attempt of load and apply had its chance
            before_set = answered()["ok"]
            number.fill(speed)
            number.press("Enter")
            wait_for(lambda n=before_set: answered()["ok"] > n, timeout=15, what=f"{name} to answer speed {speed}")
        assert answered()["failed"] == 0, answered()
    finally:
        context.close()
    assert request_log.count() == before, f"requests reached the server:\n{request_log.seen(before)}"
