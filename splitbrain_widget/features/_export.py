"""A widget as a file of its own: ``sim.to_html(path)``.

One self-contained HTML file that runs the target in any browser with no kernel and no network: the
notebook view's own code (js/export/) on the widget's traits as they are now (its page, its sandbox
frame, its current values and last state), with the inspector's controls steering the page and its
observables shown. The same sandbox and policy as in a notebook; the file names no URL outside itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..core._audit import AuditLog
from ..core._to_code import replay_steps
from ..manifest.registry import Target


class Exportable(Protocol):
    """What an export reads of a widget."""

    @property
    def target(self) -> Target: ...

    @property
    def audit(self) -> AuditLog: ...

    manifest: Any
    values: Any
    state: Any
    height: Any


@dataclass(frozen=True)
class ExportedPage:
    """Where the file went and how big it is."""

    path: Path
    size: int

    def __repr__(self) -> str:
        return f"ExportedPage({str(self.path)!r}, {self.size:,} bytes)"


def page_html(widget: Exportable, *, controls: bool = True, replay: bool = True) -> str:
    """The file's text: the view's traits as the widget holds them, the inspector shown with ``controls``,
    and with ``replay`` the session's changes as steps (:func:`..core._to_code.replay_steps`)."""
    target = widget.target
    traits = view_traits(target, dict(widget.manifest), widget.values, widget.state, int(widget.height), controls)
    if replay:
        entries = widget.audit.entries()
        traits["replay"] = replay_steps(entries, target.manifest.defaults(), target.id)
    return target.export_html(traits)


def target_page_html(
    target: Target,
    values: dict[str, Any],
    state: dict[str, Any] | None = None,
    height: int = 420,
    controls: bool = True,
) -> str:
    """A target's page as a file of its own at ``values`` (a notebook's saved output, ``exporter.py``): the
    view's traits a widget of ``target`` would hold, with no session to replay."""
    return target.export_html(view_traits(target, target.view_manifest(), values, state, height, controls))


def view_traits(
    target: Target,
    manifest: dict[str, Any],
    values: Any,
    state: Any,
    height: int,
    controls: bool,
) -> dict[str, Any]:
    """The traits the exported view reads (js/export/export_page.js), as a widget's view reads them."""
    return {
        "target_id": target.id,
        "manifest": dict(manifest),
        "_html": target.html,
        "_sandbox": target.sandbox_html,
        "values": dict(values),
        "state": dict(state or {}),
        "height": height,
        "chat_enabled": controls,
        "transcript": [],
        "chat_busy": False,
        "chat_model": "",
    }


def write(widget: Exportable, path: str | Path, *, controls: bool = True, replay: bool = True) -> ExportedPage:
    """Write :func:`page_html` to ``path`` (UTF-8); its size in bytes."""
    out = Path(path)
    data = page_html(widget, controls=controls, replay=replay).encode("utf-8")
    out.write_bytes(data)
    return ExportedPage(out, len(data))
