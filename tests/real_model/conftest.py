"""The real-model layer's servers: llama.cpp's llama-server with SmolLM2-135M, started by the tests.

``make real-model`` builds the server and unpacks the model (tests/real_model/build.sh) and passes
their paths as ``SPLITBRAIN_LLAMA_SERVER``, ``SPLITBRAIN_GGUF`` and ``SPLITBRAIN_TOOL_TEMPLATE``.
Each server listens on 127.0.0.1 on a port the test reserved, and is checked to be ours (its
``/props`` names our model file) before a test talks to it, so a model server the user runs on its
usual port is never touched. The figures of every run are printed at the end.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import splitbrain_widget as sb

ALIAS = "smollm2-135m"
START_TIMEOUT_S = 120.0
FIGURES: list[dict[str, Any]] = []


def _path(variable: str) -> Path:
    value = os.environ.get(variable)
    if not value or not Path(value).exists():
        pytest.skip(f"{variable} is not set to an existing file: run `make real-model` (it builds and sets it)")
    return Path(value)


@dataclass
class LlamaServer:
    process: subprocess.Popen[bytes]
    port: int
    context: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _props(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/props", timeout=2) as response:
            answer = json.loads(response.read())
            return answer if isinstance(answer, dict) else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def start_server(tmp: Path, context: int, template: Path | None) -> LlamaServer:
    binary, gguf = _path("SPLITBRAIN_LLAMA_SERVER"), _path("SPLITBRAIN_GGUF")
    port = _free_port()
    command = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-c", str(context)]
    command += ["-np", "1", "-t", "2", "--jinja", "-a", ALIAS]
    if template is not None:
        command += ["--chat-template-file", str(template)]
    log = tmp / f"llama-server-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(process, port, context, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:  # the condition: our server answers /props naming our model file
        props = _props(port)
        if props is not None and props.get("model_path") == str(gguf):
            return server
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"llama-server did not start on port {port}: {log.read_text()[-2000:]}")
        time.sleep(0.2)


@pytest.fixture(scope="session")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2 with its own chat template (no tool calls: the server drops tools), a 3,072-token context."""
    server = start_server(tmp_path_factory.mktemp("llama"), 3072, None)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tool_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """SmolLM2 with a ChatML template that renders tools (Qwen2.5's), an 8,192-token context."""
    server = start_server(tmp_path_factory.mktemp("llama"), 8192, _path("SPLITBRAIN_TOOL_TEMPLATE"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def page() -> Iterator[sb.HeadlessTarget]:
    sim = sb.HeadlessTarget("projectile")
    yield sim
    sim.close()


@pytest.fixture
def sim(page: sb.HeadlessTarget) -> sb.HeadlessTarget:
    page.reset()
    return page


def record(test: str, request: str, result: Any, seconds: float) -> None:
    """Keep one run's figures for the summary."""
    FIGURES.append(
        {
            "test": test,
            "request": request[:40],
            "seconds": round(seconds, 1),
            "requests": result.usage.requests,
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "tool_calls": len(result.tool_calls),
            "calls": [
                f"{c.name}{'' if c.ok else ' refused: ' + str((c.result.get('error') or {}).get('code'))}"
                for c in result.tool_calls
            ],
            "stopped": (result.stopped or "")[:60],
            "no_change": result.no_change,
        }
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("real-model figures (llama-server + SmolLM2-135M, 127.0.0.1)")
    for f in FIGURES:
        terminalreporter.write_line(
            f"{f['test']:<22} {f['seconds']:>6.1f} s  req {f['requests']:>2}  in {f['input_tokens']:>6}  "
            f"out {f['output_tokens']:>5}  calls {f['tool_calls']}  no_change={f['no_change']!s:<5}  "
            f"{f['stopped'] or 'ok'}  <- {f['request']!r}"
        )
        for made in f["calls"]:
            terminalreporter.write_line(f"{'':<24}call: {made}")
