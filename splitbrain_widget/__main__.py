"""``python -m splitbrain_widget standalone <target> ...`` (see :func:`manifest.registry.main`) and
``python -m splitbrain_widget mcp [TARGET...]`` (see :mod:`splitbrain_widget.mcp._cli`) and
``python -m splitbrain_widget schema`` (the manifest's JSON Schema, docs/manifest.schema.json) and
``python -m splitbrain_widget doctor [--json] [--no-smoke]`` (what this machine has, see :mod:`.doctor`)."""

import sys

if sys.argv[1:2] == ["mcp"]:
    from .mcp import cli_main

    raise SystemExit(cli_main(sys.argv[2:]))

if sys.argv[1:2] == ["doctor"]:
    from .doctor import main as doctor_main

    raise SystemExit(doctor_main(sys.argv[2:]))

if sys.argv[1:] == ["schema"]:
    from .manifest._schema import schema_text

    sys.stdout.write(schema_text())
    raise SystemExit(0)

from .manifest.registry import main

raise SystemExit(main())
