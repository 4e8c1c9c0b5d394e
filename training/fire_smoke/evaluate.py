"""Validation metrics, computed the way scripts/eval-fire.js computes them on the service side:
YOLOX rows decoded (PROVENANCE.md 1.1), class-aware greedy NMS at IoU 0.45, box AP50 with greedy
matching by descending score and VOC all-points interpolation, image-level precision/recall."""
from __future__ import annotations

import numpy as np

from yolox_nano import STRIDES

NMS_IOU = 0.45


def grid_tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    g, s = [], []
    for st in STRIDES:
        n = size // st
        yv, xv = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        g.append(np.stack((xv, yv), -1).reshape(-1, 2))
        s.append(np.full(n * n, st))
    return np.concatenate(g).astype(np.float32), np.concatenate(s).astype(np.float32)


def iou_xyxy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a [4], b [M, 4] -> [M]."""
    iw = np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0])
    ih = np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1])
    inter = np.where((iw > 0) & (ih > 0), iw * ih, 0.0)
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter + 1e-12)


def postprocess(out: np.ndarray, size: int, score_thr: float = 0.01) -> np.ndarray:
    """One image's export-form rows [N, 5 + nc] -> detections [K, 6] = x1, y1, x2, y2, score, class
    in letterboxed pixels, after class-aware NMS."""
    grids, strides = grid_tables(size)
    cls = out[:, 5:].argmax(1)
    score = out[:, 4] * out[np.arange(len(out)), 5 + cls]
    keep = score >= score_thr
    o, cls, score, grids, strides = out[keep], cls[keep], score[keep], grids[keep], strides[keep]
    cx, cy = (o[:, 0] + grids[:, 0]) * strides, (o[:, 1] + grids[:, 1]) * strides
    w, h = np.exp(o[:, 2]) * strides, np.exp(o[:, 3]) * strides
    boxes = np.stack((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 1)
    order = np.argsort(-score, kind="stable")
    kept: list[int] = []
    sup = np.zeros(len(order), bool)
    for ii, i in enumerate(order):
        if sup[ii]:
            continue
        kept.append(i)
        rest = order[ii + 1 :]
        same = (cls[rest] == cls[i]) & ~sup[ii + 1 :]
        if same.any():
            ious = iou_xyxy(boxes[i], boxes[rest])
            sup[ii + 1 :] |= same & (ious > NMS_IOU)
    k = np.array(kept, dtype=np.int64)
    return np.concatenate((boxes[k], score[k, None], cls[k, None].astype(np.float32)), 1) if len(k) else np.zeros((0, 6), np.float32)


def ap_all_points(scored: list[tuple[float, bool]], n_gt: int) -> float:
    if n_gt == 0:
        return float("nan")
    scored = sorted(scored, key=lambda x: -x[0])
    tp = np.cumsum([1 if t else 0 for _, t in scored]) if scored else np.zeros(0)
    fp = np.cumsum([0 if t else 1 for _, t in scored]) if scored else np.zeros(0)
    rec = np.concatenate(([0.0], tp / n_gt))
    prec = np.concatenate(([1.0], tp / np.maximum(tp + fp, 1)))
    for i in range(len(prec) - 2, -1, -1):
        prec[i] = max(prec[i], prec[i + 1])
    return float(np.sum((rec[1:] - rec[:-1]) * prec[1:]))


def match(dets: np.ndarray, gts: np.ndarray) -> list[tuple[float, bool]]:
    """Greedy by descending score, IoU >= 0.5, each gt matched once."""
    used = np.zeros(len(gts), bool)
    res = []
    for d in dets[np.argsort(-dets[:, 4], kind="stable")]:
        ok = False
        if len(gts):
            ious = iou_xyxy(d[:4], gts)
            ious[used] = -1
            j = int(ious.argmax())
            if ious[j] >= 0.5:
                used[j] = True
                ok = True
        res.append((float(d[4]), ok))
    return res


def evaluate(per_image: list[tuple[np.ndarray, np.ndarray]], nc: int, lower_bound: float = 0.3) -> dict:
    """per_image: (detections [K, 6], gt [G, 5] x1 y1 x2 y2 class) in the same pixel frame."""
    res: dict = {}
    for c in range(nc):
        scored: list[tuple[float, bool]] = []
        n_gt = 0
        tp = fp = fn = 0
        for dets, gts in per_image:
            d, g = dets[dets[:, 5] == c], gts[gts[:, 4] == c]
            n_gt += len(g)
            scored += match(d, g[:, :4])
            pred = bool((d[:, 4] >= lower_bound).any())
            if pred and len(g):
                tp += 1
            elif pred:
                fp += 1
            elif len(g):
                fn += 1
        res[c] = {
            "ap50": ap_all_points(scored, n_gt),
            "gt": n_gt,
            "img_precision": tp / (tp + fp) if tp + fp else 1.0,
            "img_recall": tp / (tp + fn) if tp + fn else 1.0,
        }
    return res
