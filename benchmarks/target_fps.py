"""Frames per second of each built-in target in headless Chromium, at several frame sizes.

Each target is loaded through the registry (``load_target(id).html``, target API and CSP injected)
into the sandboxed iframe of tests/browser_targets/host.py's page, as a notebook view would,
and its own ``window.__fps`` is read: requestAnimationFrame callbacks counted over the last ~2 s
inside the target. 800x420 is the default size; the others show how the cost grows with the
frame (1400 px wide, 400 px wide, and 800x420 at devicePixelRatio 2).

    python -m benchmarks.target_fps          # prints a table, writes benchmarks/target_fps.json

Figures only: nothing here is asserted, and the tests never assert them either.
``run(smoke=True)``: every target at 800x420 only, over ~0.5 s (``python -m benchmarks --smoke``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.browser_env import unavailable_reason
from tests.browser_targets.host import TargetHost, chromium, host_server

TARGETS = ["projectile", "pendulum", "orbits", "boids", "waves"]
# (label, width, height, devicePixelRatio)
SIZES = [("800x420", 800, 420, 1), ("1400x420", 1400, 420, 1), ("400x420", 400, 420, 1), ("800x420@2x", 800, 420, 2)]
OUT = Path(__file__).resolve().parent / "target_fps.json"


@dataclass(frozen=True)
class Sizes:
    frames: int  # frame sizes measured: the first ones of SIZES (800x420 first, the README's column)
    span_ms: float  # how long each rate is counted over (the target keeps its last ~2 s)


FULL = Sizes(frames=len(SIZES), span_ms=1900)
SMOKE = Sizes(frames=1, span_ms=500)


def run(*, smoke: bool = False) -> dict[str, Any]:
    reason = unavailable_reason()
    if reason is not None:
        raise SystemExit(reason)
    sizes = SMOKE if smoke else FULL
    fps: dict[str, dict[str, float]] = {target: {} for target in TARGETS}
    frame_ms: dict[str, dict[str, float]] = {target: {} for target in TARGETS}
    with host_server() as url, chromium() as browser:
        version = browser.version
        for label, width, height, dpr in SIZES[: sizes.frames]:
            context = browser.new_context(
                viewport={"width": width + 60, "height": height + 60}, device_scale_factor=dpr
            )
            try:
                host = TargetHost(context.new_page(), url)
                for target in TARGETS:
                    host.load(target, width, height)
                    host.frame.wait_for_function("() => window.__frames > 30")  # warm up
                    host.frame.evaluate("() => { window.__fpsSpan = 0; }")
                    fps[target][label] = host.measure_fps(sizes.span_ms)
                    frame_ms[target][label] = round(host.frame.evaluate("() => window.__frameMs"), 2)
                    if host.console:
                        raise SystemExit(f"{target} at {label}: {host.console}")
            finally:
                context.close()
    return {
        "what": "requestAnimationFrame callbacks per second inside each target, over ~2 s (window.__fps)",
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "chromium": version,
        "flags": "headless, --disable-gpu (software rendering)",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_average_1m": os.getloadavg()[0]},
        "sizes": [label for label, *_ in SIZES[: sizes.frames]],
        "fps": fps,
        "script_ms_per_frame": frame_ms,
    }


def table(result: dict[str, Any]) -> str:
    """fps, and in brackets the target's script time per frame in ms."""
    sizes = result["sizes"]
    lines = [f"{'target':<12}" + "".join(f"{s:>18}" for s in sizes)]
    for target, row in result["fps"].items():
        ms = result["script_ms_per_frame"][target]
        lines.append(f"{target:<12}" + "".join(f"{row[s]:>10.1f} ({ms[s]:4.1f})" for s in sizes))
    return "\n".join(lines)


def main() -> None:
    result = run()
    cpus = result["machine"]["cpus"]
    load = result["machine"]["load_average_1m"]
    version = result["chromium"]
    print(f"frames per second (script ms per frame), headless Chromium {version}, {cpus} CPUs, load {load:.1f}")
    print(table(result))
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
