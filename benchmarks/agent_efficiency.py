"""LLM requests and prompt size per task: our tool design against the classic web pattern.

Two measurements, both with scripted decisions (the same target values; no real model is asked):

1. In process, with pydantic-ai ``FunctionModel`` s (the figures ``agent_requests_ratio`` and
   ``agent_prompt_tokens_ratio``):
   - ours: the schema and current values are in the system prompt, so the model sends ONE
     set_parameters call with every change, then a one-line answer;
   - classic: the model first calls get_parameters, then sets one parameter per request, and it is
     MADE TO STOP after every tool round: it answers with text, and the page sends a "Proceed." user
     turn to get the next round (one more LLM request per round). This is the pattern of the classic
     web chat page, and it is what makes this ratio large.
   Prompt tokens are estimated the same way for both: every character a request sends
   (instructions, messages, tool schemas) divided by 4.

2. Over the wire (``agent_wire``), against the local fake providers of tests/fake_providers.py
   (OpenAI chat completions, Anthropic messages, Gemini generateContent on 127.0.0.1): our real
   :class:`~splitbrain_widget.Agent` (its own model set-up, streaming, guards and instructions)
   against a plain pydantic-ai agent with ``get_parameters`` and ``set_parameter`` tools, which
   - ``classic_loop``: runs through its tool loop in one run (get_parameters, one set_parameter per
     request, a final answer): the fair comparison;
   - ``classic_stop``: stops after every tool round and is told "Proceed.", as in 1.
   Requests are counted at the fake server (every POST it received) and the request size is the
   bytes it received (``Content-Length``), so whatever the agent really sends is what is measured.

``run(smoke=True)``: the first two tasks only, both measurements, every fake provider
(``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic_ai import Agent as PaiAgent
from pydantic_ai import AgentRunResultEvent, ModelResponse, TextPart, Tool, ToolCallPart
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo, FunctionModel

import splitbrain_widget as sb
from splitbrain_widget.agent import Agent
from tests.fake_providers import PROVIDERS, FakeProvider, Turn, call, make_agent, model_object, say

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "targets"
TASKS: list[dict[str, Any]] = [
    {"settings.speed": 12},
    {"settings.speed": 20, "display.color": "blue"},
    {"settings.speed": 5, "settings.count": 7, "settings.mode": "manual"},
    {"settings.speed": 30, "settings.count": 2, "display.show_vectors": False, "display.color": "green"},
    {
        "settings.speed": 1,
        "settings.count": 9,
        "settings.mode": "manual",
        "display.color": "black",
        "view.position": [1, 2, 3],
    },
]
SMOKE_TASKS = 2  # the first tasks: one change, then several (the ratios are over the multi-change ones)
PROMPT = "please apply the task"
CLASSIC_PAUSE = "Tool finished. Say Proceed. to continue."
CLASSIC_DONE = "All done."
MAX_ROUNDS = 50


def prompt_tokens(messages: list[ModelMessage], info: AgentInfo) -> int:
    """Characters sent in one request / 4."""
    tools = json.dumps([(t.name, t.description, t.parameters_json_schema) for t in info.function_tools])
    sent = len(info.instructions or "") + len(ModelMessagesTypeAdapter.dump_json(messages)) + len(tools)
    return sent // 4


def _done_text(task: dict[str, Any]) -> str:
    return "Done: " + ", ".join(f"{k}={v}" for k, v in task.items())


def _check(sim: sb.TargetWidget, task: dict[str, Any]) -> None:
    assert all(sim.values[k] == v for k, v in task.items()), sim.values


def _classic_tools(sim: sb.TargetWidget) -> list[Tool[Any]]:
    async def get_parameters() -> dict[str, Any]:
        result = await sim.aget_parameters()
        return result.for_model()

    async def set_parameter(name: str, value: Any) -> dict[str, Any]:
        result = await sim.aset_parameter(name, value)
        return result.for_model()

    return [Tool(get_parameters), Tool(set_parameter)]


# -- 1. in process, scripted FunctionModels -------------------------------------------------------


def ours(task: dict[str, Any]) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    tokens = [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tokens[0] += prompt_tokens(messages, info)
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("set_parameters", {"values": task}, tool_call_id="s")])
        return ModelResponse(parts=[TextPart(_done_text(task))])

    result = Agent(sim, FunctionModel(respond)).ask(PROMPT)
    _check(sim, task)
    return {"requests": result.usage.requests, "input_tokens": tokens[0]}


def classic(task: dict[str, Any]) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    pending = list(task.items())
    sent = [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent[0] += prompt_tokens(messages, info)
        calls = sum(1 for m in messages if getattr(m, "kind", "") == "response")
        if calls == 0:
            return ModelResponse(parts=[ToolCallPart("get_parameters", {}, tool_call_id="g")])
        last_was_tool = any(getattr(p, "part_kind", "") == "tool-return" for p in messages[-1].parts)
        if last_was_tool:  # made to stop: the page shows the result and waits for the user to say "Proceed."
            return ModelResponse(parts=[TextPart(CLASSIC_PAUSE)])
        if pending:
            name, value = pending.pop(0)
            return ModelResponse(
                parts=[ToolCallPart("set_parameter", {"name": name, "value": value}, tool_call_id=name)]
            )
        return ModelResponse(parts=[TextPart(CLASSIC_DONE)])

    agent = PaiAgent(FunctionModel(respond), tools=_classic_tools(sim))
    history: list[ModelMessage] = []
    requests = 0
    prompt = PROMPT
    for _ in range(MAX_ROUNDS):
        result = asyncio.run(agent.run(prompt, message_history=history))
        history = result.all_messages()
        requests += result.usage.requests
        if result.output == CLASSIC_DONE:
            break
        prompt = "Proceed."
    _check(sim, task)
    return {"requests": requests, "input_tokens": sent[0]}


# -- 2. over the wire, against the fake providers ---------------------------------------------------


def _at_server(server: FakeProvider) -> dict[str, int]:
    """What the fake server received: model requests (POSTs), other requests, and request bytes."""
    assert server.unscripted == 0, f"{server.provider}: {server.unscripted} request(s) found nothing scripted"
    posts = server.model_requests
    return {
        "requests": len(posts),
        "other_requests": len(server.requests) - len(posts),
        "request_bytes": sum(int(r.headers.get("content-length") or 0) for r in posts),
    }


def wire_ours(provider: str, task: dict[str, Any]) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    with FakeProvider(provider) as server:
        server.script(call("set_parameters", {"values": task}), say(_done_text(task)))
        result = make_agent(sim, server).ask(PROMPT)
        assert result.ok, result.stopped
        _check(sim, task)
        return _at_server(server)


async def _run_streamed(agent: PaiAgent[None, str], prompt: str, history: list[ModelMessage]) -> Any:
    """One run through pydantic-ai's event stream, as our agent runs (so both ask for streamed responses)."""
    async with agent.run_stream_events(prompt, message_history=history) as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                return event.result
    raise AssertionError("the run ended without a result")


def wire_classic(provider: str, task: dict[str, Any], *, stop_every_round: bool) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    turns: list[Turn] = [call("get_parameters")]
    for name, value in task.items():
        if stop_every_round:
            turns.append(say(CLASSIC_PAUSE))
        turns.append(call("set_parameter", {"name": name, "value": value}))
    if stop_every_round:
        turns.append(say(CLASSIC_PAUSE))
    turns.append(say(CLASSIC_DONE))
    with FakeProvider(provider) as server:
        server.script(*turns)
        agent: PaiAgent[None, str] = PaiAgent(model_object(server), tools=_classic_tools(sim))

        async def conversation() -> None:
            history: list[ModelMessage] = []
            prompt = PROMPT
            for _ in range(MAX_ROUNDS):
                result = await _run_streamed(agent, prompt, history)
                history = result.all_messages()
                if result.output == CLASSIC_DONE:
                    return
                prompt = "Proceed."
            raise AssertionError("the classic conversation did not finish")

        asyncio.run(conversation())
        _check(sim, task)
        return _at_server(server)


def wire(provider: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """Per task and in sum over the multi-parameter tasks: requests and request bytes at the fake server."""
    rows = []
    for task in tasks:
        row: dict[str, Any] = {"changes": len(task)}
        for design, got in (
            ("ours", wire_ours(provider, task)),
            ("classic_loop", wire_classic(provider, task, stop_every_round=False)),
            ("classic_stop", wire_classic(provider, task, stop_every_round=True)),
        ):
            row[f"{design}_requests"] = got["requests"]
            row[f"{design}_request_bytes"] = got["request_bytes"]
            if got["other_requests"]:
                row[f"{design}_other_requests"] = got["other_requests"]
        rows.append(row)
    multi = [r for r in rows if r["changes"] > 1]

    def ratio(design: str, figure: str) -> float:
        theirs: int = sum(r[f"{design}_{figure}"] for r in multi)
        ours_total: int = sum(r[f"ours_{figure}"] for r in multi)
        return round(theirs / ours_total, 2)

    return {
        "requests_ratio_loop": ratio("classic_loop", "requests"),
        "request_bytes_ratio_loop": ratio("classic_loop", "request_bytes"),
        "requests_ratio_stop": ratio("classic_stop", "requests"),
        "request_bytes_ratio_stop": ratio("classic_stop", "request_bytes"),
        "tasks": rows,
    }


def run(*, smoke: bool = False) -> dict[str, Any]:
    tasks = TASKS[:SMOKE_TASKS] if smoke else TASKS
    rows = []
    for task in tasks:
        a, b = ours(task), classic(task)
        rows.append(
            {
                "changes": len(task),
                "ours_requests": a["requests"],
                "classic_requests": b["requests"],
                "ours_prompt_tokens": a["input_tokens"],
                "classic_prompt_tokens": b["input_tokens"],
            }
        )
    multi = [r for r in rows if r["changes"] > 1]
    ratio = sum(r["classic_requests"] for r in multi) / sum(r["ours_requests"] for r in multi)
    token_ratio = sum(r["classic_prompt_tokens"] for r in multi) / sum(r["ours_prompt_tokens"] for r in multi)
    return {
        "agent_requests_ratio": round(ratio, 2),
        "agent_prompt_tokens_ratio": round(token_ratio, 2),
        "agent_scripted_note": "scripted FunctionModels; the classic model is made to stop after every tool round "
        "and gets a 'Proceed.' user turn for the next one",
        "agent_tasks": rows,
        "agent_wire": {provider: wire(provider, tasks) for provider in PROVIDERS},
        "agent_wire_note": "our Agent against a pydantic-ai agent with get_parameters + set_parameter, at the fake "
        "providers of tests/fake_providers.py on 127.0.0.1; requests and bytes counted at the server; "
        "loop: the classic agent runs through its tool loop, stop: it stops after every tool round",
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
