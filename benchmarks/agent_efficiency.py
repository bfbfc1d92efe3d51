"""LLM requests and prompt tokens per task: our tool design against the classic web pattern.

Both designs are driven by scripted models that make the same decisions (the same target values):
- ours: the schema and current values are in the system prompt, so the model sends ONE
  set_parameters call with every change, then a one-line answer;
- classic: the model first calls get_parameters, then sets one parameter per request, and the page
  sends a "Proceed." user turn after every tool round (one full LLM request per round).
Prompt tokens are estimated the same way for both: every character a request sends (instructions,
messages, tool schemas) divided by 4.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic_ai import Agent as PaiAgent
from pydantic_ai import ModelResponse, TextPart, Tool, ToolCallPart
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo, FunctionModel

import splitbrain_widget as sb
from splitbrain_widget.agent import Agent

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


def prompt_tokens(messages: list[ModelMessage], info: AgentInfo) -> int:
    """Characters sent in one request / 4."""
    tools = json.dumps([(t.name, t.description, t.parameters_json_schema) for t in info.function_tools])
    sent = len(info.instructions or "") + len(ModelMessagesTypeAdapter.dump_json(messages)) + len(tools)
    return sent // 4


def ours(task: dict[str, Any]) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    tokens = [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tokens[0] += prompt_tokens(messages, info)
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("set_parameters", {"values": task}, tool_call_id="s")])
        return ModelResponse(parts=[TextPart("Done: " + ", ".join(f"{k}={v}" for k, v in task.items()))])

    result = Agent(sim, FunctionModel(respond)).ask("please apply the task")
    assert all(sim.values[k] == v for k, v in task.items()), sim.values
    return {"requests": result.usage.requests, "input_tokens": tokens[0]}


def classic(task: dict[str, Any]) -> dict[str, int]:
    sim = sb.TargetWidget("demo", targets_dir=FIXTURES)
    pending = list(task.items())
    sent = [0]

    async def get_parameters() -> dict[str, Any]:
        result = await sim.aget_parameters()
        return result.for_model()

    async def set_parameter(name: str, value: Any) -> dict[str, Any]:
        result = await sim.aset_parameter(name, value)
        return result.for_model()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent[0] += prompt_tokens(messages, info)
        calls = sum(1 for m in messages if getattr(m, "kind", "") == "response")
        if calls == 0:
            return ModelResponse(parts=[ToolCallPart("get_parameters", {}, tool_call_id="g")])
        last_was_tool = any(getattr(p, "part_kind", "") == "tool-return" for p in messages[-1].parts)
        if last_was_tool:  # the classic page shows the result and waits for the user to say "Proceed."
            return ModelResponse(parts=[TextPart("Tool finished. Say Proceed. to continue.")])
        if pending:
            name, value = pending.pop(0)
            return ModelResponse(
                parts=[ToolCallPart("set_parameter", {"name": name, "value": value}, tool_call_id=name)]
            )
        return ModelResponse(parts=[TextPart("All done.")])

    agent = PaiAgent(FunctionModel(respond), tools=[Tool(get_parameters), Tool(set_parameter)])
    history: list[ModelMessage] = []
    requests = 0
    prompt = "please apply the task"
    for _ in range(50):
        result = asyncio.run(agent.run(prompt, message_history=history))
        history = result.all_messages()
        requests += result.usage.requests
        if result.output == "All done.":
            break
        prompt = "Proceed."
    assert all(sim.values[k] == v for k, v in task.items()), sim.values
    return {"requests": requests, "input_tokens": sent[0]}


def run() -> dict[str, Any]:
    rows = []
    for task in TASKS:
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
        "agent_tasks": rows,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
