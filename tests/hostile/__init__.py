"""The security suite's hostile pages: one file per attack (``pages/*.html``, each saying in a comment
what it tries and what must happen), run in every home of a target (JupyterLab, Notebook 7,
headless) against a loopback server that logs every request it receives (:class:`RequestLog`).

:func:`write_pages` writes each page as a target (the page with ``__SERVER__`` / ``__WS_SERVER__``
aimed at the log server, and a manifest) into a folder. :data:`PAGES` says what each attack is
expected to come to, so that every home is judged by the same table:

- ``answers``: the page stays, its calls are answered (``ok``);
- ``leaves``: the page leaves its frame (navigates, reloads): its calls end ``not_ready`` (saying
  why) or are answered by the fresh frame that replaced it, never by another document;
- ``stopped``: the page breaks its message budget and is stopped: ``not_ready``, saying why;
- ``refused``: the manifest itself is refused at load (``ManifestError`` naming the file and field).

In every home the passing figure is the same: zero requests at the log server.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAGES_DIR = Path(__file__).parent / "pages"


@dataclass(frozen=True)
class Attack:
    page: str
    expect: str  # answers | leaves | stopped | refused
    what: str


PAGES: dict[str, Attack] = {
    "policy_in_comment": Attack("policy_in_comment", "answers", "a <head> in a comment before the real head"),
    "policy_in_script": Attack("policy_in_script", "answers", "a script before <head> holding '<head>'"),
    "policy_in_cdata": Attack("policy_in_cdata", "answers", "'<head>' in CDATA and attributes"),
    "no_head_fragment": Attack("no_head_fragment", "answers", "a fragment: no doctype, html or head"),
    "meta_refresh": Attack("meta_refresh", "leaves", "a meta refresh to the server"),
    "navigate_remote": Attack("navigate_remote", "leaves", "location to a remote page that knows the protocol"),
    "navigate_data": Attack("navigate_data", "leaves", "location to a data: page answering as the target"),
    "navigate_blank": Attack("navigate_blank", "leaves", "location to about:blank"),
    "popup_and_form": Attack("popup_and_form", "answers", "window.open, form posts"),
    "prefetch_socket_beacon": Attack(
        "prefetch_socket_beacon", "answers", "prefetch, preload, stylesheet, WebSocket, sendBeacon, EventSource, worker"
    ),
    "raw_flood": Attack("raw_flood", "answers", "a one-second raw postMessage flood (on mode=flood)"),
    "huge_values": Attack("huge_values", "answers", "states huge in Python, nested 1,000 deep, lone surrogates"),
    "proto_names": Attack("proto_names", "refused", "a parameter named __proto__"),
}

MANIFEST: dict[str, Any] = {
    "type": "apply",
    "data": {
        "settings": {
            "speed": {"type": "number", "unit": "m/s", "value": 8, "min": 0, "max": 50},
            "mode": {"type": "string", "value": "none"},
        }
    },
    "observables": {"energy": {"unit": "J"}, "status": {}},
}


def write_pages(folder: Path, server_url: str) -> Path:
    """Every page of :data:`PAGES` as a target in ``folder``, aimed at ``server_url``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    ws_url = "ws" + server_url.removeprefix("http")
    for name, attack in PAGES.items():
        text = (PAGES_DIR / f"{attack.page}.html").read_text(encoding="utf-8")
        (folder / f"{name}.html").write_text(
            text.replace("__WS_SERVER__", ws_url).replace("__SERVER__", server_url), encoding="utf-8"
        )
        manifest = {**MANIFEST, "id": name, "title": f"hostile: {attack.what}"}
        if attack.expect == "refused":
            manifest["data"] = {
                "settings": {"__proto__": {"type": "number", "value": 1}},
                "constructor": {"x": {"type": "number", "value": 1}},
            }
        (folder / f"{name}.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


class RequestLog(http.server.ThreadingHTTPServer):
    """A loopback web server that answers everything and logs every request it receives."""

    daemon_threads = True

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
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if self.path.endswith(".html") else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_OPTIONS = _answer

    def log_message(self, format: str, *args: Any) -> None:  # the test reads the requests, not stderr
        pass


@contextmanager
def request_log() -> Iterator[RequestLog]:
    """A running :class:`RequestLog`, shut down after."""
    server = RequestLog()
    thread = threading.Thread(target=server.serve_forever, name="hostile-request-log", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
