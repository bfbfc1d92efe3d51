"""``python -m splitbrain_widget doctor [--json] [--no-smoke]``: what this machine has for each feature.

One line a check, ok / missing / note, with how to fix what is missing: Python and the package with its
optional parts; anywidget and ipykernel (and what a blocking call in a cell does on it); the notebook
front ends found; the browser the headless runtime would use (path, version, how it was found) and a
short headless smoke test of a built-in target; local model servers on their usual ports; the MCP SDK.
The headless runtime's errors point here.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform as platform_module
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

SMOKE_TARGET = "bouncer"
SMOKE_TIMEOUT_S = 20.0
MODEL_PORT_TIMEOUT_S = 0.3
# optional parts: (distribution, what needs it, how to get it)
OPTIONAL = (
    (
        "playwright",
        "the headless runtime (HeadlessTarget, sweep, record, seek on headless pages, the MCP server)",
        "pip install playwright",
    ),
    ("pydantic-ai-slim", "the agent and the chat panel", "pip install pydantic-ai-slim"),
    ("scipy", "seek", "pip install scipy"),
    ("pandas", "record, sweep and the audit as tables", "pip install pandas"),
    ("mcp", "the MCP server (python -m splitbrain_widget mcp, sb.serve_mcp)", "pip install mcp"),
    ("distributed", "sweeps on a Dask cluster", "pip install 'dask[distributed]'"),
)


@dataclass(frozen=True)
class Check:
    """One line of the report: ``status`` is "ok", "missing" or "note"."""

    name: str
    status: str
    detail: str
    fix: str = ""


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def python_check() -> Check:
    version = platform_module.python_version()
    ok = sys.version_info >= (3, 11)
    where = f"{version} at {sys.executable} on {platform_module.system() or sys.platform} {platform_module.machine()}"
    return Check("Python", "ok" if ok else "missing", where, "" if ok else "Python 3.11 or newer is needed")


def package_checks() -> list[Check]:
    checks = [Check("splitbrain-widget", "ok", _version("splitbrain-widget") or "(not installed: run from a checkout)")]
    for distribution, needs, fix in OPTIONAL:
        version = _version(distribution)
        if version:
            checks.append(Check(distribution, "ok", f"{version} ({needs})"))
        else:
            checks.append(Check(distribution, "missing", f"needed for {needs}", fix))
    return checks


def kernel_checks() -> list[Check]:
    checks = []
    anywidget = _version("anywidget")
    checks.append(
        Check(
            "anywidget",
            "ok" if anywidget else "missing",
            anywidget or "the widget needs it",
            "" if anywidget else "pip install anywidget",
        )
    )
    ipykernel = _version("ipykernel")
    if ipykernel is None:
        checks.append(Check("ipykernel", "missing", "no Jupyter kernel here", "pip install ipykernel"))
    elif _major(ipykernel) >= 7:
        checks.append(Check("ipykernel", "ok", f"{ipykernel}: a call in a cell blocks until the page answers"))
    else:
        checks.append(
            Check(
                "ipykernel",
                "note",
                f"{ipykernel}: a blocking call made in a cell answers 'deferred' (the kernel cannot hear the page "
                "while the cell runs); the change is kept and applies when the cell ends",
                "use the awaitable calls in a cell (await sim.aset_parameter(...)), or ipykernel >= 7",
            )
        )
    found = [
        f"{name} {v}"
        for name, dist in (("JupyterLab", "jupyterlab"), ("Notebook", "notebook"), ("marimo", "marimo"))
        if (v := _version(dist))
    ]
    checks.append(
        Check(
            "front ends",
            "ok" if found else "note",
            ", ".join(found) or "no JupyterLab, Notebook 7 or marimo in this environment",
            "" if found else "pip install jupyterlab (or use VS Code, Colab, JupyterHub)",
        )
    )
    return checks


def browser_checks(smoke: bool = True) -> list[Check]:
    from .hosts._browser_finder import BrowserNotFound, browser_version, find_browser, fix_hint

    try:
        found = find_browser()
    except BrowserNotFound as exc:
        return [Check("browser", "missing", str(exc).split(". To fix:")[0], fix_hint())]
    version = browser_version(found.path) or "version not reported"
    checks = [Check("browser", "ok", f"{found.path} ({version}); found: {found.how}")]
    if smoke:
        checks.append(smoke_check())
    return checks


def smoke_check() -> Check:
    """A built-in target on a headless page: ready, a set applied, its state back."""
    started = time.perf_counter()
    try:
        from .headless import HeadlessTarget

        with HeadlessTarget(SMOKE_TARGET) as sim:
            result = sim.set_parameter("speed", 12, timeout=SMOKE_TIMEOUT_S)
    except Exception as exc:  # the report says what failed; it never raises
        return Check(
            "headless smoke test", "missing", f"{type(exc).__name__}: {exc}"[:500], "see the browser line above"
        )
    took = time.perf_counter() - started
    if not result.ok:
        return Check("headless smoke test", "missing", f"{SMOKE_TARGET}: {result.error}", "see the browser line above")
    return Check("headless smoke test", "ok", f"{SMOKE_TARGET} ready and set (speed 12 m/s) in {took:.1f} s")


def model_server_checks() -> list[Check]:
    from .agent._model_setup import LOCAL_SERVERS, server_models

    checks = []
    for name, port in LOCAL_SERVERS:
        answered = server_models(f"http://127.0.0.1:{port}/v1", MODEL_PORT_TIMEOUT_S)
        if answered is None:
            checks.append(Check(f"{name} (port {port})", "note", "not running (only needed for model='local')"))
        else:
            listed = ", ".join(answered[1][:3]) or "no models"
            checks.append(Check(f"{name} (port {port})", "ok", f"answers: {listed}"))
    return checks


def run_checks(*, smoke: bool = True) -> list[Check]:
    """Every check, in the report's order."""
    return [python_check(), *package_checks(), *kernel_checks(), *browser_checks(smoke), *model_server_checks()]


def report(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        line = f"{c.name:<{width}}  {c.status:<7}  {c.detail}"
        if c.fix:
            line += f"\n{'':<{width}}  {'':<7}  fix: {c.fix}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """The command: 0 when the essentials are there (Python, the widget), 1 otherwise."""
    if any(a not in ("--json", "--no-smoke") for a in argv):
        bad = [a for a in argv if a not in ("--json", "--no-smoke")]
        sys.stderr.write(f"doctor: unknown option(s) {bad}; expected --json and/or --no-smoke\n")
        return 2
    checks = run_checks(smoke="--no-smoke" not in argv)
    essential = {"Python", "anywidget"}
    ok = all(c.status != "missing" for c in checks if c.name in essential)
    if "--json" in argv:
        payload: dict[str, Any] = {"ok": ok, "checks": [asdict(c) for c in checks]}
        sys.stdout.write(json.dumps(payload, indent=1) + "\n")
    else:
        sys.stdout.write(report(checks) + "\n")
    return 0 if ok else 1
