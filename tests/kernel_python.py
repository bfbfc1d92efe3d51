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
