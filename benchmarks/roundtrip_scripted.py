"""Blocking round trip kernel -> (scripted) view -> kernel, in a plain cell: the floor of the wire.

``run(smoke=True)``: a few calls (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted_frontend import ScriptedFrontend

from ._stats import summary
from .browser import BATCH, PAUSE_S

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "targets"
CALLS = 500  # timed, after 20 warm-up calls
SMOKE_CALLS = 10


def run(*, smoke: bool = False) -> dict[str, float]:
    calls = SMOKE_CALLS if smoke else CALLS
    fe = ScriptedFrontend()
    try:
        fe.check(
            f"import splitbrain_widget as sb, time, json\nsim = sb.TargetWidget('demo', targets_dir={str(FIXTURES)!r})"
        )
        fe.attach(fe.widget_comm(), "bench")
        out = fe.check(
            "samples = []\n"
            f"for i in range({calls} + 20):\n"
            "    t = time.perf_counter(); r = sim.set_parameter('speed', i % 50); dt = time.perf_counter() - t\n"
            "    assert r.ok, r\n"
            "    samples.append(dt * 1000)\n"
            f"    if i % {BATCH} == {BATCH} - 1: time.sleep({PAUSE_S})  # below the message budget (browser.py)\n"
            "print(json.dumps(samples[20:]))",
            timeout=300,
        )
        return summary(json.loads(out))
    finally:
        fe.close()


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
