"""Fixtures of the real-browser layer: one Jupyter server per app, one Chromium, a page per test.

Every test under tests/browser is marked ``browser``. Without Chromium or the playwright package
the tests skip with a message; with ``SPLITBRAIN_REQUIRE_BROWSER=1`` (CI) they fail instead.
Artifacts of a failed test (screenshot, console log, server log) go to ``test-artifacts/<test>/``
(of every test with ``SPLITBRAIN_BROWSER_ARTIFACTS=always``). ``SPLITBRAIN_WS_TRACE=1`` logs every
kernel websocket message of the page to its console log, as a timeline (see ``WS_TRACE_SCRIPT``).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..browser_env import CHROMIUM_ARGS, chromium_path, require_browser
from .harness import (
    APPS,
    ROOT,
    TIMINGS,
    WS_TRACE_SCRIPT,
    ConsoleLog,
    JupyterServer,
    NotebookPage,
    record_timing,
    save_artifacts,
)

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("browser timings")
    for app, what, seconds in TIMINGS:
        terminalreporter.write_line(f"{app:<9} {what:<40} {seconds:6.2f} s")


@pytest.fixture(autouse=True)
def _browser_available() -> None:
    require_browser()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session", params=APPS)
def server(request: pytest.FixtureRequest) -> Iterator[JupyterServer]:
    """A JupyterLab or Notebook 7 server (``request.param``: "lab" or "notebook"), one per session.

    Session-scoped and parametrized: pytest groups the tests by app and keeps one server alive at
    a time, which is what a 2-core machine wants.
    """
    require_browser()
    app, _, release = str(request.param).partition("-ipykernel-")
    kernel_python = sys.executable
    if release:  # "lab-ipykernel-6.29.5": JupyterLab whose kernels run make kernel-matrix's venv of that release
        kernel_python = str(ROOT / f".venv-ipykernel-{release}" / "bin" / "python")
        if not Path(kernel_python).exists():
            pytest.skip(f"no {kernel_python}: `make kernel-matrix` makes the venv of ipykernel {release}")
    base = Path(tempfile.mkdtemp(prefix=f"sb-browser-{request.param}-"))
    srv = JupyterServer(app, base, kernel_python=kernel_python)
    srv.start()
    record_timing(request.param, "server start", srv.started_in_s)
    try:
        yield srv
    finally:
        srv.stop()
        if os.environ.get("SPLITBRAIN_KEEP_BROWSER_TMP") != "1":
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def page(browser: Any, server: JupyterServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context and page; on failure its screenshot and logs are saved."""
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    context.set_default_timeout(30_000)
    if os.environ.get("SPLITBRAIN_WS_TRACE") == "1":
        context.add_init_script(WS_TRACE_SCRIPT)
    pg = context.new_page()
    console = ConsoleLog()
    console.attach(pg)
    pg._sb_console = console  # for tests that inspect the console
    pg._sb_notebooks = []  # notebooks opened by open_notebook: their kernels are shut down last
    log_from = server.log_offset()
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is None or rep.failed or os.environ.get("SPLITBRAIN_BROWSER_ARTIFACTS") == "always":
            folder = save_artifacts(request.node.nodeid, pg, console, server, log_from)
            print(f"\nartifacts of {request.node.nodeid}: {folder}")
        context.close()
        for name in pg._sb_notebooks:
            server.shutdown_sessions(name)
    if rep is not None and rep.passed and console.csp_violations():
        pytest.fail("Content-Security-Policy violations in the page:\n" + "\n".join(console.csp_violations()))


@pytest.fixture
def open_notebook(page: Any, server: JupyterServer) -> Any:
    """``open_notebook(cells) -> NotebookPage``: write a fresh notebook with these cells and open it.

    Its kernel is shut down when the page fixture ends (after any failure artifacts were saved).
    """

    def _open(cells: list[str]) -> NotebookPage:
        name = f"t{int(time.time() * 1000) % 10**9}-{len(page._sb_notebooks)}.ipynb"
        server.write_notebook(name, cells)
        page._sb_notebooks.append(name)
        nb = NotebookPage(page, server, name, cells).open()
        record_timing(server.app, "open to idle kernel", nb.timings["open_to_kernel_idle_s"])
        return nb

    return _open


@pytest.fixture
def offline_page(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A page whose every request but the file itself is refused; the refused ones are listed."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    refused: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    page.route("**/*", route)
    try:
        yield page, refused
    finally:
        context.close()


@pytest.fixture
def targets_dir(tmp_path: Path) -> Path:
    """A folder of test targets: copies of the fixtures plus the hostile / never-ready / gated pages."""
    from . import targets as test_targets

    folder = tmp_path / "targets"
    test_targets.write_all(folder)
    return folder
