"""Goals for the offline planner: "make it land at 50 m", "as far as possible by changing the angle".

A goal names an observable, by its name ("make the period 3 s") or by what it measures ("land" is a
distance, "as high as possible" a height, matched against the observables' names and descriptions),
and a value in any unit pint converts to the observable's, or an extreme. It becomes ONE ``seek``
call varying one number parameter: the one the request names ("by changing the angle"), else the
first of the observable's ``depends_on`` that the request does not set itself, else the planner asks
which. A clause that names a parameter is never a goal: "set the speed to 30" stays a set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..manifest import Manifest, Observable, Parameter
from . import _planner, _units

# What a word says the goal is about: words an observable's name or description uses for it, the
# units it is measured in, and the parameter name that the word may mean instead ("as long as
# possible" may be the pendulum's length).
_MEASURES: dict[str, tuple[frozenset[str], tuple[str, ...], str]] = {
    "far": (frozenset({"range", "distance", "far", "downrange"}), ("m",), "distance"),
    "high": (frozenset({"height", "high", "highest", "altitude", "apex"}), ("m",), "height"),
    "long": (frozenset({"time", "duration", "period", "airtime"}), ("s",), "length"),
}
# "as <word> as possible" and superlatives: (what they measure or None, the extreme).
_EXTREME_WORDS: dict[str, tuple[str | None, str]] = {
    "far": ("far", "max"), "near": ("far", "min"), "close": ("far", "min"), "high": ("high", "max"),
    "low": ("high", "min"), "tall": ("high", "max"), "long": ("long", "max"), "short": ("long", "min"),
    "quick": ("long", "min"), "brief": ("long", "min"), "big": (None, "max"), "large": (None, "max"),
    "great": (None, "max"), "much": (None, "max"), "small": (None, "min"), "little": (None, "min"),
}  # fmt: skip
_SUPERLATIVES: dict[str, tuple[str | None, str]] = {
    "farthest": ("far", "max"), "furthest": ("far", "max"), "nearest": ("far", "min"), "closest": ("far", "min"),
    "highest": ("high", "max"), "lowest": ("high", "min"), "longest": ("long", "max"), "shortest": ("long", "min"),
    "maximise": (None, "max"), "maximize": (None, "max"), "maximum": (None, "max"), "max": (None, "max"),
    "largest": (None, "max"), "biggest": (None, "max"), "greatest": (None, "max"), "most": (None, "max"),
    "minimise": (None, "min"), "minimize": (None, "min"), "minimum": (None, "min"), "min": (None, "min"),
    "smallest": (None, "min"), "least": (None, "min"),
}  # fmt: skip
_AS_POSSIBLE = re.compile(r"\bas (\w+)(?: away)? as (?:possible|it can|it will|you can|we can|can be|it gets)\b")
_LANDING = re.compile(r"\b(?:land|lands|landing|touchdown)\b")
# Verbs about what happens, which make "as high as possible" the flight, not the launch height.
_OUTCOME_VERBS = re.compile(
    r"\b(?:fly|flies|go|goes|get|gets|travel|travels|reach|reaches|land|lands|swing|swings|stay|stays|last|"
    r"lasts|throw|shoot|launch it|take|takes|rise|rises|climb|climbs)\b"
)
_VARY_VERBS = r"changing|varying|adjusting|tuning|altering|moving|tweaking|using|with|via"
_VARY_AFTER = re.compile(rf"\s*\b(?:(?:only|just) )?(?:by |while |through )?(?:{_VARY_VERBS}) (?P<what>[^\d]+)$")
_VARY_BEFORE = re.compile(
    r"^(?:please )?(?:change|vary|adjust|tune|alter|tweak|use) (?P<what>.+?) "
    r"(?:so that|so|until|such that|in order to|to) (?P<rest>.+)$"
)


@dataclass(frozen=True)
class Goal:
    """A goal read from one clause, before the parameter to vary is settled."""

    observable: str
    goal: float | str  # in the observable's unit, or "max" / "min"
    vary: str | None  # the parameter the request names, if any
    note: str = ""  # a unit conversion, for the reply


@dataclass(frozen=True)
class Ask:
    """A question back to the user instead of calls."""

    text: str


def merge_vary(clauses: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """ "make it land at 50 m, by changing the angle": a clause that only says what to vary joins the one before."""
    out: list[tuple[str, str]] = []
    for clause, raw in clauses:
        if out and re.match(rf"(?:(?:only|just) )?(?:by|while|through) (?:{_VARY_VERBS})\b", clause):
            out[-1] = (f"{out[-1][0]} {clause}", f"{out[-1][1]} {raw}")
        else:
            out.append((clause, raw))
    return out


def read(clause: str, raw: str, ctx: _planner.PlannerContext) -> Goal | str | None:
    """The goal the clause asks for, the reason it cannot be one, or None when it is no goal."""
    manifest = ctx.manifest
    clause, raw, vary_text = _split_vary(clause, raw, manifest)
    if _planner._NEGATION.search(clause):
        return None
    number = _planner._read_number(clause, raw, manifest)
    unit_span = (number.unit_start, number.end) if number and number.unit else None
    named = _named_observables(clause, manifest, unit_span)
    if _names_a_parameter(clause, manifest, named, unit_span):
        return None  # "set the speed to 30", "make the angle 30 degrees": a set
    rest = _blank(clause, [(s, e) for _, s, e in named] + ([unit_span] if unit_span else []))  # "3 min" is no min
    extreme = _extreme(rest)
    measure = extreme[0] if extreme else ("far" if _LANDING.search(rest) and number else None)
    if not named and measure is None:
        return None
    if extreme is None and number is None:
        return None  # "show the range": not a goal
    if _is_relative(rest, number):
        return None  # "increase the range", "range above 50 m": no value to reach
    if extreme and number:
        return f'"{clause}" asks for a value and for the {extreme[1]}; say one.'
    observable = _observable(clause, manifest, named, measure)
    if isinstance(observable, str):
        return observable
    vary = _vary(vary_text, clause, manifest)
    if isinstance(vary, str) or (vary_text and vary is None):
        return vary or f'I could not tell which parameter "{vary_text}" is.'
    if extreme is not None:
        return Goal(observable.name, extreme[1], vary.path if vary else None)
    assert number is not None
    return _valued(observable, number, clause, vary)


def resolve(goal: Goal, values: Mapping[str, Any], ctx: _planner.PlannerContext) -> _planner.PlannedCall | Ask | str:
    """The seek call for the goal, given the values the same request sets; or a question, or a refusal."""
    manifest = ctx.manifest
    if goal.vary is not None and goal.vary in values:
        return f"{goal.vary} is both set and varied in one request; say which."
    vary = goal.vary
    if vary is None:
        free = [p for p in manifest.observables[goal.observable].depends_on if p not in values]
        if not free:
            return _ask(goal, manifest, values)
        vary = free[0]
    return _planner.PlannedCall("seek", {"observable": goal.observable, "goal": goal.goal, "vary": vary})


# -- reading a goal ---------------------------------------------------------------------------


def _split_vary(clause: str, raw: str, manifest: Manifest) -> tuple[str, str, str]:
    """The clause without what it says to vary, and that ("by changing the angle" -> "the angle").

    "change the angle so that it lands at 50 m" leads with it, when it names a parameter ("change the
    period to 3 s" does not).
    """
    before = _VARY_BEFORE.match(clause)
    if before and _planner._find_params(before.group("what"), manifest):
        start = before.start("rest")
        return clause[start:], raw[start:], before.group("what")
    after = _VARY_AFTER.search(clause)
    if after and after.start() > 0:
        return clause[: after.start()].rstrip(" ,"), raw[: after.start()].rstrip(" ,"), after.group("what").strip()
    return clause, raw, ""


def _overlaps(span: tuple[int, int] | None, start: int, end: int) -> bool:
    return span is not None and start < span[1] and end > span[0]


def _named_observables(
    clause: str, manifest: Manifest, unit_span: tuple[int, int] | None
) -> list[tuple[Observable, int, int]]:
    """Observables the clause names ("the range", "max height", "time of flight"), with their spans."""
    found: list[tuple[Observable, int, int]] = []
    tokens = set(_planner._tokens(clause))
    for name, obs in manifest.observables.items():
        forms = dict.fromkeys([name.lower(), name.lower().replace("_", " ")])
        spans = [
            (m.start(), m.end())
            for form in forms
            for m in re.finditer(rf"(?<![\w.']){re.escape(form)}(?![\w'])", clause)
            if not _overlaps(unit_span, m.start(), m.end())
        ]
        words = set(_planner._tokens(name.lower().replace("_", " ")))
        if spans:
            start, end = max(spans, key=lambda s: s[1] - s[0])
            found.append((obs, start, end))
        elif len(words) > 1 and words <= tokens:
            found.append((obs, 0, 0))
    return found


def _names_a_parameter(
    clause: str, manifest: Manifest, named: list[tuple[Observable, int, int]], unit_span: tuple[int, int] | None
) -> bool:
    """Whether the clause names a parameter outside the observables it names (a longer name wins)."""
    mentions = _planner._mentions(clause, manifest, unit_span)
    if any(not any(s <= ps and pe <= e and e - s > pe - ps for _, s, e in named) for _, ps, pe in mentions):
        return True
    rest = _blank(clause, [(s, e) for _, s, e in named] + ([unit_span] if unit_span else []))
    return bool(_planner._find_params(rest, manifest))


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _extreme(text: str) -> tuple[str | None, str] | None:
    """(what it measures, "max" / "min") for "as far as possible", "maximise", "the longest"."""
    match = _AS_POSSIBLE.search(text)
    if match and match.group(1) in _EXTREME_WORDS:
        return _EXTREME_WORDS[match.group(1)]
    words = [w for w in re.findall(r"[a-z]+", text) if w in _SUPERLATIVES]
    return _SUPERLATIVES[words[0]] if words else None


def _is_relative(text: str, number: _planner._Number | None) -> bool:
    """ "increase the range", "double the period", "range above 50 m": not a value to reach."""
    if _planner._MORE_RE.search(text) or _planner._LESS_RE.search(text):
        return True
    if any(re.search(rf"\b(?:{words})\b", text) for words, _ in _planner._FACTORS):
        return True
    before = text[: number.start] if number else ""
    return bool(_planner._BOUND.search(before) or re.search(r"\bby\s*$", before))


def _observable(
    clause: str, manifest: Manifest, named: list[tuple[Observable, int, int]], measure: str | None
) -> Observable | str:
    """The one observable the goal is about: the one named, else the one whose words fit the measure."""
    if named:
        longest = max(e - s for _, s, e in named)
        best = [o for o, s, e in named if e - s == longest]
        if len(best) == 1:
            return best[0]
        return f'"{clause}" could mean ' + " or ".join(o.name for o in best) + "; name one of them."
    assert measure is not None
    keywords, units, noun = _MEASURES[measure]
    dims = {_units.dimension(u) for u in units}
    tokens = set(_planner._tokens(clause))
    scored: list[tuple[int, Observable]] = []
    for name, obs in manifest.observables.items():
        name_words = set(_planner._tokens(name.lower().replace("_", " ")))
        text_words = set(_planner._tokens((obs.description or "").lower()))
        score = 2 * bool(name_words & keywords) + bool(text_words & keywords) + bool(name_words & tokens)
        if score and _units.dimension(obs.unit) in dims:
            scored.append((score, obs))
    top = [o for s, o in scored if s == max((s for s, _ in scored), default=0)]
    if not top:
        return f'nothing this target reports fits "{clause}".'
    if len(top) > 1:
        return f'"{clause}" could mean ' + " or ".join(o.name for o in top) + "; name one of them."
    # "make the pendulum as long as possible": its length, perhaps; "make it swing as long as possible" is not
    words = set(re.findall(r"[a-z]+", clause))
    meant = [
        p
        for p in manifest.parameters.values()
        if noun in _planner._core(p) and p.type in ("number", "integer") and p.path.lower().split(".")[0] in words
    ]
    if meant and not _OUTCOME_VERBS.search(clause):
        return f'"{clause}" could mean {top[0].name} or {meant[0].path}; name one of them.'
    return top[0]


def _vary(what: str, clause: str, manifest: Manifest) -> Parameter | str | None:
    """The number parameter the request says to vary, None when it names none, or why it cannot be varied."""
    if not what:
        return None
    params = _planner._find_params(what, manifest)
    if len(params) > 1:
        return f'"{clause}" could vary ' + " or ".join(p.path for p in params) + "; name one of them."
    if not params:
        return None
    param = params[0]
    if param.type not in ("number", "integer") or param.readonly:
        kind = "read-only" if param.readonly else f"a {param.type}"
        return f"{param.path} is {kind}; I can only vary a number parameter to reach a goal."
    return param


def _valued(observable: Observable, number: _planner._Number, clause: str, vary: Parameter | None) -> Goal | str:
    """A goal on a value, converted to the observable's unit ("0.05 km" -> 50 when it is in m)."""
    name, unit, value = observable.name, observable.unit, number.value
    if number.others:
        return f'"{clause}" holds more than one number; I could not tell which one {name} should reach.'
    if number.unit is None and number.word and unit and number.word not in _planner._AFTER_NUMBER:
        return f'I do not know the unit "{number.word}"; {name} is in {unit}.'
    note = ""
    if number.unit and not unit and _units.is_physical(number.unit):
        return f"{name} has no unit; I cannot use {number.unit} for it."
    if number.unit and unit and not _units.same(number.unit, unit):
        spellings = dict.fromkeys([number.unit, number.unit.lower()])  # as written first ("MHz")
        converted = next((c for u in spellings if (c := _units.convert(value, u, unit)) is not None), None)
        if converted is None:
            return f"{name} is in {unit}; I cannot convert {number.unit} to that."
        note = f"{_planner._fmt(value)} {number.unit} = {_planner._fmt(_planner._tidy(converted))} {unit}"
        value = converted
    return Goal(name, _planner._tidy(value), vary.path if vary else None, note)


def _ask(goal: Goal, manifest: Manifest, values: Mapping[str, Any]) -> Ask | str:
    """Which parameter to vary: a question naming the number parameters the request does not set."""
    candidates = [
        p
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and p.path not in values
    ]
    if not candidates:
        return f"there is no number parameter left to vary to {_aim(goal.observable, goal.goal, manifest)}."
    names = ", ".join(p.path for p in candidates)
    example = candidates[0].name.replace("_", " ")
    return Ask(
        f"{_planner.LABEL}: Which parameter should I change to {_aim(goal.observable, goal.goal, manifest)}? "
        f'I can vary {names}; say, for example, "... by changing the {example}".'
    )


# -- the reply --------------------------------------------------------------------------------


def summary(call: _planner.PlannedCall, result: Mapping[str, Any], ctx: _planner.PlannerContext) -> str:
    """What a seek did: the parameter's new value and the observable reached, or why it could not."""
    name, goal, vary = call.args.get("observable", ""), call.args.get("goal"), call.args.get("vary", "")
    tries = len(result.get("evaluations") or [])
    counted = f" ({tries} {'try' if tries == 1 else 'tries'})" if tries else ""
    words = _param_words(vary, ctx.manifest)
    param = ctx.manifest.parameters.get(vary)
    unit = param.unit if param else None
    if not result.get("ok", False):
        return _failure(call, result, ctx) + counted
    changed = (result.get("changed") or {}).get(vary)
    did = (
        f"changed {words} to {_planner._with_unit_text(changed)}"
        if changed
        else f"left {words} at {_planner._value_text(ctx.values.get(vary), unit)}"
    )
    reached = _reached(name, result)
    obs = ctx.manifest.observables.get(name)
    label = name.replace("_", " ")
    if reached is None:
        return f"{did}, but the page did not report {label}{counted}"
    extreme = {"max": ", the maximum found", "min": ", the minimum found"}.get(str(goal), "")
    return f"{did}: {label} is now {_planner._value_text(reached, obs.unit if obs else None)}{extreme}{counted}"


def _failure(call: _planner.PlannedCall, result: Mapping[str, Any], ctx: _planner.PlannerContext) -> str:
    """The tool's error, plainly, and where the varied parameter was left (back where it was)."""
    name, goal, vary = call.args.get("observable", ""), call.args.get("goal"), call.args.get("vary", "")
    error = result.get("error") or {}
    message = str(error.get("message") or "failed")
    hint = f" ({error['hint']})" if error.get("hint") else ""
    words, param = _param_words(vary, ctx.manifest), ctx.manifest.parameters.get(vary)
    kept = (result.get("changed") or {}).get(vary)
    now = ctx.values.get(vary)
    if re.search(rf"\b{re.escape(vary)} (?:is back at|stays at)\b", message):
        after = ""  # the tool said where it left the parameter
    elif kept:
        after = f"; {words} stays at {_planner._with_unit_text(kept)}"
    elif result.get("evaluations") and now is not None:
        after = f"; {words} went back to {_planner._value_text(now, param.unit if param else None)}"
    else:
        after = ""
    return f"could not {_aim(name, goal, ctx.manifest)}: {message}{hint}{after}"


def _reached(name: str, result: Mapping[str, Any]) -> Any:
    """The observable's value after the seek: from the page's state, else the last evaluation."""
    state = _planner._page_state(result)
    value = state.get(name, _planner._dig(state, name))
    if value is None:
        evaluations = result.get("evaluations") or []
        value = evaluations[-1].get("observable") if evaluations and isinstance(evaluations[-1], Mapping) else None
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _aim(name: str, goal: Any, manifest: Manifest) -> str:
    """ "bring range to 50 m", "maximise range"."""
    label = name.replace("_", " ")
    if goal in ("max", "min"):
        return f"{'maximise' if goal == 'max' else 'minimise'} {label}"
    obs = manifest.observables.get(name)
    return f"bring {label} to {_planner._value_text(goal, obs.unit if obs else None)}"


def _param_words(path: str, manifest: Manifest) -> str:
    """ "launch speed" for launch.speed: its label, or its name in words."""
    param = manifest.parameters.get(path)
    if param is None:
        return path
    text = param.label or param.name.replace("_", " ")
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) == 1 else text
