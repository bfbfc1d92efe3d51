"""Questions like "how high did it get" are answered from what the manifest declares, or refused.

The fixtures name their observables unlike the built-in targets (apex, not max_height), so a rule
that knows the built-in names cannot pass; drifter declares nothing that answers them at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent.planner import LABEL, PlannerContext, plan, summarise
from splitbrain_widget.manifest import Manifest

FIXTURES = Path(__file__).parent / "fixtures" / "planner"


def context(target: str) -> PlannerContext:
    path = FIXTURES / f"{target}.json"
    manifest = Manifest.from_file(path) if path.exists() else sb.load_target(target).manifest
    return PlannerContext(manifest, manifest.defaults(), [])


@pytest.mark.parametrize(
    ("target", "request_text", "tool", "asked"),
    [
        ("hopper", "how high did it get?", "fetch_state", "apex"),
        ("hopper", "how high did it go", "fetch_state", "apex"),
        ("hopper", "how long was it in the air?", "fetch_state", "airtime"),
        ("hopper", "how long did it fly", "fetch_state", "airtime"),
        ("hopper", "how far did it go?", "fetch_state", "downrange"),
        ("hopper", "how fast did it fly", "fetch_state", "top_speed"),
        ("hopper", "how many heaps are there?", "fetch_state", "heaps"),
        ("hopper", "how many pieces", "get_parameters", "debris.pieces"),  # named: the parameter
        ("hopper", "how long does the engine burn", "get_parameters", "launch.burn"),
        ("projectile", "how high did it get?", "fetch_state", "max_height"),
        ("projectile", "how long did it fly", "fetch_state", "flight_time"),
        ("projectile", "how far did it go?", "fetch_state", "range"),
        ("boids", "how fast are they?", "fetch_state", "mean_speed"),  # measured beats the cap
        ("bouncer", "how fast is it?", "get_parameters", "settings.speed"),  # nothing measured: the setting
    ],
)
def test_how_questions_read_what_the_manifest_says_answers_them(
    target: str, request_text: str, tool: str, asked: str
) -> None:
    result = plan(request_text, context(target))
    assert result.refusal is None, result.refusal
    assert [c.tool for c in result.calls] == [tool] and result.asked == [asked]


@pytest.mark.parametrize(
    "request_text",
    ["how high did it get?", "how long did it fly", "how far did it go", "how fast did it go", "how many heaps?"],
)
def test_how_questions_nothing_answers_are_refused_not_read_from_a_parameter(request_text: str) -> None:
    # drifter has a launch height, a duration and a count, but reports no height, time aloft or heaps
    result = plan(request_text, context("drifter"))
    assert result.calls == [] and result.refusal is not None
    assert result.refusal.startswith(LABEL) and "I can set" in result.refusal


def test_a_how_question_with_two_equal_answers_names_both() -> None:
    result = plan("how long is it?", context("pendulum"))  # its length, or its period?
    assert result.calls == [] and result.refusal is not None
    assert "period" in result.refusal and "pendulum.length" in result.refusal


def test_the_answer_is_the_observable_the_page_reported() -> None:
    ctx = context("hopper")
    p = plan("how high did it get?", ctx)
    text = summarise(p, [{"ok": True, "state": {"apex": 42.5, "airtime": 5.1}}], ctx)
    assert text == "Offline planner: Apex is 42.5 m (as reported by the page)."
