"""Observables: where a value sits in a page's state, once, and which names a manifest declares.

One rule for every reader (``seek``, ``record``, the planner's answers; the chat panel's inspector,
``js/view/panel.js`` ``readObservable``, is its translation): an observable ``name`` is ``state[name]``, or
else ``state[key][name]`` for the first of ``observables``, ``values`` and ``params`` that holds it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from .._bounds import MAX_TEXT, measure
from ..manifest import Manifest

MAX_CELL_VALUES = 100  # values of one observable in one row (a list); a bigger one is recorded as None
NESTS = ("observables", "values", "params")  # where else in a state an observable may sit, in order


def read(state: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    """(reported?, value) of ``name`` in a state, at its top or under observables / values / params."""
    if name in state:
        return True, state[name]
    for key in NESTS:
        inner = state.get(key)
        if isinstance(inner, Mapping) and name in inner:
            return True, inner[name]
    return False, None


def value(state: Mapping[str, Any], name: str) -> Any:
    """``name``'s value in a state (None where the state does not report it)."""
    return read(state, name)[1]


def reported(state: Mapping[str, Any], manifest: Manifest) -> list[str]:
    """The names in a state that are not parameters: what the page reports."""
    names = [k[:60] for k in state if k not in manifest.parameters and not k.startswith("_") and k != "observables"]
    inner = state.get("observables")
    if isinstance(inner, Mapping):
        names += [k for k in inner if k not in names]
    return names


def unit(manifest: Manifest, name: str) -> str | None:
    """The unit the manifest gives observable ``name`` (None without one)."""
    found = manifest.observables.get(name)
    return found.unit if found is not None and found.unit else None


def names(observables: Any, manifest: Manifest, where: str = "observables") -> list[str] | None:
    """The observables asked for (a name or several), in order and once each; None for the default.

    Raises TypeError for what is no name, and ValueError for a name the manifest does not declare
    (saying the closest and listing the declared ones), when it declares any. ``where`` names the
    parameter in the errors (``record(observables=...)``, ``sweep(measure=...)``).
    """
    if observables is None:
        return None
    if isinstance(observables, str):
        asked = [observables]
    elif isinstance(observables, Iterable):
        asked = list(dict.fromkeys(observables))
    else:
        raise TypeError(f"{where}: expected a name or several, got {type(observables).__name__}")
    declared = list(manifest.observables)
    listed = ", ".join(declared) or "none"
    if not asked:
        raise ValueError(f"{where}: expected at least one name (the observables of {manifest.id}: {listed})")
    for name in asked:
        if not isinstance(name, str):
            raise TypeError(f"{where}: expected observable names (strings), got {name!r}")
    unknown = [name for name in asked if declared and name not in declared]
    if unknown:
        close = difflib.get_close_matches(unknown[0], declared, n=2, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise ValueError(
            f"{where}: {manifest.id} declares no {', '.join(repr(name) for name in unknown)} "
            f"({hint}its observables: {listed})"
        )
    return asked


def slim(state: Mapping[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
    """Only the declared observables of a page's state (where :func:`read` finds them), each a value a
    table can hold (:func:`cell`): so a long recording keeps only what it needs, whatever the page sends."""
    kept = {name: cell(state[name]) for name in declared if name in state}
    for key in NESTS:
        inner = state.get(key)
        if isinstance(inner, Mapping):
            found = {name: cell(inner[name]) for name in declared if name in inner and name not in kept}
            if found:
                kept[key] = found
    return kept


def cell(item: Any) -> Any:
    """``item`` if a recorded table keeps it: a number, a boolean, a string of at most
    :data:`~splitbrain_widget._bounds.MAX_TEXT` characters, or a JSON value of at most
    :data:`MAX_CELL_VALUES` values (a short list); None for anything bigger."""
    if item is None or isinstance(item, bool | int | float):
        return item
    if isinstance(item, str):
        return item if len(item) <= MAX_TEXT else None
    return item if measure(item, max_nodes=MAX_CELL_VALUES)[1] <= MAX_CELL_VALUES else None
