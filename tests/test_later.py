"""The deferred-call thread: callbacks run when due, in time order, on one thread, past failures."""

from __future__ import annotations

import threading
import time

from splitbrain_widget.core._later import Later


def test_callbacks_run_when_due_in_time_order_on_one_thread() -> None:
    later = Later()
    ran: list[tuple[str, float, str]] = []
    done = threading.Event()
    start = time.monotonic()

    def record(name: str) -> None:
        ran.append((name, time.monotonic() - start, threading.current_thread().name))
        if len(ran) == 3:
            done.set()

    later.call_at(start + 0.3, lambda: record("c"))
    later.call_at(start + 0.1, lambda: record("a"))
    later.call_at(start + 0.2, lambda: record("b"))
    assert done.wait(5)
    assert [name for name, _, _ in ran] == ["a", "b", "c"]
    assert all(at >= due - 0.005 for (_, at, _), due in zip(ran, (0.1, 0.2, 0.3), strict=True))
    assert {thread for _, _, thread in ran} == {"splitbrain-later"}


def test_a_failing_callback_does_not_stop_the_next() -> None:
    later = Later()
    done = threading.Event()

    def boom() -> None:
        raise RuntimeError("the comm closed")

    later.call_at(time.monotonic(), boom)
    later.call_at(time.monotonic() + 0.05, done.set)
    assert done.wait(5)


def test_the_thread_init_runs_once_before_the_first_callback() -> None:
    inits: list[str] = []
    later = Later(thread_init=lambda: inits.append(threading.current_thread().name))
    done = threading.Event()
    for i in range(5):
        later.call_at(time.monotonic() + i * 0.01, done.set if i == 4 else (lambda: None))
    assert done.wait(5)
    assert inits == ["splitbrain-later"]
