"""Context that holds: the window read from the server, requests counted whole, an overflow recovered.

Against fake servers on 127.0.0.1 that answer the discovery endpoints of llama.cpp (``/props``),
Ollama (``/api/version``, ``/api/show``, ``/api/ps``), LM Studio (``/api/v0/models/<id>``) and vLLM
(``max_model_len`` in ``/v1/models``) as those servers do, and the OpenAI chat wire format for the
model; an overflow is the HTTP 400 each provider sends.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import warnings
from typing import Any

import pytest
from pydantic_ai import ModelHTTPError
from pydantic_ai.messages import ModelRequest, UserPromptPart

import splitbrain_widget as sb
from splitbrain_widget.agent._overflow import overflow_of
from splitbrain_widget.agent._server_facts import OLLAMA_DEFAULT_CTX, ServerFacts, read_facts

from .fake_providers import FakeProvider, HttpError, call, say
from .test_agent_providers import SPEED_12, ask, sim  # noqa: F401  (the fixture)

LLAMA_PROPS = {
    "default_generation_settings": {"n_ctx": 3072, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_alias": "smollm2",
    "chat_template_caps": {"supports_tools": True, "supports_tool_calls": True, "supports_parallel_tool_calls": True},
}


def llama_overflow(prompt: int = 3200, window: int = 3072) -> HttpError:
    message = f"request ({prompt} tokens) exceeds the available context size ({window} tokens), try increasing it"
    body = {
        "error": {
            "code": 400,
            "message": message,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": window,
        }
    }
    return HttpError(400, body)


def local_agent(sim: sb.TargetWidget, server: FakeProvider, **kwargs: Any) -> sb.Agent:  # noqa: F811
    kwargs.setdefault("backoff", (0.01,))
    return sb.Agent(sim, "local", base_url=server.url + "/v1", **kwargs)


def user_prompts(server: FakeProvider, index: int) -> list[str]:
    body = server.model_requests[index].body
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "user"]


def request_chars(server: FakeProvider, index: int) -> int:
    """What request ``index`` sent, in characters: its messages and its tools, as the server got them."""
    body = server.model_requests[index].body
    return len(json.dumps(body["messages"])) + len(json.dumps(body.get("tools", [])))


# -- the facts each kind of server gives --------------------------------------------------------


def test_llama_cpp_says_its_context_and_tool_template(fake: Any) -> None:
    server = fake("openai", models=("smollm2",), routes={"/props": LLAMA_PROPS})
    facts = read_facts(server.url + "/v1", "smollm2")
    assert facts == ServerFacts("llama.cpp", 3072, True, "/props n_ctx")
    assert all(r.method == "GET" for r in server.requests)  # nothing posted to a server that is not Ollama


def test_ollama_says_num_ctx_or_its_loaded_context_and_tools(fake: Any) -> None:
    show = {
        "capabilities": ["completion", "tools"],
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
        "parameters": "temperature 0.7\nnum_ctx 8192",
    }
    routes = {"/api/version": {"version": "0.12.6"}, "/api/show": show}
    server = fake("openai", models=("qwen2.5:7b",), routes=routes)
    assert read_facts(server.url + "/v1", "qwen2.5:7b") == ServerFacts("Ollama", 8192, True, "/api/show num_ctx")
    show_plain = {"capabilities": ["completion"], "model_info": {"llama.context_length": 131072}}
    running = {"models": [{"name": "llama3.2:1b", "model": "llama3.2:1b", "context_length": 16384}]}
    routes = {"/api/version": {"version": "0.12.6"}, "/api/show": show_plain, "/api/ps": running}
    loaded = fake("openai", models=("llama3.2:1b",), routes=routes)
    facts = read_facts(loaded.url + "/v1", "llama3.2:1b")
    assert facts == ServerFacts("Ollama", 16384, False, "/api/ps context_length")
    unloaded = fake("openai", models=("x",), routes={"/api/version": {"version": "0.5"}, "/api/show": show_plain})
    assert read_facts(unloaded.url + "/v1", "x").context == OLLAMA_DEFAULT_CTX


def test_lm_studio_and_vllm_say_their_context(fake: Any) -> None:
    entry = {"id": "qwen2.5-7b", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 4096}
    studio = fake(
        "openai", models=("qwen2.5-7b",), routes={"/api/v0/models/qwen2.5-7b": entry | {"capabilities": ["tool_use"]}}
    )
    assert read_facts(studio.url + "/v1", "qwen2.5-7b") == ServerFacts(
        "LM Studio", 4096, True, "/api/v0 loaded_context_length"
    )
    listing = {"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 16384}]}
    vllm = fake("openai", routes={"/v1/models": listing})
    assert read_facts(vllm.url + "/v1", "Qwen/Qwen2.5-7B") == ServerFacts(
        "vLLM", 16384, None, "/v1/models max_model_len"
    )


def test_a_server_that_says_nothing_leaves_the_facts_unknown(fake: Any) -> None:
    plain = fake("openai")
    assert read_facts(plain.url + "/v1", "gpt-test") == ServerFacts()
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    port = silent.getsockname()[1]
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True).start()
    started = time.monotonic()
    try:
        assert read_facts(f"http://127.0.0.1:{port}/v1", "m", timeout=0.3) == ServerFacts()
        took = time.monotonic() - started
    finally:
        silent.close()
    assert took < 3  # one short read, not one per kind of server


# -- the agent uses them --------------------------------------------------------------------


def test_the_agent_takes_its_window_from_the_server(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai", models=("smollm2",), routes={"/props": LLAMA_PROPS})
    agent = local_agent(sim, server)
    assert agent._runtime.state.window == 3072
    assert agent.model == "local:smollm2"
    assert local_agent(sim, server, context_window=2000)._runtime.state.window == 2000  # the user's word wins


def test_model_local_lists_the_server_s_models_once_at_setup(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai", models=("smollm2",), routes={"/props": LLAMA_PROPS})
    agent = local_agent(sim, server)
    assert agent.model == "local:smollm2" and agent._runtime.state.window == 3072
    paths = [r.path for r in server.requests]
    assert paths.count("/v1/models") == 1, paths  # found the server and its facts from one listing


def test_a_model_without_tool_calls_is_named_at_setup(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    props = LLAMA_PROPS | {"chat_template_caps": {"supports_tools": False}}
    server = fake("openai", models=("tiny",), routes={"/props": props})
    with pytest.warns(UserWarning, match=r"'local:tiny'.*supports_tools: false.*--jinja"):
        local_agent(sim, server)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        local_agent(sim, fake("openai", models=("smollm2",), routes={"/props": LLAMA_PROPS}))


def test_a_base_url_model_is_labelled_by_its_server(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai")
    agent = sb.Agent(sim, "my-model", base_url=server.url + "/v1")
    assert agent.model == "local:my-model"
    assert sb.Agent(sim, "openai:gpt-test", base_url=server.url + "/v1", api_key="k").model == "openai:gpt-test"


# -- compaction counts the whole request ------------------------------------------------------


def test_compaction_counts_the_instructions_and_the_tools(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    """The instructions and tool schemas are most of a small model's prompt: with them counted, no request
    passes the window, and the history is compacted before one would."""
    server = fake(
        "openai", models=("smollm2",), routes={"/props": LLAMA_PROPS | {"default_generation_settings": {"n_ctx": 2000}}}
    )
    server.script(repeat=say("Noted; nothing to change. " + "More words about the bouncing ball. " * 12))
    agent = local_agent(sim, server)
    for turn in range(8):
        result, _ = ask(agent, f"tell me about the ball, question {turn}")
        assert result.ok, result.stopped
    sizes = [request_chars(server, i) for i in range(len(server.model_requests))]
    assert sizes[0] / 4 > 0.5 * 2000  # the first prompt alone: instructions and tools fill half the window
    assert max(sizes) / 4 < 2000  # counted whole, no request passed the window
    assert agent._runtime.state.compactions >= 1
    assert any("[Summary of the earlier conversation" in p for p in user_prompts(server, -1))


# -- an overflow recovers ---------------------------------------------------------------------


def test_an_overflow_is_compacted_and_tried_once_more(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake(
        "openai",
        models=("smollm2",),
        routes={"/props": LLAMA_PROPS | {"default_generation_settings": {"n_ctx": 200_000}}},
    )
    server.script(say("First."), say("Second."), llama_overflow(), call("set_parameters", SPEED_12), say("Done."))
    agent = local_agent(sim, server)
    for text in ("what is the speed?", "what is the colour?"):
        assert ask(agent, text)[0].ok
    result, _ = ask(agent, "set the speed to 12 m/s")
    assert result.ok and sim.values["settings.speed"] == 12
    assert agent._runtime.state.window == 3072  # learned from the error
    failed, retried = user_prompts(server, 2), user_prompts(server, 3)
    assert failed[-1] == retried[-1] == "set the speed to 12 m/s"
    assert "what is the speed?" in failed and "what is the speed?" not in retried
    assert retried[0].startswith("[Summary of the earlier conversation")


def test_an_overflow_that_persists_drops_the_failed_turn_and_the_conversation_goes_on(
    fake: Any,
    sim: sb.TargetWidget,  # noqa: F811
) -> None:
    server = fake(
        "openai",
        models=("smollm2",),
        routes={"/props": LLAMA_PROPS | {"default_generation_settings": {"n_ctx": 200_000}}},
    )
    server.script(say("First."), llama_overflow(), llama_overflow(), say("Hello again."))
    agent = local_agent(sim, server)
    assert ask(agent, "hello")[0].ok
    result, _ = ask(agent, "paste of a very long question")
    assert result.stopped is not None and result.stopped.startswith("context overflow")
    assert "larger context" in result.text
    assert len(server.model_requests) == 3  # tried once more compacted, then stopped: no loop
    prompts = [
        str(p.content)
        for m in agent.history
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    ]
    assert "paste of a very long question" not in " ".join(prompts)  # the failed turn does not stay
    after, _ = ask(agent, "and now?")
    assert after.ok and after.text == "Hello again."
    assert "paste of a very long question" not in " ".join(user_prompts(server, -1))


def test_a_turn_that_alone_does_not_fit_stops_at_once_saying_why(fake: Any, sim: sb.TargetWidget) -> None:  # noqa: F811
    server = fake("openai", models=("smollm2",), routes={"/props": LLAMA_PROPS})
    server.script(llama_overflow(5000, 3072))
    result, _ = ask(local_agent(sim, server), "hello")
    assert len(server.model_requests) == 1  # nothing to fold: no retry that would fail the same way
    assert result.stopped is not None and "3072 tokens" in result.stopped and "instructions and tools" in result.stopped


@pytest.mark.parametrize(
    ("body", "window", "prompt"),
    [
        (llama_overflow(3200, 3072).body, 3072, 3200),
        (
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, you requested 9000 "
                    "tokens (8000 in the messages, 1000 in the completion).",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            8192,
            9000,
        ),
        (
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
            200000,
            210000,
        ),
        (
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                    "status": "INVALID_ARGUMENT",
                }
            },
            1048576,
            1200000,
        ),
    ],
    ids=["llama.cpp", "openai-vllm", "anthropic", "gemini"],
)
def test_each_provider_s_overflow_is_recognised(body: Any, window: int, prompt: int) -> None:
    found = overflow_of(ModelHTTPError(400, "m", body))
    assert found is not None and (found.window, found.prompt) == (window, prompt)


def test_other_errors_are_not_overflows() -> None:
    assert overflow_of(ModelHTTPError(400, "m", {"error": {"message": "invalid tool schema"}})) is None
    assert overflow_of(ModelHTTPError(429, "m", {"error": {"message": "context size quota"}})) is None
