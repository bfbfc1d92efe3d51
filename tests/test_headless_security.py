"""Hostile pages stay contained headless: the browser suite's escape attempts against a headless host.

The pages are the security suite's own (tests/browser/hostile_targets.py: ``attacker``, ``relaxed``,
``faulty``; tests/browser/targets.py: ``hostile``), judged by the same table of what "blocked" means
(tests/browser/test_security_browser.py), run by the headless engine instead of JupyterLab: the host
page runs the view's relay and iframe code (js/host/frame.js), so the sandbox, the CSP, the nonce checks
and the message budget are the view's. A local HTTP server stands in for the Jupyter server the
pages aim their requests at. What only a headless host has, and is tested here besides: the host
page's API (``splitbrainHost``) and the CDP binding that carries messages to Python.

Marked ``browser`` like tests/test_headless_engine.py: they skip without Chromium (and fail under
SPLITBRAIN_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from splitbrain_widget import registry
from splitbrain_widget.hosts._headless_engine import BINDING, HeadlessError
from splitbrain_widget.hosts._headless_page import HeadlessPage

from .browser import hostile_targets
from .browser.harness import wait_for
from .browser.targets import HOSTILE_HTML
from .browser.test_security_browser import BLOCKED, CSP_REFUSED, SIBLING_BLOCKED
from .test_headless_engine import (  # noqa: F401 (a fixture, used by its name: open_page)
    Inbox,
    Opened,
    fixture_page,
    open_page_fixture,
    request,
)

browser = pytest.mark.browser
OpenPage = Callable[..., Opened]


class RequestLog(http.server.ThreadingHTTPServer):
    """A local web server in place of the Jupyter server: answers everything, remembers every request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lines: list[str] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def count(self) -> int:
        with self.lock:
            return len(self.lines)

    def seen(self, since: int = 0) -> str:
        """The requests from the ``since``-th on, one a line."""
        with self.lock:
            return "\n".join(self.lines[since:])


class _Handler(http.server.BaseHTTPRequestHandler):
    server: RequestLog

    def _answer(self) -> None:
        with self.server.lock:
            self.server.lines.append(f"{self.command} {self.path} Origin: {self.headers.get('Origin')}")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(b"ok")

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:  # the test reads the requests, not stderr
        pass


@pytest.fixture(scope="module")
def web_server() -> Iterator[RequestLog]:
    server = RequestLog()
    thread = threading.Thread(target=server.serve_forever, name="test-web-server", daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def hostile_dir(tmp_path: Path, web_server: RequestLog) -> Path:
    """The security suite's hostile and faulty targets, aimed at the local server (floods: 3 s, as there)."""
    return hostile_targets.write_all(tmp_path / "targets", web_server.url, flood_ms=3000)


def page_html(target_id: str, folder: Path) -> str:
    """The target as a view gets it: the target API and the manifest's CSP injected by the registry."""
    return registry.load_target(target_id, folder).html


def read_report(page: HeadlessPage, phase: str) -> dict[str, Any]:
    """The attacker's report once ``phase`` ran and every asynchronous attempt settled."""
    seen: dict[str, Any] = {}

    def settled() -> Any:
        text = page._frame_evaluate("document.body.dataset.report || ''")
        report = json.loads(text) if text else {}
        seen["last"] = report
        return report if report.get(phase) and report.get("async_pending") == 0 else None

    return wait_for(
        settled, timeout=30, what=f"the attacker's {phase!r} attempts to settle", describe=lambda: str(seen)[:2000]
    )


def unblocked(report: dict[str, Any], phase: str) -> list[str]:
    """Every attempt of ``phase`` whose outcome is not one the browser suite counts as blocked."""
    got = report[phase]
    escaped = [
        f"{phase}.{key} = {got.get(key)!r} (expected one of {sorted(allowed)})"
        for key, allowed in BLOCKED.items()
        if got.get(key) not in allowed
    ]
    for i, sibling in enumerate(got.get("siblings", [])):
        escaped += [
            f"{phase}.siblings[{i}].{key} = {sibling.get(key)!r}"
            for key, allowed in SIBLING_BLOCKED.items()
            if sibling.get(key) not in allowed
        ]
    return escaped


def context_pages(page: HeadlessPage) -> int:
    """How many pages the engine's browser context holds (a popup would be one more)."""

    async def count() -> int:
        assert page._host is not None
        return len(page._host.page.context.pages)

    return page._engine.submit(count()).result(timeout=10)


def forged(inbox: Inbox) -> list[dict[str, Any]]:
    """Messages that reached Python carrying something a page forged."""
    return [m for m in inbox.messages if "forged" in json.dumps(m)]


# -- 1. sandbox escape attempts ------------------------------------------------------------------


@browser
def test_escape_attempts_fail_headless_and_leave_the_host_page_alone(
    open_page: OpenPage, hostile_dir: Path, web_server: RequestLog
) -> None:
    page, inbox = open_page(page_html("attacker", hostile_dir))
    inbox.event("ready")
    pages_before = context_pages(page)
    host_before = page._host_evaluate("splitbrainHost.inspect()")
    log_before = web_server.count()

    load = read_report(page, "load")
    page.send(request("attack", values={"settings.action": "attack"}))
    reply = inbox.reply("attack")
    assert reply["ok"] is True and reply["state"]["note"] == hostile_targets.PLANTED  # data, passed on as data
    report = read_report(page, "apply")
    assert report["load"] == load["load"]
    escaped = unblocked(report, "load") + unblocked(report, "apply")
    assert not escaped, "attempts that were not blocked:\n" + "\n".join(escaped)
    assert report["apply"]["frames_seen"] == 0 and report["apply"]["siblings"] == [], "alone in its host page"

    violations = report["violations"]
    for directive, fragment in CSP_REFUSED:
        assert any(v.startswith(directive) and fragment in v for v in violations), (
            f"no CSP report for {directive} {fragment}: {violations}"
        )
    assert hostile_targets.MARK not in web_server.seen(), "a hostile request reached the server"
    info = report["info"]
    assert info["origin"] == "null" and info["href"] == "about:srcdoc" and info["referrer"] == "", info
    # the target API took the nonce out of window.name (another document of the frame would find it there)
    assert info["baseURI"] == "about:blank" and info["name_is_nonce"] is False and info["name_left"] == "", info

    # The host page: not navigated, no popup, nothing but the view's iframe, the same view.
    # (A fresh host page still holds its own script element; one the engine reused had its body
    # emptied by the last view's dispose: either way nothing but the one iframe may be there.)
    host_dom = (
        "[location.href, [...document.body.children].filter((e) => e.tagName !== 'SCRIPT').map((e) => e.tagName),"
        " document.scripts.length]"
    )
    href, others, scripts = page._host_evaluate(host_dom)
    assert href == "about:blank" and others == ["IFRAME"] and scripts in (0, 1), (href, others, scripts)
    assert context_pages(page) == pages_before
    assert page._host_evaluate("splitbrainHost.inspect()") == host_before
    assert host_before["sandbox"] == "allow-scripts" and host_before["ready"] is True
    # Python saw the page's own messages only: one ready, the one reply, nothing forged.
    assert not forged(inbox), forged(inbox)
    assert len(inbox.of_type("ready")) == 1
    assert [m["id"] for m in inbox.messages if m.get("kind") == "reply"] == ["attack"]

    # The control: a manifest that relaxes the CSP lets the same kind of request out, and the server
    # logs it. So the CSP is what refused the attacker's, and the log would have shown one.
    manifest = registry.load_target("relaxed", hostile_dir).manifest
    relaxed, relaxed_inbox = open_page(
        page_html("relaxed", hostile_dir), network=registry.network_sources(manifest.csp)
    )
    relaxed.send(request("probe", values={"settings.action": "probe"}))
    assert relaxed_inbox.reply("probe")["ok"] is True

    def probed() -> Any:
        found = json.loads(relaxed._frame_evaluate("document.body.dataset.report || '{}'"))
        return found if len(found) >= 4 else None  # violations + three fetches

    probe = wait_for(probed, timeout=30, what="the relaxed target's probes")
    assert probe["violations"] == [] and probe["fetch_no_cors"].startswith("OK:opaque"), probe
    assert probe["fetch_cors"].startswith("TypeError"), probe  # no Access-Control-Allow-Origin for "null"
    assert "sb-relaxed=no-cors" in web_server.seen(log_before)


HOST_PROBE = """
const out = {};
const attempt = (key, fn) => {
  try { out[key] = "OK:" + String(fn()); } catch (err) { out[key] = err && err.name ? err.name : String(err); }
};
const forgedBatch = JSON.stringify([{ kind: "reply", id: "victim", ok: true, state: { forged: true } }]);
attempt("own_binding", () => typeof window.__BINDING__);
attempt("parent_binding", () => typeof window.parent.__BINDING__);
attempt("call_parent_binding", () => window.parent.__BINDING__(forgedBatch));
attempt("call_top_binding", () => window.top.__BINDING__(forgedBatch));
attempt("parent_host_api", () => typeof window.parent.splitbrainHost);
attempt("host_api_run", () => window.top.splitbrainHost.run([{ op: "reload" }]));
attempt("host_api_dispose", () => window.parent.splitbrainHost.dispose());
attempt("parent_eval", () => window.parent.eval("1"));
attempt("parent_function", () => window.parent.Function("return 1")());
attempt("opener", () => window.opener);
attempt("engine_globals", () => Object.getOwnPropertyNames(window)
  .filter((name) => /splitbrainOut|splitbrainHost|playwright|__pw|cdp/i.test(name)).join(","));
// Host ops and kernel-shaped messages, posted to the host page: it reads no ops from messages,
// and the relay turns only checked target messages into kernel messages of its own making.
parent.postMessage({ op: "send", msg: { kind: "reply", id: "victim", ok: true, state: { forged: true } } }, "*");
parent.postMessage([{ kind: "event", view_id: "victim", type: "ready" }], "*");
parent.postMessage(forgedBatch, "*");
SplitBrain.onState(() => out);
SplitBrain.onApply(() => out);
SplitBrain.ready();
""".replace("__BINDING__", BINDING)


@browser
def test_a_page_cannot_reach_the_host_page_or_the_binding_to_python(open_page: OpenPage) -> None:
    page, inbox = open_page(fixture_page(HOST_PROBE))
    state = page.advance(0)
    assert state == {
        "own_binding": "OK:undefined",
        "parent_binding": "SecurityError",
        "call_parent_binding": "SecurityError",
        "call_top_binding": "SecurityError",
        "parent_host_api": "SecurityError",
        "host_api_run": "SecurityError",
        "host_api_dispose": "SecurityError",
        "parent_eval": "SecurityError",
        "parent_function": "SecurityError",
        "opener": "OK:null",
        "engine_globals": "OK:",
    }
    assert page._host_evaluate("typeof window.__BINDING__".replace("__BINDING__", BINDING)) == "function", (
        "the probe looked for the binding where the host page has it"
    )
    assert not forged(inbox), forged(inbox)
    assert {m.get("view_id") for m in inbox.messages} == {page.view_id}
    assert len(inbox.of_type("ready")) == 1


# -- 2. forged replies ---------------------------------------------------------------------------


COUNT_FORGERIES = """(nonce) => {
  // Beside the relay's listener: counts the forged answers to "held" the host page received, by sender.
  window.__forgeries = { sibling: 0, target: 0 };
  addEventListener("message", (event) => {
    const data = event.data;
    if (!data || data.id !== "held") return;
    const sibling = document.querySelector("iframe[name=hostile-sibling]");
    if (sibling && event.source === sibling.contentWindow && data.nonce === nonce) window.__forgeries.sibling += 1;
    else if (event.source === document.querySelector("iframe").contentWindow && data.nonce !== nonce) {
      window.__forgeries.target += 1;
    }
  });
}"""

ADD_SIBLING = """(html) => new Promise((resolve) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.name = "hostile-sibling";
  frame.srcdoc = html;
  frame.onload = () => resolve(true);
  document.body.append(frame);
})"""

FORGE_WITHOUT_NONCE = """(() => {
  for (const nonce of [undefined, "", "0".repeat(32)]) {
    parent.postMessage({ source: "splitbrain-target", nonce, type: "state", id: "held", payload: { forged: true } }, "*");
  }
  parent.postMessage({ kind: "reply", id: "held", ok: true, state: { forged: true } }, "*");
})()"""


@browser
def test_forged_replies_need_the_frame_and_its_nonce_even_with_the_nonce_stolen(
    open_page: OpenPage, hostile_dir: Path
) -> None:
    """The browser suite's ``hostile`` page beside an honest one in the same host page, handed the
    honest page's nonce and its pending request id, and the honest page's own frame posting answers
    without the nonce: no forged answer counts; the real one does, when the page gives it."""
    page, inbox = open_page(page_html("faulty", hostile_dir))
    inbox.event("ready")
    page.send(request("held", values={"settings.action": "hold", "settings.speed": 13}))
    wait_for(lambda: page._frame_evaluate("document.body.dataset.pendingId") == "held", timeout=30, what="the hold")
    nonce = page._host_evaluate("splitbrainHost.inspect().nonce")
    page._host_evaluate(f"({COUNT_FORGERIES})({json.dumps(nonce)})")
    assert page._host_evaluate(f"({ADD_SIBLING})({json.dumps(registry.inject_target_api(HOSTILE_HTML))})") is True
    assert page._frame_evaluate(f"window.arm({{nonces: [{json.dumps(nonce)}], ids: ['held']}})", "hostile-sibling") > 0
    page._frame_evaluate(FORGE_WITHOUT_NONCE)
    # Every forgery was delivered to the host page (the sibling keeps posting every 15 ms) ...
    wait_for(
        lambda: (lambda seen: seen["sibling"] > 10 and seen["target"] == 4)(page._host_evaluate("window.__forgeries")),
        timeout=30,
        what="the forged answers to reach the host page",
        describe=lambda: str(page._host_evaluate("window.__forgeries")),
    )
    # ... and none was taken: the request is still pending until the page answers it.
    assert not [m for m in inbox.messages if m.get("id") == "held"], "a forged answer was taken"
    page._frame_evaluate("window.releaseAll()")
    reply = inbox.reply("held")
    assert reply["ok"] is True and reply["state"]["settings.speed"] == 13 and "forged" not in reply["state"]
    assert not forged(inbox), forged(inbox)
    assert len([m for m in inbox.messages if m.get("id") == "held"]) == 1
    assert len(inbox.of_type("ready")) == 1, "the sibling's forged readies were ignored"
    assert page._host_evaluate("splitbrainHost.inspect().nonce") == nonce


# -- 3. floods: the message budget ---------------------------------------------------------------


@browser
def test_a_flooding_page_is_stopped_headless_as_in_jupyterlab(open_page: OpenPage, hostile_dir: Path) -> None:
    """100,000 states in a tight loop, 20,000 forged replies and 20,000 forged readies: the relay stops
    the page past its budget, answers its calls ``not_ready``, and an honest page beside it is served."""
    honest, honest_inbox = open_page(page_html("faulty", hostile_dir))
    page, inbox = open_page(page_html("attacker", hostile_dir))
    inbox.event("ready")
    honest_inbox.event("ready")
    page.send(request("flood", values={"settings.action": "flood"}))
    reply = inbox.reply("flood", timeout=90)
    assert reply["ok"] is False and reply["error"]["code"] == "not_ready", reply
    assert "stopped" in reply["error"]["message"] and "5000 messages within one second" in reply["error"]["message"]
    error = inbox.event("error")
    assert error["payload"]["code"] == "target_error" and "stopped" in error["payload"]["message"]
    assert page._host_evaluate("splitbrainHost.inspect().sandbox") == "", "unloaded: an empty sandbox now"

    honest.send(request("beside", values={"settings.speed": 21}))
    beside = honest_inbox.reply("beside")
    assert beside["ok"] is True and beside["state"]["settings.speed"] == 21

    # The stopped page answers at once; what is set meanwhile is kept for the restart.
    page.set_values({"settings.speed": 9, "settings.action": "none"})
    page.send(request("after", values={"settings.speed": 9}))
    assert inbox.reply("after")["error"]["code"] == "not_ready"
    with pytest.raises(HeadlessError) as info:
        page.advance(1)
    assert info.value.code == "not_ready"

    # What reached Python: a trickle of throttled states (one per 100 ms), nothing forged, one ready.
    assert len(inbox.of_type("state")) < 100, len(inbox.of_type("state"))
    assert not forged(inbox), forged(inbox)[:3]
    assert len(inbox.of_type("ready")) == 1
    assert [m["id"] for m in inbox.messages if m.get("kind") == "reply"] == ["flood", "after"]

    before = len(inbox.messages)
    page.reload()
    inbox.event("ready", after=before)
    page.send(request("again", "state"))
    assert inbox.reply("again")["state"]["settings.speed"] == 9, "the restarted page got the kept value"


@browser
def test_an_error_flood_is_stopped_and_reaches_python_as_a_few_events(open_page: OpenPage, hostile_dir: Path) -> None:
    page, inbox = open_page(page_html("attacker", hostile_dir))
    inbox.event("ready")
    page.send(request("errors", values={"settings.action": "error_flood"}))
    reply = inbox.reply("errors", timeout=90)
    assert reply["ok"] is False and reply["error"]["code"] == "not_ready" and "stopped" in reply["error"]["message"]
    inbox.wait_for(lambda m: m.get("type") == "error" and "stopped" in m["payload"]["message"], what="the stop")
    # The relay forwards errors outside a request coalesced: the latest, with a count of the others.
    inbox.wait_for(lambda m: m.get("type") == "error" and m["payload"]["message"].startswith("flood "), what="one")
    errors = inbox.of_type("error")
    assert 1 <= len(errors) <= 5, [e["payload"]["message"][:80] for e in errors]


# -- 4. oversized and invalid messages -----------------------------------------------------------


@browser
def test_a_huge_state_is_replaced_by_the_bounded_marker(open_page: OpenPage, hostile_dir: Path) -> None:
    page, inbox = open_page(page_html("attacker", hostile_dir))
    inbox.event("ready")
    page.send(request("huge", values={"settings.action": "huge"}))
    state = inbox.reply("huge", timeout=90)["state"]
    assert state == {"_truncated": True, "bytes": state["bytes"]} and state["bytes"] >= hostile_targets.HUGE_CHARS
    page.send(request("unicode", values={"settings.action": "huge_unicode"}))
    blob = inbox.reply("unicode", timeout=60)["state"]["blob"]
    assert blob == "\u00e9" * 300_000, "under the bound in characters: answered whole"


INVALID = """
SplitBrain.onApply((values, ctx) => {
  if (!ctx.id) return { honest: true };
  const nonce = SplitBrain.nonce, id = ctx.id, source = "splitbrain-target";
  const invalid = [
    { source, nonce, type: "state", id, payload: [1, 2] },
    { source, nonce, type: "state", id, payload: "text" },
    { source, nonce, type: "state", id, payload: new Date(0) },
    { source, nonce, type: "state", id: 42, payload: { forged: "numeric id" } },
    { source, nonce, type: "error", id, error: "text" },
    { source, nonce, type: "error", id, error: { code: 1, message: { forged: true } } },
    { source, nonce, type: "ready", load: "x".repeat(65) },
    { source, nonce, type: "eval", id, payload: { forged: "unknown type" } },
    { source: "splitbrain-parent", nonce, type: "state", id, payload: { forged: "parent source" } },
    { kind: "reply", id, view_id: "victim", ok: true, state: { forged: "kernel shape" } },
    "forged", 42, null, [{ source, nonce, type: "state", id, payload: { forged: "in an array" } }],
  ];
  for (const message of invalid) parent.postMessage(message, "*");
  return { honest: true, posted: invalid.length };
});
SplitBrain.ready();
"""


@browser
def test_invalid_messages_from_a_page_or_to_it_are_rejected(open_page: OpenPage) -> None:
    page, inbox = open_page(fixture_page(INVALID))
    inbox.event("ready")
    page.send(request("r1", values={"x": 1}))
    reply = inbox.reply("r1")
    assert reply["ok"] is True and reply["state"] == {"honest": True, "posted": 14}, "none of the 14 answered it"
    assert not forged(inbox), forged(inbox)
    assert len(inbox.of_type("ready")) == 1

    # Kernel -> page: what JSON cannot carry fails in the caller; malformed requests are ignored.
    with pytest.raises(ValueError):
        page.send(request("nan", values={"x": float("nan")}))
    for bad in (
        {"kind": "request", "id": "bad-op", "op": "eval", "payload": {}},
        {"kind": "request", "id": "", "op": "apply", "payload": {}},
        {"kind": "request", "id": "no-payload", "op": "apply"},
        {"kind": "reply", "id": "r1", "ok": True, "state": {}},
    ):
        page.send(bad)
    page.send(request("r2", values={"x": 2}))
    assert inbox.reply("r2")["ok"] is True
    assert {m["id"] for m in inbox.messages if m.get("kind") == "reply"} == {"r1", "r2"}

    # The binding's far end: an unreadable batch, junk entries and another view's messages deliver nothing.
    host = page._host
    assert host is not None
    count = len(inbox.messages)
    for payload in (
        "not json",
        '{"kind": "reply"}',
        '[1, "x", null]',
        json.dumps([{"kind": "event", "view_id": "other"}]),
    ):
        host.on_binding({"name": BINDING, "payload": payload})
    host.on_binding({"name": "someOtherBinding", "payload": json.dumps([{"kind": "event", "view_id": page.view_id}])})
    assert len(inbox.messages) == count
