"""``python -m splitbrain_widget lesson-report FOLDER [-o OUT]``: one HTML page for the teacher.

FOLDER holds the students' saved notebooks (``<student>.ipynb``, whose metadata keeps the log where
the policy says ``[log] notebook = true``) or their lesson logs (``<student>.jsonl``, with its
rotated ``.jsonl.1``; the policy's ``[log] path`` names them), or both (a record in both is listed
once). Per student: each chat turn and MCP call, in order — when, who asked (the chat, an agent, an
MCP client), the words, what changed (with units), what the lesson refused and why, the answer.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path
from typing import Any

from .core._lesson import LessonError
from .core._lesson_log import records
from .core._lesson_notebook import merged

STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1b1b}table{border-collapse:collapse;width:100%;"
    "margin-bottom:2rem}caption{text-align:left;font-weight:600;padding:.4rem 0}th,td{border:1px solid #999;"
    "padding:.3rem .5rem;vertical-align:top;text-align:left}th{background:#eee}.refused{color:#8a1c1c}"
)


def _changed(changed: Any) -> str:
    if not isinstance(changed, dict):
        return ""
    return ", ".join(
        f"{path} = {item.get('value')}{' ' + str(item['unit']) if item.get('unit') else ''}"
        for path, item in changed.items()
        if isinstance(item, dict)
    )


def _student(name: str, logs: list[Path]) -> str:
    found: list[dict[str, Any]] = []
    for log in logs:
        found = merged(found, records(log), limit=None)
    rows = []
    for record in found:
        refused = record.get("refused") or []
        cells = [
            record.get("time") or "",
            record.get("caller") or "",
            record.get("asked") or "",
            _changed(record.get("changed")),
            "; ".join(str(r) for r in refused) if isinstance(refused, list) else "",
            record.get("answer") if isinstance(record.get("answer"), str) else "",
        ]
        rows.append(
            "<tr>"
            + "".join(
                f"<td{' class=refused' if n == 4 and cell else ''}>{html.escape(str(cell))}</td>"
                for n, cell in enumerate(cells)
            )
            + "</tr>"
        )
    refusals = sum(1 for r in found if isinstance(r.get("refused"), list) and r["refused"])
    head = "".join(f'<th scope="col">{h}</th>' for h in ("time", "who", "asked", "changed", "refused", "answer"))
    caption = f"{html.escape(name)}: {len(found)} turns and calls, {refusals} refused"
    return f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def report(folder: str | Path) -> str:
    """The teacher's HTML page for the notebooks and logs in ``folder``, one table per student (the
    file's name without its suffix)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise LessonError(f"{root}: not a folder of students' notebooks or lesson logs")
    students: dict[str, list[Path]] = {}
    for path in sorted([*root.glob("*.ipynb"), *root.glob("*.jsonl")]):
        students.setdefault(path.stem, []).append(path)
    if not students:
        raise LessonError(f"{root}: no notebooks or lesson logs here (expected <student>.ipynb or <student>.jsonl)")
    body = "".join(_student(name, paths) for name, paths in students.items())
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lesson report</title>'
        f"<style>{STYLE}</style></head><body><h1>Lesson report: {html.escape(str(root))}</h1>{body}</body></html>"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m splitbrain_widget lesson-report", description=__doc__)
    parser.add_argument("folder", help="a folder of students' notebooks (<student>.ipynb) or lesson logs (.jsonl)")
    parser.add_argument("-o", "--output", default="lesson-report.html", help="the HTML file to write")
    args = parser.parse_args(argv)
    try:
        page = report(args.folder)
    except LessonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    Path(args.output).write_text(page, encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
