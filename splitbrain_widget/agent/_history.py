"""The conversation's history against the model's context window: its size, compaction, repair.

:func:`compact` folds old turns into a summary once a request (the instructions and the tools'
schemas counted with the history: :func:`overhead_tokens`) nears the window (read from the server,
or :func:`window_for` guesses it from the model's label); :func:`repair_history` gives every tool
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
from pydantic_ai.models import ModelRequestParameters

from ..protocol import ToolResult

CONTEXT_WINDOWS = {"gpt-4": 128_000, "gpt-5": 400_000, "claude": 200_000, "gemini": 1_000_000, "offline": 10**9}
DEFAULT_WINDOW = 32_000


def window_for(label: str) -> int:
    """A model's context window in tokens, from its label: the first key of :data:`CONTEXT_WINDOWS` in it."""
    for prefix, window in CONTEXT_WINDOWS.items():
        if prefix in label:
            return window
    return DEFAULT_WINDOW


CHARS_PER_TOKEN = 4.0  # a rough count, enough to pick when to compact; a server's own count corrects it
MIN_CHARS_PER_TOKEN = 2.0  # the lowest a server's count may bring the estimate to (a guard against odd counts)
COMPACT_AT = 0.7  # of the window: room left for the answer and a tool result or two


def estimate_tokens(messages: Sequence[ModelMessage], chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """The history's size in tokens, roughly (``chars_per_token`` characters a token)."""
    return int(
        sum(len(_text(part)) for message in messages for part in getattr(message, "parts", [])) / chars_per_token
    )


def overhead_tokens(params: ModelRequestParameters, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """What every request sends besides the history: the instructions (system prompt and target schema)
    and the tools' names, descriptions and JSON schemas."""
    chars = sum(len(p.content) for p in params.instruction_parts or [])
    for tool in params.function_tools:
        chars += len(tool.name) + len(tool.description or "") + len(json.dumps(tool.parameters_json_schema))
    return int(chars / chars_per_token)


IMAGE_CHARS = 4 * 1_600  # what a picture counts as (a model's image tokens, about 1,600 at most)


def _text(part: object) -> str:
    content = getattr(part, "content", None) or getattr(part, "args", None) or ""
    if isinstance(content, list):  # a user part with a picture (``snapshot``): its bytes are no text
        return "".join(c if isinstance(c, str) else "x" * IMAGE_CHARS for c in content)
    return content if isinstance(content, str) else json.dumps(content, default=str)


def compact(
    messages: list[ModelMessage],
    window: int,
    keep_turns: int = 3,
    *,
    overhead: int = 0,
    chars_per_token: float = CHARS_PER_TOKEN,
    force: bool = False,
    reserve: int = 0,
) -> list[ModelMessage] | None:
    """Fold everything before the last ``keep_turns`` user turns into one summary, once the request
    (``overhead`` tokens of instructions and tools, and the history) passes 70% of the window; None when
    it need not (or cannot) be shorter; or sooner, to leave ``reserve`` tokens (the output cap) for the
    answer in a small window. ``force``: fold whatever the count says (after an overflow).

    The system prompt and target schema are instructions, re-sent on every request, so they survive.
    Cutting only at user-turn boundaries keeps every tool call with its result.
    """
    limit = min(COMPACT_AT * window, window - reserve)
    if not force and overhead + estimate_tokens(messages, chars_per_token) < limit:
        return None
    # a user turn starts at a request with the person's words; a tool's picture (a user part beside its
    # tool return) is no turn: a cut there would leave the return without its call
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest)
        and any(isinstance(p, UserPromptPart) for p in m.parts)
        and not any(isinstance(p, ToolReturnPart) for p in m.parts)
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
    # the summary gets at most a tenth of the room the instructions leave, so it never refills the window
    room = max(200, int((window - overhead) * chars_per_token * 0.1))
    kept: list[str] = []
    for line in reversed(lines[-60:]):
        if sum(len(k) + 1 for k in kept) + len(line) > room:
            break
        kept.insert(0, line)
    summary = "[Summary of the earlier conversation, compacted to save context]\n" + "\n".join(kept)
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
