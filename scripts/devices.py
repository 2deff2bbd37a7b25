"""Where a training script runs: ``--device`` of ``scripts/train_localizer.py`` and
``scripts/train_classifier.py``.  Torch is imported by the caller (the training scripts); nothing
under ``vision/`` or ``companion/`` imports this module."""

from __future__ import annotations

from typing import Any

DEVICE_HELP = "cpu, cuda, cuda:N, or auto (the default: a GPU when torch sees one, else the CPU)"


def train_device(name: str) -> Any:
    """The ``torch.device`` that ``--device NAME`` names; ``auto`` is the GPU when torch sees one.
    Asking for a GPU that torch does not see is an error that says so."""
    import torch

    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise SystemExit(f"--device {name}: {exc}") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise SystemExit(f"--device {name}: torch {torch.__version__} sees no GPU here")
        if (device.index or 0) >= count:
            raise SystemExit(f"--device {name}: torch sees {count} GPU(s), cuda:0 to cuda:{count - 1}")
    return device
