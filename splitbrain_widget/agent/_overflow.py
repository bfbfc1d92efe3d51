"""A provider's "the prompt does not fit the context" error, recognised, with the sizes it names.

llama.cpp answers HTTP 400 ``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``;
OpenAI ``context_length_exceeded`` ("maximum context length is N tokens ... you requested M");
vLLM the same sentence; Anthropic "prompt is too long: M tokens > N maximum"; Gemini "input token
count (M) exceeds the maximum number of tokens allowed (N)".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic_ai import ModelHTTPError

_SIGNS = (
    "exceed_context_size",
    "context_length_exceeded",
    "maximum context length",
    "context size",
    "context window",
    "prompt is too long",
    "input token count",
    "too many tokens",
)
_WINDOW = (
    r"maximum context length is (\d+)",
    r"tokens > (\d+) maximum",
    r"maximum number of tokens allowed \((\d+)\)",
    r'"n_ctx":\s*(\d+)',
)
_PROMPT = (r'"n_prompt_tokens":\s*(\d+)', r"you requested (\d+)", r"prompt is too long: (\d+)", r"count \((\d+)\)")


@dataclass(frozen=True)
class Overflow:
    """An overflow error: the window and the prompt's size in tokens, where the server said them."""

    window: int | None
    prompt: int | None
    message: str


def overflow_of(error: BaseException) -> Overflow | None:
    """The overflow ``error`` reports, or None if it is some other error."""
    if not isinstance(error, ModelHTTPError) or error.status_code not in (400, 413):
        return None
    text = json.dumps(error.body, default=str) if error.body is not None else str(error)
    lowered = text.lower()
    if not any(sign in lowered for sign in _SIGNS):
        return None
    return Overflow(_first(_WINDOW, lowered), _first(_PROMPT, lowered), _message(error.body) or str(error))


def _first(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        if match := re.search(pattern, text):
            return int(match.group(1))
    return None


def _message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return ""
