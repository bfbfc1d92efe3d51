"""The benchmark report: results.json bookkeeping, the README table, and its reading.

Pure functions (no measuring, no clock) so the tests can feed them results dicts:

- :func:`record` merges one section's figures into the results and stamps only that section
  (``measured[section]``: date, load, cores, Python, how long it took, which keys it wrote), and
  appends its headline figures to ``history[section]``; other sections keep their figures and dates;
- :func:`render` builds the block between the README markers: the table (a "measured" column per
  row) and the reading of it, every figure in the prose taken from the results;
- :func:`replace_block` swaps that block in a README text (and drops the old fixed "Reading these:"
  paragraph that used to follow it).
"""

from __future__ import annotations

import copy
import textwrap
from collections.abc import Callable
from typing import Any

SECTIONS = [
    "costs",
    "roundtrip_scripted",
    "agent_efficiency",
    "browser",
    "burst_stream",
    "target_fps",
    "headless",
    "steering",
    "security",
    "mcp",
    "mcp_apps",
    "pictures",
    "lite",
]
START, END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"
READING_PREFIX = "Reading these:"
HISTORY_KEEP = 20  # runs kept per section in results.json["history"]
# Ratios within this band either way (1/1.2 .. 1.2) count as no difference: sections vary by about
# this much from run to run on the 2-core machine they are measured on.
NOISE = 0.2
WRAP = 100  # the README's prose width
# The keys each section wrote before results.json recorded them (for results written before that).
LEGACY_SECTION_KEYS: dict[str, list[str]] = {
    "costs": [
        "import_s",
        "widget_create_ms",
        "memory_per_widget_kib",
        "memory_per_1000_audit_entries_kib",
        "note",
        "js_bytes",
    ],
    "roundtrip_scripted": ["roundtrip_scripted_ms"],
    "agent_efficiency": ["agent_requests_ratio", "agent_prompt_tokens_ratio", "agent_tasks"],
    "browser": [
        "roundtrip_browser_ms",
        "roundtrip_browser_nodelay_off_ms",
        "nodelay_speedup",
        "roundtrip_browser_echo_per_call_ms",
        "deferred_echo_speedup",
        "roundtrip_browser_echo_per_call_nodelay_off_ms",
        "nodelay_speedup_echo_per_call",
        "roundtrip_browser_hops",
    ],
    "burst_stream": ["burst", "stream"],
    "target_fps": ["target_fps"],
}
# Figures (dotted paths) kept per run in results.json["history"], for the ranges in the reading.
HEADLINES: dict[str, list[str]] = {
    "roundtrip_scripted": ["roundtrip_scripted_ms.median"],
    "agent_efficiency": [
        "agent_requests_ratio",
        "agent_prompt_tokens_ratio",
        "agent_wire.openai.requests_ratio_loop",
        "agent_wire.openai.request_bytes_ratio_loop",
    ],
    "browser": [
        "roundtrip_browser_ms.median",
        "roundtrip_browser_ms.p99",
        "nodelay_speedup",
        "deferred_echo_speedup",
        "nodelay_speedup_echo_per_call",
        "roundtrip_browser_echo_per_call_nodelay_off_ms.median",
        "roundtrip_browser_hops.sandbox_relay_ms.median",
    ],
    "burst_stream": ["burst.applied", "burst.drain_ms", "stream.applied", "stream.applied_per_s", "stream.fps"],
    "headless": [
        "headless.roundtrip_ms.median",
        "headless.roundtrip_ms.p99",
        "headless.sweep.points_per_s_1_page",
        "headless.sweep.points_per_s_n_pages",
        "headless.advance.sim_s_per_wall_s",
        "headless.dask.ratio",
    ],
    "security": [
        "security.record_memory.hostile.python_peak_mib",
        "security.record_memory.honest.python_peak_mib",
        "security.flood.parent_median_s",
        "security.flood.top_median_s",
    ],
    "mcp": [
        f"mcp.{kind}.{era}.{figure}"
        for kind in ("scripted", "headless", "live")
        for era in ("modern", "handshake")
        for figure in ("mcp_ms.median", "floor_ms.median", "added_over_floor_ms")
    ],
    "steering": [
        "steering.success_rate",
        "steering.passed",
        "steering.requests",
        "steering.input_tokens",
        "steering.output_tokens",
        "steering.wall_s",
    ],
}
Stamp = dict[str, Any]


# -- results.json -------------------------------------------------------------------------------


def get(results: dict[str, Any], path: str) -> Any:
    """``results["a"]["b"]`` for ``"a.b"``; None when any part is missing."""
    node: Any = results
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def headline(name: str, section: dict[str, Any]) -> dict[str, Any]:
    return {path: value for path in HEADLINES.get(name, []) if (value := get(section, path)) is not None}


def migrate(results: dict[str, Any]) -> dict[str, Any]:
    """Results written before per-section dates: every section present gets the one date they carried."""
    out = copy.deepcopy(results)
    if "measured" in out:
        return out
    machine = out.pop("machine", {})
    out["measured"] = {}
    out["history"] = {}
    for name, keys in LEGACY_SECTION_KEYS.items():
        present = [k for k in keys if k in out]
        if not present:
            continue
        out["measured"][name] = {
            "date": machine.get("date", "?"),
            "cpus": machine.get("cpus"),
            "python": machine.get("python"),
            "keys": present,
        }
        figures = headline(name, {k: out[k] for k in present})
        if figures:
            out["history"][name] = [{"date": machine.get("date", "?"), **figures}]
    return out


def record(results: dict[str, Any], name: str, section: dict[str, Any], stamp: Stamp) -> dict[str, Any]:
    """``results`` with section ``name`` replaced by ``section``, stamped ``stamp``; nothing else changes."""
    out = migrate(results)
    before = out["measured"].get(name, {}).get("keys", LEGACY_SECTION_KEYS.get(name, []))
    for key in before:  # figures this section no longer produces must not survive under its new date
        out.pop(key, None)
    out.update(copy.deepcopy(section))
    out["measured"][name] = {**stamp, "keys": sorted(section)}
    figures = headline(name, section)
    if figures:
        runs = out["history"].setdefault(name, [])
        runs.append({"date": stamp.get("date", "?"), **figures})
        del runs[:-HISTORY_KEEP]
    return out


def owner(results: dict[str, Any], key: str) -> str | None:
    """The section that wrote top-level ``key``."""
    for name, entry in results.get("measured", {}).items():
        if key in entry.get("keys", []):
            return str(name)
    return None


def when(results: dict[str, Any], key: str) -> str:
    """The "measured" cell of a row: the date its section ran and the machine's load meanwhile."""
    name = owner(results, key)
    entry = results.get("measured", {}).get(name or "", {})
    if not entry:
        return "?"
    text = str(entry.get("date", "?"))
    load = entry.get("load_1m")
    if isinstance(load, dict) and "min" in load and "max" in load:
        text += f", load {load['min']:.1f}–{load['max']:.1f}"
    return text


def runs(results: dict[str, Any], path: str) -> list[float]:
    """Every recorded value of a headline figure, oldest first; at least the current one if present."""
    name = owner(results, path.split(".")[0])
    values = [r[path] for r in results.get("history", {}).get(name or "", []) if path in r]
    current = get(results, path)
    if not values and current is not None:
        values = [current]
    return [float(v) for v in values]


# -- the table ----------------------------------------------------------------------------------


def _stats(s: dict[str, Any]) -> str:
    return f"median {s['median']} ms, p95 {s['p95']} ms, p99 {s['p99']} ms (n={s['n']})"


def table(r: dict[str, Any]) -> str:
    rows = ["| figure | value | measured |", "|---|---|---|"]

    def row(label: str, value: Any, key: str) -> None:
        rows.append(f"| {label} | {value} | {when(r, key)} |")

    for key, label in (
        ("roundtrip_browser_ms", "round trip kernel -> iframe -> kernel, JupyterLab + Chromium"),
        ("roundtrip_browser_nodelay_off_ms", "the same without the TCP_NODELAY extension"),
        ("roundtrip_browser_echo_per_call_ms", "the same with the trait echo sent after every call"),
        ("roundtrip_browser_echo_per_call_nodelay_off_ms", "... and without the TCP_NODELAY extension"),
        ("roundtrip_scripted_ms", "round trip with a scripted frontend (the floor)"),
    ):
        if key in r:
            row(label, _stats(r[key]), key)
    for key, label in (
        ("nodelay_speedup", "TCP_NODELAY speed-up of the median (off / on)"),
        ("nodelay_speedup_echo_per_call", "TCP_NODELAY speed-up with an echo after every call"),
        ("deferred_echo_speedup", "deferred echo speed-up of the median (echo per call / deferred)"),
    ):
        if key in r:
            row(label, f"{r[key]}x", key)
    if "roundtrip_browser_hops" in r:
        h = r["roundtrip_browser_hops"]
        relay = h.get("sandbox_relay_ms")  # measured since the relay runs in the view's sandbox frame
        row(
            "where the browser round trip goes (medians)",
            f"in the view {h['in_view_ms']['median']} ms (of which iframe + target "
            f"{h['iframe_and_target_ms']['median']} ms"
            + (f", the sandbox frame's relay {relay['median']} ms" if relay else "")
            + f"); kernel, server and websocket both ways {h['kernel_wire_and_server_ms_median']} ms",
            "roundtrip_browser_hops",
        )
    if "burst" in r:
        b = r["burst"]
        row(
            f"burst: {b['sent']} applies issued before the target is ready",
            f"{b['applied']} applied, in order: {b['in_order']}, duplicates: {b['duplicates']}, "
            f"drain {b['drain_ms'] / 1000:.1f} s after ready ({b['total_s']} s in all)",
            "burst",
        )
    if "stream" in r:
        s = r["stream"]
        c = s["coalesced"]
        row("stream at 1,000 applies/s for 10 s, every value sent", _plain_stream(s), "stream")
        row(
            "the same with `sim.stream` (coalescing)",
            f"{c['applied_per_s']} applies/s carry {c['given']} values ({c['coalesced']} coalesced away), "
            f"last value {c['last']}, {_fps(c)}",
            "stream",
        )
    if "agent_requests_ratio" in r:
        row(
            "agent LLM requests, classic / ours (multi-parameter tasks), scripted models",
            f"{r['agent_requests_ratio']}x (prompt tokens {r['agent_prompt_tokens_ratio']}x, estimated): the "
            'classic model is made to stop after every tool round and be told "Proceed."',
            "agent_requests_ratio",
        )
    if "agent_wire" in r:
        row(
            "the same at fake OpenAI / Anthropic / Gemini servers (requests and bytes counted there)",
            _wire(r["agent_wire"]),
            "agent_wire",
        )
    if "import_s" in r:
        row(
            "`import splitbrain_widget`",
            f"{r['import_s']['median']} s (no pydantic model built; manifest, widget and agent load on first use)",
            "import_s",
        )
    if "widget_create_ms" in r:
        row("widget creation", f"{r['widget_create_ms']} ms", "widget_create_ms")
        row(
            "memory per widget / per 1000 audit entries",
            f"{r['memory_per_widget_kib']} KiB / {r['memory_per_1000_audit_entries_kib']} KiB",
            "memory_per_widget_kib",
        )
    if "js_bytes" in r:
        row("shipped JS", ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in r["js_bytes"].items()), "js_bytes")
    if "security" in r:
        sec = r["security"]
        mem, fl = sec.get("record_memory"), sec.get("flood")
        if mem:
            hm, hon = mem["hostile"], mem["honest"]
            row(
                "kernel memory for `record(60)` of a hostile page (states of 330,000 lists each), headless",
                f"Python peak {hm['python_peak_mib']} MiB for {hm['rows']} rows (an honest page: "
                f"{hon['python_peak_mib']} MiB); resident {hm['rss_before_mib']} -> {hm['rss_after_mib']} MiB",
                "security",
            )
        if fl:
            row(
                "an honest widget's slowest call beside a 1 s raw postMessage flood, JupyterLab",
                f"{fl['parent_median_s']} s with the flood posted to its sandbox frame; {fl['top_median_s']} s "
                f"posted to the notebook page, {fl['top_over_parent']}x (medians of {fl['runs']} runs; "
                f"requests at the log server: {fl['requests_reached']})",
                "security",
            )
    if "mcp" in r:
        for kind, where in (
            ("scripted", "the in-process fake view"),
            ("headless", "a headless page"),
            ("live", "a live view in JupyterLab (the Python call from a cell)"),
        ):
            for era, label in (("modern", "2026-07-28"), ("handshake", "handshake era")):
                fig = (r["mcp"].get(kind) or {}).get(era)
                if not fig:
                    continue
                m, f, d = fig["mcp_ms"], fig["floor_ms"], fig["python_ms"]
                row(
                    f"`set_parameters` through the MCP server ({label}, SDK client, streamable HTTP) beside the "
                    f"SDK's bare echo server and Python, {where}",
                    f"median {m['median']} ms (p95 {m['p95']}); the SDK's floor {f['median']} ms: "
                    f"+{fig['added_over_floor_ms']} ms; in Python {d['median']} ms (n={m['n']}, alternating)",
                    "mcp",
                )
    if "mcp_apps" in r:
        fig = r["mcp_apps"]
        a, h = fig["app_ms"], fig["headless_ms"]
        row(
            "`set_parameters` from a chat host that renders MCP Apps: the page in the chat's view vs a headless page",
            f"median {a['median']} ms, p95 {a['p95']} ms; headless page {h['median']} ms median: "
            f"{fig['app_over_headless']}x (n={a['n']}, alternating)",
            "mcp_apps",
        )
    if "lite" in r:
        lite = r["lite"]
        row(
            "the browser quickstart on a JupyterLite site (Pyodide "
            f"{lite['pyodide']}), opened to its last cell, run cell by cell in Chromium",
            f"{lite['total_s']} s: the kernel {lite['kernel_s']} s, the package's install from the site "
            f"{lite['install_s']} s, the widget's page ready {lite['widget_s']} s, a change on the page "
            f"{lite['change_s']} s (best of {lite['runs']}; requests off 127.0.0.1: {lite['requests_refused']})",
            "lite",
        )
    if "pictures" in r:
        pic = r["pictures"]
        targets = pic.get("targets") or {}
        if targets:
            sizes = ", ".join(f"{t} {v['picture_bytes'] // 1000} KB" for t, v in targets.items())
            exports = [v["export_bytes"] for v in targets.values()]
            row(
                "a picture of a built-in target (`sim.snapshot()`, 960 x 420 PNG) and its `sim.to_html()` file",
                f"pictures: {sizes}; files {min(exports) // 1000}-{max(exports) // 1000} KB",
                "pictures",
            )
        change = pic.get("after_change")
        if change:
            a, b = change["set_and_snapshot_ms"], change["set_and_fetch_state_ms"]
            row(
                "a change then a fresh picture (`set_parameter` + `snapshot()`) vs a change then a fresh state",
                f"median {a['median']} ms, p95 {a['p95']} ms; with a state instead {b['median']} ms median: "
                f"{change['picture_over_state']}x (n={a['n']}, alternating)",
                "pictures",
            )
        book = pic.get("notebook")
        if book:
            row(
                "a notebook of 3 widgets executed headless (`nbconvert --execute`) with pictures vs without",
                f"{book['seconds_with_pictures']} s vs {book['seconds_without']} s: {book['with_over_without']}x "
                f"(medians of {book['runs']}, alternating); {book['bytes_with_pictures'] // 1000} KB vs "
                f"{book['bytes_without'] // 1000} KB"
                + (
                    f", of which {book['bytes_of_widget_state'] // 1000} KB is the widget state nbclient saves"
                    if book.get("bytes_of_widget_state")
                    else ""
                ),
                "pictures",
            )
    if "headless" in r:
        h = r["headless"]
        rt, sw, adv, dk = h.get("roundtrip_ms"), h.get("sweep"), h.get("advance"), h.get("dask")
        if rt:
            row(
                "headless round trip (`HeadlessTarget.set_parameter` -> reply)",
                f"median {rt['median']} ms, p95 {rt['p95']} ms, p99 {rt['p99']} ms (n={rt['n']})",
                "headless",
            )
        if sw:
            row(
                f"`sb.sweep` on {sw['target']}, {sw['points']} points",
                f"{sw['points_per_s_1_page']} points/s with 1 page, {sw['points_per_s_n_pages']} with "
                f"{sw['n_pages']} (tables identical: {sw['identical']})",
                "headless",
            )
        if adv:
            row(
                f"`advance` on the {adv['target']} (simulated seconds per wall second)",
                f"{adv['sim_s_per_wall_s']}x at 60 fps, {adv['sim_s_per_wall_s_10fps']}x at 10 fps",
                "headless",
            )
        rec = h.get("record")
        if rec:
            row(
                f"`sim.record({rec['simulated_s']:g})` on the headless {rec['target']}, every {rec['every']:g} s",
                f"{rec['rows']} rows in {rec['wall_s']} s wall ({rec['ms_per_row']} ms a row: one advance each)",
                "headless",
            )
        if dk:
            row(
                f"the same sweep on a Dask LocalCluster({dk['workers']})",
                f"{dk['points_per_s']} points/s, {dk['ratio']}x the local run (tables identical: {dk['identical']})",
                "headless",
            )
    if "steering" in r:
        row(
            f"steering: plain-language tasks on the built-in targets, `{r['steering']['model']}`",
            _steering(r),
            "steering",
        )
    if "target_fps" in r:
        row(
            "target frame rates (headless Chromium, one target per page)",
            ", ".join(f"{k} {v}" for k, v in r["target_fps"].items()),
            "target_fps",
        )
    return "\n".join(rows)


def _fps(part: dict[str, Any]) -> str:
    if "fps_idle" not in part:  # measured before the counter counted distinct frames
        return f"target at {part['fps']} fps (rAF callbacks, repeats counted: not a frame rate)"
    return f"target at {part['fps']} fps (idle {part['fps_idle']})"


def _plain_stream(s: dict[str, Any]) -> str:
    if "applied" in s:
        over = f" over {s['duration_s']} s" if "duration_s" in s else ""
        head = f"{s['applied']} of {s['given']} values given applied ({s['applied_per_s']}/s{over})"
    else:
        head = f"{s['applied_per_s']} applied/s of {s['given']} values given (applied count not recorded)"
    dup = f", duplicates: {s['duplicates']}" if "duplicates" in s else ""
    return f"{head}, in order: {s['in_order']}{dup}, {_fps(s)}"


def _steering(r: dict[str, Any]) -> str:
    s = r["steering"]
    kinds = ", ".join(f"{kind} {k['passed']}/{k['tasks']}" for kind, k in s["by_kind"].items())
    return (
        f"{s['passed']}/{s['tasks']} passed ({s['success_rate']:.0%}; {kinds}); {s['requests']} LLM requests, "
        f"{s['input_tokens']} input / {s['output_tokens']} output tokens, {s['wall_s']} s answering "
        f"({s['seconds']} s with the pages)"
    )


def _wire(w: dict[str, Any]) -> str:
    parts = []
    for provider, f in w.items():
        parts.append(
            f"{provider}: {f['requests_ratio_loop']}x requests, {f['request_bytes_ratio_loop']}x bytes "
            f"({f['requests_ratio_stop']}x, {f['request_bytes_ratio_stop']}x stopping after every round)"
        )
    return "classic agent running through its tool loop: " + "; ".join(parts)


# -- the reading --------------------------------------------------------------------------------


def _x(value: float) -> str:
    return f"{value:g}x"


def _span(values: list[float], fmt: Callable[[float], str] = _x) -> str:
    """ ", 0.94x–1.41x over 3 runs" when more than one run is recorded, else ""."""
    if len(values) < 2:
        return ""
    return f"; {fmt(min(values))}–{fmt(max(values))} over the {len(values)} runs recorded"


def _latest(values: list[float], fmt: Callable[[float], str] = _x) -> str:
    """Which run a figure comes from: "one run", or "latest run; lo–hi over the N runs recorded"."""
    return "one run recorded" if len(values) < 2 else f"latest run{_span(values, fmt)}"


def effect(values: list[float]) -> str:
    """How a ratio (slow / fast setting) reads over its recorded runs: none, slower, faster or mixed."""
    low, high = 1 / (1 + NOISE), 1 + NOISE
    if all(low <= v <= high for v in values):
        return "none"
    if all(v > high for v in values):
        return "slower"
    if all(v < low for v in values):
        return "faster"
    return "mixed"


def _ratio_clause(values: list[float], slower: str, none: str) -> str:
    """The part of a sentence that states a ratio and what it means, following the recorded runs."""
    current, kind, which = values[-1], effect(values), _latest(values)
    if kind == "slower":
        return f"{slower} {_x(current)} slower ({which})"
    if kind == "none":
        return f"{none} {_x(current)} ({which}): within ±{NOISE:.0%}, the run-to-run noise here, so no difference"
    if kind == "faster":
        return f"{none} {_x(current)} ({which}): it was faster, not slower"
    return f"{none} {_x(current)} ({which}): no consistent effect"


def reading(r: dict[str, Any]) -> str:
    """The README's reading of the table, every figure taken from ``r``."""
    out: list[str] = []
    rt, hops, floor = r.get("roundtrip_browser_ms"), r.get("roundtrip_browser_hops"), r.get("roundtrip_scripted_ms")
    if rt:
        met = rt["median"] <= 5 and rt["p99"] <= 20
        sentence = (
            f"a blocking call's round trip is {rt['median']} ms at the median and {rt['p99']} ms at p99 "
            f"({'within' if met else 'outside'} the targets of 5 ms and 20 ms)"
        )
        if hops:
            sentence += f", of which the iframe and the target take {hops['iframe_and_target_ms']['median']} ms"
        if floor:
            sentence += f"; with a scripted frontend instead of the browser it is {floor['median']} ms"
        out.append(sentence + ".")
    if "deferred_echo_speedup" in r:
        clause = _ratio_clause(
            runs(r, "deferred_echo_speedup"),
            "sent after every call instead, it held up the next reply and made the median",
            "sent after every call instead, it changed the median by",
        )
        out.append(
            "One message goes each way per call: the kernel echoes the `values` trait to the views in a pause "
            f"between calls (at most 0.5 s later), not behind every request; {clause}."
        )
    if "nodelay_speedup" in r:
        clause = _ratio_clause(
            runs(r, "nodelay_speedup"),
            "turning TCP_NODELAY off made the median",
            "turning TCP_NODELAY off changed the median by",
        )
        out.append(f"With one message each way, {clause}.")
    if "nodelay_speedup_echo_per_call" in r:
        values = runs(r, "nodelay_speedup_echo_per_call")
        slow = r["roundtrip_browser_echo_per_call_nodelay_off_ms"]["median"]
        if effect(values) == "slower":
            out.append(
                "With two messages back to back (an echo after every call, or other widgets' traffic) Nagle's "
                f"algorithm meets the browser's delayed ACK: without TCP_NODELAY a call takes {slow} ms at the "
                f"median, {_x(values[-1])} slower ({_latest(values)}), so the server extension stays on."
            )
        else:
            out.append(
                f"With two messages back to back (an echo after every call) a call without TCP_NODELAY took {slow} "
                f"ms at the median, {_ratio_clause(values, 'that is', 'a ratio of')}."
            )
    burst, stream = r.get("burst"), r.get("stream")
    if burst or stream:
        sentence = (
            "Bursts are paced under jupyter_server's IOPub rate limit (1000 messages/s, past which it silently "
            "drops messages) in one first-in-first-out queue"
        )
        if burst:
            lost = burst["sent"] - burst["applied"]
            order = "in call order" if burst["in_order"] else "NOT in call order"
            rate = round(burst["applied"] / (burst["drain_ms"] / 1000)) if burst["drain_ms"] else 0
            sentence += (
                f": of {burst['sent']} applies issued before the target was ready, {burst['applied']} reached it, "
                f"{order}, with {burst['duplicates']} duplicates{f' and {lost} lost' if lost else ''}, "
                f"at {rate}/s once it was ready"
            )
        if stream:
            which = _latest(runs(r, "stream.applied_per_s"), lambda v: f"{v:g}/s")
            if "applied" in stream:
                missing = stream["given"] - stream["applied"]
                got = f"{stream['applied']} of {stream['given']} values"
                got += f" ({missing} missing)" if missing else " (every one)"
                sentence += (
                    f"; a stream of 1,000 applies/s for 10 s delivered {got} at {stream['applied_per_s']}/s ({which})"
                )
            else:
                sentence += (
                    f"; a stream of 1,000 applies/s for 10 s reached the page at {stream['applied_per_s']}/s ({which}; "
                    f"{stream['given']} values given, how many were applied was not recorded)"
                )
            if "fps_idle" in stream:
                sentence += (
                    f", while the counter target drew {stream['fps']} frames/s ({stream['fps_idle']} before the stream)"
                )
        out.append(sentence + ".")
    if "agent_requests_ratio" in r:
        sentence = (
            "The agent ratios replay scripted decisions, not a model's: in process, where the classic model is "
            'made to stop after every tool round and be told "Proceed.", classic needs '
            f"{_x(r['agent_requests_ratio'])} the requests of ours"
        )
        wire = r.get("agent_wire", {})
        if wire:
            loop = sorted({f["requests_ratio_loop"] for f in wire.values()})
            size = [f["request_bytes_ratio_loop"] for f in wire.values()]
            stop = sorted({f["requests_ratio_stop"] for f in wire.values()})
            sentence += (
                f"; counted at the fake {', '.join(wire)} servers, a classic agent that runs through its tool loop "
                f"needs {'–'.join(_x(v) for v in loop)} the requests and {_x(min(size))}–{_x(max(size))} the bytes "
                "(its requests carry no instructions, ours the schema and current values), and "
                f"{'–'.join(_x(v) for v in stop)} the requests when it stops after every round"
            )
        out.append(sentence + ".")
    steering = r.get("steering")
    if steering:
        goal = steering["by_kind"].get("goal", {"passed": 0, "tasks": 0})
        out.append(
            f"The steering tasks (`benchmarks/steering_tasks.json`, {steering['tasks']} over "
            f"{len(steering['by_target'])} targets, {steering['multi_step']} of them in several steps) are judged "
            "on the page's final values and observables, not on the reply; an out-of-reach request passes only "
            f"when the reply says so and nothing changed; `{steering['model']}` reached {goal['passed']} of the "
            f"{goal['tasks']} goals (an observable to bring to a value)."
        )
    out.append(
        "The browser section alternates settings between sessions (on, off, on, off) so its ratios compare like "
        "with like; the ranges are over the runs recorded in `benchmarks/results.json`, and rows measured on "
        "different dates were measured under different loads."
    )
    return f"{READING_PREFIX} " + " ".join(out)


def render(r: dict[str, Any]) -> str:
    """The README block: the table, what its "measured" column means, and the reading."""
    cpus = sorted({e["cpus"] for e in r.get("measured", {}).values() if e.get("cpus")})
    machine = f" on {'/'.join(str(c) for c in cpus)} cores" if cpus else ""
    note = (
        f"Measured by `make bench`{machine}. Each row's date is when its section last ran "
        "(`python -m benchmarks SECTION` reruns one and leaves the other sections' figures and dates alone); "
        "load is the 1-minute load average while it ran, the benchmark's own processes included."
    )
    return f"{table(r)}\n\n{_wrap(note)}\n\n{_wrap(reading(r))}"


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=WRAP, break_long_words=False, break_on_hyphens=False)


# -- README ---------------------------------------------------------------------------------------


def replace_block(text: str, block: str) -> str:
    """``text`` with the part between the markers replaced by ``block``; the rest stays byte for byte.

    A paragraph right after the end marker that starts with "Reading these:" is the old fixed reading,
    now generated inside the block: it is dropped, once.
    """
    if START not in text or END not in text:
        return text
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    stripped = tail.lstrip("\n")
    if stripped.startswith(READING_PREFIX):
        paragraph_end = stripped.find("\n\n")
        tail = "\n" + (stripped[paragraph_end + 1 :] if paragraph_end >= 0 else "")
    return f"{head}{START}\n{block}\n{END}{tail}"
