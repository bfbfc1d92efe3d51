"""The offline planner: plain-language requests to tool calls, driven by the manifest alone.

Part of the agent (layer 4): imports the protocol, the manifest, the core and the features.
"""
