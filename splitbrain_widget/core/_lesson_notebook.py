"""The lesson log in the saved notebook: ``metadata.splitbrain.lesson_log``, where the policy's
``[log] notebook = true`` says.

The kernel cannot write a notebook's metadata; the notebook server writes the file. So each record
the kernel logs for a widget (:func:`keep`) also goes to a file of that widget's in the Jupyter
runtime directory (which a server and the kernels it starts share, as the widgets' pictures do:
``features/_picture_cache.py``), and the server's pre-save hook (:func:`add_log`, registered by
``_server_extension.py``) adds the records of every widget the notebook shows to the metadata's list
(each record once, by its ``id``; the newest kept within :data:`MAX_NOTEBOOK_CHARS`). A record that
is there stays there after the kernel is gone. A failure here never stops a save.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from ._runtime_files import register_pre_save, widget_file, widget_outputs

log = logging.getLogger("splitbrain_widget.lesson_notebook")

DIR_NAME = "splitbrain-lesson-log"
METADATA_KEY = "lesson_log"  # under metadata.splitbrain
MAX_FILE_CHARS = 1_000_000  # one widget's records kept for the server: past this, the older half goes
MAX_NOTEBOOK_CHARS = 1_000_000  # the records in one notebook's metadata, the newest
KEEP_S = 7 * 24 * 3600  # a gone kernel's files are removed when another is written


def _path(model_id: str) -> Path | None:
    return widget_file(DIR_NAME, model_id, ".jsonl")


def keep(model_id: str, line: str) -> None:
    """Keep one record (a JSON line) of widget ``model_id`` for the saved notebook."""
    path = _path(model_id)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        size = path.stat().st_size if path.exists() else 0
        if size + len(line) + 1 > MAX_FILE_CHARS:  # keep the newer half
            lines = path.read_text(encoding="utf-8").splitlines()
            path.write_text("".join(f"{kept}\n" for kept in lines[len(lines) // 2 :]), encoding="utf-8")
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        _prune(path.parent)
    except OSError as exc:
        log.info("a lesson record of widget %s was not kept for the saved notebook: %s", model_id, exc)


def kept(model_id: str) -> list[dict[str, Any]]:
    """The records kept for widget ``model_id`` (none where there is no file, or it is not ours)."""
    path = _path(model_id)
    try:
        if path is None or path.stat().st_size > 2 * MAX_FILE_CHARS:
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line being written
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            records.append(record)
    return records


def merged(existing: Any, new: list[dict[str, Any]], limit: int | None = MAX_NOTEBOOK_CHARS) -> list[dict[str, Any]]:
    """The records and the new ones, each once (by ``id``), in time order; the newest that fit in
    ``limit`` characters (all with None)."""
    records = [r for r in existing if isinstance(r, dict)] if isinstance(existing, list) else []
    seen = {r["id"] for r in records if isinstance(r.get("id"), str)}
    records += [r for r in new if not (isinstance(r.get("id"), str) and r["id"] in seen)]
    records.sort(key=lambda r: str(r.get("time", "")))  # stable: records of one second keep their order
    if limit is None:
        return records
    total, start = 0, len(records)
    while start > 0:
        total += len(json.dumps(records[start - 1], default=str))
        if total > limit:
            break
        start -= 1
    return records[start:]


def add_log(
    model: dict[str, Any] | None = None, path: str | None = None, contents_manager: Any = None, **_kwargs: Any
) -> None:
    """``ContentsManager.pre_save_hook``: add the kept records of the notebook's widgets to its metadata,
    with those the file on disk holds already (a frontend does not reload what an earlier save added)."""
    try:
        if not isinstance(model, dict) or model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
            return
        content = model["content"]
        new: list[dict[str, Any]] = []
        for model_id in dict.fromkeys(model_id for _data, model_id in widget_outputs(content)):
            new += kept(model_id)
        new += _saved(contents_manager, path)  # an earlier save's, which the frontend never saw
        if not new:
            return
        metadata = content.setdefault("metadata", {})
        ours = metadata.setdefault("splitbrain", {}) if isinstance(metadata, dict) else None
        if isinstance(ours, dict):
            ours[METADATA_KEY] = merged(ours.get(METADATA_KEY), new)
    except Exception:  # a save must never fail for a log
        log.exception("splitbrain_widget: the lesson log was not written into the notebook")


def _saved(contents_manager: Any, path: str | None) -> list[dict[str, Any]]:
    """The records the notebook's file on disk holds (none where it has none, or cannot be read)."""
    if contents_manager is None or not path:
        return []
    try:
        if not contents_manager.file_exists(path):
            return []
        on_disk = contents_manager.get(path, content=True, type="notebook")["content"]
        found = on_disk.get("metadata", {}).get("splitbrain", {}).get(METADATA_KEY)
    except Exception:  # an unreadable or half-written file: its records are not ours to lose or fix
        return []
    return [dict(r) for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def register(serverapp: Any) -> bool:
    """Register :func:`add_log` on the server's contents manager; whether it could be."""
    return register_pre_save(serverapp, add_log)


def _prune(where: Path) -> None:
    old = time.time() - KEEP_S
    for entry in where.glob("*.jsonl"):
        try:
            if entry.stat().st_mtime < old:
                entry.unlink(missing_ok=True)
        except OSError:
            continue
