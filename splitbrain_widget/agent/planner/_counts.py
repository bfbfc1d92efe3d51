"""What a number counts and how often it happens: "200 of them" and "a flock of 60" (the target's one
count), "10 rolls a second" (the rate whose description names rolls), "365 days every second" (a
rate in days per second)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...core import _units
from ...manifest import Manifest, Parameter
from . import _vocabulary
from ._format import tidy
from ._lexicon import NUMBER_WORDS, Number, is_unit, word_tokens

RATE = re.compile(
    rf"(?P<n>-?\d+(?:\.\d+)?|{'|'.join(NUMBER_WORDS)}) (?P<what>[a-z]+) "
    r"(?:a|per|each|every|an|in a|in one) (?P<per>second|minute|hour|day)\b"
)
_PER = {"second": "s", "minute": "min", "hour": "h", "day": "day"}
OF_THEM = re.compile(r"\b(?P<n>\d+) of them\b")
GROUP_OF = re.compile(r"\b(?P<group>[a-z]+) of (?P<n>\d+)$")
MORE_OF = re.compile(r"^(?P<way>more|fewer|less) (?P<noun>[a-z]+) to (?P<n>\d+)$")


_COUNT_LABEL = re.compile(r"(?:the )?(?:number|count|amount) of\b(?: (?:the )?([a-z]+)$)?")
_COUNT_NAME = re.compile(r"(?:^|_)(?:count|num|number)(?:_|$)")
_NAME_NOUN = re.compile(r"(?:num|n|number)_([a-z]+)|([a-z]+)_(?:count|number)")


def _whole_numbers(manifest: Manifest) -> list[Parameter]:
    return [p for p in manifest.parameters.values() if p.type == "integer" and not p.readonly]


def counts(manifest: Manifest) -> list[Parameter]:
    """The whole-number parameters that count things: "Number of boids", ``*_count``, "How many ..."."""
    return [
        p
        for p in _whole_numbers(manifest)
        if _COUNT_LABEL.match((p.label or "").lower())
        or _COUNT_NAME.search(p.name.lower())
        or re.match(r"how many\b", (p.description or "").lower())
    ]


def counted_param(number: Number, manifest: Manifest) -> Parameter | None:
    """The one count whose label or name says the thing the word after the number names ("300 boids":
    the parameter labelled "Number of boids", or named num_boids / boid_count)."""
    word = number.unit or number.word
    if not word:
        return None
    noun = word_tokens(word.lower())
    hits = []
    for p in _whole_numbers(manifest):  # n_boids too, which counts() leaves to its description
        label = _COUNT_LABEL.fullmatch((p.label or "").lower())
        name = _NAME_NOUN.fullmatch(p.name.lower())
        nouns = [g for m in (label, name) if m for g in m.groups() if g]
        if any(word_tokens(n) == noun for n in nouns):
            hits.append(p)
    return hits[0] if len(hits) == 1 else None


def counted(clause: str, manifest: Manifest, current: Mapping[str, Any]) -> tuple[str, int, str] | str | None:
    """ "200 of them", "a flock of 60", "more boids to 300" (an aside's): the target's one count, set;
    the reason where it cannot be (a change by an amount, a value outside its range or the other way)."""
    found = counts(manifest)
    if len(found) != 1:
        return None
    p = found[0]
    words = {_vocabulary.stem(w) for w in {p.path.split(".")[0]} | _vocabulary.stems(p.label)} - {"number", "count"}
    match = OF_THEM.search(clause) or GROUP_OF.search(clause)
    way = MORE_OF.match(clause)
    if way is not None:
        if _vocabulary.stem(way.group("noun")) not in words:
            return None
        match = way
    elif match is None or ("group" in match.groupdict() and _vocabulary.stem(match.group("group")) not in words):
        return None
    if re.search(r"\b(?:remove|take away|delete|drop|kill|lose|get rid of|add|another|extra)\b", clause):
        return f'"{clause}" changes {p.path} by an amount, which I do not guess; say the number you want.'
    value = int(match.group("n"))
    if (p.min is not None and value < p.min) or (p.max is not None and value > p.max):
        return f"{p.path} takes {p.min or 0:g}..{p.max or 0:g}; {value} is outside it."
    now = current.get(p.path, p.value)
    if way is not None and isinstance(now, int | float) and (value > now) != (way.group("way") == "more"):
        return f'"{clause}": {value} is not {"more" if way.group("way") == "more" else "fewer"} than {now:g}.'
    return p.path, value, f'"{match.group(0)}": {p.path}'


def rate(clause: str, manifest: Manifest) -> str | tuple[str, float, str] | None:
    """ "10 rolls a second": the clause with a rate in a unit ("365 days every second" -> "365 days/s"),
    or the rate parameter whose description names the thing, set; None where it holds no rate."""
    match = RATE.search(clause)
    if match is None:
        return None
    said = match.group("n")
    n, what, per = float(NUMBER_WORDS.get(said, said)), match.group("what"), _PER[match.group("per")]
    if is_unit(what, manifest):
        return clause[: match.start()] + f"{n:g} {what}/{per}" + clause[match.end() :]
    per_time = _units.dimension("1/s")
    hits = [
        p
        for p in _vocabulary.numbers(manifest, clause)
        if p.unit
        and _units.dimension(p.unit) == per_time
        and _vocabulary.stem(what) in _vocabulary.stems(p.description) | _vocabulary.all_stems(p)
    ]
    if len(hits) != 1:
        return None
    p = hits[0]
    value = _units.convert(n, f"1/{per}", p.unit or "1/s")
    if value is None:
        return None
    value = tidy(value)
    return p.path, round(value) if p.type == "integer" else value, f'"{match.group(0)}": {p.path}'
