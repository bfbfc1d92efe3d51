"""sweep: every combination of a grid of parameter values, measured on headless pages, as a table.

.. code-block:: python

    import splitbrain_widget as sb

    df = sb.sweep("projectile", {"angle": range(10, 81, 5), "drag": [0, 0.02]})

The result is a pandas DataFrame with one row per point in grid order (the first parameter varies
slowest, as in :func:`itertools.product`): the parameter columns as given, the observables the page
measured, ``ok``, and ``error`` (the error code of a point that failed, else None). The pages do the
measuring; nothing is computed here. Several pages run at once in this process, or, with
``client=``, on the workers of a Dask cluster (``pip install 'splitbrain-widget[dask]'``).

pandas and tqdm are imported when a sweep runs, dask only when a client is given.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core import _twins
from .core._platform import desktop_only, need

if TYPE_CHECKING:
    import pandas

    from .features._sweep_pages import Outcome, Plan
    from .manifest import Manifest
    from .manifest.registry import Target
    from .widget import TargetWidget

__all__ = ["sweep"]

MAX_POINTS = 1_000_000
MAX_PAGES = 32
DEFAULT_WORKER_PAGES = 2  # pages on each Dask worker
PROGRESS_DELAY_S = 1.0  # the bar shows only once a sweep has run this long
RESERVED_COLUMNS = ("ok", "error")


def sweep(
    target: str | Path | TargetWidget,
    grid: Mapping[str, Any],
    *,
    measure: str | Iterable[str] | None = None,
    advance: float | None = None,
    client: Any = None,
    pages: int | None = None,
    progress: bool = True,
) -> pandas.DataFrame:
    """Measure every combination of ``grid`` on headless pages of ``target``; one row per point.

    Args:
        target: a target id or path, or a :class:`~splitbrain_widget.TargetWidget` /
            :class:`~splitbrain_widget.HeadlessTarget`: its target, with its current values as the
            starting point of every point.
        grid: parameter name (dotted path or unique leaf name) -> the values to try (any iterable; a
            string or a single number is one value; an array parameter takes a list of lists).
        measure: the observables to record (a name or several); by default every observable of the
            manifest (every state key that is not a parameter, when the manifest names none).
        advance: simulated seconds each point runs before it is measured (from the target's reset);
            None measures what the page reports right after it applied the point.
        client: a ``dask.distributed.Client``: the points run on its workers, each with its own browser.
        pages: pages at once (on each worker, with ``client``); by default one per core here, or
            2 per worker.
        progress: show a progress bar (notebook-aware) once a sweep has run for a second.

    Returns:
        A pandas DataFrame with the grid's columns, the measured observables, ``ok`` and ``error``.
        A point that failed (a value the manifest refuses, a page that did not answer) is a row with
        ``ok=False``, its error code and no observables; the other rows are unaffected.

    Raises:
        ParameterError: a grid name is no parameter of the target (the hint names the closest), or
            a read-only one.
        ValueError: an empty grid, a parameter without values, an unknown observable in ``measure``,
            a bad ``advance`` or ``pages``.
        TargetError: no such target.
        HeadlessUnavailable: no Chromium or playwright here (at once, with how to install them).
        NotInBrowser: in the browser's Python (JupyterLite), locally or on Dask.
    """
    desktop_only("sweep (headless pages, locally or on Dask)", "set the values from cells, one at a time")
    loaded, spec, base = _resolve_target(target)
    manifest = loaded.manifest
    keys, paths, points = _expand(grid, manifest)
    measured = _measure_names(measure, manifest, keys)
    seconds = _check_advance(advance)
    per_host = _check_pages(pages, client)

    from .features._sweep_pages import Plan
    from .headless import HeadlessTarget

    if client is None:
        per_host = min(per_host, len(points))
    base = {path: value for path, value in base.items() if path not in paths}  # the grid sets those
    plan = Plan(target=spec, measure=measured, advance=seconds, pages=per_host, open_page=HeadlessTarget, base=base)
    outcomes = _run(plan, points, client, progress, loaded.id)
    return _frame(keys, points, measured, outcomes)


# -- arguments ------------------------------------------------------------------------------------


def _resolve_target(target: Any) -> tuple[Target, str, dict[str, Any]]:
    """The target, what a page opens it by (a built-in's id, else its page's path), and the base values."""
    from .manifest.registry import load_target
    from .widget import TargetWidget

    base: dict[str, Any] = {}
    if isinstance(target, TargetWidget):
        loaded = target.target
        defaults = loaded.manifest.defaults()
        base = {path: value for path, value in target.values.items() if path in defaults and defaults[path] != value}
    elif isinstance(target, str | Path):
        loaded = load_target(target)
    else:
        raise TypeError(
            "sweep(target=...) takes a target id, a path to a target, or a TargetWidget / HeadlessTarget; "
            f"got {type(target).__name__}"
        )
    if loaded.builtin:
        return loaded, loaded.id, base
    if loaded.page is None:
        raise ValueError(f"sweep(target=...): target {loaded.id!r} has no page file for the sweep's pages to open")
    return loaded, str(loaded.page), base


def _expand(grid: Any, manifest: Manifest) -> tuple[list[str], set[str], list[dict[str, Any]]]:
    """The grid's names, the parameter paths they name, and every combination of their values in order."""
    from .manifest import ParameterError

    if not isinstance(grid, Mapping):
        raise TypeError(f"sweep(grid=...) takes a mapping of parameter name -> values, got {type(grid).__name__}")
    if not grid:
        raise ValueError(f"sweep(grid=...) is empty: name at least one parameter and its values ({manifest.names()})")
    keys = list(grid)
    seen: dict[str, str] = {}
    columns: list[list[Any]] = []
    for key in keys:
        try:
            parameter = manifest.resolve(key)
        except ParameterError as exc:
            raise ParameterError(exc.code, f"sweep(grid=...): {exc.message}", name=exc.name, hint=exc.hint) from None
        if parameter.readonly:
            raise ParameterError(
                "readonly", f"sweep(grid=...): parameter '{key}' is read-only in target {manifest.id}", name=key
            )
        if parameter.path in seen:
            raise ValueError(f"sweep(grid=...): '{seen[parameter.path]}' and '{key}' name the same parameter")
        seen[parameter.path] = key
        values = _values(grid[key])
        if not values:
            raise ValueError(f"sweep(grid=...): grid[{key!r}] has no values")
        columns.append(values)
    count = math.prod(len(values) for values in columns)
    if count > MAX_POINTS:
        raise ValueError(f"sweep(grid=...) has {count} points, more than the {MAX_POINTS} one sweep takes")
    points = [dict(zip(keys, combination, strict=True)) for combination in itertools.product(*columns)]
    return keys, set(seen), points


def _values(raw: Any) -> list[Any]:
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Iterable):
        return [_plain(raw)]
    return [_plain(value) for value in raw]


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (the manifest and JSON take those)."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _measure_names(measure: Any, manifest: Manifest, keys: Sequence[str]) -> tuple[str, ...] | None:
    """The observables to keep; None for every state key that is not a parameter (no observables declared)."""
    from .features import _observables

    names = _observables.names(measure, manifest, "sweep(measure=...)")
    if names is None:
        names = list(manifest.observables)
    for name in names:
        if name in keys or name in RESERVED_COLUMNS:
            raise ValueError(f"sweep(measure=...): '{name}' would be a second column of that name; leave it out")
    return tuple(names) if names else None


def _check_advance(advance: Any) -> float | None:
    if advance is None:
        return None
    if isinstance(advance, bool) or not isinstance(advance, int | float) or not math.isfinite(advance) or advance < 0:
        raise ValueError(f"sweep(advance=...) takes simulated seconds, a finite number >= 0, got {advance!r}")
    return float(advance)


def _check_pages(pages: Any, client: Any) -> int:
    if pages is None:
        return DEFAULT_WORKER_PAGES if client is not None else max(1, min(os.cpu_count() or 1, 8))
    if isinstance(pages, bool) or not isinstance(pages, int) or not 1 <= pages <= MAX_PAGES:
        where = " on each worker" if client is not None else ""
        raise ValueError(f"sweep(pages=...) takes a whole number of pages{where} from 1 to {MAX_PAGES}, got {pages!r}")
    return pages


# -- running and the table ------------------------------------------------------------------------


def _run(plan: Plan, points: list[dict[str, Any]], client: Any, progress: bool, target_id: str) -> list[Outcome]:
    from tqdm.auto import tqdm

    if client is None:
        from .hosts._headless_engine import chromium_executable

        chromium_executable()  # no browser: say so now, before any thread starts
    with tqdm(
        total=len(points), desc=f"sweep {target_id}", unit="point", delay=PROGRESS_DELAY_S, disable=not progress
    ) as bar:

        def step(done: int) -> None:  # after each point: a cancelled awaiter (an MCP task) ends the sweep
            if _twins.stopped():
                raise asyncio.CancelledError(f"the sweep of {target_id} was cancelled")
            bar.update(done)

        if client is None:
            from .features._sweep_pages import run_local

            return run_local(plan, points, step)
        try:
            from .features._sweep_dask import run_on_cluster
        except ImportError as exc:
            raise ImportError(
                f"sweep(client=...) needs dask.distributed ({exc}): pip install 'splitbrain-widget[dask]'"
            ) from None
        return run_on_cluster(client, plan, points, step)


def _frame(
    keys: list[str], points: list[dict[str, Any]], measured: tuple[str, ...] | None, outcomes: list[Outcome]
) -> pandas.DataFrame:
    pandas = need("pandas", "sweep()")

    if measured is None:  # no observables declared: every key any page reported, in the order first seen
        measured = tuple(dict.fromkeys(key for outcome in outcomes for key in outcome.observed))
    rows = [
        [*point.values(), *(outcome.observed.get(name) for name in measured), outcome.ok, outcome.error]
        for point, outcome in zip(points, outcomes, strict=True)
    ]
    return pandas.DataFrame(rows, columns=[*keys, *measured, *RESERVED_COLUMNS])
