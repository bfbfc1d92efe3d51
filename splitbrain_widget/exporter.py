"""``jupyter nbconvert --to splitbrain``: a notebook as HTML whose simulations run.

Each output of a :class:`~splitbrain_widget.TargetWidget` becomes its simulation, live and steerable
with the inspector's controls, at the values it was saved with, with no kernel and no network: the
page of ``sim.to_html()`` (``features/_export.py``) in a sandboxed frame of the output. The rest of
the notebook is nbconvert's HTML. Where a page cannot be made (a target this Python does not find), the
output's picture stays (``features/_pictures.py``), and the exporter says why on stderr.

The values come from the notebook's saved widget state where it has the widget's (JupyterLab's "save
widget state", nbclient's ``--execute``), else from the output itself (``SIMULATION_MIME``). Also
``python -m splitbrain_widget export notebook.ipynb [-o out.html]``.
"""

from __future__ import annotations

import copy
import html
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from .features._export import target_page_html
from .features._pictures import SIMULATION_MIME
from .manifest import ManifestError, ParameterError
from .manifest.registry import TargetError, load_target

log = logging.getLogger("splitbrain_widget.exporter")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PAGE_ATTR = "data-splitbrain-page"  # marks each output's page frame (tests find them by it)
STATUS_BAR_PX = 48  # the exported view's status bar under the page


@dataclass(frozen=True)
class OutputPage:
    """What became of one widget output: its target, and the page's size, or why there is none."""

    cell: int
    target: str
    size: int = 0
    why_not: str = ""


class LivePages(Preprocessor):
    """The preprocessor that makes the pages: the last one, so after ``--execute`` has run the notebook."""

    controls = Bool(True, help="Show the inspector's controls beside each simulation.").tag(config=True)

    def preprocess(self, nb: Any, resources: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        folder = (resources or {}).get("metadata", {}).get("path") or "."
        pages = live_pages(nb, Path(folder), controls=self.controls)
        for page in pages:
            if page.why_not:
                log.warning("cell %d: %s stays a picture: %s", page.cell, page.target, page.why_not)
        resources["splitbrain_pages"] = pages
        return nb, resources


class SplitbrainExporter(HTMLExporter):
    """nbconvert's HTML with every TargetWidget output replaced by its live simulation."""

    export_from_notebook = "HTML with live simulations"
    controls = Bool(True, help="Show the inspector's controls beside each simulation.").tag(config=True)

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)  # type: ignore[no-untyped-call]
        self.pages: list[OutputPage] = []
        self._live = LivePages(parent=self, controls=self.controls)  # type: ignore[no-untyped-call]
        self.register_preprocessor(self._live, enabled=True)  # type: ignore[no-untyped-call]

    def from_notebook_node(self, nb: Any, resources: dict[str, Any] | None = None, **kw: Any) -> Any:
        self._live.controls = self.controls
        output, out_resources = super().from_notebook_node(copy.deepcopy(nb), resources, **kw)
        self.pages = out_resources.get("splitbrain_pages", [])
        return output, out_resources


def live_pages(nb: Any, folder: Path, *, controls: bool = True) -> list[OutputPage]:
    """Replace each widget output of ``nb`` by its live page, in place; what became of each."""
    state = ((nb.get("metadata") or {}).get("widgets") or {}).get(WIDGET_STATE, {}).get("state", {})
    done: list[OutputPage] = []
    for index, cell in enumerate(nb.get("cells", [])):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") or {}
            saved = _simulation(data, state)
            if saved is None:
                continue
            page = _page(saved, folder, controls)
            if isinstance(page, str):
                done.append(OutputPage(index, str(saved.get("target")), why_not=page))
                data.pop(WIDGET_VIEW, None)  # a view no page can show: the picture instead
                continue
            title, text = page
            height = int(saved.get("height") or 420) + STATUS_BAR_PX
            output["data"] = {
                "text/html": (
                    f'<iframe {PAGE_ATTR} sandbox="allow-scripts" title="{html.escape(title)}" '
                    f'style="width: 100%; height: {height}px; border: 0" srcdoc="{html.escape(text)}"></iframe>'
                ),
                "text/plain": data.get("text/plain", title),
            }
            done.append(OutputPage(index, str(saved.get("target")), size=len(text)))
    return done


def _simulation(data: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | None:
    """The simulation an output shows: its own record (updated after each cell where the notebook ran
    headless), else the saved widget state's (an output of a version without the record); None for any
    other output. The saved state is not preferred: nbclient keeps what reached it, which may be older."""
    own = data.get(SIMULATION_MIME)
    if isinstance(own, dict):
        return dict(own)
    view = data.get(WIDGET_VIEW)
    model = state.get(str(view.get("model_id"))) if isinstance(view, dict) else None
    traits = model.get("state", {}) if isinstance(model, dict) else {}
    if not isinstance(traits, dict) or not isinstance(traits.get("target_id"), str):
        return None
    return {"target": traits["target_id"], "values": traits.get("values") or {}, "height": traits.get("height")}


def _page(saved: dict[str, Any], folder: Path, controls: bool) -> tuple[str, str] | str:
    """The page's title and HTML, or why none could be made."""
    target_id = saved.get("target")
    if not isinstance(target_id, str):
        return "the output names no target"
    dirs = [folder / d for d in saved.get("targets_dirs") or [] if isinstance(d, str)]
    try:
        target = load_target(target_id, *dirs)
        values = target.manifest.coerce_many(dict(saved.get("values") or {}), allow_readonly=True)
        height = int(saved.get("height") or 420)
        return target.title, target_page_html(target, {**target.manifest.defaults(), **values}, None, height, controls)
    except (TargetError, ManifestError, ParameterError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"


def main(argv: list[str]) -> int:
    """``python -m splitbrain_widget export NOTEBOOK [-o OUT] [--no-controls]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m splitbrain_widget export",
        description="Write a notebook as HTML whose simulations run (no kernel, no network).",
    )
    parser.add_argument("notebook", help="the .ipynb file")
    parser.add_argument("-o", "--output", help="where the HTML goes (default: beside the notebook, .html)")
    parser.add_argument("--no-controls", action="store_true", help="the simulations without the inspector")
    args = parser.parse_args(argv)
    source = Path(args.notebook)
    if not source.is_file():
        parser.error(f"{source}: no such notebook")
    done = export_notebook(source, args.output, controls=not args.no_controls)
    live = sum(1 for p in done.pages if not p.why_not)
    print(f"wrote {done.path} ({done.size:,} bytes): {live} live simulation(s), {len(done.pages) - live} picture(s)")
    return 0


@dataclass(frozen=True)
class ExportedNotebook:
    """Where the HTML went, its size in bytes, and what became of each widget output."""

    path: Path
    size: int
    pages: list[OutputPage]


def export_notebook(path: str | Path, out: str | Path | None = None, *, controls: bool = True) -> ExportedNotebook:
    """Write ``path`` (a .ipynb) as HTML with live simulations to ``out`` (default: beside it, .html)."""
    import nbformat

    source = Path(path)
    target = Path(out) if out is not None else source.with_suffix(".html")
    nb = nbformat.read(source, as_version=4)  # type: ignore[no-untyped-call]
    exporter = SplitbrainExporter(controls=controls)
    body, _resources = exporter.from_notebook_node(nb, {"metadata": {"path": str(source.parent), "name": source.stem}})
    data = body.encode("utf-8")
    target.write_bytes(data)
    return ExportedNotebook(target, len(data), exporter.pages)
