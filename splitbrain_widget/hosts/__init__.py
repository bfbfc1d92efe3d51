"""The homes of a target behind the seam (``core._seam``): the notebook view over the comm, the
headless engine (Chromium, the host page, the network gate) and the headless page a widget falls
back on while no view is displayed.

Layer 3: imports the protocol, the manifest and the core; never a feature, the agent, the chat or a
face. ``tests/test_layers.py`` checks it.
"""
