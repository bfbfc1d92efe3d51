"""The planner's words: the word tables, the tokenizer, numbers with their units, and how a
request names a parameter. Shared by the plan and the goals; imports neither."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core import _units
from ...manifest import Manifest, Parameter
from ._spoken import spoken_numbers

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "hundred": 100, "dozen": 12,
}  # fmt: skip

SYNONYMS = {
    "colour": "color", "velocity": "speed", "radius": "size", "trails": "trail", "vector": "vectors",
    "number": "count", "amount": "count", "friction": "damping", "elevation": "angle",
    "heat": "temperature", "spring": "stiffness", "g": "gravity",
}  # fmt: skip

# Comparatives said with no number ("a bit flatter", "make it heavier"): the way they go and what
# they name, as words the manifest's own text holds (name, label, aliases, description; matched by
# _vocabulary.named_by) and units of what they measure. No entry for "higher" / "lower": which
# parameter makes a flight higher is a guess. docs/writing-targets.md lists them.
_SPEED = ("speed", "rate", "fast", "pace", "velocity", "quick")
_MASS = ("mass", "weight", "heavy")
_SIZE = ("size", "radius", "diameter", "big", "large")
_WIDTH = ("width", "wide", "amplitude", "spread")
_STRENGTH = ("strength", "force", "strong", "pull")
_STEEP = ("elevation", "incline", "slope", "steep", "steepness")
_HEAT = ("temperature", "heat", "hot")
_DENSE = ("density", "dense", "fullness", "crowd")
_THICK = ("viscosity", "viscous", "thick")
_FAR = ("distance", "far", "apart", "separation", "spacing")
_FULL = ("fullness", "full", "occupied", "occupancy")
COMPARATIVES: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {
    "faster": (1, _SPEED, ("m/s",)), "quicker": (1, _SPEED, ("m/s",)), "slower": (-1, _SPEED, ("m/s",)),
    "heavier": (1, _MASS, ("kg",)), "lighter": (-1, _MASS, ("kg",)),
    "longer": (1, ("length", "long"), ()), "shorter": (-1, ("length", "long"), ()),
    "bigger": (1, _SIZE, ()), "larger": (1, _SIZE, ()), "smaller": (-1, _SIZE, ()),
    "wider": (1, _WIDTH, ()), "narrower": (-1, _WIDTH, ()),
    "stronger": (1, _STRENGTH, ()), "weaker": (-1, _STRENGTH, ()),
    "steeper": (1, _STEEP, ()), "flatter": (-1, _STEEP, ()),
    "hotter": (1, _HEAT, ("K",)), "warmer": (1, _HEAT, ("K",)), "cooler": (-1, _HEAT, ("K",)),
    "colder": (-1, _HEAT, ("K",)),
    "denser": (1, _DENSE, ()), "sparser": (-1, _DENSE, ()), "thicker": (1, _THICK, ()), "thinner": (-1, _THICK, ()),
    "taller": (1, ("height", "tall", "tower"), ()), "farther": (1, _FAR, ()), "further": (1, _FAR, ()),
    "closer": (-1, _FAR, ()), "nearer": (-1, _FAR, ()), "tinier": (-1, _SIZE, ()), "fatter": (1, _SIZE, ()),
    "chunkier": (1, _SIZE, ()), "fuller": (1, _FULL, ()), "emptier": (-1, _FULL, ()),
}  # fmt: skip

DISTANCES = frozenset({"farther", "further", "closer", "nearer"})  # comparatives of a distance (a length)

# "more damped", "more often", "less viscous": the adjective's own word, or the noun it comes from.
ADJECTIVE_NOUNS = {"often": "frequency", "frequent": "frequency", "viscous": "viscosity", "dense": "density",
                    "far": "distance", "tall": "height", "heavy": "mass", "hot": "temperature"}  # fmt: skip

# Words shaped like a comparative ("-er", "-ier") that are none: never read as "more of" their stem.
NOT_COMPARATIVES = frozenset(
    {"never", "other", "over", "under", "after", "ever", "either", "rather", "whether", "water", "number", "order",
     "her", "their", "layer", "player", "center", "centre", "corner", "later", "paper", "power", "filter", "super",
     "perimeter", "parameter", "diameter", "meter", "metre", "liter", "litre", "slider", "together", "per", "user",
     "answer", "enter", "matter", "pointer", "timer", "counter", "border", "winter", "summer", "tower", "flower",
     "another", "remember", "letter", "cluster", "monster", "finger", "tiger", "river", "silver", "copper",
     "computer", "quarter", "faster", "slower", "wonder", "danger", "whatever", "however", "wherever", "whoever"}
)  # fmt: skip

MORE = {word: concepts for word, (way, concepts, _) in COMPARATIVES.items() if way > 0}
LESS = {word: concepts for word, (way, concepts, _) in COMPARATIVES.items() if way < 0}

MORE_RE = re.compile(rf"\b(increase|raise|more|up|add|higher|{'|'.join(MORE)})\b")

LESS_RE = re.compile(rf"\b(decrease|reduce|lower|less|fewer|down|cut|subtract|{'|'.join(LESS)})\b")

# A comparative right after a number and its unit: "5 m lower", "10 degrees higher" change by the number.
COMPARED_AMOUNT = re.compile(rf"\s*(?:more|less|fewer|higher|lower|{'|'.join(COMPARATIVES)})\b")

FACTORS = ((r"double|twice", 2.0), (r"triple|thrice|three times", 3.0), (r"halve|half", 0.5))

# "how <word>" questions: the words that name such a measurement and the units it is measured in.
HOW = {"fast": (("speed", "fast"), ("m/s",)), "far": (("range", "distance", "far"), ("m",)),
        "high": (("height", "high", "highest", "altitude", "apex", "tall"), ("m",)),
        "long": (("length", "long", "time", "duration", "period"), ("m", "s")),
        "big": (("size", "big", "diameter"), ("m",)), "heavy": (("mass", "weight", "heavy"), ("kg",)),
        "many": (("count", "many"), ())}  # fmt: skip

# Outcome questions ("how high did it get") ask what the page measured, never a parameter.
OUTCOME = re.compile(r"\b(?:did|was|were|got|reached|went|flew|travell?ed|landed|ended|so far|has|had)\b")

STOP_TOKENS = {"show", "hide", "enable", "disable", "use", "is", "has", "num", "n", "the", "of", "display", "no"}

# Switch words. Those about the thing ("show the trail") flip for a switch whose name is negative
# ("hide_labels"); those about the switch itself ("turn hide_labels on") never do.
SEEN_ON = r"show|shows|showing|shown|display|displayed|displaying|visible|unhide|add|draw|drawing|leave|leaving"

SEEN_OFF = r"hide|hides|hiding|hidden|invisible|remove|without|no|none|erase|wipe|get rid of|put out|blow out"

# Verbs that put a switch in the state its name says ("keep it paused", "set it to running").
STATE_VERB = re.compile(r"\b(?:keep|leave|make|let|set|have|get|stay|remain|put)\b")

SWITCH_ON = r"enable|enabled|enabling|activate|activated|on|true|yes"

SWITCH_OFF = r"disable|disabled|disabling|deactivate|deactivated|off|false"

NEGATION = re.compile(r"\b(?:don't|dont|do not|does not|doesn't|not|never|no longer|stop|stopped|avoid)\b")

NEGATIVE_NAMES = {"hide", "hidden", "no", "disable", "disabled", "without", "suppress"}

TOGGLE = re.compile(r"\b(?:toggle|flip)\b")

# Words that may stand beside a switch's own name when the name is the whole request ("show trail please").
POLITE = {"please", "now", "the", "a", "an", "again", "just", "kindly", "ok", "okay", "thanks", "can", "you",
           "could", "would", "i", "want", "to", "me"}  # fmt: skip

# Words that may follow a number without being a unit ("speed 12 please").
AFTER_NUMBER = {"please", "now", "again", "instead", "then", "thanks", "thank", "too", "as", "well", "for",
                 "at", "on", "with", "to", "if", "so", "ok", "okay", "exactly", "only", "just", "or", "and",
                 "the", "a", "an", "it", "this", "right", "away", "immediately"}  # fmt: skip

RESET_WORDS = {"to", "the", "all", "everything", "it", "its", "back", "default", "defaults", "value", "values",
                "setting", "settings", "parameter", "parameters", "original", "initial", "simulation", "sim",
                "please", "now", "again", "state", "every", "of", "them", "thing", "things", "and", "start",
                "beginning", "scratch", "for", "me", "whole", "entire", "factory", "over"}  # fmt: skip

BOUND = re.compile(
    r"\b(?:above|below|over|under|beyond|at least|at most|more than|less than|greater than|fewer than|up to)\s*$"
)

# Clauses of these words alone carry no request ("ok, ...", "..., thanks").
GREETINGS = {"ok", "okay", "please", "thanks", "thank", "you", "now", "so", "well", "hi", "hello", "hey", "i", "mean"}

# Separable phrasal verbs, said as the comparative or the change they mean ("speed the flock up": the
# flock faster; "dial the frequency back": decrease the frequency; "let the rod out": the rod longer).
PHRASAL = (
    (re.compile(r"\bspeed (.+?) up\b"), r"\1 faster"), (re.compile(r"\bslow (.+?) down\b"), r"\1 slower"),
    (re.compile(r"\b(?:dial|wind|roll|scale|knock|bring|take) (.+?) back\b"), r"decrease \1"),
    (re.compile(r"\b(?:ease|taper) (.+?) off\b"), r"decrease \1"),
    (re.compile(r"\blet (.+?) out\b"), r"\1 longer"), (re.compile(r"\breel (.+?) in\b"), r"\1 shorter"),
    (re.compile(r"\b(?:pull|push|move|spread) (.+?) apart\b"), r"\1 farther"),
    (re.compile(r"\b(?:bump|crank|ramp|push|jack) (.+?) up\b"), r"increase \1"),
    (re.compile(r"\b(?:tone|calm|dial) (.+?) down\b"), r"decrease \1"),
)  # fmt: skip

# An aside that gives the number of the change before it ("more boids — let's go with 300").
ASIDE = re.compile(
    r"^(?:(?:let's|lets|let us) (?:go with|say|try|make it|do|use)|say|maybe|perhaps|ideally|try|make it|like|"
    r"about|around|roughly|go with|i'd say)(?: to| with)?\s+(?P<number>-?\d+(?:\.\d+)?(?:\s*\S+)?)$"
)


def phrasal(clause: str) -> str:
    """The clause with a separable phrasal verb said as what it means (itself where it has none)."""
    for pattern, meaning in PHRASAL:
        said = pattern.sub(meaning, clause, count=1)
        if said != clause:
            return re.sub(r"\s+", " ", said).strip()
    return clause


_SHOW_VERB = re.compile(rf"^(?:please )?(?P<verb>(?:{SEEN_ON}|{SEEN_OFF}))\b")


def share_verbs(clauses: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """ "hide the periapsis and apoapsis": the show or hide verb of a clause goes on to the next one
    when that is a bare thing (no verb, no number, at most three words)."""
    out: list[tuple[str, str]] = []
    verb = None
    for clause, raw in clauses:
        bare = (
            len(clause.split()) <= 3
            and not NUMBER_RE.search(clause)
            and not re.search(
                rf"\b(?:{SEEN_ON}|{SEEN_OFF}|{SWITCH_ON}|{SWITCH_OFF}|set|make|change|turn|put)\b", clause
            )
        )
        if verb is not None and bare:
            clause, raw = f"{verb} {clause}", f"{verb} {raw}"
        found = _SHOW_VERB.match(clause)
        verb = found.group("verb") if found else None
        out.append((clause, raw))
    return out


def merge_asides(clauses: list[tuple[str, str]], manifest: Manifest) -> list[tuple[str, str]]:
    """Clauses with an aside folded into the change before it: "more boids — let's go with 300" is
    300 boids, "bump the separation up — say 2" is up to 2; a unit said on its own ("40 — percent,
    I mean") goes with the number before it."""
    out: list[tuple[str, str]] = []
    for clause, raw in clauses:
        aside = ASIDE.match(clause)
        before = out[-1] if out else None
        if aside and before is not None and not NUMBER_RE.search(before[0]):
            number = aside.group("number")
            more = re.fullmatch(r"(?:(?:a few|some) )?(?P<way>more|fewer|less) (?P<noun>[a-z]+)", before[0])
            # "more boids, say 300": the count, 300, if that is more (read in _counts); else a change to it
            merged = (
                f"{more.group('way')} {more.group('noun')} to {number}" if more else f"{phrasal(before[0])} to {number}"
            )
            out[-1] = (merged, merged)
        elif before is not None and is_unit(clause, manifest) and re.search(r"\d$", before[0]):
            out[-1] = (f"{before[0]} {clause}", f"{before[1]} {raw}")  # "turn the bias up to 40 — percent"
        else:
            out.append((clause, raw))
    return out


NUMBER_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")

# "twice as fast": the adjective of a comparative of MORE, whose hints it shares.
AS_ADJECTIVES = {"fast": "faster", "big": "bigger", "large": "larger", "heavy": "heavier", "long": "longer",
                  "strong": "stronger", "wide": "wider", "steep": "steeper", "hot": "hotter"}  # fmt: skip

# "keeping that drag", "with the same drag", "without changing the drag": a parameter the request keeps.
KEEP = re.compile(
    r"^(?:(?:while|and) )?(?:keep|keeping|hold|holding|leave|leaving|fix|fixing) (?P<what>.+?)"
    r"(?: (?:fixed|constant|unchanged|the same|as it is|as is|where it is|alone|as before|as they are))?$|"
    r"^(?:(?:while|and) )?(?:with|at) the same (?P<same>.+)$|"
    r"^(?:(?:while|and) )?without (?:changing|touching|altering|moving) (?P<without>.+)$"
)

KEEP_FILLER = {"the", "that", "this", "these", "those", "its", "my", "same", "current", "value", "values", "setting"}

# "stop the ball", "make it stop": a parameter whose description says that 0 stops it.
HALT = re.compile(
    r"^(?:please )?(?:stop|halt|freeze) (?:it|the (?P<thing>[a-z]+))(?: (?:moving|from moving|in place|where it is))?$|"
    r"^(?:please )?make (?:it|the (?P<made>[a-z]+)) (?:stop|halt|freeze|stand still)(?: moving)?$"
)

HALTS = re.compile(r"\b(?:0|zero) (?:stops|halts|freezes)\b")

# CSS colour names: a colour the user names that is not among a colour parameter's options is refused
# as such ("cyan is not one of the colours"), not as a request not understood.
CSS_COLOURS = frozenset({
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
POLITE_LEAD = r"^(?:(?:please|can you|could you|kindly|now) )+"  # what may come before a request's verb

ACTION_VERB = re.compile(
    POLITE_LEAD.replace("+", "*", 1) + r"(?P<verb>press|click|hit|push|tap|trigger|run|do|perform|fire)"
    r"(?: on)? (?:the )?(?P<what>.+?)(?: (?:button|action))?$"
)

BUTTON_VERBS = {"press", "click", "hit", "push", "tap"}  # these name a button: no action matching is a refusal

ACTION_FILLER = {"the", "a", "an", "it", "please", "now", "again", "simulation", "sim", "page", "button", "action",
                  "for", "me", "once", "this", "that", "on", "one", "of"}  # fmt: skip


@dataclass(frozen=True)
class Number:
    """The number in a clause, the unit written after it (case kept) and where both are."""

    value: float
    unit: str | None
    start: int
    unit_start: int
    end: int
    word: str | None  # the word after the number when it is not a unit
    others: int  # how many more numbers the clause holds outside this one and its unit


GREYS = re.compile(r"\b(?:black[ -]and[ -]white|greyscale|gr[ae]y[ -]scale|monochrome)\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """Trimmed, one space between words, "colour" -> "color", spoken numbers, signs and corrections
    as digits ("minus thirty" -> "-30", "30, no wait, 40" -> "40"); the case is kept for units (mm / Mm)."""
    out = re.sub(r"colour", "color", text.strip().replace("’", "'"), flags=re.IGNORECASE)
    out = re.sub(r"[!.]+$", "", out).strip()
    out = GREYS.sub("grayscale", out)  # "black and white": one option, not two clauses
    return spoken_numbers(re.sub(r"\s+", " ", out))


def split_clauses(request: str, raw: str) -> list[tuple[str, str]]:
    """The request split into clauses, each lower-cased and as written."""
    # "but" and "except" split too: "show the trail but make it red" is two requests, and "anything but
    # red" leaves "anything", which is refused, instead of setting red
    separator = re.compile(
        r"\s*(?:,|;|—|–|\s-\s|\band then\b|\bthen\b|\band also\b|\balso\b|\band\b|\bplus\b|\bbut\b|\bexcept\b)\s*"
    )
    out, start = [], 0
    for match in [*separator.finditer(request), None]:
        end = match.start() if match else len(request)
        if request[start:end].strip():
            out.append((request[start:end].strip(), raw[start:end].strip()))
        start = match.end() if match else end
    return out


def singular(word: str) -> str:
    """A name's word without a plural s ("vectors" -> "vector"; not "gas", "mass"). Lighter than
    ``_vocabulary.stem``, which also drops -ing, -ed and a final e to match a description's words."""
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def word_tokens(text: str) -> list[str]:
    """The words of a request as names are matched: synonyms made one word, in the singular."""
    return [singular(SYNONYMS.get(w, w)) for w in re.findall(r"[a-z][a-z0-9_]*", text)]


def core_words(param: Parameter) -> list[str]:
    """The words of a parameter's name, as :func:`word_tokens` reads a request (without stop words)."""
    core = [singular(SYNONYMS.get(t, t)) for t in param.name.lower().split("_")]
    return [t for t in core if t not in STOP_TOKENS] or core


def name_forms(param: Parameter) -> list[str]:
    """The ways a request names a parameter itself, longest first: path, name, its words, label."""
    name = param.name.lower()
    words = name.replace("_", " ")
    forms = {param.path.lower(), name, words}
    if "." in param.path:
        group = param.path.lower().rsplit(".", 2)[-2]
        forms |= {f"{group} {words}", f"{group} {name}"}
    if param.label:
        forms.add(normalise(param.label).lower())
    forms |= set(param.aliases)  # the manifest's other names for it ("air resistance" for drag)
    return sorted(forms, key=len, reverse=True)


def mentions_of(clause: str, manifest: Manifest, skip: tuple[int, int] | None) -> list[tuple[Parameter, int, int]]:
    """Parameters the clause names by one of their forms, with the span of the longest such mention.

    A mention inside a longer mention of another parameter does not count ("perception" inside
    "show perception"), nor one inside the unit after the number ("2 x" is a time scale, not probe x).
    """
    found: list[tuple[Parameter, int, int]] = []
    for p in manifest.parameters.values():
        best: tuple[int, int] | None = None
        for form in name_forms(p):
            for m in re.finditer(rf"(?<![\w.]){re.escape(form)}(?!\w)", clause):
                if skip and m.start() < skip[1] and m.end() > skip[0]:
                    continue
                if best is None or m.end() - m.start() > best[1] - best[0]:
                    best = (m.start(), m.end())
        if best:
            found.append((p, *best))
    return [f for f in found if not any(o[1] <= f[1] and f[2] <= o[2] and o[2] - o[1] > f[2] - f[1] for o in found)]


def find_params(clause: str, manifest: Manifest, skip: tuple[int, int] | None = None) -> list[Parameter]:
    """Parameters the clause names (by path, name, label, or all the leaf's words)."""
    mentioned = mentions_of(clause, manifest, skip)
    if mentioned:
        return [p for p, _, _ in mentioned]
    if skip:
        clause = clause[: skip[0]] + " " + clause[skip[1] :]
    tokens = set(word_tokens(clause))
    hits = [p for p in manifest.parameters.values() if set(core_words(p)) <= tokens]
    if len(hits) > 1:  # prefer the parameters whose every word is named over those named by one word
        best = max(len(core_words(p)) for p in hits)
        hits = [p for p in hits if len(core_words(p)) == best]
    return hits


def manifest_units(manifest: Manifest) -> set[str]:
    units = {p.unit for p in manifest.parameters.values() if p.unit}
    return {u.lower() for u in units | {o.unit for o in manifest.observables.values() if o.unit}}


def is_unit(text: str, manifest: Manifest) -> bool:
    return _units.is_unit(text) or _units.is_unit(text.lower()) or text.lower() in manifest_units(manifest)


def read_number(clause: str, raw: str, manifest: Manifest) -> Number | None:
    """The first number in the clause (digits or a number word) and the unit written after it."""
    spans = [(m.start(), m.end(), float(m.group(0))) for m in NUMBER_RE.finditer(clause)]
    words = [
        (m.start(), m.end(), float(NUMBER_WORDS[m.group(0)]))
        for m in re.finditer(rf"\b(?:{'|'.join(NUMBER_WORDS)})\b", clause)
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
            if k > 1 and not (_units.is_phrase(text) or text.lower() in manifest_units(manifest)):
                continue  # "m please" is metres; pint would read "m s" as metre-seconds
            if text and is_unit(text, manifest) and text.lower() not in NOT_UNITS:
                unit, unit_start, end = text, end + after[0].start(), end + after[0].start() + len(text)
                break
        else:
            first = after[0].group(0).rstrip("?!.,;:").lower()
            word = first if re.fullmatch(r"[a-z']+", first) else None
    others = sum(1 for s, e, _ in spans[1:] if not (s >= unit_start and e <= end))
    return Number(value, unit, start, unit_start, end, word, others)


# Units of measure that are also the nouns of a classroom ("two rods", "ten points"): read as nouns.
NOT_UNITS = frozenset(
    {"rod", "rods", "pole", "poles", "perch", "chain", "chains", "link", "links", "hand", "hands", "span", "spans",
     "line", "lines", "point", "points", "pica", "barn", "barns", "stone", "stones", "league", "leagues",
     "cable", "cables", "bit", "bits", "drop", "drops", "ball", "balls", "planck", "bob", "bobs", "step",
     "steps", "turn", "turns", "cycle", "cycles", "count", "counts", "dozen", "pair", "pairs", "ring", "rings"}
)  # fmt: skip

BY_AMOUNT = re.compile(r"\b(?:remove|take away|delete|drop|kill|lose|get rid of)\b")
