"""Who runs the cell now: a person's notebook, or a runner whose outputs are only read.

A runner (``jupyter nbconvert --execute``, ``jupyter execute``, papermill, nbval: nbclient and its
kin) sends each cell with ``allow_stdin`` false, as it cannot answer ``input()``; JupyterLab,
Notebook 7 and VS Code send it true (read in JupyterLab 4's ``requestExecute`` and in the VS Code
Jupyter extension's ``src/kernels/execution/cellExecution.ts``). Voila sends it false. A
runner renders no widget: what it keeps of a widget's output is the rest of the output's bundle.
"""

from __future__ import annotations

from typing import Any


def cell_from_a_runner() -> bool:
    """Whether the cell running now was sent by a client that takes no input (a runner); False
    outside a Jupyter kernel, and where the kernel cannot say."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel: Any = getattr(get_ipython(), "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)  # ipykernel 6 and later
    if not callable(get_parent):  # ipykernel 5 keeps the running cell's flag itself
        allowed = getattr(kernel, "_allow_stdin", None)
        return allowed is False
    try:
        request = get_parent("shell")
    except Exception:  # another kernel: it cannot say
        return False
    if not isinstance(request, dict) or (request.get("header") or {}).get("msg_type") != "execute_request":
        return False
    content = request.get("content") or {}
    return not content.get("allow_stdin", False)  # missing: false, as ipykernel reads it
