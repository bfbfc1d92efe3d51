"""The tool surface: the operation behind every tool and its two drivers, the call line, the echo of
the traits, the bridge of requests in flight, pacing, the audit (and the code it reproduces), units,
the approval policy, the kernel the package runs in, and the seam its hosts plug into.

Layer 2: imports the protocol and the manifest (``..protocol``, ``.._bounds``, ``..manifest``), never
a host, a feature, the agent, the chat or the widget. ``tests/test_layers.py`` checks it.
"""
