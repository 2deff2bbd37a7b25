"""How large a picture is read: the localiser's input size, and the scales a photo is read at.

- A frame is read at the size that makes its tiles about :data:`TARGET_TILE_PX` wide
  (:func:`scale_for_tile`, :func:`auto_long_side`).
- A photo is read at :data:`PHOTO_SCALES`, and larger (:data:`SMALL_TILE_SCALES`) when its tiles
  are small. The reading whose tiles score highest is kept (:func:`mean_score`), and each tile
  takes its surest reading among the scales (:func:`surest_readings`).
- A photo squeezed along one axis is read unsqueezed (:func:`squeeze_of`, :data:`UNSQUEEZE_ASPECTS`).
- A still photo of small tiles is read in windows (:mod:`vision.windows`, :data:`SMALL_STILL_TILE_PX`).

:func:`read_photo` reads a photo so; :class:`vision.pipeline.TileRecognizer` applies them
(docs/recognition.md, "Three scales, chosen by the reading", "Small tiles read larger", "Squeezed
photos").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from vision.classify import quad_aspect
from vision.detect import quad_iou_boxes, quad_params
from vision.mend import MIN_SCORE
from vision.types import Detections

Reading = tuple[Detections, npt.NDArray[np.float32]]
"""A photo's tiles read at one scale, and each one's objectness."""
ReadAt = Callable[[float | None], Reading]
"""Reads a photo at a factor of :func:`auto_long_side`'s input (None: that input)."""
ReadStill = Callable[[float], Reading | None]
"""Reads a still photo whose tiles' median short side measures this many of its pixels another
way (:func:`vision.windows.read_in_windows`); None where that finds no tile."""


def auto_long_side(shape: tuple[int, ...]) -> int:
    """The localiser's input long side for an image: half size, kept within 320..640 px.

    Tiles in a phone photo or a table frame are 25-130 px across; halving puts them at 12-65 px,
    the range the localiser is trained on.  Small images are not enlarged past 320.
    """
    long = max(shape[0], shape[1])
    return int(min(max(long // 2, min(long, 320)), 640))


TARGET_TILE_PX = 20.0
"""The tile width (short side) the localiser sees best at its input: it is trained on tiles
10-42 px across in synthetic scenes and 12-65 px in photos (``scripts/synth_scenes.py``);
on rendered table frames 20 px found as many tiles as 24 px, at 0.7 of the pixels."""
MAX_INPUT_SIDE = 1280
PHOTO_SCALES = (1.0, 1.2, 1.5)
"""Resize factors, relative to :func:`auto_long_side`, at which a small image whose size says
nothing of its tiles (a photo: no ``tile_px``) is read.  The localiser finds a photo's tiles best
at one scale, and which one depends on the photo: at a wrong one big tiles split into halves and
small ones merge or go unseen.  The photo is read whole (localised, turned, classified) at the
first; when its tiles' mean score (:func:`mean_score`) is under :data:`READS_WELL`, at the others
too, and the reading whose tiles score highest is kept (the earlier on a tie).  Twenty-seventh
session (docs/recognition.md, "Three scales, chosen by the reading"): tile F1 on
``tiles-photos-v4/valid`` 0.946 -> 0.951 at 15-17 ms a photo (21-22 before), the bench's
American scenes 0.956 -> 0.971 per tile, and on material the rule was not chosen on too (300 train
photos 0.750 -> 0.768, American scenes of two other seeds 0.944 -> 0.947 and 0.933 -> 0.964).
The fifth session's rule (0.8 then 1.2, chosen by the localiser's sure peaks alone) read valid no
better than 1.2 alone."""
READS_WELL = 0.58
"""The mean score (:func:`mean_score`) at which a photo's reading at the first of
:data:`PHOTO_SCALES` is kept without trying the others.  0.58-0.62 measure alike on valid
(0.951-0.952), 300 train photos and the American scenes (twenty-seventh session), and 0.6 was
kept until the fifty-fifth session, which took the fast end of that range: each photo read both
ways in one run (a `/tmp` script), valid's tile F1 0.9582 against 0.9579 with 79 of its 296
photos read at three scales or more against 104, median / mean ms 46.9 / 91.9 against 48.6 /
99.0; 338 train photos 0.7742 both ways (their looser labels), 133 of them at three scales against
153; the American scenes of the bench's six seeds read the same counted one to one (128 of 240
read at more scales against 129, most for their small tiles), but ``bench_vision``'s own count
moved 0.9906 -> 0.9901, and the held-out style's scenes enrolled from the grid 0.9757 -> 0.9737,
while valid's real set no train photo shows gained (2613 -> 2617 of its tiles read right).  0.55
cost the train photos 0.0013 (docs/recognition.md, "Fifty-fifth session")."""
SMALL_TILE_PX = 20.0
"""A photo whose tiles measure under this at the localiser's input at the first of
:data:`PHOTO_SCALES` (their median short side, :func:`median_tile_px`) is read at the other scales
and at :data:`SMALL_TILE_SCALES` too, however surely the first reading scores.  The mean score
sees only the tiles found: at 1.0 the localiser missed whole rows and grids of tiles 15-25 px
across that it found at 1.5 (the bench's American scenes: 134 face-up tiles over four seeds with
no box at 1.0, 1 at 1.5), while the tiles it did find scored high.  12 of valid's 296 photos
measure under 20 px.  Thirty-third session (docs/recognition.md, "Small tiles read larger")."""
SMALL_TILE_SCALES = (1.8, 2.4)
"""The scales, beside :data:`PHOTO_SCALES`, at which a photo of small tiles
(:data:`SMALL_TILE_PX`) is also read, the reading whose tiles score highest kept as ever.  1.8
suits tiles 15-25 px across at the first scale (American scenes of six seeds 0.9738 -> 0.9806 per
tile with 1.8 alone); 2.4 the smaller tiles of a photo taken from further away (valid photos laid
3x3, each shrunk to a third: tile F1 0.47 -> 0.69 with 1.8 alone, 0.79 with both)."""
STILL_LONG_SIDE = 1280
"""An image longer than this is a still photo (a phone's, of a whole table or a wide part of it),
not a 1280x720 camera frame with its 50 ms budget: one whose tiles are small at its default
640-pixel input (:data:`SMALL_STILL_TILE_PX`) is read larger too (:func:`read_photo`)."""
SMALL_STILL_TILE_PX = 24.0
"""A still photo (:data:`STILL_LONG_SIDE`) whose tiles' median short side measures under this at
its default input is read in overlapping windows, each as a photo (:mod:`vision.windows`,
forty-eighth session: the valid photos laid 3x3 0.906 -> 0.946, 4x4 0.788 -> 0.964); before, and
still where no window finds a tile, at :data:`PHOTO_SCALES` and :data:`SMALL_TILE_SCALES` of that
input too (up to 1,536 pixels long), the reading whose tiles score highest kept.  Thirty-third session
(docs/recognition.md, "Small tiles read larger"): valid photos laid 3x3 at their own size
(1920x1920) 0.847 -> 0.907 and 4x4 (2560x2560, every other picture) 0.418 -> 0.783, the
synthetic 1280x720 frames enlarged to 2560x1440 0.932 -> 0.952, at a quarter of a second or more
a picture; under 20 px, every other 3x3 and 4x4 picture read 0.913 and 0.688 (0.922 and 0.783
under 24).  Close-ups keep their reading: the valid photos enlarged 3x measure 28 px or more
there."""
PHOTO_LONG_SIDE = 320
"""The localiser's input long side for a 640x640 photo at the first of :data:`PHOTO_SCALES`."""
BIG_TILE_PX = 36.0
"""A large image (:data:`MULTI_SCALE_MAX_PIXELS`) is read once at its default input (640 pixels
long) unless its tiles' median short side there exceeds this: a close-up photo taken at a high
resolution, whose tiles the localiser splits or bounds badly at that size (the valid photos
enlarged 2x read tile F1 0.83 against 0.96).  It is then read at :data:`PHOTO_SCALES` as if it
were 640 pixels long.  A 1280x720 table frame's tiles measure 17-26 px there; valid's tiles
20-49 px (5th-95th percentile) at a 640x640 photo's 320-pixel input."""
MULTI_SCALE_MAX_PIXELS = 160_000
"""Scales are tried only while the default input has at most this many pixels (a 640x640
photo's 320x320 input has 102,400; a 1280x720 frame's 640x360, 230,400, where a second scale
measured no better and would break the 50 ms frame budget)."""
SQUEEZED_ASPECT = 3.0
"""A photo whose localised tiles are, at the median, this many times longer than wide has been
squeezed along one axis (an export that stretched a panorama to a square: tiles 9-16x longer than
wide).  Unsqueezed photos measure 1.2-2 on ``tiles-photos-v4/valid``, the squeezed ones 5.3-8
(up to 10 with the ninth session's localiser)."""
UNSQUEEZE_ASPECTS = (0.63, 0.8, 1.0, 1.25)
"""A squeezed photo is resized along its tiles' long axis by ``aspect / target`` for each target
here, localised and read again at each, and the one whose tiles the classifier reads surest is
kept.  The localiser, at a loss on such tiles, misjudges how long they are, and by how much depends
on the model: on the 33 squeezed valid photos (none in train/) one fixed target suited one
localiser and not the next (0.8 read 0.838 with the sixth session's localiser and 0.765 with the
ninth's, 1.0 read 0.751 and 0.799), where choosing among these by the reading came within 0.006 of
each model's best fixed target (0.832 and 0.795) and read the squeezed test photo right both ways
round (docs/recognition.md, "Squeezed photos")."""


def scale_for_tile(tile_px: float, shape: tuple[int, ...], target: float = TARGET_TILE_PX) -> float:
    """The localiser's resize factor that puts a tile ``tile_px`` wide at ``target`` px.

    Kept within 0.25..2 and so that the input's long side stays within :data:`MAX_INPUT_SIDE`.
    """
    if not tile_px > 0:
        raise ValueError(f"tile_px must be positive, got {tile_px!r}")
    s = min(max(target / tile_px, 0.25), 2.0)
    return float(min(s, MAX_INPUT_SIDE / max(shape[0], shape[1])))


def squeeze_of(quads: npt.NDArray[np.float32]) -> tuple[float, int]:
    """``(aspect, axis)``: the median long/short side ratio of localised quads (0 for fewer than
    three) and the image axis most of their long sides lie along (0: x, 1: y)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if len(q) < 3:
        return 0.0, 1
    a, b = q[:, 1] - q[:, 0], q[:, 2] - q[:, 1]
    long = np.where((np.linalg.norm(a, axis=1) >= np.linalg.norm(b, axis=1))[:, None], a, b)
    aspect = quad_aspect(q)
    vertical = float(np.mean(np.abs(long[:, 1]) > np.abs(long[:, 0])))
    return float(np.median(aspect)), 1 if vertical >= 0.5 else 0


def is_small(shape: tuple[int, ...]) -> bool:
    """Whether an image's default localiser input has at most :data:`MULTI_SCALE_MAX_PIXELS`: a
    photo read at :data:`PHOTO_SCALES` from the start."""
    base = auto_long_side(shape) / max(shape[:2])
    return shape[0] * shape[1] * base * base <= MULTI_SCALE_MAX_PIXELS


def mean_score(
    confidence: npt.NDArray[np.float32], objectness: npt.NDArray[np.float32], floor: float = MIN_SCORE
) -> float:
    """How well a photo reads at one scale: the mean of objectness times confidence over the tiles
    that reach ``floor`` (the tiles :meth:`vision.pipeline.TileRecognizer.detect` returns), 0 when none does.
    At the scale that suits a photo's tiles they are found and read surely; at a wrong one, halves
    of big tiles and merged or blurred small ones score low, on both counts."""
    score = np.asarray(confidence, np.float32) * np.asarray(objectness, np.float32)
    kept = score[score >= floor]
    return float(kept.mean()) if len(kept) else 0.0


SAME_TILE_IOU = 0.5
"""A tile of another scale's reading whose box overlaps a kept tile's this much is the same tile
(:func:`surest_readings`)."""


def surest_readings(kept: Detections, others: list[Detections]) -> Detections:
    """``kept`` with each tile read as the surest reading of it among ``kept`` and ``others`` (the
    same photo read at other scales): a tile is the same where their boxes overlap at
    :data:`SAME_TILE_IOU` or more.  Its place (box, quad) stays ``kept``'s; its code, confidence,
    probabilities and embedding come from the surest reading.  The other scales cut the tile
    at another size and outline, a second look, as reading a doubtful quad turned is
    (twenty-seventh session: tile F1 on valid 0.951 -> 0.953, on 300 train photos 0.768 -> 0.770,
    the American scenes unchanged; docs/recognition.md)."""
    if not len(kept) or not others:
        return kept
    codes, conf = kept.codes.astype(object), kept.confidence.copy()  # object: no code cut to the kept width
    probs = None if kept.probs is None else kept.probs.copy()
    emb = None if kept.embeddings is None else kept.embeddings.copy()
    for other in others:
        if not len(other):
            continue
        iou = quad_iou_boxes(kept.boxes.astype(np.float32), other.boxes.astype(np.float32))
        match = iou.argmax(axis=1)
        better = (iou[np.arange(len(kept)), match] >= SAME_TILE_IOU) & (other.confidence[match] > conf)
        rows, src = np.flatnonzero(better), match[better]
        codes[rows], conf[rows] = other.codes[src], other.confidence[src]
        if probs is not None and other.probs is not None:
            probs[rows] = other.probs[src]
        if emb is not None and other.embeddings is not None:
            emb[rows] = other.embeddings[src]
    return Detections(kept.boxes, kept.quads, np.array([str(c) for c in codes]), conf, emb, dict(kept.meta), probs,
                      kept.classes)


def median_tile_px(det: Detections, objectness: npt.NDArray[np.float32], floor: float = MIN_SCORE) -> float:
    """The median short side, in image pixels, of the tiles whose objectness times confidence
    reaches ``floor`` (0 when none does)."""
    keep = np.asarray(det.confidence, np.float32) * np.asarray(objectness, np.float32) >= floor
    if not keep.any():
        return 0.0
    return float(np.median(quad_params(det.quads[keep])[:, 2]))


def read_photo(read_at: ReadAt, shape: tuple[int, ...], read_still: ReadStill | None = None) -> Reading:
    """A photo of ``shape`` read at each of :data:`PHOTO_SCALES` in turn until one reads well
    (:data:`READS_WELL`), the reading whose tiles score highest kept: ``(tiles, objectness)``, every
    tile found.  ``read_at(factor)`` reads the photo at ``factor`` times :func:`auto_long_side`'s
    input (None: that input), as :meth:`vision.pipeline.TileRecognizer._read_at` does.  A large
    image is read at one scale, unless its tiles come out too big for the localiser there
    (:data:`BIG_TILE_PX`): it is then read as the same photo at 640 pixels would be; or it is a
    still photo whose tiles come out small (:data:`SMALL_STILL_TILE_PX`): it is then read by
    ``read_still(tile_px)`` (its tiles' median short side in its own pixels:
    :func:`vision.windows.read_in_windows`, as the pipeline reads it) where that finds a tile,
    else larger too."""
    if is_small(shape):
        return best_reading(read_at, shape, 1.0)
    det, obj = read_at(None)
    default = auto_long_side(shape)
    tile = median_tile_px(det, obj) * default / max(shape[:2])
    if tile > BIG_TILE_PX:
        return best_reading(read_at, shape, PHOTO_LONG_SIDE / default)
    if max(shape[:2]) > STILL_LONG_SIDE and 0 < tile < SMALL_STILL_TILE_PX:
        windowed = read_still(tile * max(shape[:2]) / default) if read_still is not None else None
        if windowed is not None:
            return windowed
        return best_reading(read_at, shape, 1.0, (det, obj), small=True)
    return det, obj


def best_reading(
    read_at: ReadAt, shape: tuple[int, ...], base: float, first: Reading | None = None, small: bool | None = None
) -> Reading:
    """The reading at :data:`PHOTO_SCALES` (times ``base``, relative to
    :func:`auto_long_side`'s input) whose tiles score highest, each of its tiles read as surely
    as any reading made found it (:func:`surest_readings`).  The first is kept alone when it
    reads well (:data:`READS_WELL`) and its tiles are not small (:data:`SMALL_TILE_PX`; or
    ``small``, when the caller has measured them); small tiles are read at
    :data:`SMALL_TILE_SCALES` too.  ``first``: the reading at the first scale, already made."""
    det, obj = first if first is not None else read_at(PHOTO_SCALES[0] * base)
    score = mean_score(det.confidence, obj)
    if small is None:
        input_scale = auto_long_side(shape) * PHOTO_SCALES[0] * base / max(shape[:2])
        small = 0 < median_tile_px(det, obj) * input_scale < SMALL_TILE_PX
    if score >= READS_WELL and not small:
        return det, obj
    readings = [(score, det, obj)]
    for f in PHOTO_SCALES[1:] + (SMALL_TILE_SCALES if small else ()):
        det, obj = read_at(f * base)
        readings.append((mean_score(det.confidence, obj), det, obj))
    best = max(readings, key=lambda r: r[0])  # the earlier on a tie
    return surest_readings(best[1], [r[1] for r in readings if r is not best]), best[2]
