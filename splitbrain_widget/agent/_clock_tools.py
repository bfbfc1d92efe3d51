"""The tools of a page on a virtual clock (a headless page): ``advance``, ``record`` and ``sweep``.

They are rows of :data:`._tools.TOOLS` like the others, offered where the scope has a clock
(:attr:`Scope.clock`), so the built-in agent on a headless page and the MCP server
(``splitbrain_widget.mcp``) get them from the same table. Tables come back as page data, marked
and bounded as every state is (:func:`._tools.for_model`).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from ..protocol import ERROR_CODES, ToolResult
from ._schema import PAGE_DATA_NOTE, parameter_schema

if TYPE_CHECKING:
    import pandas

    from ..manifest import Manifest
    from ._tools import Scope, ToolContext

MAX_RECORD_SECONDS = 600.0  # simulated seconds one record call may ask for
MAX_RECORD_ROWS = 2_000
MAX_SWEEP_POINTS = 200  # points of one sweep call (sb.sweep itself takes more, from Python)
MAX_TABLE_CHARS = 32_000  # a table's JSON handed back whole; a bigger one is stored aside, as big states are


def _seconds_schema(description: str, maximum: float) -> dict[str, Any]:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": maximum, "description": description}


def _observable_names(manifest: Manifest) -> dict[str, Any]:
    names: dict[str, Any] = {"type": "string"}
    if manifest.observables:
        names["enum"] = list(manifest.observables)
    return {"type": "array", "items": names, "minItems": 1, "description": "observables to keep (default: all)"}


def advance_schema(_scope: Scope) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"seconds": _seconds_schema("simulated seconds to run the page's clock forward", 3600)},
        "required": ["seconds"],
        "additionalProperties": False,
    }


def record_schema(scope: Scope) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "seconds": _seconds_schema("simulated seconds to record", MAX_RECORD_SECONDS),
            "every": _seconds_schema("simulated seconds between rows (default 0.1)", MAX_RECORD_SECONDS),
            "observables": _observable_names(scope.manifest),
        },
        "required": ["seconds"],
        "additionalProperties": False,
    }


def sweep_schema(scope: Scope) -> dict[str, Any]:
    settable = {
        path: {"type": "array", "items": parameter_schema(p), "minItems": 1, "maxItems": MAX_SWEEP_POINTS}
        for path, p in scope.manifest.parameters.items()
        if not p.readonly
    }
    return {
        "type": "object",
        "properties": {
            "grid": {
                "type": "object",
                "properties": settable,
                "additionalProperties": False,
                "minProperties": 1,
                "description": f"dotted path -> the values to try; every combination runs (at most {MAX_SWEEP_POINTS})",
            },
            "advance": _seconds_schema("simulated seconds each point runs from the reset before it is measured", 3600),
            "measure": _observable_names(scope.manifest),
        },
        "required": ["grid"],
        "additionalProperties": False,
    }


def _failure(op: str, exc: Exception) -> ToolResult:
    """A raised error as the result a tool returns: its code where it has one of ours."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc)
    if code not in ERROR_CODES:
        code = "invalid_value" if isinstance(exc, ValueError | TypeError) else "internal_error"
    return ToolResult.failure(code, f"{op}: {message}", op=op)  # type: ignore[arg-type]


def table(frame: pandas.DataFrame) -> dict[str, Any]:
    """A table as JSON: its columns, its rows (NaN as null) and the units pandas keeps in ``attrs``."""
    split = json.loads(frame.to_json(orient="split", index=False))
    out = {"columns": split["columns"], "rows": split["data"]}
    if frame.attrs.get("units"):
        out["units"] = dict(frame.attrs["units"])
    return out


def _number(args: dict[str, Any], name: str, default: float | None = None) -> float | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"'{name}' must be a finite number of simulated seconds, got {value!r}")
    return float(value)


def _names(args: dict[str, Any], name: str) -> list[str] | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{name}' must be a list of observable names, got {value!r}")
    return value


async def advance(ctx: ToolContext, args: dict[str, Any]) -> ToolResult | dict[str, Any]:
    try:
        seconds = _number(args, "seconds")
        if seconds is None:
            raise ValueError("advance needs 'seconds': simulated seconds to run forward")
        state = await ctx.sim.aadvance(seconds)
    except Exception as exc:
        return _failure("advance", exc)
    return ToolResult(ok=True, op="advance", message=f"advanced the page's clock {seconds:g} s", state=state)


async def record(ctx: ToolContext, args: dict[str, Any]) -> ToolResult | dict[str, Any]:
    try:
        seconds, every = _number(args, "seconds"), _number(args, "every", 0.1)
        if seconds is None or every is None or every <= 0:
            raise ValueError("record needs 'seconds' (and 'every' > 0): simulated seconds")
        if seconds > MAX_RECORD_SECONDS or seconds / every > MAX_RECORD_ROWS:
            raise ValueError(
                f"record({seconds:g}, every={every:g}) asks for more than {MAX_RECORD_SECONDS:g} s or "
                f"{MAX_RECORD_ROWS} rows in one call"
            )
        frame = await ctx.sim.arecord(seconds, every=every, observables=_names(args, "observables"))
    except Exception as exc:
        return _failure("record", exc)
    return _table_result(ctx, "record", f"recorded {len(frame)} rows", frame)


async def sweep(ctx: ToolContext, args: dict[str, Any]) -> ToolResult | dict[str, Any]:
    from ..core import _twins

    grid = args.get("grid")
    try:
        if not isinstance(grid, dict) or not grid or not all(isinstance(v, list) for v in grid.values()):
            raise ValueError("sweep needs 'grid': an object of dotted path -> a list of values")
        points = math.prod(len(values) for values in grid.values())
        if points > MAX_SWEEP_POINTS:
            raise ValueError(f"the grid has {points} points, more than the {MAX_SWEEP_POINTS} one sweep call runs")
        advance_s = _number(args, "advance")
        measure = _names(args, "measure")
        sim = ctx.sim
        frame = await _twins.awaiting(
            lambda _cancelled: sim.sweep(grid, measure=measure, advance=advance_s), what="sweep"
        )
    except Exception as exc:
        return _failure("sweep", exc)
    return _table_result(ctx, "sweep", f"measured {len(frame)} points", frame)


def _table_result(ctx: ToolContext, op: str, message: str, frame: pandas.DataFrame) -> dict[str, Any]:
    """A table as page data (marked as every state is), whole up to MAX_TABLE_CHARS, else stored aside
    with a preview, as :func:`._tools.for_model` does with a big state."""

    data = table(frame)
    text = json.dumps(data, separators=(",", ":"))
    out: dict[str, Any] = {"ok": True, "op": op, "message": message, "target": ctx.sim.target_id}
    if len(text) <= MAX_TABLE_CHARS:
        out["page_data"] = {"note": PAGE_DATA_NOTE, "table": data}
        return out
    key = f"result-{len(ctx.store) + 1}"
    ctx.store[key] = text
    out["page_data"] = {
        "note": PAGE_DATA_NOTE,
        "stored": key,
        "chars": len(text),
        "columns": data["columns"],
        "rows": len(data["rows"]),
        "preview": data["rows"][:5],
        "how_to_read": f"call read_stored_result with key={key!r} and an offset",
    }
    return out
