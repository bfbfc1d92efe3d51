"""What a local OpenAI-compatible server says about the model it serves: its context size, tool calling.

Each kind of server says it somewhere else: llama.cpp in ``GET /props`` (``n_ctx`` of a slot, and
``chat_template_caps.supports_tools``), Ollama in ``POST /api/show`` (``num_ctx`` among its
parameters, ``capabilities``) with the loaded context in ``GET /api/ps``, LM Studio in
``GET /api/v0/models/<id>`` (``loaded_context_length``, ``max_context_length``), vLLM in its
``/v1/models`` listing (``max_model_len``). The kind is recognised from GETs first, so nothing is
posted to a server that is not Ollama. Every read is short and bounded; whatever does not answer
leaves its fact unknown (``None``), never an error.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

PROBE_TIMEOUT_S = 0.5
MAX_BODY = 1 << 20  # a server's answer is read up to a mebibyte, no further
OLLAMA_DEFAULT_CTX = 4096  # what Ollama gives a request when neither the model nor the server sets num_ctx


@dataclass(frozen=True)
class ServerFacts:
    """What the server said: its kind, the context (tokens) a request may fill, whether tools reach the model."""

    kind: str = "unknown"
    context: int | None = None
    tools: bool | None = None
    source: str = ""  # where the context size was read, for the docs and the warning


def read_json(url: str, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON a server answers at ``url`` (posting ``body`` if given), or None when it does not answer in
    time, or not with JSON of at most :data:`MAX_BODY` bytes. The whole read is bounded, not only each wait:
    no read starts after ``timeout`` seconds and each waits at most that long, so a server that trickles an
    endless answer is given up on within twice ``timeout``."""
    deadline = time.monotonic() + timeout
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_BODY:
                if time.monotonic() > deadline:
                    return None
                chunk = response.read1(65536)
                if not chunk:
                    return json.loads(b"".join(chunks))
                chunks.append(chunk)
                size += len(chunk)
            return None  # larger than a server's facts ever are
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def server_root(base_url: str) -> str:
    """``http://host:port`` of an OpenAI-compatible base URL (``.../v1`` and trailing slashes dropped)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def read_facts(base_url: str, model: str, listing: Any = None, timeout: float = PROBE_TIMEOUT_S) -> ServerFacts:
    """The facts of ``model`` on the server at ``base_url``; ``listing`` is its ``/v1/models`` answer if
    already read."""
    root = server_root(base_url)
    if listing is None:
        listing = read_json(f"{base_url.rstrip('/')}/models", timeout)
        if listing is None:  # a server that does not list its models in time will not say more
            return ServerFacts()
    entry = _listed(listing, model)
    if (length := _int(entry.get("max_model_len"))) is not None:  # vLLM
        return ServerFacts("vLLM", length, None, "/v1/models max_model_len")
    props = read_json(f"{root}/props", timeout)
    if isinstance(props, dict) and ("default_generation_settings" in props or "chat_template_caps" in props):
        return _llama_cpp(props)
    version = read_json(f"{root}/api/version", timeout)
    if isinstance(version, dict) and "version" in version:
        return _ollama(root, model, timeout)
    studio = read_json(f"{root}/api/v0/models/{quote(model, safe='')}", timeout)
    if isinstance(studio, dict) and ("max_context_length" in studio or "loaded_context_length" in studio):
        return _lm_studio(studio)
    return ServerFacts()


def _listed(listing: Any, model: str) -> dict[str, Any]:
    data = listing.get("data") if isinstance(listing, dict) else None
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and item.get("id") == model:
            return item
    return {}


def _llama_cpp(props: dict[str, Any]) -> ServerFacts:
    settings = props.get("default_generation_settings")
    context = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    caps = props.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return ServerFacts("llama.cpp", context, tools if isinstance(tools, bool) else None, "/props n_ctx")


def _ollama(root: str, model: str, timeout: float) -> ServerFacts:
    show = read_json(f"{root}/api/show", timeout, body={"model": model})
    if not isinstance(show, dict):
        return ServerFacts("Ollama")
    capabilities = show.get("capabilities")
    tools = ("tools" in capabilities) if isinstance(capabilities, list) else None
    trained = None
    info = show.get("model_info")
    if isinstance(info, dict):
        trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length") and _int(v)), None)
    context, source = None, ""
    for line in str(show.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            context, source = int(value.strip()), "/api/show num_ctx"
    if context is None:
        running = read_json(f"{root}/api/ps", timeout)
        for item in running.get("models", []) if isinstance(running, dict) else []:
            if isinstance(item, dict) and model in (item.get("name"), item.get("model")):
                context, source = _int(item.get("context_length")), "/api/ps context_length"
    if context is None:
        context, source = OLLAMA_DEFAULT_CTX, "Ollama's default num_ctx"
    if trained is not None:
        context = min(context, trained)
    return ServerFacts("Ollama", context, tools, source)


def _lm_studio(entry: dict[str, Any]) -> ServerFacts:
    loaded = _int(entry.get("loaded_context_length"))
    context = loaded or _int(entry.get("max_context_length"))
    source = "/api/v0 loaded_context_length" if loaded else "/api/v0 max_context_length"
    capabilities = entry.get("capabilities")
    tools = ("tool_use" in capabilities) if isinstance(capabilities, list) else None
    return ServerFacts("LM Studio", context, tools, source)
