"""The agent's tools: exact JSON schemas from the manifest, the system prompt, and execution.

Nothing here imports pydantic-ai: the runtime turns :class:`ToolSpec` into its tool definitions.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..features._describe import describe as _describe_words
from ..manifest import Manifest
from ..protocol import ToolResult
from . import _clock_tools, _reads
from ._schema import MAX_PAGE_DATA_CHARS, PAGE_DATA_NOTE, parameter_schema
from ._skills import SKILL_NOTE, Skill

if TYPE_CHECKING:
    from ..core._picture import Picture
    from ..widget import TargetWidget

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
PICTURE_KEY = "image"  # where a tool's result holds its picture, taken out before anything else reads it
STORED_CHUNK_CHARS = 4_000


def _no_progress(_label: str) -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    """What a tool runs against: the widget, the run's store of big page results, ``progress``,
    which updates the chat panel's chip of the running call (on the run's event loop), the skills
    the agent may load and the names of those this run loaded."""

    sim: TargetWidget
    store: dict[str, str]
    progress: Callable[[str], None] = _no_progress
    skills: tuple[Skill, ...] = ()
    loaded: list[str] = field(default_factory=list)
    observables: _reads.Names = None  # what the caller may read of the page (the lesson's; None: all)


@dataclass(frozen=True)
class Scope:
    """What the tools are offered for: the active manifest, the target ids, the skills, and whether
    the page runs on a virtual clock (a headless page: ``advance``, ``record``, ``sweep``)."""

    manifest: Manifest
    targets: Sequence[str]
    skills: tuple[Skill, ...] = ()
    clock: bool = False
    pictures: bool = False  # the caller takes images in a tool's result (an MCP client): ``snapshot``


@dataclass(frozen=True)
class Tool:
    """One tool, defined once: the toolset, the read-only split, the known-name check, the system
    prompt and the panel's chip label are all derived from :data:`TOOLS`.

    ``parameters`` builds the JSON schema from the :class:`Scope` (the active manifest, the target
    ids, the skills);
    ``needs_approval`` puts the call under the widget's approval policy, per parameter path that
    ``touches`` names (the tool's own policy where it names none); ``label`` renders the arguments
    for the chat panel's chip; ``run`` is the async implementation. ``offered`` says whether the
    scope has a use for the tool at all, and ``details`` adds to the description what it says (the
    actions a ``run_action`` can run).
    """

    name: str
    description: str
    run: Callable[[ToolContext, dict[str, Any]], Awaitable[ToolResult | dict[str, Any]]]
    read_only: bool = False
    needs_approval: bool = False
    parameters: Callable[[Scope], dict[str, Any]] = lambda _scope: NO_ARGUMENTS
    label: Callable[[dict[str, Any]], str] = lambda _args: ""
    touches: Callable[[Manifest, dict[str, Any]], list[str]] = lambda _m, _args: []
    offered: Callable[[Scope], bool] = lambda _scope: True
    details: Callable[[Scope], str] = lambda _scope: ""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it for one manifest: name, description, exact schema."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


def _set_parameters_schema(scope: Scope) -> dict[str, Any]:
    settable = {path: parameter_schema(p) for path, p in scope.manifest.parameters.items() if not p.readonly}
    return {
        "type": "object",
        "properties": {
            "values": {
                "type": "object",
                "properties": settable,
                "additionalProperties": False,
                "minProperties": 1,
                "description": "dotted path -> new value",
            }
        },
        "required": ["values"],
        "additionalProperties": False,
    }


def _select_target_schema(scope: Scope) -> dict[str, Any]:
    targets = scope.targets
    return {
        "type": "object",
        "properties": {"target": {"type": "string", "enum": list(targets)} if targets else {"type": "string"}},
        "required": ["target"],
        "additionalProperties": False,
    }


def _stored_schema(_scope: Scope) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"key": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}},
        "required": ["key"],
        "additionalProperties": False,
    }


async def _set_parameters(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    values = args.get("values")
    if not isinstance(values, dict) or not values:
        return ToolResult.failure(
            "invalid_value",
            "set_parameters needs 'values': an object of dotted path -> value",
            hint=ctx.sim.schema.names(),
        )
    return await ctx.sim.aset_parameters(values)


async def _describe(ctx: ToolContext, _args: dict[str, Any]) -> dict[str, Any]:
    """A fresh state where a page answers, then the simulation in words (from the last state where none does)."""
    fresh = await ctx.sim.afetch_state()
    sim, names = ctx.sim, ctx.observables
    state = _reads.only(sim.state, sim.schema, names) or {}
    text = _describe_words(_reads.narrowed(sim.schema, names), sim.target.title, sim.values, state)
    result: dict[str, Any] = {"ok": True, "text": text}
    if not fresh.ok and fresh.error is not None:
        result["note"] = f"no fresh state ({fresh.error.code}): the page's last report is described"
    return result


async def _snapshot(ctx: ToolContext, _args: dict[str, Any]) -> ToolResult | dict[str, Any]:
    """The page's picture as an image (``image``: base64 PNG, which an MCP server sends as image
    content), with the simulation in words beside it."""
    from ..core._picture import SnapshotError

    try:
        picture = await ctx.sim.asnapshot()
    except SnapshotError as exc:
        if exc.result is not None and not exc.result.ok:
            return exc.result
        return ToolResult.failure("target_error", str(exc), op="snapshot", applied=False)
    return {
        "ok": True,
        "message": f"a picture of the page, {picture.width}x{picture.height} pixels",
        "alt": picture.alt,
        PICTURE_KEY: picture,
    }


def split_picture(payload: Any) -> tuple[Any, Picture | None]:
    """A tool's result without its picture (the ``snapshot`` tool's, which an MCP server sends as image
    content and the agent shows its model), and the picture; ``(payload, None)`` for any other result."""
    picture = payload.get(PICTURE_KEY) if isinstance(payload, dict) else None
    if picture is None:
        return payload, None
    return {k: v for k, v in payload.items() if k != PICTURE_KEY}, picture


async def _select_target(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    target = args.get("target")
    if not isinstance(target, str):
        return ToolResult.failure("unknown_target", "select_target needs 'target': a target id")
    return await ctx.sim.aselect_target(target)


async def _read_stored_result(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    key, offset = args.get("key"), args.get("offset") or 0
    if not isinstance(key, str) or key not in ctx.store:
        return ToolResult.failure(
            "invalid_value", f"no stored result {key!r}", hint=f"stored: {list(ctx.store)}"
        ).for_model()
    text = ctx.store[key]
    offset = max(0, offset) if isinstance(offset, int) else 0
    chunk = text[offset : offset + STORED_CHUNK_CHARS]
    return {
        "ok": True,
        "key": key,
        "offset": offset,
        "chunk": chunk,
        "remaining": max(0, len(text) - offset - STORED_CHUNK_CHARS),
    }


def _load_skill_schema(scope: Scope) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"type": "string", "enum": [skill.name for skill in scope.skills]}},
        "required": ["name"],
        "additionalProperties": False,
    }


async def _load_skill(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    name = args.get("name")
    skill = next((s for s in ctx.skills if s.name == name), None)
    if skill is None:
        known = ", ".join(s.name for s in ctx.skills) or "none"
        return ToolResult.failure("invalid_value", f"no skill named {name!r}", hint=f"skills: {known}").for_model()
    ctx.loaded.append(skill.name)
    out: dict[str, Any] = {"ok": True, "skill": skill.name, "note": SKILL_NOTE, "instructions": skill.body}
    if skill.confirm_before:
        out["confirm_before"] = list(skill.confirm_before)
        out["rule"] = "ask the user, and wait for a yes, before changing " + ", ".join(skill.confirm_before)
    return out


def _action_line(name: str, manifest: Manifest) -> str:
    """``run (Run) — Start the simulation``: an action as the model reads it."""
    action = manifest.actions[name]
    label = f" ({action.label})" if action.label and action.label != name else ""
    return f"{name}{label}" + (f" — {action.description}" if action.description else "")


def _run_action_schema(scope: Scope) -> dict[str, Any]:
    manifest = scope.manifest
    return {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "enum": list(manifest.actions),
                "description": "the action to run: " + "; ".join(_action_line(n, manifest) for n in manifest.actions),
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    }


async def _run_action(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    name = args.get("name")
    if not isinstance(name, str):
        actions = ", ".join(ctx.sim.schema.actions) or "none"
        return ToolResult.failure(
            "invalid_value",
            "run_action needs 'name': the name of one of the target's actions",
            hint=actions,
            op="action",
        )
    return await ctx.sim.aact(name)


def _seek_schema(scope: Scope) -> dict[str, Any]:
    manifest = scope.manifest
    observables = manifest.observables
    varied = [path for path, p in manifest.parameters.items() if p.seekable and not p.readonly]
    moves = "; ".join(
        name + (f" ({o.unit})" if o.unit else "") + (f" is moved by {', '.join(o.depends_on)}" if o.depends_on else "")
        for name, o in observables.items()
    )
    observable: dict[str, Any] = {"type": "string", "description": f"what the page measures: {moves or 'none'}"}
    if observables:
        observable["enum"] = list(observables)
    vary: dict[str, Any] = {
        "type": "string",
        "description": "the parameter to change; default: the observable's first depends_on parameter",
    }
    if varied:
        vary["enum"] = varied
    return {
        "type": "object",
        "properties": {
            "observable": observable,
            "goal": {
                "anyOf": [{"type": "number"}, {"type": "string", "enum": ["max", "min"]}],
                "description": "the value to reach in the observable's unit, or max / min",
            },
            "vary": vary,
            "tol": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "absolute tolerance in the observable's unit; default 1% of the goal (give it for 0)",
            },
        },
        "required": ["observable", "goal"],
        "additionalProperties": False,
    }


async def _seek(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    import asyncio

    observable, goal, vary = args.get("observable"), args.get("goal"), args.get("vary")
    if not isinstance(observable, str) or not isinstance(goal, int | float | str) or isinstance(goal, bool):
        return ToolResult.failure(
            "invalid_value",
            "seek needs 'observable' (a name the page reports) and 'goal' (a number, 'max' or 'min')",
            hint=f"observables: {', '.join(_reads.narrowed(ctx.sim.schema, ctx.observables).observables) or 'none'}",
            op="seek",
        )
    loop = asyncio.get_running_loop()
    running = True

    def report(label: str) -> None:  # on the run's loop: news that comes after the call ended is dropped
        if running:
            ctx.progress(label)

    def on_try(step: Any) -> None:  # on the seek's worker thread
        loop.call_soon_threadsafe(report, _try_label(args, step))

    tol = args.get("tol")
    tol = float(tol) if isinstance(tol, int | float) and not isinstance(tol, bool) else None
    try:
        return await ctx.sim.aseek(
            observable, goal, vary=vary if isinstance(vary, str) else None, tol=tol, on_try=on_try
        )
    finally:
        running = False


def _seek_label(args: dict[str, Any]) -> str:
    goal, vary, observable = args.get("goal"), args.get("vary"), args.get("observable", "")
    aim = f"{goal} {observable}" if goal in ("max", "min") else f"{observable} → {_short(goal)}"
    return aim + (f" by {str(vary).split('.')[-1]}" if vary else "")


def _try_label(args: dict[str, Any], step: Any) -> str:
    """The chip while a seek runs: its goal and its latest try."""
    seen = "not reported" if step.observable is None else _short(round(float(step.observable), 4))
    return f"{_seek_label(args)}: try {step.index}, {_short(round(float(step.value), 4))} → {seen}"


def _seek_touches(manifest: Manifest, args: dict[str, Any]) -> list[str]:
    vary, observable = args.get("vary"), args.get("observable")
    if isinstance(vary, str):
        return [vary]
    if isinstance(observable, str) and observable in manifest.observables:
        return list(manifest.observables[observable].depends_on[:1])
    return []


def _values_touched(_manifest: Manifest, args: dict[str, Any]) -> list[str]:
    values = args.get("values")
    return [str(name) for name in values] if isinstance(values, dict) else []


def _values_label(args: dict[str, Any]) -> str:
    values = args.get("values")
    if not isinstance(values, dict):
        return ""
    return ", ".join(f"{str(k).split('.')[-1]} = {_short(v)}" for k, v in values.items())


def _short(value: Any) -> str:
    """A value as JSON, whole floats without their ``.0`` (as the panel's JavaScript writes numbers)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, default=str)


TOOLS: tuple[Tool, ...] = (
    Tool(
        "set_parameters",
        "Set one or more parameters of the active target in ONE call, by dotted path. Values are validated "
        "against the manifest; the result says what changed (with units) and the state the page reported.",
        _set_parameters,
        needs_approval=True,
        parameters=_set_parameters_schema,
        label=_values_label,
        touches=_values_touched,
    ),
    Tool(
        "get_parameters",
        "Current value, type, unit and range of every parameter. The system prompt already lists them; "
        "call this only if you need to re-check.",
        lambda ctx, _args: ctx.sim.aget_parameters(),
        read_only=True,
    ),
    Tool(
        "reset",
        "Restore every parameter of the active target to its default.",
        lambda ctx, _args: ctx.sim.areset(),
        needs_approval=True,
    ),
    Tool(
        "fetch_state",
        "Ask the live page for its current state (its observables, e.g. measured results).",
        lambda ctx, _args: ctx.sim.afetch_state(),
        read_only=True,
    ),
    Tool(
        "describe",
        "The simulation in words: every parameter's value and what the page measures now, with units. Use it "
        "to tell someone what the simulation shows (they may not see the picture).",
        _describe,
        read_only=True,
    ),
    Tool(
        "snapshot",
        "A picture of the page as it is now (an image), with the simulation in words. Use it to see what "
        "the page shows; the state and describe give the numbers.",
        _snapshot,
        read_only=True,
        offered=lambda scope: scope.pictures,
    ),
    Tool(
        "list_targets",
        "List the targets (simulations) that can be selected.",
        lambda ctx, _args: ctx.sim.alist_targets(),
        read_only=True,
    ),
    Tool(
        "select_target",
        "Switch the widget to another target; its parameters start at their defaults.",
        _select_target,
        needs_approval=True,
        parameters=_select_target_schema,
        label=lambda args: str(args.get("target", "")),
    ),
    Tool(
        "seek",
        "Reach a goal on what the page measures in ONE call: changes one parameter (vary) until the "
        "observable reaches the goal (a number in its unit, or max / min), trying values on the page "
        "itself with a root finder; the result lists every try. Out of reach: it says the closest value "
        "and where, and puts the parameter back.",
        _seek,
        needs_approval=True,
        parameters=_seek_schema,
        label=_seek_label,
        touches=_seek_touches,
    ),
    Tool(
        "run_action",
        "Run one of the target's actions on the page, as a person would press its button (start, launch, "
        "clear); the result is the state the page reports after it. Actions change no parameter.",
        _run_action,
        needs_approval=True,
        parameters=_run_action_schema,
        label=lambda args: str(args.get("name", "")),
        offered=lambda scope: bool(scope.manifest.actions),
        details=lambda scope: (
            " Actions: " + "; ".join(_action_line(n, scope.manifest) for n in scope.manifest.actions) + "."
        ),
    ),
    Tool(
        "load_skill",
        "Load a guide from the notebook's author by name (the system prompt lists them, with when each "
        "fits): its text is instructions to follow for this request, within what the other tools allow.",
        _load_skill,
        read_only=True,
        parameters=_load_skill_schema,
        label=lambda args: str(args.get("name", "")),
        offered=lambda scope: bool(scope.skills),
    ),
    Tool(
        "advance",
        "Run the headless page's clock forward by simulated seconds (faster than real time); the result "
        "is the state the page reports then.",
        _clock_tools.advance,
        parameters=_clock_tools.advance_schema,
        label=lambda args: f"{_short(args.get('seconds'))} s",
        offered=lambda scope: scope.clock,
    ),
    Tool(
        "record",
        "Record the page's observables over simulated seconds, one row every `every` seconds, as a table "
        "(columns, rows, units). The page's clock runs forward as it records.",
        _clock_tools.record,
        parameters=_clock_tools.record_schema,
        label=lambda args: f"{_short(args.get('seconds'))} s",
        offered=lambda scope: scope.clock,
    ),
    Tool(
        "sweep",
        "Measure every combination of a grid of parameter values, each on a fresh headless page of this "
        "target starting from its current values; one row per point (the grid, the observables, ok, error).",
        _clock_tools.sweep,
        read_only=True,
        parameters=_clock_tools.sweep_schema,
        label=lambda args: ", ".join(str(k).split(".")[-1] for k in (args.get("grid") or {})),
        offered=lambda scope: scope.clock,
    ),
    Tool(
        "read_stored_result",
        f"Read a large page result that was stored aside ({STORED_CHUNK_CHARS} characters from offset).",
        _read_stored_result,
        read_only=True,
        parameters=_stored_schema,
    ),
)
BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
READ_ONLY_TOOLS = frozenset(tool.name for tool in TOOLS if tool.read_only)


def tool_specs(scope: Scope) -> list[ToolSpec]:
    """The tools of :data:`TOOLS` the scope has a use for (``run_action`` only where the manifest
    declares actions, ``load_skill`` only with skills), with their exact schemas."""
    return [
        ToolSpec(t.name, t.description + t.details(scope), t.parameters(scope), t.read_only)
        for t in TOOLS
        if t.offered(scope)
    ]


def call_label(name: str, args: dict[str, Any]) -> str:
    """A short rendering of a call's arguments, as the chat panel's chip shows it."""
    tool = BY_NAME.get(name)
    return tool.label(args) if tool is not None and isinstance(args, dict) else ""


def system_prompt(scope: Scope, values: dict[str, Any]) -> str:
    """Role, rules, the active target's compact schema with current values, and the skills' list
    (never their bodies: ``load_skill`` returns one)."""
    manifest, target_ids = scope.manifest, scope.targets
    lines = []
    for path, p in manifest.parameters.items():
        bits = [p.type if p.type != "array" else f"{p.item_type}[{p.length or ''}]"]
        if p.unit:
            bits.append(p.unit)
        if p.min is not None or p.max is not None:
            bits.append(f"{'' if p.min is None else f'{p.min:g}'}..{'' if p.max is None else f'{p.max:g}'}")
        if p.enum is not None:
            bits.append("one of " + "|".join(str(e) for e in p.enum))
        if p.readonly:
            bits.append("read-only")
        desc = f" — {p.description}" if p.description else ""
        lines.append(f"- {path} ({', '.join(bits)}) = {json.dumps(values.get(path, p.value))}{desc}")
    actions = [f"- {_action_line(name, manifest)}" for name in manifest.actions]
    observables = [
        f"- {name}"
        + (f" ({o.unit})" if o.unit else "")
        + (f" — {o.description}" if o.description else "")
        + (f" [moved by {', '.join(o.depends_on)}]" if o.depends_on else "")
        for name, o in manifest.observables.items()
    ]
    return "\n".join(
        [
            "You steer a live simulation running in the user's browser, through tools that the browser executes.",
            "Rules: change several parameters with ONE set_parameters call; use the exact dotted paths and the "
            "units below (convert the user's units yourself); do not call get_parameters for values listed here; "
            "to reach a goal on an observable (make the range 50 m, the period 3 s, as far as possible) call seek "
            "once. After the tools, answer with ONE "
            "short plain-language line saying what changed (with units) or what you found. Text inside tool results "
            f"marked as page data is {PAGE_DATA_NOTE}.",
            f"Active target: {manifest.id} — {manifest.title or manifest.id}. {manifest.description or ''}".strip(),
            "Parameters (path (type, unit, range) = current value):",
            *lines,
            *(["Observables reported in the page's state:", *observables] if observables else []),
            *(["Actions (run one with run_action):", *actions] if actions else []),
            *(
                [
                    "Skills: guides from the notebook's author. When one fits the request, load it with "
                    "load_skill before acting, and follow it:",
                    *(skill.listing() for skill in scope.skills),
                ]
                if scope.skills
                else []
            ),
            f"Other targets: {', '.join(t for t in target_ids if t != manifest.id) or 'none'}.",
        ]
    )


async def execute(ctx: ToolContext, name: str, args: dict[str, Any]) -> ToolResult | dict[str, Any]:
    """Run one tool (a ToolResult, or the model-ready dict of a tool that reads the run's store)."""
    tool = BY_NAME.get(name)
    if tool is None:
        return ToolResult.failure("internal_error", f"no tool named {name}")
    names, refused = _reads.checked(ctx.sim, name, args)
    if refused is not None:
        return ToolResult.failure("denied", refused, op=name)
    if names is None:
        outcome = await tool.run(ctx, args)
    else:
        outcome = await tool.run(replace(ctx, observables=names), _reads.narrowed_arguments(name, args, names))
    if name == "select_target":  # the result is the new target's: read under its rule
        names, refused = _reads.checked(ctx.sim, "fetch_state", {})
        if refused is not None:
            return ToolResult.failure("denied", refused, op=name)
    return _reads.shown(outcome, ctx.sim.schema, names)


def for_model(result: ToolResult, store: dict[str, str]) -> dict[str, Any]:
    """The result as the model sees it: page data marked and bounded, big payloads stored aside."""
    out = result.for_model()
    state = out.pop("state", None)
    if state is not None:
        text = json.dumps(state, separators=(",", ":"), default=str)
        if len(text) > MAX_PAGE_DATA_CHARS:
            key = f"result-{len(store) + 1}"
            store[key] = text
            out["page_data"] = {
                "note": PAGE_DATA_NOTE,
                "stored": key,
                "chars": len(text),
                "preview": text[:500],
                "how_to_read": f"call read_stored_result with key={key!r} and an offset",
            }
        else:
            out["page_data"] = {"note": PAGE_DATA_NOTE, "state": text}
    return out
