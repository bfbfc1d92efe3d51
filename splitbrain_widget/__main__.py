"""``python -m splitbrain_widget standalone <target> ...`` (see :func:`manifest.registry.main`) and
``python -m splitbrain_widget mcp [TARGET...]`` (see :mod:`splitbrain_widget.mcp._cli`)."""

import sys

if sys.argv[1:2] == ["mcp"]:
    from .mcp import cli_main

    raise SystemExit(cli_main(sys.argv[2:]))

from .manifest.registry import main

raise SystemExit(main())
