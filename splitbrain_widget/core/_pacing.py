"""Flow control for requests: a smooth rate under the server's limits, and a bounded window in flight.

Two limits lose messages silently between the kernel and the page, so a burst of calls must stay
under both:

- jupyter_server stops forwarding IOPub messages for a while once more than
  ``iopub_msg_rate_limit`` (default 1000/s, averaged over 3 s) pass;
- every ZeroMQ hop has a high-water mark (the kernel's IOPub PUB socket and the server's SUB
  socket, 1000 messages each by default): a PUB socket *drops* what does not fit while its
  subscriber is behind. A burst of 1,800 requests sent at once into a server still busy with the
  previous ones lost whole runs of requests this way (measured: 965 of 10,000, in two runs of
  consecutive ids, with no warning anywhere).

So each send takes tokens from a bucket refilled at ``BUDGET_PER_S`` (at most ``BURST`` at once:
no more sudden runs of 1,800), and each widget (``key``) has at most ``IN_FLIGHT`` requests sent
and not yet answered: the page's replies are the acknowledgements that pace the pipeline, so no
queue between the kernel and the page ever holds more than that, whatever is slow. A page that is
not ready yet answers nothing, so a burst before ready waits here, in the kernel, not in buffers
that overflow. Sends that cannot go at once wait in per-key first-in-first-out queues; one sender
thread sends the earliest ticket whose key has room, so each widget's requests reach its page in
call order, whichever thread or event loop made them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

from ._kernel_tap import prepare_thread
from ._platform import in_browser

log = logging.getLogger("splitbrain_widget.pacing")

BUDGET_PER_S = 600.0  # of the server's default 1000/s, leaving room for everything else on IOPub
BURST = 200  # messages that may go back to back before the rate applies
IN_FLIGHT = 256  # requests of one widget sent and not answered yet
IDLE_EXIT_S = 5.0  # the sender thread ends after this long with nothing queued


class Ticket:
    """A queued send. ``sent`` turns True once it went out; :meth:`Pacer.cancel` takes it back before that."""

    __slots__ = ("cancelled", "key", "messages", "on_sent", "send", "sent", "seq")

    def __init__(
        self, messages: int, send: Callable[[], None], on_sent: Callable[[], None], key: Hashable, seq: int
    ) -> None:
        self.seq = seq  # its place in the order of all queued sends
        self.key = key
        self.messages = messages
        self.send = send
        self.on_sent = on_sent
        self.sent = False
        self.cancelled = False


class Pacer:
    """A token bucket for the message rate, a window of requests in flight per key, and the queues
    of the sends that wait for either."""

    def __init__(
        self,
        per_second: float = BUDGET_PER_S,
        burst: int = BURST,
        in_flight: int = IN_FLIGHT,
        thread_init: Callable[[], None] | None = None,
    ) -> None:
        self.rate = per_second
        self.burst = burst
        self.window = in_flight
        self.thread_init = thread_init
        self._tokens = float(burst)
        self._filled_at = time.monotonic()
        self._in_flight: dict[Hashable, int] = {}
        self._queues: dict[Hashable, deque[Ticket]] = {}
        self._queued = 0  # tickets in the queues, cancelled ones included
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._queued_total = 0  # sends ever queued (the next ticket's seq)
        self._sent_seq = 0  # seq of the last queued send that went out

    def submit(
        self,
        messages: int,
        send: Callable[[], None],
        on_sent: Callable[[], None] = lambda: None,
        key: Hashable = None,
    ) -> Ticket | None:
        """Run ``send`` (which sends ``messages`` messages for ``key``) now if the rate and the key's
        window allow and nothing waits ahead of it, and return None; else queue it and return its
        :class:`Ticket`. Every send that went out must be followed by :meth:`done` for its key. In the
        browser there is no server to rate-limit messages (and no thread to wait on): it sends now."""
        if in_browser():
            with self._cond:
                self._in_flight[key] = self._in_flight.get(key, 0) + 1
            send()
            return None
        with self._cond:
            if not self._queued and self._room(key) and self._take(messages):
                self._in_flight[key] = self._in_flight.get(key, 0) + 1
                ticket = None
            else:
                self._queued_total += 1
                ticket = Ticket(messages, send, on_sent, key, self._queued_total)
                self._queues.setdefault(key, deque()).append(ticket)
                self._queued += 1
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="splitbrain-pacer", daemon=True)
                    self._thread.start()
                self._cond.notify_all()
        if ticket is None:
            send()
        return ticket

    def done(self, key: Hashable = None) -> None:
        """A request of ``key`` that went out was answered or given up: its window has room again."""
        with self._cond:
            left = self._in_flight.get(key, 0) - 1
            if left > 0:
                self._in_flight[key] = left
            else:
                self._in_flight.pop(key, None)
            self._cond.notify_all()

    def cancel(self, ticket: Ticket) -> bool:
        """Take a queued send back; False if it already went out."""
        with self._cond:
            if ticket.sent:
                return False
            ticket.cancelled = True
            self._cond.notify_all()
            return True

    def position(self, ticket: Ticket) -> str:
        """Words for how far back in the queue ``ticket`` is (or was, when taken back)."""
        with self._cond:
            ahead = max(0, ticket.seq - self._sent_seq - 1)
        return f" behind {ahead} earlier call(s)" if ahead else " at the head of the queue"

    @property
    def busy(self) -> bool:
        """Whether sends wait in a queue (a burst is under way)."""
        return self._queued > 0

    def in_flight(self, key: Hashable = None) -> int:
        """Requests of ``key`` sent and not answered yet."""
        with self._cond:
            return self._in_flight.get(key, 0)

    # -- internals (under the lock) -----------------------------------------------------------

    def _room(self, key: Hashable) -> bool:
        return self._in_flight.get(key, 0) < self.window

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._filled_at) * self.rate)
        self._filled_at = now

    def _take(self, messages: int) -> bool:
        self._refill()
        need = min(messages, self.burst)  # a send bigger than the bucket goes once the bucket is full
        if self._tokens < need:
            return False
        self._tokens -= messages
        return True

    def _next_due(self) -> Ticket | None:
        """The earliest queued ticket whose key has room, once the bucket has its tokens (waiting for
        both); None once nothing was queued for ``IDLE_EXIT_S``."""
        while True:
            head: Ticket | None = None
            for key, queue in list(self._queues.items()):
                while queue and queue[0].cancelled:
                    queue.popleft()
                    self._queued -= 1
                if not queue:
                    del self._queues[key]
                elif self._room(key) and (head is None or queue[0].seq < head.seq):
                    head = queue[0]
            if head is None:
                if not self._queues:
                    if not self._cond.wait(IDLE_EXIT_S) and not self._queues:
                        return None
                else:
                    self._cond.wait(1.0)  # every key is at its window: a done() wakes this
                continue
            if self._take(head.messages):
                self._queues[head.key].popleft()
                self._queued -= 1
                self._in_flight[head.key] = self._in_flight.get(head.key, 0) + 1
                head.sent = True  # from here on it cannot be cancelled: it is being sent
                self._sent_seq = head.seq
                return head
            self._cond.wait(max(0.001, (min(head.messages, self.burst) - self._tokens) / self.rate))

    def _run(self) -> None:
        try:
            if self.thread_init is not None:
                self.thread_init()
        except Exception:  # a thread that cannot prepare itself can still send
            log.exception("pacer thread setup failed")
        while True:
            try:
                with self._cond:
                    ticket = self._next_due()
                    if ticket is None:
                        self._thread = None
                        return
            except BaseException:
                # Never leave queued calls without a sender: the next submit starts a new thread.
                with self._cond:
                    self._thread = None
                log.exception("the pacer's sender thread failed")
                raise
            try:
                ticket.send()
            except Exception:  # one failed send must not stop the ones behind it
                log.exception("a paced send failed")
            try:
                ticket.on_sent()
            except Exception:
                log.exception("a paced send's callback failed")


PACER = Pacer(thread_init=prepare_thread)
