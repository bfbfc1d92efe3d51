"""Units for the offline planner, from pint: "30 km/h" -> 8.33 when the manifest says m/s.

A unit string is either parsed by pint (after the spellings below are mapped onto pint's names) or,
for the few units that are counts or screen units rather than physical ones, matched literally.
pint is imported on first use only: ``import splitbrain_widget`` must stay fast and light.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pint

# Spellings pint does not know or reads as something else ("AU" is absorbance to pint, "M☉" molar).
_ALIASES = {
    "AU": "au",
    "M☉": "solar_mass",
    "m☉": "solar_mass",
    "Msun": "solar_mass",
    "msun": "solar_mass",
    "M_sun": "solar_mass",
    "solar mass": "solar_mass",
    "solar masses": "solar_mass",
    "kmh": "km/h",
    "km/hr": "km/h",
    "kilometers per hour": "km/h",
    "kilometres per hour": "km/h",
    "hz": "Hz",
    "khz": "kHz",
    "°c": "degC",
    "°C": "degC",
    "degrees celsius": "degC",
    "celsius": "degC",
    "°f": "degF",
    "°F": "degF",
    "fahrenheit": "degF",
    "gee": "g0",
    "x": "×",
    "times": "×",
    "pixel": "px",
    "pixels": "px",
}
# Units that are matched literally, never converted: pint reads "px" as a physical length (so "2 km"
# would become pixels) and does not know the others.
_LITERAL = {"×", "px", "boids", "world units"}
# English words pint would read as a unit right after a number ("12 as well": attoseconds; "5 c": the
# speed of light). A user means the word, so they are not units here.
_NOT_UNITS = {
    "a", "an", "as", "at", "are", "us", "pi", "bit", "point", "turn", "cycle", "cycles", "c", "e", "k",
    "b", "u", "R", "B", "P", "den", "link", "chain", "pole", "hand", "thou", "mil", "span",
}  # fmt: skip
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_PINT_TEXT = re.compile(r"[A-Za-z0-9_ */().\-°%]+")

Resolved = tuple[str, Any]  # ("literal", spelling) or ("pint", pint.Unit)


@cache
def registry() -> pint.UnitRegistry[Any]:
    """The one pint registry (building it takes most of a second, so it is built once, on first use)."""
    import pint

    reg: pint.UnitRegistry[Any] = pint.UnitRegistry()
    # The IAU 2015 nominal solar mass, as the orbits target states it; pint has no solar mass.
    reg.define("solar_mass = 1.98847e30 * kilogram")
    return reg


def _pint_spelling(unit: str) -> str | None:
    """``unit`` in pint's syntax (``m/s²`` -> ``m/s**2``), or None when it has characters pint would drop."""
    text = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", lambda m: "**" + m.group(0).translate(_SUPERSCRIPTS), unit)
    text = text.replace("·", "*").replace("⋅", "*").replace("^", "**").replace("µ", "u").replace("μ", "u")
    text = re.sub(r"\s+per\s+", "/", text.strip())
    text = re.sub(r"(?<=[A-Za-z])([23])(?![0-9])", r"**\1", text)  # m/s2 -> m/s**2
    return text if _PINT_TEXT.fullmatch(text) else None


@cache
def resolve(unit: str) -> Resolved | None:
    """What a unit spelling means, or None when it is not a unit (or not one this module knows)."""
    text = re.sub(r"\s+", " ", unit.strip())
    if not text or text in _NOT_UNITS:
        return None
    text = _ALIASES.get(text, _ALIASES.get(text.lower(), text))
    if text in _LITERAL:
        return ("literal", text)
    spelling = _pint_spelling(text)
    if spelling is None:
        return None
    import pint

    try:
        parsed = registry().parse_expression(spelling)
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, SyntaxError, AssertionError):
        return None  # pint raises a range of errors on text that is not a unit expression
    # "2 m" or "pi" are quantities, not units
    if not isinstance(parsed, registry().Quantity) or parsed.magnitude != 1:
        return None
    return ("pint", parsed.units)


def is_unit(unit: str) -> bool:
    return resolve(unit) is not None


def is_physical(unit: str) -> bool:
    """A unit pint measures (m, km/h), not a count or screen unit matched literally (px, ×)."""
    found = resolve(unit)
    return found is not None and found[0] == "pint"


def is_phrase(text: str) -> bool:
    """Several words that make one unit: "solar masses", "miles per hour" (pint multiplies "m s")."""
    return " per " in f" {text.lower()} " or text in _ALIASES or text.lower() in _ALIASES or text in _LITERAL


def _kind(unit: Any) -> Hashable:
    """What a pint unit measures, finer than pint's dimensionality.

    pint treats angles and ratios as dimensionless, so "90 deg" would convert to "days/s" and rpm to
    Hz. The kind also counts the angle units and, for dimensionless units, the dimensions that cancel.
    """
    reg = registry()
    angle = 0.0
    cancelled: dict[str, float] = {}  # exponents may be fractional (m**0.5)
    exponents: dict[str, Any] = dict(reg.Quantity(1, unit).unit_items())
    for name, exponent in exponents.items():
        root: dict[str, Any] = dict(reg.Quantity(1, reg.get_root_units(name)[1]).unit_items())
        angle += float(exponent) * float(root.get("radian", 0))
        dims_of: dict[str, Any] = dict(reg.get_dimensionality(name))
        for dim, power in dims_of.items():
            signed = float(exponent) * float(power)
            key = f"{dim}{'+' if signed > 0 else '-'}"
            cancelled[key] = cancelled.get(key, 0.0) + abs(signed)
    dims = tuple(sorted(reg.get_dimensionality(unit).items()))
    ratio = tuple(sorted(cancelled.items())) if not dims else ()
    return (dims, angle, ratio)


def dimension(unit: str | None) -> Hashable | None:
    """A value equal for two units when one converts to the other (None when unknown)."""
    found = resolve(unit) if unit else None
    if found is None:
        return None
    return ("literal", found[1]) if found[0] == "literal" else _kind(found[1])


def same(a: str, b: str) -> bool:
    """Two spellings of one unit (``"degrees"`` and ``"deg"``, ``"m/s²"`` and ``"m/s^2"``)."""
    if re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b):
        return True
    ra, rb = resolve(a), resolve(b)
    if ra is None or rb is None:  # not parsed: the same letters, whatever the case ("hz" and "Hz")
        return re.sub(r"\s+", "", a).lower() == re.sub(r"\s+", "", b).lower()
    return ra == rb or (ra[0] == rb[0] == "pint" and ra[1] == rb[1])


def _convert(value: float, from_unit: str, to_unit: str, delta: bool) -> float | None:
    if same(from_unit, to_unit):
        return value
    source, target = resolve(from_unit), resolve(to_unit)
    if source is None or target is None or source[0] != "pint" or target[0] != "pint":
        return None
    accel = _kind(registry().parse_units("m/s**2"))
    if from_unit.strip() == "g" and _kind(target[1]) == accel:  # "2 g" of gravity is not two grams
        source = ("pint", registry().parse_units("g0"))
    if _kind(source[1]) != _kind(target[1]):
        return None
    reg = registry()
    converted = float(reg.Quantity(value, source[1]).to(target[1]).magnitude)
    if delta:  # a difference of temperatures has no offset: +5 °C is +5 K, not +278.15 K
        converted -= float(reg.Quantity(0.0, source[1]).to(target[1]).magnitude)
    return converted


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; None when they measure different things.

    "g" means gram, except when converting to an acceleration, where it means standard gravity.
    """
    return _convert(value, from_unit, to_unit, delta=False)


def convert_delta(value: float, from_unit: str, to_unit: str) -> float | None:
    """A change by ``value`` in ``from_unit`` as a change in ``to_unit`` (offsets do not apply)."""
    return _convert(value, from_unit, to_unit, delta=True)
