"""Where the package runs, and what a feature needs that a place may lack.

In the browser (JupyterLite's Pyodide kernel, ``sys.platform == "emscripten"``) Python has one
thread and no subprocesses, and the kernel hands a widget's messages to Python only when no cell
runs (measured: an awaited cell never hears its page). So a call made in a cell, blocking or awaited,
is answered as ``deferred`` (sent and kept; the page's state arrives after the cell), while the
chat panel's answer, a task of its own on the kernel's loop (:func:`in_background`), waits for the
page as on a computer. The features built on threads or processes (the headless runtime, Dask, the
MCP server, the ``seek`` and ``record`` engines) say they are not available there. scipy, pandas
and PyYAML are installed with the package everywhere but there (no WebAssembly wheels on PyPI): a
feature that needs one says which and how to add it.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import sys
import threading
from collections.abc import Callable, Coroutine
from types import ModuleType
from typing import Any

# module -> (the distribution to install, what it is for)
OPTIONAL = {
    "scipy": ("scipy", "seek (its root finder)"),
    "pandas": ("pandas", "tables (record, sweep, the audit and lesson logs)"),
    "yaml": ("pyyaml", "skills' YAML front matter beyond its simple form"),
}


class NotInBrowser(RuntimeError):
    """A feature that needs a thread or a process, which the browser's Python does not have."""


class MissingDependency(ImportError):
    """A feature needs a package that is not installed here; the message says which and how to add it."""


def in_browser() -> bool:
    """Whether this Python runs in the browser (Pyodide: JupyterLite, a browser-only notebook)."""
    return sys.platform == "emscripten"


_BACKGROUND: contextvars.ContextVar[bool] = contextvars.ContextVar("splitbrain_background", default=False)


def in_background() -> bool:
    """Whether this code runs in a task of the package's own that no cell waits for (the chat panel's
    answer in the browser): the page's messages reach it while it awaits."""
    return _BACKGROUND.get()


def background_context() -> contextvars.Context:
    """A copy of this context marked :func:`in_background`, for such a task."""
    context = contextvars.copy_context()
    context.run(_BACKGROUND.set, True)
    return context


_KEPT: set[asyncio.Future[None]] = set()  # a loop keeps only a weak reference to a task


def start_background(
    name: str, run: Callable[[], None], arun: Callable[[], Coroutine[Any, Any, None]]
) -> threading.Thread | asyncio.Future[None]:
    """Start work that no cell waits for: ``run`` on a daemon thread called ``name`` on a computer;
    in the browser (one thread) ``arun()`` as a task on the kernel's loop, marked :func:`in_background`
    and kept until it ends."""
    if in_browser():
        task = asyncio.get_event_loop().create_task(arun(), context=background_context())
        _KEPT.add(task)
        task.add_done_callback(_KEPT.discard)
        return task
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def desktop_only(feature: str, instead: str = "") -> None:
    """Raise :class:`NotInBrowser` for ``feature`` in the browser (``instead``: what to use there)."""
    if in_browser():
        also = f"; {instead}" if instead else ""
        raise NotInBrowser(
            f"{feature} is not available in the browser (JupyterLite's Python has no threads or processes)"
            f"{also}. It works in a notebook on a computer (Jupyter, VS Code, Colab)."
        )


def install_hint(distribution: str) -> str:
    """How to add ``distribution`` here: micropip in the browser, pip elsewhere."""
    if in_browser():
        return f"run `%pip install {distribution}` in a cell (JupyterLite installs it from Pyodide's packages)"
    return f"`pip install {distribution}`"


def need(module: str, feature: str | None = None) -> ModuleType:
    """``module`` imported, or :class:`MissingDependency` naming it, what needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is there and one of its own imports is not: not ours to explain
        distribution, purpose = OPTIONAL.get(module.split(".")[0], (module.split(".")[0], ""))
        what = feature or purpose or "this"
        raise MissingDependency(
            f"{what} needs {distribution}, which is not installed here: {install_hint(distribution)}"
        ) from None
