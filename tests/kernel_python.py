"""Which Python the kernel layer starts its kernels with, and a check that it really did.

``make kernel-matrix`` reruns the kernel tests with ``SPLITBRAIN_KERNEL_PYTHON`` pointing at a small
venv per ipykernel release; without it the kernel runs on the interpreter running the tests. Every
kernel test module starts its kernels through :func:`start_frontend`, so none can silently fall
back to the default kernel.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from typing import Any

from .scripted_frontend import ScriptedFrontend

KERNEL_PYTHON: str = os.environ.get("SPLITBRAIN_KERNEL_PYTHON") or sys.executable

_PROBE = "import sys, json, ipykernel; print(json.dumps([sys.prefix, sys.version, ipykernel.__version__]))"


@functools.cache
def expected_kernel() -> tuple[str, str, str]:
    """(sys.prefix, sys.version, ipykernel version) of :data:`KERNEL_PYTHON`, asked outside any kernel."""
    out = subprocess.run([KERNEL_PYTHON, "-c", _PROBE], check=True, capture_output=True, text=True, timeout=60)
    prefix, version, ipykernel = json.loads(out.stdout)
    return str(prefix), str(version), str(ipykernel)


_SHELL_THREAD_PROBE = "import ipykernel.kernelbase as k; print(hasattr(k.Kernel, 'shell_channel_thread'))"


@functools.cache
def blocking_calls_wait() -> bool:
    """Whether a blocking call in a cell waits for the page on :data:`KERNEL_PYTHON`'s kernel: it has a
    shell-channel thread (ipykernel 7). Without one (5.x, 6.x) the call answers ``deferred`` at once and
    the page's answer lands after the cell (docs/protocol.md section 3). Asked of the kernel class, as
    the package asks the running kernel, not of the version number."""
    out = subprocess.run(
        [KERNEL_PYTHON, "-c", _SHELL_THREAD_PROBE], check=True, capture_output=True, text=True, timeout=60
    )
    return out.stdout.strip() == "True"


def needs_blocking_wait(reason: str = "") -> Any:
    """Skip a test of what a blocking wait in a cell does where such a call answers ``deferred`` instead
    (tests/test_kernel_hosts.py asserts that contract on every kernel of the matrix)."""
    import pytest

    why = "a blocking call in a cell answers `deferred` on this kernel (no shell-channel thread)"
    return pytest.mark.skipif(not blocking_calls_wait(), reason=why + (f": {reason}" if reason else ""))


def running_kernel(frontend: ScriptedFrontend) -> tuple[str, str, str]:
    """(sys.prefix, sys.version, ipykernel version) as the running kernel reports them in a cell."""
    lines = frontend.check(_PROBE).strip().splitlines()
    prefix, version, ipykernel = json.loads(lines[-1])
    return str(prefix), str(version), str(ipykernel)


def assert_kernel_python(frontend: ScriptedFrontend) -> None:
    """The kernel runs :data:`KERNEL_PYTHON`: same environment, interpreter and ipykernel release."""
    expected = expected_kernel()
    assert running_kernel(frontend) == expected, f"the kernel does not run SPLITBRAIN_KERNEL_PYTHON={KERNEL_PYTHON}"
    # make kernel-matrix names each venv after its release (.venv-ipykernel-7.0.1): it must hold that one
    named = re.search(r"ipykernel-(\d+\.\d+\.\d+)", KERNEL_PYTHON)
    if named:
        assert expected[2] == named.group(1), f"{KERNEL_PYTHON} has ipykernel {expected[2]}"


def start_frontend(**kwargs: Any) -> ScriptedFrontend:
    """A scripted frontend whose kernel runs :data:`KERNEL_PYTHON` (checked before it is handed out)."""
    frontend = ScriptedFrontend(python=KERNEL_PYTHON, **kwargs)
    try:
        assert_kernel_python(frontend)
    except BaseException:
        frontend.close()
        raise
    return frontend


_TOOLS = {"set_parameter", "set_parameters", "reset", "fetch_state", "select_target", "act", "list_targets"}


def awaiting_where_needed(code: str) -> str:
    """A cell that waits for the page on this kernel: as written where blocking calls wait, else with
    each ``sim.<tool>(...)`` outside a lambda awaited (``await sim.a<tool>(...)``), which hears the
    page on every kernel. Tests of the bridge's behaviour (not of the blocking wait) run through it."""
    if blocking_calls_wait():
        return code
    import ast

    class Awaited(ast.NodeTransformer):
        def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
            return node  # a lambda runs elsewhere (a worker thread): it keeps its blocking call

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            func = node.func
            on_sim = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "sim"
            if on_sim and isinstance(func, ast.Attribute) and func.attr in _TOOLS:
                twin = "aact" if func.attr == "act" else f"a{func.attr}"
                return ast.Await(ast.Call(ast.Attribute(func.value, twin, ast.Load()), node.args, node.keywords))
            return node

    return ast.unparse(ast.fix_missing_locations(Awaited().visit(ast.parse(code))))
