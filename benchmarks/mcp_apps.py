"""What a call costs when the page runs in the chat's own view (MCP Apps), beside a headless page.

One MCP server serves the projectile twice: as an App widget (``app_target``: its page runs in the view
the chat host renders, and the view's long poll brings each request) and as a ``HeadlessTarget`` (a
page of the server's own Chromium). The chat host is ext-apps' AppBridge with the official MCP client
in a page of headless Chromium (tests/mcp_clients/apps_host.mjs); it renders one view, then makes the
same ``set_parameters`` call on each widget in alternating rounds, timed in the page (what a chat
waits for). The difference is the App path's cost: the view's long poll answering, the view's own
relay, and its reply coming back as one more tool call through the host.
``python -m benchmarks mcp_apps``; ``run(smoke=True)``: a few calls (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ._stats import summary

CALLS = 100  # timed per widget, after the warm-up
WARMUP = 10
SMOKE_CALLS, SMOKE_WARMUP = 5, 2


def run(*, smoke: bool = False) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    import splitbrain_widget as sb
    from splitbrain_widget.mcp import app_target
    from tests.browser_env import CHROMIUM_ARGS, chromium_path
    from tests.browser_targets.host import apps_host_site

    calls, warmup = (SMOKE_CALLS, SMOKE_WARMUP) if smoke else (CALLS, WARMUP)
    app = app_target("projectile")
    page_home = sb.HeadlessTarget("projectile")
    app_ms: list[float] = []
    headless_ms: list[float] = []
    with tempfile.TemporaryDirectory() as folder, apps_host_site(Path(folder)) as origin:
        server = sb.serve_mcp(app, page_home, origins=[origin])
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.goto(f"{origin}/index.html")
                page.wait_for_function("() => window.appsHost !== undefined")
                page.evaluate("([u, t]) => appsHost.connect(u, t)", [server.url, server.token])
                first = page.evaluate("appsHost.call('projectile__set_parameters', {values: {'launch.angle': 40}})")
                assert first["result"]["structuredContent"]["ok"], first
                for i in range(warmup + calls):
                    values = {"values": {"launch.angle": 30 + i % 20}}
                    for tool, into in (
                        ("projectile__set_parameters", app_ms),
                        ("projectile_2__set_parameters", headless_ms),
                    ):
                        out = page.evaluate("([n, a]) => appsHost.timed(n, a)", [tool, values])
                        assert out["ok"], (tool, out)
                        if i >= warmup:
                            into.append(out["ms"])
                browser.close()
        finally:
            server.stop()
            app.close()
            page_home.close()
    app_fig, headless_fig = summary(app_ms), summary(headless_ms)
    ratio = round(app_fig["median"] / headless_fig["median"], 2)
    print(
        f"set_parameters from a chat host (ext-apps AppBridge + SDK client): App view median {app_fig['median']} ms "
        f"(p95 {app_fig['p95']}), headless page median {headless_fig['median']} ms (p95 {headless_fig['p95']}): "
        f"{ratio}x (n={app_fig['n']}, alternating)"
    )
    return {"mcp_apps": {"calls": calls, "app_ms": app_fig, "headless_ms": headless_fig, "app_over_headless": ratio}}


if __name__ == "__main__":
    run()
