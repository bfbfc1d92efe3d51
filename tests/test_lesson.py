"""The lesson policy (part of #45): its file, its sources and their precedence, its errors, and what
it refuses an agent, the chat panel's agent and an MCP client — never the student's own code.

The widgets answer through the in-process fake view; over stdio against a headless page:
``tests/test_mcp_clients.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent import Caller, run_tool
from splitbrain_widget.core import _lesson
from splitbrain_widget.core._lesson import LessonError, LessonRefused, lesson_path, parse

from .fake_view import FakeView

ACTION_PAGES = Path(__file__).parent / "fixtures" / "action_pages"
LESSON = """\
[agents]
enabled = true

[mcp]
enabled = true
apps = false

[targets.projectile.parameters]
"launch.angle" = { min = 10, max = 60 }
"launch.speed" = { approval = true }

[targets.counter]
actions = ["add"]
"""


@pytest.fixture(autouse=True)
def nowhere_else(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No lesson from this machine: no variable, no Jupyter config directory, an empty working one."""
    monkeypatch.delenv(_lesson.ENV_VAR, raising=False)
    monkeypatch.delenv(_lesson.NOTEBOOK_VAR, raising=False)
    monkeypatch.setattr(_lesson, "_config_dirs", lambda: [tmp_path / "config" / "splitbrain"])
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def in_force(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The lesson above, set the way a JupyterHub sets it: the variable."""
    path = write(tmp_path / "hub" / "lesson.toml", LESSON)
    monkeypatch.setenv(_lesson.ENV_VAR, str(path))
    return path


def call(sim: sb.TargetWidget, tool: str, arguments: dict[str, Any], ask: Any = None) -> dict[str, Any]:
    """One call as an MCP client or the agent makes it (``agent.run_tool``: approval and lesson)."""
    return asyncio.run(run_tool(sim, tool, arguments, Caller("mcp: test"), ask=ask))


# -- the file -------------------------------------------------------------------------------------


def test_a_lesson_file_parses_into_its_rules() -> None:
    policy = parse(LESSON, "lesson.toml")
    assert policy.mcp.apps is False and policy.agents.enabled is True
    angle = policy.targets["projectile"].parameters["launch.angle"]  # type: ignore[index]
    assert (angle.min, angle.max, angle.approval) == (10, 60, False)
    assert policy.targets["counter"].actions == ["add"] and policy.targets["counter"].parameters is None
    as_json = parse(json.dumps(policy.model_dump()), "lesson.json", toml=False)
    assert as_json == policy


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[agents\nenabled = true", r"lesson.toml: not valid TOML"),
        (
            '[targets.projectile.parameters]\n"launch.angle" = { min = "ten" }',
            r"field 'targets.projectile.parameters.launch.angle.min'",
        ),
        ('[targets.projectile.parameters]\n"launch.angle" = { min = 60, max = 10 }', r"min 60 is above max 10"),
        ("[agents]\nenabld = false", r"field 'agents.enabld': Extra inputs are not permitted"),
        ("[mcp]\nenabled = 'no'", r"field 'mcp.enabled'"),
    ],
)
def test_a_bad_lesson_file_is_one_error_naming_the_file_and_the_field(text: str, expected: str) -> None:
    with pytest.raises(LessonError, match=expected) as caught:
        parse(text, "lesson.toml")
    assert str(caught.value).startswith("lesson.toml: ")


def test_the_schema_in_docs_is_the_models() -> None:
    docs = Path(__file__).resolve().parent.parent / "docs" / "lesson.schema.json"
    assert docs.read_text(encoding="utf-8") == _lesson.schema_text(), "regenerate: see docs/lessons.md"


# -- where it comes from ----------------------------------------------------------------------------


def test_the_variable_wins_then_a_jupyter_config_directory_then_the_notebooks_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert lesson_path() is None and sb.lesson() is None
    beside = write(tmp_path / "work" / "lesson.toml", "[agents]\nenabled = true\n")
    assert lesson_path().resolve() == beside.resolve()  # type: ignore[union-attr]
    config = write(tmp_path / "config" / "splitbrain" / "lesson.json", '{"agents": {"enabled": false}}')
    assert lesson_path() == config
    hub = write(tmp_path / "hub.toml", "[mcp]\nenabled = false\n")
    monkeypatch.setenv(_lesson.ENV_VAR, str(hub))
    assert lesson_path() == hub
    found = sb.lesson()
    assert found is not None and found.source == str(hub.resolve()) and found.policy.mcp.enabled is False
    assert "MCP server off" in repr(found)
    monkeypatch.setenv(_lesson.ENV_VAR, str(tmp_path / "missing.toml"))
    with pytest.raises(LessonError, match=r"SPLITBRAIN_LESSON=.*missing.toml: no such file"):
        sb.lesson()


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    path = write(tmp_path / "work" / "lesson.toml", "[agents]\nenabled = true\n")
    assert sb.lesson().policy.agents.enabled is True  # type: ignore[union-attr]
    path.write_text("[agents]\nenabled = false\n# longer, so the size differs too\n", encoding="utf-8")
    assert sb.lesson().policy.agents.enabled is False  # type: ignore[union-attr]


# -- what it refuses --------------------------------------------------------------------------------


def test_a_value_outside_the_lessons_range_is_refused_naming_the_rule_and_the_page_is_untouched(
    in_force: Path, projectile: sb.TargetWidget
) -> None:
    sent = len(projectile.host.requests)  # type: ignore[attr-defined]
    out = call(projectile, "set_parameters", {"values": {"launch.angle": 80}})
    assert out["ok"] is False and out["error"]["code"] == "denied"
    assert out["error"]["message"] == f"the lesson ({in_force.resolve()}) allows 'launch.angle' within 10..60, not 80"
    assert projectile.values["launch.angle"] == 45 and len(projectile.host.requests) == sent  # type: ignore[attr-defined]
    assert call(projectile, "set_parameters", {"values": {"angle": 30}})["ok"] is True  # a leaf name resolves
    assert projectile.values["launch.angle"] == 30


def test_a_parameter_the_lesson_does_not_list_is_refused(in_force: Path, projectile: sb.TargetWidget) -> None:
    out = call(projectile, "set_parameters", {"values": {"environment.gravity": 1.6}})
    assert out["error"]["code"] == "denied"
    assert "does not let agents change 'environment.gravity'" in out["error"]["message"]
    assert "launch.angle, launch.speed" in out["error"]["message"]
    assert projectile.values["environment.gravity"] == 9.81


def test_a_seek_over_a_narrowed_range_is_refused(in_force: Path, projectile: sb.TargetWidget) -> None:
    out = call(projectile, "seek", {"observable": "range", "goal": 30, "vary": "launch.angle"})
    assert out["error"]["code"] == "denied" and "a seek would try values outside it" in out["error"]["message"]


def test_the_lesson_puts_a_parameter_under_the_students_approval(in_force: Path, projectile: sb.TargetWidget) -> None:
    asked: list[list[str]] = []

    async def ask(_tool: str, _arguments: dict[str, Any], paths: list[str]) -> tuple[bool, str]:
        asked.append(paths)
        return paths == ["launch.speed"], "no"

    assert projectile.approval == {}  # the widget's own policy asks nothing
    assert call(projectile, "set_parameters", {"values": {"launch.speed": 25}}, ask=ask)["ok"] is True
    assert asked == [["launch.speed"]] and projectile.values["launch.speed"] == 25
    assert call(projectile, "set_parameters", {"values": {"launch.angle": 20}}, ask=ask)["ok"] is True
    assert asked == [["launch.speed"]]  # the angle needs none


def test_an_action_the_lesson_does_not_list_is_refused(in_force: Path) -> None:
    ran: list[str] = []
    sim = sb.TargetWidget("counter", targets_dir=ACTION_PAGES, timeout=5)
    FakeView(sim, on_action=lambda name, _values: ran.append(name) or {"count": len(ran)})
    try:
        out = call(sim, "run_action", {"name": "clear"})
        assert (
            out["error"]["code"] == "denied"
            and "does not let agents run 'clear' (actions allowed: add)" in out["error"]["message"]
        )
        assert call(sim, "run_action", {"name": "add"})["ok"] is True
        assert ran == ["add"]
    finally:
        sim.close()


READS = '[targets.projectile]\nobservables = ["range"]\n'


def measured(values: dict[str, Any]) -> dict[str, Any]:
    """A projectile page that reports three observables, nested ones too."""
    return {"range": 40.0, "max_height": 10.0, "observables": {"flight_time": 2.9, "range": 40.0}, **values}


@pytest.fixture
def reads_range(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "reads.toml", READS)))
    sim = sb.TargetWidget("projectile", timeout=5)
    FakeView(sim, state_of=measured)
    sim.fetch_state()
    yield sim
    sim.close()


def page_state(out: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(out["page_data"]["state"]))


def test_the_lesson_says_which_observables_agents_read_in_every_result(reads_range: sb.TargetWidget) -> None:
    sim = reads_range
    for tool, arguments in [("fetch_state", {}), ("set_parameters", {"values": {"launch.angle": 30}})]:
        state = page_state(call(sim, tool, arguments))
        assert state["range"] == 40.0 and state["observables"] == {"range": 40.0}, tool
        assert "max_height" not in state and state["launch.angle"] == sim.values["launch.angle"], tool
    words = call(sim, "describe", {})["text"]
    assert words.endswith("The page measures: range 40 m.") and "max height" not in words and "flight" not in words
    assert sim.state["max_height"] == 10.0  # the student's own code reads everything
    assert "max height 10 m" in sim.describe()


def test_what_the_lesson_hides_is_refused_and_never_named_to_an_agent(reads_range: sb.TargetWidget) -> None:
    from splitbrain_widget.agent import scope_of, specs_for
    from splitbrain_widget.agent._tools import system_prompt

    sim = reads_range
    snapshot = call(sim, "snapshot", {})
    assert snapshot["error"]["code"] == "denied" and "a picture shows them all" in snapshot["error"]["message"]
    seek = call(sim, "seek", {"observable": "max_height", "goal": "max"})
    assert seek["error"]["message"].endswith("does not let agents read 'max_height' (observables allowed: range)")
    (schema,) = [s.schema for s in specs_for(sim) if s.name == "seek"]
    assert schema["properties"]["observable"]["enum"] == ["range"]
    prompt = system_prompt(scope_of(sim), dict(sim.values))
    assert "- range (m)" in prompt and "max_height" not in prompt and "flight_time" not in prompt


def test_an_mcp_clients_resources_hold_what_the_lesson_lets_it_read(reads_range: sb.TargetWidget) -> None:
    from .test_mcp_eras import post, reply

    server = sb.serve_mcp(reads_range)
    try:
        (served,) = server.widgets()

        def read(kind: str) -> dict[str, Any]:
            uri = f"splitbrain://{served['id']}/{kind}"
            return dict(
                json.loads(reply(post(server, "resources/read", {"uri": uri}))["result"]["contents"][0]["text"])
            )

        state, manifest = read("state")["page_data"]["state"], read("manifest")
    finally:
        server.stop()
    assert state["range"] == 40.0 and "max_height" not in state and state["observables"] == {"range": 40.0}
    assert list(manifest["observables"]) == ["range"]  # the hidden ones are not named either
    assert manifest["parameters"] == reads_range.manifest["parameters"]
    assert len(reads_range.manifest["observables"]) > 1  # the student's own code sees them all


def test_a_lesson_naming_an_observable_the_page_does_not_declare_refuses_every_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, projectile: sb.TargetWidget
) -> None:
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "typo.toml", READS.replace('"range"', '"rnage"'))))
    out = call(projectile, "fetch_state", {})
    assert out["error"]["code"] == "denied"
    assert (
        "field 'targets.projectile.observables': projectile's manifest declares no observable 'rnage'"
        in (out["error"]["message"])
    )


def test_the_students_own_code_is_not_under_the_lesson(in_force: Path, projectile: sb.TargetWidget) -> None:
    assert projectile.set_parameter("launch.angle", 80).ok  # documented: the lesson binds agents and clients
    assert projectile.values["launch.angle"] == 80


@pytest.mark.parametrize(
    ("text", "expected", "agent_refused"),
    [
        # a rule naming no parameter of the target's manifest (a typo): read only half
        (
            '[targets.projectile.parameters]\n"launch.angel" = { max = 60 }\n',
            "'targets.projectile.parameters.launch.angel'",
            False,
        ),
        ("[agents]\nenabled = maybe\n", "not valid TOML", True),  # no file at all
    ],
)
def test_nothing_an_agent_asks_runs_under_a_lesson_half_read(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    projectile: sb.TargetWidget,
    text: str,
    expected: str,
    agent_refused: bool,
) -> None:
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "policy.toml", text)))
    out = call(projectile, "set_parameters", {"values": {"launch.angle": 30}})
    assert out["error"]["code"] == "denied" and "the lesson policy cannot be read" in out["error"]["message"]
    assert expected in out["error"]["message"] and "policy.toml" in out["error"]["message"]
    assert projectile.values["launch.angle"] == 45
    if agent_refused:
        with pytest.raises(LessonError, match=r"policy\.toml: not valid TOML"):
            sb.Agent(projectile)


# -- agents and MCP, on or off --------------------------------------------------------------------------


@pytest.fixture
def everything_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = write(tmp_path / "exam.toml", "[agents]\nenabled = false\n\n[mcp]\nenabled = false\n")
    monkeypatch.setenv(_lesson.ENV_VAR, str(path))
    return path


def test_agents_off_refuses_an_agent_and_an_agent_made_before(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, projectile: sb.TargetWidget, fake: Any
) -> None:
    from .fake_providers import make_agent, say

    model = fake("openai").script(repeat=say("Done."))  # a model server on loopback, counting requests
    before = make_agent(projectile, model)  # made before the lesson: it may not answer under it
    path = write(tmp_path / "exam.toml", "[agents]\nenabled = false\n")
    monkeypatch.setenv(_lesson.ENV_VAR, str(path))
    with pytest.raises(LessonRefused, match=r"the lesson \(.*exam.toml\) turns agents off"):
        sb.Agent(projectile)
    with pytest.raises(LessonRefused, match="turns agents off"):
        make_agent(projectile, model)
    with pytest.raises(LessonRefused, match="turns agents off"):
        before.ask("set the angle to 30")
    assert projectile.values["launch.angle"] == 45 and model.requests == []  # nothing reached the model
    monkeypatch.delenv(_lesson.ENV_VAR)
    before.ask("hello")
    assert len(model.requests) >= 1  # the same agent, the lesson gone: it does reach its model


def test_mcp_off_refuses_the_server_the_cli_and_apps(
    everything_off: Path, projectile: sb.TargetWidget, capsys: pytest.CaptureFixture[str]
) -> None:
    from splitbrain_widget.mcp import app_target, cli_main

    with pytest.raises(LessonRefused, match="does not let the MCP server start"):
        sb.serve_mcp(projectile)
    assert cli_main(["projectile"]) == 2
    assert "does not let the MCP server start" in capsys.readouterr().err
    with pytest.raises(LessonRefused, match="MCP Apps"):
        app_target("projectile")


def test_an_mcp_client_meets_the_same_refusal(in_force: Path, projectile: sb.TargetWidget) -> None:
    from .test_mcp_eras import post, reply

    server = sb.serve_mcp(projectile)
    try:
        call_ = {"name": "projectile__set_parameters", "arguments": {"values": {"launch.angle": 80}}}
        result = reply(post(server, "tools/call", call_))["result"]
    finally:
        server.stop()
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == {
        "code": "denied",
        "message": f"the lesson ({in_force.resolve()}) allows 'launch.angle' within 10..60, not 80",
    }
    assert projectile.values["launch.angle"] == 45


def test_the_sdks_client_over_http_meets_the_same_refusals(in_force: Path, projectile: sb.TargetWidget) -> None:
    """The official client, over streamable HTTP (the stdio one: tests/test_mcp_clients.py)."""
    from .test_mcp import client, run

    server = sb.serve_mcp(projectile)

    async def go() -> tuple[Any, Any]:
        async with client(server) as session:
            refused = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 80}})
            allowed = await session.call_tool("projectile__set_parameters", {"values": {"launch.angle": 20}})
            return refused, allowed

    try:
        refused, allowed = run(go())
    finally:
        server.stop()
    assert refused.is_error and refused.structured_content["error"]["message"] == (
        f"the lesson ({in_force.resolve()}) allows 'launch.angle' within 10..60, not 80"
    )
    assert not allowed.is_error and projectile.values["launch.angle"] == 20


def test_the_chat_panel_says_agents_are_off_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from .test_chat import chat_sim, say

    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "exam.toml", "[agents]\nenabled = false\n")))
    sim, _sent = chat_sim()
    try:
        say(sim, "set the speed to 12")
        assert sim.values["settings.speed"] != 12
        (entry,) = sim.transcript
        assert entry["role"] == "error" and "turns agents off" in entry["text"] and "exam.toml" in entry["text"]
    finally:
        sim.close()


# -- the lesson log -------------------------------------------------------------------------------------


def test_three_chat_turns_and_two_mcp_calls_are_five_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from .test_chat import chat_sim, say
    from .test_mcp_eras import post, reply

    log = tmp_path / "logs" / "ada.jsonl"
    policy = f'[log]\npath = "{log}"\n\n[targets.demo.parameters]\n"settings.speed" = {{ max = 30 }}\n'
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "lesson.toml", policy)))
    sim, _sent = chat_sim()
    server = sb.serve_mcp(sim)
    try:
        for words in ("set the speed to 12", "set the speed to 50", "set the speed to 20"):
            say(sim, words)
        for name, arguments in (("set_parameters", {"values": {"settings.speed": 7}}), ("fetch_state", {})):
            assert reply(post(server, "tools/call", {"name": f"demo__{name}", "arguments": arguments}))["result"]
    finally:
        server.stop()
        sim.close()
    table = sb.lesson_log()
    assert list(table["kind"]) == ["chat", "chat", "chat", "mcp", "mcp"]
    assert list(table["asked"]) == ["set the speed to 12", "set the speed to 50", "set the speed to 20",
                                    "set_parameters", "fetch_state"]  # fmt: skip
    first = table.iloc[0]
    assert first["caller"] == "chat: set the speed to 12" and first["model"] == "offline-planner"
    assert first["changed"] == {"settings.speed": {"value": 12, "unit": "m/s"}}
    assert first["calls"][0]["tool"] == "set_parameters" and first["calls"][0]["result"]["ok"] is True
    assert set(first["tokens"]) == {"requests", "input", "output"} and first["answer"].startswith("Offline planner")
    assert isinstance(first["before"], dict) and isinstance(first["after"], dict)
    refused = table.iloc[1]["refused"]
    assert refused and "allows 'settings.speed' within ..30, not 50" in refused[0]  # the lesson's own words
    assert table.iloc[3]["caller"] == "mcp: raw" and table.iloc[3]["changed"]["settings.speed"]["value"] == 7
    assert list(sb.lesson_log(log)["asked"]) == list(table["asked"])  # the same file, named


def test_the_log_rotates_at_its_bound(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from splitbrain_widget.core import _lesson_log

    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(
        _lesson.ENV_VAR, str(write(tmp_path / "lesson.toml", f'[log]\npath = "{log}"\nmax_bytes = 1000\n'))
    )
    for n in range(12):
        _lesson_log.write(
            "mcp", "mcp: test", f"call {n}", [{"tool": "fetch_state", "arguments": {}, "result": {"ok": True}}]
        )
    older = log.with_name("log.jsonl.1")
    assert older.exists() and log.stat().st_size <= 1000 and older.stat().st_size <= 1000
    asked = list(sb.lesson_log()["asked"])
    assert asked == [f"call {n}" for n in range(12 - len(asked), 12)] and len(asked) < 12  # the oldest went


def saved_notebook(model_id: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notebook being saved, as jupyter_server hands it to a pre-save hook: one widget output."""
    view = {"model_id": model_id, "version_major": 2, "version_minor": 0}
    output = {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": view}, "metadata": {}}
    cell = {"cell_type": "code", "source": "sim", "outputs": [output], "metadata": {}, "execution_count": 1}
    content = {"cells": [cell], "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}
    return {"type": "notebook", "content": content}


def test_the_log_goes_into_the_notebook_when_it_is_saved_and_stays(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from splitbrain_widget.core import _lesson_log, _lesson_notebook

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "lesson.toml", "[log]\nnotebook = true\n")))
    for n in range(3):
        _lesson_log.write("chat", f"chat: turn {n}", f"turn {n}", [], widget="w1", answer="ok")
    _lesson_log.write("mcp", "mcp: other", "fetch_state", [], widget="elsewhere")  # another notebook's widget
    model = saved_notebook("w1", {"kernelspec": {"name": "python3"}})
    _lesson_notebook.add_log(model=model, path="ada.ipynb")
    kept = model["content"]["metadata"]["splitbrain"]["lesson_log"]
    assert [r["asked"] for r in kept] == ["turn 0", "turn 1", "turn 2"] and model["content"]["metadata"]["kernelspec"]
    _lesson_notebook.add_log(model=model)  # saved again: each record once
    assert len(model["content"]["metadata"]["splitbrain"]["lesson_log"]) == 3
    later = saved_notebook("w2", model["content"]["metadata"])  # the kernel restarted: a new widget
    _lesson_log.write("chat", "chat: turn 3", "turn 3", [], widget="w2")
    _lesson_notebook.add_log(model=later)
    assert [r["asked"] for r in later["content"]["metadata"]["splitbrain"]["lesson_log"]][-2:] == ["turn 2", "turn 3"]
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "file-only.toml", f'[log]\npath = "{tmp_path}/f"\n')))
    _lesson_log.write("chat", "chat: unkept", "unkept", [], widget="w3")
    assert _lesson_notebook.kept("w3") == []  # the lesson keeps no log in notebooks


def test_the_report_on_a_folder_of_three_students_lists_each_ones_turns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Three saved notebooks (the log in their metadata, put there by the server's pre-save hook),
    and one student's log file too: each record once."""
    import subprocess
    import sys

    from splitbrain_widget.core import _lesson_log, _lesson_notebook

    folder = tmp_path / "class"
    folder.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    for student, words in (("ada", ["make it faster"]), ("bo", ["angle 80", "angle 30"]), ("cy", ["reset it"])):
        log = f'path = "{folder / student}.jsonl"\n' if student == "bo" else ""
        policy = write(tmp_path / f"{student}.toml", f"[log]\nnotebook = true\n{log}")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(_lesson.ENV_VAR, str(policy))
            for said in words:
                refusal = {"code": "denied", "message": "the lesson (x) allows 'launch.angle' within 10..60, not 80"}
                result = (
                    {"ok": False, "error": refusal}
                    if "80" in said
                    else {"ok": True, "changed": {"launch.angle": {"value": 30, "unit": "deg"}}}
                )
                _lesson_log.write(
                    "chat",
                    f"chat: {said}",
                    said,
                    [{"tool": "set_parameters", "arguments": {}, "result": result}],
                    widget=f"widget-of-{student}",
                    answer="done",
                )
        model = saved_notebook(f"widget-of-{student}")
        _lesson_notebook.add_log(model=model)
        (folder / f"{student}.ipynb").write_text(json.dumps(model["content"]), encoding="utf-8")
    assert len(sb.lesson_log(folder / "bo.ipynb")) == 2  # a notebook reads as a log does
    out = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "lesson-report", str(folder), "-o", str(out)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert page.count("<table>") == 3 and "ada: 1 turns and calls, 0 refused" in page
    assert "bo: 2 turns and calls, 1 refused" in page and "cy: 1 turns and calls" in page
    assert "within 10..60, not 80" in page and "launch.angle = 30 deg" in page
    empty = subprocess.run(
        [sys.executable, "-m", "splitbrain_widget", "lesson-report", str(tmp_path / "nobody")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert empty.returncode == 2 and "not a folder of students' notebooks or lesson logs" in empty.stderr


def test_the_notebooks_own_metadata_is_the_last_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    notebook = tmp_path / "work" / "lab.ipynb"
    cells = {"cells": [], "nbformat": 4, "nbformat_minor": 5}
    notebook.write_text(json.dumps({**cells, "metadata": {"splitbrain": {"lesson": {"mcp": {"enabled": False}}}}}))
    monkeypatch.setenv(_lesson.NOTEBOOK_VAR, str(notebook))  # as jupyter_server tells its kernels
    found = sb.lesson()
    assert found is not None and found.policy.mcp.enabled is False
    assert found.source == f"{notebook.resolve()} (metadata splitbrain.lesson)"
    write(tmp_path / "work" / "lesson.toml", "[mcp]\nenabled = true\n")  # beside the notebook: it wins
    assert sb.lesson().policy.mcp.enabled is True  # type: ignore[union-attr]
    (tmp_path / "work" / "lesson.toml").unlink()
    notebook.write_text(json.dumps({**cells, "metadata": {"splitbrain": {"lesson": {"mcp": {"enabled": "no"}}}}}))
    with pytest.raises(LessonError, match=r"lab\.ipynb \(metadata splitbrain\.lesson\): field 'mcp\.enabled'"):
        sb.lesson()


@pytest.mark.parametrize(
    ("models", "model", "base_url", "refused"),
    [
        ('"offline"', "offline", None, None),
        ('"offline"', "openai:gpt-4o", None, "allows the offline planner only, not openai:gpt-4o"),
        ('"local"', "openai:qwen", "http://127.0.0.1:9/v1", None),
        ('"local"', "openai:gpt-4o", None, "allows the offline planner and models on this machine, not openai:gpt-4o"),
        ('["anthropic"]', "openai:gpt-4o", None, "allows the offline planner and anthropic, not openai:gpt-4o"),
    ],
)
def test_the_lesson_says_which_models_may_answer(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    projectile: sb.TargetWidget,
    models: str,
    model: str,
    base_url: str | None,
    refused: str | None,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "models.toml", f"[agents]\nmodels = {models}\n")))
    if refused is None:
        agent = sb.Agent(projectile, model=model, base_url=base_url, api_key="unused" if base_url else None)
        assert agent.model
    else:
        with pytest.raises(LessonRefused, match=refused):
            sb.Agent(projectile, model=model)


def test_the_lesson_bounds_requests_and_seconds_per_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, projectile: sb.TargetWidget
) -> None:
    policy = "[agents]\nmax_requests = 3\nmax_seconds = 20\n"
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "bounds.toml", policy)))
    agent = sb.Agent(projectile, usage_limits={"request_limit": 40}, run_timeout=300)
    assert agent._runtime.usage_limits.request_limit == 3 and agent._runtime.bounds.run_timeout == 20
    assert "agents on; at most 3 requests an answer; at most 20 s an answer" in repr(sb.lesson())
    tighter = sb.Agent(projectile, usage_limits={"request_limit": 2}, run_timeout=5)
    assert tighter._runtime.usage_limits.request_limit == 2 and tighter._runtime.bounds.run_timeout == 5


def test_the_chat_panel_is_told_the_lesson_in_force(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from .test_chat import chat_sim, say

    sim, _sent = chat_sim()
    try:
        assert sim.chat_lesson == ""  # no lesson: the panel shows no line
        policy = write(tmp_path / "lesson.toml", '[targets.demo.parameters]\n"settings.speed" = { max = 30 }\n')
        monkeypatch.setenv(_lesson.ENV_VAR, str(policy))
        say(sim, "set the speed to 50")  # a policy put in place while the panel is open: shown at the next message
        assert (
            sim.chat_lesson
            == f"Lesson policy ({policy.resolve()}): agents on; MCP server allowed; MCP Apps allowed; demo: parameters settings.speed ..30"
        )
        tool = next(e for e in sim.transcript if e["role"] == "tool")
        assert not tool["ok"] and "allows 'settings.speed' within ..30, not 50" in json.dumps(tool)
        policy.write_text("[agents\n", encoding="utf-8")
        say(sim, "set the speed to 20")
        assert sim.chat_lesson.startswith("Lesson policy cannot be read: ") and "not valid TOML" in sim.chat_lesson
    finally:
        sim.close()


def test_a_record_past_its_bound_is_cut_and_still_one_json_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from splitbrain_widget.core import _lesson_log

    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "lesson.toml", f'[log]\npath = "{log}"\n')))
    big = {"ok": True, "changed": {f"p{n}": {"value": "x" * 50} for n in range(40)}, "state": {"s": "y" * 500}}
    _lesson_log.write("mcp", "mcp: test", "sweep", [{"tool": "sweep", "arguments": {}, "result": big}] * 2000)
    (line,) = log.read_text(encoding="utf-8").splitlines()
    assert len(line) <= _lesson_log.MAX_RECORD_CHARS
    record = json.loads(line)
    assert record["calls"] == {"count": 2000, "cut": True} and record["asked"] == "sweep"


def test_a_save_keeps_the_records_an_earlier_save_added_though_the_frontend_never_saw_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The frontend's notebook lacks what the hook added at the previous save; the records on disk
    stay even once the runtime folder has lost them (halved, pruned, another machine)."""
    from splitbrain_widget.core import _lesson_log, _lesson_notebook

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "lesson.toml", "[log]\nnotebook = true\n")))
    _lesson_log.write("chat", "chat: first", "first", [], widget="w1")
    first = saved_notebook("w1")
    _lesson_notebook.add_log(model=first)
    on_disk = tmp_path / "ada.ipynb"
    on_disk.write_text(json.dumps(first["content"]), encoding="utf-8")

    class Contents:  # what jupyter_server's contents manager answers for the file
        def file_exists(self, path: str) -> bool:
            return (tmp_path / path).is_file()

        def get(self, path: str, content: bool, type: str) -> dict[str, Any]:
            return {"content": json.loads((tmp_path / path).read_text(encoding="utf-8"))}

    for kept_file in (tmp_path / "runtime" / _lesson_notebook.DIR_NAME).glob("*.jsonl"):
        kept_file.unlink()  # the runtime folder lost it
    again = saved_notebook("w1")  # the frontend's model: no records in its metadata
    _lesson_notebook.add_log(model=again, path="ada.ipynb", contents_manager=Contents())
    assert [r["asked"] for r in again["content"]["metadata"]["splitbrain"]["lesson_log"]] == ["first"]


def test_a_new_targets_result_is_read_under_its_own_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """select_target ends on another target: its result's state is filtered with that target's rule."""
    policy = '[targets.pendulum]\nobservables = ["period"]\n'
    monkeypatch.setenv(_lesson.ENV_VAR, str(write(tmp_path / "reads.toml", policy)))
    sim = sb.TargetWidget("projectile", timeout=5)
    FakeView(sim, state_of=lambda values: {"period": 2.0, "energy": 99.0, "angle2": 7.0, **values})
    try:
        out = call(sim, "select_target", {"target": "pendulum"})
        state = page_state(out)
        assert state.get("period") == 2.0 and "energy" not in state and "angle2" not in state, state
    finally:
        sim.close()
