"""Stay under jupyter_server's IOPub rate limit, which silently drops messages past it.

jupyter_server stops forwarding IOPub messages to the browser for a while once more than
``iopub_msg_rate_limit`` (default 1000/s, averaged over ``rate_limit_window``, default 3 s) pass;
widget requests dropped that way are never answered. A burst of calls therefore paces itself: each
call reserves its messages in a sliding window and waits when the window is full. One call, or a
few hundred, never waits.
"""

from __future__ import annotations

import threading
import time
from collections import deque

WINDOW_S = 3.0
BUDGET_PER_S = 600  # of the server's default 1000/s, leaving room for everything else on IOPub


class Pacer:
    """A sliding-window message budget shared by every widget in the kernel."""

    def __init__(self, per_second: float = BUDGET_PER_S, window: float = WINDOW_S) -> None:
        self.capacity = int(per_second * window)
        self.window = window
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def reserve(self, messages: int = 1) -> float:
        """Book ``messages`` sends; return how many seconds to wait before sending them (0: go now)."""
        with self._lock:
            now = time.monotonic()
            while self._sent and self._sent[0] <= now - self.window:
                self._sent.popleft()
            # The slot frees when the message that many places back leaves the window.
            start = now
            if len(self._sent) + messages > self.capacity:
                start = self._sent[len(self._sent) + messages - self.capacity - 1] + self.window
            self._sent.extend([start] * messages)
            return max(0.0, start - now)


PACER = Pacer()
