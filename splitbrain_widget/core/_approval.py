"""The approval policy: a policy per parameter path, leaf name or tool (``"auto"``, ``"ask"``,
``"deny"``; ``"*"`` for the rest), as the widget's ``approval`` trait holds it, and its verdict on
one call. The agent's approval wrapper, the chat panel and any other face ask this one rule.
"""

from __future__ import annotations

POLICIES = ("auto", "ask", "deny")


def policy_for(policies: dict[str, str], tool: str, paths: list[str]) -> tuple[str, list[str]]:
    """The strictest policy that applies to a call: (policy, what needs it).

    A call that changes no parameter (reset, select_target) has its tool's policy. A call that
    changes parameters (set_parameters, seek) has the strictest of its tool's own policy and each
    path's (by path, else leaf name, else ``"*"``); "what needs it" names the tool or the paths."""
    default = policies.get("*", "auto")
    own = policies.get(tool)
    if not paths:
        chosen = own or default
        return chosen, [tool] if chosen != "auto" else []
    levels = {path: policies.get(path, policies.get(path.rsplit(".", 1)[-1], default)) for path in paths}
    for level in ("deny", "ask"):
        if own == level:
            return level, [tool]
        hit = [p for p, lv in levels.items() if lv == level]
        if hit:
            return level, hit
    return "auto", []
