"""The browser round trip before and after the sandbox frame, side by side in one run.

Commit 56dd05c put a sandbox frame (the relay and the target's iframe inside a sandboxed iframe of
its own) between the notebook page's view and the target. This compares the code just before it
("before", by default 56dd05c's parent) with this checkout as it is ("today"): the before commit
goes into a git worktree in a temporary folder, with its own static/ built from its own js/
(``node js/build.mjs``, reusing this checkout's js/node_modules through a symlink).

Each round runs before, then today, each in a subprocess of its own with its checkout first on
PYTHONPATH (the Jupyter server, its extension and the kernel import that checkout), calling that
checkout's own ``benchmarks/browser.py`` ``measure`` twice, each in a fresh JupyterLab and Chromium:
the round trip as shipped (TCP_NODELAY on, the trait echo deferred) and the naive pattern (the echo
after every call and no TCP_NODELAY: two messages back to back each way, the ~50 ms anywidget ping
of DESIGN.md); then its own ``benchmarks/roundtrip_scripted.py`` (the floor: a scripted frontend,
no browser). Goals: the round trip at least 10x faster than the naive pattern and at most 3x the
floor. It prints a table and one JSON line, and writes nothing to results.json.

``python -m benchmarks.sandbox_compare [--rounds N] [--calls N] [--before COMMIT]``: the defaults
(4 rounds x 250 calls) take about 5 minutes on 2 cores, most of it the naive pattern's ~50 ms calls
and eight sessions' JupyterLab starts; ``--rounds 2 --calls 30`` about 80 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ._stats import summary

ROOT = Path(__file__).resolve().parent.parent
SANDBOX_FRAME_COMMIT = "56dd05c"  # "a sandbox frame between the notebook and the target"
ROUNDS = 4  # each version once per round, before then today
CALLS = 250  # timed per session and for the floor, after the 20 warm-up calls browser.py drops
CHILD_TIMEOUT_S = 1800
MARK = "SANDBOX_COMPARE_RESULT "
GOAL_NAIVE_X = 10  # the round trip at least this many times faster than the naive pattern
GOAL_FLOOR_X = 3  # and at most this many times the scripted floor

# Run in a subprocess with one checkout first on PYTHONPATH and as its cwd: that checkout's own
# measure() and floor. browser.py's measure(nodelay, cell, calls) is today's; before 56dd05c it was
# measure(nodelay, cell) with the calls fixed in CELLS at import (range(CALLS), 20 of them warm-up),
# and roundtrip_scripted.run took calls= where today's reads CALLS: the two adapters below. Both
# versions' loops pause between batches of calls as today's do (browser.py BATCH): back to back, the
# kernel's message budget (core/_pacing.py) would be measured instead of the latency; paced() puts
# that pause into a loop that lacks it (the old cells, the old floor's cell).
CHILD = """
import inspect, json, sys
import splitbrain_widget
from benchmarks import browser, roundtrip_scripted
from tests import scripted_frontend

calls, mark = int(sys.argv[1]), sys.argv[2]
TIMED = "    samples.append(dt * 1000)\\n"
PAUSE = "    if i % 50 == 49: time.sleep(0.25)\\n"


def paced(code):
    return code if "time.sleep(" in code or TIMED not in code else code.replace(TIMED, TIMED + PAUSE)


check = scripted_frontend.ScriptedFrontend.check
scripted_frontend.ScriptedFrontend.check = lambda self, code, *a, **k: check(self, paced(code), *a, **k)
if "calls" in inspect.signature(browser.measure).parameters:
    def session(nodelay, cell):
        return browser.measure(nodelay, cell, calls)[0]
else:
    browser.CELLS = [paced(c.replace(f"range({browser.CALLS})", f"range({calls + 20})")) for c in browser.CELLS]
    def session(nodelay, cell):
        return browser.measure(nodelay, cell)[0]
if "calls" in inspect.signature(roundtrip_scripted.run).parameters:
    floor = roundtrip_scripted.run(calls=calls)
else:
    roundtrip_scripted.CALLS = calls
    floor = roundtrip_scripted.run()
roundtrip = session(True, 1)  # as shipped
naive = session(False, 2)  # the echo after every call, TCP_NODELAY off
got = {"package": splitbrain_widget.__file__, "roundtrip": roundtrip, "naive": naive, "floor": floor}
print(mark + json.dumps(got))
"""


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def prepare_before(commit: str, folder: Path) -> Path:
    """A worktree of ``commit`` in ``folder``, its static/ built from its js/; return its root."""
    checkout = folder / "before"
    git("worktree", "add", "--detach", str(checkout), commit)
    (checkout / "js" / "node_modules").symlink_to(ROOT / "js" / "node_modules")
    subprocess.run(["node", "build.mjs"], cwd=checkout / "js", check=True, capture_output=True, text=True)
    return checkout


def measure_version(checkout: Path, calls: int) -> dict[str, Any]:
    """One version's round trip, naive pattern and floor, measured by its own code in a subprocess."""
    env = {k: v for k, v in os.environ.items() if k != "SPLITBRAIN_NODELAY"}
    env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(calls), MARK],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"measuring {checkout} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-6000:]}"
        )
    got: dict[str, Any] = json.loads(lines[-1][len(MARK) :])
    if not Path(got["package"]).is_relative_to(checkout):
        raise RuntimeError(f"{checkout}: the measuring subprocess imported splitbrain_widget from {got['package']}")
    return got


def figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One version's figures over its rounds; the floor is the median of its rounds' medians."""
    roundtrip = summary([x for run in runs for x in run["roundtrip"]])
    naive = summary([x for run in runs for x in run["naive"]])
    floor = statistics.median(run["floor"]["median"] for run in runs)
    return {
        "roundtrip_ms": roundtrip,
        "roundtrip_round_medians_ms": [summary(run["roundtrip"])["median"] for run in runs],
        "naive_ms": naive,
        "floor_median_ms": round(floor, 3),
        "naive_over_roundtrip": round(naive["median"] / roundtrip["median"], 2),
        "roundtrip_over_floor": round(roundtrip["median"] / floor, 2),
    }


def table(result: dict[str, Any]) -> str:
    head = f"{'version':<22}{'median':>9}{'p99':>9}{'naive':>9}{'floor':>8}{'naive/rt':>10}{'rt/floor':>10}   goals"
    lines = [head, "-" * len(head)]
    for version in ("before", "today"):
        f = result[version]
        goals = (
            f"{'met' if f['naive_over_roundtrip'] >= GOAL_NAIVE_X else 'missed'} >={GOAL_NAIVE_X}x, "
            f"{'met' if f['roundtrip_over_floor'] <= GOAL_FLOOR_X else 'missed'} <={GOAL_FLOOR_X}x"
        )
        lines.append(
            f"{version + ' ' + result['commits'][version][:7]:<22}{f['roundtrip_ms']['median']:>9.3f}"
            f"{f['roundtrip_ms']['p99']:>9.3f}{f['naive_ms']['median']:>9.3f}{f['floor_median_ms']:>8.3f}"
            f"{f['naive_over_roundtrip']:>9.2f}x{f['roundtrip_over_floor']:>9.2f}x   {goals}"
        )
    lines.append(
        f"today/before: round trip median {result['today_over_before']}x, p99 {result['today_over_before_p99']}x"
    )
    for version in ("before", "today"):
        medians = ", ".join(f"{m:.3f}" for m in result[version]["roundtrip_round_medians_ms"])
        lines.append(f"{version} round trip median per round (ms): {medians}")
    return "\n".join(lines)


def run(*, rounds: int = ROUNDS, calls: int = CALLS, before: str | None = None) -> dict[str, Any]:
    before_commit = git("rev-parse", f"{SANDBOX_FRAME_COMMIT}^" if before is None else before)
    started = time.monotonic()
    load = [os.getloadavg()[0]]
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "today": []}
    with tempfile.TemporaryDirectory(prefix="sb-sandbox-compare-") as folder:
        checkout = prepare_before(before_commit, Path(folder))
        try:
            for round_no in range(1, rounds + 1):
                for version, root in (("before", checkout), ("today", ROOT)):
                    t = time.monotonic()
                    runs[version].append(measure_version(root, calls))
                    load.append(os.getloadavg()[0])
                    print(f"round {round_no}/{rounds} {version}: {time.monotonic() - t:.0f} s", file=sys.stderr)
        finally:
            git("worktree", "remove", "--force", str(checkout))
    result: dict[str, Any] = {
        "commits": {"before": before_commit, "today": git("rev-parse", "HEAD") + " + working tree"},
        "rounds": rounds,
        "calls": calls,
        "before": figures(runs["before"]),
        "today": figures(runs["today"]),
    }
    b, t = result["before"]["roundtrip_ms"], result["today"]["roundtrip_ms"]
    result["today_over_before"] = round(t["median"] / b["median"], 2)
    result["today_over_before_p99"] = round(t["p99"] / b["p99"], 2)
    result["load_1m"] = {"min": min(load), "max": max(load)}
    result["took_s"] = round(time.monotonic() - started)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sandbox_compare", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds, each version once per round ({ROUNDS})")
    parser.add_argument("--calls", type=int, default=CALLS, help=f"timed calls per session and floor ({CALLS})")
    parser.add_argument(
        "--before", help=f"the before commit (default {SANDBOX_FRAME_COMMIT}^, the sandbox frame's parent)"
    )
    args = parser.parse_args()
    result = run(rounds=args.rounds, calls=args.calls, before=args.before)
    print(
        f"browser round trip (ms), JupyterLab + Chromium, {result['rounds']} rounds x {result['calls']} calls per "
        f"version, load {result['load_1m']['min']:.1f}-{result['load_1m']['max']:.1f}, {result['took_s']} s"
    )
    print(table(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
