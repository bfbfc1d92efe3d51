"""Echo throttling: when the views get the kernel's ``values`` and ``state`` traits back.

A call's request already carries its values, so the trait's echo to the views is only
bookkeeping, and an echo sent while a request is on its way holds that request up (about 1 ms of a
3-4 ms round trip). So assignments to a deferred trait wait, and reach the views in one message in
a pause between calls (at most every ``ECHO_MAX_DELAY_S`` in a long run). While a burst runs, the
``state`` trait follows the bridge's latest state at most every ``SYNC_INTERVAL_S``.

The widget owns the traits; this module decides when their echo goes out. It holds no reference
to the widget, only the callables it was given.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from . import _kernel_tap
from ._bridge import Bridge
from ._later import LATER

log = logging.getLogger("splitbrain_widget")

SYNC_INTERVAL_S = 0.1  # while a burst runs, the views get the state at most this often
ECHO_DELAY_S = 0.03  # a call's echo to the views waits this long for a pause between calls ...
ECHO_MAX_DELAY_S = 0.5  # ... and no longer than this


class EchoThrottle:
    """Defers the echo of trait assignments and sends it in a pause between calls.

    Args:
        bridge: the widget's bridge (its pending requests say whether a call is on its way).
        lock: the widget's trait lock; an echo's snapshot and send happen under it, as a call's
            commit and send do, so an echo never carries a value whose request has not gone first.
        assign_state: sets the widget's ``state`` trait (its echo is deferred here).
        send_keys: sends the named traits to the views (ipywidgets' ``send_state``).
        connected: whether the widget's comm is open.
    """

    def __init__(
        self,
        bridge: Bridge,
        lock: threading.RLock,
        *,
        assign_state: Callable[[dict[str, Any]], None],
        send_keys: Callable[[list[str]], None],
        connected: Callable[[], bool],
    ) -> None:
        self._bridge = bridge
        self._lock = lock
        self._assign_state = assign_state
        self._send_keys = send_keys
        self._connected = connected
        self._deferring: frozenset[str] = frozenset()  # traits whose echo waits (see holds)
        self._due: set[str] = set()
        self._scheduled = False
        self._since = 0.0
        self._sync_pending = False
        self._synced_state_version = 0
        self._synced_at = 0.0

    def holds(self, key: Any) -> bool:
        """Whether the echo of trait ``key`` waits (it is then sent with the next :meth:`sync`)."""
        if isinstance(key, str) and key in self._deferring:
            self._due.add(key)
            return True
        return False

    def deferring(self, name: str) -> bool:
        """Whether assignments to trait ``name`` are being deferred now (a call's commit, whose request
        carries the values and goes out next)."""
        return name in self._deferring

    @contextlib.contextmanager
    def deferred(self, name: str | None) -> Iterator[None]:
        """Assignments to trait ``name`` in this block reach the views with the next :meth:`sync`."""
        if name is None:
            yield
            return
        self._deferring = self._deferring | {name}
        try:
            yield
        finally:
            self._deferring = self._deferring - {name}

    def on_bridge_change(self) -> None:
        """Bridge hook (any thread): bring the views up to date on the main loop."""
        if self._sync_pending or (self._bridge.state_version == self._synced_state_version and not self._due):
            return
        self._sync_pending = True
        _kernel_tap.call_on_main(self._sync_throttled)

    def _sync_throttled(self) -> None:
        """While requests are pending (a burst) the views follow at most 10 times a second; the last
        call of the burst syncs them in any case."""
        self._sync_pending = False
        if self._bridge.pending and time.monotonic() - self._synced_at < SYNC_INTERVAL_S:
            return
        self.sync()

    def sync(self) -> None:
        """Copy the latest state into the trait and send the views every deferred echo, in one message."""
        self.update_state()
        self.flush()

    def update_state(self) -> None:
        """The ``state`` trait takes the latest state the bridge holds; its echo is deferred."""
        with self._lock:
            version, state = self._bridge.state_version, self._bridge.latest_state
            if version != self._synced_state_version and state is not None:
                self._synced_state_version = version
                with self.deferred("state"):
                    self._assign_state(state)

    def flush(self) -> None:
        """Send every deferred echo now, in one message."""
        with self._lock:  # snapshot and send in one step
            keys, self._due = sorted(self._due), set()
            self._synced_at = time.monotonic()
            if keys and self._connected():
                self._send_keys(keys)

    def resend(self, key: str) -> None:
        """Send trait ``key`` to the views again soon, though it did not change (a view that came back
        from the background may have missed its last echo)."""
        with self._lock:
            self._due.add(key)
        self.schedule()

    def after_calls(self) -> None:
        """The last pending call ended: the state trait catches up and the echo goes out soon."""
        if not self._bridge.pending:
            self.update_state()
            self.schedule()

    def schedule(self) -> None:
        """Send the deferred echoes soon, in a pause between calls: a run of calls gets its echoes at
        most every ``ECHO_MAX_DELAY_S``, not one per call."""
        with self._lock:
            if not self._due or self._scheduled:
                return
            self._since = time.monotonic()
            self._scheduled = True
        LATER.call_at(time.monotonic() + ECHO_DELAY_S, self._when_quiet)

    def _when_quiet(self) -> None:
        with self._lock:
            if self._bridge.pending and time.monotonic() - self._since < ECHO_MAX_DELAY_S:
                # a call is on its way: wait for the pause after it
                LATER.call_at(time.monotonic() + ECHO_DELAY_S, self._when_quiet)
                return
            self._scheduled = False
        try:
            self.flush()
        except Exception:  # the comm closed meanwhile
            log.debug("deferred echo not sent", exc_info=True)
