"""Finding targets: the public home of :mod:`splitbrain_widget.manifest.registry` (kept where users
import it from). See that module."""

from .manifest.registry import *  # noqa: F403
from .manifest.registry import __all__ as __all__
