"""The kernel side of the bridge: pending requests, live views, first reply wins.

Everything here is thread-safe and touches no traitlets: replies may arrive on the kernel's
shell-channel thread (see ``_kernel_tap``), a subshell thread, the main thread or a worker.
Waiting is written once, as conditions over this state; ``wait_until`` (blocking) and
``await_until`` (asyncio) are the two drivers.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol import PROTOCOL_VERSION, ErrorInfo, EventMessage, Op, ReplyMessage

log = logging.getLogger("splitbrain_widget.bridge")

WAIT_SLICE_S = 0.1  # a blocking wait wakes this often so KeyboardInterrupt lands promptly
VIEWS = "\x00views"  # a notify key: the views changed, no request was settled
MAX_SEEN_VIEWS = 256


@dataclass
class ViewInfo:
    """One rendered view of a widget, as its own events describe it."""

    view_id: str
    attached_at: float
    protocol: int = PROTOCOL_VERSION
    ready: bool = False
    ready_at: float | None = None
    user_agent: str = ""
    visible: bool = True  # whether its notebook page can be seen (protocol 1.6: attached, visibility)


@dataclass
class PendingRequest:
    """A request sent to the views; the first reply settles it."""

    id: str
    op: Op
    payload: dict[str, Any]
    created: float
    deadline: float
    reply: ReplyMessage | None = None
    failure: ErrorInfo | None = None
    answered_by: list[str] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return self.reply is not None or self.failure is not None


class Bridge:
    """Pending requests and live views of one widget."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        # Re-entrant: wait predicates run under the lock and may call live_views() and friends.
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        # Async waiters by what they wait for: a request id, or None for "anything about the views".
        # A reply wakes only its own request's waiters, so 10,000 concurrent calls stay linear.
        self._async_waiters: dict[str | None, dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._counter = itertools.count(1)
        self._salt = secrets.token_hex(3)
        self.pending: dict[str, PendingRequest] = {}
        self.views: dict[str, ViewInfo] = {}
        self.latest_state: dict[str, Any] | None = None
        self.state_version = 0
        self.ever_attached = False
        self.on_change = on_change
        self.dropped = 0
        self.errors_reported = 0
        self.last_error = ""

    # -- requests -----------------------------------------------------------------------------

    def open_request(self, op: Op, payload: dict[str, Any], timeout: float) -> PendingRequest:
        """Register a request with a deadline ``timeout`` seconds from now."""
        now = time.monotonic()
        with self._lock:
            request_id = f"r{next(self._counter)}-{self._salt}"
            pending = PendingRequest(request_id, op, payload, now, now + timeout)
            self.pending[request_id] = pending
        return pending

    def close_request(self, pending: PendingRequest, failure: ErrorInfo | None = None) -> None:
        """Forget a request; a ``failure`` settles it first if no reply did. Later replies are dropped."""
        with self._lock:
            if failure is not None and not pending.settled:
                pending.failure = failure
            self.pending.pop(pending.id, None)
            self._notify_locked(pending.id)

    def touch(self, request_id: str) -> None:
        """Wake whoever waits on ``request_id`` (its request was just sent on its behalf)."""
        with self._lock:
            self._notify_locked(request_id)

    def fail_all(self, code: str, message: str) -> None:
        """Settle every pending request with an error (kernel shutdown, widget closed, Stop)."""
        with self._lock:
            for pending in self.pending.values():
                if not pending.settled:
                    pending.failure = ErrorInfo(code=code, message=message)  # type: ignore[arg-type]
            self._notify_locked()

    # -- messages from views (any thread) -----------------------------------------------------

    def handle_reply(self, reply: ReplyMessage) -> bool:
        """Settle the pending request ``reply.id``; return False if it was not pending (late, stray, forged)."""
        with self._lock:
            pending = self.pending.get(reply.id)
            if pending is None:
                self.dropped += 1
                log.info("dropped reply %s from view %s: no such pending request", reply.id, reply.view_id)
                return False
            if reply.view_id in pending.answered_by:
                return False
            pending.answered_by.append(reply.view_id)
            if pending.settled:
                return True  # another view answered first; the first reply wins
            # bounded where it was parsed (parse_view_message); a snapshot's `{}` (no room beside its
            # picture) is no state of the page's
            if reply.ok and reply.state is not None and (reply.state or pending.op != "snapshot"):
                self._set_state_locked(reply.state)
            pending.reply = reply
            self._notify_locked(reply.id)
        return True

    def handle_event(self, event: EventMessage) -> tuple[bool | None, bool | None]:
        """Track a view's lifecycle and the states it reports; returns :meth:`page_visible` before and
        after the event, both read under the lock that changes it."""
        now = time.monotonic()
        with self._lock:
            before = self.page_visible()
            view = self.views.get(event.view_id)
            if event.type == "attached":
                payload = event.payload if isinstance(event.payload, dict) else {}
                protocol = payload.get("protocol", 0)
                if len(self.views) >= MAX_SEEN_VIEWS:
                    oldest = min(self.views.values(), key=lambda v: v.attached_at)
                    self.views.pop(oldest.view_id)
                self.views[event.view_id] = ViewInfo(
                    event.view_id,
                    now,
                    protocol=protocol if isinstance(protocol, int) else 0,
                    user_agent=str(payload.get("user_agent", ""))[:200],
                    visible=payload.get("visible") is not False,
                )
                self.ever_attached = True
            elif event.type == "ready":
                if view is None:  # a ready without attached (the kernel restarted under a live page)
                    view = self.views[event.view_id] = ViewInfo(event.view_id, now)
                    self.ever_attached = True
                view.ready, view.ready_at = True, now
            elif event.type == "detached":
                self.views.pop(event.view_id, None)
                if not self.views:  # the last view closed: nobody will answer what is pending
                    for pending in self.pending.values():
                        if not pending.settled:
                            pending.failure = ErrorInfo(
                                code="no_view",
                                message=f"the view closed before the target answered {pending.op}; "
                                "the change is kept and applies when the widget is displayed again",
                            )
            elif event.type == "visibility" and view is not None and isinstance(event.payload, dict):
                view.visible = event.payload.get("visible") is not False
            elif event.type == "state" and view is not None:
                self._set_state_locked(event.payload)
            elif event.type == "error":
                self.errors_reported += 1
                if self.errors_reported <= 20:  # a target throwing in a loop must not flood the log (IOPub)
                    log.warning("view %s reported an error: %.500s", event.view_id, event.payload)
                self.last_error = str(event.payload)[:500]
            # Only a detach can settle pending requests; other events concern the views alone, so they
            # must not wake thousands of calls that wait for their own replies.
            self._notify_locked(None if event.type == "detached" else VIEWS)
            return before, self.page_visible()

    # -- waiting ------------------------------------------------------------------------------

    def wait_until(self, predicate: Callable[[], bool], deadline: float) -> bool:
        """Block until ``predicate()`` holds (True) or ``deadline`` passes (False); interruptible."""
        with self._changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(min(remaining, WAIT_SLICE_S))
            return True

    async def await_until(self, predicate: Callable[[], bool], deadline: float, key: str | None = None) -> bool:
        """The asyncio twin of :meth:`wait_until`; ``key`` (a request id) narrows what wakes it."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if predicate():
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                future: asyncio.Future[None] = loop.create_future()
                self._async_waiters.setdefault(key, {})[id(future)] = (loop, future)
            try:
                await asyncio.wait_for(future, remaining)
            except TimeoutError:
                pass
            finally:
                with self._lock:
                    group = self._async_waiters.get(key)
                    if group is not None:
                        group.pop(id(future), None)
                        if not group:
                            del self._async_waiters[key]

    # -- views --------------------------------------------------------------------------------

    def live_views(self) -> list[ViewInfo]:
        with self._lock:
            return [v for v in self.views.values() if v.protocol == PROTOCOL_VERSION]

    def page_visible(self) -> bool | None:
        """Whether a live view's notebook page can be seen: None without a live view, False while
        every one is in the background (its browser throttles timers and stops animation frames)."""
        with self._lock:
            live = [v for v in self.views.values() if v.protocol == PROTOCOL_VERSION]
            return None if not live else any(v.visible for v in live)

    def ready_views(self) -> list[ViewInfo]:
        with self._lock:
            return [v for v in self.views.values() if v.ready and v.protocol == PROTOCOL_VERSION]

    def mismatched_views(self) -> list[ViewInfo]:
        """The attached views that speak another protocol version (they are never sent a request)."""
        with self._lock:
            return [v for v in self.views.values() if v.protocol != PROTOCOL_VERSION]

    def still_pending(self, request_ids: set[str]) -> set[str]:
        """Those of ``request_ids`` that are pending still."""
        with self._lock:
            return {request_id for request_id in request_ids if request_id in self.pending}

    def drop_view(self, view_id: str) -> None:
        """Forget a view that is being closed (a headless page a notebook view took over from), before its
        own ``detached`` arrives: from now on it counts as no view and is asked nothing."""
        with self._lock:
            if self.views.pop(view_id, None) is not None:
                self._notify_locked(VIEWS)

    def wake(self, key: str | None = None) -> None:
        """Wake the waiters on ``key`` (every waiter when None): something their predicates read
        changed outside the bridge."""
        with self._lock:
            self._notify_locked(key)

    def forget_views(self) -> None:
        """Drop every view (the target changed: the views reload and announce themselves again)."""
        with self._lock:
            for view in self.views.values():
                view.ready = False
            self._notify_locked()

    # -- internals ----------------------------------------------------------------------------

    def _set_state_locked(self, state: dict[str, Any]) -> None:
        self.latest_state = state
        self.state_version += 1

    def _notify_locked(self, key: str | None = None) -> None:
        """Wake blocking waiters, and the async ones waiting on ``key`` and on the views (all if key is None)."""
        self._changed.notify_all()
        if key is None:
            keys: list[str | None] = list(self._async_waiters)
        elif key == VIEWS:
            keys = [None]
        else:
            keys = [None, key]
        for k in keys:
            for loop, future in self._async_waiters.pop(k, {}).values():
                loop.call_soon_threadsafe(_set_done, future)
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # a hook must never break message handling
                log.exception("bridge on_change hook failed")


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
