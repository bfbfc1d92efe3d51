"""The chat panel's controller: messages from the panel in, the agent's events and approvals out.

Layer 5: imports everything below it (protocol, manifest, core, hosts, features, the agent), never the widget.
"""
