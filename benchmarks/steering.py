"""Steering: does the agent do what it is asked with the built-in targets, judged on the page?

The tasks are data, in ``benchmarks/steering_tasks.json`` (``{"tasks": [...]}``). A task::

    {"id": "projectile-range-50", "target": "projectile", "kind": "goal",
     "request": "make it land at 50 m",                  # or a list: the steps of one conversation
     "conditions": [{"observable": "range", "near": 50, "tol": 0.5}],
     "advance": 10,                                      # optional: simulated seconds before the state is read
     "note": "why a refusal is the right answer"}        # optional

``kind`` is ``"value"`` (set parameters), ``"goal"`` (reach a value of an observable) or
``"refusal"`` (out of reach: the right answer is a clear refusal that changes nothing).

The condition language; a task passes when every one of its conditions holds:

- ``{"value": PATH, TEST}``: the parameter at dotted ``PATH`` (``sim.values`` after the last request);
- ``{"observable": NAME, TEST}``: the observable ``NAME`` in the page's final state;
- TEST is ``"equals": V`` (numbers within 1e-9 relative, anything else exactly; a bool is no
  number), ``"near": X, "tol": T`` (``|x - X| <= T``), or ``"at_least": A`` and/or ``"at_most": B``;
  a missing or null value fails;
- ``{"refused": true}``: the last reply says the request cannot be met (:data:`REFUSAL`: out of
  reach or range, above the maximum, cannot, could not bring, peaks at, not possible, ...); a reply
  that only says it did not understand the request ("I could not tell which parameter") is no such
  refusal;
- ``{"unchanged": true}``: every parameter still has its value from before the first request;
  ``{"unchanged": [PATH, ...]}``: those parameters do.

How a task runs: a fresh ``HeadlessTarget(target)`` (seed 0: nothing of a previous task carries
over, neither values, page clock, random numbers nor conversation), a fresh ``Agent(sim, model)``
asked the request(s) in order, then the page state (``sim.advance(advance)`` when the task says so,
else ``sim.fetch_state()``) and ``sim.values`` are scored by :func:`score`, a pure function. An
agent that switched the widget to another target fails the task. ``model=None`` is the offline
planner, whatever ``SPLITBRAIN_MODEL`` says (``make bench`` never calls a paid model); ``--model``
picks another. Figures per task and in total: success, LLM requests, input / output tokens (the
agent's usage) and the wall time of the agent's answers.

Run: ``python -m benchmarks steering [--model NAME]`` (results.json and the README block), or
``python -m benchmarks.steering [--model NAME]`` (printed only). ``run(smoke=True)``: a few tasks
(:func:`smoke_tasks`), on the offline planner (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from splitbrain_widget.manifest import Manifest
    from splitbrain_widget.widget import TargetWidget

TASKS_PATH = Path(__file__).resolve().parent / "steering_tasks.json"
KINDS = ("value", "goal", "refusal")
TESTS = ("equals", "near", "tol", "at_least", "at_most")
REL_TOL = 1e-9
REPLY_KEEP = 240  # characters of the last reply kept per task in results.json
# What a reply says when it declines because the request is out of reach (case-insensitive). Not
# "I could not tell which parameter ...", "I can't tell what you mean": not understanding is no refusal.
REFUSAL = re.compile(
    r"out of (?:reach|range|bounds)|outside (?:the|its|their|of)|beyond|exceed|above the maximum|"
    r"below the minimum|allowed range|\bat (?:most|least)\b|"
    r"\b(?:cannot|can ?not|can't|unable to|no way to)\b(?! (?:tell|understand|parse|map|work out|figure))|"
    r"\b(?:could not|couldn't|did not|didn't) (?:bring|reach|get|achieve|attain)\b|"
    r"\b(?:peaks|tops out|bottoms out|maxes out|levels off) at\b|\bno (?:higher|lower|more|less|further) than\b|"
    r"\bnot (?:possible|reachable|achievable|attainable|allowed|available|supported|valid|one of)\b|"
    r"unreachable|unattainable|impossible|\binvalid\b|"
    r"\btoo (?:high|low|large|small|big|far|long|short|fast|slow|much|many|heavy|light)\b",
    re.IGNORECASE,
)
Task = dict[str, Any]
Condition = dict[str, Any]
PageFactory = Callable[[str], "TargetWidget"]


# -- the tasks ------------------------------------------------------------------------------------


def load_tasks(path: Path = TASKS_PATH) -> list[Task]:
    """The tasks of ``path``, checked against the targets' manifests (ValueError naming every problem)."""
    from splitbrain_widget.registry import list_targets, load_target

    tasks: list[Task] = json.loads(path.read_text())["tasks"]
    known = {info.id for info in list_targets()}
    manifests: dict[str, Manifest] = {}
    problems: list[str] = []
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        name = str(task.get("id", f"#{i}"))
        if name in seen:
            problems.append(f"{name}: duplicate id")
        seen.add(name)
        target = task.get("target")
        if target not in known:
            problems.append(f"{name}: unknown target {target!r} (targets: {', '.join(sorted(known))})")
            continue
        if target not in manifests:
            manifests[target] = load_target(target).manifest
        problems += [f"{name}: {p}" for p in check_task(task, manifests[target])]
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return tasks


def requests_of(task: Task) -> list[str]:
    """The task's request(s), in the order they are asked."""
    request = task["request"]
    return [request] if isinstance(request, str) else list(request)


def check_task(task: Task, manifest: Manifest) -> list[str]:
    """What is wrong with ``task`` for the target of ``manifest``; empty when it is well-formed."""
    problems = [
        f"unknown key {key!r}"
        for key in task
        if key not in ("id", "target", "kind", "request", "conditions", "advance", "note")
    ]
    if task.get("kind") not in KINDS:
        problems.append(f"kind must be one of {KINDS}, not {task.get('kind')!r}")
    request = task.get("request")
    steps = [request] if isinstance(request, str) else request
    if not isinstance(steps, list) or not steps or not all(isinstance(s, str) and s.strip() for s in steps):
        problems.append("request must be a non-empty string or a non-empty list of them")
    advance = task.get("advance")
    if advance is not None and not (_number(advance) and advance > 0):
        problems.append(f"advance must be a positive number of seconds, not {advance!r}")
    conditions = task.get("conditions")
    if not isinstance(conditions, list) or not conditions:
        return [*problems, "conditions must be a non-empty list"]
    for cond in conditions:
        problems += [f"condition {cond}: {p}" for p in check_condition(cond, manifest)]
    if task.get("kind") == "refusal" and not (
        any(c.get("refused") is True for c in conditions) and any("unchanged" in c for c in conditions)
    ):
        problems.append('a refusal task needs {"refused": true} and an "unchanged" condition')
    return problems


def check_condition(cond: Condition, manifest: Manifest) -> list[str]:
    """What is wrong with one condition; empty when it is well-formed."""
    if not isinstance(cond, dict):
        return ["not an object"]
    subjects = [key for key in ("value", "observable", "refused", "unchanged") if key in cond]
    if len(subjects) != 1:
        return ['needs exactly one of "value", "observable", "refused", "unchanged"']
    subject = subjects[0]
    if subject == "refused":
        return [] if cond == {"refused": True} else ['is {"refused": true} and nothing else']
    if subject == "unchanged":
        paths = cond["unchanged"]
        if len(cond) != 1 or not (paths is True or (isinstance(paths, list) and paths)):
            return ['is {"unchanged": true} or {"unchanged": [PATH, ...]} and nothing else']
        return [
            f"unknown parameter {p!r}"
            for p in (paths if isinstance(paths, list) else [])
            if p not in manifest.parameters
        ]
    name = cond[subject]
    known = manifest.parameters if subject == "value" else manifest.observables
    problems = [] if name in known else [f"unknown {'parameter' if subject == 'value' else 'observable'} {name!r}"]
    tests = {key for key in cond if key != subject}
    problems += [f"unknown test {key!r}" for key in tests if key not in TESTS]
    if "equals" in tests:
        if tests != {"equals"}:
            problems.append('"equals" goes alone')
    elif "near" in tests or "tol" in tests:
        if tests != {"near", "tol"} or not _number(cond["near"]) or not (_number(cond["tol"]) and cond["tol"] > 0):
            problems.append('"near" needs a number and "tol" a positive number, and nothing else')
    elif tests and tests <= {"at_least", "at_most"}:
        if not all(_number(cond[key]) for key in tests):
            problems.append('"at_least" / "at_most" need numbers')
    else:
        problems.append('needs a test: "equals", "near" + "tol", or "at_least" / "at_most"')
    return problems


# -- scoring (pure) -------------------------------------------------------------------------------


def refuses(reply: str) -> bool:
    """The reply declines the request as out of reach (see :data:`REFUSAL`)."""
    return bool(reply.strip()) and REFUSAL.search(reply) is not None


def score(
    task: Task, values: Mapping[str, Any], state: Mapping[str, Any], reply: str, before_values: Mapping[str, Any]
) -> tuple[bool, str]:
    """Whether every condition of ``task`` holds for the final ``values``, page ``state`` and last
    ``reply`` (``before_values``: the values before the first request), and why: the failed conditions,
    or all of them when it passed."""
    outcomes = [_holds(cond, values, state, reply, before_values) for cond in task["conditions"]]
    failed = [why for ok, why in outcomes if not ok]
    return not failed, "; ".join(failed or [why for _, why in outcomes])


def _holds(
    cond: Condition, values: Mapping[str, Any], state: Mapping[str, Any], reply: str, before: Mapping[str, Any]
) -> tuple[bool, str]:
    if "refused" in cond:
        return (True, "refused") if refuses(reply) else (False, f"no refusal in the reply {_short(reply, 80)!r}")
    if "unchanged" in cond:
        paths = sorted(before) if cond["unchanged"] is True else list(cond["unchanged"])
        moved = [
            f"{p} {_show(before.get(p))} -> {_show(values.get(p))}"
            for p in paths
            if not _equal(values.get(p), before.get(p))
        ]
        return (False, "changed: " + ", ".join(moved)) if moved else (True, "unchanged")
    subject = "value" if "value" in cond else "observable"
    name = cond[subject]
    source = values if subject == "value" else state
    if name not in source or source[name] is None:
        return False, f"{name} is {'null' if name in source else 'missing'}"
    got = source[name]
    if "equals" in cond:
        want = cond["equals"]
        return _equal(got, want), f"{name} = {_show(got)} (want {_show(want)})"
    if not _number(got):
        return False, f"{name} = {_show(got)} is not a number"
    if "near" in cond:
        ok = abs(got - cond["near"]) <= cond["tol"]
        return ok, f"{name} = {_show(got)} (want {_show(cond['near'])} ± {_show(cond['tol'])})"
    low, high = cond.get("at_least", -math.inf), cond.get("at_most", math.inf)
    bounds = " and ".join(
        f"{word} {_show(cond[key])}" for key, word in (("at_least", ">="), ("at_most", "<=")) if key in cond
    )
    return low <= got <= high, f"{name} = {_show(got)} (want {bounds})"


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _equal(a: Any, b: Any) -> bool:
    if _number(a) and _number(b):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    if isinstance(a, bool) or isinstance(b, bool):  # True is no 1
        return type(a) is type(b) and a == b
    return bool(a == b)


def _show(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else json.dumps(x, ensure_ascii=False, default=str)


def _short(text: str, limit: int = REPLY_KEEP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- running --------------------------------------------------------------------------------------


def _headless_page(target: str) -> TargetWidget:
    from splitbrain_widget import HeadlessTarget

    return HeadlessTarget(target)


def run_task(
    task: Task,
    *,
    model: Any = None,
    agent_options: Mapping[str, Any] | None = None,
    open_page: PageFactory = _headless_page,
) -> dict[str, Any]:
    """Run one task on a fresh page with a fresh agent; its row: verdict, usage and wall time."""
    from splitbrain_widget import Agent

    row: dict[str, Any] = {"id": task["id"], "target": task["target"], "kind": task["kind"]}
    row |= {"steps": len(requests_of(task)), "requests": 0, "input_tokens": 0, "output_tokens": 0, "tools": []}
    wall = 0.0
    sim = open_page(task["target"])
    try:
        before = dict(sim.values)
        agent = Agent(sim, "offline" if model is None else model, **dict(agent_options or {}))
        row["model"] = agent.model
        reply, stopped = "", []
        for text in requests_of(task):
            started = time.perf_counter()
            try:
                result = agent.ask(text)
            finally:
                wall += time.perf_counter() - started
            reply = result.text
            row["requests"] += result.usage.requests
            row["input_tokens"] += result.usage.input_tokens
            row["output_tokens"] += result.usage.output_tokens
            row["tools"] += [call.name for call in result.tool_calls]
            if result.stopped:
                stopped.append(result.stopped)
        state = _final_state(sim, task.get("advance"))
        passed, why = score(task, dict(sim.values), state, reply, before)
        if sim.target_id != task["target"]:
            passed, why = False, f"the agent switched to target {sim.target_id!r}"
        row |= {"passed": passed, "why": why, "reply": _short(reply)}
        if stopped:
            row["stopped"] = "; ".join(stopped)
    except Exception as exc:  # one task's failure is its row, not the benchmark's end
        row |= {"passed": False, "why": f"error: {type(exc).__name__}: {_short(str(exc), 200)}"}
    finally:
        sim.close()
    row["wall_s"] = round(wall, 3)
    return row


def _final_state(sim: TargetWidget, advance: float | None) -> dict[str, Any]:
    """The page's state after the requests: ``advance`` simulated seconds later, or now."""
    if advance:
        step: Callable[[float], dict[str, Any]] | None = getattr(sim, "advance", None)
        if step is None:
            raise TypeError(f"the task advances the clock, and {type(sim).__name__} has no advance()")
        return dict(step(float(advance)))
    result = sim.fetch_state()
    if not result.ok or result.state is None:
        raise RuntimeError(f"fetch_state failed: {result}")
    return dict(result.state)


def summarise(rows: Sequence[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The section's figures: totals, success rate, by kind and by target, and every row."""

    def tally(key: str) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for row in rows:
            entry = out.setdefault(row[key], {"tasks": 0, "passed": 0})
            entry["tasks"] += 1
            entry["passed"] += bool(row["passed"])
        return out

    passed = sum(bool(r["passed"]) for r in rows)
    models = sorted({str(r["model"]) for r in rows if "model" in r})
    return {
        "model": ", ".join(models) or "?",
        "tasks": len(rows),
        "passed": passed,
        "success_rate": round(passed / len(rows), 3) if rows else 0.0,
        "by_kind": tally("kind"),
        "by_target": tally("target"),
        "multi_step": sum(1 for r in rows if r["steps"] > 1),
        "requests": sum(r["requests"] for r in rows),
        "input_tokens": sum(r["input_tokens"] for r in rows),
        "output_tokens": sum(r["output_tokens"] for r in rows),
        "tool_calls": sum(len(r["tools"]) for r in rows),
        "wall_s": round(sum(r["wall_s"] for r in rows), 2),
        "seconds": round(seconds, 1),
        "rows": list(rows),
    }


def run_tasks(
    tasks: Sequence[Task],
    *,
    model: Any = None,
    agent_options: Mapping[str, Any] | None = None,
    open_page: PageFactory = _headless_page,
    echo: Callable[[str], None] | None = print,
) -> dict[str, Any]:
    """Run ``tasks`` one by one (``echo`` prints a line per task and the totals); the figures."""
    started = time.perf_counter()
    rows = []
    for task in tasks:
        row = run_task(task, model=model, agent_options=agent_options, open_page=open_page)
        rows.append(row)
        if echo is not None:
            echo(
                f"{'PASS' if row['passed'] else 'fail'} {row['id']:<36} {row['requests']:>2} req "
                f"{row['input_tokens']:>5}/{row['output_tokens']:<5} tok {row['wall_s']:6.2f} s  "
                f"{_short(row['why'], 110)}"
            )
    figures = summarise(rows, time.perf_counter() - started)
    if echo is not None:
        kinds = ", ".join(f"{k} {v['passed']}/{v['tasks']}" for k, v in figures["by_kind"].items())
        echo(
            f"steering ({figures['model']}): {figures['passed']}/{figures['tasks']} passed "
            f"({figures['success_rate']:.0%}; {kinds}); {figures['requests']} requests, "
            f"{figures['input_tokens']}/{figures['output_tokens']} tokens in/out, {figures['wall_s']} s answering"
        )
    return figures


def smoke_tasks(tasks: Sequence[Task]) -> list[Task]:
    """A few tasks that take every path of the runner: the first of each kind, the first in several
    steps and the first that advances the page's clock."""

    def of_kind(kind: str) -> Callable[[Task], bool]:
        return lambda task: task["kind"] == kind

    wanted = [of_kind(kind) for kind in KINDS]
    wanted += [lambda task: len(requests_of(task)) > 1, lambda task: "advance" in task]
    picked: list[Task] = []
    for test in wanted:
        first = next((task for task in tasks if test(task)), None)
        if first is not None and first not in picked:
            picked.append(first)
    return picked


def run(model: str | None = None, *, smoke: bool = False) -> dict[str, Any]:
    """The benchmark section: every task of steering_tasks.json on ``model`` (None: the offline planner);
    ``smoke``: a few tasks (:func:`smoke_tasks`), on the offline planner whatever ``model`` says."""
    from splitbrain_widget.hosts._headless_engine import shutdown_engine

    tasks = load_tasks()
    try:
        if smoke:
            return {"steering": run_tasks(smoke_tasks(tasks), model=None)}
        return {"steering": run_tasks(tasks, model=model)}
    finally:
        shutdown_engine()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.steering", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", help="the agent's model (default: the offline planner)")
    figures = run(parser.parse_args().model)["steering"]
    print(json.dumps({k: v for k, v in figures.items() if k != "rows"}, indent=2))
