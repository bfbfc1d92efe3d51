"""What a call through the MCP server costs beside the same call made in Python, side by side.

- **Scripted floor.** A widget on the in-process fake view (no browser): ``sim.set_parameters`` in
  Python, and the same change as ``<id>__set_parameters`` from the SDK's client over streamable HTTP
  (one session, the server on its own thread). The difference is the protocol's cost.
- **Headless page.** The same pair against a ``HeadlessTarget`` (Chromium): what a client of
  ``python -m splitbrain_widget mcp`` sees, beside a Python script's call.
- **Live view in JupyterLab.** A displayed widget in a real JupyterLab + Chromium
  (tests/browser/harness.py): ``sim.set_parameter`` in a cell, then the same change from an MCP
  client outside the kernel, in alternating rounds (cell, client, cell, client).

Alternating the two kinds of call in one run, so load shifts hit both. ``python -m benchmarks mcp``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from ._stats import summary

CALLS = 200
WARMUP = 10


async def _pairs(sim: Any, server: Any, tool: str, path: str, values: list[float]) -> tuple[list[float], list[float]]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    direct: list[float] = []
    over_mcp: list[float] = []
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=httpx2.Timeout(30))
    async with (
        http,
        streamable_http_client(server.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i, value in enumerate(values):
            started = time.perf_counter()
            result = await session.call_tool(tool, {"values": {path: value}})
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error, result
            started = time.perf_counter()
            assert (await sim.aset_parameters({path: value + 0.5})).ok
            took_direct = (time.perf_counter() - started) * 1000
            if i >= WARMUP:
                over_mcp.append(took)
                direct.append(took_direct)
    return direct, over_mcp


def _measure(sim: Any, tool: str, path: str, low: float, high: float) -> dict[str, Any]:
    import splitbrain_widget as sb

    server = sb.serve_mcp(sim)
    try:
        step = (high - low) / (CALLS + WARMUP + 1)
        values = [round(low + step * (i + 1), 3) for i in range(CALLS + WARMUP)]
        direct, over_mcp = asyncio.run(_pairs(sim, server, tool, path, values))
    finally:
        server.stop()
    d, m = summary(direct), summary(over_mcp)
    return {"python_ms": d, "mcp_ms": m, "mcp_over_python": round(m["median"] / d["median"], 2)}


def scripted() -> dict[str, Any]:
    import splitbrain_widget as sb

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.fake_view import FakeView

    sim = sb.TargetWidget("projectile")
    FakeView(sim)
    try:
        return _measure(sim, "projectile__set_parameters", "launch.speed", 5, 30)
    finally:
        sim.close()


def headless() -> dict[str, Any]:
    import splitbrain_widget as sb

    with sb.HeadlessTarget("projectile") as page:
        return _measure(page, "projectile__set_parameters", "launch.speed", 5, 30)


LIVE_TOKEN = "bench-token"
LIVE_ROUNDS = 2
LIVE_CELLS = [
    "import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('bouncer', height=200)\nsim",
    f"server = sb.serve_mcp(sim, token={LIVE_TOKEN!r})\nprint(server.url)",
    "samples = []\n"
    f"for i in range({CALLS + WARMUP}):\n"
    "    t = time.perf_counter(); r = sim.set_parameter('speed', 5 + i % 40); dt = time.perf_counter() - t\n"
    "    assert r.ok, r\n"
    "    samples.append(dt * 1000)\n"
    f"print(json.dumps(samples[{WARMUP}:]))",
]


async def _client_calls(url: str) -> list[float]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    out: list[float] = []
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {LIVE_TOKEN}"}, timeout=httpx2.Timeout(30))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(CALLS + WARMUP):
            started = time.perf_counter()
            result = await session.call_tool("bouncer__set_parameters", {"values": {"settings.speed": 5 + i % 40}})
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error, result
            if i >= WARMUP:
                out.append(took)
    return out


def live() -> dict[str, Any]:
    import json
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.browser.harness import notebook_session

    direct: list[float] = []
    over_mcp: list[float] = []
    with notebook_session(LIVE_CELLS, name="bench_mcp.ipynb") as nb:
        nb.run_cell(0)
        nb.wait_view(0)
        url = nb.run_cell(1).strip().splitlines()[-1]
        for _ in range(LIVE_ROUNDS):
            direct += [float(x) for x in json.loads(nb.run_cell(2, timeout=600).strip().splitlines()[-1])]
            with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
                over_mcp += pool.submit(asyncio.run, _client_calls(url)).result()
    d, m = summary(direct), summary(over_mcp)
    return {"python_ms": d, "mcp_ms": m, "mcp_over_python": round(m["median"] / d["median"], 2)}


def run() -> dict[str, Any]:
    return {"mcp": {"calls": CALLS, "scripted": scripted(), "headless": headless(), "live": live()}}
