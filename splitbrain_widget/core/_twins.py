"""The one way a blocking engine gets an awaitable twin, and an awaitable one a blocking twin.

The tools are operations driven by :meth:`Operations.run_blocking` / :meth:`Operations.run_async`
(see :mod:`._operations`). Two kinds of work cannot be a generator of waits and keep a helper here,
one each, shared by every feature that needs it:

- :func:`awaiting` awaits a blocking engine (``seek``, ``record``): it runs on a worker thread and
  takes a ``cancelled`` callable; a cancelled awaiter makes it stop before its next step and waits
  for that, so the cancellation reaches the caller only once the engine has stopped (and, with
  ``undo``, put back what it had finished). An engine that takes no such callable (a ``sweep``) asks
  :func:`stopped` between its steps.
- :func:`blocking` blocks on a coroutine (``Agent.ask``, a recording's pipeline of advances): it
  runs to the end on an event loop of its own on a worker thread that carries the caller's context
  (the call source); Ctrl-C calls ``on_interrupt`` (which makes the coroutine end), waits for it
  and raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from ._platform import desktop_only

T = TypeVar("T")

_STOPPED: contextvars.ContextVar[Callable[[], bool]] = contextvars.ContextVar("splitbrain_stopped")


def stopped() -> bool:
    """Whether the awaiter of the engine running on this thread was cancelled (never, outside
    :func:`awaiting`)."""
    told = _STOPPED.get(None)
    return told is not None and told()


JOIN_SLICE_S = 0.2  # a blocked caller wakes this often, so Ctrl-C reaches it
INTERRUPTED_JOIN_S = 30.0  # how long a Ctrl-C waits for the work to end before raising anyway


async def awaiting(
    engine: Callable[[Callable[[], bool]], T],
    *,
    undo: Callable[[T], Awaitable[None]] | None = None,
    what: str = "this call",
) -> T:
    """``engine(cancelled)`` on a worker thread, awaited. Cancelled, the engine is told (``cancelled()``
    turns true), waited for, and what it returned meanwhile handed to ``undo``; then the
    ``CancelledError`` is raised. In the browser (no threads) ``what`` is not available."""
    desktop_only(what)
    stop = threading.Event()
    told = _STOPPED.set(stop.is_set)  # the worker thread runs in a copy of this context
    try:
        task = asyncio.ensure_future(asyncio.to_thread(engine, stop.is_set))
    finally:
        _STOPPED.reset(told)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        stop.set()
        await settled(task)
        if undo is not None and not task.cancelled() and task.exception() is None:
            await settled(asyncio.ensure_future(undo(task.result())))
        raise


async def settled(task: asyncio.Future[Any]) -> None:
    """Wait for ``task`` to end, whatever cancels the waiter meanwhile."""
    while not task.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({task})


def blocking(
    make: Callable[[], Coroutine[Any, Any, T]], *, name: str, on_interrupt: Callable[[], None] | None = None
) -> T:
    """Run the coroutine ``make()`` makes to the end on a worker thread's own event loop and return its
    result (or raise its exception) here. The thread runs in a copy of this context. A
    KeyboardInterrupt calls ``on_interrupt``, waits up to INTERRUPTED_JOIN_S for the work to end and
    is raised. In the browser (no threads) it says to await the awaitable twin instead."""
    desktop_only(f"{name}, a call that blocks until its work ends,", "await its awaitable twin instead")
    box: list[T] = []
    failed: list[BaseException] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            box.append(asyncio.run(make()))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=context.run, args=(work,), name=name, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(JOIN_SLICE_S)
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        worker.join(INTERRUPTED_JOIN_S)
        raise
    if failed:
        raise failed[0]
    return box[0]
