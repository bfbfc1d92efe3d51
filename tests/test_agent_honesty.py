"""What the model claims never counts; what the page applied does (against the fake providers)."""

from __future__ import annotations

from typing import Any

import splitbrain_widget as sb

from .fake_providers import Turn, call, make_agent, say
from .test_agent_providers import SPEED_12, ask, sim  # noqa: F401  (the fixture)


def test_a_claim_without_a_call_gets_one_nudge_and_the_change_is_made(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai").script(
        say("The speed is set to 12 m/s."), call("set_parameters", SPEED_12), say("Now it is 12 m/s.")
    )
    result, _ = ask(make_agent(sim, server))
    assert sim.values["settings.speed"] == 12 and not result.no_change
    assert result.text == "Now it is 12 m/s."
    assert "No change was made" in str(server.model_requests[1].body)  # the nudge, said to the model


def test_a_claim_the_model_keeps_making_is_marked_no_change(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai").script(say("The speed is set to 12 m/s."), say("Done, it is 12 m/s."))
    result, _ = ask(make_agent(sim, server))
    assert sim.values["settings.speed"] == 8.0
    assert result.no_change and result.text.endswith("(No change was made.)")
    assert len(server.model_requests) == 2  # one nudge, never more


def test_a_change_request_cut_off_by_the_cap_still_says_no_change_was_made(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    """Found against the real SmolLM2: a rambling answer that reached the cap had ``no_change=False``."""
    server = fake("openai").script(Turn(text="To set the speed you could write a function", finish="length"))
    result, _ = ask(make_agent(sim, server))
    assert result.stopped == "length" and result.no_change and "No change was made" in result.text
    assert len(server.model_requests) == 1  # a stopped answer gets no nudge
    assert sim.values["settings.speed"] == 8.0


def test_a_question_is_no_change_request(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai").script(say("The speed is 8 m/s."))
    result, _ = ask(make_agent(sim, server), "what is the speed?")
    assert not result.no_change and result.text == "The speed is 8 m/s." and len(server.model_requests) == 1


def test_an_echoed_tool_response_is_replaced_by_what_the_results_say(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    echo = '<tool_response>{"ok": true, "changed": {"settings.speed": {"value": 12}}}</tool_response>'
    server = fake("openai").script(call("set_parameters", SPEED_12), say(echo))
    result, _ = ask(make_agent(sim, server))
    assert sim.values["settings.speed"] == 12 and not result.no_change
    assert "<tool_response>" not in result.text and "12" in result.text, result.text


def test_a_change_kept_for_a_reloading_page_counts_as_made() -> None:
    from splitbrain_widget.agent._honesty import made_change
    from splitbrain_widget.agent._run_state import ToolCallRecord

    kept = ToolCallRecord("set_parameters", {}, {"ok": False, "kept": True, "applied": False}, ok=False)
    lost = ToolCallRecord("set_parameters", {}, {"ok": False, "kept": False}, ok=False)
    read = ToolCallRecord("fetch_state", {}, {"ok": True}, ok=True)
    assert made_change([kept]) and not made_change([lost]) and not made_change([read])


def test_the_nudge_runs_inside_the_answer_s_one_deadline(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    """The nudge is a second run, but not a second run_timeout: it gets what the first left."""
    from splitbrain_widget.agent import RunDeadline

    from .test_agent_providers import Recorder

    server = fake("openai").script(say("The speed is set to 12 m/s."), say("Done, it is 12 m/s."))
    recorder = Recorder()
    result, _ = ask(make_agent(sim, server, run_timeout=30), recorder=recorder)
    deadlines = [e.seconds for e in recorder.events if isinstance(e, RunDeadline)]
    assert result.no_change and len(deadlines) == 2
    assert deadlines[0] == 30 and 0 < deadlines[1] < 30
