"""Stay under jupyter_server's IOPub rate limit, which silently drops messages past it.

jupyter_server stops forwarding IOPub messages to the browser for a while once more than
``iopub_msg_rate_limit`` (default 1000/s, averaged over ``rate_limit_window``, default 3 s) pass;
widget requests dropped that way are never answered. A burst of calls therefore paces itself: each
send books its messages in a sliding window shared by every widget of the kernel. One call, or a
few hundred, go at once; past the budget, sends wait in one queue, first in first out, and a
sender thread sends each when the window has room, so the page gets them in call order whichever
thread or event loop made them (and whether or not that thread is free to run meanwhile).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from ._kernel_tap import prepare_thread

log = logging.getLogger("splitbrain_widget.pacing")

WINDOW_S = 3.0
BUDGET_PER_S = 600  # of the server's default 1000/s, leaving room for everything else on IOPub
IDLE_EXIT_S = 5.0  # the sender thread ends after this long with nothing queued


class Ticket:
    """A queued send. ``sent`` turns True once it went out; :meth:`cancel` takes it back before that."""

    __slots__ = ("cancelled", "messages", "on_sent", "send", "sent")

    def __init__(self, messages: int, send: Callable[[], None], on_sent: Callable[[], None]) -> None:
        self.messages = messages
        self.send = send
        self.on_sent = on_sent
        self.sent = False
        self.cancelled = False


class Pacer:
    """A sliding-window message budget, and the FIFO queue of the sends that wait for it."""

    def __init__(
        self,
        per_second: float = BUDGET_PER_S,
        window: float = WINDOW_S,
        thread_init: Callable[[], None] | None = None,
    ) -> None:
        self.capacity = int(per_second * window)
        self.window = window
        self.thread_init = thread_init
        self._booked: deque[float] = deque()  # when each message of the window went (or goes) out
        self._queue: deque[Ticket] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(
        self, messages: int, send: Callable[[], None], on_sent: Callable[[], None] = lambda: None
    ) -> Ticket | None:
        """Run ``send`` (which sends ``messages`` messages) now if the budget allows and nothing waits
        ahead of it, and return None; else queue it and return its :class:`Ticket`."""
        with self._cond:
            now = time.monotonic()
            self._expire(now)
            if not self._queue and len(self._booked) + messages <= self.capacity:
                self._booked.extend([now] * messages)
                ticket = None
            else:
                ticket = Ticket(messages, send, on_sent)
                self._queue.append(ticket)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="splitbrain-pacer", daemon=True)
                    self._thread.start()
                self._cond.notify_all()
        if ticket is None:
            send()
        return ticket

    def cancel(self, ticket: Ticket) -> bool:
        """Take a queued send back; False if it already went out."""
        with self._cond:
            if ticket.sent:
                return False
            ticket.cancelled = True
            return True

    @property
    def busy(self) -> bool:
        """Whether sends wait in the queue (a burst is under way)."""
        return bool(self._queue)

    def _expire(self, now: float) -> None:
        while self._booked and self._booked[0] <= now - self.window:
            self._booked.popleft()

    def _next_due(self) -> Ticket | None:
        """Under the lock: the head of the queue once the window has room for it (waiting for that)."""
        while True:
            while self._queue and self._queue[0].cancelled:
                self._queue.popleft()
            if not self._queue:
                if not self._cond.wait(IDLE_EXIT_S) and not self._queue:
                    return None
                continue
            head = self._queue[0]
            now = time.monotonic()
            self._expire(now)
            over = len(self._booked) + head.messages - self.capacity
            if over <= 0:
                self._queue.popleft()
                self._booked.extend([now] * head.messages)
                head.sent = True  # from here on it cannot be cancelled: it is being sent
                return head
            # Room comes when the message ``over`` places from the oldest leaves the window.
            self._cond.wait(max(0.0, self._booked[over - 1] + self.window - now))

    def _run(self) -> None:
        if self.thread_init is not None:
            self.thread_init()
        while True:
            with self._cond:
                ticket = self._next_due()
                if ticket is None:
                    self._thread = None
                    return
            try:
                ticket.send()
            except Exception:  # one failed send must not stop the ones behind it
                log.exception("a paced send failed")
            try:
                ticket.on_sent()
            except Exception:
                log.exception("a paced send's callback failed")


PACER = Pacer(thread_init=prepare_thread)
