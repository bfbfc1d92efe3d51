"""What goes wrong with a manifest or a value: the two errors, and pydantic's validation errors
said as a manifest's author reads them (the file, the field, what was expected)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import (
    ValidationError,
)
from pydantic_core import InitErrorDetails, PydanticCustomError


class ParameterError(ValueError):
    """A parameter name or value was refused.

    ``code`` is one of ``unknown_param``, ``invalid_value`` or ``readonly``; ``hint`` suggests
    what to do instead (the closest real names, the allowed range).
    """

    def __init__(self, code: str, message: str, *, name: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.name = name
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ManifestError(ValueError):
    """A manifest failed to load; ``problems`` lists ``"<field path>: <what was expected>"`` lines."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in problems))


SHAPE_TAG = "shape:"  # a field's alternatives (one step or a list) are told apart by tags so prefixed: not shown


def describe(err: Any) -> tuple[tuple[str | int, ...], str]:
    """One pydantic error as (field location, what was expected)."""
    loc: tuple[str | int, ...] = tuple(p for p in err["loc"] if not str(p).startswith(("function-", SHAPE_TAG)))
    msg: str = err["msg"].removeprefix("Value error, ")
    kind = err["type"]
    if kind == PROBLEM:
        return loc, msg
    if msg.startswith("@"):  # a validator naming the field it refused: "@value: ..."
        field, msg = msg[1:].split(": ", 1)
        loc = (*loc, *field.split("."))
    if kind == "extra_forbidden":
        msg = "unknown field"
    elif kind == "missing":
        msg = "missing; this field is required"
    elif kind == "literal_error":
        msg = "expected " + msg.removeprefix("Input should be ")
    if kind not in ("missing", "extra_forbidden", "value_error"):
        msg += f" (got {shown(err.get('input'))})"
    return loc, msg


def format_errors(exc: ValidationError) -> list[str]:
    """``"<field path>: <what was expected>"`` lines, one per problem."""
    lines = []
    for err in exc.errors(include_url=False):
        loc, msg = describe(err)
        where = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{where}: {msg}")
    return lines


def detail(exc: ParameterError) -> str:
    """The part of a ParameterError message after the parameter name."""
    return exc.message.split(": ", 1)[-1]


def shown(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, allow_nan=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kind_of(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for t, n in names.items():
        if isinstance(value, t):
            return n
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


PROBLEM = "manifest_field"  # the error type of a problem found while collecting parameters


def problem_at(loc: tuple[str | int, ...], message: str, value: Any) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError(PROBLEM, "{problem}", {"problem": message}), loc=loc, input=value)
