"""Manifest bindings: what steering a page through its manifest costs against a page that calls
the target API itself.

Two copies of one small page (a top-level ``let``, a range input, a read-out) run headless, side
by side in one run: ``handwritten`` registers ``SplitBrain.onApply`` and reports its own state;
``bound`` is the same page without a line of splitbrain code, steered by its manifest's ``bind`` /
``read`` (js/page/bindings.js). Each takes ROUNDS rounds of CALLS blocking ``set_parameters`` calls
(one global and one form control per call, read back in the reply), alternated page by page; the
figure is the median round trip of each and their ratio (bound over handwritten).

``python -m benchmarks.bindings``
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ._stats import summary

CALLS = 200
WARM_UP = 20
ROUNDS = 3

PAGE_BODY = """<input id="speed" type="range" min="0" max="100" value="10">
<span id="shown">10</span>
<script>
let gain = 1;
const input = document.getElementById("speed");
input.addEventListener("input", () => { document.getElementById("shown").textContent = input.value; });
%s
</script>"""

HANDWRITTEN = """
SplitBrain.onApply((values) => {
  if ("g.gain" in values) gain = values["g.gain"];
  if ("g.speed" in values) { input.value = String(values["g.speed"]); input.dispatchEvent(new Event("input")); }
  const shown = Number(document.getElementById("shown").textContent);
  return { "g.gain": gain, "g.speed": Number(input.value), shown };
});
SplitBrain.ready();
"""

PARAMS = {
    "gain": {"type": "number", "value": 1, "min": 0, "max": 10},
    "speed": {"type": "number", "value": 10, "min": 0, "max": 100},
}


def _pages(folder: Path) -> dict[str, Path]:
    handwritten = {"id": "handwritten", "data": {"g": PARAMS}, "observables": {"shown": {}}}
    bound = {
        "id": "bound",
        "data": {
            "g": {
                "gain": {**PARAMS["gain"], "bind": {"global": "gain"}},
                "speed": {**PARAMS["speed"], "bind": {"selector": "#speed"}},
            }
        },
        "observables": {"shown": {"read": {"selector": "#shown", "number": True}}},
    }
    for name, manifest, script in (("handwritten", handwritten, HANDWRITTEN), ("bound", bound, "")):
        (folder / f"{name}.html").write_text(f"<!doctype html>{PAGE_BODY % script}", encoding="utf-8")
        (folder / f"{name}.json").write_text(json.dumps(manifest), encoding="utf-8")
    return {name: folder / f"{name}.html" for name in ("handwritten", "bound")}


def _round(sim: Any, calls: int) -> list[float]:
    samples = []
    for i in range(calls):
        started = time.perf_counter()
        result = sim.set_parameters({"gain": i % 10, "speed": i % 100})
        samples.append((time.perf_counter() - started) * 1000)
        assert result.ok and result.state["g.speed"] == i % 100 and result.state["shown"] == i % 100, result
    return samples


def run() -> dict[str, Any]:
    import splitbrain_widget as sb
    from splitbrain_widget.hosts._headless_engine import shutdown_engine

    samples: dict[str, list[float]] = {"handwritten": [], "bound": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pages = _pages(Path(tmp))
            sims = {name: sb.HeadlessTarget(str(page)) for name, page in pages.items()}
            try:
                for sim in sims.values():
                    _round(sim, WARM_UP)
                for _ in range(ROUNDS):
                    for name, sim in sims.items():
                        samples[name] += _round(sim, CALLS)
            finally:
                for sim in sims.values():
                    sim.close()
    finally:
        shutdown_engine()
    figures: dict[str, Any] = {name: summary(values) for name, values in samples.items()}
    figures["ratio_bound_over_handwritten"] = round(
        statistics.median(samples["bound"]) / statistics.median(samples["handwritten"]), 2
    )
    return {"bindings": figures}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
