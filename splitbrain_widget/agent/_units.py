"""Unit conversion for the offline planner: "30 km/h" -> 8.33 when the manifest says m/s."""

from __future__ import annotations

import math
import re

# unit spelling -> (dimension, factor to the dimension's base unit, offset added after scaling)
_UNITS: dict[str, tuple[str, float, float]] = {}


def _add(dimension: str, factor: float, *names: str, offset: float = 0.0) -> None:
    for name in names:
        _UNITS[name] = (dimension, factor, offset)


_add("length", 1, "m", "meter", "meters", "metre", "metres")
_add("length", 1000, "km", "kilometer", "kilometers", "kilometre", "kilometres")
_add("length", 0.01, "cm", "centimeter", "centimeters", "centimetre", "centimetres")
_add("length", 0.001, "mm", "millimeter", "millimeters")
_add("length", 0.3048, "ft", "foot", "feet")
_add("length", 0.0254, "in", "inch", "inches")
_add("length", 1609.344, "mi", "mile", "miles")
_add("length", 1.495978707e11, "au")
_add("speed", 1, "m/s", "mps", "meters per second", "metres per second")
_add("speed", 1 / 3.6, "km/h", "kmh", "kph", "km/hr", "kilometers per hour", "kilometres per hour")
_add("speed", 0.44704, "mph", "miles per hour")
_add("speed", 0.514444, "kn", "knot", "knots")
_add("speed", 0.3048, "ft/s", "fps")
_add("speed", 1000, "km/s", "kps")
_add("acceleration", 1, "m/s^2", "m/s2", "m/s/s")
_add("acceleration", 9.80665, "g0", "gee")
_add("angle", math.pi / 180, "deg", "degree", "degrees", "°")
_add("angle", 1, "rad", "radian", "radians")
_add("time", 1, "s", "sec", "secs", "second", "seconds")
_add("time", 0.001, "ms", "millisecond", "milliseconds")
_add("time", 60, "min", "mins", "minute", "minutes")
_add("time", 3600, "h", "hr", "hrs", "hour", "hours")
_add("time", 86400, "d", "day", "days")
_add("mass", 1, "kg", "kilogram", "kilograms")
_add("mass", 0.001, "g", "gram", "grams")
_add("mass", 1000, "t", "tonne", "tonnes")
_add("mass", 0.45359237, "lb", "lbs", "pound", "pounds")
_add("frequency", 1, "hz", "hertz", "1/s")
_add("frequency", 1000, "khz")
_add("temperature", 1, "k", "kelvin")
_add("temperature", 1, "°c", "c", "celsius", "degc", offset=273.15)
_add("pixels", 1, "px", "pixel", "pixels")
_add("percent", 1, "%", "percent", "pct")


def normalise(unit: str) -> str:
    """Lower-case, no spaces, ² -> ^2: ``"M/S²"`` -> ``"m/s^2"``."""
    text = unit.strip().lower().replace("²", "^2").replace("·", "*")
    return re.sub(r"\s+", " ", text) if " per " in text else text.replace(" ", "")


def lookup(unit: str) -> tuple[str, float, float] | None:
    """(dimension, factor, offset) of a unit spelling, or None when unknown."""
    return _UNITS.get(normalise(unit))


def known_units() -> list[str]:
    """Every spelling, longest first (so a parser tries ``km/h`` before ``km``)."""
    return sorted(_UNITS, key=len, reverse=True)


def same(a: str, b: str) -> bool:
    """Two spellings of one unit (``"degrees"`` and ``"deg"``)."""
    return normalise(a) == normalise(b) or (lookup(a) is not None and lookup(a) == lookup(b))


def dimension(unit: str | None) -> str | None:
    found = lookup(unit) if unit else None
    return found[0] if found else None


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; None when the dimensions differ or are unknown.

    "g" means gram, except when converting to an acceleration, where it means standard gravity.
    """
    target = lookup(to_unit)
    source = lookup(from_unit)
    if target is not None and target[0] == "acceleration" and normalise(from_unit) == "g":
        source = _UNITS["g0"]
    if source is None or target is None or source[0] != target[0]:
        return None
    base = value * source[1] + source[2]
    return (base - target[2]) / target[1]
