"""What a bound page says it holds after a set, a reset or its opening, and how the kernel takes it.

A page by another author keeps the nearest value its control allows (a drag lands on a pixel: asked
33.3, the page's model holds 33.25), and may refuse a value outright. ``js/page/bindings.js``
answers every set and reset with what the page's model holds (through each parameter's ``read``);
a reset, and the values a page gets when it opens, set what the page takes and name the rest under
:data:`REFUSED_KEY`. Here that state is read: validated (the page is untrusted), bounded, and put
in words. :class:`~splitbrain_widget.core._operations.Operations` commits it, so that ``sim.values``
says what the page holds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from ..manifest import Manifest, ParameterError

REFUSED_KEY = "_refused"  # js/page/bindings.js REFUSED_KEY
MAX_REFUSALS = 64  # refusals read from one state (a page has at most this many worth naming)
MAX_SHOWN_CHARS = 80  # of a value in a message


class PageValueWarning(UserWarning):
    """A bound page did not take a value the kernel asked for (a default at open, a reset): the page
    keeps its own, and so does ``sim.values``."""


class Held(NamedTuple):
    """A parameter the page holds otherwise than the kernel had it: the value asked (or, ``moved``, the
    one the kernel held), and the one the page holds (None when it could not be read or is not valid
    for the parameter); ``error`` when its binding found nothing to set. ``kind``: ``kept`` (the page
    did not take the value), ``took`` (it took it within its binding's tolerance: a drag's pixel) or
    ``moved`` (not asked: the page changed it with another, as a handle's share follows its
    neighbour)."""

    path: str
    asked: Any
    held: Any
    error: str | None = None
    kind: Literal["kept", "took", "moved"] = "kept"

    @property
    def refused(self) -> bool:
        return self.kind == "kept"

    def words(self, unit: str = "") -> str:
        """``board.occupied: asked 0.9, the page holds 0.8`` (``took`` within tolerance; ``moved``)."""
        u = f" {unit}" if unit else ""
        if self.kind == "took":
            return f"{self.path}: asked {shown(self.asked)}{u}, the page took {shown(self.held)}{u}"
        if self.kind == "moved":
            return f"{self.path}: the page moved it from {shown(self.asked)}{u} to {shown(self.held)}{u}"
        held = "cannot be read" if self.held is None else f"holds {shown(self.held)}{u}"
        why = f" ({self.error})" if self.error else ""
        return f"{self.path}: asked {shown(self.asked)}{u}, the page {held}{why}"


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def same(a: Any, b: Any) -> bool:
    """Equal values, numbers within a relative 1e-9 (the page's scale round trips)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def page_value(manifest: Manifest, path: str, raw: Any) -> Any:
    """What the page reports for ``path``, if it is a valid value of the parameter (else None)."""
    param = manifest.parameters.get(path)
    if param is None or raw is None:
        return None
    try:
        return param.check_value(raw)
    except ParameterError:
        return None


def took(manifest: Manifest, state: Mapping[str, Any], asked: Mapping[str, Any]) -> list[Held]:
    """The asked parameters the page reports holding otherwise, within its binding's tolerance (the
    page answered ok, so it took them: a drag's pixel, a control's step)."""
    found = []
    for path, value in asked.items():
        held = page_value(manifest, path, state.get(path))
        if held is not None and not same(held, value):
            found.append(Held(path, value, held, kind="took"))
    return found


def moved(
    manifest: Manifest, state: Mapping[str, Any], asked: Mapping[str, Any], before: Mapping[str, Any]
) -> list[Held]:
    """The parameters a call did not ask for that the page reports holding otherwise than the kernel
    held them when the call began (``before``): the page moved them along with the asked ones."""
    found = []
    for path in manifest.parameters:
        if path in asked or path not in before:
            continue
        held = page_value(manifest, path, state.get(path))
        if held is not None and not same(held, before[path]):
            found.append(Held(path, before[path], held, kind="moved"))
    return found


def refusals(manifest: Manifest, state: Mapping[str, Any]) -> list[Held]:
    """The values the page names under :data:`REFUSED_KEY` (a reset, its opening), checked: parameters
    of the manifest only, at most :data:`MAX_REFUSALS`, ``held`` valid for its parameter or None."""
    raw = state.get(REFUSED_KEY)
    if not isinstance(raw, dict):
        return []
    found = []
    for path, entry in list(raw.items())[:MAX_REFUSALS]:
        if path not in manifest.parameters or not isinstance(entry, dict):
            continue
        error = entry.get("error")
        found.append(
            Held(
                path,
                entry.get("asked"),
                page_value(manifest, path, entry.get("held")),
                error=str(error)[:300] if error is not None else None,
            )
        )
    return found


def words(manifest: Manifest, held: list[Held]) -> str:
    """Each in words, ``; ``-joined, with the parameters' units."""
    return "; ".join(h.words(manifest.parameters[h.path].unit or "") for h in held)
