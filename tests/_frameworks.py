"""Shared by tests that run a model on several frameworks."""

from __future__ import annotations

import pytest

import adlab


def available(backend: str) -> None:
    """Skip the test where ``backend``'s framework is not installed (CI installs them all)."""
    try:
        adlab.engine.backends.get_backend(backend)
    except Exception as exc:  # a framework not installed here
        pytest.skip(f"{backend}: {exc}")
