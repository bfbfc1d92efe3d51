"""Local fake LLM providers for the agent's provider-level tests.

One small threaded HTTP server per test (stdlib ``http.server``, bound to 127.0.0.1 on port 0) that
speaks a provider's real wire format:

- ``"openai"``: ``POST /v1/chat/completions`` as JSON, or as ``data: {...}`` SSE chunks with
  ``choices[].delta.tool_calls`` when the body says ``"stream": true``; ``GET /v1/models``.
- ``"anthropic"``: ``POST /v1/messages`` as a message JSON, or as the SSE events ``message_start``,
  ``content_block_start``/``content_block_delta``/``content_block_stop``, ``message_delta`` (with
  ``stop_reason``) and ``message_stop`` when ``"stream": true``.
- ``"gemini"``: ``POST /v1beta/models/<model>:generateContent`` as JSON, and
  ``:streamGenerateContent?alt=sse`` as ``data: {...}`` SSE chunks.

A test scripts the server with a queue of :class:`Turn` (what the model says: text and/or tool
calls, and why it stopped) and :class:`HttpError` (a status, headers and a JSON body) entries;
``repeat`` is served once the queue is empty. Every request is recorded, so a test can check what
the model was told (system prompt, tool results), and when it arrived (``time.monotonic``, the clock
the agent's event loop waits on), so a retry test can check that a wait really happened.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

PROVIDERS = ("openai", "anthropic", "gemini")
CREATED = 1_700_000_000


# -- what a test scripts ----------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A tool call of a model turn. ``args`` as a ``str`` is sent verbatim (e.g. truncated JSON)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def args_json(self) -> str:
        return self.args if isinstance(self.args, str) else json.dumps(self.args)


@dataclass(frozen=True)
class Turn:
    """One model response. ``finish``: ``"stop"``, ``"tool_calls"`` or ``"length"`` (default: by content)."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    finish: str | None = None
    input_tokens: int = 11
    output_tokens: int = 7

    @property
    def finish_reason(self) -> str:
        return self.finish or ("tool_calls" if self.calls else "stop")


@dataclass(frozen=True)
class HttpError:
    status: int
    body: Any = None  # JSON-able; None: the provider's usual error body for the status
    headers: dict[str, str] = field(default_factory=dict)


Entry = Turn | HttpError


def say(text: str) -> Turn:
    return Turn(text=text)


def call(
    name: str, args: dict[str, Any] | str | None = None, *, text: str | None = None, finish: str | None = None
) -> Turn:
    return Turn(text=text, calls=(Call(name, {} if args is None else args),), finish=finish)


# -- error bodies as the providers send them --------------------------------------------------

_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_ANTHROPIC_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def google_error(status: int = 429, retry_delay: str | None = "1s", message: str | None = None) -> dict[str, Any]:
    """A Gemini API error body; a 429 carries a per-minute QuotaFailure and, if given, RetryInfo."""
    details: list[dict[str, Any]] = []
    if status == 429:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": "gemini-test"},
                        "quotaValue": "10",
                    }
                ],
            }
        )
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [{"description": "Learn more", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}],
            }
        )
    if retry_delay is not None:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay})
    text = message or (
        "You exceeded your current quota, please check your plan and billing details."
        if status == 429
        else "The model is overloaded. Please try again later."
        if status == 503
        else "Internal error encountered."
    )
    return {
        "error": {
            "code": status,
            "message": text,
            "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
            **({"details": details} if details else {}),
        }
    }


def google_openai_compat_error(status: int = 429, retry_delay: str = "1s") -> list[dict[str, Any]]:
    """What Gemini's OpenAI-compatible endpoint sends: the Google error, wrapped in a list."""
    return [google_error(status, retry_delay)]


def default_error_body(provider: str, status: int) -> Any:
    if provider == "gemini":
        return google_error(status, retry_delay=None)
    if provider == "anthropic":
        kind = _ANTHROPIC_TYPE.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": f"fake {kind} ({status})"}}
    kind = {401: "invalid_request_error", 429: "requests"}.get(status, "server_error")
    code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    message = {401: "Incorrect API key provided: test-key.", 429: "Rate limit reached for requests"}.get(
        status, "The server had an error while processing your request."
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# -- rendering a model turn -------------------------------------------------------------------


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _halves(text: str) -> list[str]:
    """Split into two pieces so every stream really arrives in deltas."""
    if len(text) < 2:
        return [text]
    mid = len(text) // 2
    return [text[:mid], text[mid:]]


class _Ids:
    def __init__(self) -> None:
        self._n = itertools.count(1)

    def __call__(self, prefix: str) -> str:
        return f"{prefix}{next(self._n)}"


def openai_json(turn: Turn, model: str, ids: _Ids) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None}
    if turn.calls:
        message["tool_calls"] = [
            {"id": c.id or ids("call_"), "type": "function", "function": {"name": c.name, "arguments": c.args_json()}}
            for c in turn.calls
        ]
    return {
        "id": ids("chatcmpl-"),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": turn.finish_reason}],
        "usage": {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
        },
    }


def openai_sse(turn: Turn, model: str, ids: _Ids, include_usage: bool) -> Iterator[bytes]:
    chunk_id = ids("chatcmpl-")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": model,
                "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
        )

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _halves(turn.text or ""):
        if piece:
            yield chunk({"content": piece})
    for i, c in enumerate(turn.calls):
        head = {
            "index": i,
            "id": c.id or ids("call_"),
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in _halves(c.args_json()):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, turn.finish_reason)
    if include_usage:
        yield _sse(
            {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": turn.input_tokens,
                    "completion_tokens": turn.output_tokens,
                    "total_tokens": turn.input_tokens + turn.output_tokens,
                },
            }
        )
    yield b"data: [DONE]\n\n"


_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def anthropic_json(turn: Turn, model: str, ids: _Ids) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    for c in turn.calls:
        if isinstance(c.args, str):
            raise ValueError("a non-streamed Anthropic message cannot carry truncated tool input")
        content.append({"type": "tool_use", "id": c.id or ids("toolu_"), "name": c.name, "input": c.args})
    return {
        "id": ids("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP[turn.finish_reason],
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


def anthropic_sse(turn: Turn, model: str, ids: _Ids) -> Iterator[bytes]:
    start = {
        "id": ids("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1},
    }
    yield _sse({"type": "message_start", "message": start}, "message_start")
    yield _sse({"type": "ping"}, "ping")
    index = 0
    if turn.text:
        block = {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        yield _sse(block, "content_block_start")
        for piece in _halves(turn.text):
            delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
            yield _sse(delta, "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    for c in turn.calls:
        tool = {"type": "tool_use", "id": c.id or ids("toolu_"), "name": c.name, "input": {}}
        yield _sse({"type": "content_block_start", "index": index, "content_block": tool}, "content_block_start")
        for piece in _halves(c.args_json()):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield _sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    end = {"stop_reason": _ANTHROPIC_STOP[turn.finish_reason], "stop_sequence": None}
    yield _sse({"type": "message_delta", "delta": end, "usage": {"output_tokens": turn.output_tokens}}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


_GEMINI_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"}


def _gemini_parts(turn: Turn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if turn.text:
        parts.append({"text": turn.text})
    for c in turn.calls:
        if isinstance(c.args, str):
            raise ValueError("Gemini sends functionCall.args as an object: it cannot carry truncated arguments")
        parts.append({"functionCall": {"name": c.name, "args": c.args}})
    return parts


def _gemini_usage(turn: Turn) -> dict[str, Any]:
    return {
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": turn.output_tokens,
        "totalTokenCount": turn.input_tokens + turn.output_tokens,
    }


def gemini_json(turn: Turn, model: str, ids: _Ids) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": _gemini_parts(turn)},
                "finishReason": _GEMINI_FINISH[turn.finish_reason],
                "index": 0,
            }
        ],
        "usageMetadata": _gemini_usage(turn),
        "modelVersion": model,
        "responseId": ids("resp-"),
    }


def gemini_sse(turn: Turn, model: str, ids: _Ids) -> Iterator[bytes]:
    response_id = ids("resp-")
    chunks: list[list[dict[str, Any]]] = [[{"text": piece}] for piece in _halves(turn.text or "") if piece]
    calls = _gemini_parts(Turn(calls=turn.calls))
    if calls:
        chunks.append(calls)
    if not chunks:
        chunks.append([{"text": ""}])
    for i, parts in enumerate(chunks):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": response_id}
        if i == len(chunks) - 1:
            candidate["finishReason"] = _GEMINI_FINISH[turn.finish_reason]
            body["usageMetadata"] = _gemini_usage(turn)
        yield f"data: {json.dumps(body)}\r\n\r\n".encode()


# -- the server -------------------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    arrived: float = 0.0  # time.monotonic() once the request (its whole body) had arrived

    @property
    def streamed(self) -> bool:
        return ":streamGenerateContent" in self.path or (
            isinstance(self.body, dict) and self.body.get("stream") is True
        )


class FakeProvider:
    """A scripted fake of one provider on 127.0.0.1; use as a context manager or call :meth:`stop`."""

    def __init__(
        self,
        provider: str,
        *,
        model: str | None = None,
        models: tuple[str, ...] = ("fake-model",),
        routes: dict[str, Any] | None = None,
        cors: bool = False,
    ) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {PROVIDERS}")
        self.provider = provider
        self.model = model or {"openai": "gpt-test", "anthropic": "claude-test", "gemini": "gemini-test"}[provider]
        self.listed_models = models
        self.routes = dict(routes or {})  # path -> JSON answered to a GET or POST: a server's other endpoints
        self.cors = cors  # answer a browser's preflight and allow any origin (a page on another port calls it)
        self.requests: list[Recorded] = []
        self.unscripted = 0  # requests that arrived with nothing scripted
        self.repeat: Entry | None = None
        self._queue: deque[Entry] = deque()
        self._lock = threading.Lock()
        self._ids = _Ids()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *entries: Entry, repeat: Entry | None = None) -> FakeProvider:
        """Queue responses; ``repeat`` answers every request after the queue runs out."""
        with self._lock:
            self._queue.extend(entries)
            if repeat is not None:
                self.repeat = repeat
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what the model was told ------------------------------------------------------------

    @property
    def model_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST"]

    def gaps(self) -> list[float]:
        """Seconds between consecutive model requests' arrivals: each is at least the wait in between."""
        times = [r.arrived for r in self.model_requests]
        return [later - earlier for earlier, later in itertools.pairwise(times)]

    def system_text(self, index: int = 0) -> str:
        """The system prompt / instructions of model request ``index``."""
        body = self.model_requests[index].body
        if self.provider == "openai":
            return "\n".join(
                _text(m.get("content")) for m in body.get("messages", []) if m.get("role") in ("system", "developer")
            )
        if self.provider == "anthropic":
            return _text(body.get("system"))
        return _text((body.get("systemInstruction") or {}).get("parts"))

    def tools(self, index: int = 0) -> dict[str, dict[str, Any]]:
        """The tools offered in model request ``index``: name -> JSON schema of the arguments."""
        body = self.model_requests[index].body
        if self.provider == "openai":
            return {t["function"]["name"]: t["function"].get("parameters") or {} for t in body.get("tools", [])}
        if self.provider == "anthropic":
            return {t["name"]: t.get("input_schema") or {} for t in body.get("tools", [])}
        out = {}
        for tool in body.get("tools", []):
            for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
                schema = (
                    decl.get("parametersJsonSchema") or decl.get("parameters_json_schema") or decl.get("parameters")
                )
                out[decl["name"]] = schema or {}
        return out

    def tool_results(self, index: int = -1) -> list[str]:
        """Every tool result in model request ``index`` (the whole conversation it carried), as text."""
        body = self.model_requests[index].body
        out: list[str] = []
        if self.provider == "openai":
            out = [_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
        elif self.provider == "anthropic":
            for m in body.get("messages", []):
                if isinstance(m.get("content"), list):
                    out += [_text(b.get("content")) for b in m["content"] if b.get("type") == "tool_result"]
        else:
            for content in body.get("contents", []):
                for part in content.get("parts", []):
                    if "functionResponse" in part:
                        out.append(json.dumps(part["functionResponse"].get("response"), default=str))
        return out

    # -- serving ----------------------------------------------------------------------------

    def _next(self) -> Entry:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            if self.repeat is not None:
                return self.repeat
            self.unscripted += 1
        return HttpError(500, {"error": {"message": "fake provider: nothing scripted for this request"}})

    def _answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        path = handler.path
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        recorded = Recorded(method, path, {k.lower(): v for k, v in handler.headers.items()}, body, time.monotonic())
        with self._lock:
            self.requests.append(recorded)
        route = urlsplit(path).path
        if route in self.routes:
            return _send_json(handler, 200, self.routes[route])
        if method == "GET":
            if self.provider == "openai" and route.rstrip("/").endswith("/models"):
                data = [
                    {"id": m, "object": "model", "created": CREATED, "owned_by": "fake"} for m in self.listed_models
                ]
                return _send_json(handler, 200, {"object": "list", "data": data})
            return _send_json(handler, 404, default_error_body(self.provider, 404))
        expected = {
            "openai": route.endswith("/chat/completions"),
            "anthropic": route.endswith("/v1/messages"),
            "gemini": ":generateContent" in route or ":streamGenerateContent" in route,
        }[self.provider]
        if not expected:
            return _send_json(handler, 404, default_error_body(self.provider, 404))
        entry = self._next()
        if isinstance(entry, HttpError):
            body_out = entry.body if entry.body is not None else default_error_body(self.provider, entry.status)
            return _send_json(handler, entry.status, body_out, entry.headers)
        streamed = recorded.streamed
        model = body.get("model", self.model) if isinstance(body, dict) else self.model
        if self.provider == "gemini":
            model = route.rsplit("/", 1)[-1].split(":", 1)[0]
        if not streamed:
            render = {"openai": openai_json, "anthropic": anthropic_json, "gemini": gemini_json}[self.provider]
            return _send_json(handler, 200, render(entry, model, self._ids))
        if self.provider == "openai":
            include_usage = bool(((body or {}).get("stream_options") or {}).get("include_usage"))
            chunks = openai_sse(entry, model, self._ids, include_usage)
        elif self.provider == "anthropic":
            chunks = anthropic_sse(entry, model, self._ids)
        else:
            chunks = gemini_sse(entry, model, self._ids)
        _send_stream(handler, chunks)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c.get("text") if isinstance(c, dict) and "text" in c else c) for c in content)
    if isinstance(content, dict):
        return _text(content.get("text")) if "text" in content else json.dumps(content)
    return str(content)


def _send_json(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def _send_stream(handler: BaseHTTPRequestHandler, chunks: Iterator[bytes]) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for piece in chunks:
        handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        handler.wfile.flush()
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops its connection (a cancelled run, a client bound to a closed event loop) is
        # part of what these tests exercise; anything else is still reported.
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler(fake: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            fake._answer(self, "GET")

        def do_POST(self) -> None:
            fake._answer(self, "POST")

        def do_OPTIONS(self) -> None:  # a browser's CORS preflight
            self.send_response(204 if fake.cors else 405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def end_headers(self) -> None:
            if fake.cors:
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


# -- agents pointed at a fake -----------------------------------------------------------------


def model_spec(server: FakeProvider) -> dict[str, Any]:
    """The ``model=``, ``base_url=`` and ``api_key=`` arguments of an Agent that talks to ``server``."""
    if server.provider == "openai":
        return {"model": f"openai:{server.model}", "base_url": server.url + "/v1", "api_key": "test-key"}
    if server.provider == "anthropic":
        return {"model": f"anthropic:{server.model}", "base_url": server.url, "api_key": "test-key"}
    return {"model": f"google:{server.model}", "base_url": server.url, "api_key": "test-key"}


def model_object(server: FakeProvider) -> Any:
    """A pydantic-ai model object for ``server`` (for ``fallback=``, where base_url= does not reach)."""
    spec = model_spec(server)
    name = spec["model"].split(":", 1)[1]
    if server.provider == "openai":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        return OpenAIChatModel(name, provider=OpenAIProvider(base_url=spec["base_url"], api_key="test-key"))
    if server.provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(name, provider=AnthropicProvider(base_url=spec["base_url"], api_key="test-key"))
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel(name, provider=GoogleProvider(base_url=spec["base_url"], api_key="test-key"))


def non_streaming(model: Any) -> Any:
    """``model``, but every request goes out without streaming (``"stream": false`` / ``:generateContent``).

    The agent runs on pydantic-ai's event stream, so it always asks its model for a streamed response;
    this wrapper answers that with one plain request, replayed as a completed stream.
    """
    from contextlib import asynccontextmanager

    from pydantic_ai.models import CompletedStreamedResponse
    from pydantic_ai.models.wrapper import WrapperModel

    class NonStreaming(WrapperModel):
        @asynccontextmanager
        async def request_stream(self, messages, model_settings, model_request_parameters, run_context=None):  # type: ignore[override]
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
            yield CompletedStreamedResponse(
                response, model_request_parameters=model_request_parameters, replay_events=True
            )

    return NonStreaming(model)


def make_agent(sim: Any, server: FakeProvider, *, stream: bool = True, **kwargs: Any) -> Any:
    """An :class:`splitbrain_widget.Agent` whose model is ``server``; fast backoff unless given.

    ``stream=True`` goes through :meth:`Agent` 's own ``model=``/``base_url=``/``api_key=`` set-up;
    ``stream=False`` passes a model object that never streams (see :func:`non_streaming`).
    """
    from splitbrain_widget import Agent

    kwargs.setdefault("backoff", (0.01, 0.01, 0.01))
    if stream:
        return Agent(sim, **model_spec(server), **kwargs)
    return Agent(sim, model=non_streaming(model_object(server)), **kwargs)
