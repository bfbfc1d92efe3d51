"""The IOPub pacer: bursts stay under the server's rate limit; single calls never wait."""

from __future__ import annotations

import itertools
import time

from splitbrain_widget._pacing import Pacer


def test_calls_within_the_budget_go_at_once() -> None:
    pacer = Pacer(per_second=100, window=1.0)
    assert all(pacer.reserve(1) == 0 for _ in range(100))


def test_a_burst_past_the_budget_is_spread_over_windows() -> None:
    pacer = Pacer(per_second=100, window=1.0)
    started = time.monotonic()
    starts = [time.monotonic() + pacer.reserve(1) - started for _ in range(300)]
    assert max(starts[:100]) < 0.1  # the first window's worth goes now
    assert all(0.9 < s <= 1.1 for s in starts[100:200])  # the next waits one window
    assert all(1.9 < s <= 2.1 for s in starts[200:])  # and the next two
    assert all(b >= a - 1e-3 for a, b in itertools.pairwise(starts))  # in order
