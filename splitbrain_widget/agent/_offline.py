"""The offline planner as a pydantic-ai model: a FunctionModel that plans instead of predicting.

The planner (:mod:`.planner`) turns the latest request into tool calls; here the plan becomes the
model's response, a skill's ``confirm_before`` may hold it back for a "yes", and the planner's
summary of the results ends the turn.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from . import planner
from ._approval import touched_paths
from ._run_state import RunState
from ._skills import confirm_paths


def offline_model(state: RunState) -> FunctionModel:
    """The planner, speaking through the same agent loop and tools as a real model."""

    def decide(messages: list[ModelMessage]) -> ModelResponse:
        prompt, answered = _last_prompt(messages)
        if not answered:
            ctx = state.planner_context()
            plan, loads = _skill_plan(state, prompt, ctx)
            state.plan = plan
            if plan.refusal is not None or (plan.question is not None and not loads):
                return ModelResponse(
                    parts=[TextPart(plan.refusal or plan.question or "")], model_name="offline-planner"
                )
            calls = [planner.PlannedCall("load_skill", {"name": name}) for name in loads] + plan.calls
            # ids unique across runs: the chat panel keys a call's chip by it (two runs, two chips)
            run = uuid.uuid4().hex[:12]
            parts = [
                ToolCallPart(call.tool, call.args, tool_call_id=f"offline-{run}-{i}") for i, call in enumerate(calls)
            ]
            return ModelResponse(parts=parts, model_name="offline-planner")
        if state.plan is not None and state.plan.question is not None:
            return ModelResponse(parts=[TextPart(state.plan.question)], model_name="offline-planner")
        # this run's calls, structured (a loaded skill is no change to report)
        results = [record.result for record in state.tool_calls if record.name != "load_skill"]
        text = planner.summarise(state.plan or planner.Plan(), results, state.planner_context())
        return ModelResponse(parts=[TextPart(text)], model_name="offline-planner")

    def function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return decide(messages)

    async def stream_function(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = decide(messages)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            yield {
                i: DeltaToolCall(name=c.tool_name, json_args=json.dumps(c.args), tool_call_id=c.tool_call_id)
                for i, c in enumerate(calls)
            }
            return
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        words = text.split(" ")
        for i, word in enumerate(words):
            yield word + (" " if i < len(words) - 1 else "")

    return FunctionModel(function, stream_function=stream_function, model_name="offline-planner")


def _skill_plan(state: RunState, prompt: str, ctx: planner.PlannerContext) -> tuple[planner.Plan, list[str]]:
    """The offline planner with skills: the plan for ``prompt`` and the skills to load first.

    A skill whose ``when`` fits the request is loaded (once per conversation). While a fitting or
    loaded skill lists ``confirm_before``, a plan that would change one of those parameters (a set,
    a seek, a reset that moves one) is not run: the planner asks (the skill's ``confirm_question``,
    then what it would do) and keeps the plan. A "yes" next runs it, if the target and the values are
    still those it was made for; a reply that asks for nothing (the student's prediction) keeps it
    waiting; a new request drops it.
    """
    skills = state.skills()
    loads = [s.name for s in skills if s.fits(prompt) and s.name not in state.ever_loaded]
    pending, state.pending = state.pending, None
    if pending is not None and planner.is_yes(prompt):
        plan, target, values = pending
        if target == ctx.manifest.id and values == dict(ctx.values):
            return plan, loads
        return planner.Plan(
            refusal=f"{planner.LABEL}: The target or its values changed since I asked, so I did not make that "
            "change; ask again."
        ), loads
    plan = planner.plan(prompt, ctx)
    if pending is not None and plan.refusal is not None:  # an answer to the question, not a request
        state.pending = pending
        waiting = planner.describe_calls(pending[0], ctx)
        return planner.Plan(question=f'{planner.LABEL}: Thanks. Say "yes" and I will {waiting}.'), loads
    ruling = [s for s in skills if s.name in loads or s.name in state.ever_loaded]
    for skill in ruling:
        guarded = confirm_paths(skill, ctx.manifest)
        touched = [p for p in _moved_paths(state, plan, ctx) if p in guarded]
        if touched:
            state.pending = (plan, ctx.manifest.id, dict(ctx.values))
            question = f"{skill.confirm_question} " if skill.confirm_question else ""
            changes = planner.describe_calls(plan, ctx)
            names = planner.join_words(sorted(set(touched)))
            ask = f'The guide "{skill.name}" asks me to check with you before changing {names}'
            text = f'{planner.LABEL}: {question}{ask}: shall I {changes}? Say "yes" to go ahead.'
            return planner.Plan(question=text), loads
    return plan, loads


def _moved_paths(state: RunState, plan: planner.Plan, ctx: planner.PlannerContext) -> list[str]:
    """The parameter paths a plan's calls would change: what a set or a seek names, and what a reset
    moves back to its default."""
    paths = [p for call in plan.calls for p in touched_paths(state.sim, call.tool, call.args)]
    if any(call.tool == "reset" for call in plan.calls):
        defaults = ctx.manifest.defaults()
        paths += [path for path, value in ctx.values.items() if defaults.get(path) != value]
    return paths


def _last_prompt(messages: list[ModelMessage]) -> tuple[str, bool]:
    """The latest user prompt, and whether tool results for it have come back since."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                # pydantic-ai's own notices ("<system>the following tool(s) are now available ...", sent when
                # the tools change, as a headless page's clock tools appear) are no request of the user's
                if isinstance(part, UserPromptPart) and not str(part.content).lstrip().startswith("<system>"):
                    return str(part.content), i != len(messages) - 1
    return "", False
