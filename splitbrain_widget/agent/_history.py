"""The conversation's history against the model's context window: its size, compaction, repair.

:func:`compact` folds old turns into a summary once the history nears the window
(:func:`window_for` guesses it from the model's label); :func:`repair_history` gives every tool
call a result, so a run that ended early leaves a history every provider accepts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ..protocol import ToolResult

CONTEXT_WINDOWS = {"gpt-4": 128_000, "gpt-5": 400_000, "claude": 200_000, "gemini": 1_000_000, "offline": 10**9}
DEFAULT_WINDOW = 32_000


def window_for(label: str) -> int:
    """A model's context window in tokens, from its label: the first key of :data:`CONTEXT_WINDOWS` in it."""
    for prefix, window in CONTEXT_WINDOWS.items():
        if prefix in label:
            return window
    return DEFAULT_WINDOW


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """A rough count (4 characters a token) — enough to pick a compaction tier."""
    total = 0
    for message in messages:
        for part in getattr(message, "parts", []):
            content = getattr(part, "content", None) or getattr(part, "args", None) or ""
            total += len(content if isinstance(content, str) else json.dumps(content, default=str))
    return total // 4


def compact(messages: list[ModelMessage], window: int, keep_turns: int = 3) -> list[ModelMessage] | None:
    """Fold everything before the last ``keep_turns`` user turns into one summary, past 70% of the window.

    The system prompt and target schema are instructions, re-sent on every request, so they survive.
    Cutting only at user-turn boundaries keeps every tool call with its result.
    """
    if estimate_tokens(messages) < 0.7 * window:
        return None
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    if len(starts) <= keep_turns:
        return None
    cut = starts[-keep_turns]
    lines = []
    for message in messages[:cut]:
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart):
                lines.append(f"user: {str(part.content)[:200]}")
            elif isinstance(part, ToolCallPart):
                lines.append(f"called {part.tool_name} {json.dumps(part.args, default=str)[:200]}")
            elif isinstance(part, TextPart):
                lines.append(f"assistant: {part.content[:200]}")
    summary = "[Summary of the earlier conversation, compacted to save context]\n" + "\n".join(lines[-60:])
    return [ModelRequest(parts=[UserPromptPart(summary)]), *messages[cut:]]


def repair_history(messages: list[ModelMessage], reason: str) -> list[ModelMessage]:
    """Give every tool call a result: calls left without one (cancelled, timed out, crashed) get an explicit error."""
    answered = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    repaired: list[ModelMessage] = []
    for message in messages:
        repaired.append(message)
        if isinstance(message, ModelResponse):
            missing = [p for p in message.parts if isinstance(p, ToolCallPart) and p.tool_call_id not in answered]
            if missing:
                content = json.dumps(ToolResult.failure("cancelled", reason).for_model())
                repaired.append(
                    ModelRequest(
                        parts=[ToolReturnPart(p.tool_name, content, tool_call_id=p.tool_call_id) for p in missing]
                    )
                )
    # Two requests in a row (our repair followed by the next turn's request) are fine for every provider
    # we support; pydantic-ai merges them when it maps messages.
    return repaired
