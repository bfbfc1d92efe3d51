"""What an operation waits for: the one type shared by the operations, the call line and the drivers."""

from __future__ import annotations

from collections.abc import Callable, Generator

from ..protocol import ToolResult


class Wait:
    """A step of an operation: wait until ``done()`` holds or ``deadline`` (monotonic) passes.

    ``key`` names what is waited for (a request id, a turn in line), so only its news wakes it.
    """

    __slots__ = ("deadline", "done", "key")

    def __init__(self, done: Callable[[], bool], deadline: float, key: str | None = None) -> None:
        self.done = done
        self.deadline = deadline
        self.key = key


# An operation yields what it waits for; the driver sends back whether it came before the deadline.
Operation = Generator[Wait, bool, ToolResult]
