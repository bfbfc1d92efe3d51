"""The simulation in words: every parameter's value and what the page measures, with units.

For a reader who cannot see the picture (``sim.describe()``, the ``describe`` tool of agents and MCP
clients) and for anyone who wants it summarised. Names are the manifest's labels (else the leaf name,
its underscores as spaces), values the kernel's, observables read from the page's last state by the
one read rule (:mod:`._observables`); numbers with about four significant digits, as the inspector
shows them (``js/view/panel.js`` ``formatNumber``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..manifest import Manifest
from . import _observables

MAX_DESCRIPTION_CHARS = 4_000
MAX_VALUE_CHARS = 60


def number_words(value: float) -> str:
    """A number as the inspector shows it: 2.00641 -> "2.006", 12345.6 -> "12346", 1.2e-05 -> "1.2e-5"."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e15 or magnitude < 1e-3:
        mantissa, _, exponent = f"{value:.3e}".partition("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    if float(value).is_integer():
        return str(int(value))
    decimals = max(0, 3 - math.floor(math.log10(magnitude)))
    return f"{round(value, decimals):.{decimals}f}".rstrip("0").rstrip(".")


def value_words(value: Any, unit: str | None = None) -> str:
    """A value in words: booleans "on" / "off", numbers (and lists of them) with their unit."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return f"{number_words(float(value))}{f' {unit}' if unit else ''}"
    if isinstance(value, list) and value and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        return f"[{', '.join(number_words(float(x)) for x in value)}]{f' {unit}' if unit else ''}"
    if value is None:
        return "no value"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= MAX_VALUE_CHARS else f"{text[: MAX_VALUE_CHARS - 1]}…"


def _spoken_name(name: str) -> str:
    return name.split(".")[-1].replace("_", " ")


def describe(manifest: Manifest, title: str, values: Mapping[str, Any], state: Mapping[str, Any]) -> str:
    """``title``, its parameters' values and the observables the page reported, in sentences.

    "Pendulum. Set: length 1 m, amplitude 30 deg, show trail on. The page measures: period 2.006 s,
    energy 1.47 J/kg." Observables the page has not reported (or reported as null) are said to be
    "not measured yet"; a target with
    no observables declared says what its state holds beyond its parameters. Bounded to
    MAX_DESCRIPTION_CHARS.
    """
    settings = [
        f"{p.label or _spoken_name(path)} {value_words(values.get(path), p.unit)}"
        for path, p in manifest.parameters.items()
        if path in values
    ]
    measured: list[str] = []
    waiting: list[str] = []
    names = list(manifest.observables) or _observables.reported(state, manifest)
    for name in names:
        found, value = _observables.read(state, name)
        if found and value is not None:
            measured.append(f"{_spoken_name(name)} {value_words(value, _observables.unit(manifest, name))}")
        else:
            waiting.append(_spoken_name(name))
    sentences = [f"{title}."]
    if settings:
        sentences.append(f"Set: {', '.join(settings)}.")
    if measured:
        sentences.append(f"The page measures: {', '.join(measured)}.")
    if waiting:
        sentences.append(f"Not measured yet: {', '.join(waiting)}.")
    text = " ".join(sentences)
    return text if len(text) <= MAX_DESCRIPTION_CHARS else f"{text[: MAX_DESCRIPTION_CHARS - 1]}…"
