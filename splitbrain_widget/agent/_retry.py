"""When to retry a failed model request, and how long to wait first.

Retryable: HTTP 429 and 5xx. The wait honours, in order: ``retry-after-ms``, ``Retry-After``
(seconds or an HTTP date), and Google's ``RetryInfo.retryDelay`` in the error body (native Gemini
and its OpenAI-compatible endpoint both send it); otherwise the backoff schedule 3, 5, 10, 15, 30 s.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

BACKOFF_S: tuple[float, ...] = (3, 5, 10, 15, 30)
MAX_WAIT_S = 120.0


def is_retryable(status: int | None) -> bool:
    """429 (rate limit) and 5xx (server trouble) are worth another try; 4xx others are not."""
    return status is not None and (status == 429 or 500 <= status <= 599)


def backoff(attempt: int, schedule: tuple[float, ...] = BACKOFF_S) -> float:
    """The scheduled wait before retry number ``attempt`` (0-based)."""
    return schedule[min(attempt, len(schedule) - 1)]


def retry_delay(
    attempt: int, headers: Mapping[str, str] | None = None, body: Any = None, schedule: tuple[float, ...] = BACKOFF_S
) -> tuple[float, str]:
    """Seconds to wait before retry ``attempt`` and where that number came from."""
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    if "retry-after-ms" in lowered:
        try:
            return _bound(float(lowered["retry-after-ms"]) / 1000), "retry-after-ms"
        except ValueError:
            pass
    if "retry-after" in lowered:
        seconds = _parse_retry_after(lowered["retry-after"])
        if seconds is not None:
            return _bound(seconds), "Retry-After"
    google = google_retry_delay(body)
    if google is not None:
        return _bound(google), "RetryInfo"
    return backoff(attempt, schedule), "backoff"


def google_retry_delay(body: Any) -> float | None:
    """``retryDelay`` from a Google error body (a RetryInfo entry of ``error.details``, e.g. ``"retryDelay": "7s"``).

    The OpenAI-compatible endpoint wraps the same error in a list; both shapes are searched.
    """
    if isinstance(body, bytes | str):
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            match = re.search(
                r'"retryDelay"\s*:\s*"([\d.]+)s"', body if isinstance(body, str) else body.decode("utf-8", "replace")
            )
            return float(match.group(1)) if match else None
    for node in _walk(body):
        if isinstance(node, Mapping) and "retryDelay" in node and "RetryInfo" in str(node.get("@type", "RetryInfo")):
            match = re.fullmatch(r"\s*([\d.]+)s\s*", str(node["retryDelay"]))
            if match:
                return float(match.group(1))
    return None


def _walk(node: Any, depth: int = 0) -> Any:
    if depth > 8:
        return
    yield node
    if isinstance(node, Mapping):
        for value in node.values():
            yield from _walk(value, depth + 1)
    elif isinstance(node, list):
        for value in node[:50]:
            yield from _walk(value, depth + 1)


def _parse_retry_after(value: str) -> float | None:
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _bound(seconds: float) -> float:
    return min(max(seconds, 0.0), MAX_WAIT_S)
