"""What is built on the public calls of a widget: observables (where a value sits in a state), goals
(``seek``), recordings (``record``) and sweeps (their page pool and Dask plugin).

Layer 3: imports the protocol, the manifest, the core and the hosts' errors (``hosts._headless_engine``),
never the agent, the chat or the widget (a widget is reached through the calls it is given).
"""
