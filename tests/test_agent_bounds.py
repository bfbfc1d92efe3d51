"""Every answer is bounded: an output cap on each request, a deadline per request, per chunk and per run.

Against the fake providers (the real wire formats, on 127.0.0.1) and two servers of our own that
misbehave as slow local servers do: one accepts the request and never answers, one streams text
forever. Each run must end by its deadline with a ``stopped`` reason that says which bound ended it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import splitbrain_widget as sb
from splitbrain_widget.agent._model_setup import server_models
from splitbrain_widget.agent._server_facts import ServerFacts, read_facts

from .fake_providers import Turn, make_agent, say
from .test_agent_providers import ask, sim  # noqa: F401  (the fixture)


def test_each_request_carries_the_output_cap(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai").script(say("Done."), say("Done."))
    ask(make_agent(sim, server), "hello")  # no change asked: one request each
    ask(make_agent(sim, server, max_tokens=64), "hello")
    caps = [r.body.get("max_tokens", r.body.get("max_completion_tokens")) for r in server.model_requests]
    assert caps == [1024, 64]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_an_answer_cut_off_by_the_cap_says_so(fake: Any, sim: sb.TargetWidget, provider: str) -> None:  # noqa: F811
    server = fake(provider).script(Turn(text="The launch angle is now set to", finish="length", output_tokens=1024))
    result, _ = ask(make_agent(sim, server))
    assert result.stopped == "length" and not result.ok
    assert result.text.startswith("The launch angle is now set to")
    assert "[cut off: the answer reached its output cap (max_tokens=1024)]" in result.text


def test_an_answer_cut_off_by_a_full_context_says_that(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    """Seen on llama.cpp: the context filled up 365 tokens into an answer capped at 500."""
    server = fake("openai").script(Turn(text="The ball rises and", finish="length", output_tokens=365))
    result, _ = ask(make_agent(sim, server, max_tokens=500))
    assert result.stopped == "length"
    assert "[cut off: the answer filled the model's context window after 365 tokens]" in result.text


@pytest.mark.parametrize(
    ("bound", "value"), [("max_tokens", 0), ("run_timeout", -1), ("request_timeout", "soon"), ("idle_timeout", True)]
)
def test_a_bad_bound_is_refused_naming_it(sim: sb.TargetWidget, bound: str, value: Any) -> None:  # noqa: F811
    with pytest.raises(ValueError, match=rf"Agent\({bound}="):
        sb.Agent(sim, **{bound: value})


class Misbehaving:
    """An OpenAI-compatible server on 127.0.0.1 that never answers a request (``mode="silent"``) or
    streams text deltas forever (``mode="endless"``); it counts the requests it got."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _accept(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.2)
            data = b""
            while b"\r\n\r\n" not in data and not self._stop.is_set():
                try:
                    data += conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
            self.requests += 1
            if self.mode == "silent":
                self._stop.wait()  # holds the connection open, answering nothing
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n")
            n = 0
            while not self._stop.wait(0.02):  # a delta every 20 ms, never a finish
                chunk = {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "endless",
                    "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}],
                }
                try:
                    conn.sendall(f"data: {json.dumps(chunk)}\n\n".encode())
                except OSError:
                    return
                n += 1

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        for worker in self._threads:
            worker.join(5)


@pytest.fixture
def misbehaving() -> Iterator[Any]:
    made: list[Misbehaving] = []

    def make(mode: str) -> Misbehaving:
        made.append(Misbehaving(mode))
        return made[-1]

    yield make
    for server in made:
        server.close()


def test_a_server_that_never_answers_ends_by_the_request_deadline(sim: sb.TargetWidget, misbehaving: Any) -> None:  # noqa: F811
    server = misbehaving("silent")
    agent = sb.Agent(sim, model="silent", base_url=server.url, max_retries=0, request_timeout=1.5, idle_timeout=None)
    started = time.monotonic()
    result, _ = ask(agent, timeout=30)
    took = time.monotonic() - started
    assert result.stopped is not None and result.stopped.startswith("deadline: a model request"), result.stopped
    assert "request_timeout of 1.5 s" in result.stopped
    assert server.requests >= 1 and took < 30
    assert sim.values["settings.speed"] == 8.0  # nothing changed


def test_a_server_that_streams_forever_ends_by_the_run_deadline(sim: sb.TargetWidget, misbehaving: Any) -> None:  # noqa: F811
    server = misbehaving("endless")
    started = time.monotonic()
    agent = sb.Agent(
        sim, model="endless", base_url=server.url, max_retries=0, request_timeout=None, idle_timeout=5, run_timeout=2
    )
    assert time.monotonic() - started < 10  # its facts are not waited for: the server answers every GET endlessly
    events: list[Any] = []
    started = time.monotonic()
    result, recorder = ask(agent, timeout=30)
    took = time.monotonic() - started
    assert result.stopped == "deadline: the answer took longer than its run_timeout of 2 s", result.stopped
    assert took < 30 and events == []
    assert any(type(e).__name__ == "TextDelta" for e in recorder.events)  # it was streaming when the deadline came
    # the conversation goes on: the next answer is not stuck behind the one that was stopped
    assert agent.history is not None


def test_a_server_that_trickles_an_endless_answer_leaves_its_facts_unknown_by_the_deadline(misbehaving: Any) -> None:
    """Found as a test that took two minutes: each probe of a server's facts read on while bytes kept coming,
    to a mebibyte, so making an agent for such a server took that long. Each read now ends at its deadline."""
    server = misbehaving("endless")
    started = time.monotonic()
    assert read_facts(server.url, "endless", timeout=0.3) == ServerFacts()
    assert server_models(server.url, timeout=0.3) is None
    took = time.monotonic() - started
    assert server.requests == 2 and took < 5, (server.requests, took)
