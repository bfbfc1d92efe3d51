"""The benchmark report says only what was measured (benchmarks/report.py, benchmarks/__main__.py).

Plain unit tests, no browser and no measuring: sections are faked, results dicts are fed in. The
agent-efficiency comparison over the wire talks to the fake providers on 127.0.0.1; the counter
target's frame count runs its script under node with a scripted requestAnimationFrame.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks import __main__ as bench
from benchmarks import agent_efficiency, report

ROOT = Path(__file__).resolve().parents[1]
COUNTER = ROOT / "benchmarks" / "targets" / "counter.html"
OLD_DATE, NEW_DATE = "2026-11-29", "2026-12-01"
# The sections whose figures LEGACY (below) holds: results.json before sections carried their own dates.
LEGACY_SECTIONS = ["costs", "roundtrip_scripted", "agent_efficiency", "browser", "burst_stream", "target_fps"]

# results.json as it was before sections carried their own dates: one "machine" date for all.
LEGACY: dict[str, Any] = {
    "import_s": {"median": 0.131, "runs": 5, "heavy_modules_imported": []},
    "widget_create_ms": 3.792,
    "memory_per_widget_kib": 64.8,
    "memory_per_1000_audit_entries_kib": 391.7,
    "note": "no view attached",
    "js_bytes": {"target_api.js": 3956, "widget.js": 37916},
    "roundtrip_scripted_ms": {"median": 0.97, "p95": 1.096, "p99": 1.285, "mean": 0.978, "n": 500},
    "agent_requests_ratio": 5.0,
    "agent_prompt_tokens_ratio": 6.2,
    "agent_tasks": [],
    "roundtrip_browser_ms": {"median": 3.215, "p95": 5.755, "p99": 7.293, "mean": 3.591, "n": 500},
    "roundtrip_browser_nodelay_off_ms": {"median": 3.254, "p95": 5.847, "p99": 7.454, "mean": 3.642, "n": 500},
    "nodelay_speedup": 1.01,
    "roundtrip_browser_echo_per_call_ms": {"median": 4.219, "p95": 7.668, "p99": 11.166, "mean": 4.662, "n": 500},
    "deferred_echo_speedup": 1.31,
    "roundtrip_browser_echo_per_call_nodelay_off_ms": {
        "median": 47.494,
        "p95": 51.365,
        "p99": 53.76,
        "mean": 40.981,
        "n": 500,
    },
    "nodelay_speedup_echo_per_call": 11.26,
    "roundtrip_browser_hops": {
        "in_view_ms": {"median": 1.3},
        "iframe_and_target_ms": {"median": 1.0},
        "kernel_wire_and_server_ms_median": 1.915,
    },
    "burst": {
        "sent": 10000,
        "replied_ok": 10000,
        "applied": 10000,
        "in_order": True,
        "duplicates": 0,
        "drain_ms": 16712,
        "total_s": 18.31,
    },
    "stream": {
        "applied_per_s": 542,
        "fps": 156,
        "in_order": True,
        "given": 9843,
        "coalesced": {
            "given": 9999,
            "applied": 2582,
            "applied_per_s": 258,
            "last": 9998,
            "fps": 120,
            "coalesced": 7417,
        },
    },
    "target_fps": {"projectile": 58.9, "pendulum": 60.0},
    "machine": {"python": "3.11.7", "cpus": 2, "date": OLD_DATE},
}
COSTS = {
    "import_s": {"median": 0.2, "runs": 5, "heavy_modules_imported": []},
    "widget_create_ms": 4.0,
    "memory_per_widget_kib": 70.0,
    "memory_per_1000_audit_entries_kib": 400.0,
    "note": "no view attached",
    "js_bytes": {"target_api.js": 4000, "widget.js": 38000},
}
README = f"""# project

Intro written by someone else.

## Benchmarks

`make bench` measures these:

{report.START}
| figure | value |
|---|---|
| old | table |

Measured {OLD_DATE} on 2 cores by `make bench`.
{report.END}

Reading these: a fixed paragraph that said "about 550 calls/s"
over two lines.

## Tests

Someone else's section.
"""


def stamp(date: str = NEW_DATE, load: tuple[float, float] = (0.5, 1.5)) -> report.Stamp:
    return {"date": date, "cpus": 2, "python": "3.11.7", "load_1m": {"min": load[0], "max": load[1]}, "seconds": 1}


def table_dates(readme: str) -> dict[str, str]:
    """Row label -> the date in its "measured" column."""
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.match(r"\d{4}-\d\d-\d\d", cells[2]):
            rows[cells[0]] = cells[2][:10]
    return rows


# -- 1. a section's date is its own ----------------------------------------------------------------


def test_running_one_section_leaves_the_other_sections_dates_and_figures(tmp_path: Path) -> None:
    results_path, readme_path = tmp_path / "results.json", tmp_path / "README.md"
    results_path.write_text(json.dumps(LEGACY))
    readme_path.write_text(README)

    def fake_measure(name: str, runner: Any) -> tuple[dict[str, Any], report.Stamp]:
        assert name == "costs", "only the section asked for runs"
        return copy.deepcopy(COSTS), stamp()

    bench.main(["costs"], results_path=results_path, readme_path=readme_path, measure_section=fake_measure)

    results = json.loads(results_path.read_text())
    measured = results["measured"]
    assert measured["costs"]["date"] == NEW_DATE
    assert measured["costs"]["load_1m"] == {"min": 0.5, "max": 1.5}
    others = {name: entry["date"] for name, entry in measured.items() if name != "costs"}
    assert others == {name: OLD_DATE for name in LEGACY_SECTIONS if name != "costs"}
    for key, value in LEGACY.items():  # the other sections' figures are untouched
        if key not in COSTS and key != "machine":
            assert results[key] == value, key
    assert results["widget_create_ms"] == 4.0

    dates = table_dates(readme_path.read_text())
    assert dates["widget creation"] == NEW_DATE
    assert dates["`import splitbrain_widget`"] == NEW_DATE
    assert dates["round trip kernel -> iframe -> kernel, JupyterLab + Chromium"] == OLD_DATE
    assert dates["burst: 10000 applies issued before the target is ready"] == OLD_DATE
    assert dates["round trip with a scripted frontend (the floor)"] == OLD_DATE
    assert "2026-12-01, load 0.5–1.5" in readme_path.read_text()

    # and again for another section: the first one keeps its new date
    def fake_scripted(name: str, runner: Any) -> tuple[dict[str, Any], report.Stamp]:
        return {"roundtrip_scripted_ms": {"median": 1.1, "p95": 1.2, "p99": 1.3, "mean": 1.1, "n": 500}}, stamp(
            "2026-12-02"
        )

    bench.main(
        ["roundtrip_scripted"], results_path=results_path, readme_path=readme_path, measure_section=fake_scripted
    )
    measured = json.loads(results_path.read_text())["measured"]
    assert measured["costs"]["date"] == NEW_DATE
    assert measured["roundtrip_scripted"]["date"] == "2026-12-02"
    assert measured["browser"]["date"] == OLD_DATE


def test_a_rerun_section_drops_the_figures_it_no_longer_produces() -> None:
    results = report.record(LEGACY, "agent_efficiency", {"agent_requests_ratio": 4.0}, stamp())
    assert "agent_prompt_tokens_ratio" not in results and "agent_tasks" not in results
    assert results["measured"]["agent_efficiency"]["keys"] == ["agent_requests_ratio"]
    assert results["nodelay_speedup"] == 1.01  # another section's figure stays


def test_legacy_results_get_their_one_date_per_section() -> None:
    results = report.migrate(LEGACY)
    assert "machine" not in results
    assert {n: e["date"] for n, e in results["measured"].items()} == {n: OLD_DATE for n in LEGACY_SECTIONS}
    assert report.owner(results, "burst") == "burst_stream"
    assert report.owner(results, "nodelay_speedup") == "browser"
    assert results["history"]["browser"] == [{"date": OLD_DATE, **report.headline("browser", LEGACY)}]


def test_history_keeps_every_run_of_a_section_up_to_a_limit() -> None:
    results: dict[str, Any] = LEGACY
    for i in range(report.HISTORY_KEEP + 3):
        results = report.record(results, "browser", browser_section(nodelay=1 + i / 100), stamp(f"2026-12-{i + 1:02}"))
    history = results["history"]["browser"]
    assert len(history) == report.HISTORY_KEEP
    assert history[-1]["nodelay_speedup"] == results["nodelay_speedup"]


# -- 2. the reading follows the figures --------------------------------------------------------------


def browser_section(nodelay: float = 1.01, deferred: float = 1.31, echo_nodelay: float = 11.26) -> dict[str, Any]:
    section = {k: copy.deepcopy(LEGACY[k]) for k in report.LEGACY_SECTION_KEYS["browser"]}
    section["nodelay_speedup"] = nodelay
    section["deferred_echo_speedup"] = deferred
    section["nodelay_speedup_echo_per_call"] = echo_nodelay
    return section


def stream_section(applied_per_s: int, applied: int = 9843, fps: int = 59) -> dict[str, Any]:
    return {
        "burst": copy.deepcopy(LEGACY["burst"]),
        "stream": {
            "given": 9843,
            "applied": applied,
            "replied_ok": applied,
            "applied_per_s": applied_per_s,
            "duration_s": 18.2,
            "in_order": True,
            "duplicates": 0,
            "fps": fps,
            "fps_idle": 60,
            "coalesced": {
                "given": 9999,
                "applied": 2582,
                "applied_per_s": 258,
                "last": 9998,
                "fps": 58,
                "fps_idle": 60,
                "coalesced": 7417,
            },
        },
    }


def one_run(nodelay: float, deferred: float, stream_rate: int) -> dict[str, Any]:
    results = report.record({}, "browser", browser_section(nodelay, deferred), stamp())
    return report.record(results, "burst_stream", stream_section(stream_rate), stamp())


def test_the_reading_states_the_figures_of_the_results_it_is_given() -> None:
    a = report.reading(one_run(nodelay=1.41, deferred=1.46, stream_rate=510))
    b = report.reading(one_run(nodelay=0.94, deferred=1.3, stream_rate=550))
    assert a.startswith("Reading these:") and b.startswith("Reading these:")
    for text, nodelay, deferred, rate in ((a, "1.41x", "1.46x", "510/s"), (b, "0.94x", "1.3x", "550/s")):
        assert nodelay in text and deferred in text and rate in text, text
    assert "turning TCP_NODELAY off made the median 1.41x slower" in a
    assert "turning TCP_NODELAY off changed the median by 0.94x" in b and "no difference" in b
    assert "changes nothing" not in a + b and "about 550" not in a + b
    assert "1.3x" not in a and "0.94x" not in a and "1.41x" not in b


def test_a_ratio_that_changed_sides_between_runs_is_read_as_no_consistent_effect() -> None:
    results = one_run(nodelay=0.94, deferred=1.3, stream_rate=550)
    results = report.record(results, "browser", browser_section(nodelay=1.41), stamp("2026-12-02"))
    text = report.reading(results)
    assert "1.41x (latest run; 0.94x–1.41x over the 2 runs recorded): no consistent effect" in text


def test_the_reading_states_losses_order_and_the_frame_rate_when_measured() -> None:
    text = report.reading(report.record({}, "burst_stream", stream_section(500, applied=9000, fps=41), stamp()))
    assert "9000 of 9843 values (843 missing)" in text
    assert "drew 41 frames/s (60 before the stream)" in text
    burst = copy.deepcopy(LEGACY["burst"]) | {"applied": 9990, "in_order": False}
    lossy = report.record({}, "burst_stream", {"burst": burst}, stamp())
    assert "9990 reached it, NOT in call order, with 0 duplicates and 10 lost" in report.reading(lossy)


def test_the_plain_stream_row_shows_values_given_and_applied() -> None:
    table = report.table(report.record({}, "burst_stream", stream_section(500, applied=9000), stamp()))
    assert "9000 of 9843 values given applied" in table
    old = report.table(report.migrate(LEGACY))  # before the applied count was kept, it says so
    assert "applied count not recorded" in old and "not a frame rate" in old


def test_the_readme_block_is_replaced_and_nothing_else(tmp_path: Path) -> None:
    block = report.render(report.migrate(LEGACY))
    new = report.replace_block(README, block)
    head, tail = README.split(report.START)[0], README.split(report.END)[1]
    assert new.startswith(head)
    assert new.endswith(f"{report.END}\n\n## Tests\n\nSomeone else's section.\n")
    assert "a fixed paragraph" not in new and new.count("Reading these:") == 1
    assert new.index("Reading these:") < new.index(report.END)
    assert report.replace_block(new, block) == new  # idempotent: the next run changes only the block
    assert tail.endswith("## Tests\n\nSomeone else's section.\n")

    # the file is re-read right before writing: an edit made meanwhile outside the block stays
    path = tmp_path / "README.md"
    path.write_text(README)
    path.write_text(path.read_text().replace("Intro written", "Intro rewritten meanwhile"))
    bench.update_readme(path, block)
    assert "Intro rewritten meanwhile" in path.read_text()


# -- 3. the agent ratios say how they were obtained ------------------------------------------------------


def test_the_scripted_agent_ratio_says_the_classic_model_stops_after_every_round() -> None:
    results = report.record(
        {}, "agent_efficiency", {"agent_requests_ratio": 5.0, "agent_prompt_tokens_ratio": 6.2}, stamp()
    )
    row = next(line for line in report.table(results).splitlines() if "agent LLM requests" in line)
    assert "5.0x" in row and "made to stop after every tool round" in row
    assert "made to stop after every tool round" in report.reading(results)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_agent_requests_are_counted_at_the_fake_provider(provider: str) -> None:
    task = {"settings.speed": 20, "display.color": "blue"}
    ours = agent_efficiency.wire_ours(provider, task)
    loop = agent_efficiency.wire_classic(provider, task, stop_every_round=False)
    stop = agent_efficiency.wire_classic(provider, task, stop_every_round=True)
    assert ours["requests"] == 2  # one set_parameters call with both changes, then the answer
    assert loop["requests"] == 2 + len(task)  # get_parameters, one set_parameter each, the answer
    assert stop["requests"] == 3 + 2 * len(task)  # and a "Proceed." turn after every tool round
    assert ours["other_requests"] == loop["other_requests"] == 0
    assert ours["request_bytes"] > 0 and loop["request_bytes"] > 0


# -- 4. the counter target counts frames, not repeated callbacks ----------------------------------------

NODE_DRIVER = r"""
const script = require("fs").readFileSync(process.argv[2], "utf8").match(/<script>([\s\S]*)<\/script>/)[1];
let now = 0, callbacks = [], timeouts = [];
const handlers = {};
globalThis.performance = { now: () => now };
globalThis.requestAnimationFrame = (f) => { callbacks.push(f); return callbacks.length; };
globalThis.setTimeout = (f) => { timeouts.push(f); };
const ctx2d = { fillRect() {}, fillText() {} };
globalThis.document = { getElementById: () => ({ getContext: () => ctx2d, clientWidth: 100, clientHeight: 40 }) };
globalThis.SplitBrain = { onApply: (f) => (handlers.apply = f), onReset: (f) => (handlers.reset = f),
                          onState: (f) => (handlers.state = f), ready() {} };
require("vm").runInThisContext(script);  // a classic script, as in the page (not eval: its lets misbehave in node 20)
const repeats = Number(process.argv[3]), pause = process.argv[4] === "pause";
timeouts.forEach((f) => f());
let seq = 0, frameAt = 0;
for (let ms = 0; ms < 5000; ms += 1) {             // 5 s at 1 ms steps: an apply every 2 ms from 1 s to 4 s
  now = ms;
  const paused = pause && ms >= 2000 && ms < 3000;  // or none for a second in the middle
  if (ms >= 1000 && ms <= 4000 && ms % 2 === 0 && !paused) handlers.apply({ "bench.seq": seq++ }, { id: `r${seq}` });
  if (ms >= frameAt) {                              // a 60 Hz frame; its callbacks run `repeats` times, same timestamp
    const t = frameAt;
    for (let k = 0; k < repeats; k += 1) { const run = callbacks; callbacks = []; run.forEach((f) => f(t)); }
    frameAt += 1000 / 60;
  }
}
console.log(JSON.stringify(handlers.state()));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize(("repeats", "pause"), [(1, ""), (3, ""), (1, "pause"), (3, "pause")])
def test_the_counter_counts_each_frame_once_however_often_its_callback_runs(
    repeats: int, pause: str, tmp_path: Path
) -> None:
    """A page at 60 frames/s reads 60, with its rAF callback called once or 3 times a frame (as in headless
    Chromium with 3 sandboxed iframes), and with or without a pause in the applies."""
    driver = tmp_path / "driver.js"
    driver.write_text(NODE_DRIVER)
    out = subprocess.run(
        ["node", str(driver), str(COUNTER), str(repeats), pause], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    assert state["applied"] == (1001 - 500 * bool(pause)) + 500 and state["in_order"] and state["duplicates"] == 0
    assert 58 <= state["fps_during"] <= 61, state
    assert 58 <= state["fps"] <= 61, state
