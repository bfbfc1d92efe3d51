"""The offline planner: a deterministic, manifest-driven stand-in for a language model.

It maps plain requests onto the same tools a real model calls: set / increase / decrease / toggle /
show / hide / reset / switch target / "what is X", numbers with units converted to the manifest's
unit, relative changes ("faster", "double the gravity", "a bit less damping") and several changes
in one sentence. What it cannot map it says so, listing what it can do; it never guesses.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..manifest import Manifest, Parameter
from . import _units

LABEL = "Offline planner"

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "hundred": 100,
}  # fmt: skip
_SYNONYMS = {
    "colour": "color", "velocity": "speed", "radius": "size", "trails": "trail", "vector": "vectors",
    "number": "count", "amount": "count", "friction": "damping", "elevation": "angle",
    "heat": "temperature", "spring": "stiffness", "g": "gravity",
}  # fmt: skip
# Words that say "more" / "less" of something, with the parameter names they most likely mean.
_MORE = {"faster": ("speed", "velocity", "rate"), "bigger": ("size", "radius", "scale"),
         "larger": ("size", "radius", "scale"), "higher": ("height", "amplitude"), "heavier": ("mass",),
         "longer": ("length",), "stronger": ("strength", "gravity", "force"), "wider": ("width", "size")}  # fmt: skip
_LESS = {"slower": ("speed", "velocity", "rate"), "smaller": ("size", "radius", "scale"),
         "lower": ("height", "amplitude"), "lighter": ("mass",), "shorter": ("length",),
         "weaker": ("strength", "gravity", "force"), "narrower": ("width", "size")}  # fmt: skip
_HOW = {"fast": ("speed", "velocity"), "far": ("range", "distance"), "high": ("height", "max_height"),
        "long": ("length", "period", "flight_time"), "big": ("size", "radius"), "heavy": ("mass",),
        "many": ("count", "number", "clusters")}  # fmt: skip
_STOP_TOKENS = {"show", "enable", "use", "is", "has", "num", "n", "the", "of", "display"}
_ON = r"(?:show|display|enable|turn on|switch on|activate|add)"
_OFF = r"(?:hide|disable|turn off|switch off|deactivate|remove|no)"


@dataclass(frozen=True)
class PlannedCall:
    tool: str
    args: dict[str, Any]


@dataclass
class Plan:
    """What to call, or why nothing can be called. ``notes`` explain conversions for the reply."""

    calls: list[PlannedCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # parameters or observables the user asked about
    refusal: str | None = None


@dataclass(frozen=True)
class PlannerContext:
    manifest: Manifest
    values: Mapping[str, Any]
    targets: Sequence[tuple[str, str]] = ()  # (id, title) of every target


def plan(text: str, ctx: PlannerContext) -> Plan:
    """Map one request onto tool calls."""
    request = _normalise(text)
    if not request:
        return Plan(refusal=capabilities(ctx, "The request was empty."))
    if re.fullmatch(
        r"(?:help|\?|what can (?:i|you) (?:do|change|set)\??|list (?:the )?(?:parameters|options))", request
    ):
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=["*"])
    if re.search(r"\b(?:list|which|what) (?:targets|simulations)\b", request):
        return Plan(calls=[PlannedCall("list_targets", {})], asked=["targets"])
    switch = _target_switch(request, ctx)
    if switch is not None:
        return switch
    reset = r"(?:please )?(?:reset|restore (?:the )?defaults?|start over|back to (?:the )?defaults?)"
    if re.fullmatch(reset + r"(?: (?:it|everything|all|the simulation|please))?", request):
        return Plan(calls=[PlannedCall("reset", {})])
    question = _question(request, ctx)
    if question is not None:
        return question
    values: dict[str, Any] = {}
    notes: list[str] = []
    failed: list[str] = []
    for clause in _clauses(request):
        outcome = _clause(clause, ctx, {**ctx.values, **values})
        if isinstance(outcome, str):
            failed.append(outcome)
        else:
            path, value, note = outcome
            values[path] = value
            if note:
                notes.append(note)
    if failed:
        return Plan(refusal=capabilities(ctx, " ".join(failed)))
    if not values:
        return Plan(refusal=capabilities(ctx, f'I could not map "{text.strip()}" to a change.'))
    return Plan(calls=[PlannedCall("set_parameters", {"values": values})], notes=notes)


def capabilities(ctx: PlannerContext, reason: str) -> str:
    """A refusal that says why and lists what the planner can do with this target."""
    params = ", ".join(_describe_param(p) for p in ctx.manifest.parameters.values() if not p.readonly)
    targets = ", ".join(t for t, _ in ctx.targets) or ctx.manifest.id
    observables = ", ".join(ctx.manifest.observables) or "none declared"
    return (
        f"{LABEL}: {reason} I only understand simple requests. I can set {params}; "
        'make relative changes ("faster", "double the size", "a bit less damping"); show, hide or toggle '
        f'switches; reset; switch target ({targets}); and answer "what is <parameter>" '
        f"(observables: {observables}). For free-form requests use a real model (Agent(sim, model=...))."
    )


# -- parsing ---------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    out = text.strip().lower().replace("colour", "color").replace("’", "'")
    out = re.sub(r"[!.]+$", "", out).strip()
    return re.sub(r"\s+", " ", out)


def _clauses(request: str) -> list[str]:
    parts = re.split(r"\s*(?:,|;|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b|\bplus\b)\s*", request)
    return [p for p in (x.strip() for x in parts) if p]


def _tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z][a-z0-9_]*", text)
    out = []
    for w in words:
        w = _SYNONYMS.get(w, w)
        out.append(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _core(param: Parameter) -> list[str]:
    tokens = [_SYNONYMS.get(t, t) for t in param.name.lower().split("_")]
    core = [t[:-1] if len(t) > 4 and t.endswith("s") and not t.endswith("ss") else t for t in tokens]
    return [t for t in core if t not in _STOP_TOKENS] or core


def _find_params(clause: str, manifest: Manifest) -> list[Parameter]:
    """Parameters the clause names (by path, leaf name, or all the leaf's words)."""
    tokens = set(_tokens(clause))
    exact = [
        p for p in manifest.parameters.values() if p.path in clause or re.search(rf"\b{re.escape(p.name)}\b", clause)
    ]
    if exact:
        return _prefer_path(exact, clause)
    hits = [p for p in manifest.parameters.values() if set(_core(p)) <= tokens]
    if len(hits) > 1:  # prefer the parameters whose every word is named over those named by one word
        best = max(len(_core(p)) for p in hits)
        hits = [p for p in hits if len(_core(p)) == best]
    return hits


def _prefer_path(found: list[Parameter], clause: str) -> list[Parameter]:
    by_path = [p for p in found if p.path in clause]
    return by_path or found


def _number(clause: str) -> tuple[float, str | None] | None:
    """The first number in the clause and the unit written after it (if any)."""
    units = "|".join(re.escape(u) for u in _units.known_units())
    match = re.search(rf"(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*({units})?(?![a-z0-9])", clause)
    if match:
        return float(match.group(1)), match.group(2)
    for word, number in _NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", clause):
            after = re.search(rf"\b{word}\s+({units})(?![a-z0-9])", clause)
            return float(number), after.group(1) if after else None
    return None


def _clause(clause: str, ctx: PlannerContext, current: Mapping[str, Any]) -> tuple[str, Any, str] | str:
    """One clause -> (path, value, note) or the reason it could not be mapped."""
    manifest = ctx.manifest
    params = _find_params(clause, manifest)
    if len(params) > 1 and re.search(rf"\b(?:{_ON}|{_OFF}|toggle|flip)\b", clause):
        params = [p for p in params if p.type == "boolean"] or params  # "show the velocity vectors"
    if len(params) > 1:
        names = " or ".join(p.path for p in params)
        return f'"{clause}" could mean {names}; name one of them.'
    if params and params[0].readonly:
        return f"{params[0].path} is read-only."
    param = params[0] if params else None

    # switches: show / hide / toggle / on / off
    if param is None or param.type == "boolean":
        switch = _switch(clause, manifest, param, current)
        if switch is not None:
            return switch if isinstance(switch, str) else (switch[0], switch[1], "")

    # an enum value named on its own: "make it red", "use rk4"
    if param is None:
        enum_hit = _enum_value(clause, manifest)
        if enum_hit is not None:
            return enum_hit
    if param is not None and param.enum is not None:
        for option in param.enum:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option.lower())}\b", clause):
                return param.path, option, ""

    # relative changes
    relative = _relative(clause, manifest, param, current)
    if relative is not None:
        return relative

    if param is None:
        param = _by_unit(clause, manifest)
    if param is None:
        return f'I could not tell which parameter "{clause}" is about.'
    if param.type == "string":
        quoted = re.search(r"['\"](.+?)['\"]", clause) or re.search(r"\bto\s+(\S+)$", clause)
        if quoted:
            return param.path, quoted.group(1), ""
        return f'I could not find the value for {param.path} in "{clause}".'
    if param.type == "array":
        numbers = re.findall(r"-?\d+(?:\.\d+)?", clause)
        if param.length and len(numbers) == param.length:
            return param.path, [float(n) for n in numbers], ""
        return f'{param.path} needs {param.length or "a list of"} numbers, as in "set {param.name} to 1, 2, 3".'
    if param.type == "boolean":
        word = re.search(r"\b(true|false|on|off|yes|no)\b", clause)
        if word:
            return param.path, word.group(1) in ("true", "on", "yes"), ""
        return f'I could not tell whether to turn {param.path} on or off in "{clause}".'
    found = _number(clause)
    if found is None:
        return f'I found {param.path} but no number in "{clause}".'
    number, unit = found
    return _with_unit(param, number, unit)


def _with_unit(param: Parameter, number: float, unit: str | None) -> tuple[str, Any, str] | str:
    note = ""
    if unit and param.unit and not _units.same(unit, param.unit):
        converted = _units.convert(number, unit, param.unit)
        if converted is None:
            return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
        note = f"{_fmt(number)} {unit} = {_fmt(converted)} {param.unit}"
        number = converted
    value: Any = round(number) if param.type == "integer" else _tidy(number)
    return param.path, value, note


_GOAL_WORDS = re.compile(r"\b(?:land|lands|landing|reach|hit|aim|away|range|so that|until|target)\b")


def _by_unit(clause: str, manifest: Manifest) -> Parameter | None:
    """The one number parameter whose unit measures what the clause's unit measures ("launch from 10 m").

    Not for goals ("land at 50 m"): reaching an observable takes a model that reads results back.
    """
    if _GOAL_WORDS.search(clause) or any(re.search(rf"\b{re.escape(o)}\b", clause) for o in manifest.observables):
        return None
    found = _number(clause)
    if found is None or found[1] is None:
        return None
    wanted = _units.dimension(found[1])
    matches = [
        p
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and wanted and _units.dimension(p.unit) == wanted
    ]
    return matches[0] if len(matches) == 1 else None


def _switch(
    clause: str, manifest: Manifest, param: Parameter | None, current: Mapping[str, Any]
) -> tuple[str, bool] | str | None:
    on = re.search(rf"\b{_ON}\b", clause)
    off = re.search(rf"\b{_OFF}\b", clause)
    toggle = re.search(r"\b(?:toggle|flip)\b", clause)
    if not (on or off or toggle):
        return None
    if param is None:
        booleans = [p for p in manifest.parameters.values() if p.type == "boolean" and not p.readonly]
        stripped = re.sub(rf"\b(?:{_ON}|{_OFF}|toggle|flip|the|a|an)\b", " ", clause)
        matches = [p for p in booleans if set(_core(p)) & set(_tokens(stripped))]
        if len(matches) > 1:
            return f'"{clause}" could mean ' + " or ".join(p.path for p in matches) + "."
        if not matches:
            return None
        param = matches[0]
    if param.type != "boolean":
        return None
    if toggle:
        return param.path, not bool(current.get(param.path, param.value))
    if on and off:  # "turn off the trail and show vectors" was split already; here the later word wins
        return param.path, on.start() > off.start()
    return param.path, bool(on)


def _enum_value(clause: str, manifest: Manifest) -> tuple[str, Any, str] | None:
    hits = []
    for p in manifest.parameters.values():
        if p.enum is None or p.readonly:
            continue
        for option in p.enum:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option.lower())}\b", clause):
                hits.append((p.path, option, ""))
    return hits[0] if len(hits) == 1 else None


def _relative(
    clause: str, manifest: Manifest, param: Parameter | None, current: Mapping[str, Any]
) -> tuple[str, Any, str] | str | None:
    factor: float | None = None
    delta: tuple[float, str | None] | None = None
    direction = 0
    if re.search(r"\b(?:double|twice)\b", clause):
        factor = 2.0
    elif re.search(r"\b(?:triple|three times)\b", clause):
        factor = 3.0
    elif re.search(r"\b(?:halve|half)\b", clause):
        factor = 0.5
    more = re.search(
        r"\b(increase|raise|more|up|add|bigger|larger|faster|higher|heavier|longer|stronger|wider)\b", clause
    )
    less = re.search(
        r"\b(decrease|reduce|lower|less|down|smaller|slower|lighter|shorter|weaker|narrower|cut)\b", clause
    )
    if factor is None and (more or less):
        direction = 1 if more else -1
        by = re.search(r"\bby\s+(-?\d+(?:\.\d+)?)\s*(%|percent)?", clause)
        if by and by.group(2):
            factor = 1 + direction * float(by.group(1)) / 100
        elif by:
            found = _number(clause[by.start() :])
            delta = (direction * found[0], found[1]) if found else None
        elif re.search(r"\b(?:a (?:little|bit|touch)|slightly|a tad)\b", clause):
            factor = 1.1 if direction > 0 else 1 / 1.1
        elif re.search(r"\b(?:much|a lot|way|far)\b", clause):
            factor = 2.0 if direction > 0 else 0.5
        else:
            factor = 1.25 if direction > 0 else 0.8
    if factor is None and delta is None:
        return None
    if param is None:
        said = more or less
        word = said.group(1) if said else ""
        hints = _MORE.get(word) or _LESS.get(word) or ()
        candidates = [
            p for p in manifest.parameters.values()
            if p.type in ("number", "integer") and not p.readonly and any(h in p.name for h in hints)
        ]  # fmt: skip
        if len(candidates) != 1:
            return None if not hints else f'"{clause}": I could not tell which parameter to change.'
        param = candidates[0]
    if param.type not in ("number", "integer"):
        return f"{param.path} is a {param.type}; I can only scale numbers."
    now = current.get(param.path, param.value)
    if not isinstance(now, int | float) or isinstance(now, bool):
        return f"{param.path} has no numeric current value."
    if delta is not None:
        amount, unit = delta
        if unit and param.unit:
            converted = _units.convert(amount, unit, param.unit)
            if converted is None:
                return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
            amount = converted
        target = now + amount
    else:
        assert factor is not None
        target = now * factor
        if now == 0 and direction:
            step = param.step or (
                (param.max - param.min) / 10 if param.max is not None and param.min is not None else 1
            )
            target = direction * step
    note = ""
    if param.max is not None and target > param.max:
        target, note = param.max, f"{param.path} is capped at its maximum {_fmt(param.max)}"
    if param.min is not None and target < param.min:
        target, note = param.min, f"{param.path} is held at its minimum {_fmt(param.min)}"
    value: Any = round(target) if param.type == "integer" else _tidy(target)
    return param.path, value, note


def _question(request: str, ctx: PlannerContext) -> Plan | None:
    match = re.match(
        r"^(?:what(?:'s| is| are)|what's|how (?:fast|far|high|long|big|heavy|many|much)|tell me|show me|which|"
        r"where|is it|get|read)\b(.*?)\??$",
        request,
    )
    if not match:
        return None
    subject = match.group(1)
    how = re.match(r"how (fast|far|high|long|big|heavy|many)", request)
    if how:  # "how fast is it?" asks about whatever measures speed
        subject += " " + " ".join(_HOW[how.group(1)])
    names: list[str] = []
    for name, _obs in ctx.manifest.observables.items():
        words = set(_tokens(name.replace("_", " ")))
        if re.search(rf"\b{re.escape(name.lower())}\b", subject) or (words and words <= set(_tokens(subject))):
            names.append(name)
    params = _find_params(subject, ctx.manifest)
    if how and len(params) > 1:
        params = params[:1]
    if names:
        return Plan(calls=[PlannedCall("get_state", {})], asked=names + [p.path for p in params])
    if params:
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=[p.path for p in params])
    if re.search(r"\b(?:state|happening|going on|status)\b", subject):
        return Plan(calls=[PlannedCall("get_state", {})], asked=["*state"])
    return Plan(refusal=capabilities(ctx, f'I do not know what "{subject.strip()}" refers to.'))


def _target_switch(request: str, ctx: PlannerContext) -> Plan | None:
    match = re.search(
        r"\b(?:switch|change|go|move|jump)(?: over)? to (?:the )?(.+?)(?: simulation| target| sim)?$|"
        r"^(?:open|load|use|start) (?:the )?(.+?)(?: simulation| target| sim)$",
        request,
    )
    if not match:
        return None
    wanted = (match.group(1) or match.group(2) or "").strip()
    if _find_params(wanted, ctx.manifest):
        return None  # "change to ..." about a parameter, not a target
    for target_id, title in ctx.targets:
        if wanted in (target_id.lower(), title.lower()) or wanted.rstrip("s") == target_id.lower().rstrip("s"):
            return Plan(calls=[PlannedCall("select_target", {"target": target_id})])
    for target_id, title in ctx.targets:
        if set(_tokens(wanted)) & (set(_tokens(title)) | {target_id.lower()}):
            return Plan(calls=[PlannedCall("select_target", {"target": target_id})])
    known = ", ".join(t for t, _ in ctx.targets) or "none"
    return Plan(refusal=f'{LABEL}: there is no target "{wanted}". Available: {known}.')


# -- replies ---------------------------------------------------------------------------------


def summarise(plan_: Plan, results: Sequence[Mapping[str, Any]], ctx: PlannerContext) -> str:
    """One short line saying what changed (or what was asked), from the tools' results."""
    parts: list[str] = []
    for call, result in zip(plan_.calls, results, strict=False):
        if not result.get("ok", False):
            error = result.get("error") or {}
            hint = f" ({error['hint']})" if error.get("hint") else ""
            parts.append(f"could not {call.tool.replace('_', ' ')}: {error.get('message', 'failed')}{hint}")
            continue
        if call.tool == "set_parameters":
            changed = result.get("changed") or {}
            said = [f"{_short(path, ctx)} to {_with_unit_text(v)}" for path, v in changed.items()]
            parts.append("set " + _join(said))
            if "no view" in str(result.get("message", "")):
                parts.append("no view is open, so it applies when the widget is displayed")
        elif call.tool == "reset":
            parts.append("reset every parameter to its default")
        elif call.tool == "select_target":
            parts.append(f"switched to {result.get('target') or call.args.get('target')}")
        elif call.tool == "list_targets":
            parts.append("targets: " + ", ".join(t["id"] for t in result.get("targets") or []))
        elif call.tool == "get_parameters":
            parts.append(_answer_parameters(plan_.asked, result, ctx))
        elif call.tool == "get_state":
            parts.append(_answer_state(plan_.asked, result, ctx))
    text = "; ".join(p for p in parts if p)
    if plan_.notes:
        text += " (" + "; ".join(plan_.notes) + ")"
    return f"{LABEL}: {text[:1].upper() + text[1:]}."


def _answer_parameters(asked: list[str], result: Mapping[str, Any], ctx: PlannerContext) -> str:
    values = result.get("values") or {}
    if asked == ["*"]:
        params = ", ".join(_describe_param(p) for p in ctx.manifest.parameters.values())
        return f"you can change {params}"
    return _join([f"{_short(p, ctx)} is {_value_text(values.get(p), ctx.manifest.parameters[p].unit)}" for p in asked])


def _page_state(result: Mapping[str, Any]) -> dict[str, Any]:
    """The state in a tool result: bare, or marked as page data (a JSON string) by the agent's tools."""
    state = result.get("state")
    page = result.get("page_data")
    if state is None and isinstance(page, Mapping):
        text = page.get("state") or page.get("preview")
        try:
            state = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            state = None
    return dict(state) if isinstance(state, Mapping) else {}


def _answer_state(asked: list[str], result: Mapping[str, Any], ctx: PlannerContext) -> str:
    state = _page_state(result)
    if asked == ["*state"]:
        shown = json.dumps(state)[:300]
        return f"the target reports {shown}"
    said = []
    for name in asked:
        if name in ctx.manifest.observables:
            unit = ctx.manifest.observables[name].unit
            value = state.get(name, _dig(state, name))
            said.append(
                f"{name} is {_value_text(value, unit)}" if value is not None else f"the target did not report {name}"
            )
        elif name in ctx.manifest.parameters:
            said.append(
                f"{_short(name, ctx)} is {_value_text(ctx.values.get(name), ctx.manifest.parameters[name].unit)}"
            )
    return _join(said) + " (as reported by the page)"


def _dig(state: Mapping[str, Any], name: str) -> Any:
    for key in ("observables", "values", "params"):
        inner = state.get(key)
        if isinstance(inner, Mapping) and name in inner:
            return inner[name]
    return None


def _describe_param(p: Parameter) -> str:
    unit = f" ({p.unit})" if p.unit else ""
    return f"{p.name}{unit}"


def _short(path: str, ctx: PlannerContext) -> str:
    leaf = path.rsplit(".", 1)[-1]
    same = [p for p in ctx.manifest.parameters.values() if p.name == leaf]
    return leaf if len(same) == 1 else path


def _with_unit_text(changed: Any) -> str:
    if isinstance(changed, Mapping):
        return _value_text(changed.get("value"), changed.get("unit"))
    return _value_text(changed, None)


def _value_text(value: Any, unit: str | None) -> str:
    text = _fmt(value) if isinstance(value, float) else json.dumps(value) if not isinstance(value, str) else value
    return f"{text} {unit}" if unit and value is not None else text


def _fmt(number: Any) -> str:
    if isinstance(number, float):
        return f"{number:.4g}" if not number.is_integer() else f"{number:g}"
    return str(number)


def _tidy(number: float) -> float:
    """Round away float noise: 8.333333333 -> 8.333."""
    if number == 0 or not math.isfinite(number):
        return number
    digits = 4 - math.floor(math.log10(abs(number)))
    return round(number, max(digits, 0))


def _join(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
