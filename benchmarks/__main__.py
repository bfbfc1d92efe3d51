"""``make bench``: run every benchmark, print a table, write results.json and the README's results section.

Figures are measured, printed and recorded here; tests never assert wall-clock limits.
Run one section with ``python -m benchmarks <name> [...]``: only that section's figures, date and
load change in results.json; the others keep theirs (benchmarks/report.py). ``--model NAME`` goes to
the sections that take a model (``python -m benchmarks steering --model openai:gpt-4o-mini``).

``python -m benchmarks --smoke [<name> ...]`` (``make bench-smoke``; CI runs it): every section (or
those named) with a few calls or iterations each, so a section that breaks is seen the day it breaks.
Each section's ``run(smoke=True)`` picks its small sizes; steering runs on the offline planner
(``--model`` is refused), the JupyterLab sections start their own server as always. It prints what
each section measured and how long it took, writes nothing (results.json and README.md stay as they
are: smoke figures are no measurements), runs every section even after one failed, and exits 1 if
any raised. A section whose ``run()`` takes no ``smoke`` runs at full size, and says so.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import platform
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from .report import SECTIONS, Stamp, record, render, replace_block

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
RESULTS = HERE / "results.json"
LOAD_SAMPLE_S = 5.0
MODEL_SECTIONS = {"steering"}  # the sections whose run() takes model=


def takes_smoke(run: Callable[..., Any]) -> bool:
    """Whether a section's ``run`` takes ``smoke=`` (every section's does, or will: see run_section)."""
    return "smoke" in inspect.signature(run).parameters


def run_section(name: str, *, model: str | None = None, smoke: bool = False) -> dict[str, Any]:
    """Measure one section (``smoke``: at its small sizes); its figures keyed as results.json keeps them."""
    module = importlib.import_module(f"benchmarks.{name}")
    options: dict[str, Any] = {} if model is None else {"model": model}
    if smoke and takes_smoke(module.run):
        options["smoke"] = True
    elif smoke:  # a section not yet given its small sizes still runs, all of it, rather than not at all
        print(f"   ({name}: its run() takes no smoke=, so it runs at full size)", flush=True)
    section: dict[str, Any] = module.run(**options)
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


def chosen(names: list[str]) -> list[str]:
    """The sections to run: ``names``, or every section when none is named (SystemExit on an unknown name)."""
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; sections: {', '.join(SECTIONS)}")
    return names or list(SECTIONS)


def main(
    names: list[str],
    *,
    results_path: Path = RESULTS,
    readme_path: Path = README,
    runner: Callable[[str], dict[str, Any]] = run_section,
    measure_section: Callable[[str, Callable[[str], dict[str, Any]]], tuple[dict[str, Any], Stamp]] = measure,
) -> dict[str, Any]:
    sections = chosen(names)
    results: dict[str, Any] = json.loads(results_path.read_text()) if results_path.exists() else {}
    for name in sections:
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


def run_section_small(name: str) -> dict[str, Any]:
    """One section at its small sizes (the smoke run's)."""
    return run_section(name, smoke=True)


def smoke(names: list[str], *, runner: Callable[[str], dict[str, Any]] = run_section_small) -> list[str]:
    """Run each section once at its small sizes, printing its figures and its time, writing nothing;
    the sections that raised (each one's traceback printed as it happened, the others still run)."""
    failed: list[str] = []
    seconds: dict[str, float] = {}
    for name in chosen(names):
        print(f"== {name} (smoke)", flush=True)
        started = time.monotonic()
        try:
            section = runner(name)
        except (Exception, SystemExit):  # SystemExit too: a section that cannot run (no Chromium) exits
            traceback.print_exc()
            failed.append(name)
        else:
            print(json.dumps(section, indent=2, default=str)[:3000])
        seconds[name] = time.monotonic() - started
        print(f"   ({seconds[name]:.1f} s)", flush=True)
    print("== smoke: seconds per section")
    for name, took in seconds.items():
        print(f"   {name:<20} {took:6.1f}  {'FAILED' if name in failed else 'ok'}")
    print(f"   {'total':<20} {sum(seconds.values()):6.1f}  {f'{len(failed)} failed' if failed else 'all ran'}")
    return failed


def update_readme(path: Path, block: str) -> None:
    """Replace only the benchmarks block, re-reading the file right before (others edit the rest of it)."""
    if not path.exists():
        return
    text = path.read_text()
    new = replace_block(text, block)
    if new != text:
        path.write_text(new)


class Options(NamedTuple):
    names: list[str]  # the sections named; none: every section
    model: str | None  # --model NAME
    smoke: bool  # --smoke


def parse_args(argv: list[str]) -> Options:
    """Section names, ``--model NAME`` (or ``--model=NAME``), allowed only for the sections that take one,
    and ``--smoke`` (never with ``--model``: a smoke run asks no model but the offline planner)."""
    names: list[str] = []
    model: str | None = None
    smoke_run = False
    args = iter(argv)
    for arg in args:
        if arg == "--model" or arg.startswith("--model="):
            model = arg.partition("=")[2] if "=" in arg else next(args, "")
            if not model:
                raise SystemExit("--model needs a name, e.g. --model openai:gpt-4o-mini")
        elif arg == "--smoke":
            smoke_run = True
        else:
            names.append(arg)
    if model is not None and smoke_run:
        raise SystemExit("--smoke runs the steering section on the offline planner: drop --model")
    if model is not None and (not names or set(names) - MODEL_SECTIONS):
        raise SystemExit(f"--model applies only to {', '.join(sorted(MODEL_SECTIONS))}: name that section alone")
    return Options(names, model, smoke_run)


if __name__ == "__main__":
    options = parse_args(sys.argv[1:])
    if options.smoke:
        sys.exit(1 if smoke(options.names) else 0)
    main(options.names, runner=functools.partial(run_section, model=options.model))
