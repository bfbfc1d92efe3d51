"""What a kernel leaves for its notebook server, one file per widget, and how the server finds it.

A kernel cannot write the notebook a frontend holds; the notebook server writes it when it is saved.
So a kernel leaves a widget's share (its picture: ``features/_picture_cache.py``; its lesson records:
``core/_lesson_notebook.py``) in a folder of the Jupyter runtime directory, which a server and the
kernels it starts share on one machine, named by the widget's model id; the server's pre-save hooks
find the widgets a notebook shows by the model ids in its outputs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_MODEL_ID = re.compile(r"^[0-9A-Za-z_-]{1,64}$")


def folder(name: str) -> Path | None:
    """The runtime directory's folder ``name``, or None where there is no Jupyter (a plain script)."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return None
    return Path(jupyter_runtime_dir()) / name


def widget_file(name: str, model_id: str, suffix: str) -> Path | None:
    """Widget ``model_id``'s file in folder ``name``; None where the id is no plain name (never a path)."""
    where = folder(name)
    return where / f"{model_id}{suffix}" if where is not None and _MODEL_ID.match(model_id) else None


def widget_outputs(content: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each widget output of a notebook's content: (its data, the widget's model id)."""
    for cell in content.get("cells") or []:
        for output in (cell.get("outputs") or []) if isinstance(cell, dict) else []:
            data = output.get("data") if isinstance(output, dict) else None
            view = data.get(WIDGET_VIEW) if isinstance(data, dict) else None
            model_id = view.get("model_id") if isinstance(view, dict) else None
            if isinstance(data, dict) and isinstance(model_id, str):
                yield data, model_id


def register_pre_save(serverapp: Any, hook: Callable[..., None]) -> bool:
    """Register ``hook`` on the server's contents manager; whether it could be."""
    manager = getattr(serverapp, "contents_manager", None)
    if manager is None or not hasattr(manager, "register_pre_save_hook"):
        return False
    manager.register_pre_save_hook(hook)
    return True
