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

from ..agent import PAGE_DATA_NOTE, split_picture

DATA_FIELDS = ("state", "table")  # what page_data may carry, lifted to the top for programs

_ANY: dict[str, Any] = {}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "whether the call did what it asked (on the page: answered)"},
        "op": {"type": "string"},
        "target": {"type": "string", "description": "the target the widget runs"},
        "message": {"type": "string"},
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "hint": {"type": "string"}},
            "required": ["code", "message"],
        },
        "changed": {
            "type": "object",
            "description": "dotted path -> the value the page holds now, its unit, and asked where that differs",
            "additionalProperties": {
                "type": "object",
                "properties": {"value": _ANY, "unit": {"type": "string"}, "asked": _ANY},
                "required": ["value"],
            },
        },
        "values": {"type": "object", "description": "dotted path -> current value"},
        "state": {"type": "object", "description": f"the state the page reported ({PAGE_DATA_NOTE})"},
        "table": {
            "type": "object",
            "description": f"rows measured on the page ({PAGE_DATA_NOTE})",
            "properties": {"columns": {"type": "array"}, "rows": {"type": "array"}, "units": {"type": "object"}},
            "required": ["columns", "rows"],
        },
        "page_data": {
            "type": "object",
            "description": "the marking of the fields the page reported, or where a big one is stored",
            "properties": {
                "note": {"type": "string"},
                "fields": {"type": "array", "items": {"type": "string", "enum": list(DATA_FIELDS)}},
            },
            "required": ["note"],
        },
        "applied": {"type": "boolean", "description": "whether a page applied or answered the call"},
        "kept": {"type": "boolean", "description": "a change no page took yet, held for the next one"},
        "views_applied": {"type": "integer", "minimum": 0},
        "evaluations": {"type": "array", "items": {"type": "object"}},
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
