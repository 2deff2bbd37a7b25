"""Fixtures shared by the vision tests: one recogniser over the committed models, loaded once for
the session (no test changes it)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def recognizer():  # type: ignore[no-untyped-def]
    from vision.pipeline import TileRecognizer

    return TileRecognizer(REPO / "models")
