"""``python -m splitbrain_widget standalone <target> ...`` (see :func:`manifest.registry.main`) and
``python -m splitbrain_widget mcp [TARGET...]`` (see :mod:`splitbrain_widget.mcp._cli`) and
``python -m splitbrain_widget schema`` (the manifest's JSON Schema, docs/manifest.schema.json) and
``python -m splitbrain_widget doctor [--json] [--no-smoke]`` (what this machine has, see :mod:`.doctor`) and
``python -m splitbrain_widget export NOTEBOOK [-o OUT] [--no-controls]`` (a notebook as HTML with live
simulations, see :mod:`.exporter`) and ``python -m splitbrain_widget lesson-report FOLDER [-o OUT]``
(the teacher's page of a folder of lesson logs, see :mod:`.lesson_report`) and
``python -m splitbrain_widget lite build [NOTEBOOKS...] -o site/`` (a JupyterLite course site, see :mod:`.lite`)."""

import sys

if sys.argv[1:2] == ["mcp"]:
    from .mcp import cli_main

    raise SystemExit(cli_main(sys.argv[2:]))

if sys.argv[1:2] == ["doctor"]:
    from .doctor import main as doctor_main

    raise SystemExit(doctor_main(sys.argv[2:]))

if sys.argv[1:2] == ["export"]:
    try:
        from .exporter import main as export_main
    except ImportError as exc:
        raise SystemExit(f"export needs nbconvert ({exc}): pip install nbconvert") from None

    raise SystemExit(export_main(sys.argv[2:]))

if sys.argv[1:2] == ["lesson-report"]:
    from .lesson_report import main as report_main

    raise SystemExit(report_main(sys.argv[2:]))

if sys.argv[1:2] == ["lite"]:
    from .lite import main as lite_main

    raise SystemExit(lite_main(sys.argv[2:]))

if sys.argv[1:] == ["schema"]:
    from .manifest._schema import schema_text

    sys.stdout.write(schema_text())
    raise SystemExit(0)

from .manifest.registry import main

raise SystemExit(main())
