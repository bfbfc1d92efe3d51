"""Errors about choosing a model, importable without pydantic-ai."""

from __future__ import annotations


class ModelSetupError(ValueError):
    """A model could not be set up: an unknown spec, a missing client extra, a missing key, no local server."""
