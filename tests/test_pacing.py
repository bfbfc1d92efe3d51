"""The pacer: bursts stay under the server's rate limit and a window in flight, in call order; single calls never wait."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from splitbrain_widget.core._pacing import Pacer


def test_calls_within_the_budget_go_at_once_on_the_callers_thread() -> None:
    pacer = Pacer(per_second=100, burst=100, in_flight=1)
    sent: list[tuple[int, str]] = []
    for i in range(100):
        assert pacer.submit(1, lambda i=i: sent.append((i, threading.current_thread().name))) is None
        pacer.done()
    assert [i for i, _ in sent] == list(range(100))
    assert {name for _, name in sent} == {threading.current_thread().name}


def test_a_burst_past_the_bucket_is_sent_at_the_rate_in_order() -> None:
    """Past the bucket, sends go one by one at the rate: never a run of more than ``burst`` at once
    (a sudden run of 1,800 requests overflowed ZeroMQ's high-water marks and lost whole runs)."""
    pacer = Pacer(per_second=200, burst=20, in_flight=10_000)
    started = time.monotonic()
    sent: list[tuple[int, float]] = []
    done = threading.Event()

    def send(i: int) -> None:
        sent.append((i, time.monotonic() - started))
        if i == 119:
            done.set()

    tickets = [pacer.submit(1, lambda i=i: send(i)) for i in range(120)]
    assert all(t is None for t in tickets[:20]) and all(t is not None for t in tickets[20:])
    assert done.wait(10)
    assert [i for i, _ in sent] == list(range(120))  # first come, first served
    # The rate is an upper bound that load can only lower: by any moment t, at most burst + rate * t.
    slack = 2  # a token's worth of timer granularity
    assert all(n + 1 <= 20 + 200 * at + slack for n, (_, at) in enumerate(sent))
    assert all(t.sent for t in tickets[20:] if t is not None)


def test_a_widget_never_has_more_than_its_window_in_flight() -> None:
    """The page's answers pace a burst: past the window, sends wait for :meth:`Pacer.done`."""
    pacer = Pacer(per_second=1e6, burst=10_000, in_flight=5)
    sent: list[int] = []
    tickets = [pacer.submit(1, lambda i=i: sent.append(i), key="a") for i in range(12)]
    assert sent == [0, 1, 2, 3, 4] and all(t is not None for t in tickets[5:])
    assert pacer.in_flight("a") == 5
    other: list[int] = []
    other_ticket = pacer.submit(1, lambda: other.append(1), key="b")  # another widget is not held up
    deadline = time.monotonic() + 5
    while not other and time.monotonic() < deadline:
        time.sleep(0.01)
    assert other == [1] and sent == [0, 1, 2, 3, 4]
    assert other_ticket is None or other_ticket.sent
    for answered in range(7):
        pacer.done("a")
        want = list(range(min(12, 6 + answered)))
        deadline = time.monotonic() + 5
        while sent != want and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sent == want, answered
        assert pacer.in_flight("a") <= 5


def test_a_call_that_finds_a_queue_waits_behind_it_even_when_the_budget_has_room() -> None:
    pacer = Pacer(per_second=10, burst=5, in_flight=10_000)
    order: list[str] = []
    done = threading.Event()
    assert pacer.submit(5, lambda: order.append("a")) is None
    assert pacer.submit(3, lambda: order.append("b")) is not None  # over: queued
    assert pacer.submit(1, lambda: (order.append("c"), done.set())) is not None  # would fit later: behind b
    assert done.wait(5)
    assert order == ["a", "b", "c"]


def test_concurrent_async_callers_are_sent_in_submission_order() -> None:
    pacer = Pacer(per_second=2000, burst=40, in_flight=10_000)
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
    pacer = Pacer(per_second=10, burst=3, in_flight=10_000)
    sent: list[int] = []
    done = threading.Event()
    tickets = [pacer.submit(1, lambda i=i: (sent.append(i), i == 7 and done.set())) for i in range(8)]
    assert tickets[4] is not None and pacer.cancel(tickets[4])
    assert done.wait(5)
    assert sent == [0, 1, 2, 3, 5, 6, 7]
    assert tickets[7] is not None and not pacer.cancel(tickets[7])  # already sent: too late


def test_a_failing_send_does_not_stop_the_ones_behind_it() -> None:
    pacer = Pacer(per_second=20, burst=2, in_flight=10_000)
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
    import splitbrain_widget.core._pacing as pacing

    monkeypatch.setattr(pacing, "IDLE_EXIT_S", 0.2)
    pacer = Pacer(per_second=40, burst=2, in_flight=10_000)
    for round_ in range(2):
        done = threading.Event()
        for i in range(4):
            pacer.submit(1, lambda i=i, done=done: i == 3 and done.set())
        assert done.wait(5), f"round {round_}"
        deadline = time.monotonic() + 5
        while pacer._thread is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert pacer._thread is None
