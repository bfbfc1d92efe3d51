"""One clause of a request read as one change: a value with its unit, a relative change, a switch,
an option, a halt, or the parameters a clause keeps as they are."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...core import _units
from ...manifest import Manifest, Parameter
from . import _counts, _goals, _positions, _running, _vocabulary
from ._context import PlannerContext
from ._format import fmt, tidy
from ._lexicon import (
    ADJECTIVE_NOUNS,
    AFTER_NUMBER,
    AS_ADJECTIVES,
    BOUND,
    BY_AMOUNT,
    COMPARATIVES,
    COMPARED_AMOUNT,
    CSS_COLOURS,
    DISTANCES,
    FACTORS,
    HALT,
    HALTS,
    KEEP,
    KEEP_FILLER,
    LESS_RE,
    MORE_RE,
    NEGATION,
    NEGATIVE_NAMES,
    NOT_COMPARATIVES,
    NUMBER_RE,
    POLITE,
    SEEN_OFF,
    SEEN_ON,
    STATE_VERB,
    SWITCH_OFF,
    SWITCH_ON,
    TOGGLE,
    Number,
    core_words,
    find_params,
    mentions_of,
    name_forms,
    phrasal,
    read_number,
    word_tokens,
)
from ._values import converted_to, in_its_unit


def read_clause(clause: str, raw: str, ctx: PlannerContext, current: Mapping[str, Any]) -> tuple[str, Any, str] | str:
    """One clause -> (path, value, note) or the reason it could not be mapped."""
    manifest = ctx.manifest
    said = phrasal(clause)  # "speed the flock up": the flock faster
    if said != clause:
        clause = raw = said
    lacking = re.search(r"\b([a-z]{3,})less\b", clause)  # "make it airless": its "no air"
    if lacking and any(f"no {lacking.group(1)}" in (p.named or {}) for p in manifest.parameters.values()):
        clause = raw = clause.replace(lacking.group(0), f"no {lacking.group(1)}")
    per = _counts.rate(clause, manifest)  # "10 rolls a second", "365 days every second"
    if isinstance(per, tuple):
        return per
    if per is not None:
        clause = raw = per
    of = _counts.counted(clause, manifest, current)  # "200 of them", "a flock of 60"
    if of is not None:
        return of
    number = read_number(clause, raw, manifest)
    showing = re.match(rf"(?:please )?(?:{SEEN_ON}|{SEEN_OFF})\b", clause) is not None
    if number is not None and number.word and showing and _vocabulary.in_a_description(number, manifest):
        number = None  # "hide the zero crossings": words of a description, not a value
    skip = (number.unit_start, number.end) if number and number.unit else None
    params = find_params(clause, manifest, skip)
    counted = _counts.counted_param(number, manifest) if number is not None and not params else None
    if counted is not None and _goals.named_observables(clause, manifest, skip):
        counted = None  # "make the largest cluster 50 boids": a goal on what the page measures, not the count
    if counted is not None and BY_AMOUNT.search(clause):  # "remove 20 boids": a change by an amount
        return (
            f'I read "{raw.strip()}" as changing {counted.path} by an amount, which I do not guess; '
            f'say the number you want (for example "set {(counted.label or counted.name).lower()} to N")'
        )
    if counted is not None:  # "put 300 boids in the sky": the number of boids
        params = [counted]

    if number is None and params:  # "at mars orbit": a named value whose words hold the parameter's mention
        spoken = _named_span(clause, manifest)
        if spoken is not None and all(
            spoken[0] <= start and end <= spoken[1] for _, start, end in mentions_of(clause, manifest, None)
        ):
            params = [manifest.parameters[spoken[2]]]

    runs = _running.running(clause, manifest) if number is None else None
    if runs is not None:  # "freeze it", "let it run": the page's pause or running switch
        return runs
    switch = _switch(clause, manifest, params, current, number)
    if switch is not None:
        return switch if isinstance(switch, str) else (switch[0], switch[1], "")
    halt = _halt(clause, ctx) if number is None else None
    if halt is not None:  # "stop the ball": the speed whose description says 0 stops it
        return halt
    if NEGATION.search(_without_named_values(clause, manifest)):  # "don't set the speed to 12" must not set it
        return f'"{clause}" says what not to do; I only carry out plain requests.'
    if re.search(r"\b(?:reset|restore|revert|start over|start again)\b", clause):  # "start over with speed 12"
        return f'"{clause}": ask for a reset on its own, then for the change.'
    if len(params) > 1 and number is None:  # "the planet at mars orbit": the one of them that has that name
        named_among = [n for n in (_named_value(clause, manifest, p) for p in params) if isinstance(n, tuple)]
        if len(named_among) == 1:
            return named_among[0]
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
        enum_hit = enum_value(clause, ctx)
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

    if number is None:
        named = _named_value(clause, manifest, param)
        if named is not None:  # "moon gravity", "slow motion", "drag off"
            return named

    where = _positions.placed(clause, manifest, params, number)
    if where is not None:  # "5 cm above the axis", "10 cm between them", "gravity 12 pointing down"
        return where
    turned = _positions.turned(clause, number)
    if turned is not None:  # "make gravity point up": a way with no value
        return turned

    relative = _relative(clause, manifest, param, current, number)
    if relative is not None:
        return relative

    if param is None and number is not None and number.unit is None:
        glossed = _glossed_count(clause, number, manifest)  # "hang two bobs": double, "a second rod and bob"
        if glossed is not None:
            return glossed
    if param is None:
        param = _by_unit(clause, manifest, number)
    if param is None:
        return f'I could not tell which parameter "{clause}" is about.'
    if number is not None and COMPARED_AMOUNT.match(clause, number.end):  # "5 m lower": by 5, from where?
        amount = f"{fmt(number.value)} {number.unit}" if number.unit else fmt(number.value)
        return f'"{clause}": I could not tell whether to change {param.path} by {amount} or to it.'
    if param.type == "string":
        quoted = re.search(r"['\"](.+?)['\"]", raw) or re.search(r"\bto\s+(\S+)$", raw)
        if quoted:
            return param.path, quoted.group(1), ""
        colour = _unknown_colour(clause, manifest) if param.enum else None
        return colour or f'I could not find the value for {param.path} in "{clause}".'
    if param.type == "array":
        numbers = NUMBER_RE.findall(clause)
        if param.length and len(numbers) == param.length:
            return param.path, [float(n) for n in numbers], ""
        return f'{param.path} needs {param.length or "a list of"} numbers, as in "set {param.name} to 1, 2, 3".'
    if number is None:
        return f'I found {param.path} but no number in "{clause}".'
    if number.others:
        return f'"{clause}" holds more than one number; I could not tell which one {param.path} should take.'
    before = clause[: number.start]
    if re.search(r"\bby(?: another| a further| an extra| a)?\s*$", before):  # "steeper by 10": a change, no value
        return f'"{clause}": I could not tell which way to change {param.path} by {fmt(number.value)}.'
    if BOUND.search(before):  # "speed above 12" does not ask for 12
        return f'"{clause}" asks for a range, not a value; say the value for {param.path}.'
    if number.unit is None and number.word and param.unit and number.word not in AFTER_NUMBER:
        return f'I do not know the unit "{number.word}"; {param.path} is in {param.unit}.'
    return in_its_unit(param, number.value, number.unit)


_GOAL_WORDS = re.compile(r"\b(?:land|lands|landing|reach|hit|aim|away|range|so that|until|target)\b")


def _by_unit(clause: str, manifest: Manifest, number: Number | None) -> Parameter | None:
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
    if len(matches) > 1:  # "fill 90 percent of the cells": the one whose description says what it is of
        words = _vocabulary.stems(clause) - _vocabulary.FUNCTION_WORDS
        scores = [len(words & _vocabulary.subject_stems(p)) for p in matches]
        best = max(scores)
        if best > 0 and scores.count(best) == 1:
            return matches[scores.index(best)]
    return matches[0] if len(matches) == 1 else None


def _switch_words(text: str, negative_name: bool) -> tuple[int, int, int]:
    """How many words in ``text`` say on, say off, and negate."""
    negations = len(NEGATION.findall(text))
    text = NEGATION.sub(" ", text)
    seen_on = len(re.findall(rf"\b(?:{SEEN_ON})\b", text))
    seen_off = len(re.findall(rf"\b(?:{SEEN_OFF})\b", text))
    if negative_name:  # "show the labels" turns hide_labels off
        seen_on, seen_off = seen_off, seen_on
    on = seen_on + len(re.findall(rf"\b(?:{SWITCH_ON})\b", text))
    off = seen_off + len(re.findall(rf"\b(?:{SWITCH_OFF})\b", text))
    return on, off, negations


def _without_names(clause: str, param: Parameter) -> tuple[str, bool]:
    """The clause with the parameter's own names blanked, and whether any was there.

    A name holds switch words of its own: "switch off show trail" is off, whatever "show" says.
    """
    named = False
    for form in name_forms(param):
        clause, n = re.subn(rf"(?<![\w.]){re.escape(form)}(?!\w)", " ", clause)
        named = named or n > 0
    return clause, named


def _switch(
    clause: str, manifest: Manifest, params: list[Parameter], current: Mapping[str, Any], number: Number | None
) -> tuple[str, bool] | str | None:
    """A boolean set on or off by the clause, the reason it cannot be, or None when it is no switch."""
    booleans = [p for p in manifest.parameters.values() if p.type == "boolean" and not p.readonly]
    tokens = set(word_tokens(clause))
    named = [p for p in params if p in booleans]
    candidates = named or [p for p in booleans if set(core_words(p)) <= tokens]
    weak = False  # found by the words of a description or a state, not by a name
    if not candidates:  # "show the lines": one word of the name is enough when only one switch has it
        candidates = [p for p in booleans if set(core_words(p)) & tokens]
    if not candidates:  # "show the velocity arrows", "draw its path": a thing the switch draws
        switching = re.search(rf"\b(?:{SEEN_ON}|{SEEN_OFF}|{SWITCH_ON}|{SWITCH_OFF})\b", clause) is not None
        things = _vocabulary.things_of(manifest)
        candidates = _vocabulary.displayed(clause, booleans, switching=switching, things=things)
        weak = bool(candidates)
    if not candidates:  # "keep the floor burning", "let the rules wander": a word that says it is on
        candidates = _vocabulary.stated(clause, booleans)
        weak = weak or bool(candidates)
    if len(candidates) > 1:
        best = max(len(core_words(p)) for p in candidates)
        candidates = [p for p in candidates if len(core_words(p)) == best]
    decided: list[tuple[Parameter, bool | str]] = []
    for param in candidates:
        text, by_name = _without_names(clause, param)
        negative = param.name.lower().split("_")[0] in NEGATIVE_NAMES
        on, off, negations = _switch_words(text, negative)
        toggle = bool(TOGGLE.search(text))
        rest = set(re.findall(r"[a-z']+", NEGATION.sub(" ", text)))
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
            verb_led = param.name.lower().split("_")[0] in ({"show", "display", "enable", "use"} | NEGATIVE_NAMES)
            # or a word that says it is on: "keep it paused", "keep the floor burning", "round atoms"
            said = _vocabulary.stems(clause) - _vocabulary.FUNCTION_WORDS
            states = (_vocabulary.stems(text) - _vocabulary.FUNCTION_WORDS) & _vocabulary.state_stems(param)
            stately = bool(states) or (by_name and STATE_VERB.search(text) is not None)
            adjective = any(re.search(rf"\b{re.escape(a)}\b", clause) for a in param.aliases if " " not in a)
            if number is None and _vocabulary.described_verb(clause, param):  # not "perception radius 7.85"
                stately = True  # "circle the clusters", "trace the bob's path"
            nouns = _vocabulary.target_nouns(manifest) | _vocabulary.FUNCTION_WORDS
            if adjective and _vocabulary.stems(" ".join(rest - POLITE)) <= nouns:  # "round atoms"
                stately = True
            if _vocabulary.opposite_state(param, said) or said & _vocabulary.off_stems(param):
                stately, off = True, 1  # "keep the game paused" on a running flag; "square atoms"
                negations = len(NEGATION.findall(re.sub(r"\bstop(?:ped)?\b", " ", text)))  # "stop" said it
            elif not (by_name and verb_led and rest <= POLITE) and not stately:
                continue
            else:
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
        any(m.group(1) != "add" for m in MORE_RE.finditer(clause))
        or LESS_RE.search(clause) is not None
        or any(re.search(rf"\b(?:{words})\b", clause) for words, _ in FACTORS)  # "toggle it twice"
    )
    options = [o for p in manifest.parameters.values() for o in p.enum or () if isinstance(o, str)]
    if number is not None or scales or any(re.search(rf"\b{re.escape(o.lower())}\b", clause) for o in options):
        if weak:  # "fatter ball on screen": a switch found by its description's words gives way to the change
            return None
        return f'"{clause}": I can only turn {param.path} on or off; say the other change in its own clause.'
    return param.path, value


def enum_value(clause: str, ctx: PlannerContext) -> tuple[str, Any, str] | None:
    hits = []
    tokens = set(word_tokens(clause))
    said = _vocabulary.stems(clause) - _vocabulary.FUNCTION_WORDS - _vocabulary.SWITCH_VERBS - _STATE_STEMS
    joined = " ".join(f"{a}{b}" for a, b in zip(clause.split(), clause.split()[1:], strict=False))
    clause = f"{clause} {joined}" if joined else clause  # "hot pink": hotpink, "sea green": seagreen
    for p in ctx.manifest.parameters.values():
        if p.enum is None or p.readonly:
            continue
        for option in p.enum:
            if isinstance(option, str) and re.search(rf"\b{re.escape(option.lower())}\b", clause):
                # "double it" is a factor, not double mode: a word that also scales needs the parameter's
                # group or the target named beside it ("double pendulum")
                if re.fullmatch("|".join(f for f, _ in FACTORS), option.lower()):
                    context = set(word_tokens(p.path.replace(".", " "))) | set(word_tokens(ctx.manifest.id))
                    if not (tokens - {option.lower()}) & context:
                        continue
                hits.append((p.path, option, ""))
    hiding = re.search(rf"\b(?:{SEEN_OFF})\b", clause) is not None  # "hide the fringes" names what to leave
    if not hits and not hiding:  # "show the instantaneous surface": the option whose gloss holds every word said
        for p in ctx.manifest.parameters.values():
            if p.readonly:
                continue
            hits += [
                (p.path, o, f'"{o}" is {p.path}')
                for o, words in _vocabulary.glosses(p).items()
                if said and said <= words
            ]
    return hits[0] if len(hits) == 1 else None


_STATE_STEMS = frozenset(
    _vocabulary.stem(w) for w in ("make", "keep", "set", "let", "have", "get", "put", "use", "give", "want")
)
_NUMERALS = {1: ("one", "single"), 2: ("two", "second", "double", "pair", "both"), 3: ("three", "third", "triple")}


def _glossed_count(clause: str, number: Number, manifest: Manifest) -> tuple[str, Any, str] | None:
    """The option whose gloss holds the clause's words and says its number ("2 rods": "double: a
    second equal rod and bob"), where exactly one does."""
    numerals = (
        {_vocabulary.stem(w) for w in _NUMERALS.get(int(number.value), ())} if number.value.is_integer() else set()
    )
    said = (
        _vocabulary.stems(clause[: number.start] + " " + clause[number.end :])
        - _vocabulary.FUNCTION_WORDS
        - _STATE_STEMS
    )
    if not numerals or not said:
        return None
    hits = [
        (p.path, option, f'"{clause}": {option}')
        for p in manifest.parameters.values()
        if not p.readonly
        for option, words in _vocabulary.glosses(p).items()
        if said <= words and numerals & words
    ]
    return hits[0] if len(hits) == 1 else None


def _relative(
    clause: str, manifest: Manifest, param: Parameter | None, current: Mapping[str, Any], number: Number | None
) -> tuple[str, Any, str] | str | None:
    factor = next((f for words, f in FACTORS if re.search(rf"\b(?:{words})\b", clause)), None)
    more, less = MORE_RE.search(clause), LESS_RE.search(clause)
    if factor is None and not (more or less) and param is None:
        shaped = _shaped_comparative(clause, manifest)  # "make the air draggier", "clumpier"
        if shaped is not None:
            param, more = shaped
    if factor is None and not (more or less):
        return None
    if more and less:
        return f'"{clause}": I could not tell whether to increase or decrease.'
    said = more or less
    direction = 1 if more else -1 if less else 0
    if factor is not None and said and (factor > 1) != (direction > 0):
        return f'"{clause}": a factor of {fmt(factor)} does not go the way "{said.group(1)}" says.'
    if param is None:  # "a bit flatter": the parameter the comparative names in the manifest's words
        word = said.group(1) if said else None
        alike = re.search(r"\bas ([a-z]+)\b", clause) if factor is not None and not said else None
        if alike and alike.group(1) in AS_ADJECTIVES:  # "twice as fast", "half as big"
            word = AS_ADJECTIVES[alike.group(1)]
        _way, concepts, units = COMPARATIVES.get(word or "", (0, (), ()))
        if word in ("higher", "lower") and not concepts:  # "put the probe a bit higher": its y, named
            ys = [
                p for p in _vocabulary.numbers(manifest) if _positions.axis(p) == "vertical" and p.path.endswith(".y")
            ]
            named_ys = [p for p in ys if p.path.split(".")[0] in set(word_tokens(clause))]
            if len(named_ys) == 1:
                param = named_ys[0]
        if param is None:
            pool = _vocabulary.numbers(manifest, clause)
            if word in DISTANCES:  # "see farther": a distance, never a weight named "separation"
                pool = _vocabulary.lengths(pool)
            candidates = _vocabulary.named_by(pool, concepts, units) if concepts else []
            adjective = re.search(r"\b(?:more|less|fewer)\s+([a-z]+)\b", clause) if not concepts else None
            if adjective is not None and not re.search(r"(?<![ou])s$", adjective.group(1)):  # not "more balls"
                adj = adjective.group(1)  # "more damped", "more often", "less viscous"
                concepts = tuple({adj, ADJECTIVE_NOUNS.get(adj, adj), adj[:-1] if adj.endswith("y") else adj})
                candidates = _vocabulary.adjective_named(pool, concepts)
            if len(candidates) > 1:  # "a heavier bottom bob": the one the clause's other words name
                others = (
                    _vocabulary.stems(clause) - _vocabulary.FUNCTION_WORDS - {_vocabulary.stem(c) for c in concepts}
                )
                scores = [len(others & (_vocabulary.name_stems(p) | _vocabulary.named_stems(p))) for p in candidates]
                if max(scores) > 0 and scores.count(max(scores)) == 1:
                    candidates = [candidates[scores.index(max(scores))]]
            if len(candidates) > 1:
                names = " or ".join(p.path for p in candidates)
                return f'"{clause}" could mean {names}; name one of them.'
            if not candidates:
                unknown = f'"{clause}": I could not tell which parameter to change.'
                return None if not concepts and factor is None else unknown
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
        return f'"{clause}": I could not tell whether to scale {param.path} or set it to {fmt(number.value)}.'
    note = ""
    if number is not None:
        amount = number.value
        if re.search(r"\bby\s*$", before) and unit in ("%", "percent"):
            if param.unit and _units.same(param.unit, "%"):
                return f'"{clause}": {param.path} is in % itself; say the new value instead.'
            target = now * (1 + direction * amount / 100)
        elif re.search(r"\bby\s*$", before) or re.fullmatch(r"(?:please )?(?:add|subtract)\s*", before):
            if unit and param.unit and not _units.same(unit, param.unit):
                converted = converted_to(param, amount, unit, delta=True)
                if converted is None:
                    return f"{param.path} is in {param.unit}; I cannot convert {unit} to that."
                amount = converted
            target = now + direction * amount
        elif re.search(r"\bto\s*$", before):  # "increase the speed to 12" sets 12 if that is an increase
            absolute = in_its_unit(param, amount, unit)
            if isinstance(absolute, str):
                return absolute
            if (absolute[1] - now) * direction <= 0:
                return f'"{clause}": {fmt(absolute[1])} is not {"more" if direction > 0 else "less"} than {fmt(now)}.'
            return absolute
        else:
            return f'"{clause}": I could not tell whether to change {param.path} by {fmt(amount)} or to it.'
    elif re.search(r"\bby\b", clause):
        return f'"{clause}": I could not find by how much.'
    else:
        how = ""
        if factor is None:  # no amount: the documented steps (docs/writing-targets.md, section 2)
            degree = _degree(clause)
            factor = RELATIVE_FACTORS[degree] if direction > 0 else 1 / RELATIVE_FACTORS[degree]
            how = f"{degree}: x{fmt(tidy(factor))}"
        target = now * factor
        if now == 0 and direction:
            degree = _degree(clause)
            step = param.step or (
                (param.max - param.min) / 10 if param.max is not None and param.min is not None else 1
            )
            target = direction * step * FROM_ZERO_STEPS[degree]
            how = f"{degree}: {FROM_ZERO_STEPS[degree]} step{'s' * (FROM_ZERO_STEPS[degree] != 1)} of {fmt(step)}"
        if how:
            shown = round(target) if param.type == "integer" else tidy(target)
            unit_text = f" {param.unit}" if param.unit else ""
            note = f"{param.path} {fmt(now)} -> {fmt(shown)}{unit_text} ({how})"
    if param.max is not None and target > param.max:
        target, note = param.max, f"{param.path} is capped at its maximum {fmt(param.max)}"
    if param.min is not None and target < param.min:
        target, note = param.min, f"{param.path} is held at its minimum {fmt(param.min)}"
    value: Any = round(target) if param.type == "integer" else tidy(target)
    return param.path, value, note


def _shaped_comparative(clause: str, manifest: Manifest) -> tuple[Parameter, re.Match[str]] | None:
    """A comparative that is no word of the tables ("draggier", "clumpier", "fuller") whose stem names
    one number parameter by its name, label or aliases: (that parameter, the word as a "more")."""
    found = []
    for m in re.finditer(r"\b([a-z]{2,}?)(ier|er)\b", clause):
        if m.group(0) in NOT_COMPARATIVES or m.group(0) in COMPARATIVES:
            continue
        base = m.group(1)
        bases = {base + "y", base} if m.group(2) == "ier" else {base}
        bases |= {b[:-1] for b in bases if len(b) > 3 and b[-1] == b[-2]}  # "fatter" -> "fat"
        params = _vocabulary.numbers(manifest)
        hits = [p for p in params if {_vocabulary.stem(b) for b in bases} & (
            _vocabulary.name_stems(p) | _vocabulary.named_stems(p))]  # fmt: skip
        found += [(p, m) for p in hits]
    return found[0] if len(found) == 1 else None


RELATIVE_FACTORS = {"a little": 1.1, "some": 1.25, "much": 2.0}  # "a bit higher", "higher", "much higher"
FROM_ZERO_STEPS = {"a little": 1, "some": 1, "much": 5}  # steps of the manifest's step (or a tenth of the range) from 0


def _degree(clause: str) -> str:
    if re.search(r"\b(?:a (?:little|bit|touch|tad)|slightly|a tiny bit|somewhat)\b", clause):
        return "a little"
    if re.search(r"\b(?:much|a lot|way|far|lots)\b", clause):
        return "much"
    return "some"


def kept_params(clause: str, manifest: Manifest) -> list[str] | None:
    """The parameters a clause says to keep as they are ("keeping that drag", "with the same speed"), or
    None when it is no such clause. A clause with a number ("keep the speed at 12") is a set, as before."""
    match = KEEP.match(clause)
    if match is None or read_number(clause, clause, manifest) is not None:
        return None
    what = match.group("what") or match.group("same") or match.group("without") or ""
    params = find_params(what, manifest)
    if not params:
        return None
    said = _vocabulary.stems(what) - _vocabulary.FUNCTION_WORDS
    if any(p.type == "boolean" and said & (_vocabulary.state_stems(p) - _vocabulary.name_stems(p)) for p in params):
        return None  # "keep the floor burning": a state to put it in, not a value to keep
    named = set(word_tokens(what))
    for p in params:
        named -= set(word_tokens(" ".join(name_forms(p)).replace(".", " ").replace("_", " ")))
    return [p.path for p in params] if named <= KEEP_FILLER else None


def _halt(clause: str, ctx: PlannerContext) -> tuple[str, Any, str] | None:
    """ "stop the ball": the one number parameter whose description says 0 stops it ("How fast the ball
    travels; 0 stops it"), set to 0; the thing stopped must be what its description or the target names."""
    match = HALT.match(clause)
    if match is None:
        return None
    thing = match.group("thing") or match.group("made")
    found = []
    for p in ctx.manifest.parameters.values():
        text = f"{p.label or ''} {p.description or ''}".lower()
        if p.type not in ("number", "integer") or p.readonly or not HALTS.search(text):
            continue
        if (p.min is not None and p.min > 0) or (p.max is not None and p.max < 0):
            continue
        about = set(word_tokens(f"{text} {ctx.manifest.id} {ctx.manifest.title or ''}".lower()))
        if thing is None or set(word_tokens(thing)) <= about:
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
        if p.enum and not p.readonly and sum(isinstance(o, str) and o.lower() in CSS_COLOURS for o in p.enum) >= 2
    ]
    options = {str(o).lower() for p in palettes for o in p.enum or ()}
    named = [w for w in re.findall(r"[a-z]+", clause) if w in CSS_COLOURS and w not in options]
    if not palettes or not named:
        return None
    allowed = "; ".join(f"{p.path}: {', '.join(str(o) for o in p.enum or ())}" for p in palettes)
    return f"{named[0]} is not one of the colours I can set ({allowed})."


def _without_named_values(clause: str, manifest: Manifest) -> str:
    """The clause without the values the manifest names ("stopped" is the speed's 0, no negation)."""
    for p in manifest.parameters.values():
        for key in p.named or {}:
            clause = re.sub(rf"(?<![\w.]){re.escape(key)}(?!\w)", " ", clause)
    return clause


def _named_span(clause: str, manifest: Manifest) -> tuple[int, int, str] | None:
    """The longest named value (of any parameter) in the clause: its span and its parameter's path."""
    best: tuple[int, int, str] | None = None
    for p in manifest.parameters.values():
        for key in p.named or {}:
            for m in re.finditer(rf"(?<![\w.]){re.escape(key)}(?!\w)", clause):
                if best is None or m.end() - m.start() > best[1] - best[0]:
                    best = (m.start(), m.end(), p.path)
    return best


ALONE_MIN_CHARS = 4  # a named value said with no parameter ("moon") must be at least this long: not "off"


def _named_value(clause: str, manifest: Manifest, param: Parameter | None) -> tuple[str, Any, str] | str | None:
    """A value the manifest names (``"named": {"moon": 1.62}``) said in the clause: for the parameter
    it names, or (none named) for the one parameter that has that name, if only one does."""
    candidates = [param] if param is not None else [p for p in manifest.parameters.values() if p.named]
    if param is not None and param.named and re.match(r"^(?:no|without)\b", clause):
        off = next((key for key in ("off", "none") if key in param.named), None)
        if off is not None:  # "no damping": the value the manifest calls off
            return param.path, param.named[off], f'"no {param.name}" is its "{off}", {param.named[off]}'
    hits = []
    for p in candidates:
        for key, value in (p.named or {}).items():
            if param is None and len(key) < ALONE_MIN_CHARS:
                continue
            if re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", clause):
                hits.append((p, key, value))
    if not hits:
        return None
    longest = max(len(k) for _, k, _ in hits)  # "slow motion" over "slow"
    hits = [h for h in hits if len(h[1]) == longest]
    if len({(p.path, v) for p, _, v in hits}) > 1:
        said = ", ".join(f"{k} ({p.path})" for p, k, _ in hits)
        return f'"{clause}" names several values: {said}; say which.'
    p, key, value = hits[0]
    unit = f" {p.unit}" if p.unit else ""
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return p.path, value, f'"{key}" is {value:g}{unit}' if numeric else f'"{key}" is {value}'
