"""Reading with an enrolled tile set: its prototypes embedded for a classifier, weighed, matched.

:class:`TileSetPrototypes` fuses the base classifier's probabilities with the nearest-prototype
probabilities (cosine similarity on the embeddings, whitened by how the set's jittered copies
spread) and keeps the reading to the set's own codes; under an American set, Chinese
flower/season readings become ``F``.  :func:`load_prototypes` loads a set
(:mod:`vision.tileset`) for a given classifier, weighed by how well that classifier reads it
already.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import numpy.typing as npt

from companion.rules.tiles import BACK, CHINESE_FLOWERS, FLOWER, SEASONS
from vision.classify import Classified, l2_normalise, softmax
from vision.tileset import TileSet, TileSetError, load_tileset, prototypes_from, stored_crops

FloatArray = npt.NDArray[np.float32]


def for_classifier(
    tileset: TileSet, classifier: Any, classifier_sha256: str, crops: npt.NDArray[np.uint8] | None,
    small: float = 0.0, jittered: Classified | None = None,
) -> TileSet:
    """``tileset`` with prototypes in ``classifier``'s embedding space.

    Prototypes are embeddings, so they belong to the classifier that made them (its sha256 is in
    ``tileset.json``).  When the running classifier is another one (a newer model, or the table
    reader's own), the stored crops are embedded again the way enrollment embeds them; a set
    whose crops are gone cannot be, and is refused rather than read with foreign prototypes.
    ``small``: the share of the jittered copies shrunk to table size (:func:`vision.enroll.augment_crops`);
    a set embedded with another share is embedded again.  ``jittered``: those copies already read
    by ``classifier`` (:func:`read_copies`), not read again.
    """
    made_by = tileset.meta.get("classifier_sha256")
    if made_by == classifier_sha256 and float(tileset.meta.get("small", 0.0)) == small:
        return tileset
    if crops is None or len(crops) != len(tileset.codes):
        if made_by is None or made_by == classifier_sha256:
            # no record of its classifier (made in code, e.g. by a benchmark), or this classifier's
            # own prototypes, which without the crops keep their full-size copies only
            return tileset
        raise TileSetError(
            f"tile set {tileset.name!r} was enrolled with another classifier ({made_by[:12]}...) "
            "and its crops are missing, so it cannot follow the current one: enroll the set again"
        )
    from vision.enroll import AUGMENT

    res = classifier.run(crops)
    jittered = jittered if jittered is not None else read_copies(classifier, crops, small)
    copies = jittered.embeddings
    meta = dict(tileset.meta, classifier_sha256=classifier_sha256, embedded_again_from=made_by, small=small,
                copies_agreement=copies_agreement(tileset, list(classifier.classes), jittered.probs, AUGMENT))
    return TileSet(tileset.name, tileset.layout, tileset.codes,
                   prototypes_from(res.embeddings, copies, AUGMENT), meta)


SIZED_WIDTHS = (8, 10, 12)
"""Tile widths (pixels) at which the table reader's classifier gets a second prototype per code
(:func:`sized_prototypes`): a far tile 9 px wide is also matched against the enrolled tile seen 8
or 10 px wide, not only against the blend of every size.  Seventeenth session, tiles of 50
rendered tables at 1280x720 read at their true outlines, enrolled (blended alone -> with these
beside them): an American set over the held-out ``xm-dorothys`` 86.1 -> 88.2 %, over
``font-symbola`` 84.6 -> 85.1 %, over ``km-jade`` (a training style) 89.7 -> 90.0 %, and fewer
tiles misread at 0.75 or surer (54 -> 23, 39 -> 31, 9 -> 7)."""

SIZED_MAX_PX = 13.0
"""Tiles wider than this keep the blended prototypes alone.  Sized prototypes up to 30 px read
those 50 tables' tiles about as well (88.5 / 85.0 %), but at 1920x1080 they made a tile of
``xm-dorothys`` surer of a wrong code, and a false dead-hand call with it, and a false
``tile_count`` over ``font-symbola``; from 14 px up the blend already reads 97-98 % of tiles."""


def sized_prototypes(
    crops: npt.NDArray[np.uint8], classifier: Any, widths: tuple[int, ...] = SIZED_WIDTHS
) -> FloatArray:
    """``(len(widths), K, D)``: for each width, each enrolled crop's prototype as the tile looks
    that many pixels wide (the normalised mean embedding of its jittered copies shrunk to it,
    :func:`vision.enroll.augment_crops`)."""
    from vision.enroll import AUGMENT, augment_crops

    out = []
    for width in widths:
        emb = classifier.run(augment_crops(crops, AUGMENT, width=width)).embeddings
        out.append(l2_normalise(l2_normalise(emb).reshape(len(crops), AUGMENT, -1).mean(axis=1)))
    return np.stack(out).astype(np.float32)


BASE_WEIGHT = 0.3
"""The base classifier's weight in the fusion of an enrolled set's reading (the prototypes' is the
rest).  For the table reader, 0.15 was measured in the forty-third session and not kept:
``bench_table --faces american:STYLE --enroll`` (50 tables, 1280x720) read ``xm-dorothys`` 82.7 /
89.0 % of exposures / discards against 83.9 / 88.0 %, and Symbola 78.9 / 83.5 % against 80.9 /
85.7 % (docs/tilesets.md)."""

PHOTO_BASE_WEIGHT = 0.1
"""... for the photo classifier (``detect --tileset``), a set it does not already read well.
Forty-second session, whole synthetic American scenes (60, ``bench_vision --held-out``'s way)
over the styles no model trained on, enrolled from one grid photo, at base weights 0.3 / 0.2 /
0.1: ``xm-dorothys`` 0.9382 / 0.9434 / 0.948 of tiles read right (the bench's seed) and 0.9437 /
0.946 / 0.9507 (another seed), Symbola 0.9306 / 0.9352 / 0.9453.  Forty-third session: 0.05 and 0.0 gain no
more than the random draw of the enrolled copies moves these scenes, about 0.4 of a point
(docs/tilesets.md, "Tried and not kept").  The table reader keeps
:data:`BASE_WEIGHT`: its dead-hand calls were weighed at 0.3 (docs/table.md)."""

SCALE = 16.0
"""The nearest-prototype logits' scale: ``p_proto = softmax(scale * cosine similarity)``, as the
classifier's own cosine logits are scaled; the table reader's, whose dead-hand calls were weighed
with it (docs/table.md)."""

PHOTO_SCALE = 10.0
"""... for the photo classifier (``detect --tileset``): a softer nearest-prototype reading, which
the photo pipeline's choices (the scale a photo is read at, which weak boxes pass
``min_score``, which reading of a tile re-read is kept) weigh better.  Forty-fourth session,
whitened (:data:`WHITEN_SHRINK`), 60 American scenes over each style no model trained on
(``bench_vision --held-out``'s way), tiles read right at 16 -> 10: ``xm-dorothys`` 0.9579 ->
0.9618 and 0.9416 -> 0.9564 (two scene seeds), 0.9612 -> 0.9618 and 0.9470 -> 0.9598 with
another draw of the jittered copies; Symbola 0.9520 -> 0.9526, 0.9403 -> 0.9463 and 0.9441 ->
0.9513.  At 12 about the same; at 8 Symbola reads worse (0.9467, 0.9423).  Valid's real set, a
set the models know (``bench_vision``'s "a real set enrolled", five draws): 2618 / 2693 ->
2623 / 2685 of the boxed tiles read right, F1 0.9362 -> 0.9418, over the 0.9403 of the set not
enrolled."""

KNOWN_SET_AGREEMENT = 0.93
"""A set whose jittered enrolled copies the base classifier alone reads as their own codes this
often is one it already reads well (a style it trained on, or a real set like those it trained
on): its prototypes are then weighed less (:data:`KNOWN_SET_WEIGHT` instead of
:data:`BASE_WEIGHT`).  Thirteenth session, American sets enrolled as ``bench_table --enroll`` does,
as the loader measures them (the table classifier with half the copies shrunk,
:data:`vision.enroll.TABLE_SMALL`; the photo classifier with none): ``american-synth`` 0.997 / 1.0
and ``km-jade`` 0.997 / 0.997 (styles they trained on), ``font-symbola`` 0.858 / 0.824 and
``xm-dorothys`` 0.757 / 0.787 (never trained on).  Forty-second session, the photo / table /
checking classifier: ``american-synth`` 1.0 / 1.0 / 1.0, ``km-jade`` 0.997 / 0.997 / 0.993,
``fluffy-black`` 1.0 / 0.993 / 0.986, the demo's photographed set 1.0 / 0.997 / 0.990,
``font-symbola`` 0.784 / 0.878 / 0.878, ``xm-dorothys`` 0.784 / 0.912 / 0.902.

It was 0.95 until the forty-second session.  A real photographed set that no photo in training
shows (valid's ``IMG_27xx``), enrolled from one labelled tile a code of 10 of its photos and read
on the other 25 (``scripts/bench_vision.py``, "a real set enrolled"), measured 0.941-0.98 over 13
draws (nine from 10 photos, four from 5); in the two under 0.95 its prototypes, weighed 0.7, read 30-32 more of some 550 tiles
wrong than no enrollment, where weighed 0.15 they read 3-6 more right.  0.93 lies between that set
and the highest unseen artwork set (0.912), so no artwork set changes weight."""

KNOWN_SET_WEIGHT = 0.85
"""The base classifier's weight in the fusion for a set it already knows.  An American set over
``km-jade`` enrolled at 0.3 read 50 rendered tables' exposures worse than not enrolled (65.1 /
78.0 % at 1280x720 / 1920x1080 against 75.7 / 84.5 %); at 0.5 69.8 / 80.9 %, at 0.7 73.6 / 84.2 %
(one false ``tile_count``), at 0.85 75.7 / 84.8 % with no false flag.  One weight for every set
will not do: 0.7 read the never-seen ``xm-dorothys`` 64.2 / 76.8 % against 70.4 / 83.3 % at 0.3,
with a false dead-hand call (``bench_table --faces american:STYLE --enroll``, thirteenth session)."""


def copies_agreement(tileset: TileSet, classes: list[str], probs: FloatArray, n: int) -> float:
    """The share of ``n`` copies per code of ``tileset`` (crop-major; the base classifier's
    ``probs`` for them) read as their own code within the set (flowers and seasons as ``F``
    under an American set)."""
    refiner = TileSetPrototypes(tileset, list(classes))
    p = refiner.base_probs(probs)
    p[:, ~refiner.mask] = 0.0
    return float(np.mean(p.argmax(axis=1) == np.repeat(refiner.proto_class, n)))


def read_copies(classifier: Any, crops: npt.NDArray[np.uint8], small: float = 0.0) -> Classified:
    """The enrolled crops' jittered copies (:func:`vision.enroll.augment_crops`, ``small`` of them
    shrunk to table size) read by ``classifier``: the copies enrollment averages into each
    prototype, read again when a set is loaded to measure how well the base classifier alone
    reads the set (:func:`copies_agreement`) and how a tile's embedding moves (:func:`within_whitener`)."""
    from vision.enroll import AUGMENT, augment_crops

    copies: Classified = classifier.run(augment_crops(crops, AUGMENT, small=small))
    return copies


WHITEN_SHRINK = 0.3
"""How far :func:`within_whitener` pulls the copies' spread towards the identity (0: the measured
spread alone, 1: plain cosine similarity).  Forty-fourth session, 60 American scenes over each of
the two styles no model trained on, enrolled from one grid photo (``bench_vision --held-out``'s
way), tiles read right, plain cosine -> whitened at 0.3: ``xm-dorothys`` 0.9553 -> 0.9579 and
0.9430 -> 0.9416 (two scene seeds), 0.9553 -> 0.9612 and 0.9416 -> 0.9470 with another draw of
the jittered copies; Symbola 0.9362 -> 0.9520, 0.9269 -> 0.9403 and 0.9375 -> 0.9441 (its 7 Dots
read as 4 Dots 12 and 13 times -> 8 and 6).  Whitened from the crop and its 8 copies (a ``/tmp``
script), shrink 0.15 / 0.3 / 0.45 read ``xm-dorothys`` 0.9553 / 0.9592 / 0.9599 and 0.9470 / 0.9437 /
0.9437, Symbola 0.9539 / 0.9526 / 0.9493 and 0.9443 / 0.9430 / 0.9403.  The table reader
(``bench_table --faces american:STYLE --enroll``, 50 tables at 1280x720), plain -> whitened:
``xm-dorothys`` exposures 83.9 -> 85.6 %, discards 88.0 -> 89.6 %, dead hands called 17 -> 15
of 37; Symbola 80.9 -> 81.5 % and 85.7 -> 86.9 %, 12 of 37 both; no false flag.  Valid's real
set, a set the models know (``bench_vision``'s "a real set enrolled"): 2613 / 2691 -> 2618 /
2693 of the boxed tiles read right (docs/tilesets.md)."""


def within_whitener(copies: FloatArray, n: int, shrink: float = WHITEN_SHRINK) -> FloatArray:
    """``(D, D)``: the inverse square root of how an enrolled set's tiles' embeddings spread about
    their own code's mean (``copies``: ``n`` jittered copies a code, crop-major; at least 2), scaled
    to a mean variance of 1 and shrunk towards the identity by ``shrink``.

    Nearest-prototype matching in plain cosine similarity counts every direction of the embedding
    alike, those in which one tile's copies wander (a shift, a blur, the light) as much as those in
    which two codes differ.  Matched after this transform (:class:`TileSetPrototypes`), the
    directions the copies wander in count less: a set's own 7 and 4 Dots, which the classifier
    embeds close together, are told apart more often."""
    dim = copies.shape[1]
    c = l2_normalise(copies).reshape(-1, n, dim).astype(np.float64)
    dev = (c - c.mean(axis=1, keepdims=True)).reshape(-1, dim)
    scatter = dev.T @ dev / max(len(dev), 1)
    scatter /= max(float(np.trace(scatter)) / dim, 1e-12)
    scatter = (1 - shrink) * scatter + shrink * np.eye(dim)
    values, vectors = np.linalg.eigh(scatter)
    root: FloatArray = ((vectors / np.sqrt(np.maximum(values, 1e-12))) @ vectors.T).astype(np.float32)
    return root


def set_weight(agreement: float | None, unknown: float = BASE_WEIGHT) -> float:
    """The base classifier's weight in the fusion for a set read ``agreement`` of the time by the
    base alone (:func:`copies_agreement`; None when the set's crops are gone): ``unknown`` for a set
    it does not know (:data:`PHOTO_BASE_WEIGHT` for the photo classifier)."""
    return KNOWN_SET_WEIGHT if agreement is not None and agreement >= KNOWN_SET_AGREEMENT else unknown


class TileSetPrototypes:
    """Fuse base probabilities with nearest-prototype probabilities for one enrolled set.

    ``fused = softmax(w * log p_base + (1 - w) * log p_proto)`` over the set's codes (plus
    ``BK``, read by the base classifier alone when the set has no back prototype);
    ``p_proto = softmax(scale * max cosine similarity to each code's prototypes)``.

    ``sized``: :func:`sized_prototypes` and their widths.  A tile whose width in pixels is given
    (``tile_px``) and is at most :data:`SIZED_MAX_PX` is also compared with its code's prototype at
    the nearest of those widths, and the better of the two similarities counts.

    ``whitener``: :func:`within_whitener`; embeddings and prototypes alike are multiplied by it and
    normalised again before the cosine.
    """

    def __init__(
        self,
        tileset: TileSet,
        classes: list[str],
        weight: float = BASE_WEIGHT,
        scale: float = SCALE,
        allowed: list[str] | None = None,
        sized: tuple[tuple[int, ...], FloatArray] | None = None,
        whitener: FloatArray | None = None,
    ) -> None:
        self.tileset = tileset
        self.whitener = whitener
        self.prototypes = self.whiten(tileset.embeddings)
        self.sized = sized if sized is None else (sized[0], self.whiten(sized[1]))
        self.classes = list(classes)
        self.weight = weight
        self.agreement: float | None = None  # copies_agreement, when the loader measured it
        self.scale = scale
        allowed_set = set(allowed) if allowed is not None else set(tileset.codes) | {BACK}
        self.mask = np.array([c in allowed_set for c in self.classes])
        self.index = {c: i for i, c in enumerate(self.classes)}
        self.proto_class = np.array([self.index[c] for c in tileset.codes], np.int64)

    @property
    def known(self) -> bool:
        """Whether the base classifier is weighed as one that reads this set well already
        (:data:`KNOWN_SET_WEIGHT`, :func:`set_weight`).  Under a set it does not know, its
        confidence says little, and the photo pipeline does not let it choose which way round a
        nearly square tile is read (:func:`vision.photo_turns.turns`); nor does it trust the photo
        localiser's framing of the tiles (:func:`vision.rims.rim_framed`)."""
        return self.weight >= KNOWN_SET_WEIGHT

    def base_probs(self, probs: FloatArray) -> FloatArray:
        """Base probabilities folded onto the set: flowers/seasons -> F for an American set."""
        p = probs.copy()
        if self.tileset.american and FLOWER in self.index:
            flowers = [self.index[c] for c in CHINESE_FLOWERS + SEASONS if c in self.index]
            p[:, self.index[FLOWER]] += p[:, flowers].sum(axis=1)
            p[:, flowers] = 0
        return p

    def whiten(self, embeddings: FloatArray) -> FloatArray:
        """Embeddings (any leading shape) as matched: normalised, and through :attr:`whitener`."""
        shape = embeddings.shape
        flat = l2_normalise(np.asarray(embeddings, np.float32).reshape(-1, shape[-1]))
        if self.whitener is not None:
            flat = l2_normalise(flat @ self.whitener)
        return flat.reshape(shape)

    def proto_logits(self, embeddings: FloatArray, tile_px: FloatArray | None = None) -> FloatArray:
        emb = self.whiten(embeddings)
        sims = emb @ self.prototypes.T  # (N, K)
        if self.sized is not None and tile_px is not None and len(emb):
            widths, protos = np.asarray(self.sized[0], np.float64), self.sized[1]
            px = np.maximum(np.asarray(tile_px, np.float64).reshape(-1), 1.0)
            band = np.abs(np.log(px[:, None]) - np.log(widths[None, :])).argmin(axis=1)
            at_size = np.einsum("nd,nkd->nk", emb, protos[band])
            near = px <= SIZED_MAX_PX
            sims = np.where(near[:, None], np.maximum(sims, at_size), sims)
        out = np.full((len(embeddings), len(self.classes)), -1.0, np.float32)
        for k, cls in enumerate(self.proto_class):
            out[:, cls] = np.maximum(out[:, cls], sims[:, k])
        return self.scale * out

    def fuse(self, probs: FloatArray, embeddings: FloatArray, tile_px: FloatArray | None = None) -> FloatArray:
        base = np.log(np.clip(self.base_probs(probs), 1e-9, 1.0))
        proto = np.log(np.clip(softmax(self.proto_logits(embeddings, tile_px)), 1e-9, 1.0))
        has_proto = np.zeros(len(self.classes), bool)
        has_proto[self.proto_class] = True
        mix = np.where(has_proto, self.weight * base + (1 - self.weight) * proto, base)
        mix[:, ~self.mask] = -np.inf
        return softmax(mix.astype(np.float32))

    def apply(self, result: Classified, tile_px: FloatArray | None = None) -> Classified:
        """A classifier result re-read under this tile set (``tile_px``: each tile's width in
        pixels, for the sized prototypes)."""
        fused = self.fuse(result.probs, result.embeddings, tile_px)
        best = fused.argmax(axis=1) if len(fused) else np.zeros(0, np.int64)
        return Classified(
            codes=[self.classes[int(k)] for k in best],
            confidence=fused[np.arange(len(best)), best].astype(np.float32),
            probs=fused,
            embeddings=result.embeddings,
        )


def load_prototypes(
    name: str, classifier: Any, small: float = 0.0, unknown: float = BASE_WEIGHT, scale: float = SCALE
) -> TileSetPrototypes:
    """The enrolled tile set ``name`` (``python -m companion enroll``) as a refiner of
    ``classifier`` (a :class:`vision.classify.TileClassifier`), its prototypes embedded again from
    the stored crops when they were made by another classifier (:func:`for_classifier`;
    ``small``: the share of the jittered copies shrunk to table size, as for the table reader's
    classifier, :data:`vision.enroll.TABLE_SMALL`).  A set the classifier already reads well on
    its own (:func:`copies_agreement`) has its prototypes weighed less
    (:func:`set_weight`): enrolling a set the model knows must not read it worse.
    For the table reader's classifier (``small``), each code also gets prototypes at the widths
    that far tiles look (:func:`sized_prototypes`), made from the stored crops.
    ``unknown``: the base classifier's weight for a set it does not know (:data:`BASE_WEIGHT`, the
    table reader's; photos pass :data:`PHOTO_BASE_WEIGHT`, and :data:`PHOTO_SCALE` for ``scale``).
    Tiles are matched in the space :func:`within_whitener` makes of the copies' spread.  The
    copies are read once for all of these; a set whose crops are gone keeps its stored
    prototypes, its weight unmeasured and unwhitened."""
    from vision.enroll import AUGMENT
    from vision.runtime import sha256_of

    crops = stored_crops(name)
    stored = load_tileset(name)
    usable = crops is not None and len(crops) == len(stored.codes)
    jittered = read_copies(classifier, crops, small) if crops is not None and usable else None
    tileset = for_classifier(stored, classifier, sha256_of(classifier.path), crops, small=small, jittered=jittered)
    agreement = whitener = sized = None
    if jittered is not None:
        agreement = copies_agreement(tileset, list(classifier.classes), jittered.probs, AUGMENT)
        whitener = within_whitener(jittered.embeddings, AUGMENT)
    if small and crops is not None and usable:
        sized = (SIZED_WIDTHS, sized_prototypes(crops, classifier))
    weight = set_weight(agreement, unknown)
    refiner = TileSetPrototypes(
        tileset, classifier.classes, weight=weight, scale=scale, sized=sized, whitener=whitener
    )
    refiner.agreement = agreement
    return refiner


def recognizer_prototypes(
    name: str, classifier: Any, table_classifier: Any, check_classifier: Any | None
) -> tuple[TileSetPrototypes, TileSetPrototypes, TileSetPrototypes | None]:
    """The enrolled set ``name`` for each of a recogniser's classifiers (:class:`vision.pipeline.TileRecognizer`):
    ``(photo, table, check)``.  The photo classifier's weighs a set it does not know as photos
    do (:data:`PHOTO_BASE_WEIGHT`, :data:`PHOTO_SCALE`); the table classifiers' carry copies
    shrunk to table size (:data:`vision.enroll.TABLE_SMALL`), and where the table reader runs the
    photo classifier itself, its prototypes are the photo ones weighed as a table reader's.
    ``check``: None without a second table classifier."""
    from vision.enroll import TABLE_SMALL

    photo = load_prototypes(name, classifier, unknown=PHOTO_BASE_WEIGHT, scale=PHOTO_SCALE)
    if table_classifier is classifier:  # the same prototypes, weighed as a table reader's
        table = copy.copy(photo)
        table.weight = set_weight(photo.agreement, BASE_WEIGHT)
        table.scale = SCALE
    else:
        table = load_prototypes(name, table_classifier, small=TABLE_SMALL)
    check = load_prototypes(name, check_classifier, small=TABLE_SMALL) if check_classifier is not None else None
    return photo, table, check
