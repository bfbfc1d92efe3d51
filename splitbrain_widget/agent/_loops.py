"""The loop detector: refuse repeated calls that are getting nowhere, and end runaway runs.

Four rules, each counted per run:
- an unknown tool called again after the model was told it does not exist;
- the same (tool, arguments) failing again and again;
- a no-progress streak: the same (tool, arguments) succeeding again and again with the same result;
- a global breaker: too many blocked calls, or too many tool calls in one run.
A blocked call is answered with a ``[LOOP BLOCKED]`` message that asks for another approach.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

BLOCKED_PREFIX = "[LOOP BLOCKED]"


@dataclass(frozen=True)
class LoopLimits:
    unknown_tool_repeats: int = 1  # an unknown tool may be retried this many times after the first error
    same_failure_repeats: int = 2  # the same failing call may be retried this many times
    no_progress_repeats: int = 3  # the same call with the same result, this many times in a row
    blocked_before_stop: int = 4  # after this many blocked calls the run ends
    max_tool_calls: int = 60  # hard limit of tool calls in one run


@dataclass
class Verdict:
    allowed: bool
    message: str = ""
    stop: bool = False  # end the run: the hard limit was reached


@dataclass
class LoopDetector:
    """Call :meth:`check` before running a tool call and :meth:`record` after it."""

    limits: LoopLimits = field(default_factory=LoopLimits)
    known_tools: frozenset[str] = frozenset()
    calls: int = 0
    blocked: int = 0
    _failures: Counter[str] = field(default_factory=Counter)
    _unknown: Counter[str] = field(default_factory=Counter)
    _last_key: str | None = None
    _last_result: str | None = None
    _streak: int = 0
    last_blocked: str = ""

    def check(self, tool: str, args: Any) -> Verdict:
        """May this call run?"""
        self.calls += 1
        if self.calls > self.limits.max_tool_calls or self.blocked >= self.limits.blocked_before_stop:
            return Verdict(False, self._stop_message(), stop=True)
        key = _key(tool, args)
        if self.known_tools and tool not in self.known_tools:
            self._unknown[tool] += 1
            if self._unknown[tool] > 1 + self.limits.unknown_tool_repeats:
                return self._block(
                    f"there is no tool named '{tool}'. Use one of: {', '.join(sorted(self.known_tools))}."
                )
            return Verdict(True)
        if self._failures[key] > self.limits.same_failure_repeats:
            return self._block(
                f"{tool} with these arguments has failed {self._failures[key]} times. "
                "Change the arguments or do something else."
            )
        if key == self._last_key and self._streak >= self.limits.no_progress_repeats:
            return self._block(
                f"{tool} with these arguments was already done {self._streak} times with the same result. "
                "Nothing more will change by repeating it."
            )
        return Verdict(True)

    def record(self, tool: str, args: Any, ok: bool, result: Any = None) -> None:
        """Note the outcome of a call that ran."""
        key = _key(tool, args)
        if not ok:
            self._failures[key] += 1
        result_key = _dump(result)
        if key == self._last_key and result_key == self._last_result:
            self._streak += 1
        else:
            self._last_key, self._last_result, self._streak = key, result_key, 1

    def check_unknown(self, tool: str, known: set[str]) -> Verdict:
        """A call to a tool that does not exist. The framework tells the model which tools exist;
        past the allowed repeats the run ends, since nothing the model does with that name can work."""
        self._unknown[tool] += 1
        if self._unknown[tool] > 1 + self.limits.unknown_tool_repeats:
            self.blocked += 1
            return Verdict(
                False,
                f"{BLOCKED_PREFIX} the model called the unknown tool '{tool}' {self._unknown[tool]} times "
                f"(tools: {', '.join(sorted(known))}); the run is stopped.",
                stop=True,
            )
        return Verdict(True)

    def stop_reason(self) -> str:
        """Why the run ends, in words for the person reading the result."""
        return self._stop_message()

    @property
    def stopped(self) -> bool:
        return self.calls > self.limits.max_tool_calls or self.blocked >= self.limits.blocked_before_stop

    def _block(self, why: str) -> Verdict:
        self.blocked += 1
        self.last_blocked = why
        stop = self.blocked >= self.limits.blocked_before_stop
        return Verdict(
            False, f"{BLOCKED_PREFIX} {why} Try another approach, or answer the user with what you know.", stop=stop
        )

    def _stop_message(self) -> str:
        if self.blocked >= self.limits.blocked_before_stop:
            return (
                f"{BLOCKED_PREFIX} {self.blocked} calls were blocked as repeats; the run is stopped. "
                f"Last blocked: {self.last_blocked}"
            )
        return f"{BLOCKED_PREFIX} more than {self.limits.max_tool_calls} tool calls in one run; the run is stopped."


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)[:2000]
    except (TypeError, ValueError):
        return repr(value)[:2000]


def _key(tool: str, args: Any) -> str:
    return f"{tool}:{_dump(args)}"
