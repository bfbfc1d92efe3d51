"""The names a manifest may use: identifiers and dotted JavaScript paths, never a member every
JavaScript object has (`__proto__`, `constructor`...), with the checks that say what is wrong."""

from __future__ import annotations

import re
from typing import Any

from ..protocol import MAX_ACTION_NAME
from ._errors import shown

# A dotted path of JavaScript identifiers (``sim.params.speed``): what a binding may name in a page.
JS_PATH_PATTERN = r"^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$"


NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a parameter's, group's, observable's or action's name


ACTION_NAME_PATTERN = NAME_PATTERN


MAX_NAME = MAX_ACTION_NAME  # characters: what an ``action`` request carries (protocol.py)


# What every JavaScript object has (Object.prototype's members and a function's prototype): never a name.
OBJECT_MEMBERS = frozenset(
    [
        "constructor",
        "prototype",
        "toString",
        "toLocaleString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
    ]
)


# Words a generated accessor cannot name (``() => (delete)`` would not compile and would take every
# other accessor of the page down with it).
_RESERVED_WORDS = (
    "arguments await break case catch class const continue debugger default delete do else enum eval export "
    "extends false finally for function if implements import in instanceof interface let new null package "
    "private protected public return static super switch this throw true try typeof var void while with yield"
)


JS_RESERVED = frozenset(_RESERVED_WORDS.split())


_JS_PATH_EXAMPLE = "expected a dotted path of JavaScript identifiers such as 'sim.speed'"


def js_path(value: str) -> str:
    if not re.fullmatch(JS_PATH_PATTERN, value):
        raise ValueError(f"{_JS_PATH_EXAMPLE}, got {shown(value)}")
    reserved = next((part for part in value.split(".") if part in JS_RESERVED), None)
    if reserved is not None:
        raise ValueError(f"'{reserved}' is a JavaScript reserved word; {_JS_PATH_EXAMPLE}, got {shown(value)}")
    return value


def non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("expected a non-empty string")
    return value


def attribute(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z_:][-A-Za-z0-9_:.]*", value):
        raise ValueError(f"expected 'text', 'value' or an attribute name such as 'data-count', got {shown(value)}")
    return value


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot name a parameter, a group, an observable or an action; None when it can.

    A name is a plain identifier (:data:`NAME_PATTERN`, at most :data:`MAX_NAME` characters) that no
    JavaScript object already has: names become keys of the objects a page is given and reads, where
    ``__proto__`` would set a prototype and ``constructor`` shadow one.
    """
    if not isinstance(value, str) or not re.fullmatch(NAME_PATTERN, value):
        return f"expected letters, digits and '_', not starting with a digit, got {shown(value)}"
    if len(value) > MAX_NAME:
        return f"expected at most {MAX_NAME} characters, got {len(value)}"
    if value.startswith("__") or value in OBJECT_MEMBERS:
        return f"{shown(value)} is a name every JavaScript object has already (choose another)"
    return None


def plain_name(value: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def true_only(value: bool) -> bool:
    if not value:
        raise ValueError("expected true; leave 'ready' out to wait for the page's load event")
    return value


def true_only_all(value: bool) -> bool:
    if not value:
        raise ValueError("expected true (click every match); leave 'all' out to click the first")
    return value


def events_list(value: Any) -> Any:
    if isinstance(value, list | tuple) and not value:
        raise ValueError("expected 'input', 'change', 'click' or a list of them, got an empty list")
    return (value,) if isinstance(value, str) else value
