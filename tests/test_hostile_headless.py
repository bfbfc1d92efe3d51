"""The hostile pages of the security suite (tests/hostile/) in their headless home.

Each page is a HeadlessTarget beside an honest one, against a loopback server that logs every
request it receives: zero reach it, every call ends by its deadline with a code that says why, and
the honest page keeps working. The same pages run in JupyterLab and Notebook 7 in
tests/browser/test_hostile_browser.py, judged by the same table (tests/hostile/__init__.py).

Marked ``browser``: they skip without Chromium (and fail under SPLITBRAIN_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget import _bounds

from . import hostile
from .browser.harness import wait_for

pytestmark = pytest.mark.browser
CALL_TIMEOUT = 5.0


@pytest.fixture(scope="module")
def log() -> Iterator[hostile.RequestLog]:
    with hostile.request_log() as server:
        yield server


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, log: hostile.RequestLog) -> Path:
    return hostile.write_pages(tmp_path_factory.mktemp("hostile"), log.url)


@pytest.fixture(scope="module")
def honest() -> Iterator[sb.HeadlessTarget]:
    with sb.HeadlessTarget("bouncer", timeout=CALL_TIMEOUT) as page:
        yield page


def timed_call(sim: sb.TargetWidget, speed: float) -> tuple[sb.ToolResult, float]:
    started = time.monotonic()
    result = sim.set_parameter("speed", speed)
    return result, time.monotonic() - started


def assert_honest_page_works(honest: sb.HeadlessTarget, value: int) -> None:
    result = honest.set_parameter("display.size", value)
    assert result.ok, result


ANSWERS = [name for name, a in hostile.PAGES.items() if a.expect == "answers"]
LEAVES = [name for name, a in hostile.PAGES.items() if a.expect == "leaves"]


@pytest.mark.parametrize("name", ANSWERS)
def test_a_page_that_stays_is_answered_and_reaches_nothing(
    name: str, pages: Path, log: hostile.RequestLog, honest: sb.HeadlessTarget
) -> None:
    before, refused_before = log.count(), refused()
    with sb.HeadlessTarget(name, targets_dir=pages, timeout=CALL_TIMEOUT) as sim:
        result, took = timed_call(sim, 3)
        assert result.ok and took < CALL_TIMEOUT + 1, (result, took)
        result, took = timed_call(sim, 4)  # after every attempt of load and apply had its chance
        assert result.ok, result
        # the policy held: nothing needed refusing at the browser level either
        assert refused() == refused_before, gate().refused[-5:]
    assert log.count() == before, f"requests reached the server:\n{log.seen(before)}"
    assert_honest_page_works(honest, 21)


@pytest.mark.parametrize("name", LEAVES)
def test_a_page_that_leaves_its_frame_never_answers_as_the_target(
    name: str, pages: Path, log: hostile.RequestLog, honest: sb.HeadlessTarget
) -> None:
    """It navigates away a moment after it is ready: the frame that left is replaced (its calls end
    not_ready at once), and once it has left more than five times it is stopped."""
    before = log.count()
    with sb.HeadlessTarget(name, targets_dir=pages, timeout=CALL_TIMEOUT) as sim:
        seen: list[tuple[sb.ToolResult, float]] = []

        def stopped() -> sb.ToolResult | None:
            result, took = timed_call(sim, 3 + len(seen) % 10)
            seen.append((result, took))
            return (
                result
                if result.error is not None and "the target was stopped: it left its frame" in result.error.message
                else None
            )

        final = wait_for(
            stopped, timeout=60, what=f"{name} to be stopped for leaving its frame", describe=lambda: seen[-3:]
        )
        assert "left its frame" in final.error.message  # type: ignore[union-attr]
        for result, took in seen:  # every call ended by its deadline, with a code that says why
            assert took < CALL_TIMEOUT + 1, (result, took)
            assert result.ok or (result.error is not None and result.error.code == "not_ready"), result
            assert "forged" not in (result.state or {}), result

    assert log.count() == before, f"requests reached the server:\n{log.seen(before)}"
    assert_honest_page_works(honest, 22)


def test_a_manifest_naming_proto_is_refused_at_load(pages: Path) -> None:
    with pytest.raises(sb.ManifestError) as info:
        sb.load_target(pages / "proto_names.json")
    text = str(info.value)
    assert "proto_names.json" in text and "data.settings.__proto__" in text and "data.constructor" in text, text
    with pytest.raises(
        sb.TargetError, match=r"proto_names\.json: data\.settings\.__proto__: .* every JavaScript object"
    ):
        sb.HeadlessTarget("proto_names", targets_dir=pages)


def test_states_huge_in_python_deep_or_broken_are_bounded_where_they_enter(
    pages: Path, log: hostile.RequestLog, honest: sb.HeadlessTarget
) -> None:
    before = log.count()
    with sb.HeadlessTarget("huge_values", targets_dir=pages, timeout=CALL_TIMEOUT) as sim:
        wide = sim.set_parameter("mode", "wide")
        assert wide.ok and wide.state == {
            "_truncated": True,
            "code": "too_many_values",
            "limit": _bounds.MAX_NODES,
        }, wide.state
        deep = sim.set_parameter("mode", "deep")
        assert deep.ok and deep.state == {"_truncated": True, "code": "too_deep", "limit": _bounds.MAX_DEPTH}
        broken = sim.set_parameter("mode", "surrogate")
        assert broken.ok and broken.state is not None
        assert broken.state["status"] == "broken \ufffd text" and "key\ufffd" in broken.state, broken.state
        "".join(map(str, broken.state)).encode("utf-8")  # nothing left that an encoder refuses
        proto = sim.set_parameter("mode", "proto")
        assert proto.ok and proto.state is not None and proto.state["__proto__"] == {"polluted": True}
        assert not hasattr({}, "polluted")
        # A sampled advance keeps only what the caller keeps; a recording only small observable cells.
        sim.set_parameter("mode", "wide")
        table = sim.record(0.5, every=0.1, observables=["energy", "status"])
        assert len(table) == 5 and table["energy [J]"].isna().all(), table
        states = sim.advance(0.3, every=0.1)
        assert all(s.get("code") == "too_many_values" for s in states), states[:2]
    assert log.count() == before, f"requests reached the server:\n{log.seen(before)}"
    assert_honest_page_works(honest, 23)


def test_a_policy_mistake_is_no_way_out_headless(log: hostile.RequestLog, tmp_path: Path) -> None:
    """Defence in depth: a page with no policy at all (a registry mistake, simulated by loading one
    raw) reaches nothing: the browser's proxy refuses and counts its requests; and a page whose
    manifest relaxes its policy reaches what it names and nothing else."""
    from splitbrain_widget import registry
    from splitbrain_widget.hosts._headless_page import HeadlessPage

    page_html = f"""<!doctype html><script>fetch("{log.url}/no-policy").catch(() => {{}});
      new Image().src = "{log.url}/no-policy-img";
      SplitBrain.onApply(() => {{}}); SplitBrain.ready();</script>"""
    raw = f"<script>{registry.target_api_script()}</script>" + page_html  # no CSP at all
    before, refused_before = log.count(), refused()
    page = HeadlessPage(raw, on_message=lambda m: None, values={}, virtual_time=False)
    try:
        wait_for(lambda: refused() >= refused_before + 2, timeout=30, what="the browser to refuse both requests")
    finally:
        page.close()
    assert log.count() == before, f"requests reached the server:\n{log.seen(before)}"
    assert sorted(line.rsplit("/", 1)[1] for line in gate().refused[-2:]) == ["no-policy", "no-policy-img"]

    # A manifest's csp relaxation is honoured headless, and only what it names: one source, one path.
    allowed = f"{log.url}/allowed/"
    relaxed = raw.replace("/no-policy-img", "/allowed/img").replace("/no-policy", "/elsewhere")
    page = HeadlessPage(relaxed, on_message=lambda m: None, values={}, virtual_time=False, network=(allowed,))
    try:
        wait_for(lambda: "/allowed/img" in log.seen(before), timeout=30, what="the allowed request to arrive")
        wait_for(lambda: any("/elsewhere" in line for line in page.refused_requests()), timeout=30, what="the refusal")
    finally:
        page.close()
    assert log.seen(before).splitlines() == ["GET /allowed/img Origin: None"], log.seen(before)


def gate() -> Any:
    from splitbrain_widget.hosts._headless_engine import Engine

    engine = Engine.get()
    engine._launched.result(timeout=60)
    return engine._gate


def refused() -> int:
    """Requests the browser's proxy refused that were aimed at loopback (the attacks' server): the
    browser's own attempts at Google's update hosts are refused too, and not counted here."""
    return sum("127.0.0.1" in line for line in gate().refused)


SLOW_FRAMES = """<!doctype html><script>
  // attack on time: every animation frame busy-waits 20 ms of real time, so a long advance takes ages
  const spin = () => { const until = performance.now(); let x = 0; for (let i = 0; i < 4e6; i += 1) x += i; requestAnimationFrame(spin); return x; };
  requestAnimationFrame(spin);
  SplitBrain.onApply(() => {}); SplitBrain.ready();
</script>"""


def test_an_advance_that_ends_leaves_nothing_running_and_a_stopped_page_fails_at_once(tmp_path: Path) -> None:
    from splitbrain_widget.hosts._headless_engine import HeadlessError
    from splitbrain_widget.hosts._headless_page import ADVANCE_BUDGET_S

    (tmp_path / "slow.html").write_text(SLOW_FRAMES, encoding="utf-8")
    (tmp_path / "slow.json").write_text(json.dumps({**hostile.MANIFEST, "id": "slow"}), encoding="utf-8")
    with sb.HeadlessTarget("slow", targets_dir=tmp_path, timeout=CALL_TIMEOUT) as sim:
        assert sim._advance_timeout(None) == CALL_TIMEOUT + ADVANCE_BUDGET_S
        with pytest.raises(HeadlessError, match="timeout"):
            sim.advance(1e9, timeout=2)
        started = time.monotonic()
        assert sim.fetch_state().ok  # answered at once: the halted advance runs on no more
        sim.advance(0.05)
        assert time.monotonic() - started < CALL_TIMEOUT, time.monotonic() - started
    with sb.HeadlessTarget("raw_flood", targets_dir=Path(str(pages_for_flood(tmp_path))), timeout=CALL_TIMEOUT) as sim:
        sim.set_parameter("mode", "flood")
        try:  # the flood starts from a timer: headless, timers run when the page's clock advances
            sim.advance(0.05)
        except HeadlessError as exc:  # stopped while advancing: said so
            assert exc.code == "not_ready" and "stopped" in str(exc), exc
        wait_for(
            lambda: (r := sim.fetch_state()).error is not None and "stopped" in r.error.message,
            timeout=30,
            what="the flooding page to be stopped",
        )
        started = time.monotonic()
        with pytest.raises(HeadlessError, match="not_ready"):
            sim.advance(1)
        assert time.monotonic() - started < 2, "a stopped page fails an advance at once"


def pages_for_flood(tmp_path: Path) -> Path:
    with hostile.request_log() as server:
        return hostile.write_pages(tmp_path / "pages", server.url)
