"""The IOPub pacer: bursts stay under the server's rate limit, in call order; single calls never wait."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

import pytest

from splitbrain_widget._pacing import Pacer


def test_calls_within_the_budget_go_at_once_on_the_callers_thread() -> None:
    pacer = Pacer(per_second=100, window=1.0)
    sent: list[tuple[int, str]] = []
    for i in range(100):
        assert pacer.submit(1, lambda i=i: sent.append((i, threading.current_thread().name))) is None
    assert [i for i, _ in sent] == list(range(100))
    assert {name for _, name in sent} == {threading.current_thread().name}


def test_a_burst_past_the_budget_is_spread_over_windows_in_order() -> None:
    pacer = Pacer(per_second=100, window=1.0)
    started = time.monotonic()
    sent: list[tuple[int, float]] = []
    done = threading.Event()

    def send(i: int) -> None:
        sent.append((i, time.monotonic() - started))
        if i == 299:
            done.set()

    tickets = [pacer.submit(1, lambda i=i: send(i)) for i in range(300)]
    assert all(t is None for t in tickets[:100]) and all(t is not None for t in tickets[100:])
    assert done.wait(10)
    assert [i for i, _ in sent] == list(range(300))  # first come, first served
    at = [s for _, s in sent]
    assert max(at[:100]) < 0.1  # the first window's worth goes now
    assert all(0.9 < s <= 1.3 for s in at[100:200])  # the next waits one window
    assert all(1.9 < s <= 2.3 for s in at[200:])  # and the next two
    assert all(b >= a for a, b in itertools.pairwise(at))
    assert all(t.sent for t in tickets[100:] if t is not None)


def test_a_call_that_finds_a_queue_waits_behind_it_even_when_the_budget_has_room() -> None:
    pacer = Pacer(per_second=10, window=0.5)  # 5 messages per window
    order: list[str] = []
    done = threading.Event()
    assert pacer.submit(5, lambda: order.append("a")) is None
    assert pacer.submit(3, lambda: order.append("b")) is not None  # over: queued
    assert pacer.submit(1, lambda: (order.append("c"), done.set())) is not None  # would fit later: behind b
    assert done.wait(5)
    assert order == ["a", "b", "c"]


def test_concurrent_async_callers_are_sent_in_submission_order() -> None:
    pacer = Pacer(per_second=200, window=0.2)  # 40 per window
    sent: list[int] = []

    async def call(i: int) -> None:
        ready = asyncio.Event()
        loop = asyncio.get_running_loop()
        ticket = pacer.submit(1, lambda: sent.append(i), on_sent=lambda: loop.call_soon_threadsafe(ready.set))
        if ticket is not None:
            await ready.wait()

    async def burst() -> None:
        await asyncio.gather(*(call(i) for i in range(400)))

    asyncio.run(burst())
    assert sent == list(range(400))


def test_a_cancelled_ticket_is_skipped_and_the_rest_keep_their_order() -> None:
    pacer = Pacer(per_second=10, window=0.3)  # 3 per window
    sent: list[int] = []
    done = threading.Event()
    tickets = [pacer.submit(1, lambda i=i: (sent.append(i), i == 7 and done.set())) for i in range(8)]
    assert tickets[4] is not None and pacer.cancel(tickets[4])
    assert done.wait(5)
    assert sent == [0, 1, 2, 3, 5, 6, 7]
    assert tickets[7] is not None and not pacer.cancel(tickets[7])  # already sent: too late


def test_a_failing_send_does_not_stop_the_ones_behind_it() -> None:
    pacer = Pacer(per_second=10, window=0.2)  # 2 per window
    sent: list[int] = []
    done = threading.Event()

    def send(i: int) -> None:
        if i == 3:
            raise RuntimeError("comm closed")
        sent.append(i)
        if i == 5:
            done.set()

    for i in range(6):
        pacer.submit(1, lambda i=i: send(i))
    assert done.wait(5)
    assert sent == [0, 1, 2, 4, 5]
    assert not pacer.busy


def test_the_sender_thread_ends_when_idle_and_a_new_burst_starts_another(monkeypatch: pytest.MonkeyPatch) -> None:
    import splitbrain_widget._pacing as pacing

    monkeypatch.setattr(pacing, "IDLE_EXIT_S", 0.2)
    pacer = Pacer(per_second=10, window=0.2)
    for round_ in range(2):
        done = threading.Event()
        for i in range(4):
            pacer.submit(1, lambda i=i, done=done: i == 3 and done.set())
        assert done.wait(5), f"round {round_}"
        deadline = time.monotonic() + 5
        while pacer._thread is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pacer._thread is None
