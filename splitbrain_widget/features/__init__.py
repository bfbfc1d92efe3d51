"""What is built on the public calls of a widget: observables (where a value sits in a state), goals
(``seek``), recordings (``record``) and sweeps (their page pool and Dask plugin).

Layer 4: imports the protocol, the manifest, the core and the hosts (their errors and the page's
clock), never the agent, the chat or a face (a widget is reached through the calls it is given, a
sweep's pages through the factory ``sweep.py`` passes in). ``tests/test_layers.py`` checks it.
"""
