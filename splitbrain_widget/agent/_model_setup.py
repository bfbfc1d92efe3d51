"""Model setup: a pydantic-ai model from what the user passed as ``model=`` (a spec string or a model).

``"offline"`` is the planner (:mod:`._offline`); ``"local"`` is the first local OpenAI-compatible
server that answers (:data:`LOCAL_SERVERS`). Every failure raises :class:`._models.ModelSetupError`
saying what to install, set or pass.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from pydantic_ai.models import Model

from ._models import ModelSetupError
from ._offline import offline_model
from ._run_state import RunState
from ._server_facts import ServerFacts, read_facts, read_json

LOCAL_SERVERS = (("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234))


def build_model(spec: Any, *, base_url: str | None = None, api_key: str | None = None, state: RunState) -> Model:
    """A pydantic-ai model from ``"offline"``, ``"openai:<name>"``, ``"anthropic:<name>"``,
    ``"google:<name>"``, ``"ollama:<name>"``, ``"local"`` or a model object."""
    if isinstance(spec, Model):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSetupError(f"model must be a string such as 'offline' or 'openai:gpt-4o-mini', got {spec!r}")
    spec = spec.strip()
    if spec == "offline":
        return offline_model(state)
    provider, _, name = spec.partition(":")
    if spec == "local":
        base_url, name = find_local_server(base_url)
        provider = "openai"
    elif not name:
        if base_url is None:
            raise ModelSetupError(
                f"unknown model {spec!r}: use 'offline', 'openai:<name>', 'anthropic:<name>', 'google:<name>', "
                "'ollama:<name>', 'local', or pass base_url= for any OpenAI-compatible server"
            )
        provider, name = "openai", spec
    try:
        if provider in ("openai", "ollama"):
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            if provider == "ollama":
                base_url = base_url or "http://127.0.0.1:11434/v1"
                api_key = api_key or "ollama"
            if base_url is not None and api_key is None:
                api_key = os.environ.get("OPENAI_API_KEY") or "not-needed"
            chat = OpenAIChatModel(name, provider=OpenAIProvider(base_url=base_url, api_key=api_key))
            if provider == "ollama" or spec == "local":
                chat._splitbrain_label = f"{'local' if spec == 'local' else 'ollama'}:{name}"  # type: ignore[attr-defined]
            elif base_url is not None and not spec.startswith("openai:"):  # a model name on any compatible server
                chat._splitbrain_label = f"{_host_label(base_url)}:{name}"  # type: ignore[attr-defined]
            return chat
        if provider == "anthropic":
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            return AnthropicModel(name, provider=AnthropicProvider(api_key=api_key, base_url=base_url))
        if provider in ("google", "gemini"):
            from pydantic_ai.models.google import GoogleModel
            from pydantic_ai.providers.google import GoogleProvider

            return GoogleModel(name, provider=GoogleProvider(api_key=api_key, base_url=base_url))
    except ImportError as exc:
        extra = {"ollama": "openai", "gemini": "google"}.get(provider, provider)
        raise ModelSetupError(
            f"model {spec!r} needs the {extra} client: pip install 'splitbrain-widget[{extra}]' ({exc})"
        ) from None
    except Exception as exc:  # missing API key and similar provider set-up errors
        detail = str(exc).split(" For testing", 1)[0].strip()  # pydantic-ai's hint about its own test model
        raise ModelSetupError(
            f"could not set up model {spec!r}: {detail} Set the provider's key in the kernel's environment "
            "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY) or pass api_key=."
        ) from None
    raise ModelSetupError(f"unknown provider {provider!r} in {spec!r}: use openai, anthropic, google or ollama")


def _host_label(base_url: str) -> str:
    """``local`` for a server on this machine, else its host: what a base_url model is labelled by."""
    host = urlsplit(base_url).hostname or base_url
    return "local" if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0") else host


def asks_its_server(spec: Any, base_url: str | None) -> bool:
    """Whether the server behind ``spec`` is asked what it serves (see :func:`server_facts`): ``"local"``,
    ``"ollama:<name>"`` and a bare model name on a ``base_url``; a named provider (``"openai:<name>"``,
    a model object) is taken at its word, with no request before the first question."""
    if not isinstance(spec, str):
        return False
    spec = spec.strip()
    return spec == "local" or spec.startswith("ollama:") or (base_url is not None and ":" not in spec)


def server_facts(model: Model) -> ServerFacts | None:
    """What the OpenAI-compatible server behind ``model`` says of it (context size, tool calling); None for
    any other model, and for OpenAI's own API (which says neither)."""
    try:
        from pydantic_ai.models.openai import OpenAIChatModel
    except ImportError:
        return None
    if not isinstance(model, OpenAIChatModel):
        return None
    base_url = str(model.client.base_url)
    if urlsplit(base_url).hostname == "api.openai.com":
        return None
    return read_facts(base_url, model.model_name, listing=_listings.pop(base_url.rstrip("/"), None))


def no_tools_warning(label: str, facts: ServerFacts) -> str:
    """What to say at setup when the server reports that its model's chat template has no tool calls."""
    return (
        f"model {label!r}: the {facts.kind} server reports that this model's chat template has no tool calling "
        "(supports_tools: false), so the tools that steer the target would not reach it and it could only talk. "
        "Use a model whose template has tool calls (docs/local-models.md); with llama.cpp, start "
        "llama-server with --jinja."
    )


# The /v1/models answer find_local_server read, by base URL: server_facts takes it (once) instead of
# asking the same server again a moment later, while the agent is set up.
_listings: dict[str, Any] = {}


def server_models(url: str, timeout: float = 0.5) -> tuple[dict[str, Any], list[str]] | None:
    """What an OpenAI-compatible server at ``url`` (``.../v1``) lists at ``/models``: its listing and the
    model ids in it; None when nothing answers there (or not with JSON)."""
    listing = read_json(f"{url}/models", timeout)
    if not isinstance(listing, dict):
        return None
    return listing, [str(m["id"]) for m in listing.get("data", []) if isinstance(m, dict) and m.get("id")]


def find_local_server(base_url: str | None = None, timeout: float = 0.5) -> tuple[str, str]:
    """The first local OpenAI-compatible server that answers ``/v1/models``, and its first model."""
    candidates = [(base_url.rstrip("/"), "the given base_url")] if base_url else []
    candidates += [(f"http://127.0.0.1:{port}/v1", f"{name} (port {port})") for name, port in LOCAL_SERVERS]
    tried = []
    for url, label in candidates:
        answered = server_models(url, timeout)
        if answered is None:
            tried.append(label)
            continue
        listing, models = answered
        if models:
            _listings[url] = listing
            return url, models[0]
        tried.append(f"{label}: answered but lists no models")
    raise ModelSetupError(
        "model='local' found no local OpenAI-compatible server. Tried: "
        + "; ".join(tried)
        + ". Start one (for example `ollama serve` and `ollama pull qwen2.5`), or pass base_url=."
    )
