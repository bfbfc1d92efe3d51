"""Small statistics helpers shared by the benchmarks."""

from __future__ import annotations

import statistics


def summary(samples_ms: list[float]) -> dict[str, float]:
    """Median, p95, p99, mean and count of a list of milliseconds."""
    ordered = sorted(samples_ms)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    return {
        "median": round(statistics.median(ordered), 3),
        "p95": round(pct(95), 3),
        "p99": round(pct(99), 3),
        "mean": round(statistics.fmean(ordered), 3),
        "n": len(ordered),
    }
