"""``seek`` as a twin pair and as the agent's tool: one call reaches a goal, for every model.

Without a browser the page is a fake view whose projectile answers with the textbook range; the
tests marked ``browser`` run the real projectile and pendulum pages in headless Chromium.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent import Agent, ToolCallFinished, ToolCallProgress, ToolCallStarted
from splitbrain_widget.agent._tools import BY_NAME, Scope, tool_specs
from splitbrain_widget.headless import HeadlessTarget

from .browser_env import run_async
from .fake_providers import FakeProvider, call, make_agent, say
from .fake_view import FakeView
from .test_agent_providers import Recorder

browser = pytest.mark.browser


def textbook(values: dict[str, Any]) -> dict[str, Any]:
    speed, angle = values["launch.speed"], values["launch.angle"]
    g = values["environment.gravity"]
    return {"range": round(speed**2 * math.sin(math.radians(2 * angle)) / g, 3)}


@pytest.fixture
def openai() -> Iterator[FakeProvider]:
    server = FakeProvider("openai")
    yield server
    server.stop()


# -- the twins ------------------------------------------------------------------------------------


def test_seek_varies_the_first_depends_on_parameter_and_is_audited(projectile: sb.TargetWidget) -> None:
    result = projectile.seek("range", 50)
    assert result.ok, result
    assert list(result.changed) == ["launch.speed"]  # range's depends_on starts with launch.speed
    assert abs(textbook(projectile.values)["range"] - 50) <= 0.5
    assert projectile.values["launch.angle"] == 45  # nothing else moved
    entry = projectile.audit[-1]
    assert (entry.op, entry.arguments, entry.ok) == ("seek", {"observable": "range", "goal": 50}, True)
    assert [e.op for e in projectile.audit].count("set_parameters") == len(result.evaluations or [])


def test_aseek_is_the_same_engine_and_refuses_the_same_way(projectile: sb.TargetWidget) -> None:
    before = dict(projectile.values)
    result = asyncio.run(projectile.aseek("range", 500, vary="angle"))
    assert result.error is not None and result.error.code == "goal_unreachable"
    assert "peaks at 40.77 m" in result.error.message and projectile.values == before
    assert projectile.audit[-1].code == "goal_unreachable"


def test_an_observable_without_depends_on_needs_vary_and_names_the_candidates(projectile: sb.TargetWidget) -> None:
    before = dict(projectile.values)
    result = projectile.seek("x", 3)  # the ball's position: no depends_on in the manifest
    assert result.error is not None and result.error.code == "invalid_value"
    assert "which parameter" in result.error.message and "launch.speed" in (result.error.hint or "")
    assert projectile.values == before and not any(e.op == "set_parameters" for e in projectile.audit)


@pytest.mark.parametrize("delay_s", [0.0, 0.05])  # the cancel lands after the seek ended, or mid-seek
def test_a_cancelled_aseek_puts_the_value_back(delay_s: float) -> None:
    projectile = sb.TargetWidget("projectile")
    FakeView(projectile, state_of=textbook, behaviour="delay" if delay_s else "ok", delay_s=delay_s)
    before = dict(projectile.values)

    async def cancel_during_the_tries() -> None:
        started = asyncio.Event()
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(
            projectile.aseek("range", 50, on_try=lambda _t: loop.call_soon_threadsafe(started.set))
        )
        await started.wait()  # at least one try reached the page
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_during_the_tries())
    assert projectile.values == before  # back by the time the cancel returned, not later
    assert projectile.audit[-1].op == "seek" and projectile.audit[-1].code == "cancelled"


# -- the tool -------------------------------------------------------------------------------------


def test_the_tool_schema_comes_from_the_manifest_observables(projectile: sb.TargetWidget) -> None:
    (spec,) = [s for s in tool_specs(Scope(projectile.schema, [])) if s.name == "seek"]
    properties = spec.schema["properties"]
    assert properties["observable"]["enum"] == list(projectile.schema.observables)
    assert "range (m) is moved by launch.speed, launch.angle" in properties["observable"]["description"]
    assert "launch.speed" in properties["vary"]["enum"]
    assert "display.show_vectors" in properties["vary"]["enum"]  # a boolean is varied value by value
    assert properties["vary"]["enum"] == [
        p for p, v in projectile.schema.parameters.items() if v.seekable and not v.readonly
    ]
    assert spec.schema["required"] == ["observable", "goal"] and not spec.read_only
    assert BY_NAME["seek"].touches(projectile.schema, {"observable": "range", "goal": 50}) == ["launch.speed"]
    assert BY_NAME["seek"].label({"observable": "range", "goal": 50, "vary": "launch.angle"}) == "range → 50 by angle"


def test_a_scripted_model_reaches_the_goal_in_one_seek_call(projectile: sb.TargetWidget, openai: FakeProvider) -> None:
    openai.script(call("seek", {"observable": "range", "goal": 50}), say("It lands at 50 m now."))
    agent = make_agent(projectile, openai)
    events = Recorder()
    result = agent.ask("make it land at 50 m", on_event=events)
    assert result.text == "It lands at 50 m now." and result.stopped is None
    assert (result.usage.requests, result.usage.tool_calls) == (2, 1)  # one round trip, not one per try
    (record,) = result.tool_calls
    assert record.name == "seek" and record.ok
    assert abs(textbook(projectile.values)["range"] - 50) <= 0.5
    tries = record.result["evaluations"]
    progress = events.of(ToolCallProgress)
    assert len(progress) == len(tries) >= 2  # the chip followed every try
    assert progress[0].label == "range → 50: try 1, 0 → 0"  # the low end of the speed range first
    assert [int(p.label.split("try ")[1].split(",")[0]) for p in progress] == list(range(1, len(progress) + 1))
    assert [type(e) for e in events.events if isinstance(e, ToolCallStarted | ToolCallFinished)] == [
        ToolCallStarted,
        ToolCallFinished,
    ]
    told = openai.tool_results(1)[0]
    assert "evaluations" in told and "launch.speed" in told  # the model reads every try


def test_approval_applies_to_the_parameter_seek_varies(projectile: sb.TargetWidget, openai: FakeProvider) -> None:
    projectile.approval = {"launch.speed": "deny"}
    openai.script(call("seek", {"observable": "range", "goal": 50}), say("I may not change the speed."))
    before = dict(projectile.values)
    result = make_agent(projectile, openai).ask("make it land at 50 m")
    (record,) = result.tool_calls
    assert not record.ok and record.result["error"]["code"] == "denied" and "launch.speed" in str(record.result)
    assert projectile.values == before


def test_the_offline_planner_maps_a_goal_to_one_seek(projectile: sb.TargetWidget) -> None:
    result = Agent(projectile).ask("make it land at 50 m")
    assert [c.name for c in result.tool_calls] == ["seek"] and result.tool_calls[0].ok
    assert abs(textbook(projectile.values)["range"] - 50) <= 0.5
    assert "launch speed" in result.text.lower() and "tries" in result.text


# -- on real pages --------------------------------------------------------------------------------


@browser
@pytest.mark.parametrize("drag", [0, 0.02])
def test_on_the_page_a_scripted_model_lands_it_at_50_m_in_one_call(engine: None, drag: float) -> None:
    server = FakeProvider("openai")
    try:
        with HeadlessTarget("projectile") as page:
            assert page.set_parameters({"drag": drag}).ok
            server.script(call("seek", {"observable": "range", "goal": 50}), say("Done."))
            result = make_agent(page, server).ask("make it land at 50 m")
            assert (result.usage.requests, result.usage.tool_calls) == (2, 1)
            assert result.tool_calls[0].ok and len(result.tool_calls[0].result["evaluations"]) <= 15
            measured = page.fetch_state().state or {}
            assert abs(measured["range"] - 50) <= 0.5  # what the page measures now, asked afresh
    finally:
        server.stop()


@browser
def test_on_the_page_the_pendulum_period_becomes_3_s(engine: None) -> None:
    server = FakeProvider("openai")
    try:
        with HeadlessTarget("pendulum") as page:
            server.script(call("seek", {"observable": "period", "goal": 3}), say("Done."))
            result = make_agent(page, server).ask("make the period 3 s")
            assert (result.usage.requests, result.usage.tool_calls) == (2, 1) and result.tool_calls[0].ok
            period = result.tool_calls[0].result["evaluations"][-1]["observable"]
            assert abs(period - 3) <= 0.03
            length = page.values["pendulum.length"]
            assert abs(2 * math.pi * math.sqrt(length / 9.81) - 3) < 0.1  # near the small-angle answer
            # the twin, awaited, settles on the same length
            again = run_async(page.aseek("period", "3 s"))
            assert again.ok and abs(page.values["pendulum.length"] - length) < 0.05
    finally:
        server.stop()


@browser
def test_on_the_page_500_m_by_the_angle_is_refused_with_the_values_back(engine: None) -> None:
    with HeadlessTarget("projectile") as page:
        before = dict(page.values)
        result = Agent(page).ask("make it land at 500 m by changing the angle")
        (record,) = result.tool_calls
        assert record.name == "seek" and record.result["error"]["code"] == "goal_unreachable"
        assert page.values == before and "peaks at" in result.text


@browser
def test_a_widget_on_its_headless_fallback_seeks_a_period_by_running_that_page_clock(engine: None) -> None:
    sim = sb.TargetWidget("pendulum", headless=True)
    try:
        assert not sim.can_advance  # no page yet: the first call starts one
        result = sim.seek("period", 3)
        assert result.ok, result
        assert sim.can_advance and abs((result.evaluations or [])[-1]["observable"] - 3) <= 0.03
        assert sim.advance(0)["pendulum.length"] == sim.values["pendulum.length"]  # the same page
    finally:
        sim.close()


@browser
def test_an_observable_that_settles_is_read_after_its_settling_time(engine: None) -> None:
    with HeadlessTarget("boids") as page:
        result = page.seek("mean_speed", 9)
        assert result.ok, result
        settled = page.advance(10)["mean_speed"]  # ten more simulated seconds at the answer
        assert abs(settled - 9) <= 0.5, (settled, result.evaluations)
