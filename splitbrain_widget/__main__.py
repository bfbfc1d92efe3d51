"""``python -m splitbrain_widget standalone <target> [-o file] [--dir folder]``: see :func:`registry.main`."""

from .manifest.registry import main

raise SystemExit(main())
