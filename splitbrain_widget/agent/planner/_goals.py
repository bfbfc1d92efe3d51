"""Goals for the offline planner: "make it land at 50 m", "as far as possible by changing the angle".

A goal names an observable, by its name ("make the period 3 s") or by what it measures ("land" is a
distance, "as high as possible" a height, matched against the observables' names and descriptions),
and a value in any unit pint converts to the observable's, or an extreme. It becomes ONE ``seek``
call varying one number parameter: the one the request names ("by changing the angle"), else the
first of the observable's ``depends_on`` that the request does not set or keep ("keeping the drag")
itself, else the planner asks which. A clause that names a parameter is never a goal: "set the speed
to 30" stays a set.

A bound is a value too: "a polarization of at least 0.95" is a seek within a window that lies wholly
inside the bound (with ``tol``); a strict one ("above 50 m") is refused. A few words name a value of an
observable by its physical meaning ("circular" is eccentricity 0, "escape" at least 1), for the
observable of that name only.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...core import _units
from ...manifest import Manifest, Observable, Parameter
from . import _counts
from ._context import LABEL, PlannedCall, PlannerContext
from ._format import aim_phrase, fmt, tidy
from ._lexicon import (
    AFTER_NUMBER,
    BOUND,
    FACTORS,
    LESS_RE,
    MORE_RE,
    NEGATION,
    Number,
    core_words,
    find_params,
    mentions_of,
    read_number,
    word_tokens,
)

# What a word says the goal is about: words an observable's name or description uses for it, the
# units it is measured in, and the parameter name that the word may mean instead ("as long as
# possible" may be the pendulum's length).
_MEASURES: dict[str, tuple[frozenset[str], tuple[str, ...], str]] = {
    "far": (frozenset({"range", "distance", "far", "downrange"}), ("m",), "distance"),
    "high": (frozenset({"height", "high", "highest", "altitude", "apex"}), ("m",), "height"),
    "long": (frozenset({"time", "duration", "period", "airtime"}), ("s",), "length"),
}
# Abbreviations in observable names, written out ("maximum height" names max_height).
_SPELLED = {"max": "maximum", "min": "minimum", "avg": "average", "num": "number", "temp": "temperature"}
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
# Nouns that say what a valued goal measures when no observable is named by them ("make the apex 15 m"):
# a parameter named so is meant instead ("make the height 10 m" is the launch height).
_MEASURE_NOUNS = {"range": "far", "distance": "far", "downrange": "far", "height": "high", "altitude": "high",
                  "apex": "high", "duration": "long", "airtime": "long"}  # fmt: skip
# Reaching a height is the flight's, not the launch's: "make it reach a height of 15 m".
_REACH = re.compile(r"\b(?:reach|reaches|reaching|rise to|rises to|climb to|climbs to|get to|gets to)\b")
# A duration the thing named should last: "make the flight last 3 s", "make it fly for 3 s".
_LASTING = re.compile(r"\b(?:last|lasts|lasting|take|takes|for)\s*(?:about |exactly |roughly |around |just )?$")
# Verbs as the noun an observable's name uses ("fly" for flight_time; _tokens spells "flies" "flie").
_NOUNS = {"fly": "flight", "flie": "flight", "flying": "flight", "flew": "flight"}
# Inclusive bounds on a goal: (the words, which side); they stand before the number or after it.
_AT_LEAST = re.compile(r"\b(?:at least|no less than|a minimum of)\s*$")
_AT_MOST = re.compile(r"\b(?:at most|no more than|a maximum of)\s*$")
_OR_MORE = re.compile(r"^\s*(?:or (?:more|higher|above|greater|larger))\b")
_OR_LESS = re.compile(r"^\s*(?:or (?:less|lower|below|smaller|fewer))\b")
# A bound's window, wholly inside it: from 1% of the bound past its edge, 10% of the bound wide ("at
# least 0.95": 0.9595..1.0545). Any value in it meets the request; the seek needs a far end, and this
# one keeps the answer near the bound (no "at most 2 s" met by not launching at all) while leaving a
# noisy observable room to land in.
BOUND_MARGIN = 0.01
BOUND_WIDTH = 0.1
# Words that name a value of an observable by its physical meaning, for the observable of that name:
# (words, observable name, "=" / ">=", value, tol, what the words mean).
_QUALITIES: tuple[tuple[re.Pattern[str], str, str, float, float | None, str], ...] = (
    (re.compile(r"\b(?:circular|circulari[sz]e|a circle)\b"), "eccentricity", "=", 0.0, 0.01, "circular"),
    (re.compile(r"\b(?:escape|escapes|escaping|unbound)\b"), "eccentricity", ">=", 1.0, None, "an open (escape) orbit"),
)
# Words a clause that restates a goal may hold besides those of the observable's description.
_RESTATE_FILLER = {"make", "it", "the", "a", "an", "in", "of", "to", "all", "whole", "nearly", "almost", "about",
                   "roughly", "so", "that", "they", "them", "or", "very", "please", "now", "get"}  # fmt: skip
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
    r"^(?:please )?(?:change|vary|adjust|tune|alter|tweak|use|move) (?P<what>.+?) "
    r"(?:so that|so|until|such that|in order to|to) (?P<rest>.+)$"
)


@dataclass(frozen=True)
class Goal:
    """A goal read from one clause, before the parameter to vary is settled."""

    observable: str
    goal: float | str  # in the observable's unit, or "max" / "min"
    vary: str | None  # the parameter the request names, if any
    note: str = ""  # a unit conversion, a bound's window, for the reply
    tol: float | None = None  # the absolute tolerance, when the request implies one (a bound, "circular")
    aim: str = ""  # the goal in the request's words when the seek's goal is not ("at least 0.95")
    among: tuple[str, ...] = ()  # the parameters of a group the request names instead ("move the probe")


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


def read(clause: str, raw: str, ctx: PlannerContext) -> Goal | str | None:
    """The goal the clause asks for, the reason it cannot be one, or None when it is no goal."""
    manifest = ctx.manifest
    clause, raw, vary_text = _split_vary(clause, raw, manifest)
    if NEGATION.search(clause):
        return None
    number = read_number(clause, raw, manifest)
    unit_span = (number.unit_start, number.end) if number and number.unit else None
    counts = number is not None and _counts.counted_param(number, manifest) is not None
    if counts and not named_observables(clause, manifest, unit_span):
        return None  # "put 300 boids in the sky": the number of boids, a set
    if number is None:
        quality = _quality(clause, manifest, unit_span)
        if quality is not None:
            return quality if isinstance(quality, str) else _with_vary(quality, vary_text, clause, manifest)
    named = named_observables(clause, manifest, unit_span)
    worded = _worded(clause, manifest, number)
    if worded is not None and number is not None:  # "a path difference of one wavelength"
        named, number = [worded], dataclasses.replace(number, word=None)
    reached = _reached_noun(clause, manifest, unit_span)
    spoken = _blank(clause, [reached[1]]) if reached else clause  # "reach a height": no launch height
    if _names_a_parameter(spoken, manifest, named, unit_span):
        return None  # "set the speed to 30", "make the angle 30 degrees": a set
    rest = _blank(clause, [(s, e) for _, s, e in named] + ([unit_span] if unit_span else []))  # "3 min" is no min
    bound, rest = _bound(rest, number)
    extreme = _extreme(rest)
    lasting = extreme is None and _lasting(rest, number)
    measure = extreme[0] if extreme else reached[0] if reached else "long" if lasting else _measure(rest, number)
    if not named and measure is None:
        return None
    if extreme is None and number is None:
        return None  # "show the range": not a goal
    if number is not None and BOUND.search(rest[: number.start]):  # "the range above 50 m"
        what = f" on {named[0][0].name}" if len(named) == 1 else ""
        return f'"{clause}": I do not seek a strict bound{what}; say "at least" or "at most" a value, or a value.'
    if _is_relative(rest, number):
        return None  # "increase the range", "double the period": no value to reach
    if extreme and number:
        return f'"{clause}" asks for a value and for the {extreme[1]}; say one.'
    observable = _observable(clause, manifest, named, measure, by_name=lasting)
    if isinstance(observable, str):
        return observable
    if extreme is not None:
        return _with_vary(Goal(observable.name, extreme[1], None), vary_text, clause, manifest)
    assert number is not None
    goal = _valued(observable, number, clause, None)
    if isinstance(goal, Goal) and bound is not None:
        goal = _bounded(goal, bound, observable)
    return goal if isinstance(goal, str) else _with_vary(goal, vary_text, clause, manifest)


def _with_vary(goal: Goal | str, vary_text: str, clause: str, manifest: Manifest) -> Goal | str:
    """The goal with the parameter (or the group of them) the request says to vary."""
    if isinstance(goal, str):
        return goal
    vary = _vary(vary_text, clause, manifest)
    if isinstance(vary, str) or (vary_text and vary is None):
        return vary or f'I could not tell which parameter "{vary_text}" is.'
    if isinstance(vary, list):
        return dataclasses.replace(goal, among=tuple(p.path for p in vary))
    return dataclasses.replace(goal, vary=vary.path if vary else None)


def restates(clause: str, goal: Goal, ctx: PlannerContext) -> bool:
    """Whether a clause that maps to nothing only says in words what the goal is ("make the whole flock
    fly in nearly the same direction" beside "a polarization of at least 0.95").

    It holds no number, names no parameter, and its words are those of the goal's observable (its name
    and description: two at least, more than any other observable's) and filler.
    """
    manifest = ctx.manifest
    if read_number(clause, clause, manifest) or find_params(clause, manifest):
        return False
    if NEGATION.search(clause) or MORE_RE.search(clause) or LESS_RE.search(clause):
        return False
    words = set(word_tokens(clause)) - _RESTATE_FILLER

    def shared(obs: Observable, name: str) -> set[str]:
        return words & set(word_tokens(f"{name.replace('_', ' ')} {obs.description or ''}".lower()))

    mine = shared(manifest.observables[goal.observable], goal.observable)
    others = [len(shared(o, n)) for n, o in manifest.observables.items() if n != goal.observable]
    return len(mine) >= 2 and len(mine) > max(others, default=0) and len(words - mine) <= 1


def resolve(
    goal: Goal, values: Mapping[str, Any], ctx: PlannerContext, kept: Sequence[str] = ()
) -> PlannedCall | Ask | str:
    """The seek call for the goal, given the values the same request sets and the parameters it keeps;
    or a question, or a refusal."""
    manifest = ctx.manifest
    if goal.vary is not None and goal.vary in values:
        return f"{goal.vary} is both set and varied in one request; say which."
    if goal.vary is not None and goal.vary in kept:
        return f"{goal.vary} is both kept and varied in one request; say which."
    vary = goal.vary
    if vary is None:
        taken = {*values, *kept}
        depends = manifest.observables[goal.observable].depends_on
        free = [p for p in depends if p not in taken and (not goal.among or p in goal.among)]
        if goal.among and not free:
            return _among(goal, depends, taken, manifest)
        if not free:
            return _ask(goal, manifest, taken)
        vary = free[0]
    args: dict[str, Any] = {"observable": goal.observable, "goal": goal.goal, "vary": vary}
    if goal.tol is not None:
        args["tol"] = goal.tol
    return PlannedCall("seek", args)


def _among(goal: Goal, depends: Sequence[str], taken: set[str], manifest: Manifest) -> Ask | str:
    """ "by moving the probe", and no parameter of the probe moves the observable (or all are taken)."""
    group = " or ".join(goal.among)
    free = [p for p in goal.among if p not in taken]
    if not free:
        return f"the request sets or keeps {group} itself; I have none of them left to vary."
    if not depends:  # the manifest does not say what moves the observable: ask which
        return Ask(
            f"{LABEL}: Which parameter should I change to "
            f"{aim_phrase(goal.observable, goal.goal, manifest, goal.aim)}? I can vary {', '.join(free)}."
        )
    return (
        f"{goal.observable} depends on {', '.join(depends)} (as its manifest declares), not on {group}; "
        "I cannot reach it by changing those."
    )


# -- reading a goal ---------------------------------------------------------------------------


def _split_vary(clause: str, raw: str, manifest: Manifest) -> tuple[str, str, str]:
    """The clause without what it says to vary, and that ("by changing the angle" -> "the angle").

    "change the angle so that it lands at 50 m" leads with it, when it names a parameter ("change the
    period to 3 s" does not).
    """
    before = _VARY_BEFORE.match(clause)
    if before and (find_params(before.group("what"), manifest) or _group(before.group("what"), manifest)):
        start = before.start("rest")
        return clause[start:], raw[start:], before.group("what")
    after = _VARY_AFTER.search(clause)
    if after and after.start() > 0:
        return clause[: after.start()].rstrip(" ,"), raw[: after.start()].rstrip(" ,"), after.group("what").strip()
    return clause, raw, ""


def _quality(clause: str, manifest: Manifest, unit_span: tuple[int, int] | None) -> Goal | str | None:
    """ "make the orbit circular", "make the planet escape": a value named by its meaning (:data:`_QUALITIES`)."""
    for words, name, relation, value, tol, meaning in _QUALITIES:
        if not words.search(clause):
            continue
        observable = next((o for n, o in manifest.observables.items() if name in n.lower().split("_")), None)
        if observable is None:
            continue
        if mentions_of(clause, manifest, unit_span):
            return None  # a parameter is named: "make the speed circular" is about no orbit
        if relation == ">=":
            return _bounded(Goal(observable.name, value, None), relation, observable, meaning)
        within = f" within {tol:g}" if tol else ""
        note = f"{meaning}: {observable.name} {value:g}{within}"
        return Goal(observable.name, value, None, note=note, tol=tol, aim=f"{value:g}{within} ({meaning})")
    return None


def _worded(clause: str, manifest: Manifest, number: Number | None) -> tuple[Observable, int, int] | None:
    """The observable a clause names with its number's word as the unit: "a path difference of one
    wavelength" is path_difference_wavelengths (the name's last words are that word)."""
    if number is None or number.word is None:
        return None
    word = word_tokens(number.word)
    for name, obs in manifest.observables.items():
        parts = name.lower().split("_")
        for k in range(1, len(parts)):
            if word_tokens(" ".join(parts[k:])) != word:
                continue
            head = " ".join(parts[:k])
            found = list(re.finditer(rf"(?<![\w.']){re.escape(head)}(?![\w'])", clause[: number.start]))
            if found:
                return obs, found[-1].start(), found[-1].end()
    return None


def _reached_noun(
    clause: str, manifest: Manifest, unit_span: tuple[int, int] | None
) -> tuple[str, tuple[int, int]] | None:
    """ "make it reach a height of 15 m": what the flight reaches, named by a parameter's word.

    The measure the word is a noun of and the span of the parameter's mention, or None.
    """
    reach = _REACH.search(clause)
    if reach is None:
        return None
    for _, start, end in sorted(mentions_of(clause, manifest, unit_span), key=lambda m: m[1]):
        if start >= reach.end() and clause[start:end] in _MEASURE_NOUNS:
            return _MEASURE_NOUNS[clause[start:end]], (start, end)
    return None


def _bound(rest: str, number: Number | None) -> tuple[str | None, str]:
    """An inclusive bound ("at least 0.95", "50 m or more"): ">=" / "<=" or None, and the clause without
    its words. A strict one ("above 50 m") stays: it is refused, not sought."""
    if number is None:
        return None, rest
    before, after = rest[: number.start], rest[number.end :]
    for relation, lead, trail in ((">=", _AT_LEAST, _OR_MORE), ("<=", _AT_MOST, _OR_LESS)):
        found = lead.search(before)
        if found:
            return relation, _blank(rest, [(found.start(), found.end())])
        found = trail.search(after)
        if found:
            return relation, _blank(rest, [(number.end + found.start(), number.end + found.end())])
    return None, rest


def _bounded(goal: Goal, relation: str, observable: Observable, meaning: str = "") -> Goal | str:
    """A bound as a value to seek: a window wholly inside it, a margin away from its edge."""
    assert isinstance(goal.goal, float)
    edge = goal.goal
    if edge == 0:
        return f"a bound of 0 on {observable.name} gives me no scale for a window; say the value to reach."
    sign = 1 if relation == ">=" else -1
    near = edge + sign * abs(edge) * BOUND_MARGIN
    far = near + sign * abs(edge) * BOUND_WIDTH
    unit = f" {observable.unit}" if observable.unit else ""
    said = f"{'at least' if relation == '>=' else 'at most'} {fmt(edge)}{unit}"
    low, high = sorted((tidy(near), tidy(far)))
    window = f"{observable.name} {said}: sought within {fmt(low)}..{fmt(high)}{unit}"
    window = f"{meaning}: {window}" if meaning else window
    return dataclasses.replace(
        goal,
        goal=tidy((near + far) / 2),
        tol=tidy(abs(far - near) / 2),
        note="; ".join(filter(None, [goal.note, window])),
        aim=said,
    )


def _lasting(rest: str, number: Number | None) -> bool:
    """ "make the flight last 3 s", "make it fly for 3 s": a duration the thing named lasts."""
    if number is None or number.unit is None:
        return False
    time = _units.dimension("s")
    if (_units.dimension(number.unit) or _units.dimension(number.unit.lower())) != time:
        return False
    return bool(_LASTING.search(rest[: number.start]))


def _measure(rest: str, number: Number | None) -> str | None:
    """What a valued goal measures when it names no observable: "land at 50 m" (far), "make the apex 15
    m" (a noun, :data:`_MEASURES`), "make it fly 15 m high" (an outcome verb and "high" after the number)."""
    if number is None:
        return None
    if _LANDING.search(rest):
        return "far"
    nouns = [_MEASURE_NOUNS[w] for w in re.findall(r"[a-z]+", rest) if w in _MEASURE_NOUNS]
    if nouns and len(set(nouns)) == 1:
        return nouns[0]
    after = rest[number.end :]
    before = rest[: number.start]
    if re.match(r"\s*high\b", after) and _OUTCOME_VERBS.search(before) and not re.search(r"\bfrom\b", before):
        return "high"
    return None


def _group(what: str, manifest: Manifest) -> list[Parameter]:
    """The number parameters of a group the words name ("the probe": probe.x and probe.y)."""
    words = set(re.findall(r"[a-z]+", what.lower()))
    return [
        p
        for p in manifest.parameters.values()
        if "." in p.path
        and p.path.lower().split(".")[0] in words
        and p.type in ("number", "integer")
        and not p.readonly
    ]


def _overlaps(span: tuple[int, int] | None, start: int, end: int) -> bool:
    return span is not None and start < span[1] and end > span[0]


def named_observables(
    clause: str, manifest: Manifest, unit_span: tuple[int, int] | None
) -> list[tuple[Observable, int, int]]:
    """Observables the clause names ("the range", "max height", "time of flight"), with their spans."""
    found: list[tuple[Observable, int, int]] = []
    tokens = set(word_tokens(clause))
    for name, obs in manifest.observables.items():
        words = name.lower().split("_")
        spelled = " ".join(_SPELLED.get(w, w) for w in words)  # "maximum height" for max_height
        forms = dict.fromkeys([name.lower(), name.lower().replace("_", " "), spelled, *obs.aliases])
        spans = [
            (m.start(), m.end())
            for form in forms
            for m in re.finditer(rf"(?<![\w.']){re.escape(form)}(?![\w'])", clause)
            if not _overlaps(unit_span, m.start(), m.end())
        ]
        tokens_of_name = set(word_tokens(name.lower().replace("_", " ")))
        if spans:
            start, end = max(spans, key=lambda s: s[1] - s[0])
            found.append((obs, start, end))
        elif len(tokens_of_name) > 1 and tokens_of_name <= tokens:
            found.append((obs, 0, 0))
    return found


def _names_a_parameter(
    clause: str, manifest: Manifest, named: list[tuple[Observable, int, int]], unit_span: tuple[int, int] | None
) -> bool:
    """Whether the clause names a parameter outside the observables it names (a longer name wins)."""
    mentions = mentions_of(clause, manifest, unit_span)
    if any(not any(s <= ps and pe <= e and e - s > pe - ps for _, s, e in named) for _, ps, pe in mentions):
        return True
    rest = _blank(clause, [(s, e) for _, s, e in named] + ([unit_span] if unit_span else []))
    return bool(find_params(rest, manifest))


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


def _is_relative(text: str, number: Number | None) -> bool:
    """ "increase the range", "double the period", "range above 50 m": not a value to reach."""
    if MORE_RE.search(text) or LESS_RE.search(text):
        return True
    if any(re.search(rf"\b(?:{words})\b", text) for words, _ in FACTORS):
        return True
    before = text[: number.start] if number else ""
    return bool(BOUND.search(before) or re.search(r"\bby\s*$", before))


def _observable(
    clause: str,
    manifest: Manifest,
    named: list[tuple[Observable, int, int]],
    measure: str | None,
    by_name: bool = False,
) -> Observable | str:
    """The one observable the goal is about: the one named, else the one whose words fit the measure.

    ``by_name``: the measure alone does not settle it ("make it last 3 s": what lasts?); the clause must
    also use a word of the observable's name ("the flight" for flight_time).
    """
    if named:
        longest = max(e - s for _, s, e in named)
        best = [o for o, s, e in named if e - s == longest]
        if len(best) == 1:
            return best[0]
        return f'"{clause}" could mean ' + " or ".join(o.name for o in best) + "; name one of them."
    assert measure is not None
    keywords, units, noun = _MEASURES[measure]
    dims = {_units.dimension(u) for u in units}
    tokens = {_NOUNS.get(t, t) for t in word_tokens(clause)}
    scored: list[tuple[int, Observable]] = []
    for name, obs in manifest.observables.items():
        name_words = set(word_tokens(name.lower().replace("_", " ")))
        text_words = set(word_tokens((obs.description or "").lower()))
        score = 2 * bool(name_words & keywords) + bool(text_words & keywords) + bool(name_words & tokens)
        if score and _units.dimension(obs.unit) in dims:
            scored.append((score, obs))
    top = [o for s, o in scored if s == max((s for s, _ in scored), default=0)]
    if not top:
        return f'nothing this target reports fits "{clause}".'
    if by_name:
        said = [o for o in top if set(word_tokens(o.name.lower().replace("_", " "))) & tokens]
        if not said:
            options = " or ".join(o.name for o in top)
            return f'"{clause}": I could not tell what should last that long ({options}?); name the observable.'
        top = said
    if len(top) > 1:
        return f'"{clause}" could mean ' + " or ".join(o.name for o in top) + "; name one of them."
    # "make the pendulum as long as possible": its length, perhaps; "make it swing as long as possible" is not
    words = set(re.findall(r"[a-z]+", clause))
    meant = [
        p
        for p in manifest.parameters.values()
        if noun in core_words(p) and p.type in ("number", "integer") and p.path.lower().split(".")[0] in words
    ]
    if meant and not _OUTCOME_VERBS.search(clause):
        return f'"{clause}" could mean {top[0].name} or {meant[0].path}; name one of them.'
    return top[0]


def _vary(what: str, clause: str, manifest: Manifest) -> Parameter | list[Parameter] | str | None:
    """The number parameter the request says to vary (or the group's: "the probe"), None when it names
    none, or why it cannot be varied."""
    if not what:
        return None
    params = find_params(what, manifest)
    if not params:
        group = _group(what, manifest)
        return group if len(group) > 1 else group[0] if group else None
    if len(params) > 1:
        return f'"{clause}" could vary ' + " or ".join(p.path for p in params) + "; name one of them."
    if not params:
        return None
    param = params[0]
    if param.type not in ("number", "integer") or param.readonly:
        kind = "read-only" if param.readonly else f"a {param.type}"
        return f"{param.path} is {kind}; I can only vary a number parameter to reach a goal."
    return param


def _valued(observable: Observable, number: Number, clause: str, vary: Parameter | None) -> Goal | str:
    """A goal on a value, converted to the observable's unit ("0.05 km" -> 50 when it is in m)."""
    name, unit, value = observable.name, observable.unit, number.value
    if number.others:
        return f'"{clause}" holds more than one number; I could not tell which one {name} should reach.'
    if number.unit is None and number.word and unit and number.word not in AFTER_NUMBER:
        return f'I do not know the unit "{number.word}"; {name} is in {unit}.'
    note = ""
    if number.unit and not unit and _units.is_physical(number.unit):
        return f"{name} has no unit; I cannot use {number.unit} for it."
    if number.unit and unit and not _units.same(number.unit, unit):
        spellings = dict.fromkeys([number.unit, number.unit.lower()])  # as written first ("MHz")
        converted = next((c for u in spellings if (c := _units.convert(value, u, unit)) is not None), None)
        if converted is None:
            return f"{name} is in {unit}; I cannot convert {number.unit} to that."
        note = f"{fmt(value)} {number.unit} = {fmt(tidy(converted))} {unit}"
        value = converted
    return Goal(name, tidy(value), vary.path if vary else None, note)


def _ask(goal: Goal, manifest: Manifest, values: Collection[str]) -> Ask | str:
    """Which parameter to vary: a question naming the number parameters the request does not set."""
    candidates = [
        p
        for p in manifest.parameters.values()
        if p.type in ("number", "integer") and not p.readonly and p.path not in values
    ]
    if not candidates:
        aim = aim_phrase(goal.observable, goal.goal, manifest, goal.aim)
        return f"there is no number parameter left to vary to {aim}."
    names = ", ".join(p.path for p in candidates)
    example = candidates[0].name.replace("_", " ")
    return Ask(
        f"{LABEL}: Which parameter should I change to {aim_phrase(goal.observable, goal.goal, manifest, goal.aim)}? "
        f'I can vary {names}; say, for example, "... by changing the {example}".'
    )


# -- the reply --------------------------------------------------------------------------------
