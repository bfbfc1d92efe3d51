"""The lesson log: one JSON line per chat turn or MCP call, in the file the lesson policy names.

A record holds when, who (``chat: ...``, ``agent: ...``, ``mcp: <client>``), the words asked, each
tool call with its arguments and result, what changed (with units), the observables before and
after, the answer, the model and its tokens. The file is rotated at the policy's ``max_bytes`` (the
previous one kept as ``<name>.1``); a record is at most :data:`MAX_RECORD_CHARS` (a big state is cut).
``sb.lesson_log()`` reads both files into a table.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _lesson_notebook
from ._lesson import MAX_NOTEBOOK_BYTES, Lesson, LessonError, current_lesson
from ._platform import need

if TYPE_CHECKING:
    import pandas

MAX_RECORD_CHARS = 64_000
MAX_TEXT_CHARS = 4_000  # the words asked, the answer
_LOCK = threading.Lock()


def log_file(lesson: Lesson | None) -> Path | None:
    """Where the lesson's log goes (relative to the notebook's folder), or None: no file."""
    rules = lesson.policy.log if lesson is not None else None
    if rules is None or rules.path is None:
        return None
    return Path(rules.path).expanduser()


def observed(state: dict[str, Any] | None, parameters: Any) -> dict[str, Any]:
    """What the page measures, from its state: every key that is not a parameter."""
    return {k: v for k, v in (state or {}).items() if k not in parameters and not k.startswith("_")}


def model_id_of(widget: Any) -> str | None:
    """A widget's model id (what its outputs in the notebook name), or None (no comm: headless)."""
    try:
        model_id = widget.model_id
    except Exception:  # ipywidgets raises where the widget has no comm
        return None
    return model_id if isinstance(model_id, str) else None


def write(
    kind: str, caller: str, asked: str, calls: list[dict[str, Any]], *, widget: str | None = None, **fields: Any
) -> None:
    """Append one record where the lesson in force says; nothing where it keeps no log (or none is in
    force). ``calls``: ``{"tool", "arguments", "result"}`` each; ``widget``: the widget's model id
    (its records go into the saved notebook where the lesson says); ``fields``: ``before``,
    ``after``, ``answer``, ``model``, ``tokens``."""
    try:
        lesson = current_lesson()
    except LessonError:  # the call itself was refused with this error; a log cannot be written under it
        return
    rules = lesson.policy.log if lesson is not None else None
    if rules is None:
        return
    changed: dict[str, Any] = {}
    refused: list[str] = []
    for call in calls:
        result = call.get("result") or {}
        changed.update(result.get("changed") or {})
        error = result.get("error") or {}
        if error.get("code") == "denied":
            refused.append(str(error.get("message", "")))
    record = {
        "id": uuid.uuid4().hex[:16],
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime()),
        "kind": kind,
        "caller": caller[:MAX_TEXT_CHARS],
        "asked": asked[:MAX_TEXT_CHARS],
        "calls": calls,
        "changed": changed,
        "refused": refused,
        **fields,
    }
    line = json.dumps(record, default=str, separators=(",", ":"))
    if len(line) > MAX_RECORD_CHARS:  # the calls' results are the big part: keep their names and codes
        record["calls"] = [{"tool": c.get("tool"), "ok": (c.get("result") or {}).get("ok"), "cut": True} for c in calls]
        record["before"] = record["after"] = {"cut": True}
        line = json.dumps(record, default=str, separators=(",", ":"))
    if len(line) > MAX_RECORD_CHARS:  # still (a thousand calls): what changed and what was refused, counted
        record["calls"] = {"count": len(calls), "cut": True}
        record["changed"] = {"count": len(changed), "cut": True}
        record["refused"] = [r[:200] for r in refused[:20]]
        line = json.dumps(record, default=str, separators=(",", ":"))
    path = log_file(lesson)
    with _LOCK:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            size = path.stat().st_size if path.exists() else 0
            if size and size + len(line) + 1 > rules.max_bytes:
                os.replace(path, path.with_name(path.name + ".1"))
            with path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        if rules.notebook and widget is not None:
            _lesson_notebook.keep(widget, line)


def records(file: Path) -> list[dict[str, Any]]:
    """The records of a lesson log (the rotated file first), or of a saved notebook (``.ipynb``: its
    metadata's ``splitbrain.lesson_log``; none where it has none)."""
    if file.suffix.lower() == ".ipynb":
        return _notebook_records(file)
    found: list[dict[str, Any]] = []
    for part in (file.with_name(file.name + ".1"), file):
        if part.exists():
            for n, line in enumerate(part.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    raise LessonError(f"{part}: line {n} is not a JSON record")
                found.append(record)
    return found


def _notebook_records(file: Path) -> list[dict[str, Any]]:
    try:
        if file.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise LessonError(f"{file}: more than {MAX_NOTEBOOK_BYTES:,} bytes, too big a notebook to read")
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LessonError(f"{file}: not a notebook that can be read ({exc})") from None
    metadata = data.get("metadata") if isinstance(data, dict) else None
    ours = metadata.get("splitbrain") if isinstance(metadata, dict) else None
    found = ours.get(_lesson_notebook.METADATA_KEY) if isinstance(ours, dict) else None
    if found is None:
        return []
    if not isinstance(found, list):
        raise LessonError(f"{file}: field 'metadata.splitbrain.lesson_log': expected a list of records")
    return [record for record in found if isinstance(record, dict)]


def lesson_log(path: str | Path | None = None) -> pandas.DataFrame:
    """The records of a lesson log as a table (``sb.lesson_log()``), one row each: the file's (the
    rotated one first), a saved notebook's (``.ipynb``), or the log of the lesson in force where
    ``path`` is None."""
    pandas = need("pandas", "sb.lesson_log()")

    file = Path(path).expanduser() if path is not None else log_file(current_lesson())
    if file is None:
        raise LessonError("no lesson log: the lesson in force keeps no file (its [log] path), and no path was given")
    columns = ["time", "kind", "caller", "asked", "calls", "changed", "refused", "answer", "model", "tokens"]
    return pandas.DataFrame(records(file), columns=[*columns, "before", "after", "id"])
