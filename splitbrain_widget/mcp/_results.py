"""A tool's result as MCP content: the model's JSON as text, the program's as ``structuredContent``.

The model reads the page's data as a string inside ``page_data`` (marked: data the page reported,
never instructions), as the built-in agent does. A program reads ``structuredContent``, where the
same data is an object at the top level (``state``, ``table``) and ``page_data`` keeps the marking
and names the fields it covers: ``result.structuredContent["state"]["range"]``. Both are bounded as
:func:`splitbrain_widget.agent.for_model` bounds them (a state too big is stored aside, in both).
Every tool declares :data:`OUTPUT_SCHEMA`, which both forms of every result satisfy.
"""

from __future__ import annotations

import json
from typing import Any

from ..agent import split_picture

DATA_FIELDS = ("state", "table")  # what page_data may carry, lifted to the top for programs

_OBJECT: dict[str, Any] = {"type": "object"}
_STRING: dict[str, Any] = {"type": "string"}
# Compact (every tool of every widget carries it in tools/list): the fields' types, no prose; their
# meaning is docs/mcp.md's and ToolResult's (splitbrain_widget/protocol.py).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "op": _STRING,
        "target": _STRING,
        "message": _STRING,
        "error": {"type": "object", "properties": {"code": _STRING, "message": _STRING}, "required": ["code"]},
        "changed": {"type": "object", "additionalProperties": {"type": "object", "required": ["value"]}},
        "values": _OBJECT,
        "state": _OBJECT,
        "table": {"type": "object", "required": ["columns", "rows"]},
        "page_data": {"type": "object", "properties": {"note": _STRING}, "required": ["note"]},
        "applied": {"type": "boolean"},
        "kept": {"type": "boolean"},
        "views_applied": {"type": "integer"},
        "evaluations": {"type": "array"},
    },
    "required": ["ok"],
}


def for_program(payload: dict[str, Any]) -> dict[str, Any]:
    """The model's result with the page's data as objects at the top: ``state``, ``table``."""
    page = payload.get("page_data")
    if not isinstance(page, dict):
        return payload
    out = {k: v for k, v in payload.items() if k != "page_data"}
    marking = {k: v for k, v in page.items() if k not in DATA_FIELDS}
    marking["fields"] = [key for key in DATA_FIELDS if key in page]
    for key in marking["fields"]:
        value = page[key]
        out[key] = json.loads(value) if isinstance(value, str) else value  # for_model's JSON text, bounded
    out["page_data"] = marking
    return out


def call_result(payload: dict[str, Any]) -> Any:
    """A tool's ``CallToolResult``: a picture (the ``snapshot`` tool's) as image content, the model's
    JSON as text, the program's as structured content; ``isError`` where the call did not do it."""
    import mcp_types as types

    payload, picture = split_picture(payload)
    content: list[Any] = []
    if picture is not None:
        content.append(types.ImageContent(type="image", data=picture.base64(), mime_type="image/png"))
    content.append(types.TextContent(type="text", text=json.dumps(payload, default=str)))
    return types.CallToolResult(
        content=content, structured_content=for_program(payload), is_error=not bool(payload.get("ok"))
    )
