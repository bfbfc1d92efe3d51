"""The notebook server's pre-save hook: every widget output gets its widget's last picture.

For each output of a notebook being saved whose widget view names a widget the kernel kept a picture
for (``features/_picture_cache.py``), the output's ``image/png``, ``text/html`` (an ``<img>`` with the
page in words) and simulation record are set to the kernel's. Registered by the package's server
extension (``_server_extension.py``); ``SPLITBRAIN_SNAPSHOTS=0`` in the server's environment turns it
off. A failure here never stops a save.
"""

from __future__ import annotations

import logging
from typing import Any

from . import _picture_cache

log = logging.getLogger("splitbrain_widget.save_pictures")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def add_pictures(model: dict[str, Any] | None = None, **_kwargs: Any) -> None:
    """``ContentsManager.pre_save_hook``: put the kept pictures into ``model``'s widget outputs."""
    try:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        content = model.get("content")
        if not isinstance(content, dict):
            return
        for cell in content.get("cells") or []:
            for output in (cell.get("outputs") or []) if isinstance(cell, dict) else []:
                data = output.get("data") if isinstance(output, dict) else None
                view = data.get(WIDGET_VIEW) if isinstance(data, dict) else None
                model_id = view.get("model_id") if isinstance(view, dict) else None
                kept = _picture_cache.read(model_id) if isinstance(model_id, str) else None
                if kept:
                    data.update(kept)  # type: ignore[union-attr]
    except Exception:  # a save must never fail for a picture
        log.exception("splitbrain_widget: the pictures of a notebook's widgets were not saved")


def register(serverapp: Any) -> bool:
    """Register :func:`add_pictures` on the server's contents manager; whether it could be."""
    manager = getattr(serverapp, "contents_manager", None)
    if manager is None or not hasattr(manager, "register_pre_save_hook"):
        return False
    manager.register_pre_save_hook(add_pictures)
    return True
