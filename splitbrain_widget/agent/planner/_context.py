"""What the offline planner reads (the manifest, the values, the targets) and what it makes (a plan of tool calls)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...manifest import Manifest

LABEL = "Offline planner"


@dataclass(frozen=True)
class PlannedCall:
    tool: str
    args: dict[str, Any]


@dataclass
class Plan:
    """What to call, or why nothing can be called. ``notes`` explain conversions for the reply."""

    calls: list[PlannedCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # parameters or observables the user asked about
    refusal: str | None = None
    aim: str = ""  # a seek's goal in the request's words, when the call's goal is not ("at least 0.95")
    question: str | None = None  # asked instead of calling (a skill's confirm_before), the reply as it is


@dataclass(frozen=True)
class PlannerContext:
    manifest: Manifest
    values: Mapping[str, Any]
    targets: Sequence[tuple[str, str]] = ()  # (id, title) of every target
