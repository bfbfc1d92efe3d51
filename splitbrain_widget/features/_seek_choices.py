"""Seeking on a parameter that takes a few values, not a range: a boolean, or a string with an
``enum``. There is nothing between two values to bracket, so the search tries each value the
manifest's rules allow (a point of the search is an index into them) and keeps the one that reaches
the goal, or the largest or smallest observable. The tries, the waiting and the words are
:class:`~._seek_search.Search`'s; only what a point means and how the values are chosen differ."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NoReturn

from ..manifest import Manifest, Parameter
from ._seek_goal import Extreme, Failed, OutOfTries
from ._seek_search import Search


def choices_of(manifest: Manifest, param: Parameter, values: dict[str, Any]) -> tuple[Any, ...]:
    """The values a seek tries for ``param``: both booleans, or its ``enum``, less those that would
    break a rule of the manifest with the other values as they are; Failed when none is left."""
    every: tuple[Any, ...] = (False, True) if param.type == "boolean" else tuple(param.enum or ())
    allowed = tuple(c for c in every if manifest.broken_rule({**values, param.path: c}) is None)
    if not allowed:
        shown = ", ".join(json.dumps(c) for c in every)
        raise Failed(
            "invalid_value",
            f"vary: every value of {param.path} ({shown}) breaks a rule of the manifest with the other values",
            "change the other parameters of the rule first",
        )
    return allowed


@dataclass
class ChoiceSearch(Search):
    """A seek over ``choices``: a point of the search is an index into them."""

    choices: tuple[Any, ...] = ()

    def snap(self, x: float) -> float:
        return float(min(max(round(x), 0), len(self.choices) - 1))

    def wire(self, x: float) -> Any:
        return self.choices[int(x)]

    def reports(self, reported: Any, x: float) -> bool:
        return bool(reported == self.wire(x)) and isinstance(reported, bool) == isinstance(self.wire(x), bool)

    def show_x(self, x: float) -> str:
        return self.show_value(self.wire(x))

    def show_value(self, value: Any) -> str:
        return json.dumps(value)

    def range_words(self) -> str:
        return "among " + ", ".join(json.dumps(c) for c in self.choices)

    def extremum(self, extreme: Extreme) -> float:
        """Each value tried (within the budget); the one with the largest or smallest observable."""
        try:
            for i in range(len(self.choices)):
                self(i)
        except OutOfTries:
            if not self.seen:
                raise
            self.exhausted = True
        return self.best(extreme)

    def reach(self) -> NoReturn:
        """Each value tried until one is within tol of the goal (``Reached``); else Failed, naming the closest."""
        for i in range(len(self.choices)):
            self(i)
        x = self.closest()
        closest = "" if x is None else f"; closest: {self.show_y(self.seen[x])} at {self.param.path} = {self.show_x(x)}"
        raise Failed(
            "goal_unreachable",
            f"no value of {self.param.path} brings {self.observable} to {self.goal_text()} "
            f"(tried {self.range_words().removeprefix('among ')}){closest}",
            "seek a goal one of its values reaches, or vary another parameter",
        )
