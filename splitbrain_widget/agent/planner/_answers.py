"""The planner's replies: what a plan did (from the tools' results), what it would do, and a yes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...features import _observables as observables
from ...manifest import Manifest
from ._context import LABEL, Plan, PlannedCall, PlannerContext
from ._format import aim_phrase, describe_param, join_words, page_state, short_name, value_text, with_unit_text
from ._lexicon import (
    normalise,
)


def summarise(plan_: Plan, results: Sequence[Mapping[str, Any]], ctx: PlannerContext) -> str:
    """One short line saying what changed (or what was asked), from the tools' results."""
    parts: list[str] = []
    for call, result in zip(plan_.calls, results, strict=False):
        if call.tool == "seek":
            parts.append(goal_summary(call, result, ctx, plan_.aim))
            continue
        error = result.get("error") or {}
        if not result.get("ok", False) and not (result.get("kept") and call.tool == "set_parameters"):
            hint = f" ({error['hint']})" if error.get("hint") else ""
            parts.append(f"could not {call.tool.replace('_', ' ')}: {error.get('message', 'failed')}{hint}")
            continue
        if call.tool == "set_parameters":
            changed = result.get("changed") or {}
            said = [f"{short_name(path, ctx)} to {with_unit_text(v)}" for path, v in changed.items()]
            if result.get("ok", False):
                parts.append("set " + join_words(said))
            elif error.get("code") == "no_view":  # kept, not applied: say so, never "set"
                parts.append(f"kept {join_words(said)}, but no view is open, so the page has not changed yet")
            else:
                parts.append(f"kept {join_words(said)}, but the page did not apply it: {error.get('message', '')}")
        elif call.tool == "reset":
            parts.append("reset every parameter to its default")
        elif call.tool == "run_action":
            action = ctx.manifest.actions.get(str(call.args.get("name")))
            parts.append(f"ran {(action.label if action is not None and action.label else call.args.get('name'))}")
        elif call.tool == "select_target":
            parts.append(f"switched to {result.get('target') or call.args.get('target')}")
        elif call.tool == "list_targets":
            parts.append("targets: " + ", ".join(t["id"] for t in result.get("targets") or []))
        elif call.tool == "get_parameters":
            parts.append(_answer_parameters(plan_.asked, result, ctx))
        elif call.tool == "fetch_state":
            parts.append(_answer_state(plan_.asked, result, ctx))
    for call in plan_.calls[len(results) :]:  # not made (a run that stops after a failed set): say so
        if call.tool == "seek":
            aim = aim_phrase(str(call.args.get("observable", "")), call.args.get("goal"), ctx.manifest, plan_.aim)
            parts.append(f"so I did not try to {aim}")
    text = "; ".join(p for p in parts if p)
    if plan_.notes:
        text += " (" + "; ".join(plan_.notes) + ")"
    return f"{LABEL}: {text[:1].upper() + text[1:]}."


def is_yes(text: str) -> bool:
    """Whether a request only says yes (to a question the planner asked)."""
    said = normalise(text).lower().rstrip(" ,")
    return (
        re.fullmatch(
            r"(?:yes|y|yeah|yep|sure|ok|okay|go ahead|do it|please do|confirm(?:ed)?)(?:,? (?:please|go ahead|do it))?",
            said,
        )
        is not None
    )


def describe_calls(plan_: Plan, ctx: PlannerContext) -> str:
    """What a plan would do, in the words of the reply ("set angle to 30° and speed to 20 m/s")."""
    parts = []
    for call in plan_.calls:
        if call.tool == "set_parameters":
            values = call.args.get("values") or {}
            parts.append(
                "set "
                + join_words(
                    [
                        f"{short_name(p, ctx)} to {value_text(v, ctx.manifest.parameters[p].unit)}"
                        for p, v in values.items()
                    ]
                )
            )
        elif call.tool == "seek":
            parts.append(
                aim_phrase(str(call.args.get("observable", "")), call.args.get("goal"), ctx.manifest, plan_.aim)
            )
        else:
            parts.append(call.tool.replace("_", " "))
    return join_words(parts)


def _answer_parameters(asked: list[str], result: Mapping[str, Any], ctx: PlannerContext) -> str:
    values = result.get("values") or {}
    if asked == ["*"]:
        params = ", ".join(describe_param(p) for p in ctx.manifest.parameters.values())
        return f"you can change {params}"
    return join_words(
        [f"{short_name(p, ctx)} is {value_text(values.get(p), ctx.manifest.parameters[p].unit)}" for p in asked]
    )


def _answer_state(asked: list[str], result: Mapping[str, Any], ctx: PlannerContext) -> str:
    state = page_state(result)
    if asked == ["*state"]:
        shown = json.dumps(state)[:300]
        return f"the target reports {shown}"
    said = []
    for name in asked:
        if name in ctx.manifest.observables:
            unit = ctx.manifest.observables[name].unit
            value = observables.value(state, name)
            said.append(
                f"{name} is {value_text(value, unit)}" if value is not None else f"the target did not report {name}"
            )
        elif name in ctx.manifest.parameters:
            said.append(
                f"{short_name(name, ctx)} is {value_text(ctx.values.get(name), ctx.manifest.parameters[name].unit)}"
            )
    return join_words(said) + " (as reported by the page)"


def goal_summary(call: PlannedCall, result: Mapping[str, Any], ctx: PlannerContext, aim: str = "") -> str:
    """What a seek did: the parameter's new value and the observable reached, or why it could not.

    ``aim``: the goal in the request's words, when the seek's goal is not (a bound's window)."""
    name, goal, vary = call.args.get("observable", ""), call.args.get("goal"), call.args.get("vary", "")
    tries = len(result.get("evaluations") or [])
    counted = f" ({tries} {'try' if tries == 1 else 'tries'})" if tries else ""
    words = _param_words(vary, ctx.manifest)
    param = ctx.manifest.parameters.get(vary)
    unit = param.unit if param else None
    if not result.get("ok", False):
        return _failure(call, result, ctx, aim) + counted
    changed = (result.get("changed") or {}).get(vary)
    did = (
        f"changed {words} to {with_unit_text(changed)}"
        if changed
        else f"left {words} at {value_text(ctx.values.get(vary), unit)}"
    )
    reached = _reached(name, result)
    obs = ctx.manifest.observables.get(name)
    label = name.replace("_", " ")
    if reached is None:
        return f"{did}, but the page did not report {label}{counted}"
    extreme = {"max": ", the maximum found", "min": ", the minimum found"}.get(str(goal), "")
    return f"{did}: {label} is now {value_text(reached, obs.unit if obs else None)}{extreme}{counted}"


def _failure(call: PlannedCall, result: Mapping[str, Any], ctx: PlannerContext, aim: str) -> str:
    """The tool's error, plainly, and where the varied parameter was left (back where it was)."""
    name, goal, vary = call.args.get("observable", ""), call.args.get("goal"), call.args.get("vary", "")
    error = result.get("error") or {}
    message = str(error.get("message") or "failed")
    hint = f" ({error['hint']})" if error.get("hint") else ""
    words, param = _param_words(vary, ctx.manifest), ctx.manifest.parameters.get(vary)
    kept = (result.get("changed") or {}).get(vary)
    now = ctx.values.get(vary)
    if re.search(rf"\b{re.escape(vary)} (?:is back at|stays at)\b", message):
        after = ""  # the tool said where it left the parameter
    elif kept:
        after = f"; {words} stays at {with_unit_text(kept)}"
    elif result.get("evaluations") and now is not None:
        after = f"; {words} went back to {value_text(now, param.unit if param else None)}"
    else:
        after = ""
    return f"could not {aim_phrase(name, goal, ctx.manifest, aim)}: {message}{hint}{after}"


def _reached(name: str, result: Mapping[str, Any]) -> Any:
    """The observable's value after the seek: from the page's state, else the last evaluation."""
    state = page_state(result)
    value = observables.value(state, name)
    if value is None:
        evaluations = result.get("evaluations") or []
        value = evaluations[-1].get("observable") if evaluations and isinstance(evaluations[-1], Mapping) else None
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _param_words(path: str, manifest: Manifest) -> str:
    """ "launch speed" for launch.speed: its label, or its name in words."""
    param = manifest.parameters.get(path)
    if param is None:
        return path
    text = param.label or param.name.replace("_", " ")
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) == 1 else text
