"""What a call through our MCP server costs, beside the SDK's own floor and the same call in Python.

In each round, alternated so load shifts hit all of them alike:

- **the SDK's floor**: a bare low-level ``Server`` of the same SDK with one ``echo`` tool, served by
  the same HTTP stack as ours (:class:`splitbrain_widget.mcp._http.HttpServer`: uvicorn on its own
  thread, the token check), called by the same client: what any server of this SDK costs;
- **ours**: ``<id>__set_parameters`` on our server, the same client;
- **Python**: ``sim.aset_parameters`` (scripted and headless) or ``sim.set_parameter`` in a cell (live).

Where the widget answers: the in-process fake view (``scripted``), a headless page (``headless``),
a live view in JupyterLab + Chromium (``live``, tests/browser/harness.py). Each in both protocol
eras: the 2026-07-28 per-request envelope (``modern``) and the handshake (``handshake``).
"ours minus floor" at the median is what our server adds. ``python -m benchmarks mcp``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from ._stats import summary

CALLS = 200
WARMUP = 10
SMOKE_CALLS = 5
ERAS = {"modern": "2026-07-28", "handshake": "legacy"}  # the SDK client's mode for each
FLOOR_TOKEN = "floor-token"


def floor_server() -> Any:
    """A bare server of the SDK with one ``echo`` tool: its arguments back, as text and structured."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    schema = {"type": "object", "properties": {"values": {"type": "object"}}, "required": ["values"]}

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

    async def call_tool(_ctx: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        text = types.TextContent(type="text", text=json.dumps(arguments))
        return types.CallToolResult(content=[text], structured_content=arguments)

    return Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)


class Floor:
    """The floor server on a free port of 127.0.0.1 until :meth:`stop`."""

    def __init__(self) -> None:
        from splitbrain_widget.mcp._http import HttpServer

        self.http = HttpServer(floor_server(), port=0, token=FLOOR_TOKEN)
        self.http.start()
        self.url = self.http.url

    def stop(self) -> None:
        self.http.stop()


def _client(url: str, token: str, mode: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


async def _timed(call: Awaitable[Any]) -> tuple[float, Any]:
    """How long awaiting ``call`` took (ms), and what it returned."""
    started = time.perf_counter()
    result = await call
    return (time.perf_counter() - started) * 1000, result


async def _rounds(
    ours: tuple[str, str], floor: Floor, mode: str, tool: str, path: str, values: list[float], direct: Any
) -> dict[str, list[float]]:
    """Alternate: the floor's echo, our tool, and (``direct`` given) the Python call, one of each a round."""
    samples: dict[str, list[float]] = {"floor_ms": [], "mcp_ms": [], "python_ms": []}
    async with _client(*ours, mode) as client, _client(floor.url, FLOOR_TOKEN, mode) as bare:
        for i, value in enumerate(values):
            arguments = {"values": {path: value}}
            took: dict[str, float] = {}
            took["floor_ms"], echoed = await _timed(bare.call_tool("echo", arguments))
            took["mcp_ms"], result = await _timed(client.call_tool(tool, arguments))
            assert not echoed.is_error and not result.is_error, result
            if direct is not None:
                took["python_ms"], done = await _timed(direct.aset_parameters({path: value + 0.5}))
                assert done.ok, done
            if i >= WARMUP:
                for key, ms in took.items():
                    samples[key].append(ms)
    return samples


def _figures(samples: dict[str, list[float]]) -> dict[str, Any]:
    out: dict[str, Any] = {key: summary(ms) for key, ms in samples.items() if ms}
    ours, floor = out["mcp_ms"]["median"], out["floor_ms"]["median"]
    out["added_over_floor_ms"] = round(ours - floor, 3)
    out["mcp_over_floor"] = round(ours / floor, 2)
    if "python_ms" in out:
        out["mcp_over_python"] = round(ours / out["python_ms"]["median"], 2)
    return out


def _measure(sim: Any, tool: str, path: str, low: float, high: float, calls: int) -> dict[str, Any]:
    import splitbrain_widget as sb

    server, floor = sb.serve_mcp(sim), Floor()
    try:
        step = (high - low) / (calls + WARMUP + 1)
        values = [round(low + step * (i + 1), 3) for i in range(calls + WARMUP)]
        return {
            era: _figures(asyncio.run(_rounds((server.url, server.token), floor, mode, tool, path, values, sim)))
            for era, mode in ERAS.items()
        }
    finally:
        floor.stop()
        server.stop()


def scripted(calls: int = CALLS) -> dict[str, Any]:
    import splitbrain_widget as sb

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.fake_view import FakeView

    sim = sb.TargetWidget("projectile")
    FakeView(sim)
    try:
        return _measure(sim, "projectile__set_parameters", "launch.speed", 5, 30, calls)
    finally:
        sim.close()


def headless(calls: int = CALLS) -> dict[str, Any]:
    import splitbrain_widget as sb

    with sb.HeadlessTarget("projectile") as page:
        return _measure(page, "projectile__set_parameters", "launch.speed", 5, 30, calls)


LIVE_TOKEN = "bench-token"
LIVE_ROUNDS = 2


def _live_cells(calls: int) -> list[str]:
    return [
        "import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('bouncer', height=200)\nsim",
        f"server = sb.serve_mcp(sim, token={LIVE_TOKEN!r})\nprint(server.url)",
        "samples = []\n"
        f"for i in range({calls + WARMUP}):\n"
        "    t = time.perf_counter(); r = sim.set_parameter('speed', 5 + i % 40); dt = time.perf_counter() - t\n"
        "    assert r.ok, r\n"
        "    samples.append(dt * 1000)\n"
        f"print(json.dumps(samples[{WARMUP}:]))",
    ]


def live(calls: int = CALLS) -> dict[str, Any]:
    """Rounds of cell calls, then client calls (ours and the floor's alternated), twice over."""
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.browser.harness import notebook_session

    values = [float(5 + i % 40) for i in range(calls + WARMUP)]
    out: dict[str, Any] = {}
    floor = Floor()
    try:
        with notebook_session(_live_cells(calls), name="bench_mcp.ipynb") as nb:
            nb.run_cell(0)
            nb.wait_view(0)
            url = nb.run_cell(1).strip().splitlines()[-1]
            for era, mode in ERAS.items():
                samples: dict[str, list[float]] = {"floor_ms": [], "mcp_ms": [], "python_ms": []}
                for _ in range(LIVE_ROUNDS):
                    cell = nb.run_cell(2, timeout=600).strip().splitlines()[-1]
                    samples["python_ms"] += [float(x) for x in json.loads(cell)]
                    ours = (url, LIVE_TOKEN)
                    rounds = _rounds(ours, floor, mode, "bouncer__set_parameters", "settings.speed", values, None)
                    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
                        got = pool.submit(asyncio.run, rounds).result()
                    samples["floor_ms"] += got["floor_ms"]
                    samples["mcp_ms"] += got["mcp_ms"]
                out[era] = _figures(samples)
    finally:
        floor.stop()
    return out


def run(smoke: bool = False) -> dict[str, Any]:
    calls = SMOKE_CALLS if smoke else CALLS
    return {"mcp": {"calls": calls, "scripted": scripted(calls), "headless": headless(calls), "live": live(calls)}}


if __name__ == "__main__":
    print(json.dumps(run(smoke="--smoke" in sys.argv), indent=1))
