"""Rules between parameters (``"share_a + share_b <= 1"``): parsed once, checked kernel-side before a change is sent.

An expression is arithmetic (``+ - * / // % **``, unary minus), comparisons (chained too),
``and`` / ``or`` / ``not``, numbers, ``true`` / ``false``, ``abs``, ``min``, ``max``, ``round``
and parameter names (leaf names or dotted paths, as the manifest resolves them). Parsed with
:mod:`ast` and walked here: nothing is evaluated by Python's ``eval``, and anything else (an
attribute that is no parameter, a call of another function, a string) is refused when the
manifest loads, naming it.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

MAX_EXPR_CHARS = 500
MAX_CONSTRAINTS = 50

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {"abs": abs, "min": min, "max": max, "round": round}
_CONSTANTS = {"true": True, "false": False}


class Constraint(BaseModel):
    """One rule: ``expr`` must hold for the values after a change; ``message`` says it in words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    expr: Annotated[str, Field(strict=True, min_length=1, max_length=MAX_EXPR_CHARS)]
    message: Annotated[str, Field(strict=True, min_length=1, max_length=300)] | None = None


@dataclass(frozen=True)
class Rule:
    """A constraint parsed against the manifest's parameters: the tree and the paths it reads."""

    constraint: Constraint
    tree: ast.expr
    paths: tuple[str, ...]

    def holds(self, values: Mapping[str, Any]) -> bool:
        """Whether the rule holds for ``values`` (every parameter's value, by dotted path)."""
        try:
            return bool(_evaluate(self.tree, values))
        except (ArithmeticError, TypeError, ValueError):
            return False  # 1/0 or a comparison of unlike values: the change cannot be shown to keep the rule

    def describe(self, values: Mapping[str, Any]) -> str:
        """What was refused, in words: the message (or the rule) and the values it read."""
        shown = ", ".join(f"{p} = {values.get(p)!r}" for p in self.paths)
        said = self.constraint.message or f"the manifest requires {self.constraint.expr}"
        return f"{said} ({self.constraint.expr}, with {shown})"


def parse_rule(constraint: Constraint, resolve: Callable[[str], str]) -> Rule:
    """``constraint`` parsed, its names resolved to dotted paths by ``resolve`` (which raises naming an
    unknown one); raises ValueError naming what is not allowed."""
    try:
        tree = ast.parse(constraint.expr.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"expected an expression over parameters, got {constraint.expr!r} ({exc.msg})") from None
    paths: list[str] = []
    resolved = _resolve(tree, resolve, paths)
    return Rule(constraint, resolved, tuple(dict.fromkeys(paths)))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _resolve(node: ast.expr, resolve: Callable[[str], str], paths: list[str]) -> ast.expr:
    """A copy of ``node`` whose names are ``ast.Name`` nodes holding dotted paths; refuses anything else."""
    name = _dotted(node)
    if name is not None:
        if name in _CONSTANTS:
            return ast.Constant(_CONSTANTS[name])
        path = resolve(name)
        paths.append(path)
        return ast.Name(id=path, ctx=ast.Load())
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
        return ast.UnaryOp(node.op, _resolve(node.operand, resolve, paths))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return ast.BinOp(_resolve(node.left, resolve, paths), node.op, _resolve(node.right, resolve, paths))
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(node.op, [_resolve(v, resolve, paths) for v in node.values])
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        return ast.Compare(
            _resolve(node.left, resolve, paths), node.ops, [_resolve(c, resolve, paths) for c in node.comparators]
        )
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return ast.Call(node.func, [_resolve(a, resolve, paths) for a in node.args], [])
    raise ValueError(
        f"'{ast.unparse(node)}' is not allowed in a constraint (numbers, parameters, arithmetic, "
        "comparisons, and/or/not, abs/min/max/round)"
    )


def _evaluate(node: ast.expr, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, values)
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, values), _evaluate(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large")
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, float) and not math.isfinite(result):
            raise ValueError("not finite")
        return result
    if isinstance(node, ast.BoolOp):
        results = (_evaluate(v, values) for v in node.values)
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, values)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _FUNCTIONS[node.func.id](*(_evaluate(a, values) for a in node.args))
    raise ValueError(f"cannot evaluate {ast.dump(node)}")


def first_broken(rules: tuple[Rule, ...], values: Mapping[str, Any]) -> Rule | None:
    """The first rule ``values`` break, or None."""
    return next((rule for rule in rules if not rule.holds(values)), None)
