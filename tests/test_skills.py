"""Skills: guides the agent loads only when it needs them (issue #20).

What a skill file may say and what a bad one is told; where skills are found (beside a target, a
folder, inline); that the system prompt lists them without their bodies and a body reaches the
model only once ``load_skill`` returned it (real OpenAI wire format, local server); the offline
planner's keyword rule and its ``confirm_before`` question; the built-in targets' own skills.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent import ToolCallStarted
from splitbrain_widget.agent._skills import MAX_BODY_CHARS, MAX_SKILL_BYTES, SkillBook, SkillError, skills_beside
from splitbrain_widget.agent._tools import Scope, system_prompt, tool_specs

from .fake_providers import FakeProvider, call, make_agent, say
from .fake_view import FakeView

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
BODY = "Ask for a prediction first. The secret word is PERIHELION-42."
TUTOR = f"""---
name: demo-tutor
description: Tutor the demo lesson
when: [predict, "how fast", speed]
targets: [demo]
confirm_before: [speed]
confirm_question: What do you think will happen?
---
{BODY}
"""


@pytest.fixture
def sim() -> sb.TargetWidget:
    widget = sb.TargetWidget("demo", targets_dir=FIXTURES)
    FakeView(widget)
    return widget


# -- what a skill file says -------------------------------------------------------------------


def test_a_skill_is_front_matter_and_a_body() -> None:
    skill = sb.Skill.from_markdown(TUTOR, "tutor.md")
    assert (skill.name, skill.description, skill.body) == ("demo-tutor", "Tutor the demo lesson", BODY)
    assert skill.when == ("predict", "how fast", "speed") and skill.targets == ("demo",)
    assert skill.confirm_before == ("speed",) and skill.confirm_question == "What do you think will happen?"
    comma = sb.Skill.from_markdown("---\nname: a\ndescription: b\nwhen: drag, best angle\n---\nx")
    assert comma.when == ("drag", "best angle") and comma.applies_to("anything")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("no front matter", "expected a front matter first"),
        ("---\nname: [unclosed\n---\nx", "not valid YAML"),
        ("---\n- a list\n---\nx", "must be fields"),
        ("---\ndescription: d\n---\nx", "field 'name': Field required"),
        ("---\nname: Has Spaces\ndescription: d\n---\nx", "field 'name': String should match pattern"),
        ("---\nname: a\ndescription: d\nwhen_to_use: x\n---\nx", "field 'when_to_use': Extra inputs"),
        ("---\nname: a\ndescription: ''\n---\nx", "field 'description'"),
    ],
)
def test_a_malformed_skill_is_told_which_file_and_field(text: str, says: str) -> None:
    with pytest.raises(SkillError) as raised:
        sb.Skill.from_markdown(text, "lessons/bad.md")
    assert str(raised.value).startswith("lessons/bad.md: ") and says in str(raised.value), raised.value


def test_skills_are_bounded_in_size(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=f"more than the {MAX_BODY_CHARS:,}"):
        sb.Skill("a", "b", "x" * (MAX_BODY_CHARS + 1))
    big = tmp_path / "big.md"
    big.write_text("---\nname: a\ndescription: b\n---\n" + "x" * MAX_SKILL_BYTES)
    with pytest.raises(SkillError, match=rf"{big}: .* bytes, more than the {MAX_SKILL_BYTES:,}"):
        sb.Skill.from_file(big)


def test_the_keyword_rule_needs_every_word_of_a_phrase() -> None:
    skill = sb.Skill.from_markdown(TUTOR)
    assert skill.fits("Let me PREDICT the range first") and skill.fits("both speeds")
    assert skill.fits("how fast does it go?") and not skill.fits("how far does it go?")
    assert not skill.fits("set the count to 12")


# -- where skills come from -------------------------------------------------------------------


def _targets_with_skills(tmp_path: Path) -> Path:
    targets = tmp_path / "targets"
    targets.mkdir()
    for name in ("demo.html", "demo.json"):
        shutil.copy(FIXTURES / name, targets / name)
    (targets / "demo.skills").mkdir()
    (targets / "demo.skills" / "tutor.md").write_text(TUTOR)
    (targets / "demo.skills" / "physics.md").write_text("---\nname: demo-physics\ndescription: How it moves\n---\nP")
    return targets


def test_a_target_ships_skills_beside_it_and_given_ones_come_first(tmp_path: Path) -> None:
    targets = _targets_with_skills(tmp_path)
    target = sb.load_target("demo", targets)
    assert [s.name for s in skills_beside(target)] == ["demo-physics", "demo-tutor"]
    mine = sb.Skill("demo-tutor", "My own tutor", "mine", source="mine")
    other = sb.Skill("elsewhere", "For another target", "x", targets=("projectile",))
    book = SkillBook([mine, other])
    skills = book.for_target(target)
    assert [(s.name, s.body) for s in skills] == [("demo-tutor", "mine"), ("demo-physics", "P")]


def test_a_folder_target_keeps_its_skills_in_a_skills_folder(tmp_path: Path) -> None:
    folder = tmp_path / "lesson"
    (folder / "skills").mkdir(parents=True)
    shutil.copy(FIXTURES / "demo.html", folder / "index.html")
    shutil.copy(FIXTURES / "demo.json", folder / "manifest.json")
    (folder / "skills" / "a.md").write_text(TUTOR.replace("targets: [demo]", "targets: [lesson]"))
    assert [s.name for s in skills_beside(sb.load_target(folder))] == ["demo-tutor"]


def test_an_agent_takes_a_folder_a_file_a_skill_or_text(sim: sb.TargetWidget, tmp_path: Path) -> None:
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "t.md").write_text(TUTOR)
    (tmp_path / "one.md").write_text("---\nname: one\ndescription: From a file\n---\n1")
    agent = sb.Agent(
        sim,
        skills=[
            tmp_path / "lessons",
            str(tmp_path / "one.md"),
            sb.Skill("two", "An object", "2"),
            "---\nname: three\ndescription: Inline text\n---\n3",
        ],
    )
    assert [s.name for s in agent.skills] == ["demo-tutor", "one", "two", "three"]
    with pytest.raises(SkillError, match=r"skills\[0\]: expected a Skill"):
        sb.Agent(sim, skills=[42])  # type: ignore[list-item]
    with pytest.raises(SkillError, match=r"skills\[0\]: '.*missing' is no skill file or folder"):
        sb.Agent(sim, skills=tmp_path / "missing")


def test_strings_and_stray_files_are_read_as_a_person_means_them(sim: sb.TargetWidget, tmp_path: Path) -> None:
    skill = sb.Skill("a", "b", "c", when="predict, how fast", targets="pendulum", confirm_before="launch.angle")
    assert skill.when == ("predict", "how fast") and skill.targets == ("pendulum",)
    assert not skill.applies_to("pend") and skill.confirm_before == ("launch.angle",)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "._t.md").write_bytes(b"\x00\x05\x16\x07 not a skill")  # macOS metadata
    (tmp_path / "lessons" / "t.md").write_text(TUTOR)
    indented = "\n    " + TUTOR  # a triple-quoted string that starts on the next line
    agent = sb.Agent(sim, skills=[tmp_path / "lessons", indented.replace("demo-tutor", "again")])
    assert [s.name for s in agent.skills] == ["demo-tutor", "again"]
    with pytest.raises(SkillError, match=r"skills\[0\]: 'xxxxx.*\.\.\.' is no skill file"):
        sb.Agent(sim, skills=["x" * 5000])  # too long for a path: no OSError


def test_confirm_before_must_name_a_parameter_of_the_target(sim: sb.TargetWidget) -> None:
    bad = sb.Skill("a", "b", "c", confirm_before=("launch.angle",), source="lessons/a.md")
    with pytest.raises(SkillError) as raised:
        sb.Agent(sim, skills=[bad])
    message = str(raised.value)
    assert "lessons/a.md: field 'confirm_before': target 'demo' has no parameter 'launch.angle'" in message
    assert "settings.speed" in message


# -- what the model sees ------------------------------------------------------------------------


def test_the_prompt_lists_skills_never_their_bodies(sim: sb.TargetWidget) -> None:
    skill = sb.Skill.from_markdown(TUTOR)
    prompt = system_prompt(Scope(sim.schema, ["demo"], (skill,)), dict(sim.values))
    assert "- demo-tutor — Tutor the demo lesson (when: predict, how fast, speed)" in prompt
    assert BODY not in prompt and "load_skill" in prompt
    assert "Skills" not in system_prompt(Scope(sim.schema, ["demo"]), dict(sim.values))
    (spec,) = [s for s in tool_specs(Scope(sim.schema, ["demo"], (skill,))) if s.name == "load_skill"]
    assert spec.read_only and spec.schema["properties"]["name"]["enum"] == ["demo-tutor"]


def _request_chars(server: FakeProvider, index: int) -> int:
    return len(json.dumps(server.model_requests[index].body))


def test_a_skill_body_reaches_the_model_only_once_it_loads_it(
    sim: sb.TargetWidget, fake: Callable[..., FakeProvider]
) -> None:
    """OpenAI's wire format on 127.0.0.1: request 0 lists the skill, the model calls load_skill,
    request 1 carries the body as the tool's result, marked as the author's instructions."""
    skills = [
        sb.Skill.from_markdown(TUTOR),
        *(sb.Skill(f"extra-{i}", f"Guide {i}", "guide text " * 300) for i in range(5)),
    ]
    server = fake().script(call("load_skill", {"name": "demo-tutor"}), say("What do you predict?"))
    result = make_agent(sim, server, skills=skills).ask("let me predict the speed")
    assert result.skills == ["demo-tutor"] and result.text == "What do you predict?"
    first, second = (json.dumps(r.body) for r in server.model_requests[:2])
    assert "PERIHELION-42" not in first and "demo-tutor" in first and "extra-4" in first
    assert "PERIHELION-42" in second and "notebook's author or the target's own files (trusted" in second
    assert "guide text" not in second  # the other skills stayed unloaded
    # the same request with every body in the system prompt instead (what skills avoid)
    bodies = "\n\n".join(s.body for s in skills)
    everything = fake().script(say("ok"))
    make_agent(sim, everything, instructions=bodies).ask("let me predict the speed")
    listed, inlined = _request_chars(server, 0), _request_chars(everything, 0)
    print(f"first request: {listed} characters with skills listed, {inlined} with every body inlined")
    assert listed < inlined - len(bodies) * 0.9


def test_an_unknown_skill_name_is_answered_with_the_known_ones(
    sim: sb.TargetWidget, fake: Callable[..., FakeProvider]
) -> None:
    server = fake().script(call("load_skill", {"name": "nope"}), say("sorry"))
    result = make_agent(sim, server, skills=[sb.Skill.from_markdown(TUTOR)]).ask("predict")
    assert result.skills == [] and "skills: demo-tutor" in json.dumps(server.model_requests[1].body)


# -- the offline planner ------------------------------------------------------------------------


def test_the_planner_loads_a_fitting_skill_and_asks_before_a_confirm_before_change(sim: sb.TargetWidget) -> None:
    agent = sb.Agent(sim, skills=[sb.Skill.from_markdown(TUTOR)])
    events: list[Any] = []
    asked = agent.ask("set the speed to 20", on_event=events.append)
    assert asked.skills == ["demo-tutor"] and sim.values["settings.speed"] == 8.0
    assert "What do you think will happen?" in asked.text and 'The guide "demo-tutor"' in asked.text
    assert "set speed to 20 m/s" in asked.text and 'Say "yes"' in asked.text
    chips = [(e.name, e.label) for e in events if isinstance(e, ToolCallStarted)]
    assert chips == [("load_skill", "demo-tutor")]
    done = agent.ask("yes")
    assert sim.values["settings.speed"] == 20 and "Set speed to 20 m/s" in done.text and done.skills == []
    # loaded once per conversation, its rule still holds: another change to speed is asked again
    again = agent.ask("set the speed to 30")
    assert again.skills == [] and sim.values["settings.speed"] == 20 and 'The guide "demo-tutor"' in again.text
    dropped = agent.ask("set the colour to blue")  # not a yes: the pending change is dropped
    assert sim.values["settings.speed"] == 20 and sim.values["display.color"] == "blue"
    assert agent.ask("yes").tool_calls == [] and sim.values["settings.speed"] == 20
    assert dropped.ok


def test_an_answer_to_the_question_keeps_the_change_waiting_and_a_reset_is_guarded_too(sim: sb.TargetWidget) -> None:
    agent = sb.Agent(sim, skills=[sb.Skill.from_markdown(TUTOR)])
    agent.ask("set the speed to 20")
    thanks = agent.ask("I am not sure what will happen")  # the student's answer: no request
    assert 'Say "yes" and I will set speed to 20 m/s' in thanks.text and sim.values["settings.speed"] == 8.0
    agent.ask("yes")
    assert sim.values["settings.speed"] == 20
    asked = agent.ask("reset")  # moves speed back to 8: guarded like a set
    assert 'The guide "demo-tutor"' in asked.text and sim.values["settings.speed"] == 20
    agent.ask("yes")
    assert sim.values["settings.speed"] == 8.0


def test_a_waiting_change_is_dropped_when_the_values_moved_meanwhile(sim: sb.TargetWidget) -> None:
    agent = sb.Agent(sim, skills=[sb.Skill.from_markdown(TUTOR)])
    agent.ask("set the speed to 20")
    sim.set_parameter("speed", 30)  # changed in a cell before the yes
    late = agent.ask("yes")
    assert "changed since I asked" in late.text and sim.values["settings.speed"] == 30


def test_a_skill_that_does_not_fit_the_next_target_is_left_out_not_fatal(tmp_path: Path) -> None:
    targets = _targets_with_skills(tmp_path)
    sim = sb.TargetWidget("demo", targets_dir=targets)
    FakeView(sim)
    guard = sb.Skill("guard", "Guards the mode everywhere", "body", confirm_before=("settings.mode",))
    agent = sb.Agent(sim, skills=[guard])
    assert [s.name for s in agent.skills] == ["guard", "demo-physics", "demo-tutor"]
    switched = agent.ask("switch to bouncer")  # bouncer has no settings.mode
    assert switched.ok and sim.target.id == "bouncer", switched.text
    assert [s.name for s in agent.skills] == ["bouncer-basics"]  # guard left out (and logged), the run goes on
    done = agent.ask("set the speed to 5")
    assert done.ok and sim.values["settings.speed"] == 5, done.text


def test_the_planner_changes_what_no_skill_guards(sim: sb.TargetWidget) -> None:
    agent = sb.Agent(sim, skills=[sb.Skill.from_markdown(TUTOR)])
    result = agent.ask("set the count to 5")
    assert result.skills == [] and sim.values["settings.count"] == 5


# -- the built-in targets -----------------------------------------------------------------------


@pytest.mark.parametrize("target", [t.id for t in sb.list_targets() if t.builtin])
def test_each_built_in_target_ships_a_skill_for_its_tutor(target: str) -> None:
    loaded = sb.load_target(target)
    skills = SkillBook().for_target(loaded)  # parsed, confirm_before resolved against the manifest
    assert len(skills) >= 1, f"{target} ships no skill"
    for skill in skills:
        assert skill.when and len(skill.body) > 400, (skill.name, len(skill.body))
