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

from ..core._runtime_files import register_pre_save, widget_outputs
from . import _picture_cache

log = logging.getLogger("splitbrain_widget.save_pictures")


def add_pictures(model: dict[str, Any] | None = None, **_kwargs: Any) -> None:
    """``ContentsManager.pre_save_hook``: put the kept pictures into ``model``'s widget outputs."""
    try:
        if not isinstance(model, dict) or model.get("type") != "notebook":
            return
        content = model.get("content")
        if not isinstance(content, dict):
            return
        for data, model_id in widget_outputs(content):
            kept = _picture_cache.read(model_id)
            if kept:
                data.update(kept)
    except Exception:  # a save must never fail for a picture
        log.exception("splitbrain_widget: the pictures of a notebook's widgets were not saved")


def register(serverapp: Any) -> bool:
    """Register :func:`add_pictures` on the server's contents manager; whether it could be."""
    return register_pre_save(serverapp, add_pictures)
