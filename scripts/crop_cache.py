"""Where the cached training crops live and what names them: :func:`cache_path` (under
``COMPANION_CACHE``), the models folder the localised crops are cut with (:data:`TRAIN_MODELS_ENV`,
:func:`models_dir`) and the digest of how the photo pipeline localises (:func:`pipeline_digest`),
which keys every cache of crops the pipeline cuts (:mod:`scripts.localised_crops`).  Torch-free.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_path(name: str) -> Path:
    root = Path(os.environ.get("COMPANION_CACHE", Path.home() / ".cache" / "siamese-companion"))
    return root / "crops" / name


TRAIN_MODELS_ENV = "COMPANION_TRAIN_MODELS"
"""The models folder the localised crops are cut with, when set (``scripts/train_all.py`` sets it
to the chain's own folder, so that a run cuts its crops with the files the runs before it made,
as the chain's runs did); else the repository's ``models/``."""


def models_dir() -> Path:
    """The models folder the localised crops are cut with (:data:`TRAIN_MODELS_ENV`)."""
    from vision import pipeline

    env = os.environ.get(TRAIN_MODELS_ENV)
    return Path(env) if env else pipeline.REPO / "models"


def pipeline_digest() -> str:
    """12 hex digits naming how the photo pipeline localises: the photo localiser file's sha256, the
    settings that move its quads (scales, unsqueezing, angle refinement, doubtful turns, second
    boxes, grown backs, backs found as plain patches, small quads grown to their rims, backs of the
    table's colour, tiles boxed in halves) and the classifier's sha256 (it chooses how far a squeezed photo is
    unsqueezed, and which doubtful turns are kept)."""
    import hashlib

    from vision import backs, detect, mend, photo_turns, pipeline, rims, scales

    h = hashlib.sha256((models_dir() / "localizer.onnx").read_bytes())
    h.update(repr((scales.PHOTO_SCALES, scales.READS_WELL, pipeline.MIN_SCORE)).encode())
    h.update(repr((scales.SMALL_TILE_PX, scales.SMALL_TILE_SCALES)).encode())  # thirty-third session
    # the seventh session's unsqueezing and angle refinement change the quads too
    h.update(repr((scales.SQUEEZED_ASPECT, scales.UNSQUEEZE_ASPECTS, detect.ANGLE_COHERENCE,
                   detect.ANGLE_REACH)).encode())
    h.update(repr(detect.COVERED_SHARE).encode())  # the ninth session's second-box drop
    # the nineteenth session's doubtful turns, the thirty-fourth's tie, grown backs and table gaps
    h.update(repr((photo_turns.WEAK_COHERENCE, photo_turns.DOUBT_TURN, photo_turns.TURN_TIE, mend.SMALL_BACK_AREA,
                   mend.BACK_NEIGHBOURS, backs.GAP_SHARE, backs.GAP_COLOUR,
                   backs.GAP_SAMPLE)).encode())
    # the thirty-fifth session's backs found as plain patches
    h.update(repr((backs.PLAIN_BACKS, backs.PLAIN_BACK_SURE, backs.PLAIN_PATCH_PX, backs.PLAIN_PATCH_FILL, backs.PLAIN_PATCH_CORNERS,
                   backs.PLAIN_PATCH_AREA, backs.PLAIN_PATCH_ASPECT, backs.PLAIN_PATCH_EDGES)).encode())
    # the thirty-sixth session's small quads grown to their rims
    h.update(repr((mend.SMALL_QUAD_AREA, mend.RIM_GAIN, mend.RIM_OVERLAP, rims.RIM_SAMPLES,
                   rims.RIM_STEP)).encode())
    # the thirty-ninth session's backs of the table's colour kept, tiles boxed in two halves read whole,
    # and coloured faces read as white dragons read again
    h.update(repr((backs.PANEL_TEXTURE, backs.PANEL_HUE, backs.PANEL_LIGHT, backs.PANEL_REACH,
                   mend.HALVES_JOINED, mend.HALF_FILL, mend.HALF_SIZE, mend.HALF_TURN,
                   mend.HALF_TIE, backs.WHITE_CHROMA, backs.PLAIN_COLOURED)).encode())
    # the forty-first session's tiles boxed across their length, turned and read whole
    h.update(repr((mend.ACROSS_TURNED, mend.ACROSS_ASPECT, mend.ACROSS_FIT, mend.ACROSS_READ,
                   mend.ACROSS_GAIN)).encode())
    # since the ninth session a squeezed photo is unsqueezed at the factor the classifier reads surest
    h.update((models_dir() / "classifier.onnx.sha256").read_bytes())
    return h.hexdigest()[:12]
