"""The kernel's MCP server in a real JupyterLab: a client outside the kernel steers a displayed widget.

An MCP client (the official SDK, in this test's process) connects to ``sb.serve_mcp`` started in a
notebook cell, sets a parameter, and the sandboxed page in the notebook changes (read from the
page's own ``body.dataset``); the change is audited as the client's. A call made while a cell
sleeps is answered before the cell ends: the reply path needs no main thread.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from .harness import LAB_ONLY, NotebookPage, wait_for
from .test_bridge_browser import PREAMBLE, run_preamble

pytestmark = pytest.mark.browser
TOKEN = "browser-test-token"


async def _call(url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call from a fresh MCP session: its structured result."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(30, read=120))
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(name, arguments)
        assert not result.is_error, result
        return dict(result.structured_content or {})


def page_speed(nb: NotebookPage) -> Any:
    """The speed the demo page in cell 1 holds, from its own ``body.dataset.values``."""
    return json.loads(nb.frame_dataset(1).get("values", "{}")).get("settings.speed")


def call(url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """:func:`_call` on a thread of its own (Playwright's sync API holds this thread's event loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _call(url, name, arguments)).result()


@LAB_ONLY
def test_a_client_outside_the_kernel_steers_the_page_in_the_notebook(open_notebook: Any, targets_dir: Path) -> None:
    d = repr(str(targets_dir))
    nb = open_notebook(
        [
            PREAMBLE,
            f"sim = sb.TargetWidget('demo', targets_dir={d})\nsim",
            f"server = sb.serve_mcp(sim, token={TOKEN!r})\nprint('URL', server.url)",
            "print(sim.values['settings.speed'])\nprint(sim.audit.to_code())",
            "import time\nprint('sleeping', flush=True)\ntime.sleep(6)\nprint('slept')",
        ]
    )
    run_preamble(nb)
    nb.run_cell(1)
    nb.wait_view(1)
    url = nb.run_cell(2).strip().split("URL ", 1)[1].strip()

    result = call(url, "demo__set_parameters", {"values": {"settings.speed": 12}})
    assert result["ok"] is True and result["applied"] is True, json.dumps(result)
    wait_for(lambda: page_speed(nb) == 12, timeout=30, what="the page to hold speed 12")  # the page itself
    kernel_side = nb.run_cell(3).strip().splitlines()
    assert kernel_side[0] == "12"
    assert kernel_side[1].startswith("# mcp: "), kernel_side  # to_code is headed by who asked
    assert 'sim.set_parameters({"settings.speed": 12})' in kernel_side

    key = nb.start_cell(4)  # the kernel's main thread sleeps for 6 s
    wait_for(lambda: "sleeping" in nb.output(4), timeout=30, what="the sleeping cell to start")
    result = call(url, "demo__set_parameters", {"values": {"settings.speed": 7}})
    still_sleeping = "slept" not in nb.output(4)
    assert result["ok"] is True, json.dumps(result)
    assert still_sleeping, "the call was answered only after the sleeping cell ended"
    assert page_speed(nb) == 7
    assert nb.wait_cell(key, 4).strip().splitlines() == ["sleeping", "slept"]
