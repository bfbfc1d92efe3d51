"""A bounded, thread-safe log of every tool call a widget served, and who asked for each.

Every entry says what the call changed in the kernel's ``values`` (``changed``), the target it left
active (``target``) and who asked (``source``): ``"chat: <message>"`` for the chat panel's agent,
``"agent: <text>"`` for ``agent.ask(text)``, ``"inspector"`` for the parameter inspector, None for
plain Python. The source travels in a :class:`contextvars.ContextVar` set with :func:`call_source`
where a call starts and read by :meth:`~splitbrain_widget._operations.Operations.record` where it
ends. Threads do not inherit context variables (``asyncio.to_thread`` and tasks do), so whoever
moves a call to a thread of its own carries the source across (``Agent.ask`` copies its context;
the agent's toolset sets the run's source around every tool call).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ._platform import need
from ._secrets import redact

if TYPE_CHECKING:
    import pandas

AUDIT_SIZE = 1000
MAX_SOURCE = 2000  # characters of a source kept in an entry (a chat message may be 20,000)
INSPECTOR = "inspector"
_DTYPES = {"ok": "bool", "duration_ms": "float64", "views_applied": "int64"}  # the rest: objects (None stays None)


@dataclass(frozen=True)
class CallSource:
    """Who asked for the calls made while it is current: ``text`` (the tag an entry's ``source``
    holds) and, for an agent's run, the id of that agent (``agent_id``)."""

    text: str | None
    agent_id: str | None = None


_SOURCE: ContextVar[CallSource | None] = ContextVar("splitbrain_call_source", default=None)


@contextmanager
def call_source(text: str | None, *, agent_id: str | None = None) -> Iterator[CallSource]:
    """Tag every call made in this context (this thread or task, and those it starts with a copy of
    its context) with ``text`` as its source; redacted and bounded here, once."""
    source = make_source(text, agent_id=agent_id)
    with use_source(source):
        yield source


def make_source(text: str | None, *, agent_id: str | None = None) -> CallSource:
    """A :class:`CallSource` whose text is redacted and bounded (to :data:`MAX_SOURCE` characters)."""
    if text is not None:
        text = redact(text)
        if len(text) > MAX_SOURCE:
            text = text[: MAX_SOURCE - 1] + "…"
    return CallSource(text, agent_id)


@contextmanager
def use_source(source: CallSource | None) -> Iterator[CallSource | None]:
    """Make ``source`` (as :func:`call_source` built it) current in this context."""
    token = _SOURCE.set(source)
    try:
        yield source
    finally:
        _SOURCE.reset(token)


def current_source() -> CallSource | None:
    """The source of the calls made here now, None for plain Python."""
    return _SOURCE.get()


@dataclass(frozen=True)
class AuditEntry:
    """One call: when, what, with which arguments, what came back, how long, which view answered;
    what it left in the kernel's ``values`` (``changed``: dotted path -> value; empty for reads and
    for refused calls), the target active after it, who asked (``source``) and which agent's run
    made it (``agent_id``)."""

    time: float
    op: str
    arguments: dict[str, Any]
    ok: bool
    code: str | None
    message: str
    duration_ms: float
    view_id: str | None
    views_applied: int
    changed: dict[str, Any] = field(default_factory=dict)
    target: str = ""
    source: str | None = None
    agent_id: str | None = None


class AuditLog:
    """The last :data:`AUDIT_SIZE` calls, oldest first; ``dropped`` counts those no longer held."""

    def __init__(self, size: int = AUDIT_SIZE) -> None:
        self._entries: deque[AuditEntry] = deque(maxlen=size)
        self._lock = threading.Lock()
        self._dropped = 0

    def record(self, entry: AuditEntry) -> None:
        with self._lock:
            if len(self._entries) == self._entries.maxlen:
                self._dropped += 1
            self._entries.append(entry)

    def entries(self) -> list[AuditEntry]:
        with self._lock:
            return list(self._entries)

    @property
    def dropped(self) -> int:
        """How many calls the log no longer holds (pushed out of the ring, or cleared)."""
        return self._dropped

    def snapshot(self) -> tuple[list[AuditEntry], int]:
        """The entries and how many earlier calls were dropped, read together."""
        with self._lock:
            return list(self._entries), self._dropped

    def to_list(self) -> list[dict[str, Any]]:
        """The entries as plain dicts (for pandas, JSON or a test)."""
        return [asdict(e) for e in self.entries()]

    def to_code(self, var: str = "sim") -> str:
        """A Python cell that makes this log's changes again on a fresh widget of the same target.

        Value changes are merged into the fewest ``set_parameters`` calls (the later value of a
        path wins), each headed by a comment naming who asked (``# chat: make it red``,
        ``# inspector``, ``# agent: ...``, ``# python``); ``select_target`` is kept, a reset only
        where it undoes something, an action the page ran as ``sim.act('run')`` where it ran (sets
        are not merged across it); reads and refused calls leave nothing. Once the log has dropped
        early calls (see :attr:`dropped`), the code cannot be complete unless a kept
        ``select_target`` starts it afresh: its first line then says so. See
        :mod:`splitbrain_widget._to_code` for the rules.
        """
        from ._to_code import to_code

        entries, dropped = self.snapshot()
        return to_code(entries, var=var, dropped=dropped)

    def to_dataframe(self) -> pandas.DataFrame:
        """The entries as a pandas DataFrame, one row per call, indexed by time (UTC): ``op``, ``ok``,
        ``code``, ``duration_ms``, ``source``, ``changed``, ``target``, ``arguments``, ``message``,
        ``view_id``, ``views_applied``, ``agent_id``."""
        pandas = need("pandas", "the audit table")

        columns = [
            "op",
            "ok",
            "code",
            "duration_ms",
            "source",
            "changed",
            "target",
            "arguments",
            "message",
            "view_id",
            "views_applied",
            "agent_id",
        ]
        rows = self.to_list()
        index = pandas.DatetimeIndex(pandas.to_datetime([r["time"] for r in rows], unit="s", utc=True), name="time")
        return pandas.DataFrame(
            {c: pandas.Series([r[c] for r in rows], index=index, dtype=_DTYPES.get(c, object)) for c in columns}
        )

    def clear(self) -> None:
        with self._lock:
            self._dropped += len(self._entries)
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
