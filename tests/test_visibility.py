"""A notebook page in the background (issue #20, protocol 1.6): the kernel knows, audits it, and a
call that needs the page's own clock answers ``page_hidden`` at once instead of waiting out its
deadline; when the page comes back the kernel sends the values again. The views here are fake
(tests/fake_view.py) and send the events a real view sends (tests/browser/test_visibility_browser.py
has the real one)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import splitbrain_widget as sb

from .fake_view import FakeView


def hide(view: FakeView, cause: str = "visibilitychange") -> None:
    view._event("visibility", {"visible": False, "cause": cause})


def show(view: FakeView, cause: str = "visibilitychange") -> None:
    view._event("visibility", {"visible": True, "cause": cause})


def test_the_kernel_knows_when_the_page_is_in_the_background_and_audits_it() -> None:
    sim = sb.TargetWidget("bouncer")
    assert sim.page_visible is None  # no view
    view = FakeView(sim)
    assert sim.page_visible is True
    hide(view)
    hide(view)  # the same again: one entry
    assert sim.page_visible is False
    show(view, "resume")
    entries = [(e.op, e.arguments, e.source, e.view_id) for e in sim.audit if e.op.startswith("page_")]
    assert entries == [
        ("page_hidden", {"cause": "visibilitychange"}, "view", "fake-1"),
        ("page_visible", {"cause": "resume"}, "view", "fake-1"),
    ]
    assert "nothing to reproduce" in sim.audit.to_code(), "the page's visibility is no change to reproduce"


def test_one_visible_view_is_enough_and_a_view_attached_in_the_background_says_so() -> None:
    sim = sb.TargetWidget("bouncer")
    first = FakeView(sim, view_id="tab-1")
    second = FakeView(sim, view_id="tab-2")
    hide(first)
    assert sim.page_visible is True
    hide(second)
    assert sim.page_visible is False
    second.detach()
    assert sim.page_visible is False
    first.detach()
    assert sim.page_visible is None
    background = FakeView(sim, view_id="tab-3")
    background._event("attached", {"protocol": 1, "visible": False})
    assert sim.page_visible is False


def test_coming_back_sends_the_values_again() -> None:
    """In the echo's next pause (the view compares, and posts its target what differs: the browser
    test checks that page and kernel agree)."""
    sim = sb.TargetWidget("bouncer")
    view = FakeView(sim)
    sent: list[Any] = []
    original = sim._echo.resend
    sim._echo.resend = lambda key: (sent.append(key), original(key))  # type: ignore[method-assign]
    hide(view)
    assert sent == []
    show(view)
    assert sent == ["values"]


def test_a_live_seek_answers_page_hidden_at_once() -> None:
    """The pendulum's period comes in a later report: a live seek waits for it (up to 30 s) unless
    the page is in the background, where no report comes; the parameter goes back either way."""
    sim = sb.TargetWidget("pendulum", headless=False)
    view = FakeView(sim, state_of=lambda values: {"period": None})
    hide(view)
    started = time.monotonic()
    result = sim.seek("period", 3.0, vary="pendulum.length", timeout=20)
    took = time.monotonic() - started
    assert result.error is not None and result.error.code == "page_hidden", result
    assert "background" in result.error.message and took < 2.0, (took, result)
    assert sim.values["pendulum.length"] == 1.0


def test_a_seek_waiting_for_a_report_stops_when_the_page_goes_to_the_background() -> None:
    sim = sb.TargetWidget("pendulum", headless=False)
    view = FakeView(sim, state_of=lambda values: {"period": None})
    threading.Timer(0.5, hide, args=(view,)).start()
    started = time.monotonic()
    result = sim.seek("period", 3.0, vary="pendulum.length", timeout=20)
    assert result.error is not None and result.error.code == "page_hidden", result
    assert time.monotonic() - started < 5.0


def test_a_live_recording_answers_page_hidden() -> None:
    sim = sb.TargetWidget("pendulum", headless=False)
    view = FakeView(sim, state_of=lambda values: {"energy": 0.5})
    hide(view)
    with pytest.raises(RuntimeError, match=r"record: page_hidden: .*background"):
        sim.record(1.0, every=0.5)
    show(view)
    threading.Timer(0.3, hide, args=(view,)).start()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"went to the background 0\.\d+ s into the recording"):
        sim.record(5.0, every=0.5)
    assert time.monotonic() - started < 3.0
    show(view)
    finished = sim.record(0.5, every=0.25)  # going to the background after the end loses nothing
    hide(view)
    assert len(finished) == 2
