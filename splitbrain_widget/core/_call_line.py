"""Call order while a view is on its way: calls that wait for a view go in the order they came.

A call that finds no view, while one is expected (the widget was displayed moments ago, or a
headless page is starting), waits for it; a later call never overtakes an earlier one that waits.
This module keeps that line and decides how long a call waits for a view to attach.
"""

from __future__ import annotations

import collections
import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Generator

from . import _kernel_tap
from ._bridge import Bridge
from ._wait import Wait

# Set while a blocking driver runs an operation (see CallLine.take_turn).
BLOCKING_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("splitbrain_blocking_call", default=False)
NO_LINE = -1  # a turn that waits for the view but not behind the others (a blocking call, see take_turn)


def turn_key(turn: int) -> str:
    """What wakes a call waiting for its turn behind earlier calls (see :meth:`CallLine.wait_turn`)."""
    return f"turn:{turn}"


class CallLine:
    """The line of calls waiting for a view, and when a view is worth waiting for.

    Args:
        bridge: the widget's bridge (its live views; its wake-ups end the waits).
        attach_timeout: how long a call waits for a view right after the widget was displayed.
    """

    def __init__(self, bridge: Bridge, attach_timeout: float) -> None:
        self._bridge = bridge
        self.attach_timeout = attach_timeout
        self._displayed_at: float | None = None
        self._displayed_by_frontend = False
        self._view_expected_until = 0.0  # see expect_view
        self._arrivals = itertools.count()
        self._waiting: collections.deque[int] = collections.deque()
        self._turn_threads: dict[int, int] = {}  # turn -> the thread that took it
        self._lock = threading.Lock()

    # -- what the widget tells it -------------------------------------------------------------

    def displayed(self) -> None:
        """The widget was just displayed (on the displaying cell's thread: it knows its frontend)."""
        self._displayed_at = time.monotonic()
        self._displayed_by_frontend = _kernel_tap.frontend_connected()

    def expect_view(self, timeout: float) -> None:
        """A view is on its way: for ``timeout`` seconds a call that finds none waits for it."""
        self._view_expected_until = time.monotonic() + timeout
        self._bridge.wake()

    @property
    def waiting(self) -> int:
        """How many calls wait in line for a view."""
        with self._lock:
            return len(self._waiting)

    # -- the line -------------------------------------------------------------------------------

    def take_turn(self) -> int | None:
        """A place in the line of calls waiting for a view, if this call must wait: no view yet but
        one on its way, or earlier calls still waiting (then this one goes after them)."""
        live = bool(self._bridge.live_views())  # read before the lock: predicates take it under the bridge's
        expecting = self.attach_deadline() is not None
        me = threading.get_ident()
        with self._lock:
            if not self._waiting and (live or not expecting):
                return None
            if BLOCKING_CALL.get() and any(self._turn_threads.get(t) == me for t in self._waiting):
                # A blocking call on the thread whose event loop runs async calls waiting in line: they
                # cannot move while it blocks, so it must not wait behind them (only, at most, for the view).
                return NO_LINE
            turn = next(self._arrivals)
            self._waiting.append(turn)
            self._turn_threads[turn] = me
            return turn

    def _first(self, turn: int) -> bool:
        with self._lock:
            return bool(self._waiting) and self._waiting[0] == turn

    def leave(self, turn: int | None) -> None:
        """Leave the line (idempotent) and wake the call that is first in it now."""
        if turn is None or turn == NO_LINE:
            return
        with self._lock:
            self._turn_threads.pop(turn, None)
            try:
                self._waiting.remove(turn)
            except ValueError:
                return
            head = self._waiting[0] if self._waiting else None
        if head is not None:
            self._bridge.wake(turn_key(head))

    def wait_turn(
        self, turn: int, deadline: float, lost: Callable[[], bool], keep_values: Callable[[], None]
    ) -> Generator[Wait, bool, bool]:
        """Wait to be first in line, then for the view, within the deadline. False: the deadline
        passed while earlier calls still waited (this one was not sent, nothing changed).
        ``keep_values`` runs before the wait for the view, so an interrupted wait keeps the change."""
        while turn != NO_LINE and not self._first(turn):
            yield Wait(lambda: self._first(turn), deadline, key=turn_key(turn))
            if time.monotonic() >= deadline and not self._first(turn):
                return False
        attach_by = self.attach_deadline()
        if not self._bridge.live_views() and attach_by is not None and not lost():
            keep_values()  # not the hot path
            yield Wait(
                lambda: bool(self._bridge.live_views()) or lost() or self.attach_deadline() is None,
                min(attach_by, deadline),
            )
        return True

    # -- how long a view is worth waiting for -------------------------------------------------

    def attach_deadline(self) -> float | None:
        """Until when a call that finds no view waits for one to attach; None: no view is worth waiting for.

        A view is on its way when :meth:`expect_view` said so, or when the widget was displayed
        moments ago and some widget frontend is connected."""
        if time.monotonic() < self._view_expected_until:
            return self._view_expected_until
        end = self._display_window()
        if end is not None and (self._bridge.ever_attached or self.notebook_view_expected()):
            return end
        return None

    def notebook_view_expected(self) -> bool:
        """Displayed by a notebook frontend moments ago: its view is on its way (no headless page needed)."""
        return self._display_window() is not None and (self._displayed_by_frontend or _kernel_tap.frontend_connected())

    def _display_window(self) -> float | None:
        """When the last display's wait for its view ends, while it has not ended."""
        if self._displayed_at is None or time.monotonic() > self._displayed_at + self.attach_timeout:
            return None
        return self._displayed_at + self.attach_timeout
