"""Numbers as people write them, rewritten as digits before the planner reads a request.

- number words, composed: "thirty five", "thirty-five", "a hundred and twenty", "two thousand",
  "zero point five", "a quarter", "three quarters", "one and a half", "half a" before a unit;
- signs: "minus 5", "negative 30", "−5" (the minus sign), "minus five" become "-5", "-30", "-5";
- corrections: "30, no wait, 40", "30 degrees, sorry, 40 degrees", "30 I mean 40" keep the last.

A sign word left over, with no number right after it ("minus a bit", "make it negative"), is what
:func:`stray_sign` finds: the planner refuses such a request rather than drop the sign, since a
change of the other sign is worse than none. A run of number words that does not read as one
number ("one two") is left as written (and then read as two numbers, which is refused).
"""

from __future__ import annotations

import re

from ...core import _units

UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000}
FRACTIONS = {"quarter": 0.25, "quarters": 0.25, "half": 0.5, "halves": 0.5}
DIGIT_WORDS = {k: v for k, v in UNITS.items() if v < 10}

_WORD = "|".join(sorted([*UNITS, *TENS, *SCALES, *FRACTIONS, "point", "and", "a", "an"], key=len, reverse=True))
_RUN = re.compile(rf"\b(?:{_WORD})(?:(?:\s+|-)(?:{_WORD}))*\b", re.IGNORECASE)
_NUMBER = r"-?\d+(?:\.\d+)?"
_SIGN = re.compile(r"(?:\b(?:minus|negative)\s+|−\s*)(?=\d|\.\d)", re.IGNORECASE)
_CORRECTION = re.compile(
    rf"{_NUMBER}(?:\s*[A-Za-z°%/^²³]+(?:/[A-Za-z]+)?)?\s*[,;:–—-]?\s*"
    r"(?:no,?\s+wait|wait,?\s+no|no|nope|sorry|i mean|i meant|actually|make that|or rather|rather|correction)"
    rf"[,;:.!]?\s+(?=(?:to\s+)?{_NUMBER})",
    re.IGNORECASE,
)
STRAY_SIGN = re.compile(r"\b(?:minus|negative)\b|−")


def _read(words: list[str]) -> float | None:
    """The number a run of number words says, or None where it says no one number."""
    if words and words[0] in ("a", "an"):
        words = ["one", *words[1:]]
    if "point" in words:
        at = words.index("point")
        whole = _read(words[:at]) if at else 0.0
        digits = words[at + 1 :]
        if whole is None or not digits or any(d not in DIGIT_WORDS for d in digits):
            return None
        return float(f"{int(whole)}.{''.join(str(DIGIT_WORDS[d]) for d in digits)}")
    if "and" in words and words[-1] in FRACTIONS and words[-2:-1] in (["a"], ["an"], ["one"]):
        # "one and a half": the whole, then the fraction
        whole = _read(words[: words.index("and")])
        return None if whole is None else whole + FRACTIONS[words[-1]]
    if words[-1] in FRACTIONS:  # "a quarter", "three quarters"
        count = _read(words[:-1]) if len(words) > 1 else None
        return None if count is None else count * FRACTIONS[words[-1]]
    total, current, last = 0, 0, ""
    for word in words:
        if word in UNITS:
            if last in UNITS or (last in TENS and UNITS[word] >= 10):
                return None  # "one two", "twenty eleven"
            current += UNITS[word]
        elif word in TENS:
            if last in UNITS or last in TENS:
                return None
            current += TENS[word]
        elif word == "hundred":
            if last in SCALES or current >= 100:
                return None
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        elif word == "and":
            if last not in SCALES:
                return None
        else:
            return None
        last = word
    if last in ("and", "a", "an"):
        return None
    return float(total + current)


def _article_alone(words: list[str]) -> bool:
    """ "a" / "an" that starts no number ("a speed of five"), unlike "a hundred", "a quarter"."""
    return words[0] in ("a", "an") and len(words) > 1 and words[1] not in (*SCALES, *FRACTIONS)


def _words_as_digits(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        raw = match.group(0)
        words = [w.lower() for w in re.split(r"[\s-]+", raw)]
        # keep the words around the number: a leading "a" / "and" that starts no number, a trailing "and"
        lead: list[str] = []
        while words and (
            words[0] == "and" or (words[0] in ("a", "an") and len(words) > 1 and words[1] not in (*SCALES, *FRACTIONS))
        ):
            lead.append(words.pop(0))
        tail: list[str] = []
        while words and words[-1] in ("and", "a", "an"):
            tail.insert(0, words.pop())
        if not any(w in UNITS or w in TENS or w in SCALES or w in FRACTIONS for w in words):
            return raw  # "a", "and", "point" alone are no number
        if words == ["one"]:
            return raw  # "the red one": read as the planner always read it, a word
        if all(w in FRACTIONS for w in words):
            return raw  # "half" alone is a factor ("half the speed"), not a number
        if words[-1] in FRACTIONS and re.match(r"\s+of\b", match.string[match.end() :], re.IGNORECASE):
            return raw  # "a quarter of the speed" is a factor, not the value 0.25
        value = _read(words)
        if value is None:
            return raw
        number = f"{value:g}" if value != int(value) or abs(value) >= 1e15 else str(int(value))
        return " ".join([*lead, number, *tail])

    return _RUN.sub(replace, text)


def _half_a(text: str) -> str:
    """ "half a metre" is 0.5 metre (where what follows is a unit); "half the speed" stays a factor."""

    def replace(match: re.Match[str]) -> str:
        unit = match.group(1)
        return f"0.5 {unit}" if _units.is_unit(unit.lower()) or _units.is_unit(unit) else match.group(0)

    return re.sub(r"\bhalf an? ([A-Za-z]+)", replace, text, flags=re.IGNORECASE)


def spoken_numbers(text: str) -> str:
    """``text`` with its spoken numbers, signs and corrections written as digits."""
    out = _half_a(text)
    out = _words_as_digits(out)
    out = _SIGN.sub("-", out)
    previous = None
    while previous != out:  # "10, no, 20, sorry, 30": each correction in turn
        previous = out
        out = _CORRECTION.sub("", out, count=1)
    return re.sub(r"\bto\s+to\b", "to", out)


def stray_sign(clause: str) -> bool:
    """Whether a sign word is left in a clause with no number after it to belong to."""
    return STRAY_SIGN.search(clause) is not None
