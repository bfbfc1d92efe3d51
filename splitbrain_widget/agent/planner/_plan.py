"""The offline planner: a deterministic, manifest-driven stand-in for a language model.

It maps plain requests onto the same tools a real model calls: set / increase / decrease / toggle /
show / hide / reset / switch target / "what is X" / the manifest's actions ("press run", "run the
Launch action"), numbers with units converted to the manifest's
unit, relative changes ("faster", "double the gravity", "a bit less damping") and several changes
in one sentence, and goals on an observable ("make it land at 50 m", "as far as possible by changing
the angle", "keeping that drag, make it land 2 km away": one ``seek`` call, read in :mod:`._goals`).
What it cannot map it says so, listing what it can do; it never guesses: a wrong change is far worse
than a refusal, so when the parameter, the value, the unit or the direction of a switch is not certain
it refuses (or, for the parameter a goal should vary, asks).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core import _units
from ...manifest._model import Manifest, Parameter, ParameterError
from . import _goals

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
# Words that say "more" / "less" of something, with the parameter name words they surely mean. No
# hint for "higher" / "lower" / "stronger gravity": which parameter makes a flight higher is a guess.
_MORE = {"faster": ("speed", "rate"), "bigger": ("size",), "larger": ("size",), "heavier": ("mass",),
         "longer": ("length",), "stronger": ("strength", "force"), "wider": ("width",)}  # fmt: skip
_LESS = {"slower": ("speed", "rate"), "smaller": ("size",), "lighter": ("mass",), "shorter": ("length",),
         "weaker": ("strength", "force"), "narrower": ("width",)}  # fmt: skip
_MORE_RE = re.compile(r"\b(increase|raise|more|up|add|bigger|larger|faster|higher|heavier|longer|stronger|wider)\b")
_LESS_RE = re.compile(
    r"\b(decrease|reduce|lower|less|down|smaller|slower|lighter|shorter|weaker|narrower|cut|subtract)\b"
)
_FACTORS = ((r"double|twice", 2.0), (r"triple|thrice|three times", 3.0), (r"halve|half", 0.5))
# "how <word>" questions: the words that name such a measurement and the units it is measured in.
_HOW = {"fast": (("speed", "fast"), ("m/s",)), "far": (("range", "distance", "far"), ("m",)),
        "high": (("height", "high", "highest", "altitude", "apex", "tall"), ("m",)),
        "long": (("length", "long", "time", "duration", "period"), ("m", "s")),
        "big": (("size", "big", "diameter"), ("m",)), "heavy": (("mass", "weight", "heavy"), ("kg",)),
        "many": (("count", "many"), ())}  # fmt: skip
# Outcome questions ("how high did it get") ask what the page measured, never a parameter.
_OUTCOME = re.compile(r"\b(?:did|was|were|got|reached|went|flew|travell?ed|landed|ended|so far|has|had)\b")
_STOP_TOKENS = {"show", "hide", "enable", "disable", "use", "is", "has", "num", "n", "the", "of", "display", "no"}
# Switch words. Those about the thing ("show the trail") flip for a switch whose name is negative
# ("hide_labels"); those about the switch itself ("turn hide_labels on") never do.
_SEEN_ON = r"show|shows|showing|shown|display|displayed|displaying|visible|unhide|add|draw|drawing"
_SEEN_OFF = r"hide|hides|hiding|hidden|invisible|remove|without|no|none"
_SWITCH_ON = r"enable|enabled|enabling|activate|activated|on|true|yes"
_SWITCH_OFF = r"disable|disabled|disabling|deactivate|deactivated|off|false"
_NEGATION = re.compile(r"\b(?:don't|dont|do not|does not|doesn't|not|never|no longer|stop|stopped|avoid)\b")
_NEGATIVE_NAMES = {"hide", "hidden", "no", "disable", "disabled", "without", "suppress"}
_TOGGLE = re.compile(r"\b(?:toggle|flip)\b")
# Words that may stand beside a switch's own name when the name is the whole request ("show trail please").
_POLITE = {"please", "now", "the", "a", "an", "again", "just", "kindly", "ok", "okay", "thanks", "can", "you",
           "could", "would", "i", "want", "to", "me"}  # fmt: skip
# Words that may follow a number without being a unit ("speed 12 please").
_AFTER_NUMBER = {"please", "now", "again", "instead", "then", "thanks", "thank", "too", "as", "well", "for",
                 "at", "on", "with", "to", "if", "so", "ok", "okay", "exactly", "only", "just", "or", "and",
                 "the", "a", "an", "it", "this", "right", "away", "immediately"}  # fmt: skip
_RESET_WORDS = {"to", "the", "all", "everything", "it", "its", "back", "default", "defaults", "value", "values",
                "setting", "settings", "parameter", "parameters", "original", "initial", "simulation", "sim",
                "please", "now", "again", "state", "every", "of", "them", "thing", "things", "and", "start",
                "beginning", "scratch", "for", "me", "whole", "entire", "factory", "over"}  # fmt: skip
_BOUND = re.compile(
    r"\b(?:above|below|over|under|beyond|at least|at most|more than|less than|greater than|fewer than|up to)\s*$"
)
# Clauses of these words alone carry no request ("ok, ...", "..., thanks").
_GREETINGS = {"ok", "okay", "please", "thanks", "thank", "you", "now", "so", "well", "hi", "hello", "hey"}
_NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# "twice as fast": the adjective of a comparative of _MORE, whose hints it shares.
_AS_ADJECTIVES = {"fast": "faster", "big": "bigger", "large": "larger", "heavy": "heavier", "long": "longer",
                  "strong": "stronger", "wide": "wider"}  # fmt: skip
# "keeping that drag", "with the same drag", "without changing the drag": a parameter the request keeps.
_KEEP = re.compile(
    r"^(?:(?:while|and) )?(?:keep|keeping|hold|holding|leave|leaving|fix|fixing) (?P<what>.+?)"
    r"(?: (?:fixed|constant|unchanged|the same|as it is|as is|where it is|alone|as before|as they are))?$|"
    r"^(?:(?:while|and) )?(?:with|at) the same (?P<same>.+)$|"
    r"^(?:(?:while|and) )?without (?:changing|touching|altering|moving) (?P<without>.+)$"
)
_KEEP_FILLER = {"the", "that", "this", "these", "those", "its", "my", "same", "current", "value", "values", "setting"}
# "stop the ball", "make it stop": a parameter whose description says that 0 stops it.
_HALT = re.compile(
    r"^(?:please )?(?:stop|halt|freeze) (?:it|the (?P<thing>[a-z]+))(?: (?:moving|from moving|in place|where it is))?$|"
    r"^(?:please )?make (?:it|the (?P<made>[a-z]+)) (?:stop|halt|freeze|stand still)(?: moving)?$"
)
_HALTS = re.compile(r"\b(?:0|zero) (?:stops|halts|freezes)\b")
# CSS colour names: a colour the user names that is not among a colour parameter's options is refused
# as such ("cyan is not one of the colours"), not as a request not understood.
_CSS_COLOURS = frozenset({
    "aliceblue", "antiquewhite", "aqua", "aquamarine", "azure", "beige", "bisque", "black", "blanchedalmond",
    "blue", "blueviolet", "brown", "burlywood", "cadetblue", "chartreuse", "chocolate", "coral", "cornflowerblue",
    "cornsilk", "crimson", "cyan", "darkblue", "darkcyan", "darkgoldenrod", "darkgray", "darkgreen", "darkgrey",
    "darkkhaki", "darkmagenta", "darkolivegreen", "darkorange", "darkorchid", "darkred", "darksalmon",
    "darkseagreen", "darkslateblue", "darkslategray", "darkslategrey", "darkturquoise", "darkviolet", "deeppink",
    "deepskyblue", "dimgray", "dimgrey", "dodgerblue", "firebrick", "floralwhite", "forestgreen", "fuchsia",
    "gainsboro", "ghostwhite", "gold", "goldenrod", "gray", "green", "greenyellow", "grey", "honeydew", "hotpink",
    "indianred", "indigo", "ivory", "khaki", "lavender", "lavenderblush", "lawngreen", "lemonchiffon", "lightblue",
    "lightcoral", "lightcyan", "lightgoldenrodyellow", "lightgray", "lightgreen", "lightgrey", "lightpink",
    "lightsalmon", "lightseagreen", "lightskyblue", "lightslategray", "lightslategrey", "lightsteelblue",
    "lightyellow", "lime", "limegreen", "linen", "magenta", "maroon", "mediumaquamarine", "mediumblue",
    "mediumorchid", "mediumpurple", "mediumseagreen", "mediumslateblue", "mediumspringgreen", "mediumturquoise",
    "mediumvioletred", "midnightblue", "mintcream", "mistyrose", "moccasin", "navajowhite", "navy", "oldlace",
    "olive", "olivedrab", "orange", "orangered", "orchid", "palegoldenrod", "palegreen", "paleturquoise",
    "palevioletred", "papayawhip", "peachpuff", "peru", "pink", "plum", "powderblue", "purple", "rebeccapurple",
    "red", "rosybrown", "royalblue", "saddlebrown", "salmon", "sandybrown", "seagreen", "seashell", "sienna",
    "silver", "skyblue", "slateblue", "slategray", "slategrey", "snow", "springgreen", "steelblue", "tan", "teal",
    "thistle", "tomato", "turquoise", "violet", "wheat", "white", "whitesmoke", "yellow", "yellowgreen"
})  # fmt: skip


# "press run", "click reset the simulation", "run the launch action": a button of the page, by its action.
_POLITE_LEAD = r"^(?:(?:please|can you|could you|kindly|now) )+"  # what may come before a request's verb
_ACTION_VERB = re.compile(
    _POLITE_LEAD.replace("+", "*", 1) + r"(?P<verb>press|click|hit|push|tap|trigger|run|do|perform|fire)"
    r"(?: on)? (?:the )?(?P<what>.+?)(?: (?:button|action))?$"
)
_BUTTON_VERBS = {"press", "click", "hit", "push", "tap"}  # these name a button: no action matching is a refusal
_ACTION_FILLER = {"the", "a", "an", "it", "please", "now", "again", "simulation", "sim", "page", "button", "action",
                  "for", "me", "once", "this", "that"}  # fmt: skip


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
    aim: str = ""  # a seek's goal in the request's words, when the call's goal is not ("at least 0.95")
    question: str | None = None  # asked instead of calling (a skill's confirm_before), the reply as it is


@dataclass(frozen=True)
class PlannerContext:
    manifest: Manifest
    values: Mapping[str, Any]
    targets: Sequence[tuple[str, str]] = ()  # (id, title) of every target


@dataclass(frozen=True)
class _Number:
    """The number in a clause, the unit written after it (case kept) and where both are."""

    value: float
    unit: str | None
    start: int
    unit_start: int
    end: int
    word: str | None  # the word after the number when it is not a unit
    others: int  # how many more numbers the clause holds outside this one and its unit


def plan(text: str, ctx: PlannerContext) -> Plan:
    """Map one request onto tool calls."""
    raw = _normalise(text)
    request = raw.lower()
    if len(request) != len(raw):  # lower() changed the length (rare letters): keep no case at all
        raw = request
    if not request:
        return Plan(refusal=capabilities(ctx, "The request was empty."))
    if re.fullmatch(
        r"(?:help|\?|what can (?:i|you) (?:do|change|set)\??|list (?:the )?(?:parameters|options))", request
    ):
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=["*"])
    if re.search(r"\b(?:list|which|what) (?:targets|simulations)\b", request):
        return Plan(calls=[PlannedCall("list_targets", {})], asked=["targets"])
    action = _action(request, ctx, verb_led=True)
    if action is not None:
        return action
    switch = _target_switch(request, ctx)
    if switch is not None:
        return switch
    if _is_reset(request, ctx):
        return Plan(calls=[PlannedCall("reset", {})])
    action = _action(request, ctx, verb_led=False)  # "launch the projectile": the action's name is the verb
    if action is not None:
        return action
    question = _question(request, ctx)
    if question is not None:
        return question
    values: dict[str, Any] = {}
    notes: list[str] = []
    failed: list[tuple[str, str | None]] = []  # (why, the clause when it may only restate a goal)
    goals: list[_goals.Goal] = []
    kept: list[str] = []
    for clause, clause_raw in _goals.merge_vary(_clauses(request, raw)):
        if set(clause.split()) <= _GREETINGS:  # "ok, set the speed to 12"
            continue
        held = _kept(clause, ctx.manifest)
        if held is not None:  # "keeping that drag": not set, not varied
            kept += held
            continue
        goal = _goals.read(clause, clause_raw, ctx)
        if isinstance(goal, _goals.Goal):
            goals.append(goal)
            continue
        outcome = goal if goal is not None else _clause(clause, clause_raw, ctx, {**ctx.values, **values})
        if isinstance(outcome, str):
            failed.append((outcome, clause if goal is None else None))
        elif outcome[0] in values and values[outcome[0]] != outcome[1]:
            failed.append((f"{outcome[0]} was asked for twice, with different values.", None))
        else:
            path, value, note = outcome
            values[path] = value
            if note:
                notes.append(note)
    if len(goals) == 1:  # "make the flock fly the same way, a polarization of at least 0.95": one goal, said twice
        said = [c for _, c in failed if c is not None and _goals.restates(c, goals[0], ctx)]
        failed = [(why, c) for why, c in failed if c not in said]
        notes += [f'"{c}" read as the {goals[0].observable} goal' for c in said]
    failed += [(f"{path} is both kept and set in one request; say which.", None) for path in kept if path in values]
    if failed:
        return Plan(refusal=capabilities(ctx, " ".join(why for why, _ in failed)))
    if goals:
        return _goal_plan(goals, values, notes, ctx, kept)
    if not values:
        if kept:
            reason = f"Keeping {_join(kept)} as it is needs no change; say what to change."
            return Plan(refusal=capabilities(ctx, reason))
        return Plan(refusal=capabilities(ctx, f'I could not map "{text.strip()}" to a change.'))
    return Plan(calls=[PlannedCall("set_parameters", {"values": values})], notes=notes)


def _goal_plan(
    goals: list[_goals.Goal], values: dict[str, Any], notes: list[str], ctx: PlannerContext, kept: Sequence[str] = ()
) -> Plan:
    """The request's changes (one set_parameters call) first, then the one seek: the goal holds for them."""
    if len(goals) > 1:
        return Plan(refusal=capabilities(ctx, "I can reach one goal at a time; ask for them one by one."))
    goal = goals[0]
    seek = _goals.resolve(goal, values, ctx, kept)
    if isinstance(seek, _goals.Ask):
        return Plan(refusal=seek.text)
    if isinstance(seek, str):
        return Plan(refusal=capabilities(ctx, seek))
    try:  # the seek is for the request's changes: when the manifest refuses one, seek nothing
        ctx.manifest.coerce_many(values)
    except ParameterError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        aim = _goals._aim(goal.observable, goal.goal, ctx.manifest, goal.aim)
        return Plan(refusal=f"{LABEL}: Could not set parameters: {exc.message}{hint}; so I did not {aim} either.")
    calls = [PlannedCall("set_parameters", {"values": values})] if values else []
    held = [f"{_short(k, ctx)} kept at {_value_text(ctx.values.get(k), ctx.manifest.parameters[k].unit)}" for k in kept]
    notes = [*notes, *held, *filter(None, [goal.note])]
    return Plan(calls=[*calls, seek], notes=notes, asked=[goal.observable], aim=goal.aim)


def capabilities(ctx: PlannerContext, reason: str) -> str:
    """A refusal that says why and lists what the planner can do with this target."""
    params = ", ".join(_describe_param(p) for p in ctx.manifest.parameters.values() if not p.readonly)
    targets = ", ".join(t for t, _ in ctx.targets) or ctx.manifest.id
    observables = ", ".join(ctx.manifest.observables) or "none declared"
    actions = ", ".join(ctx.manifest.actions)
    run = f'run an action ("press <action>": {actions}); ' if actions else ""
    return (
        f"{LABEL}: {reason} I only understand simple requests. I can set {params}; {run}"
        'make relative changes ("faster", "double the size", "a bit less damping"); show, hide or toggle '
        f'switches; reset; switch target ({targets}); answer "what is <parameter>" (observables: {observables}); '
        'and reach a goal on an observable ("make the <observable> 50 m", "as far as possible by changing the '
        '<parameter>"). For free-form requests use a real model (Agent(sim, model=...)).'
    )


# -- parsing ---------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    """Trimmed, one space between words, "colour" -> "color"; the case is kept for units (mm / Mm)."""
    out = re.sub(r"colour", "color", text.strip().replace("’", "'"), flags=re.IGNORECASE)
    out = re.sub(r"[!.]+$", "", out).strip()
    return re.sub(r"\s+", " ", out)


def _clauses(request: str, raw: str) -> list[tuple[str, str]]:
    """The request split into clauses, each lower-cased and as written."""
    # "but" and "except" split too: "show the trail but make it red" is two requests, and "anything but
    # red" leaves "anything", which is refused, instead of setting red
    separator = re.compile(
        r"\s*(?:,|;|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b|\bplus\b|\bbut\b|\bexcept\b)\s*"
    )
    out, start = [], 0
    for match in [*separator.finditer(request), None]:
        end = match.start() if match else len(request)
        if request[start:end].strip():
            out.append((request[start:end].strip(), raw[start:end].strip()))
        start = match.end() if match else end
    return out


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


def _forms(param: Parameter) -> list[str]:
    """The ways a request names a parameter itself, longest first: path, name, its words, label."""
    name = param.name.lower()
    words = name.replace("_", " ")
    forms = {param.path.lower(), name, words}
    if "." in param.path:
        group = param.path.lower().rsplit(".", 2)[-2]
        forms |= {f"{group} {words}", f"{group} {name}"}
    if param.label:
        forms.add(_normalise(param.label).lower())
    return sorted(forms, key=len, reverse=True)


def _mentions(clause: str, manifest: Manifest, skip: tuple[int, int] | None) -> list[tuple[Parameter, int, int]]:
    """Parameters the clause names by one of their forms, with the span of the longest such mention.

    A mention inside a longer mention of another parameter does not count ("perception" inside
    "show perception"), nor one inside the unit after the number ("2 x" is a time scale, not probe x).
    """
    found: list[tuple[Parameter, int, int]] = []
    for p in manifest.parameters.values():
        best: tuple[int, int] | None = None
        for form in _forms(p):
            for m in re.finditer(rf"(?<![\w.]){re.escape(form)}(?!\w)", clause):
                if skip and m.start() < skip[1] and m.end() > skip[0]:
                    continue
                if best is None or m.end() - m.start() > best[1] - best[0]:
                    best = (m.start(), m.end())
        if best:
            found.append((p, *best))
    return [f for f in found if not any(o[1] <= f[1] and f[2] <= o[2] and o[2] - o[1] > f[2] - f[1] for o in found)]


def _find_params(clause: str, manifest: Manifest, skip: tuple[int, int] | None = None) -> list[Parameter]:
    """Parameters the clause names (by path, name, label, or all the leaf's words)."""
    mentioned = _mentions(clause, manifest, skip)
    if mentioned:
        return [p for p, _, _ in mentioned]
    if skip:
        clause = clause[: skip[0]] + " " + clause[skip[1] :]
    tokens = set(_tokens(clause))
    hits = [p for p in manifest.parameters.values() if set(_core(p)) <= tokens]
    if len(hits) > 1:  # prefer the parameters whose every word is named over those named by one word
        best = max(len(_core(p)) for p in hits)
        hits = [p for p in hits if len(_core(p)) == best]
    return hits


def _manifest_units(manifest: Manifest) -> set[str]:
    units = {p.unit for p in manifest.parameters.values() if p.unit}
    return {u.lower() for u in units | {o.unit for o in manifest.observables.values() if o.unit}}


def _is_unit(text: str, manifest: Manifest) -> bool:
    return _units.is_unit(text) or _units.is_unit(text.lower()) or text.lower() in _manifest_units(manifest)


def _read_number(clause: str, raw: str, manifest: Manifest) -> _Number | None:
    """The first number in the clause (digits or a number word) and the unit written after it."""
    spans = [(m.start(), m.end(), float(m.group(0))) for m in _NUMBER_RE.finditer(clause)]
    words = [
        (m.start(), m.end(), float(_NUMBER_WORDS[m.group(0)]))
        for m in re.finditer(rf"\b(?:{'|'.join(_NUMBER_WORDS)})\b", clause)
    ]
    spans = sorted(spans + words)
    if not spans:
        return None
    start, end, value = spans[0]
    unit, unit_start, word = None, end, None
    after = list(re.finditer(r"\S+", raw[end:]))[:4]
    if after:
        for k in range(len(after), 0, -1):
            text = raw[end + after[0].start() : end + after[k - 1].end()].rstrip("?!.,;:")
            if k > 1 and not (_units.is_phrase(text) or text.lower() in _manifest_units(manifest)):
                continue  # "m please" is metres; pint would read "m s" as metre-seconds
            if text and _is_unit(text, manifest):
                unit, unit_start, end = text, end + after[0].start(), end + after[0].start() + len(text)
                break
        else:
            first = after[0].group(0).rstrip("?!.,;:").lower()
            word = first if re.fullmatch(r"[a-z']+", first) else None
    others = sum(1 for s, e, _ in spans[1:] if not (s >= unit_start and e <= end))
    return _Number(value, unit, start, unit_start, end, word, others)


def _clause(clause: str, raw: str, ctx: PlannerContext, current: Mapping[str, Any]) -> tuple[str, Any, str] | str:
    """One clause -> (path, value, note) or the reason it could not be mapped."""
    manifest = ctx.manifest
    number = _read_number(clause, raw, manifest)
    skip = (number.unit_start, number.end) if number and number.unit else None
    params = _find_params(clause, manifest, skip)
    counted = _counted(number, manifest) if number is not None and not params else None
    if counted is not None and _goals._named_observables(clause, manifest, skip):
        counted = None  # "make the largest cluster 50 boids": a goal on what the page measures, not the count
    if counted is not None and _BY_AMOUNT.search(clause):  # "remove 20 boids": a change by an amount
        return (
            f'I read "{raw.strip()}" as changing {counted.path} by an amount, which I do not guess; '
            f'say the number you want (for example "set {(counted.label or counted.name).lower()} to N")'
        )
    if counted is not None:  # "put 300 boids in the sky": the number of boids
        params = [counted]

    switch = _switch(clause, manifest, params, current, number)
    if switch is not None:
        return switch if isinstance(switch, str) else (switch[0], switch[1], "")
    halt = _halt(clause, ctx) if number is None else None
    if halt is not None:  # "stop the ball": the speed whose description says 0 stops it
        return halt
    if _NEGATION.search(clause):  # "don't set the speed to 12" must not set it
        return f'"{clause}" says what not to do; I only carry out plain requests.'
    if re.search(r"\b(?:reset|restore|revert|start over|start again)\b", clause):  # "start over with speed 12"
        return f'"{clause}": ask for a reset on its own, then for the change.'
    if len(params) > 1:
        names = " or ".join(p.path for p in params)
        return f'"{clause}" could mean {names}; name one of them.'
    if params and params[0].readonly:
        return f"{params[0].path} is read-only."
    param = params[0] if params else None
    if param is not None and param.type == "boolean":
        return f'I could not tell whether to turn {param.path} on or off in "{clause}".'

    # an enum value named on its own: "make it red", "use rk4"
    if param is None and number is None:
        enum_hit = _enum_value(clause, ctx)
        if enum_hit is not None:
            return enum_hit
        colour = _unknown_colour(clause, manifest)
        if colour is not None:  # "make the ball cyan", and cyan is not among the colours
            return colour
    if param is not None and param.enum is not None and number is None:
        options = [o for o in param.enum if isinstance(o, str) and re.search(rf"\b{re.escape(o.lower())}\b", clause)]
        if len(options) == 1:
            return param.path, options[0], ""
        if options:
            return f'"{clause}" names several values of {param.path}: {", ".join(options)}.'

    relative = _relative(clause, manifest, param, current, number)
    if relative is not None:
        return relative

    if param is None:
        param = _by_unit(clause, manifest, number)
    if param is None:
        return f'I could not tell which parameter "{clause}" is about.'
    if param.type == "string":
        quoted = re.search(r"['\"](.+?)['\"]", raw) or re.search(r"\bto\s+(\S+)$", raw)
        if quoted:
            return param.path, quoted.group(1), ""
        colour = _unknown_colour(clause, manifest) if param.enum else None
        return colour or f'I could not find the value for {param.path} in "{clause}".'
    if param.type == "array":
        numbers = _NUMBER_RE.findall(clause)
        if param.length and len(numbers) == param.length:
            return param.path, [float(n) for n in numbers], ""
        return f'{param.path} needs {param.length or "a list of"} numbers, as in "set {param.name} to 1, 2, 3".'
    if number is None:
        return f'I found {param.path} but no number in "{clause}".'
    if number.others:
        return f'"{clause}" holds more than one number; I could not tell which one {param.path} should take.'
    before = clause[: number.start]
    if re.search(r"\bby\s*$", before):  # "make the angle steeper by 10": a change, not a value
        return f'"{clause}": I could not tell which way to change {param.path} by {_fmt(number.value)}.'
    if _BOUND.search(before):  # "speed above 12" does not ask for 12
        return f'"{clause}" asks for a range, not a value; say the value for {param.path}.'
    if number.unit is None and number.word and param.unit and number.word not in _AFTER_NUMBER:
        return f'I do not know the unit "{number.word}"; {param.path} is in {param.unit}.'
    return _with_unit(param, number.value, number.unit)


def _convert(number: float, unit: str, param: Parameter, delta: bool = False) -> float | None:
    """``number`` in ``unit`` in the parameter's unit, trying the case as written first ("MHz")."""
    assert param.unit is not None
    convert = _units.convert_delta if delta else _units.convert
    for spelling in dict.fromkeys([unit, unit.lower()]):
        converted = convert(number, spelling, param.unit)
        if converted is not None:
            return converted
    return None


def _with_unit(param: Parameter, number: float, unit: str | None) -> tuple[str, Any, str] | str:
    note = ""
    if unit and not param.unit:
        if _units.is_physical(unit):  # "count 5 km"; a count noun like "200 boids" is fine
            return f"{param.path} has no unit; I cannot use {unit} for it."
    elif unit and param.unit and not _units.same(unit, param.unit):
        converted = _convert(number, unit, param)
        if converted is None:
            return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
        note = f"{_fmt(number)} {unit} = {_fmt(_tidy(converted))} {param.unit}"
        number = converted
    if param.type == "integer" and not float(number).is_integer():
        return f"{param.path} takes whole numbers; {_fmt(number)} is not one."
    value: Any = round(number) if param.type == "integer" else _tidy(number)
    return param.path, value, note


_GOAL_WORDS = re.compile(r"\b(?:land|lands|landing|reach|hit|aim|away|range|so that|until|target)\b")


def _by_unit(clause: str, manifest: Manifest, number: _Number | None) -> Parameter | None:
    """The one number parameter whose unit measures what the clause's unit measures ("launch from 10 m").

    Not for goals ("land at 50 m"): a goal on an observable is a seek (:mod:`._goals`), never a set.
    """
    if _GOAL_WORDS.search(clause) or any(
        re.search(rf"\b{re.escape(o.lower())}\b", clause) for o in manifest.observables
    ):
        return None
    if number is None or number.unit is None:
        return None
    wanted = _units.dimension(number.unit) or _units.dimension(number.unit.lower())
    matches = [
        p
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and wanted and _units.dimension(p.unit) == wanted
    ]
    return matches[0] if len(matches) == 1 else None


def _switch_words(text: str, negative_name: bool) -> tuple[int, int, int]:
    """How many words in ``text`` say on, say off, and negate."""
    negations = len(_NEGATION.findall(text))
    text = _NEGATION.sub(" ", text)
    seen_on = len(re.findall(rf"\b(?:{_SEEN_ON})\b", text))
    seen_off = len(re.findall(rf"\b(?:{_SEEN_OFF})\b", text))
    if negative_name:  # "show the labels" turns hide_labels off
        seen_on, seen_off = seen_off, seen_on
    on = seen_on + len(re.findall(rf"\b(?:{_SWITCH_ON})\b", text))
    off = seen_off + len(re.findall(rf"\b(?:{_SWITCH_OFF})\b", text))
    return on, off, negations


def _without_names(clause: str, param: Parameter) -> tuple[str, bool]:
    """The clause with the parameter's own names blanked, and whether any was there.

    A name holds switch words of its own: "switch off show trail" is off, whatever "show" says.
    """
    named = False
    for form in _forms(param):
        clause, n = re.subn(rf"(?<![\w.]){re.escape(form)}(?!\w)", " ", clause)
        named = named or n > 0
    return clause, named


def _switch(
    clause: str, manifest: Manifest, params: list[Parameter], current: Mapping[str, Any], number: _Number | None
) -> tuple[str, bool] | str | None:
    """A boolean set on or off by the clause, the reason it cannot be, or None when it is no switch."""
    booleans = [p for p in manifest.parameters.values() if p.type == "boolean" and not p.readonly]
    tokens = set(_tokens(clause))
    named = [p for p in params if p in booleans]
    candidates = named or [p for p in booleans if set(_core(p)) <= tokens]
    if not candidates:  # "show the lines": one word of the name is enough when only one switch has it
        candidates = [p for p in booleans if set(_core(p)) & tokens]
    if len(candidates) > 1:
        best = max(len(_core(p)) for p in candidates)
        candidates = [p for p in candidates if len(_core(p)) == best]
    decided: list[tuple[Parameter, bool | str]] = []
    for param in candidates:
        text, by_name = _without_names(clause, param)
        negative = param.name.lower().split("_")[0] in _NEGATIVE_NAMES
        on, off, negations = _switch_words(text, negative)
        toggle = bool(_TOGGLE.search(text))
        rest = set(re.findall(r"[a-z']+", _NEGATION.sub(" ", text)))
        if toggle:
            value: bool | str = (
                f'"{clause}": I cannot toggle and set {param.path} at once.'
                if on or off or negations
                else not bool(current.get(param.path, param.value))
            )
            decided.append((param, value))
            continue
        if not on and not off:
            # the name alone is the request: "show trail please", "hide labels" (hide_labels on)
            verb_led = param.name.lower().split("_")[0] in ({"show", "display", "enable", "use"} | _NEGATIVE_NAMES)
            if not (by_name and verb_led and rest <= _POLITE):
                continue
            on = 1
        if on and off:
            value = f'I could not tell whether to turn {param.path} on or off in "{clause}".'
        elif negations and re.search(r"\b(?:set|change|make|put)\b", text):  # "don't set it to true": leave it
            value = f'"{clause}" says what not to do; I only carry out plain requests.'
        elif negations > 1:
            value = f'"{clause}" has more than one "not"; I could not tell whether to turn {param.path} on or off.'
        else:
            value = bool(on) != bool(negations)
        decided.append((param, value))
    if not decided:
        return None
    if len(decided) > 1:
        return f'"{clause}" could mean ' + " or ".join(p.path for p, _ in decided) + "; name one of them."
    param, value = decided[0]
    if isinstance(value, str):
        return value
    # "show the trail at speed 12", "trail on and faster", "show the trail in red": a second change
    # hides in the clause; doing only the switch would not be what was asked
    scales = (
        any(m.group(1) != "add" for m in _MORE_RE.finditer(clause))
        or _LESS_RE.search(clause) is not None
        or any(re.search(rf"\b(?:{words})\b", clause) for words, _ in _FACTORS)  # "toggle it twice"
    )
    options = [o for p in manifest.parameters.values() for o in p.enum or () if isinstance(o, str)]
    if number is not None or scales or any(re.search(rf"\b{re.escape(o.lower())}\b", clause) for o in options):
        return f'"{clause}": I can only turn {param.path} on or off; say the other change in its own clause.'
    return param.path, value


def _enum_value(clause: str, ctx: PlannerContext) -> tuple[str, Any, str] | None:
    hits = []
    tokens = set(_tokens(clause))
    for p in ctx.manifest.parameters.values():
        if p.enum is None or p.readonly:
            continue
        for option in p.enum:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option.lower())}\b", clause):
                # "double it" is a factor, not double mode: a word that also scales needs the parameter's
                # group or the target named beside it ("double pendulum")
                if re.fullmatch("|".join(f for f, _ in _FACTORS), option.lower()):
                    context = set(_tokens(p.path.replace(".", " "))) | set(_tokens(ctx.manifest.id))
                    if not (tokens - {option.lower()}) & context:
                        continue
                hits.append((p.path, option, ""))
    return hits[0] if len(hits) == 1 else None


def _relative(
    clause: str, manifest: Manifest, param: Parameter | None, current: Mapping[str, Any], number: _Number | None
) -> tuple[str, Any, str] | str | None:
    factor = next((f for words, f in _FACTORS if re.search(rf"\b(?:{words})\b", clause)), None)
    more, less = _MORE_RE.search(clause), _LESS_RE.search(clause)
    if factor is None and not (more or less):
        return None
    if more and less:
        return f'"{clause}": I could not tell whether to increase or decrease.'
    said = more or less
    direction = 1 if more else -1 if less else 0
    if factor is not None and said and (factor > 1) != (direction > 0):
        return f'"{clause}": a factor of {_fmt(factor)} does not go the way "{said.group(1)}" says.'
    if param is None:
        hints = (_MORE.get(said.group(1)) or _LESS.get(said.group(1)) or ()) if said else ()
        alike = re.search(r"\bas ([a-z]+)\b", clause) if factor is not None and not said else None
        if alike and alike.group(1) in _AS_ADJECTIVES:  # "twice as fast", "half as big"
            hints = _MORE[_AS_ADJECTIVES[alike.group(1)]]
        candidates = [
            p for p in manifest.parameters.values()
            if p.type in ("number", "integer") and not p.readonly and set(_core(p)) & set(hints)
        ]  # fmt: skip
        if len(candidates) != 1:
            return None if not hints and factor is None else f'"{clause}": I could not tell which parameter to change.'
        param = candidates[0]
    if param.type not in ("number", "integer"):
        return f"{param.path} is a {param.type}; I can only scale numbers."
    now = current.get(param.path, param.value)
    if not isinstance(now, int | float) or isinstance(now, bool):
        return f"{param.path} has no numeric current value."
    unit = number.unit if number else None
    if unit and param.unit is None and _units.is_physical(unit):
        return f"{param.path} has no unit; I cannot use {unit} for it."
    if number is not None and number.others:
        return f'"{clause}" holds more than one number; I could not tell which one to use.'
    before = clause[: number.start] if number else ""
    if factor is not None and number is not None:
        return f'"{clause}": I could not tell whether to scale {param.path} or set it to {_fmt(number.value)}.'
    note = ""
    if number is not None:
        amount = number.value
        if re.search(r"\bby\s*$", before) and unit in ("%", "percent"):
            if param.unit and _units.same(param.unit, "%"):
                return f'"{clause}": {param.path} is in % itself; say the new value instead.'
            target = now * (1 + direction * amount / 100)
        elif re.search(r"\bby\s*$", before) or re.fullmatch(r"(?:please )?(?:add|subtract)\s*", before):
            if unit and param.unit and not _units.same(unit, param.unit):
                converted = _convert(amount, unit, param, delta=True)
                if converted is None:
                    return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
                amount = converted
            target = now + direction * amount
        elif re.search(r"\bto\s*$", before):  # "increase the speed to 12" sets 12 if that is an increase
            absolute = _with_unit(param, amount, unit)
            if isinstance(absolute, str):
                return absolute
            if (absolute[1] - now) * direction <= 0:
                return f'"{clause}": {_fmt(absolute[1])} is not {"more" if direction > 0 else "less"} than {_fmt(now)}.'
            return absolute
        else:
            return f'"{clause}": I could not tell whether to change {param.path} by {_fmt(amount)} or to it.'
    elif re.search(r"\bby\b", clause):
        return f'"{clause}": I could not find by how much.'
    else:
        if factor is None:
            if re.search(r"\b(?:a (?:little|bit|touch)|slightly|a tad)\b", clause):
                factor = 1.1 if direction > 0 else 1 / 1.1
            elif re.search(r"\b(?:much|a lot|way|far)\b", clause):
                factor = 2.0 if direction > 0 else 0.5
            else:
                factor = 1.25 if direction > 0 else 0.8
        target = now * factor
        if now == 0 and direction:
            step = param.step or (
                (param.max - param.min) / 10 if param.max is not None and param.min is not None else 1
            )
            target = direction * step
    if param.max is not None and target > param.max:
        target, note = param.max, f"{param.path} is capped at its maximum {_fmt(param.max)}"
    if param.min is not None and target < param.min:
        target, note = param.min, f"{param.path} is held at its minimum {_fmt(param.min)}"
    value: Any = round(target) if param.type == "integer" else _tidy(target)
    return param.path, value, note


def _kept(clause: str, manifest: Manifest) -> list[str] | None:
    """The parameters a clause says to keep as they are ("keeping that drag", "with the same speed"), or
    None when it is no such clause. A clause with a number ("keep the speed at 12") is a set, as before."""
    match = _KEEP.match(clause)
    if match is None or _read_number(clause, clause, manifest) is not None:
        return None
    what = match.group("what") or match.group("same") or match.group("without") or ""
    params = _find_params(what, manifest)
    if not params:
        return None
    named = set(_tokens(what))
    for p in params:
        named -= set(_tokens(" ".join(_forms(p)).replace(".", " ").replace("_", " ")))
    return [p.path for p in params] if named <= _KEEP_FILLER else None


_BY_AMOUNT = re.compile(r"\b(?:remove|take away|delete|drop|kill|lose|get rid of)\b")


def _counted(number: _Number, manifest: Manifest) -> Parameter | None:
    """The one whole-number parameter that counts what the word after the number names ("300 boids":
    the parameter labelled "Number of boids", or named num_boids / boid_count)."""
    word = number.unit or number.word
    if not word:
        return None
    noun = _tokens(word.lower())
    hits = []
    for p in manifest.parameters.values():
        if p.type != "integer" or p.readonly:
            continue
        label = re.fullmatch(r"(?:the )?(?:number|count|amount) of (?:the )?([a-z]+)", (p.label or "").lower())
        name = re.fullmatch(r"(?:num|n|number)_([a-z]+)|([a-z]+)_(?:count|number)", p.name.lower())
        nouns = [g for m in (label, name) if m for g in m.groups() if g]
        if any(_tokens(n) == noun for n in nouns):
            hits.append(p)
    return hits[0] if len(hits) == 1 else None


def _halt(clause: str, ctx: PlannerContext) -> tuple[str, Any, str] | None:
    """ "stop the ball": the one number parameter whose description says 0 stops it ("How fast the ball
    travels; 0 stops it"), set to 0; the thing stopped must be what its description or the target names."""
    match = _HALT.match(clause)
    if match is None:
        return None
    thing = match.group("thing") or match.group("made")
    found = []
    for p in ctx.manifest.parameters.values():
        text = f"{p.label or ''} {p.description or ''}".lower()
        if p.type not in ("number", "integer") or p.readonly or not _HALTS.search(text):
            continue
        if (p.min is not None and p.min > 0) or (p.max is not None and p.max < 0):
            continue
        about = set(_tokens(f"{text} {ctx.manifest.id} {ctx.manifest.title or ''}".lower()))
        if thing is None or set(_tokens(thing)) <= about:
            found.append(p)
    if len(found) != 1:
        return None
    return found[0].path, 0 if found[0].type == "integer" else 0.0, ""


def _unknown_colour(clause: str, manifest: Manifest) -> str | None:
    """Why a colour the clause names cannot be set: it is not among the options of the colour parameters
    (enums whose options are CSS colour names); None when the clause names no such colour."""
    palettes = [
        p
        for p in manifest.parameters.values()
        if p.enum and not p.readonly and sum(isinstance(o, str) and o.lower() in _CSS_COLOURS for o in p.enum) >= 2
    ]
    options = {str(o).lower() for p in palettes for o in p.enum or ()}
    named = [w for w in re.findall(r"[a-z]+", clause) if w in _CSS_COLOURS and w not in options]
    if not palettes or not named:
        return None
    allowed = "; ".join(f"{p.path}: {', '.join(str(o) for o in p.enum or ())}" for p in palettes)
    return f"{named[0]} is not one of the colours I can set ({allowed})."


def _is_reset(request: str, ctx: PlannerContext) -> bool:
    """A request to reset everything: "reset", "reset everything back to default values please"."""
    match = re.fullmatch(
        r"(?:(?:please|can you|could you|kindly) )?(reset|restore|revert|start over|start again|go back|back)"
        r"\b(.*?)\??",
        request,
    )
    if not match:
        return False
    rest = set(re.findall(r"[\w']+", match.group(2)))
    if match.group(1) in ("go back", "back", "restore") and not rest & {"default", "defaults", "original", "initial"}:
        return match.group(1) == "restore" and not rest
    names = {ctx.manifest.id.lower(), *re.findall(r"[a-z]+", (ctx.manifest.title or "").lower())}
    return rest <= _RESET_WORDS | names


def _question(request: str, ctx: PlannerContext) -> Plan | None:
    match = re.match(
        r"^(?:what(?:'s| is| are)|what's|how (?:fast|far|high|long|big|heavy|many|much)|tell me|show me|which|"
        r"where|is it|get|read)\b(.*?)\??$",
        request,
    )
    if not match:
        return None
    subject = match.group(1)
    names: list[str] = []
    for name in ctx.manifest.observables:
        words = set(_tokens(name.lower().replace("_", " ")))
        if re.search(rf"\b{re.escape(name.lower())}\b", subject) or (words and words <= set(_tokens(subject))):
            names.append(name)
    params = _find_params(subject, ctx.manifest)
    if names:
        return Plan(calls=[PlannedCall("fetch_state", {})], asked=names + [p.path for p in params])
    if params:
        return Plan(calls=[PlannedCall("get_parameters", {})], asked=[p.path for p in params])
    how = re.match(r"how (fast|far|high|long|big|heavy|many)", request)
    if how:
        return _how(how.group(1), subject, ctx)
    if re.search(r"\b(?:state|happening|going on|status)\b", subject):
        return Plan(calls=[PlannedCall("fetch_state", {})], asked=["*state"])
    return Plan(refusal=capabilities(ctx, f'I do not know what "{subject.strip()}" refers to.'))


def _how(how: str, subject: str, ctx: PlannerContext) -> Plan:
    """ "how high did it get": the one observable (or, asked about the present, parameter) that fits.

    What fits comes from the manifest: the unit measures the right thing and the name, label or
    description uses a word for it. Outcome questions ("did it get") only read observables.
    """
    words, units = _HOW[how]
    keywords = set(_tokens(" ".join(words)))
    dims = {_units.dimension(u) for u in units}
    about = set(_tokens(subject)) - {"it", "is", "the", "did", "get", "go", "are", "there", "they", "do", "does"}
    items: list[tuple[str, str, str | None, set[str], set[str], set[str], bool]] = [
        ("fetch_state", n, o.unit, set(_tokens(n.lower().replace("_", " "))),
         set(_tokens((o.description or "").lower())), set(), False)
        for n, o in ctx.manifest.observables.items()
    ]  # fmt: skip
    if not _OUTCOME.search(subject):
        items += [
            ("get_parameters", p.path, p.unit, set(_core(p)) | set(_tokens(p.name.lower().replace("_", " "))),
             set(_tokens(f"{p.label or ''} {p.description or ''}".lower())),
             set(_tokens(p.path.lower().replace(".", " "))), p.type == "integer")
            for p in ctx.manifest.parameters.values()
        ]  # fmt: skip
    scored: list[tuple[int, str, str, Any]] = []
    for tool, key, unit, name_words, text_words, path_words, integer in items:
        dim = _units.dimension(unit)
        literal = unit is None or not _units.is_physical(unit)
        if how == "many":  # "how many heaps": what is counted must be what the item is about
            fits = (literal or integer) and (not about or bool(about & (name_words | text_words | path_words)))
        else:
            fits = dim in dims or (bool(name_words & keywords) and literal)
        score = 2 * bool(name_words & keywords) + bool(text_words & keywords) + 2 * bool(about & path_words)
        if fits and score:
            scored.append((score, tool, key, dim))
    top = [s for s in scored if s[0] == max((s[0] for s in scored), default=0)]
    if len(top) > 1 and len({s[3] for s in top}) == 1:  # one kind of measurement: what the page measured wins
        measured = [s for s in top if s[1] == "fetch_state"]
        top = measured if len(measured) == 1 else top
    if len(top) == 1:
        _, tool, key, _ = top[0]
        return Plan(calls=[PlannedCall(tool, {})], asked=[key])
    reason = (
        f'"how {how}" could mean ' + " or ".join(s[2] for s in top) + "; name one of them."
        if top
        else f'nothing this target reports answers "how {how}{subject}".'
    )
    return Plan(refusal=capabilities(ctx, reason[:1].upper() + reason[1:]))


def _action_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))


def _action_matches(what: list[str], name: str, ctx: PlannerContext) -> bool:
    """Whether the words name the action: its name or its label, then nothing but filler or words of
    its own label, description or the target's title ("reset the simulation" for ``reset``)."""
    action = ctx.manifest.actions[name]
    own = set(_action_words(f"{action.label or ''} {action.description or ''} {ctx.manifest.title or ''}"))
    own |= set(_action_words(ctx.manifest.id))
    for form in {tuple(_action_words(name)), tuple(_action_words(action.label or ""))}:
        if form and tuple(what[: len(form)]) == form and set(what[len(form) :]) <= _ACTION_FILLER | own:
            return True
    return False


def _action(request: str, ctx: PlannerContext, *, verb_led: bool) -> Plan | None:
    """One of the manifest's actions, asked for by a verb ("press run", "run the launch action") or,
    with ``verb_led=False``, by its name as the verb ("launch the projectile"); None when it is none."""
    actions = ctx.manifest.actions
    if not actions:
        return None
    if verb_led:
        said = _action_words(re.sub(_POLITE_LEAD, "", request))
        described = [n for n, a in actions.items() if a.description and said == _action_words(a.description)]
        if len(described) == 1:  # "start the counter": the action's own description, word for word
            return Plan(calls=[PlannedCall("run_action", {"name": described[0]})])
        match = _ACTION_VERB.match(request)
        if match is None:
            return None
        what, verb = _action_words(match.group("what")), match.group("verb")
    else:
        what, verb = _action_words(re.sub(_POLITE_LEAD, "", request)), ""
    found = [name for name in actions if _action_matches(what, name, ctx)]
    if len(found) == 1:
        return Plan(calls=[PlannedCall("run_action", {"name": found[0]})])
    names = ", ".join(actions)
    if found:
        return Plan(refusal=capabilities(ctx, f'"{request}" could be the action {" or ".join(found)}; name one.'))
    if verb in _BUTTON_VERBS:
        if what and what[0] == "reset" and "reset" not in actions:
            return Plan(calls=[PlannedCall("reset", {})])  # "press reset": the parameters' reset, as "reset" is
        return Plan(refusal=capabilities(ctx, f'"{" ".join(what)}" is not one of the actions ({names}).'))
    return None


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
    if _is_option(wanted, ctx):
        return None  # "switch to the double pendulum": this target's mode, set like any other value
    close = [t for t, title in ctx.targets if set(_tokens(wanted)) & (set(_tokens(title.lower())) | {t.lower()})]
    if len(close) == 1:
        return Plan(calls=[PlannedCall("select_target", {"target": close[0]})])
    known = ", ".join(t for t, _ in ctx.targets) or "none"
    if close:
        return Plan(refusal=f'{LABEL}: "{wanted}" could be {" or ".join(close)}; name one. Available: {known}.')
    return Plan(refusal=f'{LABEL}: there is no target "{wanted}". Available: {known}.')


def _is_option(wanted: str, ctx: PlannerContext) -> bool:
    """Whether the words name an option of one of this target's parameters and nothing else but the
    parameter and this target ("the double pendulum", "viridis")."""
    hit = _enum_value(wanted, ctx)
    if hit is None:
        return False
    path, option, _ = hit
    manifest = ctx.manifest
    known = {*_tokens(str(option).lower()), *_tokens(path.replace(".", " ")), *_tokens(manifest.id.replace("_", " "))}
    known |= set(_tokens((manifest.title or "").lower())) | {"the", "a", "an", "mode", "one", "version", "setting"}
    return set(_tokens(wanted)) <= known


# -- replies ---------------------------------------------------------------------------------


def summarise(plan_: Plan, results: Sequence[Mapping[str, Any]], ctx: PlannerContext) -> str:
    """One short line saying what changed (or what was asked), from the tools' results."""
    parts: list[str] = []
    for call, result in zip(plan_.calls, results, strict=False):
        if call.tool == "seek":
            parts.append(_goals.summary(call, result, ctx, plan_.aim))
            continue
        error = result.get("error") or {}
        if not result.get("ok", False) and not (result.get("kept") and call.tool == "set_parameters"):
            hint = f" ({error['hint']})" if error.get("hint") else ""
            parts.append(f"could not {call.tool.replace('_', ' ')}: {error.get('message', 'failed')}{hint}")
            continue
        if call.tool == "set_parameters":
            changed = result.get("changed") or {}
            said = [f"{_short(path, ctx)} to {_with_unit_text(v)}" for path, v in changed.items()]
            if result.get("ok", False):
                parts.append("set " + _join(said))
            elif error.get("code") == "no_view":  # kept, not applied: say so, never "set"
                parts.append(f"kept {_join(said)}, but no view is open, so the page has not changed yet")
            else:
                parts.append(f"kept {_join(said)}, but the page did not apply it: {error.get('message', '')}")
        elif call.tool == "reset":
            parts.append("reset every parameter to its default")
        elif call.tool == "run_action":
            action = ctx.manifest.actions.get(str(call.args.get("name")))
            parts.append(f"ran {(action.label if action is not None and action.label else call.args.get('name'))}")
        elif call.tool == "select_target":
            parts.append(f"switched to {result.get('target') or call.args.get('target')}")
        elif call.tool == "list_targets":
            parts.append("targets: " + ", ".join(t["id"] for t in result.get("targets") or []))
        elif call.tool == "get_parameters":
            parts.append(_answer_parameters(plan_.asked, result, ctx))
        elif call.tool == "fetch_state":
            parts.append(_answer_state(plan_.asked, result, ctx))
    for call in plan_.calls[len(results) :]:  # not made (a run that stops after a failed set): say so
        if call.tool == "seek":
            aim = _goals._aim(str(call.args.get("observable", "")), call.args.get("goal"), ctx.manifest, plan_.aim)
            parts.append(f"so I did not try to {aim}")
    text = "; ".join(p for p in parts if p)
    if plan_.notes:
        text += " (" + "; ".join(plan_.notes) + ")"
    return f"{LABEL}: {text[:1].upper() + text[1:]}."


def is_yes(text: str) -> bool:
    """Whether a request only says yes (to a question the planner asked)."""
    said = _normalise(text).lower().rstrip(" ,")
    return (
        re.fullmatch(
            r"(?:yes|y|yeah|yep|sure|ok|okay|go ahead|do it|please do|confirm(?:ed)?)(?:,? (?:please|go ahead|do it))?",
            said,
        )
        is not None
    )


def describe_calls(plan_: Plan, ctx: PlannerContext) -> str:
    """What a plan would do, in the words of the reply ("set angle to 30° and speed to 20 m/s")."""
    parts = []
    for call in plan_.calls:
        if call.tool == "set_parameters":
            values = call.args.get("values") or {}
            parts.append(
                "set "
                + _join(
                    [
                        f"{_short(p, ctx)} to {_value_text(v, ctx.manifest.parameters[p].unit)}"
                        for p, v in values.items()
                    ]
                )
            )
        elif call.tool == "seek":
            parts.append(
                _goals._aim(str(call.args.get("observable", "")), call.args.get("goal"), ctx.manifest, plan_.aim)
            )
        else:
            parts.append(call.tool.replace("_", " "))
    return _join(parts)


def join_words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return _join(list(items))


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
