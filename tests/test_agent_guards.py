"""Guard pieces on their own: retry delays and the loop detector."""

from __future__ import annotations

import json
import time
from email.utils import formatdate

import pytest

from splitbrain_widget.agent._loops import BLOCKED_PREFIX, LoopDetector, LoopLimits
from splitbrain_widget.agent._retry import BACKOFF_S, google_retry_delay, is_retryable, retry_delay

GOOGLE_429 = {
    "error": {
        "code": 429,
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"},
        ],
    }
}


@pytest.mark.parametrize(
    ("status", "retry"), [(429, True), (500, True), (503, True), (599, True), (400, False), (401, False), (None, False)]
)
def test_which_statuses_are_retried(status: int | None, retry: bool) -> None:
    assert is_retryable(status) is retry


def test_backoff_schedule_is_3_5_10_15_30() -> None:
    assert [retry_delay(i)[0] for i in range(7)] == [3, 5, 10, 15, 30, 30, 30]
    assert BACKOFF_S == (3, 5, 10, 15, 30)


def test_retry_after_seconds_and_date_and_ms() -> None:
    assert retry_delay(0, {"Retry-After": "12"}) == (12.0, "Retry-After")
    seconds, source = retry_delay(0, {"retry-after": formatdate(time.time() + 20, usegmt=True)})
    assert source == "Retry-After" and 17 <= seconds <= 21
    assert retry_delay(0, {"retry-after-ms": "250", "Retry-After": "9"}) == (0.25, "retry-after-ms")


def test_google_retry_info_in_native_and_openai_compatible_bodies() -> None:
    assert google_retry_delay(GOOGLE_429) == 7.0
    assert google_retry_delay([GOOGLE_429]) == 7.0  # the OpenAI-compatible endpoint wraps it in a list
    assert google_retry_delay(json.dumps(GOOGLE_429)) == 7.0
    assert retry_delay(2, {}, GOOGLE_429) == (7.0, "RetryInfo")
    assert google_retry_delay({"error": {"message": "slow down"}}) is None


def test_waits_are_bounded() -> None:
    assert retry_delay(0, {"Retry-After": "86400"})[0] == 120.0
    assert retry_delay(0, {"Retry-After": "soon"}) == (3, "backoff")


def test_same_failing_call_is_blocked_after_the_allowed_repeats() -> None:
    detector = LoopDetector(LoopLimits(same_failure_repeats=2))
    for _ in range(3):
        assert detector.check("set_parameters", {"values": {"a": 1}}).allowed
        detector.record("set_parameters", {"values": {"a": 1}}, ok=False)
    verdict = detector.check("set_parameters", {"values": {"a": 1}})
    assert not verdict.allowed and verdict.message.startswith(BLOCKED_PREFIX)
    assert detector.check("set_parameters", {"values": {"a": 2}}).allowed  # other arguments are fine


def test_no_progress_streak() -> None:
    detector = LoopDetector(LoopLimits(no_progress_repeats=2))
    for _ in range(2):
        assert detector.check("fetch_state", {}).allowed
        detector.record("fetch_state", {}, ok=True, result={"x": 1})
    verdict = detector.check("fetch_state", {})
    assert not verdict.allowed and verdict.message.startswith(BLOCKED_PREFIX)
    assert "already done 2 times with the same result" in verdict.message
    detector.record("fetch_state", {}, ok=True, result={"x": 2})  # the page moved on: progress
    assert detector.check("fetch_state", {}).allowed  # the streak starts again from this new result
    detector.record("fetch_state", {}, ok=True, result={"x": 2})
    assert not detector.check("fetch_state", {}).allowed  # ... and blocks once the new result repeats
    assert detector.blocked == 2


def test_unknown_tools() -> None:
    detector = LoopDetector(LoopLimits(unknown_tool_repeats=1), known_tools=frozenset({"reset"}))
    assert detector.check("fly", {}).allowed and detector.check("fly", {}).allowed
    assert not detector.check("fly", {}).allowed


def test_the_breaker_stops_after_enough_blocks_or_calls() -> None:
    detector = LoopDetector(LoopLimits(same_failure_repeats=0, blocked_before_stop=2))
    detector.record("t", {}, ok=False)
    assert not detector.check("t", {}).stop
    assert detector.check("t", {}).stop
    capped = LoopDetector(LoopLimits(max_tool_calls=2))
    assert capped.check("a", {}).allowed and capped.check("b", {}).allowed
    assert capped.check("c", {}).stop
