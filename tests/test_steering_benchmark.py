"""The steering benchmark (benchmarks/steering.py, benchmarks/steering_tasks.json).

Pure tests of the scoring (every condition kind, a good and a bad outcome) and of the task file
(well-formed against the targets' manifests); the runner driving a non-offline model through the
fake OpenAI server (tests/fake_providers.py) on a fake view; and, marked ``browser`` (skipped
without Chromium), tasks run end to end on the offline planner, whose verdicts are checked against
the page's own state. No test asserts a success rate.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

import pytest

import splitbrain_widget as sb
from benchmarks import __main__ as bench
from benchmarks import report, steering
from splitbrain_widget.registry import list_targets, load_target

from .fake_providers import FakeProvider, Turn, call
from .fake_view import FakeView

browser = pytest.mark.browser
TASKS: list[dict[str, Any]] = json.loads(steering.TASKS_PATH.read_text())["tasks"]
BUILTIN = {"projectile", "pendulum", "orbits", "waves", "boids", "bouncer"}

BEFORE = {"launch.angle": 45, "launch.speed": 20, "display.show_vectors": True, "display.color": "red"}
AFTER = {**BEFORE, "launch.angle": 30.0}
STATE = {"range": 50.2, "flight_time": 2.9, "status": "orbiting", "period": None}
PLANNER_PUZZLED = (
    'Offline planner: I could not tell which parameter "make it land at 5000 m" is about. I only understand '
    'simple requests. I can set angle (deg), speed (m/s); and answer "what is <parameter>" (observables: range).'
)
OUT_OF_RANGE = "Offline planner: Could not set parameters: launch.angle: 95.0 is above the maximum 90 deg."


def verdict(conditions: list[dict[str, Any]], *, values: dict[str, Any] = AFTER, reply: str = "Done.") -> bool:
    task = {"id": "t", "target": "projectile", "kind": "value", "request": "r", "conditions": conditions}
    passed, why = steering.score(task, values, STATE, reply, BEFORE)
    assert why, "a verdict always says why"
    return passed


# -- scoring: each condition kind, a good and a bad outcome ----------------------------------------

# (condition, holds for AFTER / STATE / "Done.")
CONDITIONS = [
    pytest.param({"value": "launch.angle", "equals": 30}, True, id="value-equals-number"),
    pytest.param({"value": "launch.angle", "equals": 31}, False, id="value-equals-number-bad"),
    pytest.param({"value": "display.color", "equals": "red"}, True, id="value-equals-string"),
    pytest.param({"value": "display.color", "equals": "blue"}, False, id="value-equals-string-bad"),
    pytest.param({"value": "display.show_vectors", "equals": True}, True, id="value-equals-bool"),
    pytest.param({"value": "display.show_vectors", "equals": 1}, False, id="value-equals-bool-is-no-number"),
    pytest.param({"value": "launch.angle", "near": 30.4, "tol": 0.5}, True, id="value-near"),
    pytest.param({"value": "launch.angle", "near": 31, "tol": 0.5}, False, id="value-near-bad"),
    pytest.param({"value": "launch.speed", "at_least": 20, "at_most": 25}, True, id="value-between"),
    pytest.param({"value": "launch.speed", "at_most": 19}, False, id="value-at-most-bad"),
    pytest.param({"value": "launch.height", "equals": 0}, False, id="value-missing"),
    pytest.param({"observable": "range", "near": 50, "tol": 0.5}, True, id="observable-near"),
    pytest.param({"observable": "range", "near": 50, "tol": 0.1}, False, id="observable-near-bad"),
    pytest.param({"observable": "flight_time", "at_least": 2.5}, True, id="observable-at-least"),
    pytest.param({"observable": "flight_time", "at_least": 3}, False, id="observable-at-least-bad"),
    pytest.param({"observable": "status", "equals": "orbiting"}, True, id="observable-equals"),
    pytest.param({"observable": "status", "equals": "escaped"}, False, id="observable-equals-bad"),
    pytest.param({"observable": "period", "near": 3, "tol": 1}, False, id="observable-null"),
    pytest.param({"observable": "max_height", "at_most": 100}, False, id="observable-missing"),
    pytest.param({"unchanged": ["launch.speed", "display.color"]}, True, id="unchanged-listed"),
    pytest.param({"unchanged": ["launch.angle"]}, False, id="unchanged-listed-bad"),
    pytest.param({"unchanged": True}, False, id="unchanged-all-bad"),
    pytest.param({"refused": True}, False, id="refused-bad"),
]


@pytest.mark.parametrize(("condition", "holds"), CONDITIONS)
def test_each_condition_kind_is_scored_on_the_final_values_and_state(condition: dict[str, Any], holds: bool) -> None:
    assert verdict([condition]) is holds


def test_unchanged_holds_when_no_value_moved_and_a_float_equals_its_int() -> None:
    assert verdict([{"unchanged": True}], values={**BEFORE, "launch.angle": 45.0})
    assert not verdict([{"unchanged": True}], values={k: v for k, v in BEFORE.items() if k != "display.color"})


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        (OUT_OF_RANGE, True),
        ("I can't make it land at 5000 m: at 100 m/s, the fastest launch, it lands 1019 m away.", True),
        ("5000 m is out of reach with these settings; nothing was changed.", True),
        ("That is not possible: the wavelength is at most 0.5 m.", True),
        ("Could not bring range to 5000 m: range peaks at 1019 m at launch speed 100 m/s.", True),
        (PLANNER_PUZZLED, False),  # not understanding is no refusal
        ("Sorry, I can't tell which parameter you mean.", False),
        ("Offline planner: Set angle to 30 deg.", False),
        ("", False),
    ],
)
def test_a_refusal_is_a_reply_that_says_the_request_is_out_of_reach(reply: str, refused: bool) -> None:
    assert steering.refuses(reply) is refused
    assert verdict([{"refused": True}, {"unchanged": True}], values=dict(BEFORE), reply=reply) is refused


def test_a_refusal_that_changed_values_fails_and_every_failed_condition_is_named() -> None:
    task = {"conditions": [{"refused": True}, {"unchanged": True}, {"observable": "range", "near": 9, "tol": 1}]}
    passed, why = steering.score(task, AFTER, STATE, OUT_OF_RANGE, BEFORE)
    assert not passed
    assert "changed: launch.angle 45 -> 30" in why and "range = 50.2 (want 9 ± 1)" in why
    assert "refused" not in why  # the condition that held is not listed among the failures


# -- the task file ---------------------------------------------------------------------------------


def test_the_task_file_has_at_least_30_tasks_over_every_builtin_target_with_multi_step_ones_and_refusals() -> None:
    assert len(TASKS) >= 30
    assert {t["target"] for t in TASKS} == BUILTIN
    assert len({t["id"] for t in TASKS}) == len(TASKS), "ids are unique"
    assert sum(1 for t in TASKS if isinstance(t["request"], list) and len(t["request"]) > 1) >= 3
    refusals = [t for t in TASKS if t["kind"] == "refusal"]
    assert len(refusals) >= 6
    assert {t["target"] for t in refusals} == BUILTIN
    assert sum(1 for t in TASKS if t["kind"] == "goal") >= 10
    assert steering.load_tasks() == TASKS  # the runner's own check finds nothing wrong


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
def test_every_task_names_what_its_targets_manifest_holds(task: dict[str, Any]) -> None:
    assert task["target"] in {info.id for info in list_targets()}
    manifest = load_target(task["target"]).manifest
    assert task["kind"] in ("value", "goal", "refusal")
    requests = [task["request"]] if isinstance(task["request"], str) else task["request"]
    assert requests and all(isinstance(r, str) and r.strip() for r in requests)
    wanted: dict[str, Any] = {}
    for cond in task["conditions"]:
        if "value" in cond:
            assert cond["value"] in manifest.parameters, cond
            if "equals" in cond:
                wanted[cond["value"]] = cond["equals"]
        elif "observable" in cond:
            assert cond["observable"] in manifest.observables, cond
        elif "unchanged" in cond:
            assert cond["unchanged"] is True or set(cond["unchanged"]) <= set(manifest.parameters), cond
        else:
            assert cond == {"refused": True}
    if wanted:  # the values a task asks for are ones the manifest accepts
        assert manifest.coerce_many(wanted)
    defaults = manifest.defaults()
    if task["kind"] == "refusal":
        assert {"refused": True} in task["conditions"] and any("unchanged" in c for c in task["conditions"])
        assert task.get("note"), "a refusal task says why the request is out of reach"
    elif all("value" in c for c in task["conditions"]):  # doing nothing must not pass
        assert not steering.score(task, defaults, {}, "", defaults)[0]


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ({"conditions": [{"value": "launch.angel", "equals": 30}]}, "unknown parameter 'launch.angel'"),
        ({"conditions": [{"observable": "reach", "near": 5, "tol": 1}]}, "unknown observable 'reach'"),
        ({"conditions": [{"observable": "range", "near": 5}]}, '"near" needs a number'),
        ({"conditions": [{"observable": "range"}]}, "needs a test"),
        ({"conditions": [{"refused": True}]}, "a refusal task needs"),
        ({"request": []}, "request must be"),
        ({"kind": "wish"}, "kind must be one of"),
    ],
)
def test_the_runner_refuses_a_malformed_task(broken: dict[str, Any], problem: str) -> None:
    task = {"id": "t", "target": "projectile", "kind": "refusal", "request": "make it land at 50 km"}
    task |= {"conditions": [{"refused": True}, {"unchanged": True}]} | broken
    problems = steering.check_task(task, load_target("projectile").manifest)
    assert any(problem in p for p in problems), problems


# -- the section: its CLI arguments and its README row ----------------------------------------------


def test_model_goes_to_the_steering_section_only() -> None:
    assert bench.parse_args(["steering", "--model", "openai:gpt-4o-mini"])[:2] == (["steering"], "openai:gpt-4o-mini")
    assert bench.parse_args(["steering", "--model=local"])[:2] == (["steering"], "local")
    assert bench.parse_args(["steering"])[:2] == (["steering"], None)
    for argv in (["--model", "x"], ["costs", "--model", "x"], ["steering", "--model"]):
        with pytest.raises(SystemExit):
            bench.parse_args(argv)
    assert "steering" in report.SECTIONS  # make bench runs every section


def test_the_smoke_takes_each_kind_a_conversation_and_an_advance_once() -> None:
    picked = steering.smoke_tasks(TASKS)
    assert {task["kind"] for task in picked} == set(steering.KINDS)
    assert any(len(steering.requests_of(task)) > 1 for task in picked)
    assert any("advance" in task for task in picked)
    assert len(picked) == len({task["id"] for task in picked}) <= len(steering.KINDS) + 2


def test_the_readme_row_states_the_models_success_requests_tokens_and_wall_time() -> None:
    rows = [
        {"id": "a", "target": "projectile", "kind": "value", "steps": 1, "passed": True, "model": "offline-planner",
         "requests": 2, "input_tokens": 100, "output_tokens": 16, "tools": ["set_parameters"], "wall_s": 0.2},
        {"id": "b", "target": "pendulum", "kind": "goal", "steps": 2, "passed": False, "model": "offline-planner",
         "requests": 1, "input_tokens": 50, "output_tokens": 120, "tools": [], "wall_s": 0.1},
    ]  # fmt: skip
    section = {"steering": steering.summarise(rows, seconds=3.0)}
    stamp = {"date": "2026-12-01", "cpus": 2, "python": "3.11.7", "load_1m": {"min": 1.0, "max": 2.0}, "seconds": 3}
    results = report.record({}, "steering", section, stamp)
    row = next(line for line in report.table(results).splitlines() if line.startswith("| steering"))
    assert "`offline-planner`" in row and "1/2 passed (50%; value 1/1, goal 0/1)" in row
    assert (
        "3 LLM requests, 150 input / 136 output tokens, 0.3 s answering (3.0 s with the pages)" in row
        and "2026-12-01" in row
    )
    assert "reached 0 of the 1 goals" in report.reading(results)
    assert results["history"]["steering"][0]["steering.success_rate"] == 0.5


# -- the runner with a model at the fake OpenAI server (no browser) ---------------------------------


def fake_page(target: str) -> sb.TargetWidget:
    """A widget of the built-in ``target`` whose fake view applies what it is sent (no physics)."""
    sim = sb.TargetWidget(target)
    FakeView(sim)
    return sim


def test_the_runner_drives_a_model_at_the_fake_openai_server_and_counts_its_usage() -> None:
    task = next(t for t in TASKS if t["id"] == "projectile-angle-30")
    with FakeProvider("openai") as server:
        server.script(
            Turn(
                calls=call("set_parameters", {"values": {"launch.angle": 30}}).calls, input_tokens=120, output_tokens=9
            ),
            Turn(text="The launch angle is 30° now.", input_tokens=150, output_tokens=8),
        )
        figures = steering.run_tasks(
            [task],
            model=f"openai:{server.model}",
            agent_options={"base_url": server.url + "/v1", "api_key": "test-key", "backoff": (0.01,)},
            open_page=fake_page,
            echo=None,
        )
        assert server.unscripted == 0
        assert len(server.model_requests) == 2
    (row,) = figures["rows"]
    assert row["passed"], row
    assert row["model"] == "openai:gpt-test" and figures["model"] == "openai:gpt-test"
    assert row["tools"] == ["set_parameters"]
    assert (row["requests"], row["input_tokens"], row["output_tokens"]) == (2, 270, 17)
    assert (figures["requests"], figures["input_tokens"], figures["output_tokens"]) == (2, 270, 17)
    assert figures["passed"] == 1 and figures["success_rate"] == 1.0 and row["wall_s"] > 0


def run_scripted(task: dict[str, Any], server: FakeProvider, open_page: Any) -> dict[str, Any]:
    """The runner on one task, its model the fake OpenAI server's script."""
    figures: dict[str, Any] = steering.run_tasks(
        [task],
        model=f"openai:{server.model}",
        agent_options={"base_url": server.url + "/v1", "api_key": "test-key"},
        open_page=open_page,
        echo=None,
    )
    return figures


def test_a_task_whose_model_answers_wrong_fails_with_the_reason() -> None:
    task = next(t for t in TASKS if t["id"] == "bouncer-speed-80")
    with FakeProvider("openai") as server:
        server.script(call("set_parameters", {"values": {"settings.speed": 50}}), Turn(text="Set the speed to 50."))
        figures = run_scripted(task, server, fake_page)
    (row,) = figures["rows"]
    assert not row["passed"]
    assert "no refusal" in row["why"] and "settings.speed 8 -> 50" in row["why"]


# -- end to end on headless pages -----------------------------------------------------------------


class Watched(sb.HeadlessTarget):
    """A headless page that keeps the state its page reports right before it closes."""

    last_state: ClassVar[dict[str, Any]] = {}

    def close(self) -> None:
        result = self.fetch_state()
        Watched.last_state = dict(result.state or {})
        super().close()


def textbook_range(speed: float, angle_deg: float, g: float = 9.81) -> float:
    return speed**2 * math.sin(math.radians(2 * angle_deg)) / g


def independent(task_id: str, state: dict[str, Any], reply: str) -> bool:
    """The task's success, read from the page's own report (not through the harness's conditions)."""
    if task_id == "projectile-angle-30":  # applied on the page: its angle, and the flight it computed
        return bool(state["launch.angle"] == 30 and math.isclose(state["range"], textbook_range(20, 30), rel_tol=1e-3))
    if task_id == "projectile-range-50":
        return bool(abs(state["range"] - 50) <= 0.5)
    if task_id == "bouncer-speed-80":  # the page kept its speed, and the reply names the limit
        return bool(state["settings.speed"] == 8 and "50" in reply)
    raise AssertionError(task_id)


@browser
@pytest.mark.parametrize("task_id", ["projectile-angle-30", "projectile-range-50", "bouncer-speed-80"])
def test_the_verdict_on_a_real_page_matches_the_pages_own_state(engine: None, task_id: str) -> None:
    task = next(t for t in TASKS if t["id"] == task_id)
    figures = steering.run_tasks([task], open_page=Watched, echo=None)
    (row,) = figures["rows"]
    assert "error" not in row["why"], row
    assert row["passed"] == independent(task_id, Watched.last_state, row["reply"]), (row, Watched.last_state)
    assert row["model"] == "offline-planner" and row["requests"] >= 1 and row["wall_s"] > 0


@browser
def test_a_model_that_calls_seek_is_scored_on_the_real_page(engine: None) -> None:
    task = next(t for t in TASKS if t["id"] == "projectile-range-50")
    with FakeProvider("openai") as server:
        server.script(
            call("seek", {"observable": "range", "goal": 50, "vary": "launch.speed"}),
            Turn(text="It lands at 50 m now."),
        )
        figures = run_scripted(task, server, Watched)
    (row,) = figures["rows"]
    assert row["tools"] == ["seek"] and row["requests"] == 2
    assert row["passed"] == (abs(Watched.last_state["range"] - 50) <= 0.5), (row, Watched.last_state)
