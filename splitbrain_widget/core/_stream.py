"""Coalescing for slider-like streams: one apply in flight, and the latest value per parameter wins."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("splitbrain_widget.stream")


@dataclass
class StreamStats:
    """Values handed to ``stream()``, values actually sent, and the difference (coalesced away)."""

    given: int = 0
    sent: int = 0
    batches: int = 0
    failed: int = 0  # batches the page did not apply (no view, timeout, refused...)
    last_error: str = ""

    @property
    def coalesced(self) -> int:
        return self.given - self.sent


class Streamer:
    """Sends batches through ``apply`` (a blocking call) from one worker thread, merging what arrives meanwhile."""

    def __init__(self, apply: Callable[[dict[str, Any]], Any]) -> None:
        self._apply = apply
        self._latest: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None
        self._failed_since_flush = 0
        self.stats = StreamStats()

    def push(self, values: Mapping[str, Any]) -> None:
        with self._cond:
            self._latest.update(values)
            self.stats.given += len(values)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="splitbrain-stream", daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything pushed so far has been sent and answered; True only if the page
        applied every batch sent since the previous flush (see ``stats.failed`` / ``last_error``)."""
        with self._cond:
            done = self._cond.wait_for(lambda: not self._latest and not self._busy, timeout)
            failed, self._failed_since_flush = self._failed_since_flush, 0
            return done and failed == 0

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: bool(self._latest), timeout=5.0):
                    self._thread = None
                    return  # idle: the next push starts a new thread
                batch, self._latest = self._latest, {}
                self._busy = True
                self.stats.sent += len(batch)
                self.stats.batches += 1
            ok, why = False, ""
            try:
                result = self._apply(batch)
                ok = bool(getattr(result, "ok", False))
                why = "" if ok else str(result)
            except Exception as exc:
                why = f"{type(exc).__name__}: {exc}"
                log.exception("a streamed apply failed")
            finally:
                with self._cond:
                    if not ok:
                        self._failed_since_flush += 1
                        self.stats.failed += 1
                        self.stats.last_error = why[:500]
                    self._busy = False
                    self._cond.notify_all()
