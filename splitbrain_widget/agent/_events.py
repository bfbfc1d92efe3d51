"""What an agent run reports while it works, for the chat panel and for ``agent.events()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer."""

    text: str
    kind: str = "text"


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str
    arguments: dict[str, Any]
    label: str = ""  # the arguments in short, as the tool's definition renders them for the panel
    kind: str = "tool_started"


@dataclass(frozen=True)
class ToolCallProgress:
    """A running call's news (a seek's latest try), as the panel's chip shows it."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    label: str
    kind: str = "tool_progress"


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    ok: bool
    label: str = ""
    kind: str = "tool_finished"


@dataclass(frozen=True)
class RetryWait:
    """The provider asked us to wait (429/5xx); ``seconds`` from ``source`` (Retry-After, RetryInfo, backoff)."""

    seconds: float
    source: str
    attempt: int
    model: str
    status: int | None
    kind: str = "retry_wait"


@dataclass(frozen=True)
class RunDeadline:
    """A run started with a deadline: it ends, stopped, after ``seconds`` (the panel counts them down)."""

    seconds: float
    kind: str = "run_deadline"


@dataclass(frozen=True)
class Fallback:
    """The run moved to the next model and stays there."""

    from_model: str
    to_model: str
    reason: str
    kind: str = "fallback"


@dataclass(frozen=True)
class Done:
    """The run ended; ``result`` is the :class:`~splitbrain_widget.agent.AgentResult`."""

    result: Any = field(repr=False)
    kind: str = "done"


AgentEvent = (
    TextDelta | ToolCallStarted | ToolCallProgress | ToolCallFinished | RetryWait | RunDeadline | Fallback | Done
)
