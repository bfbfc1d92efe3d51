"""A picture in every output of a widget (#42): ``image/png`` and ``text/html`` beside the widget view.

Frontends that render widgets show the live view; the others show the richest of the rest:
nbconvert's HTML and PDF, GitHub, nbviewer, a course site built from notebooks. The ``text/html``
is an ``<img>`` whose ``alt`` is the simulation in words (:meth:`TargetWidget.describe`).

Where a runner executes the notebook (``jupyter nbconvert --execute``, papermill, nbval, an
autograder: a client that takes no input, ``core/_runner.py``) and the widget runs its calls on its
headless page (``SPLITBRAIN_HEADLESS=1``), each display is the page's picture, its words and its
record, without the widget view: no runner renders one, and the view is what every reader of the
saved notebook would be shown instead of the picture (nbconvert's HTML prefers a widget view whose
state nbclient saved, and draws it with a widget manager from a CDN: an empty box offline).
After every cell that called the widget its displays are updated in place, by display id, so the
notebook keeps each simulation as it last was. A person's notebook (JupyterLab, Notebook 7, VS Code)
is never given these displays, even under ``SPLITBRAIN_HEADLESS=1``: its output is the widget view,
which the frontend would re-render (and the page restart) if the output's data changed.

``snapshots=False`` on the widget, or ``SPLITBRAIN_SNAPSHOTS=0`` for the package, keeps outputs
to the widget view and its line of text.
"""

from __future__ import annotations

import html
import logging
import os
import uuid
import weakref
from typing import TYPE_CHECKING, Any

from ..core._picture import Picture, PictureError, SnapshotError, picture_from
from ..core._runner import cell_from_a_runner
from ..core._runtime_files import WIDGET_VIEW
from ..protocol import PictureData
from . import _picture_cache

if TYPE_CHECKING:
    from ..widget import TargetWidget

log = logging.getLogger("splitbrain_widget.pictures")

ENV_SNAPSHOTS = "SPLITBRAIN_SNAPSHOTS"
# The simulation an output shows, for an exporter to make it a live page (``exporter.py``): the target,
# where it was looked for, the values and the view's height.
SIMULATION_MIME = "application/vnd.splitbrain.simulation+json"
PICTURE_TIMEOUT_S = 10.0  # one picture's deadline: a headless page starting on a busy machine
_WITH_DISPLAYS: weakref.WeakSet[OutputPictures] = weakref.WeakSet()
_HOOKED = False


def snapshots_default() -> bool:
    """The package-wide setting: on unless ``SPLITBRAIN_SNAPSHOTS`` is ``0`` (or ``false``, ``no``, ``off``)."""
    return os.environ.get(ENV_SNAPSHOTS, "1").strip().lower() not in ("0", "false", "no", "off")


def simulation_data(widget: TargetWidget) -> dict[str, Any]:
    """What :data:`SIMULATION_MIME` carries for ``widget`` now."""
    return {
        "version": 1,
        "target": widget.target_id,
        "targets_dirs": [str(d) for d in widget.targets_dirs],
        "values": dict(widget.values),
        "height": int(widget.height),
    }


def picture_bundle(picture: Picture) -> dict[str, str]:
    """The mimetypes a picture adds to an output: the PNG, and an ``<img>`` with its words as ``alt``."""
    encoded = picture.base64()
    tag = (
        f'<img src="data:image/png;base64,{encoded}" width="{picture.width}" height="{picture.height}" '
        f'alt="{html.escape(picture.alt, quote=True)}" style="max-width: 100%; height: auto">'
    )
    return {"image/png": encoded, "text/html": tag}


class OutputPictures:
    """One widget's pictures in its outputs: the last picture, the display ids it was shown under."""

    def __init__(self, widget: TargetWidget, enabled: bool) -> None:
        self._widget = weakref.ref(widget)
        self.enabled = enabled
        self.picture: Picture | None = None
        self.display_ids: list[str] = []
        self._shown_as: dict[str, str] = {}  # each display's line of text, as it was when it was made
        self._calls_at_picture = -1  # how many calls the audit held when the picture was taken
        self._notebook_view_seen = False

    def for_a_runner(self) -> bool:
        """Whether this display is a runner's of a widget on its headless page with no notebook view:
        the only case where the kernel gives a display its picture instead of the view, and updates it."""
        return self.enabled and self.headless_only() and cell_from_a_runner()

    def headless_only(self) -> bool:
        """Whether the widget's calls run on its headless page and no notebook view was ever shown:
        the only case where a display is given a picture by the kernel and updated in place."""
        widget = self._widget()
        if widget is None or widget._fallback is None:
            return False
        if widget.notebook_views > 0:
            self._notebook_view_seen = True
        return not self._notebook_view_seen

    def take(self) -> Picture | None:
        """A fresh picture from the headless page, or None (and why, in the log) when none could be had."""
        widget = self._widget()
        if widget is None or not self.enabled or not self.headless_only():
            return None
        calls = len(widget.audit)
        try:
            result = widget._ops.run_blocking("snapshot", {}, widget._ops.snapshot(PICTURE_TIMEOUT_S), audit=False)
            self.picture = widget._picture(result)
        except SnapshotError as exc:
            log.info("no picture for the output of %r: %s", widget.target_id, exc)
            return None
        self._calls_at_picture = calls
        return self.picture

    def from_view(self, data: PictureData) -> None:
        """A notebook view's picture of its page: kept, and left for the notebook server to write into
        the widget's outputs when the notebook is saved (``_picture_cache.py``)."""
        widget = self._widget()
        if widget is None or not self.enabled:
            return
        try:
            picture = picture_from(data, alt=widget.describe())
        except PictureError as exc:
            log.info("a view's picture of %r was refused: %s", widget.target_id, exc)
            return
        self.keep(picture)

    def keep(self, picture: Picture) -> None:
        """A picture of the page as it is now (a view's, or ``sim.snapshot()``'s): the output's picture
        from here on; where a notebook view shows the widget, left for the notebook server to write
        into its outputs when the notebook is saved. (A runner's displays are updated after the cell,
        by :meth:`after_cell`.)"""
        widget = self._widget()
        if widget is None or not self.enabled:
            return
        self.picture = picture
        if self.headless_only():  # no notebook view: no notebook server saves its outputs
            return
        bundle = widget._output_bundle()
        if bundle is not None:
            _picture_cache.write(widget._comm_id, bundle[0])

    def forget(self) -> None:
        """The widget was closed: its kept picture goes."""
        widget = self._widget()
        if widget is not None:
            _picture_cache.remove(widget._comm_id)

    def bundle(self) -> dict[str, str]:
        """What the last picture adds to an output's bundle (nothing without one, or when off)."""
        if not self.enabled or self.picture is None:
            return {}
        return picture_bundle(self.picture)

    def new_display(self, text: str) -> str:
        """A display id for one more output of the widget (``text``: its line of text, which stays as it
        was: it names the views of the moment); the outputs are updated after each cell."""
        display_id = uuid.uuid4().hex
        self.display_ids.append(display_id)
        self._shown_as[display_id] = text
        _WITH_DISPLAYS.add(self)
        _hook_cells()
        return display_id

    def after_cell(self) -> None:
        """After a cell: if the widget was called since its picture, update its outputs in place."""
        widget = self._widget()
        if widget is None or not self.display_ids or len(widget.audit) == self._calls_at_picture:
            return
        if self.take() is None:  # off, a notebook view was shown, or no picture could be had
            return
        from IPython.display import update_display

        bundle = widget._output_bundle()
        if bundle is None:
            return
        data, metadata = bundle
        for display_id in self.display_ids:
            shown = {**data, "text/plain": self._shown_as.get(display_id, data.get("text/plain", ""))}
            update_display(runner_data(shown), metadata=metadata, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]


def runner_data(data: dict[str, Any]) -> dict[str, Any]:
    """A runner's output of a widget: its bundle without the widget view where it has a picture
    (without one the view stays: a frontend may still rebuild it from the saved widget state)."""
    if "image/png" not in data:
        return data
    return {key: value for key, value in data.items() if key != WIDGET_VIEW}


def _after_cell(*_args: Any) -> None:
    for pictures in list(_WITH_DISPLAYS):
        try:
            pictures.after_cell()
        except Exception:  # a picture must never break the notebook's run
            log.exception("updating the pictures of a widget's outputs failed")


def _hook_cells() -> None:
    """Run :func:`_after_cell` after every cell of this IPython kernel (once)."""
    global _HOOKED
    if _HOOKED:
        return
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    shell.events.register("post_run_cell", _after_cell)
    _HOOKED = True
