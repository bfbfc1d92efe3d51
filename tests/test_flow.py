"""Flow control at the host seam: one deadline bounds a call's whole life, and a kept change says so."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

import splitbrain_widget as sb
import splitbrain_widget.core._operations as operations_module
from splitbrain_widget.core._pacing import Pacer

from .fake_view import FakeView, wait_for

FIXTURES = Path(__file__).parent / "fixtures" / "targets"


@pytest.fixture
def stalled_pacer(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """A pacer whose sender thread is stuck until the returned event is set; 5 calls of 2 messages go
    at once, and the bucket refills too slowly to matter."""
    release = threading.Event()
    pacer = Pacer(per_second=0.01, burst=10, in_flight=1000, thread_init=lambda: release.wait(60))
    monkeypatch.setattr(operations_module, "PACER", pacer)
    monkeypatch.setattr(operations_module, "_calls_reach_iopub", lambda: True)  # as in a kernel
    yield release
    release.set()


def test_outside_a_kernel_calls_are_not_held_to_the_iopub_rate(
    stalled_pacer: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script or a Dask worker has no notebook server to protect: only the in-flight window counts."""
    monkeypatch.setattr(operations_module, "_calls_reach_iopub", lambda: False)
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    view = FakeView(sim)

    async def burst() -> list[sb.ToolResult]:
        return await asyncio.gather(*[sim.aset_parameter("count", 1 + i % 9, timeout=5) for i in range(60)])

    results = asyncio.run(burst())
    assert all(r.ok and r.applied for r in results), [str(r)[:90] for r in results if not r.ok]
    assert len(view.requests) == 60


def test_queued_calls_end_by_their_deadline_when_the_sender_stalls(stalled_pacer: threading.Event) -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    view = FakeView(sim)

    async def burst() -> list[sb.ToolResult]:
        return await asyncio.gather(*[sim.aset_parameter("count", 1 + i % 9, timeout=0.5) for i in range(60)])

    started = time.monotonic()
    results = asyncio.run(burst())
    elapsed = time.monotonic() - started
    sent, queued = results[:5], results[5:]
    assert all(r.ok and r.applied for r in sent)
    assert all(not r.ok and r.error is not None and r.error.code == "timeout" for r in queued), [
        str(r)[:90] for r in queued if r.ok or r.error is None or r.error.code != "timeout"
    ]
    assert all("still queued" in str(r) and "not sent and nothing changed" in str(r) for r in queued)
    assert all(r.applied is False and not r.kept for r in queued)
    assert "behind 54 earlier call(s)" in str(queued[-1])
    assert elapsed < 30, "a queued call outlived its deadline by far"  # bound: 0.5 s each, concurrently
    # What was not sent was taken back: the kernel and the page hold the last value that went out.
    assert sim.values["settings.count"] == 5 == view.values["settings.count"]
    assert len(view.requests) == 5
    # The widget stays usable: once the sender runs again, calls go through.
    operations_module.PACER.rate = 1000.0  # tokens again (the stalled test ran on an empty bucket)
    stalled_pacer.set()
    later = sim.set_parameter("count", 7, timeout=5)
    assert later.ok and view.values["settings.count"] == 7


def test_a_call_waits_for_its_answer_no_longer_than_its_timeout() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(sim, behaviour="silent")
    result = sim.set_parameter("speed", 12, timeout=0.3)
    assert not result.ok and result.error is not None and result.error.code == "timeout"
    assert "sent to the view, waiting for the page's answer" in result.error.message
    assert result.applied is False and result.kept and sim.values["settings.speed"] == 12
    assert not sim.bridge.pending


def test_kept_not_applied_is_one_rule_on_every_path() -> None:
    """No view, a view of another protocol, and a view closing mid-call: ok=False, applied=False,
    kept=True, and the model's copy of the result says so too."""
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    no_view = sim.set_parameter("speed", 11)
    assert (no_view.ok, no_view.applied, no_view.kept) == (False, False, True)
    assert no_view.error is not None and no_view.error.code == "no_view"
    assert no_view.for_model()["applied"] is False and no_view.for_model()["kept"] is True
    assert sim.values["settings.speed"] == 11

    FakeView(sim, view_id="old", protocol=0)
    mismatch = sim.set_parameter("speed", 12)
    assert mismatch.error is not None and mismatch.error.code == "protocol_mismatch"
    assert "speaks protocol 0" in mismatch.error.message and mismatch.kept and not mismatch.ok
    assert sim.values["settings.speed"] == 12

    sim2 = sb.TargetWidget("demo", targets_dir=FIXTURES)
    closing = FakeView(sim2, behaviour="silent")
    timer = threading.Timer(0.2, closing.detach)
    timer.start()
    closed = sim2.set_parameter("speed", 13, timeout=5)
    timer.join()
    assert closed.error is not None and closed.error.code == "no_view"
    assert (closed.ok, closed.applied, closed.kept) == (False, False, True)


def test_an_applied_change_says_so_to_the_caller_and_the_model() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    view = FakeView(sim)
    result = sim.set_parameter("speed", 12)
    assert result.ok and result.applied is True and not result.kept and result.views_applied == 1
    assert result.for_model()["applied"] is True and "kept" not in result.for_model()
    assert view.values["settings.speed"] == 12
    assert "applied" not in sim.get_parameters().for_model()  # a call that never goes to the page


def test_a_refused_change_is_given_back_and_not_kept() -> None:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(sim, behaviour="throw")
    result = sim.set_parameter("speed", 12)
    assert result.error is not None and result.error.code == "target_error"
    assert (result.ok, result.applied, result.kept) == (False, False, False)
    assert sim.values["settings.speed"] == 8.0  # the manifest's default came back


def test_calls_made_before_a_view_attaches_are_not_overtaken_by_later_ones() -> None:
    """A burst issued while the view is on its way: the view attaches while the burst's later calls
    are still starting. Those find the view live at once; they must not go before the earlier calls
    that were waiting for it (in JupyterLab: 10,000 applies before ready, seen out of order)."""
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    sim.expect_view(30)
    holder: list[FakeView] = []

    async def burst() -> list[sb.ToolResult]:
        calls = []
        for i in range(2000):
            calls.append(asyncio.ensure_future(sim.aset_parameter("count", 1 + i % 9, timeout=30)))
            if i == 1000:  # half of them wait for the view; it attaches before the rest start
                await asyncio.sleep(0)
                attach = threading.Thread(target=lambda: holder.append(FakeView(sim)))
                attach.start()
                attach.join()
        return await asyncio.gather(*calls)

    results = asyncio.run(burst())
    assert all(r.ok for r in results), [str(r)[:90] for r in results if not r.ok][:3]
    sent = [m["payload"]["values"]["settings.count"] for m in holder[0].requests]
    assert sent == [1 + i % 9 for i in range(2000)], "the view got the calls out of call order"


def test_a_blocking_call_does_not_wait_behind_async_calls_its_own_thread_holds_up() -> None:
    """An async call waits in line for the view; the same thread then makes a blocking call (a cell
    after ``ensure_future``): the async call cannot move while the thread blocks, so the blocking
    call must not queue behind it, or it would wait out its whole deadline."""
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    sim.expect_view(30)

    def attach_once_in_line() -> None:
        wait_for(lambda: bool(sim._line.waiting), "the async call in line")
        FakeView(sim)

    async def cell() -> tuple[sb.ToolResult, sb.ToolResult]:
        waiting = asyncio.ensure_future(sim.aset_parameter("count", 3, timeout=30))
        await asyncio.sleep(0)  # the async call takes its place in line and waits for the view
        threading.Thread(target=attach_once_in_line, daemon=True).start()
        blocking = sim.set_parameter("count", 4, timeout=5)  # the loop is blocked here
        return blocking, await waiting

    blocking, waited = asyncio.run(cell())
    assert blocking.ok and blocking.applied, blocking
    assert waited.ok and waited.applied, waited
