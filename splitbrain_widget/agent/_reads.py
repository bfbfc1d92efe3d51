"""What an agent or an MCP client may read of a page: the lesson's ``observables`` rule.

Where a lesson lists the observables of a target (:meth:`~splitbrain_widget.core._lesson.Lesson.readable`),
every tool's result carries only those (``fetch_state``, ``describe``, the state after a change or
an action, ``advance``, ``record``'s and ``sweep``'s columns), the tools' schemas and the agent's
system prompt name only those, a ``seek``, ``record`` or ``sweep`` on another is refused, and so is
``snapshot`` (a picture cannot be cut). Parameter values are always readable. The student's own
Python code, the inspector and the lesson log see everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core._lesson import Lesson, LessonError, current_lesson
from ..features._observables import NESTS
from ..manifest import Manifest
from ..protocol import ToolResult

if TYPE_CHECKING:
    from ..widget import TargetWidget

Names = frozenset[str] | None  # the observables a caller may read; None: every one


def readable(sim: TargetWidget) -> Names:
    """What the lesson in force lets callers read of ``sim``'s page. Raises :class:`LessonError`
    where the lesson cannot be read, or names an observable ``sim``'s manifest does not declare."""
    return _names(current_lesson(), sim)


def _names(lesson: Lesson | None, sim: TargetWidget) -> Names:
    names = lesson.readable(sim.target_id) if lesson is not None else None
    declared = sim.schema.observables
    unknown = sorted(names - set(declared)) if names is not None and declared else []
    if unknown and lesson is not None:
        raise LessonError(
            f"{lesson.source}: field 'targets.{sim.target_id}.observables': {sim.target_id}'s manifest declares no "
            f"observable {unknown[0]!r} (expected one of: {', '.join(declared)})"
        )
    return names


def seen_manifest(sim: TargetWidget) -> Manifest:
    """``sim``'s manifest as its callers' tools and prompt name it: only the observables they may
    read (all of them where the lesson cannot be read: its every call is refused then)."""
    try:
        return narrowed(sim.schema, readable(sim))
    except LessonError:
        return sim.schema


def narrowed(manifest: Manifest, names: Names) -> Manifest:
    """``manifest`` with only the observables in ``names`` (the one the schemas and prompt are made of)."""
    if names is None:
        return manifest
    return manifest.model_copy(update={"observables": {k: v for k, v in manifest.observables.items() if k in names}})


def only(state: Mapping[str, Any] | None, manifest: Manifest, names: Names) -> dict[str, Any] | None:
    """``state`` with the parameters' values and the observables in ``names`` (nested ones too)."""
    if state is None or names is None:
        return None if state is None else dict(state)

    def kept(key: str) -> bool:
        return key in names or key in manifest.parameters

    out: dict[str, Any] = {}
    for key, value in state.items():
        if kept(key):
            out[key] = value
        elif key in NESTS and isinstance(value, Mapping):
            out[key] = {k: v for k, v in value.items() if kept(str(k))}
    return out


def refusal(tool: str, arguments: dict[str, Any], names: Names, source: str) -> str | None:
    """Why the lesson (from ``source``) refuses a call that would read what it hides; None where it
    does not."""
    if names is None:
        return None
    allowed = ", ".join(sorted(names)) or "none"
    if tool == "snapshot":
        return f"the lesson ({source}) lets agents read some observables only ({allowed}): a picture shows them all"
    asked: list[Any] = []
    if tool == "seek":
        asked = [arguments.get("observable")]
    elif tool in ("record", "sweep"):
        listed = arguments.get("observables" if tool == "record" else "measure")
        asked = list(listed) if isinstance(listed, list) else []
    hidden = [name for name in asked if isinstance(name, str) and name not in names]
    if hidden:
        return f"the lesson ({source}) does not let agents read '{hidden[0]}' (observables allowed: {allowed})"
    return None


def narrowed_arguments(tool: str, arguments: dict[str, Any], names: Names) -> dict[str, Any]:
    """A ``record`` or ``sweep`` that names no observables measures the readable ones only."""
    key = {"record": "observables", "sweep": "measure"}.get(tool)
    if names is None or key is None or arguments.get(key):
        return arguments
    return {**arguments, key: sorted(names)}


def shown(outcome: ToolResult | dict[str, Any], manifest: Manifest, names: Names) -> ToolResult | dict[str, Any]:
    """A tool's result with only what the caller may read of the page's state."""
    if names is None or not isinstance(outcome, ToolResult) or outcome.state is None:
        return outcome
    return outcome.model_copy(update={"state": only(outcome.state, manifest, names)})


def checked(sim: TargetWidget, tool: str, arguments: dict[str, Any]) -> tuple[Names, str | None]:
    """(what the caller may read, why this call is refused or None); a lesson that cannot be read
    refuses every call."""
    try:
        lesson = current_lesson()
        names = _names(lesson, sim)
    except LessonError as exc:
        return None, f"the lesson policy cannot be read: {exc}"
    if names is None or lesson is None:
        return None, None
    return names, refusal(tool, arguments, names, lesson.source)
