"""Where a value points: the words that give a number its parameter and its sign ("5 cm above the
axis", "20 cm to the right of the midpoint", "with 10 cm between them", "gravity 12 pointing down"),
read from the manifest's descriptions. A direction word the parameter cannot take is a refusal,
never a value with the sign dropped (docs/writing-targets.md, "Words the planner reads")."""

from __future__ import annotations

import re
from typing import Any

from ...core import _units
from ...manifest import Manifest, Parameter
from . import _vocabulary
from ._format import fmt
from ._lexicon import BOUND, Number
from ._values import in_its_unit

# direction word -> (axis, sign)
_DIRECTIONS = {
    "above": ("vertical", 1), "below": ("vertical", -1), "beneath": ("vertical", -1), "under": ("vertical", -1),
    "up": ("vertical", 1), "upward": ("vertical", 1), "upwards": ("vertical", 1),
    "down": ("vertical", -1), "downward": ("vertical", -1), "downwards": ("vertical", -1),
    "right": ("horizontal", 1), "left": ("horizontal", -1),
}  # fmt: skip
_DIRECTION = re.compile(rf"\b({'|'.join(_DIRECTIONS)})\b")
MOVED = re.compile(
    r"\b(?:move|moves|moving|shift|slide|nudge|push|drag|further|farther|another|more|where it is|where they are)\b"
)
APART = re.compile(r"\b(?:between (?:them|the \w+)|apart|from each other)\b")
_APART_WORDS = ("separation", "spacing", "gap", "apart", "between")
_CONVENTION = re.compile(
    r"\bnegative(?: values?)?(?:\s*[:=]\s*|\s+(?:is|means|pulls|points|goes|acts)\s+)(down|downwards?|left|below)\b"
)


def direction(clause: str) -> tuple[str, str, int] | None:
    """The clause's one direction word, its axis and its sign; None for none, or for two."""
    found = {m.group(1) for m in _DIRECTION.finditer(clause)}
    if len(found) != 1:
        return None
    word = found.pop()
    return (word, *_DIRECTIONS[word])


def axis(p: Parameter) -> str | None:
    """The axis a position parameter lies along, from its name (x, y) or its description's words."""
    if p not in _vocabulary.lengths([p]):  # an angle "above the horizontal" is no position
        return None
    leaf = p.path.rsplit(".", 1)[-1].lower()
    text = _vocabulary.first_sentence(p.description).lower()
    if leaf == "y" or re.search(r"\b(?:vertical|height|altitude|above the ground)\b", text):
        return "vertical"
    if leaf == "x" or re.search(r"\bhorizontal\b", text):
        return "horizontal"
    return None


def negative_way(p: Parameter) -> str | None:
    """The direction a negative value points, where the description says ("negative pulls down")."""
    match = _CONVENTION.search((p.description or "").lower())
    if match is None:
        return None
    word = match.group(1)
    return "vertical" if word.startswith(("down", "below")) else "horizontal"


def placed(
    clause: str, manifest: Manifest, params: list[Parameter], number: Number | None
) -> tuple[str, Any, str] | str | None:
    """(path, value, note) for a number placed by a direction or "between them", the reason it cannot
    be, or None when the clause places nothing (or changes by an amount: "down by 5", "up to 12")."""
    if number is None or number.others:
        return None
    before = clause[: number.start]
    if re.search(r"\b(?:by(?: another| a further| an extra)?|to)\s*$", before) or BOUND.search(before):
        return None
    apart = APART.search(clause)
    said = direction(clause)
    if apart is None and said is None:
        return None
    if MOVED.search(clause):  # "move the probe 5 cm left": by an amount, from where it is
        return f'"{clause}" moves something by an amount, which I do not guess; say where it should be.'
    pool = params or _same_kind(manifest, number)
    if not pool:
        return None
    if apart is not None:
        hits = _vocabulary.named_by(pool, _APART_WORDS) if len(pool) > 1 else pool
        if len(hits) != 1:
            return None
        return _value(hits[0], abs(number.value), number.unit, f'"{apart.group(0)}": {hits[0].path}')
    assert said is not None
    word, way, sign = said
    if len(pool) == 1 and negative_way(pool[0]) == way:  # "gravity 12 pointing down"
        p = pool[0]
        return _value(p, sign * abs(number.value), number.unit, f'"{word}": negative {p.path} points down')
    along = [p for p in pool if axis(p) == way]
    if len(along) != 1:
        if any(axis(p) or negative_way(p) for p in pool):  # "move the launcher 5 m left": height is no x
            return f'"{clause}": nothing here goes {word}; name the parameter and its value with its sign.'
        if sign < 0:  # "10 degrees below the horizontal": a sign this parameter has no word for
            return f'"{clause}": I could not tell what "{word}" makes of the value; say it with its sign.'
        return None  # "30 degrees above the horizontal": an angle, read as it is
    p = along[0]
    value = sign * abs(number.value)
    if value < 0 and p.min is not None and p.min >= 0:
        return f'"{clause}": {p.path} cannot go {word} (its range is {fmt(p.min)}..{fmt(p.max or 0)}).'
    return _value(p, value, number.unit, f'"{word}": {p.path} {"+" if sign > 0 else "-"}')


_POINTING = re.compile(rf"\b(?:point|points|pointing|pointed|face|faces|facing)\s+(?:{'|'.join(_DIRECTIONS)})\b")


def turned(clause: str, number: Number | None) -> str | None:
    """The reason a way said with no value is refused ("make gravity point up"), or None."""
    if number is not None or _POINTING.search(clause) is None:
        return None
    return f'"{clause}": I cannot tell a value from the way it points; say the value, with its sign where it has one.'


def _same_kind(manifest: Manifest, number: Number) -> list[Parameter]:
    """The number parameters whose unit measures what the number's does (every one without a unit)."""
    params = _vocabulary.numbers(manifest)
    if number.unit is None:
        return []
    wanted = _units.dimension(number.unit) or _units.dimension(number.unit.lower())
    return [p for p in params if wanted is not None and p.unit and _units.dimension(p.unit) == wanted]


def _value(p: Parameter, value: float, unit: str | None, note: str) -> tuple[str, Any, str] | str:
    """(path, value, ``note``) for a placed number in its unit, or why it cannot be (its range too)."""
    said = in_its_unit(p, value, unit)
    if isinstance(said, str):
        return said
    path, value, conversion = said
    if (p.min is not None and value < p.min) or (p.max is not None and value > p.max):
        return f"{p.path} takes {fmt(p.min or 0)}..{fmt(p.max or 0)}; {fmt(value)} is outside it."
    return path, value, f"{note}; {conversion}" if conversion else note
