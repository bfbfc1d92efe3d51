"""``make bench``: run every benchmark, print a table, write results.json and the README's results section.

Figures are measured, printed and recorded here; tests never assert wall-clock limits.
Run one section with ``python -m benchmarks <name> [...]``.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
RESULTS = HERE / "results.json"
SECTIONS = ["costs", "roundtrip_scripted", "agent_efficiency", "browser", "burst_stream", "target_fps"]
START, END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"


def main(names: list[str]) -> None:
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name in names or SECTIONS:
        started = time.monotonic()
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        section = module.run()
        if name == "roundtrip_scripted":
            section = {"roundtrip_scripted_ms": section}
        if name == "target_fps":
            section = {"target_fps": {target: row["800x420"] for target, row in section["fps"].items()}}
        results.update(section)
        print(json.dumps(section, indent=2)[:3000])
        print(f"   ({time.monotonic() - started:.0f} s)")
    results["machine"] = {"python": platform.python_version(), "cpus": _cpus(), "date": time.strftime("%Y-%m-%d")}
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    table = render(results)
    print(table)
    _update_readme(table)


def render(r: dict[str, Any]) -> str:
    rows = ["| figure | value |", "|---|---|"]

    def row(label: str, value: Any) -> None:
        rows.append(f"| {label} | {value} |")

    for key, label in (
        ("roundtrip_browser_ms", "round trip kernel -> iframe -> kernel, JupyterLab + Chromium"),
        ("roundtrip_browser_nodelay_off_ms", "the same without the TCP_NODELAY extension"),
        ("roundtrip_browser_echo_per_call_ms", "the same with the trait echo sent after every call"),
        ("roundtrip_browser_echo_per_call_nodelay_off_ms", "... and without the TCP_NODELAY extension"),
        ("roundtrip_scripted_ms", "round trip with a scripted frontend (the floor)"),
    ):
        if key in r:
            s = r[key]
            row(label, f"median {s['median']} ms, p95 {s['p95']} ms, p99 {s['p99']} ms (n={s['n']})")
    if "nodelay_speedup" in r:
        row("TCP_NODELAY speed-up of the median (off / on)", f"{r['nodelay_speedup']}x")
    if "nodelay_speedup_echo_per_call" in r:
        row("TCP_NODELAY speed-up with an echo after every call", f"{r['nodelay_speedup_echo_per_call']}x")
    if "deferred_echo_speedup" in r:
        row("deferred echo speed-up of the median (echo per call / deferred)", f"{r['deferred_echo_speedup']}x")
    if "roundtrip_browser_hops" in r:
        h = r["roundtrip_browser_hops"]
        row(
            "where the browser round trip goes (medians)",
            f"in the view {h['in_view_ms']['median']} ms (of which iframe + target "
            f"{h['iframe_and_target_ms']['median']} ms); kernel, server and websocket both ways "
            f"{h['kernel_wire_and_server_ms_median']} ms",
        )
    if "burst" in r:
        b = r["burst"]
        row(
            f"burst: {b['sent']} applies issued before the target is ready",
            f"{b['applied']} applied, in order: {b['in_order']}, duplicates: {b['duplicates']}, "
            f"drain {b['drain_ms'] / 1000:.1f} s after ready ({b['total_s']} s in all)",
        )
    if "stream" in r:
        s = r["stream"]
        c = s["coalesced"]
        row(
            "stream at 1,000 applies/s for 10 s, every value sent",
            f"{s['applied_per_s']} applied/s, target at {s['fps']} fps, in order: {s['in_order']}",
        )
        row(
            "the same with `sim.stream` (coalescing)",
            f"{c['applied_per_s']} applies/s carry {c['given']} values ({c['coalesced']} coalesced away), "
            f"last value {c['last']}, target at {c['fps']} fps",
        )
    if "agent_requests_ratio" in r:
        row("agent LLM requests, classic / ours (multi-parameter tasks)", f"{r['agent_requests_ratio']}x")
        row("agent prompt tokens, classic / ours", f"{r['agent_prompt_tokens_ratio']}x")
    if "import_s" in r:
        row("`import splitbrain_widget`", f"{r['import_s']['median']} s (pydantic_ai not imported)")
    if "widget_create_ms" in r:
        row("widget creation", f"{r['widget_create_ms']} ms")
        row(
            "memory per widget / per 1000 audit entries",
            f"{r['memory_per_widget_kib']} KiB / {r['memory_per_1000_audit_entries_kib']} KiB",
        )
    if "js_bytes" in r:
        row("shipped JS", ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in r["js_bytes"].items()))
    if "target_fps" in r:
        row("target frame rates (headless Chromium)", ", ".join(f"{k} {v}" for k, v in r["target_fps"].items()))
    machine = r.get("machine", {})
    return (
        "\n".join(rows)
        + f"\n\nMeasured {machine.get('date', '?')} on {machine.get('cpus', '?')} cores by `make bench`."
    )


def _update_readme(table: str) -> None:
    text = README.read_text()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        README.write_text(f"{head}{START}\n{table}\n{END}{tail}")


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    main(sys.argv[1:])
