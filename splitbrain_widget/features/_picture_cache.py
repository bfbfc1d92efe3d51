"""Where a kernel leaves each widget's last picture for the notebook server to write into the saved outputs.

A frontend re-renders a widget output whose data changes (the page would restart), so a live
notebook's picture cannot be updated in place from the kernel. The view sends its picture to the
kernel instead (protocol 1.8, ``picture``), the kernel writes what the widget's outputs should carry
here, one file per widget, and the notebook server's pre-save hook (``features/_save_pictures.py``) puts it into
every output of that widget when the notebook is saved. The folder is the Jupyter runtime directory's,
which a notebook server and the kernels it starts share on one machine.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from ..core._runtime_files import widget_file
from ..protocol import MAX_PICTURE_BASE64

log = logging.getLogger("splitbrain_widget.pictures")

DIR_NAME = "splitbrain-pictures"
MAX_FILE_CHARS = 2 * MAX_PICTURE_BASE64 + 256 * 1024  # the PNG twice (image/png and the <img>), words, record
KEEP_S = 7 * 24 * 3600  # a file older than this is a gone kernel's: removed when another is written
KEEP_FILES = 100  # at most this many widgets' pictures are kept, the newest
KEYS = ("image/png", "text/html", "application/vnd.splitbrain.simulation+json")


def _path(model_id: str) -> Path | None:
    return widget_file(DIR_NAME, model_id, ".json")


def write(model_id: str, data: dict[str, Any]) -> Path | None:
    """Keep ``data`` (the mimetypes of :data:`KEYS`) for the outputs of widget ``model_id``; atomic."""
    path = _path(model_id)
    if path is None:
        return None
    text = json.dumps({k: data[k] for k in KEYS if k in data}, separators=(",", ":"))
    if len(text) > MAX_FILE_CHARS:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
        _prune(path.parent)
    except OSError as exc:
        log.info("the picture of widget %s was not kept for the saved notebook: %s", model_id, exc)
        return None
    return path


def read(model_id: str) -> dict[str, Any] | None:
    """What the outputs of widget ``model_id`` should carry, or None (no file, too big, not ours)."""
    path = _path(model_id)
    try:
        if path is None or path.stat().st_size > MAX_FILE_CHARS:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {k: data[k] for k in KEYS if k in data}


def remove(model_id: str) -> None:
    path = _path(model_id)
    if path is not None:
        path.unlink(missing_ok=True)


def _prune(where: Path) -> None:
    """Remove the files older than KEEP_S, and all but the newest KEEP_FILES."""
    old = time.time() - KEEP_S
    dated: list[tuple[float, Path]] = []
    for entry in where.glob("*.json"):
        try:
            dated.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    dated.sort(reverse=True)
    for n, (mtime, entry) in enumerate(dated):
        if mtime < old or n >= KEEP_FILES:
            entry.unlink(missing_ok=True)
