"""What a manifest's own words say about each parameter, for the readings that name no parameter:
a comparative ("a bit flatter"), a display noun ("the force arrows"), a state word ("keep it
paused"), a position ("10 cm between them") or what a count counts ("80 birds").

A parameter is named by its words at four levels, strongest first: its name; its label and
aliases; its unit (what the unit measures); the first sentence of its description. A reading takes
the parameters named at the strongest level that names any, and only one of them: two at that level
is a question, never a guess (docs/writing-targets.md, "Words the planner reads"). Words are
compared by their stems (:func:`stem`), so "arrows", "burning" and "locked" meet "arrow", "burns"
and "lock".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from ...core import _units
from ...manifest import Manifest, Parameter

_SUFFIXES = ("ness", "ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A word without its plural, -ing, -ed or final e ("arrows" -> "arrow", "running" -> "run",
    "paused" and "pause" -> "paus"): the same on both sides is all that matters."""
    word = word.lower().replace("colour", "color")
    for suffix in _SUFFIXES:
        if suffix in ("s", "es") and word.endswith("ss"):
            continue
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # "running" -> "run", "stopped" -> "stop"; not "fall", "press"
            break
    return word


def stems(text: str | None) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z]+", (text or "").lower())}


def first_sentence(text: str | None) -> str:
    return re.split(r"(?<=[.;:])\s", text or "", maxsplit=1)[0]


def name_stems(p: Parameter) -> set[str]:
    return stems(p.name.replace("_", " "))


def named_stems(p: Parameter) -> set[str]:
    return stems(" ".join([p.label or "", *p.aliases]))


def described_stems(p: Parameter) -> set[str]:
    return stems(first_sentence(p.description))


def subject_stems(p: Parameter) -> set[str]:
    """The words of what a description says the parameter is: up to its first comma, colon,
    semicolon or bracket ("Share of the board's cells that hold a polygon"; not "the rest squares")."""
    return stems(re.split(r"[,;:(.]", p.description or "", maxsplit=1)[0]) - FUNCTION_WORDS


def glosses(p: Parameter) -> dict[str, set[str]]:
    """An option's words, where the description glosses each ("height: the instantaneous surface;
    intensity: the time-averaged square height")."""
    out: dict[str, set[str]] = {}
    text = p.description or ""
    for option in p.enum or ():
        if not isinstance(option, str):
            continue
        match = re.search(rf"(?<![\w-]){re.escape(option)}\s*:\s*([^;]+)", text, re.IGNORECASE)
        if match:
            out[option] = stems(match.group(1)) - FUNCTION_WORDS
    return out


def unit_dimension(p: Parameter) -> Hashable | None:
    return _units.dimension(p.unit) if p.unit else None


LEVELS: tuple[Callable[[Parameter], set[str]], ...] = (name_stems, named_stems, described_stems)

# Words a description may name a parameter by: what a thing is, never a common word ("rate",
# "speed", "size": a damping *rate* is no speed). Names, labels and aliases may use any word.
DESCRIBED = frozenset(
    stem(w)
    for w in (
        "elevation", "incline", "slope", "mass", "weight", "amplitude", "temperature", "density",
        "viscosity", "radius", "diameter", "separation", "distance", "spacing", "gap", "arrow", "vector",
        "trail", "path", "trace", "grid", "label", "plot", "graph", "chart", "circle", "streamline",
        "pause", "paused", "frozen", "running", "burn", "burning", "wander", "drift",
    )
)  # fmt: skip


def named_by(params: Iterable[Parameter], concepts: Iterable[str], units: Sequence[str] = ()) -> list[Parameter]:
    """The parameters ``concepts`` (words, stemmed here) name at the strongest level that names any:
    the name, then the label and aliases, then a unit that measures what one of ``units`` measures
    (a mass: "kg"), then the description's first sentence."""
    wanted = {stem(c) for c in concepts}
    dimensions = {_units.dimension(u) for u in units} - {None}
    params = list(params)
    for level, words in enumerate(LEVELS):
        said = wanted & DESCRIBED if words is described_stems else wanted
        hits = [p for p in params if said & words(p)]
        if hits:
            return hits
        if level == 1 and dimensions:
            hits = [p for p in params if unit_dimension(p) in dimensions]
            if hits:
                return hits
    return []


# Things a page draws, by the words people use for them: a clause that shows or hides one of them
# means the switch whose words name it ("the force arrows": show_vectors, whatever "force" says).
DISPLAY_GROUPS = (
    ("arrow", "vector"), ("trail", "path", "trace", "track", "tail", "streak"), ("line", "curve"),
    ("plot", "graph", "chart"), ("circle",), ("label",), ("grid",), ("stat", "statistic"), ("streamline",),
    ("ellipse", "orbit"), ("smoke",),
)  # fmt: skip
_DISPLAY = {stem(w): {stem(v) for v in group} for group in DISPLAY_GROUPS for w in group}
FUNCTION_WORDS = frozenset(
    stem(w)
    for w in (
        "the", "a", "an", "it", "its", "it's", "of", "to", "on", "off", "in", "and", "or", "for", "with", "at",
        "please", "now", "again", "me", "my", "this", "that", "these", "those", "them", "their", "is", "be",
        "can", "you", "could", "would", "i", "want", "some", "just", "all", "every", "each", "by", "from",
    )
)  # fmt: skip


def all_stems(p: Parameter) -> set[str]:
    return name_stems(p) | named_stems(p) | described_stems(p)


# Words that switch a thing on or off, never a state of it ("show" in show_trail says nothing).
SWITCH_VERBS = frozenset(
    stem(w)
    for w in (
        "show",
        "hide",
        "display",
        "enable",
        "disable",
        "use",
        "draw",
        "turn",
        "switch",
        "toggle",
        "get",
        "rid",
        "erase",
        "wipe",
        "remove",
        "leave",
        "out",
        "blow",
        "add",
    )
)
PAUSE_WORDS = frozenset(stem(w) for w in ("paused", "pause", "frozen", "freeze", "stopped", "halted", "halt"))
RUN_WORDS = frozenset(stem(w) for w in ("running", "run", "playing", "play", "looping", "animate", "going"))


def state_stems(p: Parameter) -> set[str]:
    """The words that say a switch is on ("paused", "burns", "wander"): a one-word name or alias,
    an -ing or -ed word of a longer one ("burning floor"), and the verb of a description that starts
    "Whether the floor burns"; never a word that switches it ("show")."""
    said: set[str] = set()
    for name in [p.name.replace("_", " "), p.label or "", *p.aliases]:
        words = re.findall(r"[a-z]+", name.lower())
        said |= {stem(w) for w in words if len(words) == 1 or w.endswith(("ing", "ed", "en"))}
    match = re.match(r"whether (?:the |a |an )?[a-z]+(?: [a-z]+)? (?:is |are )?([a-z]+)", (p.description or "").lower())
    if match:
        said.add(stem(match.group(1)))
    return said - SWITCH_VERBS


_COMMON_VERBS = frozenset(
    stem(w) for w in ("make", "set", "keep", "let", "have", "get", "put", "turn", "use", "give", "change", "go")
)


def described_verb(clause: str, p: Parameter) -> bool:
    """Whether the clause starts with the verb of what switch ``p`` does, as its description says it
    ("circle the clusters": "are found and circled") or as a word for the thing it draws ("trace")."""
    first = re.match(r"(?:please )?([a-z]+)\b", clause)
    if first is None:
        return False
    verb = stem(first.group(1))
    if verb in _COMMON_VERBS or verb in FUNCTION_WORDS:
        return False
    if verb in stems(p.description):
        return True
    return verb in _DISPLAY and bool(_DISPLAY[verb] & all_stems(p))


def off_stems(p: Parameter) -> set[str]:
    """The words a description gives the switch's off state ("Atoms drawn as circles instead of squares")."""
    match = re.search(r"\binstead of ([a-z ]+?)(?:[.,;(]|$)", (p.description or "").lower())
    return stems(match.group(1)) - FUNCTION_WORDS if match else set()


def opposite_state(p: Parameter, words: set[str]) -> bool:
    """Whether ``words`` say the opposite of what switch ``p`` names: "paused" for a running flag,
    "running" for a paused one (a manifest may list "paused" among a running flag's aliases)."""
    own = name_stems(p)
    return bool((own & RUN_WORDS and words & PAUSE_WORDS) or (own & PAUSE_WORDS and words & RUN_WORDS))


def things_of(manifest: Manifest) -> set[str]:
    """The words for the things a target simulates: what its parameters that are no switch are called
    (names, labels, aliases, groups, their options' glosses: "ball", "bob", "boids", "pendulum")."""
    said: set[str] = set()
    for p in manifest.parameters.values():
        if p.type != "boolean":
            said |= name_stems(p) | named_stems(p) | stems(p.path.split(".")[0]) | set().union(*glosses(p).values())
    return said


# Words for a drawn mark in general: said beside what it marks ("the apex marker"), never the point.
_MARKS = frozenset(stem(w) for w in ("marker", "mark", "dot", "dots", "indicator", "thing", "one", "ones", "part"))


def displayed(
    clause: str, switches: Sequence[Parameter], *, switching: bool = True, things: set[str] | None = None
) -> list[Parameter]:
    """The switches a clause names by a thing they draw ("the velocity arrows", "its path"): those
    whose words hold a display noun of the clause (or a word for the same thing), the ones that also
    hold most of the clause's other words first; with no display noun, the one switch whose words
    hold the most of the clause's ("hide the landing point": "the apex and the landing point")."""
    words = stems(clause) - FUNCTION_WORDS - SWITCH_VERBS
    nouns = {w for w in words if w in _DISPLAY}
    if not nouns:
        if not switching:  # "fatter ball on screen": no show or hide, so no switch by its description
            return []
        # every word said is the switch's, and one of them says what it draws, not a thing simulated
        # ("hide the landing point": its description's; "hide the ball": the ball, not its trail)
        words -= _MARKS
        own = [p for p in switches if words and words <= all_stems(p) and words - (things or set())]
        return own if len(own) == 1 else []
    wanted = set().union(*(_DISPLAY[n] for n in nouns))
    hits = [p for p in switches if wanted & all_stems(p)]
    if len(hits) > 1:
        best = max(len(words & all_stems(p)) for p in hits)
        hits = [p for p in hits if len(words & all_stems(p)) == best]
    return hits


def stated(clause: str, switches: Sequence[Parameter]) -> list[Parameter]:
    """The switches a clause names by a word that says they are on ("keep the floor burning")."""
    words = stems(clause) - FUNCTION_WORDS
    return [p for p in switches if words & (state_stems(p) | off_stems(p))]


def adjective_named(params: Iterable[Parameter], concepts: Iterable[str]) -> list[Parameter]:
    """The parameters an adjective names ("more damped", "more often"): by a one-word name, label or
    alias, never by a word that only qualifies another ("ball" in "ball size")."""
    wanted = {stem(c) for c in concepts}
    hits = []
    for p in params:
        single = [n for n in (p.name.replace("_", " "), p.label or "", *p.aliases) if len(n.split()) == 1]
        if wanted & {stem(n) for n in single}:
            hits.append(p)
    return hits


def lengths(params: Iterable[Parameter]) -> list[Parameter]:
    """The parameters that are distances: a unit of length, or pixels."""
    length = _units.dimension("m")
    return [p for p in params if p.unit and (unit_dimension(p) == length or p.unit.strip().lower() == "px")]


_SPOKEN = {0: "zero", 1: "one", 2: "two", 3: "three"}


def in_a_description(number: Any, manifest: Manifest) -> bool:
    """Whether a small number and the word after it are a phrase of a switch's description ("zero
    crossings"), so no value at all."""
    spoken = _SPOKEN.get(int(number.value)) if float(number.value).is_integer() else None
    if spoken is None or number.unit is not None:
        return False
    phrase = f"{spoken} {number.word}"
    return any(phrase in (p.description or "").lower() for p in booleans(manifest))


def target_nouns(manifest: Manifest) -> set[str]:
    """The stems of the words the target's title and description use (what its count may count)."""
    return stems(f"{manifest.title or ''} {manifest.id.replace('_', ' ')} {manifest.description or ''}")


PLAYBACK_GROUP = "simulation"  # how the page plays (its time scale): changed only when named


_PLAYBACK_WORDS = frozenset(stem(w) for w in ("time", "scale", "speed", "rate", "simulation"))


def numbers(manifest: Manifest, clause: str = "") -> list[Parameter]:
    """The number parameters a reading that names none may mean: not read-only, not the playback's
    unless the clause says a word of its own ("slow the playback down")."""
    said = stems(clause) - _PLAYBACK_WORDS
    return [
        p
        for p in manifest.parameters.values()
        if p.type in ("number", "integer")
        and not p.readonly
        and (p.path.split(".")[0] != PLAYBACK_GROUP or said & (name_stems(p) | named_stems(p)))
    ]


def booleans(manifest: Manifest) -> list[Parameter]:
    return [p for p in manifest.parameters.values() if p.type == "boolean" and not p.readonly]
