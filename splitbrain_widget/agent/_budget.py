"""What bounds one answer of the agent: the output cap of a request and the deadlines. Light (no
pydantic-ai), so :class:`~splitbrain_widget.agent.Agent` can name the defaults in its signature."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_TOKENS = 1024  # an answer is a line or two and tool calls are small: enough, and never a rambling essay
DEFAULT_REQUEST_TIMEOUT_S = 120.0  # one model request, streamed to its last chunk
DEFAULT_IDLE_TIMEOUT_S = 60.0  # the longest wait for the next chunk (or the first byte) of a response
DEFAULT_RUN_TIMEOUT_S = 300.0  # one whole answer: every request, tool call and retry wait


@dataclass(frozen=True)
class Bounds:
    """What bounds one answer: the output cap per request and the deadlines (seconds; None: unbounded)."""

    max_tokens: int | None = DEFAULT_MAX_TOKENS
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT_S
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT_S
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT_S
