"""A bounded, thread-safe log of every tool call a widget served."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

AUDIT_SIZE = 1000


@dataclass(frozen=True)
class AuditEntry:
    """One call: when, what, with which arguments, what came back, how long, which view answered."""

    time: float
    op: str
    arguments: dict[str, Any]
    ok: bool
    code: str | None
    message: str
    duration_ms: float
    view_id: str | None
    views_applied: int


class AuditLog:
    """The last :data:`AUDIT_SIZE` calls, oldest first."""

    def __init__(self, size: int = AUDIT_SIZE) -> None:
        self._entries: deque[AuditEntry] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, entry: AuditEntry) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> list[AuditEntry]:
        with self._lock:
            return list(self._entries)

    def to_list(self) -> list[dict[str, Any]]:
        """The entries as plain dicts (for pandas, JSON or a test)."""
        return [asdict(e) for e in self.entries()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AuditEntry]:
        return iter(self.entries())

    def __getitem__(self, index: int) -> AuditEntry:
        return self.entries()[index]

    def __repr__(self) -> str:
        rows = []
        for e in self.entries()[-20:]:
            stamp = time.strftime("%H:%M:%S", time.localtime(e.time))
            status = "ok" if e.ok else (e.code or "error")
            rows.append(f"{stamp} {e.op:<14} {status:<14} {e.duration_ms:8.1f} ms  {e.arguments}")
        more = f"... {len(self) - 20} earlier\n" if len(self) > 20 else ""
        return more + ("\n".join(rows) or "(no calls yet)")
