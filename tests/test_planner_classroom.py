"""The offline planner on a classroom's own words: ``tests/fixtures/classroom_corpus.json``.

Requests written by hand the way students and teachers type them, for every built-in target, with
what each should do. A request is *right* when the plan does exactly that; *refused* when an
in-scope request gets no call (a miss, never harmful); *wrong* when the plan changes anything else
(another parameter, the other sign, the other way) or answers an out-of-scope request with a call.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import splitbrain_widget as sb
from splitbrain_widget.agent.planner import Plan, PlannerContext, plan
from splitbrain_widget.manifest import Manifest

CORPUS = Path(__file__).parent / "fixtures" / "classroom_corpus.json"


ROOT = Path(__file__).parents[1]


@cache
def manifest(target: str, path: str | None = None) -> Manifest:
    """A built-in target's manifest, or the one at ``path`` (a third-party example's)."""
    return Manifest.from_file(ROOT / path) if path else sb.load_target(target).manifest


def manifest_of(case: dict[str, Any]) -> Manifest:
    return manifest(case["target"], case.get("manifest"))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) or not isinstance(b, int | float):
        return bool(a == b)
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def judge(case: dict[str, Any], result: Plan) -> str:
    """ "right", "refused" or "wrong" (what the plan would do, against what the request asked)."""
    expect, calls = case["expect"], [(c.tool, c.args) for c in result.calls]
    m = manifest_of(case)
    if expect == "refuse":
        return "right" if not calls else "wrong"
    if not calls:
        return "refused"
    if len(calls) != 1:
        return "wrong"
    tool, args = calls[0]
    if "set" in expect:
        values = args.get("values", {}) if tool == "set_parameters" else None
        ok = values is not None and set(values) == set(expect["set"])
        return "right" if ok and all(_same(values[k], v) for k, v in expect["set"].items()) else "wrong"
    if "up" in expect or "down" in expect:
        path = expect.get("up") or expect.get("down")
        values = args.get("values", {}) if tool == "set_parameters" else {}
        if set(values) != {path}:
            return "wrong"
        p, now, new = m.parameters[path], m.defaults()[path], values[path]
        inside = (p.min is None or new >= p.min) and (p.max is None or new <= p.max)
        moved = new > now if "up" in expect else new < now
        return "right" if moved and inside else "wrong"
    if "seek" in expect:
        goal = expect["seek"]
        if tool != "seek" or args.get("observable") != goal["observable"] or not _same(args.get("goal"), goal["goal"]):
            return "wrong"
        return "right" if "vary" not in goal or args.get("vary") == goal["vary"] else "wrong"
    if "action" in expect:
        return "right" if tool == "run_action" and args.get("name") == expect["action"] else "wrong"
    if "ask" in expect:
        return (
            "right"
            if tool in ("fetch_state", "get_parameters") and set(expect["ask"]) <= set(result.asked)
            else "wrong"
        )
    raise AssertionError(f"unknown expectation {expect!r}")


def score(third_party: bool) -> dict[str, Any]:
    """The built-in targets' cases, or (``third_party``) the third-party examples'."""
    cases = [c for c in json.loads(CORPUS.read_text(encoding="utf-8"))["cases"] if ("manifest" in c) == third_party]
    verdicts = []
    for case in cases:
        m = manifest_of(case)
        verdicts.append((case, judge(case, plan(case["request"], PlannerContext(m, m.defaults())))))
    in_scope = [v for c, v in verdicts if c["expect"] != "refuse"]
    out_of_scope = [v for c, v in verdicts if c["expect"] == "refuse"]
    return {
        "cases": len(cases),
        "in_scope": len(in_scope),
        "in_scope_right": in_scope.count("right"),
        "refused": in_scope.count("refused"),
        "wrong": sum(v == "wrong" for _, v in verdicts),
        "out_of_scope_refused": out_of_scope.count("right"),
        "out_of_scope": len(out_of_scope),
        "misses": [f"{c['target']}: {c['request']!r} {v}" for c, v in verdicts if v != "right"],
    }


def test_the_classroom_corpus() -> None:
    s = score(third_party=False)
    print(json.dumps(s, indent=1))
    assert s["wrong"] == 0, s["misses"]
    assert s["out_of_scope_refused"] == s["out_of_scope"], s["misses"]
    assert s["in_scope_right"] >= 0.95 * s["in_scope"], s["misses"]


def test_the_classroom_corpus_on_the_third_party_examples() -> None:
    """The same judging on pages by other authors, steered through their manifests' aliases and named
    values: nothing wrong, everything out of scope refused; its share right is reported, not tuned."""
    s = score(third_party=True)
    print(json.dumps(s, indent=1))
    assert s["in_scope"] >= 15 and s["out_of_scope"] >= 3
    assert s["wrong"] == 0, s["misses"]
    assert s["out_of_scope_refused"] == s["out_of_scope"], s["misses"]
    assert s["in_scope_right"] >= 0.8 * s["in_scope"], s["misses"]
