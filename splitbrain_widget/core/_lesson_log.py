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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._lesson import Lesson, LessonError, current_lesson

if TYPE_CHECKING:
    import pandas

MAX_RECORD_CHARS = 64_000
MAX_TEXT_CHARS = 4_000  # the words asked, the answer
_LOCK = threading.Lock()


def log_file(lesson: Lesson | None) -> Path | None:
    """Where the lesson's log goes (relative to the notebook's folder), or None: no log."""
    rules = lesson.policy.log if lesson is not None else None
    if rules is None:
        return None
    return Path(rules.path).expanduser()


def observed(state: dict[str, Any] | None, parameters: Any) -> dict[str, Any]:
    """What the page measures, from its state: every key that is not a parameter."""
    return {k: v for k, v in (state or {}).items() if k not in parameters and not k.startswith("_")}


def write(kind: str, caller: str, asked: str, calls: list[dict[str, Any]], **fields: Any) -> None:
    """Append one record where the lesson in force says; nothing where it keeps no log (or none is in
    force). ``calls``: ``{"tool", "arguments", "result"}`` each; ``fields``: ``before``, ``after``,
    ``answer``, ``model``, ``tokens``."""
    try:
        lesson = current_lesson()
    except LessonError:  # the call itself was refused with this error; a log cannot be written under it
        return
    path = log_file(lesson)
    if path is None or lesson is None or lesson.policy.log is None:
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
        line = json.dumps(record, default=str, separators=(",", ":"))[:MAX_RECORD_CHARS]
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        size = path.stat().st_size if path.exists() else 0
        if size and size + len(line) + 1 > lesson.policy.log.max_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def lesson_log(path: str | Path | None = None) -> pandas.DataFrame:
    """The records of a lesson log as a table (``sb.lesson_log()``), the rotated file first, one row
    each: the log of the lesson in force where ``path`` is None."""
    import pandas

    file = Path(path).expanduser() if path is not None else log_file(current_lesson())
    if file is None:
        raise LessonError("no lesson log: the lesson in force keeps none (its [log] path), and no path was given")
    records = []
    for part in (file.with_name(file.name + ".1"), file):
        if part.exists():
            for n, line in enumerate(part.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    raise LessonError(f"{part}: line {n} is not a JSON record") from None
    columns = ["time", "kind", "caller", "asked", "calls", "changed", "refused", "answer", "model", "tokens"]
    return pandas.DataFrame(records, columns=[*columns, "before", "after"])
