"""``python -m benchmarks --smoke`` (benchmarks/__main__.py): every section at its small sizes, nothing written.

Plain unit tests: the sections are faked (the real smoke run is ``make bench-smoke``, in CI), and the
browser section's reading of the relay's hop trace is fed a made-up trace. No figure is asserted.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from benchmarks import __main__ as bench
from benchmarks import browser, report

# benchmarks/mcp.py is being rewritten with a smoke= of its own; until then run_section falls back to
# its plain run() (all of it), so the smoke still runs it.
FULL_SIZE_ONLY: set[str] = {"mcp"}


def test_every_section_takes_its_small_sizes_from_one_smoke_keyword() -> None:
    for name in report.SECTIONS:
        run = importlib.import_module(f"benchmarks.{name}").run
        assert bench.takes_smoke(run) or name in FULL_SIZE_ONLY, f"benchmarks/{name}.py: run() takes no smoke="


def test_the_smoke_runs_every_section_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    results_path, readme_path = tmp_path / "results.json", tmp_path / "README.md"
    results_path.write_text("{}\n")
    readme_path.write_text(f"{report.START}\nold\n{report.END}\n")
    monkeypatch.setattr(bench, "RESULTS", results_path)
    monkeypatch.setattr(bench, "README", readme_path)
    ran: list[str] = []

    def runner(name: str) -> dict[str, Any]:
        ran.append(name)
        return {f"{name}_figure": 1}

    assert bench.smoke([], runner=runner) == []
    assert ran == report.SECTIONS
    assert results_path.read_text() == "{}\n"
    assert readme_path.read_text() == f"{report.START}\nold\n{report.END}\n"


def test_a_section_that_raises_fails_the_smoke_and_the_rest_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    ran: list[str] = []

    def runner(name: str) -> dict[str, Any]:
        ran.append(name)
        if name == "browser":
            raise ValueError("no median for empty data")
        if name == "target_fps":
            raise SystemExit("Chromium is missing")  # how a section that cannot run says so
        return {}

    assert bench.smoke(["costs", "browser", "target_fps", "headless"], runner=runner) == ["browser", "target_fps"]
    assert ran == ["costs", "browser", "target_fps", "headless"]
    out = capsys.readouterr()
    assert "ValueError: no median for empty data" in out.err
    assert "browser" in out.out and "FAILED" in out.out


def test_smoke_is_a_flag_and_takes_no_model() -> None:
    assert bench.parse_args(["--smoke"]) == bench.Options([], None, True)
    assert bench.parse_args(["--smoke", "browser"]) == bench.Options(["browser"], None, True)
    assert bench.parse_args([]).smoke is False
    with pytest.raises(SystemExit):
        bench.parse_args(["--smoke", "steering", "--model", "openai:gpt-4o-mini"])
    with pytest.raises(SystemExit):
        bench.smoke(["no_such_section"], runner=lambda name: {})


# -- the browser section's hops ---------------------------------------------------------------------


def relay_trace(requests: int) -> list[list[Any]]:
    """A relay trace (js/host/relay.js): reached at 0, posted 1 ms later, answered 3 ms after, replied 0.5 ms
    after that; the times of each request offset so that none overlaps."""
    trace: list[list[Any]] = []
    for n in range(requests):
        t = 100.0 * n
        trace += [[f"r{n}", "in", t], [f"r{n}", "post", t + 1], [f"r{n}", "state", t + 4], [f"r{n}", "out", t + 4.5]]
    return trace


def test_the_sandbox_frames_own_part_is_told_apart_from_the_target_iframes() -> None:
    hops = browser.hops(relay_trace(browser.WARM_UP + 3))
    assert hops["in_view_ms"] == [4.5] * 3  # the warm-up requests are dropped
    assert hops["iframe_and_target_ms"] == [3.0] * 3
    assert hops["sandbox_relay_ms"] == [1.5] * 3  # reached until posted, plus answered until replied


def test_a_request_the_relay_did_not_finish_is_left_out() -> None:
    trace = relay_trace(browser.WARM_UP + 2)
    trace = [hop for hop in trace if hop[:2] != [f"r{browser.WARM_UP + 1}", "out"]]
    assert len(browser.hops(trace)["sandbox_relay_ms"]) == 1


def test_the_hops_row_names_the_sandbox_frames_relay_when_it_was_measured() -> None:
    summary = {"median": 1.0, "p95": 1.0, "p99": 1.0, "mean": 1.0, "n": 3}
    hops = {"in_view_ms": summary, "iframe_and_target_ms": summary, "kernel_wire_and_server_ms_median": 2.0}
    stamp = {"date": "2026-12-05", "cpus": 2, "python": "3.11.7", "load_1m": {"min": 1.0, "max": 1.0}, "seconds": 1}
    before = report.table(report.record({}, "browser", {"roundtrip_browser_hops": hops}, stamp))
    assert "relay" not in before  # measured before the relay ran in a sandbox frame: not made up
    relay = hops | {"sandbox_relay_ms": summary | {"median": 0.25}}
    after = report.table(report.record({}, "browser", {"roundtrip_browser_hops": relay}, stamp))
    assert "the sandbox frame's relay 0.25 ms" in after
