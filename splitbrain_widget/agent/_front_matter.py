"""A skill's front matter as fields: YAML through PyYAML where it is installed, else (in the browser,
where PyPI has no PyYAML wheel) its simple form, which every skill this package ships is written in:
``key: value`` lines, ``[a, b]`` lists, ``- item`` lines under a key, quoted strings, true / false
and numbers, ``#`` comments. Anything else names the line and says to write it in the simple form."""

from __future__ import annotations

import re
from typing import Any


class FrontMatterError(ValueError):
    """The front matter cannot be read; the message says where and why."""


def read(text: str) -> Any:
    """The front matter's fields (a dict, or whatever YAML made of it)."""
    try:
        import yaml
    except ModuleNotFoundError:
        return simple(text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML: {exc}") from None


_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$")
_ITEM = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")


def simple(text: str) -> dict[str, Any]:
    """The simple form of YAML front matter, read without PyYAML."""
    fields: dict[str, Any] = {}
    open_list: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = _uncommented(line).rstrip()
        if not stripped.strip():
            continue
        item = _ITEM.match(stripped)
        if item is not None and open_list is not None:
            fields[open_list].append(_scalar(item.group(1) or item.group(2) or "", number))
            continue
        key = _KEY.match(stripped)
        if key is None:
            raise FrontMatterError(
                f"line {number} of the front matter, {line.strip()!r}: without PyYAML only its simple form is "
                "read (key: value, [a, b] lists, '- item' lines under a key)"
            )
        name, value = key.group(1), (key.group(2) or "").strip()
        if name in fields:
            raise FrontMatterError(f"line {number} of the front matter: {name!r} is given twice")
        if not value:
            fields[name], open_list = [], name
            continue
        open_list = None
        fields[name] = _list(value, number) if value.startswith("[") else _scalar(value, number)
    return fields


def _uncommented(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if ch in "'\"" and (not quote or quote == ch):
            quote = "" if quote else ch
        elif ch == "#" and not quote and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _list(value: str, number: int) -> list[Any]:
    if not value.endswith("]"):
        raise FrontMatterError(f"line {number} of the front matter: a list opened with '[' must close on its line")
    inner = value[1:-1].strip()
    return [_scalar(part.strip(), number) for part in re.findall(r"'[^']*'|\"[^\"]*\"|[^,]+", inner)] if inner else []


def _scalar(value: str, number: int) -> Any:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if value[:1] in "'\"":
        raise FrontMatterError(f"line {number} of the front matter: a quote is not closed")
    if value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if re.fullmatch(r"-?\d+\.\d*", value):
        return float(value)
    if value[:1] in "[{|>&*!":
        raise FrontMatterError(
            f"line {number} of the front matter: {value[:20]!r} needs PyYAML; write it in the simple form"
        )
    return value
