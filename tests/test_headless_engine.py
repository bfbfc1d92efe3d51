"""The headless engine (splitbrain_widget/_headless_engine.py) in a real headless Chromium.

Raw protocol messages in, the relay's messages out, exactly as over the widget's comm: the host
page runs the view's own relay and iframe code (js/host/frame.js), so these are the view's checks.
The tests marked ``browser`` skip without Chromium (and fail under SPLITBRAIN_REQUIRE_BROWSER=1);
the others need no browser.
"""

from __future__ import annotations

import itertools
import math
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from splitbrain_widget import registry
from splitbrain_widget.hosts import _headless_engine as engine_mod
from splitbrain_widget.hosts import _headless_page as page_mod
from splitbrain_widget.hosts._browser_finder import ENV_CHROMIUM
from splitbrain_widget.hosts._headless_engine import HeadlessError, HeadlessUnavailable
from splitbrain_widget.hosts._headless_page import HeadlessPage

from .browser_env import run_async

browser = pytest.mark.browser
Message = dict[str, Any]


class Inbox:
    """Every message a page produced, in order, with a wait on a condition over them."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._cond = threading.Condition()

    def __call__(self, message: Message) -> None:
        with self._cond:
            self.messages.append(message)
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[Message], bool], timeout: float = 30.0, what: str = "", after: int = 0
    ) -> Message:
        """The first message from index ``after`` on that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = after
            while True:
                for message in self.messages[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.messages)
                left = deadline - time.monotonic()
                if left <= 0:
                    kinds = [m.get("type") or m.get("kind") for m in self.messages]
                    raise AssertionError(f"no {what or 'matching message'} within {timeout} s; got {kinds}")
                self._cond.wait(left)

    def reply(self, request_id: str, timeout: float = 30.0) -> Message:
        return self.wait_for(
            lambda m: m.get("kind") == "reply" and m.get("id") == request_id, timeout, f"reply {request_id}"
        )

    def event(self, kind: str, timeout: float = 30.0, after: int = 0) -> Message:
        return self.wait_for(
            lambda m: m.get("kind") == "event" and m.get("type") == kind, timeout, f"{kind} event", after
        )

    def of_type(self, kind: str) -> list[Message]:
        with self._cond:
            return [m for m in self.messages if m.get("kind") == "event" and m.get("type") == kind]


def request(request_id: str, op: str = "apply", values: dict[str, Any] | None = None) -> Message:
    return {"kind": "request", "id": request_id, "op": op, "payload": {} if op == "state" else {"values": values or {}}}


def fixture_page(script: str) -> str:
    """A test target: ``script`` in a page, with the target API injected (the clock is the engine's job)."""
    return registry.inject_target_api(
        f"<!doctype html><html><head></head><body><script>{script}</script></body></html>"
    )


Opened = tuple[HeadlessPage, Inbox]


# A named fixture, so that tests/test_headless_security.py can import it under its own name
# (``engine`` comes from tests/conftest.py).
@pytest.fixture(name="open_page")
def open_page_fixture(engine: None) -> Iterator[Callable[..., Opened]]:
    """``open_page(html, values={}, **kw) -> (page, inbox)``; every page is closed after the test."""
    pages: list[HeadlessPage] = []

    def _open(html: str, values: dict[str, Any] | None = None, **kw: Any) -> Opened:
        inbox = Inbox()
        page = HeadlessPage(html, on_message=inbox, values=values or {}, **kw)
        pages.append(page)
        return page, inbox

    yield _open
    for page in pages:
        page.close()


def target_html(target_id: str) -> str:
    return registry.load_target(target_id).html


# -- no browser ----------------------------------------------------------------------------------


def test_missing_chromium_is_reported_at_once_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, no_browser: None
) -> None:
    monkeypatch.setattr(engine_mod.Engine, "_instance", None)  # as in a process that never started one
    started = time.monotonic()
    with pytest.raises(HeadlessUnavailable) as info:
        HeadlessPage("<html></html>", on_message=lambda m: None, values={}, virtual_time=False)
    assert time.monotonic() - started < 1.0
    assert isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert (
        "Chromium" in text and "sudo apt install chromium" in text and "python -m playwright install chromium" in text
    )
    assert ENV_CHROMIUM in text and "python -m splitbrain_widget doctor" in text
    assert engine_mod.Engine._instance is None, "no engine was started"


def test_a_wrong_chromium_path_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv(ENV_CHROMIUM, str(tmp_path / "no-such-chromium"))
    with pytest.raises(HeadlessUnavailable, match=ENV_CHROMIUM):
        engine_mod.chromium_executable()


def test_clock_injection_leaves_the_normal_page_alone() -> None:
    page = "<!doctype html><html><head><title>t</title></head><body><script>1</script></body></html>"
    plain = registry.inject_target_api(page)
    assert registry.CLOCK_ATTR not in plain
    assert registry.inject_target_api(page, clock_seed=None) == plain
    headless = registry.inject_target_api(page, clock_seed=7)
    assert headless == registry.inject_clock(plain, 7)
    assert registry.inject_clock(headless, 8) == headless, "never injected twice"
    clock, api = headless.index(f"<script {registry.CLOCK_ATTR} "), headless.index(registry.target_api_script())
    seeding = headless.index(f"<script {registry.CLOCK_ATTR}-random>")
    assert clock < api < seeding < headless.index("<script>1</script>")
    assert 'data-seed="7"' in headless
    with pytest.raises(ValueError, match="no splitbrain target API"):
        registry.inject_clock(page)
    with pytest.raises(TypeError):
        registry.inject_target_api(page, clock_seed="7")  # type: ignore[arg-type]
    assert 'data-fps="10.0"' in registry.inject_clock(plain, 0, fps=10)
    with pytest.raises(ValueError, match="fps"):
        registry.inject_clock(plain, 0, fps=0)
    target = registry.load_target("pendulum")
    assert target.headless_html(3) == registry.inject_clock(target.html, 3)


# -- the view's protocol -------------------------------------------------------------------------


@browser
def test_attached_then_ready_then_an_apply_is_answered_with_its_state(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(target_html("projectile"))
    attached = inbox.event("attached")
    assert attached["view_id"] == page.view_id and attached["payload"]["protocol"] == 1
    inbox.event("ready")
    assert inbox.messages.index(attached) < inbox.messages.index(inbox.of_type("ready")[0])
    page.send(request("r1", values={"launch.angle": 30, "launch.speed": 25}))
    reply = inbox.reply("r1")
    assert reply["ok"] is True and reply["view_id"] == page.view_id
    assert reply["state"]["launch.angle"] == 30 and reply["state"]["launch.speed"] == 25
    page.send(request("r1", values={"launch.angle": 60}))  # the same id again: applied at most once
    page.send(request("r2", "state"))
    assert inbox.reply("r2")["state"]["launch.angle"] == 30
    assert len([m for m in inbox.messages if m.get("id") == "r1"]) == 1


@browser
def test_values_catch_up_on_ready_and_changes_reach_the_page(open_page: Callable[..., Opened]) -> None:
    page, _inbox = open_page(target_html("projectile"), values={"launch.angle": 20})
    assert page.advance(0)["launch.angle"] == 20  # the catch-up apply on ready
    page.set_values({"launch.angle": 20, "launch.speed": 33})
    assert page.advance(0)["launch.speed"] == 33


@browser
def test_a_throwing_handler_gives_target_error(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(target_html("projectile"))
    page.send(request("bad", values={"launch.angle": 500}))  # the page's own check throws
    reply = inbox.reply("bad")
    assert reply["ok"] is False and reply["error"]["code"] == "target_error"
    assert "launch.angle" in reply["error"]["message"]


HOLDING = """
let x = 0, seenOther = 0;
const applied = [];
const snapshot = () => ({ x, seen_other: seenOther, applied, now: performance.now(), real: true });
// Counts (and reports, past the held request) what other windows post to it.
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) { seenOther += 1; SplitBrain.state(snapshot()); }
});
SplitBrain.onApply((values, ctx) => {
  if ("x" in values) { x = values.x; applied.push(ctx.id ?? null); }
  if (values.hold) return new Promise((resolve) => setTimeout(() => resolve(snapshot()), 500));
  return snapshot();
});
SplitBrain.onState(snapshot);
SplitBrain.ready();
"""

SIBLING = """(nonce) => new Promise((resolve) => {
  addEventListener("message", (e) => { if (e.data === "sibling-done") resolve(true); });
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.srcdoc = `<script>
    const nonce = ${JSON.stringify(nonce)};
    parent.postMessage({source: "splitbrain-target", nonce, type: "state", id: "held", payload: {forged: true}}, "*");
    parent.postMessage({source: "splitbrain-target", nonce, type: "ready", load: "forged-load"}, "*");
    parent.frames[0].postMessage({source: "splitbrain-parent", nonce, type: "apply", id: "f1", payload: {x: 666}}, "*");
    parent.frames[0].postMessage({source: "splitbrain-parent", nonce, type: "advance", payload: {ms: 100000}}, "*");
    parent.postMessage("sibling-done", "*");
  <\\/script>`;
  document.body.append(frame);
})"""


@browser
def test_forged_messages_from_a_sibling_frame_or_the_host_page_are_ignored(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(fixture_page(HOLDING))
    inbox.event("ready")
    # Answered only after 500 virtual ms: the target API runs nothing else before that.
    page.send(request("held", values={"x": 1, "hold": True}))
    nonce = page._host_evaluate("splitbrainHost.inspect().nonce")
    assert isinstance(nonce, str) and len(nonce) == 32
    # A sibling frame of the host page knows the nonce and forges both directions.
    assert page._host_evaluate(f"({SIBLING})({nonce!r})") is True
    # The host page itself: a forged reply to itself, and a message into the frame with a wrong nonce.
    # (A message from the frame's parent without a nonce is the view's, protocol 1.7: the parent is
    # the only window whose event.source the target sees as window.parent.)
    page._host_evaluate(
        f"""(() => {{
        postMessage({{source: "splitbrain-target", nonce: {nonce!r}, type: "state", id: "held", payload: {{forged: true}}}}, "*");
        const target = document.querySelector("iframe").contentWindow;
        target.postMessage({{source: "splitbrain-parent", nonce: "0".repeat(32), type: "apply", id: "f2", payload: {{x: 777}}}}, "*");
        target.postMessage({{source: "splitbrain-parent", nonce: "", type: "advance", payload: {{ms: 100000}}}}, "*");
    }})()"""
    )
    # The page saw the sibling's two messages (its own listener counts them), so they were ignored.
    inbox.wait_for(lambda m: m.get("type") == "state" and m["payload"].get("seen_other") == 2, what="both seen")
    assert not [m for m in inbox.messages if m.get("id") == "held"], "no forged reply was taken"
    state = page.advance(1)
    reply = inbox.reply("held")
    assert reply["ok"] is True and reply["state"].get("real") is True and "forged" not in reply["state"]
    assert reply["state"]["x"] == 1 and reply["state"]["applied"] == ["held"]
    assert state["x"] == 1 and state["now"] == pytest.approx(1000), "no forged apply or advance took effect"
    assert len(inbox.of_type("ready")) == 1, "the forged ready was ignored"
    assert not [m for m in inbox.messages if m.get("id") in ("f1", "f2")]


# Past the target API, which posts two of a task's states (the first and the last): raw messages
# with the page's own nonce, as a page that floods on purpose would post them.
FLOOD = """
SplitBrain.onApply((values) => {
  const raw = (i) => window.parent.postMessage({ source: "splitbrain-target", nonce: SplitBrain.nonce, type: "state", payload: { i } }, "*");
  if (values.flood) for (let i = 0; i < 20000; i += 1) raw(i);
  if (values.report) for (let i = 0; i < 20000; i += 1) SplitBrain.state({ i });
  return { flooded: Boolean(values.flood) };
});
SplitBrain.ready();
"""


@browser
def test_a_page_reporting_in_a_tight_loop_is_not_stopped(open_page: Callable[..., Opened]) -> None:
    """20,000 ``SplitBrain.state`` calls in one handler reach the host as two states, under the budget."""
    page, inbox = open_page(fixture_page(FLOOD))
    inbox.event("ready")
    before = len(inbox.of_type("state"))
    page.send(request("report", values={"report": True}))
    reply = inbox.reply("report")
    assert reply["ok"] is True and reply["state"] == {"flooded": False}, reply
    inbox.wait_for(lambda m: m.get("type") == "state" and m.get("payload") == {"i": 19999}, 10, "the last state")
    states = [m["payload"] for m in inbox.of_type("state")[before:]]
    assert len(states) <= 2 and states[-1] == {"i": 19999}, states  # the relay may coalesce the two


@browser
def test_a_flooding_page_is_stopped_as_in_the_view_and_restarts(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(fixture_page(FLOOD))
    inbox.event("ready")
    page.send(request("flood", values={"flood": True}))
    reply = inbox.reply("flood")
    assert reply["ok"] is False and reply["error"]["code"] == "not_ready"
    assert "stopped" in reply["error"]["message"] and "5000" in reply["error"]["message"]
    error = inbox.event("error")
    assert error["payload"]["code"] == "target_error" and "stopped" in error["payload"]["message"]
    page.send(request("after", values={}))
    assert inbox.reply("after")["error"]["code"] == "not_ready"
    with pytest.raises(HeadlessError) as info:
        page.advance(1)
    assert info.value.code == "not_ready"
    assert page._host_evaluate("splitbrainHost.inspect().sandbox") == "", "unloaded: an empty sandbox now"
    ready_before = len(inbox.messages)
    page.reload()
    inbox.event("ready", after=ready_before)
    page.send(request("again", values={"flood": False}))
    assert inbox.reply("again")["state"] == {"flooded": False}


RELOADING = """
const load = Math.random();
SplitBrain.onApply((values, ctx) => {
  if (values.reload && ctx.id) { location.reload(); return new Promise(() => {}); }
  return { load };
});
SplitBrain.ready();
"""


@browser
def test_a_page_that_reloads_itself_under_the_virtual_clock_is_noticed(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(fixture_page(RELOADING))
    inbox.event("ready")
    page.send(request("r", values={"reload": True}))
    reply = inbox.reply("r")
    assert reply["error"]["code"] == "not_ready" and "reloaded itself" in reply["error"]["message"]
    inbox.wait_for(lambda m: len(inbox.of_type("ready")) >= 2, what="a second ready")
    page.send(request("s", values={}))
    assert "load" in inbox.reply("s")["state"]


SIZE_AT_START = """
const size = {w: window.innerWidth, h: window.innerHeight};
SplitBrain.onState(() => size);
SplitBrain.onApply(() => size);
SplitBrain.ready();
"""


@browser
def test_a_page_s_first_script_sees_its_frame_s_size_on_every_load(open_page: Callable[..., Opened]) -> None:
    """A page that sizes its canvas from the window when it starts (Ten Minute Physics' pages do) must
    find the size there: with the srcdoc set before the frame was laid out, 37 to 40 loads in 100 saw
    innerHeight 0 (and such a page stalled, never ready)."""
    page, inbox = open_page(fixture_page(SIZE_AT_START))
    sizes = []
    for i in range(50):
        after = len(inbox.messages)
        if i:
            page.reload()
        inbox.event("ready", after=after)
        page.send(request(f"s{i}", op="state"))
        sizes.append(inbox.reply(f"s{i}")["state"])
    assert [s for s in sizes if not (s["w"] > 0 and s["h"] > 0)] == [], sizes


# -- the virtual clock ---------------------------------------------------------------------------

TIMERS = """
const t0 = Date.now(), p0 = performance.now();
let frames = 0, lastFrame = null, timeouts = 0, intervals = 0, laps = 0;
const tick = (ts) => { frames += 1; lastFrame = ts; requestAnimationFrame(tick); };
requestAnimationFrame(tick);
const chain = () => { timeouts += 1; setTimeout(chain, 100); };
setTimeout(chain, 100);
setInterval(() => { intervals += 1; }, 250);
(async () => { for (;;) { await new Promise((r) => setTimeout(r, 500)); laps += 1; } })();
SplitBrain.onState(() => ({
  frames, last_frame: lastFrame, timeouts, intervals, laps,
  date_elapsed: Date.now() - t0, date_now: Date.now(), new_date: new Date().getTime(), perf: performance.now() - p0,
}));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_every_time_source_follows_advance_and_stands_still_otherwise(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(fixture_page(TIMERS))
    inbox.event("ready")
    page.send(request("s0", "state"))
    first = inbox.reply("s0")["state"]
    page.send(request("s1", "state"))  # real time passed between the two: virtual time did not
    assert inbox.reply("s1")["state"] == first
    assert first["perf"] == 0 and first["frames"] == 0 and first["timeouts"] == 0
    assert first["date_now"] == engine_mod_epoch()
    state = page.advance(2)
    assert state["frames"] == 121  # frames at 0, 1/60 s, ..., 2 s
    assert state["last_frame"] == pytest.approx(2000)
    assert (state["timeouts"], state["intervals"], state["laps"]) == (20, 8, 4)
    assert state["date_elapsed"] == 2000 and state["new_date"] == state["date_now"] == engine_mod_epoch() + 2000
    assert state["perf"] == pytest.approx(2000)
    state = page.advance(0.5)
    assert (state["frames"], state["timeouts"], state["intervals"], state["laps"]) == (151, 25, 10, 5)
    assert state["perf"] == pytest.approx(2500) and state["date_elapsed"] == 2500


def engine_mod_epoch() -> int:
    return 1_767_225_600_000  # js/page/clock.js EPOCH_MS: 2026-01-01T00:00:00Z


UNSEEN = """
let frames = 0;
const seen = [];
const tick = (now) => {
  frames += 1;
  if (!window.__splitbrainClock.unseen) seen.push(now);
  requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
SplitBrain.onState(() => ({ frames, seen }));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_only_the_last_frame_of_an_advance_is_seen_however_it_is_split(open_page: Callable[..., Opened]) -> None:
    page, _inbox = open_page(fixture_page(UNSEEN))
    assert page.advance(0) == {"frames": 1, "seen": [0]}
    state = page.advance(2.5)  # three chunks: 1 s, 1 s, 0.5 s
    assert state["frames"] == 151, "every frame ran"
    assert state["seen"] == [0, pytest.approx(2500)]
    assert page.advance(0.5)["seen"] == [0, pytest.approx(2500), pytest.approx(3000)]


WAITING = """
SplitBrain.onApply((values, ctx) => {
  if (!ctx.id) return {};
  return new Promise((resolve) => setTimeout(() => resolve({ waited: performance.now() }), values.wait));
});
SplitBrain.onState(() => ({ now: performance.now() }));
SplitBrain.ready();
"""


@browser
def test_a_handler_waiting_on_virtual_time_does_not_hold_an_advance(open_page: Callable[..., Opened]) -> None:
    """The page answers its state requests one after another: they wait behind the handler, the clock does not."""
    page, inbox = open_page(fixture_page(WAITING))
    inbox.event("ready")
    page.send(request("waits", values={"wait": 2500}))
    assert page.advance(4, timeout=20) == {"now": 4000}
    assert inbox.reply("waits")["state"] == {"waited": 2500}


RUNAWAY = """
let n = 0;
for (let i = 0; i < __TIMERS__; i += 1) setInterval(() => { n += 1; }, 0);
SplitBrain.onState(() => ({ n, now: performance.now() }));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_a_zero_interval_cannot_hang_advance_and_a_runaway_one_is_capped(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(fixture_page(RUNAWAY.replace("__TIMERS__", "1")))
    state = page.advance(1)
    assert state["now"] == 1000 and 240 < state["n"] < 260  # clamped to 4 ms, as in browsers
    capped_html = registry.inject_clock(fixture_page(RUNAWAY.replace("__TIMERS__", "10")), 0).replace(
        'data-seed="0"', 'data-seed="0" data-max-callbacks="300"'
    )
    page, inbox = open_page(capped_html)
    state = page.advance(1)
    assert state["now"] == 1000 and state["n"] == 300
    error = inbox.event("error")
    assert error["payload"]["code"] == "target_error" and "more than 300" in error["payload"]["message"]
    assert page.advance(0.01)["now"] == 1010, "the next advance works"


RANDOM = """
const draws = Array.from({ length: 5 }, () => Math.random());
SplitBrain.onState(() => ({ draws, later: Math.random() }));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_same_calls_same_observables(open_page: Callable[..., Opened]) -> None:
    runs = []
    for _ in range(2):
        page, _inbox = open_page(target_html("boids"), seed=11)
        page.advance(1.5)
        runs.append(page.advance(1.5))
    assert runs[0] == runs[1] and runs[0]["t"] > 2.9
    draws = [open_page(fixture_page(RANDOM), seed=seed)[0].advance(0) for seed in (5, 5, 6)]
    assert draws[0] == draws[1] and draws[0]["draws"] != draws[2]["draws"]
    assert all(0 <= x < 1 for x in draws[0]["draws"])


@browser
@pytest.mark.parametrize(("speed", "angle"), [(20.0, 45.0), (30.0, 30.0), (12.5, 70.0)])
def test_projectile_range_is_the_textbook_one(open_page: Callable[..., Opened], speed: float, angle: float) -> None:
    page, inbox = open_page(target_html("projectile"))
    page.send(request("launch", values={"launch.speed": speed, "launch.angle": angle}))
    flight = inbox.reply("launch")["state"]["flight_time"]
    state = page.advance(flight + 0.5)  # the animated ball flies the whole flight and lands
    assert state["landed"] is True and state["t"] == pytest.approx(flight, abs=1e-3)
    expected = speed**2 * math.sin(math.radians(2 * angle)) / 9.81
    assert state["range"] == pytest.approx(expected, rel=1e-3)


# The pendulum (its kit, js/page/kit.js Kit.run) skips drawing the frames a later frame of the same
# advance draws over; the variant that draws every frame shows what that saves, and that the
# physics is the same either way: a script before the page's own tells it no frame is unseen.
PAGE_SCRIPT = '<script type="module">'
EVERY_FRAME_SEEN = (
    "<script>Object.defineProperty(window.__splitbrainClock, 'unseen', {get: () => false});</script>" + PAGE_SCRIPT
)


@browser
@pytest.mark.parametrize(("fps", "draw_all"), [(None, False), (10, False), (None, True)])
def test_pendulum_period_at_small_amplitude(
    open_page: Callable[..., Opened], capsys: pytest.CaptureFixture[str], fps: float | None, draw_all: bool
) -> None:
    """At 60 frames per virtual second (a display's) and at 10: the page steps its physics at 1 ms.
    Drawing every frame or only the frames seen changes the speed (printed), never the physics."""
    html = target_html("pendulum")
    assert html.count(PAGE_SCRIPT) == 1
    if draw_all:
        html = html.replace(PAGE_SCRIPT, EVERY_FRAME_SEEN)
    page, _inbox = open_page(html, values={"pendulum.amplitude": 5}, fps=fps)
    if draw_all:
        assert page._frame_evaluate("window.__splitbrainClock.unseen") is False
    page.advance(0)
    started = time.perf_counter()
    state = page.advance(60)
    wall = time.perf_counter() - started
    assert state["t"] == pytest.approx(60, abs=0.01)
    small_angle = 2 * math.pi * math.sqrt(1.0 / 9.81)
    assert state["period"] == pytest.approx(small_angle, rel=5e-3)
    how = ", drawing every frame" if draw_all else ""
    with capsys.disabled():
        print(
            f"\n[headless] pendulum advance(60) at {fps or 60} fps{how}: {wall:.2f} s wall, {60 / wall:.0f}x real time"
        )


@browser
def test_round_trip_latency(open_page: Callable[..., Opened], capsys: pytest.CaptureFixture[str]) -> None:
    """Measured, not asserted: apply -> reply through the whole headless path, one call at a time."""
    page, inbox = open_page(fixture_page("SplitBrain.onApply((v) => ({...v})); SplitBrain.ready();"))
    inbox.event("ready")
    samples = []
    for i in range(500):
        started = time.perf_counter()
        page.send(request(f"p{i}", values={"x": i}))
        inbox.reply(f"p{i}")
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    with capsys.disabled():
        print(
            f"\n[headless] apply -> reply over {len(samples)} calls: median {statistics.median(samples):.2f} ms, "
            f"p95 {samples[int(0.95 * len(samples))]:.2f} ms, p99 {samples[int(0.99 * len(samples))]:.2f} ms"
        )


# -- sampled advance: the state after each step, in one call --------------------------------------

COUNTING = """
let frames = 0, asked = 0;
const tick = () => { frames += 1; requestAnimationFrame(tick); };
requestAnimationFrame(tick);
SplitBrain.onState(() => { asked += 1; return { now: performance.now(), frames, asked }; });
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_the_engine_and_the_host_page_speak_section_4_as_the_schema_says(
    open_page: Callable[..., Opened], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every op the engine sends and every ``_advance`` / ``_samples`` the host page sends back, in a
    plain, a sampled (in parts) and a refused advance, validates against the schema's section 4."""
    from splitbrain_widget import protocol

    ops: list[dict[str, Any]] = []
    heard: list[dict[str, Any]] = []
    push, hear = HeadlessPage._push, HeadlessPage._from_host
    monkeypatch.setattr(HeadlessPage, "_push", lambda self, op: (ops.append(op), push(self, op))[1])
    monkeypatch.setattr(HeadlessPage, "_from_host", lambda self, m: (heard.append(m), hear(self, m))[1])
    page, _inbox = open_page(fixture_page(COUNTING + "SplitBrain.onState(() => ({ pad: 'x'.repeat(100000) }));"))
    page.set_values({"speed": 3})
    page.advance(0.5)
    page.advance(2, every=0.1)  # 20 states of 100 kB: more than one _samples part
    page.reload()
    page.advance(0.1)
    kinds = [m["kind"] for m in heard if m.get("kind", "").startswith("_")]
    assert kinds.count("_advance") == 3 and "_samples" in kinds, kinds
    for message in heard:
        if message.get("kind", "").startswith("_"):
            protocol._host_page_message.validate_python(message)
    assert {op["op"] for op in ops} >= {"values", "advance", "reload"}, ops
    for op in ops:
        protocol._host_op.validate_python(op)
    with pytest.raises(ValueError):  # the schema refuses what the host page would refuse
        protocol._host_op.validate_python({"op": "advance", "token": "a1", "ms": -1})


@browser
def test_a_sampled_advance_returns_the_state_after_each_step(open_page: Callable[..., Opened]) -> None:
    page, _inbox = open_page(fixture_page(COUNTING))
    start = page.advance(0)
    states = page.advance(2, every=0.25)
    assert isinstance(states, list) and len(states) == 8
    assert [s["now"] for s in states] == pytest.approx([250.0 * k for k in range(1, 9)])
    assert [s["asked"] for s in states] == list(range(start["asked"] + 1, start["asked"] + 9)), "one request a step"
    assert states[-1]["frames"] == start["frames"] + 120, "every frame ran"
    # `every` that does not divide `seconds`: the last step is shorter and ends where advance would.
    assert [s["now"] for s in page.advance(1, every=0.3)] == pytest.approx([2300, 2600, 2900, 3000])
    assert [s["now"] for s in page.advance(0.05, every=0.1)] == pytest.approx([3050])
    assert [s["now"] for s in page.advance(0, every=0.1)] == pytest.approx([3050])
    # A step longer than a chunk (1 s) runs as several, with a state request at its end only.
    asked = page.advance(0)["asked"]
    states = page.advance(5, every=2.5)
    assert [s["now"] for s in states] == pytest.approx([5550, 8050])
    assert [s["asked"] for s in states] == [asked + 1, asked + 2]
    assert isinstance(page.advance(0.5), dict), "without every: the one state, as before"


@browser
def test_a_sampled_advance_of_the_pendulum_steps_its_own_clock(open_page: Callable[..., Opened]) -> None:
    page, _inbox = open_page(target_html("pendulum"))
    t0 = page.advance(0)["t"]
    states = run_async(page.aadvance(6, every=0.1))
    assert len(states) == 60
    t = [s["t"] for s in states]
    assert all(b > a for a, b in itertools.pairwise(t)), "the page's time goes up with every step"
    assert t[-1] - t0 == pytest.approx(6, abs=0.002) and t[0] - t0 == pytest.approx(0.1, abs=0.002)
    assert len({s["angle"] for s in states}) > 30, "it swings: the states are the page's at each step"


BIG = """
SplitBrain.onState(() => ({ now: performance.now(), pad: "x".repeat(100000) }));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_a_sampled_advance_with_big_states_comes_in_parts_and_its_size_is_bounded(
    open_page: Callable[..., Opened],
) -> None:
    page, _inbox = open_page(fixture_page(BIG))
    parts: list[int] = []
    take = page._take_samples

    def counted(token: str, states: Any) -> None:
        parts.append(len(states))
        take(token, states)

    page._take_samples = counted  # type: ignore[method-assign]
    states = page.advance(3, every=0.1)  # 30 states of 100 kB: 3 MB, in parts within 1 MiB each
    assert [s["now"] for s in states] == pytest.approx([100.0 * k for k in range(1, 31)])
    assert len(parts) >= 3 and all(n <= 9 for n in parts), parts
    page.max_sample_chars = 1_000_000  # ten of these states: the eleventh fails the whole advance
    with pytest.raises(HeadlessError) as info:
        page.advance(3, every=0.1)
    assert info.value.code == "target_error" and "more than 1000000 characters" in info.value.message
    assert "after 10 of 30 steps" in info.value.message
    assert not page._advances and not page._sampled, "nothing of it is left behind"
    page.max_sample_chars = page_mod.MAX_SAMPLE_CHARS
    assert page.advance(0.1)["now"] > 4100, "the page runs on (past the steps the failed advance had posted)"


@browser
def test_a_sampled_advance_refuses_too_many_samples_or_a_bad_every_at_once(
    open_page: Callable[..., Opened], monkeypatch: pytest.MonkeyPatch
) -> None:
    page, _inbox = open_page(fixture_page(COUNTING))
    with pytest.raises(ValueError, match=r"100,001 samples, more than the 100,000 of one advance"):
        page.advance(100.001, every=0.001)
    for every in (0, -1, math.nan, math.inf, True, "0.1"):
        with pytest.raises(ValueError, match=r"every=\.\.\.\) takes a finite number of seconds > 0"):
            page.advance(1, every=every)
    assert not page._advances and page.advance(0)["now"] == 0, "nothing was sent"
    monkeypatch.setattr(page_mod, "MAX_SAMPLES", 10)
    assert len(page.advance(1, every=0.1)) == 10  # the cap itself is allowed
    with pytest.raises(ValueError, match=r"11 samples, more than the 10 of one advance"):
        page.advance(1.05, every=0.1)
    monkeypatch.setattr(page_mod, "MAX_SAMPLES", 200_000)  # past the engine's check: the host's own
    with pytest.raises(HeadlessError) as info:
        page.advance(100.001, every=0.001)
    assert info.value.code == "invalid_value" and "more than the 100000 of one advance" in info.value.message
    assert not page._advances and not page._sampled and page.advance(0)["now"] == 1000


@browser
def test_a_page_waiting_on_virtual_time_does_not_hold_a_sampled_advance(open_page: Callable[..., Opened]) -> None:
    """Its state replies wait behind the handler; the steps do not (the clock's word ends them)."""
    page, inbox = open_page(fixture_page(WAITING))
    inbox.event("ready")
    page.send(request("waits", values={"wait": 2500}))
    states = page.advance(4, timeout=20, every=0.1)
    assert len(states) == 40 and states[-1] == {"now": 4000}
    assert all(s["now"] >= 2500 for s in states[:25]), "answered once the handler before them was done"
    assert inbox.reply("waits")["state"] == {"waited": 2500}


SLOW = """
const tick = () => { let x = 0; for (let i = 0; i < 200000; i += 1) x += Math.sqrt(i); window.sink = x; requestAnimationFrame(tick); };
requestAnimationFrame(tick);
SplitBrain.onState(() => ({ now: performance.now() }));
SplitBrain.onApply(() => undefined);
SplitBrain.ready();
"""


@browser
def test_a_reload_during_a_long_step_fails_the_sampled_advance_at_once(open_page: Callable[..., Opened]) -> None:
    """Steps of 20 s: their first chunks have no state request behind them, only the clock's word,
    which a reloaded page never sends. The host notices the reload instead."""
    page, inbox = open_page(fixture_page(SLOW))
    page.advance(0)
    outcome: list[BaseException | list[dict[str, Any]]] = []

    def run() -> None:
        try:
            outcome.append(page.advance(600, every=20, timeout=120))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    until = time.monotonic() + 60
    while page._host_evaluate("splitbrainHost.inspect().virtualMs") < 2000 and not outcome:
        assert time.monotonic() < until, "the advance did not get under way"
        time.sleep(0.01)
    page.reload()
    thread.join(60)
    assert outcome, "the advance still runs"
    error = outcome[0]
    assert isinstance(error, HeadlessError) and error.code == "not_ready" and "reloaded" in error.message, error
    assert not page._sampled
    inbox.wait_for(lambda m: len(inbox.of_type("ready")) >= 2, what="the reloaded page's ready")
    assert [s["now"] for s in page.advance(0.2, every=0.1)] == pytest.approx([100, 200]), "a fresh clock"


@browser
def test_a_cancelled_sampled_aadvance_leaves_nothing_booked(open_page: Callable[..., Opened]) -> None:
    import asyncio

    page, _inbox = open_page(target_html("pendulum"))
    before = page.advance(0)["t"]

    async def drive() -> None:
        task = asyncio.create_task(page.aadvance(10_000, every=0.1))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run_async(drive())
    assert not page._advances and not page._sampled
    after = page.advance(0.5, every=0.25)
    assert len(after) == 2 and before <= after[-1]["t"] < 10_000


def test_the_answer_to_a_sampled_advance_is_checked_before_it_is_returned() -> None:
    """What the host page sends for one: all its steps' states, or an error; never a part."""
    page = HeadlessPage.__new__(HeadlessPage)
    page._lock = threading.Lock()
    page._advances, page._sampled = {}, {}
    page._on_message = lambda message: None
    page.view_id = "h-test"

    def book(token: str, expected: int) -> Any:
        import concurrent.futures

        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        page._advances[token] = future
        page._sampled[token] = page_mod._Samples(expected)
        return future

    def answer(token: str, states: list[Any]) -> Message:
        return {"kind": "_advance", "token": token, "result": {"ok": True, "states": states, "samples": 3}}

    ok = book("a1", 3)
    page._from_host({"kind": "_samples", "token": "a1", "states": [{"k": 1}, {"k": 2}]})
    page._from_host(answer("a1", [{"k": 3}]))
    assert ok.result(0) == [{"k": 1}, {"k": 2}, {"k": 3}]
    short, long, bad = book("a2", 3), book("a3", 3), book("a4", 3)
    page._from_host(answer("a2", [{"k": 1}]))
    page._from_host({"kind": "_samples", "token": "a3", "states": [{}, {}, {}, {}]})
    page._from_host({"kind": "_samples", "token": "a4", "states": [{}, 5]})
    for future, why in ((short, "sent 1 states for the 3"), (long, "more states than the 3"), (bad, "not a list")):
        error = future.exception(0)
        assert isinstance(error, HeadlessError) and error.code == "internal_error" and why in error.message
    assert not page._advances and not page._sampled
    assert page_mod._samples(60_000, 100) == 600 and page_mod._samples(1000, 300) == 4
    assert page_mod._samples(0, 100) == 1 and page_mod._samples(300 * 0.1 * 1000, 0.1 * 1000) == 300


# -- lifecycle -----------------------------------------------------------------------------------


@browser
def test_close_detaches_and_the_host_page_is_reused(open_page: Callable[..., Opened]) -> None:
    page, inbox = open_page(target_html("projectile"))
    inbox.event("ready")
    host = page._host
    page.close()
    assert inbox.messages[-1] == {"kind": "event", "view_id": page.view_id, "type": "detached"}
    with pytest.raises(HeadlessError):
        page.send(request("late"))
    again, inbox2 = open_page(target_html("pendulum"))
    inbox2.event("ready")
    assert again._host is host, "the emptied host page served the next target"
    assert again.advance(0.5)["t"] == pytest.approx(0.5, abs=0.02)


@browser
def test_usable_from_an_asyncio_loop(open_page: Callable[..., Opened]) -> None:
    import asyncio

    page, _inbox = open_page(target_html("pendulum"))

    async def drive() -> dict[str, Any]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        state = await page.aadvance(2)
        task.cancel()
        assert ticks > 1, "the loop kept running while the page advanced"
        return state

    assert run_async(drive())["t"] == pytest.approx(2, abs=0.02)


@browser
def test_a_cancelled_aadvance_cancels_the_pages_advance(open_page: Callable[..., Opened]) -> None:
    """Ctrl-C or a timeout around ``await page.aadvance(...)``: the page stops advancing, nothing is
    left behind, and the page takes the next call."""
    import asyncio

    page, _inbox = open_page(target_html("pendulum"))
    before = page.advance(0)["t"]

    async def drive() -> None:
        task = asyncio.create_task(page.aadvance(10_000))
        await asyncio.sleep(0)  # the advance is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run_async(drive())
    assert not page._advances, "the cancelled advance is still booked"
    after = page.advance(0.5)["t"]  # the page answers at once, short of the 10,000 s it was asked for
    assert before <= after < 10_000


@browser
def test_the_page_s_console_errors_are_kept_to_say_why_a_page_never_got_ready(
    open_page: Callable[..., Opened], caplog: pytest.LogCaptureFixture
) -> None:
    """No browser to open on a headless page: its console's errors and uncaught exceptions (any frame)
    are kept, and a ready timeout logs them."""
    page, inbox = open_page(
        fixture_page("console.error('no canvas here'); SplitBrain.ready(); throw new Error('boom at load');")
    )
    inbox.event("ready")
    host = page._host
    assert host is not None
    wait = time.monotonic() + 10
    while len(host.console) < 2 and time.monotonic() < wait:
        time.sleep(0.05)
    assert list(host.console) == ["console.error: no canvas here", "uncaught: boom at load"]
    with caplog.at_level("WARNING", logger="splitbrain_widget.headless"):
        page._from_host({"kind": "event", "type": "error", "payload": {"code": "not_ready", "message": "x"}})
    assert "did not get ready; console.error: no canvas here; uncaught: boom at load" in caplog.text
