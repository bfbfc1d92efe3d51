"""Keep API keys out of everything we show or sync: transcripts, chat events, audit entries.

Keys live in the kernel's environment only. Anything that might echo one back (a model's answer,
a provider's error message) passes through :func:`redact` before it reaches a trait or the browser.
"""

from __future__ import annotations

import os
import re
from typing import Any

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$", re.IGNORECASE)
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,})\b")
REDACTED = "[redacted]"


def secret_values() -> list[str]:
    """Values of environment variables that look like credentials (8 characters or longer)."""
    return sorted((v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8), key=len, reverse=True)


def redact(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` with every known secret, and anything shaped like a provider key, replaced."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return _KEY_SHAPES.sub(REDACTED, value)
    if isinstance(value, dict):
        return {k: redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, secrets) for v in value]
    return value
