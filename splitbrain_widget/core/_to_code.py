"""Actions as code: the changes an audit log holds, as a Python cell that makes them again.

:func:`to_code` is pure (audit entries in, source text out). The rules:

- Only what a call left in the kernel's ``values`` counts (``AuditEntry.changed``): reads, refused
  calls (``target_error``, ``cancelled``, invalid values) leave nothing; a change *kept* for a page
  to come (``no_view``, ``not_ready``, a sent ``timeout``) did change the values and counts.
- ``select_target`` starts afresh (the new target's defaults): the last one is kept and everything
  before it dropped. Likewise everything before the last ``reset`` is dropped, and the reset is
  written as ``sim.reset()`` only where it matters: where a path changed before it (moved off its
  default by a call since the start or the kept ``select_target``) is not set again after it. On a
  fresh widget that reset changes nothing; it makes the cell right on a widget already changed.
- The value changes after that are merged into the fewest ``set_parameters`` calls: consecutive
  calls of one source make one call, a path set again later is left out of the earlier call (the
  later value wins), and calls left empty disappear. Each is headed by a comment saying who asked
  (``# chat: make it red``, ``# inspector``, ``# agent: ...``, ``# python``).
- Values are Python literals that evaluate to exactly the value held (floats by ``repr``, arrays as
  lists); paths are always dotted.
- An action the page ran (``sim.act('run')``, ok) is written where it ran: it ran with the values
  set before it, so the code runs in segments, one per action, and the rules above hold within
  each (sets merge only up to the next action; a reset drops only what came before it since the
  last action, and is always written after an action, whose effect on the page it may undo). An
  action that failed left nothing (one that timed out may have run late: it is not written).

Running the cell on a fresh widget of the same target (with the same ``targets_dir``) gives the same
``values``, as long as the log holds every call since the widget was made. A log that dropped early
calls (its ring holds the last 1000; ``clear()`` drops them all) cannot say what they changed: unless
a kept ``select_target`` starts the code afresh, its first line says it is incomplete (or, when a
reset starts it, for which target it holds). Calls are logged in the order they ended; calls that
overlap in time (two threads changing one path at once) may have been applied in another order.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._audit import AuditEntry, AuditLog

MAX_COMMENT = 200  # characters of a source shown in a comment
LINE = 100  # a set_parameters call longer than this is written one path a line
NOTHING = "# nothing to reproduce: no call changed the values"
REFUSED_SELECT = ("unknown_target", "cancelled")


@dataclass
class _Step:
    """One thing the code does: ``set`` values, ``reset``, or ``select`` a target."""

    kind: str
    source: str | None
    values: dict[str, Any] = field(default_factory=dict)  # set: path -> value; reset: the defaults
    target: str = ""  # select: what to pass to select_target; reset: the target it reset; act: the action


def to_code(entries: Sequence[AuditEntry], *, var: str = "sim", dropped: int = 0, nothing: str = NOTHING) -> str:
    """The cell that makes the changes of ``entries`` (oldest first) again on ``var``; ``dropped``
    says how many earlier calls the log no longer holds, ``nothing`` what to say when there is no change."""
    if not var.isidentifier() or keyword.iskeyword(var):
        raise ValueError(f"var must be a Python name, such as 'sim'; got {var!r}")
    steps = _steps(entries)
    start = _last(steps, "select")
    body: list[_Step] = []
    if start is not None:
        body, steps = [steps[start]], steps[start + 1 :]
    segments = _segments(steps)
    reset: _Step | None = None  # the reset the code starts at, if it does
    for index, (segment, action) in enumerate(segments):
        at = _last(segment, "reset")
        if at is not None:
            segment_reset, before, segment = segment[at], segment[:at], segment[at + 1 :]
            unknown = dropped > 0 and start is None and index == 0  # with earlier calls unknown, it may matter
            if index > 0 or unknown or _matters(segment_reset, before, segment):
                body.append(segment_reset)
            if index == 0:
                reset = segment_reset
        body += _merged([s for s in segment if s.kind == "set"])
        if action is not None:
            body.append(action)
    lines: list[str] = []
    if dropped > 0 and start is None:
        calls = f"{dropped} call" + ("s" if dropped != 1 else "")
        if reset is not None:
            lines.append(
                f"# the audit log no longer holds its first {calls}: this code starts at a reset, "
                f"so it holds for a widget showing target {reset.target!r}"
            )
        else:
            lines.append(f"# incomplete: the audit log no longer holds its first {calls}, so their changes are missing")
    if not body:
        return "\n".join([*lines, nothing]) + "\n"
    shown: object = object()  # the source of the last comment written
    for step in body:
        if step.source != shown:
            lines.append(_comment(step.source))
            shown = step.source
        lines.append(_call(var, step))
    return "\n".join(lines) + "\n"


def to_cell(audit: AuditLog, var: str = "sim") -> None:
    """Put ``audit.to_code(var)`` in a new cell below the running one (JupyterLab, Notebook 7), through
    IPython's ``set_next_input`` (the running cell's execute_reply carries it); RuntimeError outside IPython."""
    shell = None
    if "IPython" in sys.modules:  # not imported: certainly not running in IPython
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None or not hasattr(shell, "set_next_input"):
        raise RuntimeError(
            f"to_cell() puts the code in a new notebook cell and needs IPython (a Jupyter kernel); "
            f"here, use print({var}.audit.to_code())"
        )
    shell.set_next_input(audit.to_code(var), replace=False)


# -- steps ------------------------------------------------------------------------------------


def _steps(entries: Sequence[AuditEntry]) -> list[_Step]:
    """What each entry did to the values, in order; entries that did nothing leave no step."""
    steps: list[_Step] = []
    target: str | None = None  # the target after the previous entry
    for entry in entries:
        if entry.op == "select_target":
            if _switched(entry, target):
                argument = entry.arguments.get("target")
                where = argument if isinstance(argument, str) and argument else entry.target
                steps.append(_Step("select", entry.source, dict(entry.changed), where))
        elif entry.op == "reset":
            if entry.changed:
                steps.append(_Step("reset", entry.source, dict(entry.changed), entry.target))
        elif entry.op == "action":
            name = entry.arguments.get("name")
            if entry.ok and isinstance(name, str):
                steps.append(_Step("act", entry.source, target=name))
        elif entry.changed:
            steps.append(_Step("set", entry.source, dict(entry.changed)))
        target = entry.target or target
    return steps


def _switched(entry: AuditEntry, before: str | None) -> bool:
    """Whether a select_target made its target active (with its defaults): the audit records the
    new target's defaults where it did (a cancelled one did too: it loads before its first wait)."""
    return bool(entry.changed)


def _segments(steps: list[_Step]) -> list[tuple[list[_Step], _Step | None]]:
    """The steps cut at each action: (the steps before it since the previous one, the action); the
    last segment has no action."""
    segments: list[tuple[list[_Step], _Step | None]] = []
    current: list[_Step] = []
    for step in steps:
        if step.kind == "act":
            segments.append((current, step))
            current = []
        else:
            current.append(step)
    segments.append((current, None))
    return segments


def _last(steps: list[_Step], kind: str) -> int | None:
    for i in range(len(steps) - 1, -1, -1):
        if steps[i].kind == kind:
            return i
    return None


def _matters(reset: _Step, before: list[_Step], after: list[_Step]) -> bool:
    """Whether the reset undoes something the code after it does not set again: a path that some
    call since the start (or the kept select_target) moved off its default and no call after it sets."""
    set_after = {path for step in after for path in step.values}
    return any(
        path not in set_after and (path not in reset.values or literal(value) != literal(reset.values[path]))
        for step in before
        if step.kind == "set"
        for path, value in step.values.items()
    )


def _merged(sets: list[_Step]) -> list[_Step]:
    """The fewest calls: consecutive sets of one source merged, a path set again later left out of
    the earlier call, empty calls dropped (and the neighbours they separated merged)."""
    groups: list[_Step] = []
    for step in sets:
        if groups and groups[-1].source == step.source:
            groups[-1].values.update(step.values)
        else:
            groups.append(_Step("set", step.source, dict(step.values)))
    later: set[str] = set()
    for group in reversed(groups):
        group.values = {p: v for p, v in group.values.items() if p not in later}
        later.update(group.values)
    out: list[_Step] = []
    for group in groups:
        if not group.values:
            continue
        if out and out[-1].source == group.source:
            out[-1].values.update(group.values)
        else:
            out.append(group)
    return out


# -- writing ----------------------------------------------------------------------------------


def _comment(source: str | None) -> str:
    text = "python" if source is None else "".join(c if c.isprintable() else " " for c in source)
    text = " ".join(text.split())  # one line, whatever was typed
    if len(text) > MAX_COMMENT:
        text = text[: MAX_COMMENT - 1] + "…"
    return f"# {text}"


def _call(var: str, step: _Step) -> str:
    if step.kind == "select":
        return f"{var}.select_target({_string(step.target)})"
    if step.kind == "reset":
        return f"{var}.reset()"
    if step.kind == "act":
        return f"{var}.act({_single(step.target)})"
    items = [f"{_string(path)}: {literal(value)}" for path, value in step.values.items()]
    one_line = f"{var}.set_parameters({{{', '.join(items)}}})"
    if len(one_line) <= LINE:
        return one_line
    return f"{var}.set_parameters({{\n" + "".join(f"    {item},\n" for item in items) + "})"


def literal(value: Any) -> str:
    """``value`` as Python source that evaluates to exactly it (JSON-like values: numbers, strings,
    booleans, None, lists and dicts of them)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return float.__repr__(value)  # the shortest text that reads back as the same float
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write a {type(value).__name__} as a Python literal: {value!r}")


def _single(text: str) -> str:
    """A string literal in single quotes (``sim.act('run')``; an action name is an identifier)."""
    return repr(str(text))


def _string(text: str) -> str:
    """A string literal in double quotes where that reads back exactly, else Python's own repr."""
    quoted = json.dumps(text, ensure_ascii=False)
    try:
        if ast.literal_eval(quoted) == text:
            return quoted
    except (ValueError, SyntaxError):  # a lone surrogate, say
        pass
    return repr(str(text))


# -- replay -----------------------------------------------------------------------------------

MAX_REPLAY_STEPS = 500


def replay_steps(entries: Sequence[AuditEntry], defaults: dict[str, Any], target: str) -> list[dict[str, Any]]:
    """The session's changes as steps a reader steps through, each with what caused it and the whole
    ``values`` after it: first the defaults, then one step per call that changed something (consecutive
    sets of one source as one), per reset and per action the page ran. Read by the same rules as
    :func:`to_code` (only what a call left in the values counts; a ``select_target`` starts afresh: only
    the steps since the last switch to ``target`` are kept). At most :data:`MAX_REPLAY_STEPS` (the last)."""
    steps = _steps(entries)
    start = _last(steps, "select")
    if start is not None:
        steps = steps[start:] if steps[start].target == target or not target else []
    values = dict(defaults)
    out: list[dict[str, Any]] = [{"label": "start: the manifest's defaults", "values": dict(values)}]
    for step in steps:
        source = _comment(step.source)[2:]
        if step.kind == "select":
            values = {**defaults, **step.values}
            out.append({"label": f"{source} → select {step.target}", "values": dict(values)})
        elif step.kind == "reset":
            values = {**defaults, **step.values}
            out.append({"label": f"{source} → reset", "values": dict(values)})
        elif step.kind == "act":
            out.append({"label": f"{source} → run {step.target}", "values": dict(values), "action": step.target})
        else:
            values.update(step.values)
            said = ", ".join(f"{path.split('.')[-1]} = {literal(value)}" for path, value in step.values.items())
            if out[-1].get("source") == step.source and out[-1].get("kind") == "set":
                out[-1]["label"] = f"{out[-1]['label']}, {said}"
                out[-1]["values"] = dict(values)
                continue
            out.append({"label": f"{source} → {said}", "values": dict(values), "source": step.source, "kind": "set"})
    for step_out in out:
        step_out.pop("source", None)
        step_out.pop("kind", None)
    return out[-MAX_REPLAY_STEPS:]
