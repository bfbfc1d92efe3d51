"""splitbrain-widget: steer live browser-side simulations from a Jupyter notebook in plain language.

``TargetWidget`` shows a target page in a notebook cell and exposes its parameters as tools;
the manifest (``Manifest``) is the contract the page, the Python API and the model all read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Not behind __getattr__: the function shares its module's name, and a lazy attribute would be
# replaced by the module the moment anything imported splitbrain_widget.sweep. The module itself is
# light (the manifest, pandas and tqdm come with a sweep's run, dask only with a client).
from .sweep import sweep

if TYPE_CHECKING:
    from .agent import Agent, AgentResult, Skill, SkillError
    from .core._lesson import LessonError, LessonRefused, lesson
    from .core._lesson_log import lesson_log
    from .core._page_truth import PageValueWarning
    from .core._picture import Picture, SnapshotError
    from .headless import HeadlessTarget
    from .manifest import Manifest, ManifestError, Observable, Parameter, ParameterError
    from .manifest.registry import Target, TargetError, TargetInfo, list_targets, load_target
    from .mcp import serve_mcp
    from .protocol import PROTOCOL_VERSION, ErrorInfo, ToolResult
    from .widget import TargetWidget

__version__ = "0.1.0"

__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentResult",
    "ErrorInfo",
    "HeadlessTarget",
    "LessonError",
    "LessonRefused",
    "Manifest",
    "ManifestError",
    "Observable",
    "PageValueWarning",
    "Parameter",
    "ParameterError",
    "Picture",
    "Skill",
    "SkillError",
    "SnapshotError",
    "Target",
    "TargetError",
    "TargetInfo",
    "TargetWidget",
    "ToolResult",
    "lesson",
    "lesson_log",
    "list_targets",
    "load_target",
    "serve_mcp",
    "sweep",
]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Jupyter server extension: TCP_NODELAY on kernel websockets (see ``_server_extension``)."""
    return [{"module": "splitbrain_widget._server_extension"}]


# Where each lazily imported public name lives: ``import splitbrain_widget`` builds no pydantic
# model and loads no widget, agent, pint, pandas or playwright (benchmarks/costs.py measures it).
_LAZY = {
    **dict.fromkeys(("Manifest", "ManifestError", "Observable", "Parameter", "ParameterError"), "manifest"),
    **dict.fromkeys(("Target", "TargetError", "TargetInfo", "list_targets", "load_target"), "manifest.registry"),
    **dict.fromkeys(("PROTOCOL_VERSION", "ErrorInfo", "ToolResult"), "protocol"),
    **dict.fromkeys(("Picture", "SnapshotError"), "core._picture"),
    "PageValueWarning": "core._page_truth",
    "LessonError": "core._lesson",
    "LessonRefused": "core._lesson",
    "lesson": "core._lesson",
    "lesson_log": "core._lesson_log",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # once: later lookups find it without this hook
        return value
    # The widget pulls in anywidget and ipywidgets: import it only when asked for.
    if name == "TargetWidget":
        from .widget import TargetWidget

        return TargetWidget
    if name == "HeadlessTarget":
        from .headless import HeadlessTarget

        return HeadlessTarget
    if name == "serve_mcp":
        from .mcp import serve_mcp

        return serve_mcp
    if name in ("Agent", "AgentResult", "Skill", "SkillError"):
        from . import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'splitbrain_widget' has no attribute {name!r}")
