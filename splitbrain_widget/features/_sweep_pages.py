"""The sweep's engine: grid points measured on headless pages, several at once on one asyncio loop.

Each page is a :class:`~splitbrain_widget.HeadlessTarget`, so a point goes through the same tool
surface as a call from a notebook (validation, the audit, the page's own answer). Without
``advance`` a point is one ``aset_parameters`` and the page's reply carries the state it measured;
several points ride each page at once (:data:`PIPELINE_DEPTH`): the page answers them in order, each
reply with the state its own apply produced, so the round trip is hidden instead of paid per point
(projectile, 2 busy cores: about 100 points/s one at a time on one page, 250-300/s sixteen at a
time, 330-400/s thirty-two; deeper gains nothing). With ``advance`` time moves, so a point is a
reset, its apply and an ``aadvance``, one point at a time per page: each starts from the target's
reset, whichever page runs it.

Used by :func:`splitbrain_widget.sweep` in this process and by the Dask worker plugin on a cluster
(``_sweep_dask``), so both measure a point the same way.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..hosts._headless_engine import HeadlessError

if TYPE_CHECKING:
    from ..headless import HeadlessTarget

log = logging.getLogger("splitbrain_widget.sweep")

PAGE_LOST = frozenset({"no_view", "not_ready"})  # a point's error that says its page is gone, not the point
PIPELINE_DEPTH = 32  # points in flight per page when no advance is asked for
START_TIMEOUT_S = 90.0  # a page's first answer (a fresh Dask worker's Chromium on a busy machine)
POINT_TIMEOUT_S = 10.0  # each call of a point, once the page answered
PROGRESS_POLL_S = 0.2


@dataclass(frozen=True)
class Plan:
    """How every point of a sweep is measured; sent as is to Dask workers (so it stays plain data).

    ``target`` is what a page is opened with (a built-in target's id or a page path); ``base`` the
    values sent with every point besides its own (a widget's values that differ from the defaults);
    ``measure`` the state keys kept, or None for every key that is not a parameter; ``open_page``
    opens one page, ``open_page(target, timeout=...)`` (the face passes
    :class:`~splitbrain_widget.HeadlessTarget`: a class, so the plan still pickles by reference).
    """

    target: str
    measure: tuple[str, ...] | None
    advance: float | None
    pages: int
    open_page: Callable[..., HeadlessTarget]
    base: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """One point's answer: ``observed`` (the kept state keys) when ``ok``, else the ``error`` code."""

    ok: bool
    observed: dict[str, Any]
    error: str | None = None


class PagePool:
    """``plan.pages`` headless pages of one target, opened together and kept until :meth:`close`."""

    def __init__(self, plan: Plan) -> None:
        self.target = plan.target
        self.size = plan.pages
        self.pages: list[HeadlessTarget] = []
        self._started = False
        try:
            for _ in range(plan.pages):
                # The first call may wait this long for its page: Chromium may still be starting.
                self.pages.append(plan.open_page(plan.target, timeout=START_TIMEOUT_S))
        except BaseException:
            self.close()
            raise

    def serves(self, plan: Plan) -> bool:
        """Whether this pool can measure ``plan``: its target and size, and every page still there
        (a page that crashed or was stopped for flooding is gone; so is a pool that never started)."""
        healthy = bool(self.pages) and all(page.views > 0 for page in self.pages) if self._started else True
        return plan.target == self.target and plan.pages == self.size and healthy

    async def start(self) -> None:
        """Wait until every page answered once (a slow start costs no point); a page that never does is
        closed and left out. Raises HeadlessError (``not_ready``) when no page answered at all."""
        if self._started:
            return
        answers = await asyncio.gather(*(page.afetch_state() for page in self.pages))
        kept, error = [], None
        for page, answer in zip(self.pages, answers, strict=True):
            if answer.ok:
                kept.append(page)
                continue
            log.warning("a sweep page of %s did not start: %s", self.target, answer.error)
            error = error or answer.error
            page.close()
        self.pages = kept
        if not kept:  # not_ready whatever the page said: the pages are there, their target never answered
            why = f"{error.code}: {error.message}" if error else "no page"
            message = f"no sweep page of {self.target} started within {START_TIMEOUT_S} s ({why})"
            raise HeadlessError("not_ready", message)
        for page in self.pages:
            page.timeout = POINT_TIMEOUT_S
        self._started = True

    def close(self) -> None:
        pages, self.pages = self.pages, []
        for page in pages:
            try:
                page.close()
            except Exception as exc:  # one page that fails to close must not keep the others open
                log.info("sweep page did not close cleanly: %s", exc)


async def measure_on(
    pool: PagePool, points: Sequence[dict[str, Any]], plan: Plan, done: Callable[[int], None] = lambda _n: None
) -> list[Outcome]:
    """Start ``pool``'s pages (once) and measure ``points`` on them."""
    await pool.start()
    return await measure_points(pool.pages, points, plan, done)


async def measure_points(
    pages: Sequence[HeadlessTarget],
    points: Sequence[dict[str, Any]],
    plan: Plan,
    done: Callable[[int], None] = lambda _n: None,
) -> list[Outcome]:
    """Measure every point on ``pages``; the outcomes come back in the order of ``points``.

    ``done(1)`` is called (on this loop) as each point finishes. A point that fails is an outcome
    with its error code; it never stops the others.
    """
    outcomes: list[Outcome | None] = [None] * len(points)
    upcoming = iter(range(len(points)))  # shared by every lane: each takes the next point left
    retry: collections.deque[int] = collections.deque()  # points a lost page gave back
    lost: set[int] = set()  # id() of the pages that stopped answering (crashed, or stopped for flooding)
    lanes_per_page = 1 if plan.advance is not None else PIPELINE_DEPTH

    def next_point() -> int | None:
        return retry.popleft() if retry else next(upcoming, None)

    async def lane(page: HeadlessTarget) -> None:
        while (index := next_point()) is not None:
            outcome = await measure_point(page, points[index], plan)
            if outcome.error in PAGE_LOST and len(lost | {id(page)}) < len(pages):
                # The page is gone: a lost page fails every point at once and would take them all.
                # Give the point back for a page that still answers, and end this lane.
                lost.add(id(page))
                retry.append(index)
                return
            outcomes[index] = outcome
            done(1)

    while True:  # again while points were given back after the other pages' lanes had finished
        live = [page for page in pages if id(page) not in lost]
        await asyncio.gather(*(lane(page) for page in live for _ in range(lanes_per_page)))
        if not retry or not [page for page in pages if id(page) not in lost]:
            break
    return [outcome if outcome is not None else Outcome(False, {}, "not_ready") for outcome in outcomes]


async def measure_point(page: HeadlessTarget, point: dict[str, Any], plan: Plan) -> Outcome:
    """One point on one page: what the page reports after its values (and ``plan.advance`` seconds)."""
    values = {**plan.base, **point}
    try:
        if plan.advance is None:
            result = await page.aset_parameters(values)
        else:
            # Two tasks started in this order reach the page in this order: the reset, then the point.
            reset, result = await asyncio.gather(page.areset(), page.aset_parameters(values))
            if result.ok and not reset.ok:
                result = reset
        if not result.ok:
            return Outcome(False, {}, result.error.code if result.error else "internal_error")
        state = result.state or {}
        if plan.advance is not None:
            state = await page.aadvance(plan.advance)
    except HeadlessError as exc:
        return Outcome(False, {}, exc.code)
    except Exception:  # a bug must cost one point, not the sweep
        log.exception("sweep point %s failed", point)
        return Outcome(False, {}, "internal_error")
    return Outcome(True, _kept(state, plan.measure, page))


def _kept(state: dict[str, Any], measure: tuple[str, ...] | None, page: HeadlessTarget) -> dict[str, Any]:
    if measure is not None:
        return {name: state.get(name) for name in measure}
    parameters = page.schema.parameters
    return {key: value for key, value in state.items() if key not in parameters}


def run_local(plan: Plan, points: Sequence[dict[str, Any]], on_progress: Callable[[int], None]) -> list[Outcome]:
    """Measure ``points`` on ``plan.pages`` pages of this process's headless browser.

    The pages and their loop live on a thread of their own, so this works alike from a script and
    from a notebook cell whose loop is already running; ``on_progress(n)`` is called on the calling
    thread. An interrupt (Ctrl-C, a kernel interrupt) stops the sweep and closes its pages.
    """
    finished: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    answer: list[list[Outcome] | BaseException] = []
    loop = asyncio.new_event_loop()

    async def sweep() -> list[Outcome]:
        pool = PagePool(plan)
        try:
            return await measure_on(pool, points, plan, finished.put)
        finally:
            pool.close()

    main = loop.create_task(sweep())  # runs once the thread runs the loop

    def work() -> None:
        try:
            answer.append(loop.run_until_complete(main))
        except BaseException as exc:  # handed to the calling thread below
            answer.append(exc)
        finally:
            loop.close()
            finished.put(None)

    thread = threading.Thread(target=work, name="splitbrain-sweep", daemon=True)
    thread.start()
    try:
        while True:
            try:
                count = finished.get(timeout=PROGRESS_POLL_S)  # a timeout keeps Ctrl-C deliverable
            except queue.Empty:
                continue
            if count is None:
                break
            on_progress(count)
    except BaseException:
        with contextlib.suppress(RuntimeError):  # the loop already finished and closed
            loop.call_soon_threadsafe(main.cancel)
        thread.join()
        raise
    thread.join()
    (result,) = answer
    if isinstance(result, BaseException):
        raise result
    return result
