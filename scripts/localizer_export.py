"""The localiser as it is deployed: :class:`ExportNet` (the net with its peak test inside the
graph), its export to ONNX (:func:`export_onnx`) and the precision/recall/F1 of whole photos read
through it (:func:`evaluate`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from scripts.localizer_augment import SIZE
from scripts.localizer_net import LocNet
from scripts.photos import PhotoSample
from vision.detect import decode, quad_iou_boxes, suppress_overlaps


class ExportNet(nn.Module):
    """Inference wrapper: sigmoid + 3x3 max-pool peak test inside the graph."""

    def __init__(self, net: LocNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logit, reg = self.net(x)
        heat = torch.sigmoid(logit)
        peak = F.max_pool2d(heat, 3, 1, 1)
        return heat * (heat >= peak).float(), reg


def evaluate(net: LocNet, photos: list[PhotoSample], iou_thr: float = 0.5) -> dict[str, float]:
    """Class-agnostic P/R/F1 at IoU >= 0.5 on whole photos resized to SIZE."""
    net.eval()
    export = ExportNet(net).eval()
    device = next(net.parameters()).device
    tp = fp = fn = 0
    with torch.no_grad():
        for s in photos:
            img = cv2.imread(str(s.image_path))
            h, w = img.shape[:2]
            small = cv2.resize(img, (SIZE, SIZE), interpolation=cv2.INTER_AREA)
            x = torch.from_numpy(small.transpose(2, 0, 1)[None].astype(np.float32)).to(device)
            peaks, reg = export(x)
            quads, score = decode(peaks[0].cpu().numpy(), reg[0].cpu().numpy(), 0.3)
            keep = suppress_overlaps(quads, score)
            quads = quads[keep] * np.array([w / SIZE, h / SIZE], np.float32)
            boxes = np.concatenate([quads.min(axis=1), quads.max(axis=1)], axis=1)
            t, p_, n_ = match_counts(boxes, s.boxes, iou_thr)
            tp, fp, fn = tp + t, fp + p_, fn + n_
    net.train()
    p = tp / max(tp + fp, 1)
    r = tp / max(tp + fn, 1)
    return {"precision": p, "recall": r, "f1": 2 * p * r / max(p + r, 1e-9)}


def match_counts(pred: np.ndarray, truth: np.ndarray, iou_thr: float) -> tuple[int, int, int]:
    if len(pred) == 0 or len(truth) == 0:
        return 0, len(pred), len(truth)
    iou = quad_iou_boxes(pred.astype(np.float32), truth.astype(np.float32))
    tp = 0
    used = np.zeros(len(truth), bool)
    for i in np.argsort(-iou.max(axis=1)):
        j = int(np.argmax(np.where(used, -1, iou[i])))
        if iou[i, j] >= iou_thr and not used[j]:
            used[j] = True
            tp += 1
    return tp, len(pred) - tp, len(truth) - tp


def export_onnx(net: LocNet, path: Path) -> None:
    net = net.cpu().eval()  # exported from the CPU, wherever it trained
    model = ExportNet(net).eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (torch.zeros(1, 3, SIZE, SIZE),),
        str(path),
        input_names=["image"],
        output_names=["peaks", "reg"],
        dynamic_axes={
            "image": {0: "n", 2: "h", 3: "w"},
            "peaks": {0: "n", 2: "gh", 3: "gw"},
            "reg": {0: "n", 2: "gh", 3: "gw"},
        },
        opset_version=17,
        dynamo=False,
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_suffix(path.suffix + ".sha256").write_text(f"{digest}  {path.name}\n")
    print(f"exported {path} sha256 {digest}")
