"""Run callbacks at a given time on one long-lived daemon thread.

Deferred sends (the widgets' trait echoes) run here rather than on a thread each: ipykernel opens a
zmq socket for every thread that publishes on IOPub and closes it only some seconds after the
thread ended, so a thread per send would pile up sockets.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

from ._kernel_tap import main_loop, prepare_thread
from ._platform import in_browser

log = logging.getLogger("splitbrain_widget.later")


class Later:
    """A time-ordered queue of callbacks and the thread that runs them when due."""

    def __init__(self, thread_init: Callable[[], None] | None = None) -> None:
        self.thread_init = thread_init
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def call_at(self, when: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` at ``when`` (``time.monotonic()``), or as soon as possible after. In the browser
        (no threads), on Pyodide's event loop."""
        if in_browser():
            loop = main_loop()
            if loop is None:  # no loop at all (not Pyodide: a test that patched the platform): now
                _guarded(fn)
            else:
                loop.call_later(max(0.0, when - time.monotonic()), _guarded, fn)
            return
        with self._cond:
            heapq.heappush(self._heap, (when, next(self._order), fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="splitbrain-later", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        if self.thread_init is not None:
            self.thread_init()
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._cond.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                _, _, fn = heapq.heappop(self._heap)
            _guarded(fn)


def _guarded(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:  # one failing callback must not stop the others
        log.exception("a deferred call failed")


LATER = Later(thread_init=prepare_thread)
