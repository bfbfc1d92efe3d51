"""Every public operation that has a blocking and an awaitable form leaves the same audit entry either way.

Each pair runs on its own fresh headless page (the same target, the same arguments), so the two
audits can be compared entry by entry: the operation, its arguments, whether it worked, its code,
what it left in ``values`` and the target. Times, durations and the answering view differ by nature.
Marked ``browser``: the pages are headless Chromium (they skip without it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.core._audit import AuditEntry
from splitbrain_widget.headless import HeadlessError

pytestmark = pytest.mark.browser

Blocking = Callable[[sb.HeadlessTarget], Any]
Awaiting = Callable[[sb.HeadlessTarget], Awaitable[Any]]

PAIRS: dict[str, tuple[Blocking, Awaiting]] = {
    "get_parameters": (lambda s: s.get_parameters(), lambda s: s.aget_parameters()),
    "set_parameter": (lambda s: s.set_parameter("angle", 30), lambda s: s.aset_parameter("angle", 30)),
    "set_parameters refused": (
        lambda s: s.set_parameters({"angle": 300}),
        lambda s: s.aset_parameters({"angle": 300}),
    ),
    "reset": (lambda s: s.reset(), lambda s: s.areset()),
    "fetch_state": (lambda s: s.fetch_state(), lambda s: s.afetch_state()),
    "snapshot": (lambda s: s.snapshot(), lambda s: s.asnapshot()),
    "act": (lambda s: s.act("launch"), lambda s: s.aact("launch")),
    "act refused": (lambda s: s.act("nope"), lambda s: s.aact("nope")),
    "select_target": (lambda s: s.select_target("pendulum"), lambda s: s.aselect_target("pendulum")),
    "list_targets": (lambda s: s.list_targets(), lambda s: s.alist_targets()),
    "seek": (lambda s: s.seek("range", 30, max_evals=12), lambda s: s.aseek("range", 30, max_evals=12)),
    "advance": (lambda s: s.advance(0.5), lambda s: s.aadvance(0.5)),
    "advance every": (lambda s: s.advance(0.5, every=0.25), lambda s: s.aadvance(0.5, every=0.25)),
    "record": (lambda s: s.record(0.5, every=0.25), lambda s: s.arecord(0.5, every=0.25)),
}


def comparable(entry: AuditEntry) -> tuple[Any, ...]:
    message = entry.message if not entry.ok else ""  # a success's words may carry a page's numbers
    return (entry.op, entry.arguments, entry.ok, entry.code, entry.changed, entry.target, entry.source, message)


def audit_of(run: Callable[[sb.HeadlessTarget], Any]) -> list[tuple[Any, ...]]:
    with sb.HeadlessTarget("projectile") as sim:
        sim.fetch_state()  # the page is up: what follows is the pair's alone
        start = len(sim.audit)
        run(sim)
        return [comparable(e) for e in list(sim.audit)[start:]]


@pytest.mark.parametrize("name", list(PAIRS))
def test_each_blocking_and_async_pair_leaves_the_same_audit_entries(name: str) -> None:
    blocking, awaiting = PAIRS[name]
    by_blocking = audit_of(blocking)
    by_awaiting = audit_of(lambda sim: awaited(awaiting(sim)))
    assert by_blocking, f"{name}: the blocking form left no audit entry"
    assert by_blocking == by_awaiting


def test_a_failed_advance_is_audited_the_same_way_by_both_twins() -> None:
    def failing(run: Callable[[sb.TargetWidget], Any]) -> list[tuple[Any, ...]]:
        sim = sb.TargetWidget("projectile")  # no headless page: advance refuses, saying why
        try:
            with pytest.raises(HeadlessError, match="no_view"):
                run(sim)
            return [comparable(e) for e in sim.audit]
        finally:
            sim.close()

    by_blocking = failing(lambda sim: sim.advance(1))
    by_awaiting = failing(lambda sim: awaited(sim.aadvance(1)))
    assert by_blocking == by_awaiting and [e[:4] for e in by_blocking] == [
        ("advance", {"seconds": 1}, False, "no_view")
    ]


def test_an_agents_ask_and_aask_leave_the_same_entries() -> None:
    def asked(run: Callable[[sb.Agent], Any]) -> list[tuple[Any, ...]]:
        with sb.HeadlessTarget("projectile") as sim:
            sim.fetch_state()
            start = len(sim.audit)
            run(sb.Agent(sim, model="offline"))
            return [comparable(e) for e in list(sim.audit)[start:]]

    request = "set the angle to 30 degrees"
    by_blocking = asked(lambda agent: agent.ask(request))
    by_awaiting = asked(lambda agent: awaited(agent.aask(request)))
    assert by_blocking and by_blocking == by_awaiting
    assert [(e[0], e[2], e[4]) for e in by_blocking] == [("set_parameters", True, {"launch.angle": 30})]
    assert by_blocking[0][6] == f"agent: {request}"  # the source: who asked


def awaited(awaitable: Awaitable[Any]) -> Any:
    """``await awaitable`` on an event loop of its own, in a thread: this thread may run one already
    (Playwright's sync API does, for the browser tests beside these; a notebook cell's kernel does)."""
    box: list[Any] = []
    failed: list[BaseException] = []

    async def main() -> None:
        try:
            box.append(await awaitable)
        except BaseException as exc:  # raised here, in the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=lambda: asyncio.run(main()))
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return box[0]


def test_an_engine_that_takes_no_cancelled_callable_hears_of_a_cancel_through_stopped() -> None:
    from splitbrain_widget.core import _twins

    started, seen = threading.Event(), threading.Event()

    def engine(_cancelled: Callable[[], bool]) -> str:  # a sweep: it asks stopped() between its steps
        assert not _twins.stopped()
        started.set()
        while not _twins.stopped():
            seen.wait(0.01)
        seen.set()
        return "stopped"

    async def go() -> None:
        task = asyncio.ensure_future(_twins.awaiting(engine))
        await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: in the browser layer Playwright holds this one's loop
        pool.submit(asyncio.run, go()).result()
    assert seen.is_set() and not _twins.stopped()  # outside awaiting, never stopped
