"""The lamp's colour and dimness taken out of a picture before its tiles are read.

A table lamp's warm light (or a cool daylight bulb, or a webcam's poor white balance) tints every
tile face; the models learned faces under daylight-balanced photos and rendered tables, so a
tinted face reads worse (twenty-eighth session, docs/recognition.md "Under a lamp": every third
valid photo under a tungsten tint read tile F1 0.930 against 0.964 untinted, and rendered tables
at 1280x720 read 90.3 % of exposures against 97.1 %).  Tile faces are the brightest things on a mah jongg table and are
near white, so the colour of a picture's brightest pixels is the lamp's (the "white patch"
estimate); where it lies outside the range the faces of daylight photos show, the picture's
channels are scaled to bring it back to the daylight photos' own colour.  Where that white is
dark (a dim room the camera did not expose for), every channel is raised alike: rendered tables
at 1280x720 in a dim room read 80.6 % of exposures, 97.7 % brightened.  A picture in daylight
range and bright enough is left exactly as it is.

Beside the lamp (twenty-ninth session): a washed-out picture (glare, haze, a webcam's raised
blacks) has its grey levels stretched (:func:`levels_gains`, :func:`without_light`), and the share of
the tile faces' pixels clipped white says how over-exposed a picture is (:func:`clipped_share`),
which the table reader heeds; :func:`poorly_taken` makes such pictures for the benchmarks.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

WHITE_REFERENCE = (0.959, 1.008, 1.030)
"""The white patch's colour (B, G, R over their mean) in daylight photos of tiles: the median over
the 296 photos of ``tiles-photos-v4/valid`` (5th-95th percentile: B 0.924-0.980, G 1.001-1.016,
R 1.010-1.068), ivory faces a little warm."""

WHITE_TOLERANCE = 0.08
"""How far (natural log, on any channel) a picture's white patch may lie from
:data:`WHITE_REFERENCE` and be left alone.  The daylight photos lie within 0.04 (4 of the 296
valid photos beyond 0.08), a tungsten lamp puts blue 0.39 under.  Valid photos (every other one,
the mislabelled ones aside; twenty-eighth session), tile F1: untinted 0.971, all made white
whatever their white (no tolerance) 0.968; under a mild warm tint (blue x0.85, green x0.95) 0.947
kept, 0.968 taken out at 0.08, 0.952 at 0.10.  A set creamier than this is taken for a white set
under a warm lamp and made white: the ``km-classic`` artwork's cream faces (0.094) are, and the
table classifier, which trained on them cream, then reads their enrolled copies as laid out
0.949 of the time against 0.970."""

MAX_GAIN = 2.5
"""The largest factor a channel is scaled by (and the smallest, inverted): a picture whose white
patch is further out than that is a coloured scene, not a tint."""

DIM_WHITE = 110.0
"""A picture whose white patch (the mean of its B, G and R) is darker than this is dim: a room
too dark for the camera's exposure.  The valid photos' brightest 1 % lie at 205-236 (5th-95th
percentile); rendered table frames, whose felt takes most of the picture, at 125-222."""

DIM_TARGET = 190.0
"""How bright a dim picture's white patch is made (every channel raised alike, at most
:data:`MAX_GAIN` times)."""

TOP_SHARE = 0.01
"""The white patch: this share of the picture's brightest unclipped pixels.  With 3 % (and the
picture shrunk to 160 pixels) the green felt of 3 of 50 rendered tables at 1920x1080 was taken for
the white, whose far tiles are a few pixels; with 1 % none of 24 tables of each of six face sets."""

CLIPPED = 250
"""A pixel with a channel at or above this is clipped, its colour no measure of the light."""

SAMPLE_SIDE = 320
"""The picture is shrunk to this long side (by area) to be measured, which averages the sensor's
noise: the estimate takes 0.6 ms on a 640x640 photo, 1.3 ms on a 1280x720 frame, 2 ms on 1920x1080
(taking the tint out, when there is one, 0.7, 1.6 and 5 ms)."""


def _sample(image: Image) -> Image | None:
    """``image`` shrunk by area to :data:`SAMPLE_SIDE` pixels long (itself when no longer), or None
    when it is no colour picture of 4 pixels a side or more."""
    h, w = image.shape[:2]
    if image.ndim != 3 or image.shape[2] != 3 or min(h, w) < 4:
        return None
    s = SAMPLE_SIDE / max(h, w)
    if s >= 1:
        return image
    return np.asarray(cv2.resize(image, (max(1, round(w * s)), max(1, round(h * s))),
                                 interpolation=cv2.INTER_AREA), np.uint8)


def _white(image: Image) -> npt.NDArray[np.float64] | None:
    """The colour (B, G, R, 0-255) of ``image``'s brightest unclipped pixels (:data:`TOP_SHARE`),
    or None when it has too few of them, or they are too dark, to say."""
    small = _sample(image)
    if small is None:
        return None
    b, g, r = cv2.split(np.ascontiguousarray(small))
    lit = cv2.max(cv2.max(b, g), r) < CLIPPED
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    lum = grey[lit]
    if len(lum) < 50:
        return None
    counts = np.bincount(lum, minlength=256)[::-1].cumsum()  # pixels at or above each level, from 255 down
    level = 255 - int(np.searchsorted(counts, max(1, TOP_SHARE * len(lum))))
    top = small[lit & (grey >= level)]
    colour = np.median(top.reshape(-1, 3), axis=0).astype(np.float64)
    if colour.min() < 8:  # a dark or one-colour picture: no white to go by
        return None
    return np.asarray(colour, np.float64)


def white_patch(image: Image) -> npt.NDArray[np.float64] | None:
    """The colour (B, G, R over their mean) of ``image``'s brightest unclipped pixels, or None when
    it has too few of them to say (a tiny, blank, dark or blown-out picture)."""
    colour = _white(image)
    return None if colour is None else np.asarray(colour / colour.mean(), np.float64)


def lamp_gains(image: Image) -> npt.NDArray[np.float64] | None:
    """Per-channel factors (B, G, R) that take ``image``'s lamp out, or None when there is nothing
    to take out (or nothing to measure it by).

    Its tint: where the white patch lies beyond :data:`WHITE_TOLERANCE` of daylight on some
    channel, it is brought all the way back to :data:`WHITE_REFERENCE`, not to the edge of the
    tolerance (on the valid photos under a tungsten tint the edge read tile F1 0.946, the
    reference 0.972, untinted 0.971), keeping the white patch's brightness.  Its dimness: where
    the white patch is darker than :data:`DIM_WHITE`, every channel is raised to bring it to
    :data:`DIM_TARGET`."""
    colour = _white(image)
    if colour is None:
        return None
    white = colour / colour.mean()
    gains = np.ones(3, np.float64)
    off = np.log(white / np.asarray(WHITE_REFERENCE))
    if float(np.abs(off).max()) > WHITE_TOLERANCE:
        gains = np.exp(-off)
        gains /= float(np.mean(white * gains) / np.mean(white))  # the white patch as bright as before
        if gains.max() > MAX_GAIN or gains.min() < 1.0 / MAX_GAIN:
            return None  # no white in it: a coloured scene, its brightness no measure of the light either
    level = float(colour.mean())
    if level < DIM_WHITE:
        gains = gains * min(DIM_TARGET / level, MAX_GAIN)
    if np.all(gains == 1.0):
        return None
    return gains


def with_gains(image: Image, gains: npt.NDArray[np.float64]) -> Image:
    """``image`` with each channel (B, G, R) scaled by ``gains``, clipped."""
    lut = np.clip(np.arange(256, dtype=np.float64)[:, None] * gains[None, :], 0, 255).astype(np.uint8)
    return np.asarray(cv2.LUT(np.ascontiguousarray(image), lut.reshape(256, 1, 3)), np.uint8)


def without_lamp(image: Image) -> Image:
    """``image`` with its lamp taken out (:func:`lamp_gains`), or ``image`` itself when there is
    nothing to take out."""
    gains = lamp_gains(image)
    return image if gains is None else with_gains(image, gains)


MIN_SPREAD = 150.0
"""A photo whose grey levels span less than this between its 1st and 99th percentiles is washed
out (glare, haze, a webcam's raised blacks) and is stretched (:func:`levels_gains`).  The valid
photos span 153-237 (median 199; none is stretched), 15 of the 1,350 train photos less; a photo
washed out as :data:`POOR_PICTURES` ``washed`` does (x0.5 + 100) spans about 100."""

RAISED_BLACK = 100.0
"""... and whose 1st percentile lies at this level or above: its blacks are raised.  The valid
photos' 1st percentile lies at 64 or under (median 15), the train photos' at 111 or under (99th
percentile 51); rendered scenes, whose felt and soft shadows hold few dark pixels, lie higher
(median 62, 99th percentile 99; 2 of 400 scenes of three seeds at 100 or above) and read worse
stretched (at spread alone, 4 of the vision benchmark's 40 American scenes and 2 of its 20
1280x720 frames were stretched, and read 0.9671 and 0.9097 per tile against 0.9712 and 0.9186)."""

LEVELS = (15.0, 220.0)
"""Where a washed-out photo's 1st and 99th grey percentiles are taken: the valid photos' medians."""

TABLE_LEVELS = (60.0, 220.0)
"""Where a washed-out whole-table frame's are taken (``companion.table.TableReader``): the felt
fills most of such a frame, and rendered tables in daylight put their 1st percentile at 58-68
(medians over four face sets; 90 at most, so none is stretched; washed out as
:data:`POOR_PICTURES` ``washed`` does, 106 at least).  25 tables washed out at 1280x720 /
1920x1080 (twenty-ninth session) read 89.3 / 99.4 % of exposures kept, 98.9 / 100 % stretched to
these levels (97.2 / 99.4 % to :data:`LEVELS`, 98.3 / 100 % to (60, 185) with one false flag)."""


def levels_gains(image: Image, levels: tuple[float, float] = LEVELS) -> tuple[float, float] | None:
    """``(gain, offset)`` that stretch a washed-out picture's grey levels to ``levels`` (every
    channel alike, ``v * gain + offset``), or None unless it spans under :data:`MIN_SPREAD` with
    its blacks raised (:data:`RAISED_BLACK`) (or when it is too small or too flat to say: a blank
    picture is no washed-out photo).  A photo's target is :data:`LEVELS`, a whole-table frame's
    :data:`TABLE_LEVELS`."""
    small = _sample(image)
    if small is None:
        return None
    grey = cv2.cvtColor(np.ascontiguousarray(small), cv2.COLOR_BGR2GRAY)
    cum = np.bincount(grey.ravel(), minlength=256).cumsum()  # a histogram's levels: cheaper than percentiles
    lo, hi = (float(np.searchsorted(cum, q * cum[-1])) for q in (0.01, 0.99))
    spread = hi - lo
    if spread >= MIN_SPREAD or spread < 24 or lo < RAISED_BLACK:
        return None
    gain = (levels[1] - levels[0]) / spread
    return gain, levels[0] - lo * gain


def with_levels(image: Image, gain: float, offset: float) -> Image:
    """``image`` with every channel mapped ``v * gain + offset``, clipped."""
    lut = np.clip(np.arange(256, dtype=np.float64) * gain + offset, 0, 255).astype(np.uint8)
    return np.asarray(cv2.LUT(np.ascontiguousarray(image), lut), np.uint8)


def light_corrections(
    image: Image, levels: tuple[float, float] | None = LEVELS
) -> tuple[Image, npt.NDArray[np.float64] | None, tuple[float, float] | None, Image | None]:
    """``(image corrected, lamp gains or None, (gain, offset) of the stretch or None, sample)``: its
    lamp taken out (:func:`lamp_gains`) and, where it is washed out, its grey levels stretched to
    ``levels`` (:func:`levels_gains`; None: never), both measured on one shrunk sample; the image
    is ``image`` itself when there is nothing to do, and ``sample`` is then that picture shrunk by
    area to :data:`SAMPLE_SIDE` pixels long (itself when no longer), which a later step may use
    rather than shrink it again; else None."""
    small = _sample(image)
    if small is None:
        return image, None, None, None
    gains = lamp_gains(small)
    if gains is not None:
        small, image = with_gains(small, gains), with_gains(image, gains)
    found = None if levels is None else levels_gains(small, levels)
    if found is not None:
        return with_levels(image, *found), gains, found, None
    return image, gains, None, small if gains is None else None


def without_light(image: Image, levels: tuple[float, float] = LEVELS) -> Image:
    """``image`` with its lamp taken out and, where it is washed out, its levels stretched to
    ``levels`` (:func:`light_corrections`); ``image`` itself when there is nothing to do."""
    return light_corrections(image, levels)[0]


OVEREXPOSED = 0.2
"""A picture in which this share of the tile faces' pixels is clipped white (every channel at
:data:`CLIPPED` or above) is over-exposed (:func:`clipped_share`): a lamp's glare, or a camera
exposing for the dark felt, has burnt the faces' ivory to white and their print's edges with it.
Over the valid photos' tiles the share is at most 0.005 (median 0); over rendered tables in
daylight at most 0.036 (six tables at 1280x720 and 1920x1080 of each of eight artwork styles, four
American sets and the Noto and Symbola glyphs); over-exposed as :data:`POOR_PICTURES` ``over`` does, tables at 1280x720 0.27-0.56
(median 0.42), every third valid photo 0.22-0.69 (twenty-ninth session)."""


def clipped_share(image: Image, quads: npt.ArrayLike) -> float:
    """The share of the pixels inside ``quads`` ((N, 4, 2) image pixels: the tile faces) that are
    clipped white, measured on ``image`` shrunk to at most 640 pixels long; 0 where the quads
    cover too few pixels to say."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    if image.ndim != 3 or image.shape[2] != 3 or not len(q):
        return 0.0
    s = min(1.0, 640 / max(image.shape[:2]))
    small = image if s >= 1 else cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    mask = np.zeros(small.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(p * s).astype(np.int32) for p in q], 1)
    inside = mask.astype(bool)
    if int(inside.sum()) < 50:
        return 0.0
    return float((small.min(axis=2)[inside] >= CLIPPED).mean())


LAMP_TINTS = {"warm": (0.55, 0.85, 1.0), "cool": (1.0, 0.9, 0.7), "dim": (0.45, 0.45, 0.45)}
"""Tints (factors on B, G, R) the benchmarks and tests put on a picture to stand for a lamp:
``warm`` a tungsten bulb seen by a camera that does not correct it, ``cool`` a daylight bulb or
a camera balanced for a warmer light, ``dim`` a dim room the camera does not expose for."""


def tinted(image: Image, lamp: str) -> Image:
    """``image`` as under the lamp named in :data:`LAMP_TINTS` (each channel scaled, clipped)."""
    if lamp not in LAMP_TINTS:
        raise ValueError(f"unknown lamp {lamp!r} (known: {', '.join(LAMP_TINTS)})")
    return with_gains(image, np.asarray(LAMP_TINTS[lamp], np.float64))


POOR_PICTURES = ("over", "washed", "side", "blur")
"""Poor pictures the benchmarks make of a good one (:func:`poorly_taken`), beside the lamps of
:data:`LAMP_TINTS`: ``over`` over-exposed (x1.6 + 20, clipped), ``washed`` washed out (x0.5 + 100),
``side`` lit from one side (x1.1 falling to x0.35 across), ``blur`` out of focus (Gaussian, sigma
1.5 px).  Of these only ``washed`` is undone before reading (:func:`levels_gains`); a whole-table
frame over-exposed and read weakly is not judged (``companion.table``)."""


def poorly_taken(image: Image, kind: str) -> Image:
    """``image`` as the poor picture :data:`POOR_PICTURES` names."""
    if kind not in POOR_PICTURES:
        raise ValueError(f"unknown picture {kind!r} (known: {', '.join(POOR_PICTURES)})")
    if kind == "blur":
        return np.asarray(cv2.GaussianBlur(image, (0, 0), 1.5), np.uint8)
    out = image.astype(np.float32)
    if kind == "over":
        out = out * 1.6 + 20
    elif kind == "washed":
        out = out * 0.5 + 100
    else:
        out = out * np.linspace(1.1, 0.35, image.shape[1], dtype=np.float32)[None, :, None]
    return np.clip(out, 0, 255).astype(np.uint8)
