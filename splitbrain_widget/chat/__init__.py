"""The chat panel's controller: messages from the panel in, the agent's events and approvals out.

Layer 6: imports everything below it (protocol, manifest, core, hosts, features, the agent), never a
face; the widget only in annotations. ``tests/test_layers.py`` checks it.
"""
