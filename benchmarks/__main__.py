"""``make bench``: run every benchmark, print a table, write results.json and the README's results section.

Figures are measured, printed and recorded here; tests never assert wall-clock limits.
Run one section with ``python -m benchmarks <name> [...]``: only that section's figures, date and
load change in results.json; the others keep theirs (benchmarks/report.py). ``--model NAME`` goes to
the sections that take a model (``python -m benchmarks steering --model openai:gpt-4o-mini``).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import platform
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .report import SECTIONS, Stamp, record, render, replace_block

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
RESULTS = HERE / "results.json"
LOAD_SAMPLE_S = 5.0
MODEL_SECTIONS = {"steering"}  # the sections whose run() takes model=


def run_section(name: str, *, model: str | None = None) -> dict[str, Any]:
    """Measure one section; its figures keyed as results.json keeps them."""
    module = importlib.import_module(f"benchmarks.{name}")
    section: dict[str, Any] = module.run() if model is None else module.run(model=model)
    if name == "roundtrip_scripted":
        section = {"roundtrip_scripted_ms": section}
    if name == "target_fps":
        section = {"target_fps": {target: row["800x420"] for target, row in section["fps"].items()}}
    return section


class LoadSampler:
    """The 1-minute load average, sampled while a section runs (min and max)."""

    def __init__(self, every_s: float = LOAD_SAMPLE_S) -> None:
        self.every_s = every_s
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join(self.every_s + 1)
        self.samples.append(os.getloadavg()[0])
        return {"min": round(min(self.samples), 2), "max": round(max(self.samples), 2)}


def measure(name: str, runner: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any], Stamp]:
    """Run one section; its figures and the stamp saying when and under what load it ran."""
    started = time.monotonic()
    sampler = LoadSampler()
    try:
        section = runner(name)
    finally:
        load = sampler.stop()
    stamp: Stamp = {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count() or 0,
        "python": platform.python_version(),
        "load_1m": load,
        "seconds": round(time.monotonic() - started),
    }
    return section, stamp


def main(
    names: list[str],
    *,
    results_path: Path = RESULTS,
    readme_path: Path = README,
    runner: Callable[[str], dict[str, Any]] = run_section,
    measure_section: Callable[[str, Callable[[str], dict[str, Any]]], tuple[dict[str, Any], Stamp]] = measure,
) -> dict[str, Any]:
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; sections: {', '.join(SECTIONS)}")
    results: dict[str, Any] = json.loads(results_path.read_text()) if results_path.exists() else {}
    for name in names or SECTIONS:
        print(f"== {name}", flush=True)
        section, stamp = measure_section(name, runner)
        results = record(results, name, section, stamp)
        results_path.write_text(json.dumps(results, indent=2) + "\n")  # after each section: a later failure keeps it
        print(json.dumps(section, indent=2)[:3000])
        print(f"   ({stamp['seconds']} s, load {stamp['load_1m']['min']}–{stamp['load_1m']['max']})", flush=True)
    block = render(results)
    print(block)
    update_readme(readme_path, block)
    return results


def update_readme(path: Path, block: str) -> None:
    """Replace only the benchmarks block, re-reading the file right before (others edit the rest of it)."""
    if not path.exists():
        return
    text = path.read_text()
    new = replace_block(text, block)
    if new != text:
        path.write_text(new)


def parse_args(argv: list[str]) -> tuple[list[str], str | None]:
    """Section names and ``--model NAME`` (or ``--model=NAME``), allowed only for the sections that take one."""
    names: list[str] = []
    model: str | None = None
    args = iter(argv)
    for arg in args:
        if arg == "--model" or arg.startswith("--model="):
            model = arg.partition("=")[2] if "=" in arg else next(args, "")
            if not model:
                raise SystemExit("--model needs a name, e.g. --model openai:gpt-4o-mini")
        else:
            names.append(arg)
    if model is not None and (not names or set(names) - MODEL_SECTIONS):
        raise SystemExit(f"--model applies only to {', '.join(sorted(MODEL_SECTIONS))}: name that section alone")
    return names, model


if __name__ == "__main__":
    sections, chosen = parse_args(sys.argv[1:])
    main(sections, runner=functools.partial(run_section, model=chosen))
