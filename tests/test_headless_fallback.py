"""A widget with no view runs its calls on a headless page (``headless=True`` or SPLITBRAIN_HEADLESS=1),
and a notebook view that appears takes over with the kernel's values.

The notebook view is the fake view of tests/fake_view.py at the host seam. The tests marked
``browser`` skip without Chromium (and fail under SPLITBRAIN_REQUIRE_BROWSER=1); the others need none.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import splitbrain_widget as sb
from splitbrain_widget.hosts import _headless_engine as engine_mod
from splitbrain_widget.hosts._browser_finder import ENV_CHROMIUM
from splitbrain_widget.hosts._headless_engine import HeadlessUnavailable
from splitbrain_widget.widget import ENV_HEADLESS, NO_VIEW_MESSAGE

from .browser_env import run_async
from .fake_view import FakeView, wait_for

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
browser = pytest.mark.browser


def page_id(sim: sb.TargetWidget) -> str | None:
    """The view id of the widget's headless page, while it has one."""
    assert sim._fallback is not None, "the widget has no headless fallback"
    return sim._fallback.view_id


@pytest.fixture
def no_chromium(monkeypatch: pytest.MonkeyPatch, no_browser: None) -> None:
    """A machine without a browser, in a process that never started the headless engine."""
    monkeypatch.setattr(engine_mod.Engine, "_instance", None)


@pytest.fixture
def widgets(engine: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., sb.TargetWidget]]:
    """``widgets(target="demo", **kw)``: a TargetWidget on the test fixtures, closed after the test."""
    monkeypatch.delenv(ENV_HEADLESS, raising=False)
    made: list[sb.TargetWidget] = []

    def make(target: str = "demo", **kw: object) -> sb.TargetWidget:
        kw.setdefault("targets_dir", FIXTURES)
        widget = sb.TargetWidget(target, **kw)  # type: ignore[arg-type]
        made.append(widget)
        return widget

    yield make
    for widget in made:
        widget.close()


def held_target(folder: Path) -> Path:
    """A target whose applies of count 5 (the relay's own of the changed trait, then the request's)
    answer only once the host page posts it ``"release"``; other values at once (a fresh page's catch-up)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "held.json").write_text(
        json.dumps({"id": "held", "type": "apply", "data": {"s": {"count": {"type": "integer", "value": 1}}}})
    )
    (folder / "held.html").write_text(
        "<!doctype html><html><head></head><body><script>"
        "const values = {}; const held = []; let released = false;"
        "addEventListener('message', (e) => {"
        " if (e.data === 'release') { released = true; for (const go of held.splice(0)) go(); } });"
        "SplitBrain.onApply((v) => released || v['s.count'] !== 5 ? Object.assign(values, v)"
        " : new Promise((done) => held.push(() => done(Object.assign(values, v)))));"
        "SplitBrain.ready();"
        "</script></body></html>"
    )
    return folder


# -- no browser ----------------------------------------------------------------------------------


def test_headless_true_without_chromium_raises_at_once_with_the_install_hint(no_chromium: None) -> None:
    with pytest.raises(HeadlessUnavailable, match="python -m playwright install chromium"):
        sb.TargetWidget("demo", targets_dir=FIXTURES, headless=True)


def test_the_variable_without_chromium_answers_no_view_with_the_install_hint_and_keeps_the_change(
    no_chromium: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_HEADLESS, "1")
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)  # a notebook with views must keep working: no raise
    result = sim.set_parameter("count", 7, timeout=60)
    assert result.error is not None and result.error.code == "no_view", result
    assert (
        "no headless page can start" in result.error.message
        and "python -m playwright install chromium" in result.error.message
    )
    assert result.kept and not result.applied and sim.values["settings.count"] == 7
    state = sim.fetch_state(timeout=60)
    assert state.error is not None and state.error.code == "no_view" and not state.kept
    assert "splitbrain_widget doctor" in (state.error.hint or "")
    sim.close()


@pytest.mark.parametrize("setting", [None, "0", ""])
def test_without_the_flag_or_the_variable_a_widget_has_no_headless_page(
    monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    if setting is None:
        monkeypatch.delenv(ENV_HEADLESS, raising=False)
    else:
        monkeypatch.setenv(ENV_HEADLESS, setting)
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    assert sim._fallback is None
    result = sim.set_parameter("count", 7)
    assert result.error is not None and result.error.code == "no_view" and result.error.message == NO_VIEW_MESSAGE
    sim.close()


def test_headless_false_wins_over_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_HEADLESS, "1")
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES, headless=False)
    assert sim._fallback is None
    sim.close()


def call_waiting_for_a_view(
    monkeypatch: pytest.MonkeyPatch, wait_s: float
) -> tuple[sb.TargetWidget, threading.Thread, list[sb.ToolResult]]:
    """A widget told a view is on its way (``expect_view``), and a call of it waiting for that view."""
    monkeypatch.delenv(ENV_HEADLESS, raising=False)
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    sim.expect_view(wait_s)
    results: list[sb.ToolResult] = []

    async def call() -> None:
        results.append(await sim.aset_parameter("count", 4, timeout=wait_s))

    caller = threading.Thread(target=lambda: asyncio.run(call()), daemon=True)
    caller.start()
    wait_for(lambda: bool(sim.bridge._async_waiters), "the call waiting for a view")
    return sim, caller, results


def test_a_call_waits_for_a_view_that_expect_view_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, caller, results = call_waiting_for_a_view(monkeypatch, 60)
    view = FakeView(sim)
    caller.join(60)
    assert results and results[0].ok and results[0].answered_by == view.view_id, results
    sim.close()


def test_expect_view_zero_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, caller, results = call_waiting_for_a_view(monkeypatch, 600)
    sim.expect_view(0)
    caller.join(60)
    assert not caller.is_alive(), "the call still waits for the view"
    assert results[0].error is not None and results[0].error.code == "no_view" and results[0].kept
    sim.close()


# -- on a headless page --------------------------------------------------------------------------


@browser
def test_with_the_variable_a_widget_without_a_view_runs_its_calls_on_a_headless_page(
    widgets: Callable[..., sb.TargetWidget], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_HEADLESS, "1")
    sim = widgets()
    result = sim.set_parameters({"count": 7, "mode": "manual"})
    assert result.ok and result.applied and result.views_applied == 1, result
    assert result.answered_by is not None and result.answered_by == page_id(sim)
    assert result.state is not None and result.state["settings.count"] == 7
    state = sim.fetch_state()
    assert state.ok and state.state is not None and state.state["settings.mode"] == "manual"
    assert sim.audit[-1].view_id == page_id(sim)


@browser
def test_the_page_keeps_no_record_of_answered_calls(
    widgets: Callable[..., sb.TargetWidget], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script or nbval: no notebook view ever comes, so the page stays; what it was sent and has
    answered must not pile up for the life of the widget."""
    monkeypatch.setenv(ENV_HEADLESS, "1")
    sim = widgets()
    assert all(sim.set_parameter("count", 1 + i % 9).ok for i in range(50))
    assert sim._fallback is not None and not sim._fallback._sent


@browser
def test_headless_true_serves_the_async_twins_and_the_agent(widgets: Callable[..., sb.TargetWidget]) -> None:
    sim = widgets(headless=True)
    result = run_async(sim.aset_parameter("speed", 14))
    assert result.ok and result.answered_by == page_id(sim)
    answer = sb.Agent(sim).ask("set the count to 9")
    assert answer.tool_calls[0].ok and answer.tool_calls[0].result["applied"] is True
    assert sim.values["settings.count"] == 9


@browser
def test_a_page_starts_only_when_a_call_needs_one(widgets: Callable[..., sb.TargetWidget]) -> None:
    sim = widgets(headless=True)
    assert sim.get_parameters().ok and page_id(sim) is None  # the kernel's own copy: no page needed
    assert sim.set_parameter("count", 2).ok and page_id(sim) is not None


@browser
def test_a_headless_page_shows_no_panel_so_an_approval_is_denied_at_once(
    widgets: Callable[..., sb.TargetWidget],
) -> None:
    sim = widgets(headless=True, approval={"speed": "ask"})
    assert sim.set_parameter("count", 2).ok
    assert (sim.views, sim.notebook_views) == (1, 0)
    approved, why = run_async(sim.ask_approval("set_parameters", {"values": {"speed": 9}}, ["settings.speed"]))
    assert not approved and "no view of the widget is open" in why
    FakeView(sim)
    assert sim.notebook_views == 1


@browser
def test_a_notebook_view_takes_over_with_the_kernels_values_and_the_page_closes(
    widgets: Callable[..., sb.TargetWidget],
) -> None:
    sim = widgets(headless=True)
    assert sim.set_parameters({"count": 7, "speed": 12}).ok
    headless = page_id(sim)
    view = FakeView(sim)
    assert view.values["settings.count"] == 7 and view.values["settings.speed"] == 12  # the kernel's values
    wait_for(lambda: page_id(sim) is None and sim.views == 1, "the headless page closed")
    assert headless not in [v.view_id for v in sim.bridge.live_views()]
    result = sim.set_parameter("mode", "manual")
    assert result.ok and result.answered_by == view.view_id
    assert [r["payload"] for r in view.requests] == [{"values": {"settings.mode": "manual"}}]
    assert view.values["settings.count"] == 7


@browser
def test_a_call_in_flight_on_the_page_ends_there_before_the_page_closes(
    widgets: Callable[..., sb.TargetWidget], tmp_path: Path
) -> None:
    sim = widgets("held", targets_dir=held_target(tmp_path / "targets"), headless=True)
    assert sim.fetch_state().ok  # the page is up
    fallback = sim._fallback
    assert fallback is not None and fallback.host is not None
    results: list[sb.ToolResult] = []
    caller = threading.Thread(target=lambda: results.append(sim.set_parameter("count", 5, timeout=60)))
    caller.start()

    def sent_to_the_page_and_pending() -> bool:
        with fallback._lock:
            sent = set(fallback._sent)
        return bool(sim.bridge.still_pending(sent))

    wait_for(sent_to_the_page_and_pending, "the apply sent to the headless page")
    view = FakeView(sim)
    assert fallback.host is not None, "the page closed under a call it had not answered"
    fallback.host.page._host_evaluate("document.querySelector('iframe').contentWindow.postMessage('release', '*')")
    caller.join(60)
    assert results and results[0].ok and results[0].answered_by not in (None, view.view_id), results
    wait_for(lambda: fallback.host is None and sim.views == 1, "the headless page closed")
    assert view.requests == [] and view.values["s.count"] == 5
    assert sim.set_parameter("count", 6).answered_by == view.view_id


@browser
def test_when_the_view_goes_away_a_fresh_page_starts_from_the_kernels_values(
    widgets: Callable[..., sb.TargetWidget],
) -> None:
    sim = widgets(headless=True)
    assert sim.set_parameter("count", 7).ok
    first = page_id(sim)
    view = FakeView(sim)
    assert sim.set_parameter("speed", 12).answered_by == view.view_id
    wait_for(lambda: page_id(sim) is None and sim.views == 1, "the first headless page closed")
    view.detach()
    state = sim.fetch_state()
    assert state.ok and state.answered_by not in (None, first, view.view_id), state
    assert state.state is not None and state.state["settings.count"] == 7 and state.state["settings.speed"] == 12


@browser
def test_select_target_on_the_headless_page_loads_the_new_page(widgets: Callable[..., sb.TargetWidget]) -> None:
    sim = widgets(headless=True)
    assert sim.set_parameter("count", 7).ok
    switched = sim.select_target("projectile")
    assert switched.ok, switched
    landed = sim.set_parameters({"speed": 20, "angle": 30, "drag": 0})
    assert landed.ok and landed.state is not None
    assert landed.state["range"] == pytest.approx(20**2 * 0.8660254 / 9.81, rel=1e-3)


@browser
def test_a_browser_that_fails_to_start_ends_the_call_with_the_reason(
    widgets: Callable[..., sb.TargetWidget], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "not-chromium"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv(ENV_CHROMIUM, str(fake))
    monkeypatch.setattr(engine_mod.Engine, "_instance", None)  # a fresh engine, on the broken browser
    sim = widgets(headless=True)
    try:
        result = sim.set_parameter("count", 7, timeout=120)
    finally:
        broken = engine_mod.Engine._instance
        if broken is not None:
            broken.loop.call_soon_threadsafe(broken.loop.stop)
    assert result.error is not None and result.error.code == "not_ready", result
    assert "the headless page failed" in result.error.message and result.kept
