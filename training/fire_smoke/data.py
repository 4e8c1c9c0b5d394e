"""COCO-format fire/smoke data with YOLOX-style augmentation: mosaic + random scale/translate,
horizontal flip, HSV jitter. Images are fed as the service feeds them (PROVENANCE.md 1.1): BGR,
raw 0-255 floats, letterboxed top-left on 114."""
from __future__ import annotations

import json
import os
import random

import cv2
import numpy as np

cv2.setNumThreads(1)

PAD = 114


def load_coco(split_dir: str) -> list[dict]:
    """[{file, boxes: float32 [n, 5] = x1, y1, x2, y2, class index (0 fire, 1 smoke)}]."""
    with open(os.path.join(split_dir, "annotations.json")) as f:
        coco = json.load(f)
    by_img: dict[int, list[list[float]]] = {im["id"]: [] for im in coco["images"]}
    for a in coco["annotations"]:
        x, y, w, h = a["bbox"]
        if w > 0 and h > 0:
            by_img[a["image_id"]].append([x, y, x + w, y + h, a["category_id"] - 1])
    out = []
    for im in sorted(coco["images"], key=lambda i: i["id"]):
        b = np.array(by_img[im["id"]], dtype=np.float32).reshape(-1, 5)
        out.append({"file": os.path.join(split_dir, "images", im["file_name"]), "boxes": b, "id": im["id"]})
    return out


def letterbox(img: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    h, w = img.shape[:2]
    r = min(size / h, size / w)
    nw, nh = min(size, max(1, round(w * r))), min(size, max(1, round(h * r)))
    canvas = np.full((size, size, 3), PAD, dtype=np.uint8)
    canvas[:nh, :nw] = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    return canvas, r


def hsv_jitter(img: np.ndarray, rng: random.Random, hgain: float = 5, sgain: float = 30, vgain: float = 30) -> None:
    dh, ds, dv = rng.uniform(-1, 1) * hgain, rng.uniform(-1, 1) * sgain, rng.uniform(-1, 1) * vgain
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + dh) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] + ds, 0, 255)
    hsv[..., 2] = np.clip(hsv[..., 2] + dv, 0, 255)
    cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR, dst=img)


class Dataset:
    def __init__(self, records: list[dict], size: int, seed: int):
        self.records = records
        self.size = size
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self.records)

    def image(self, i: int) -> np.ndarray:
        img = cv2.imread(self.records[i]["file"], cv2.IMREAD_COLOR)
        if img is None:
            raise FileNotFoundError(self.records[i]["file"])
        return img

    def _mosaic(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        s = self.size
        rng = self.rng
        canvas = np.full((2 * s, 2 * s, 3), PAD, dtype=np.uint8)
        xc, yc = int(rng.uniform(0.5 * s, 1.5 * s)), int(rng.uniform(0.5 * s, 1.5 * s))
        ids = [idx] + [rng.randrange(len(self.records)) for _ in range(3)]
        boxes = []
        for k, i in enumerate(ids):
            img = self.image(i)
            h0, w0 = img.shape[:2]
            r = s / max(h0, w0)
            img = cv2.resize(img, (max(1, round(w0 * r)), max(1, round(h0 * r))), interpolation=cv2.INTER_LINEAR)
            h, w = img.shape[:2]
            # quadrant placement: image corner meets the mosaic centre
            if k == 0:
                x1, y1 = xc - w, yc - h
            elif k == 1:
                x1, y1 = xc, yc - h
            elif k == 2:
                x1, y1 = xc - w, yc
            else:
                x1, y1 = xc, yc
            cx1, cy1, cx2, cy2 = max(x1, 0), max(y1, 0), min(x1 + w, 2 * s), min(y1 + h, 2 * s)
            canvas[cy1:cy2, cx1:cx2] = img[cy1 - y1 : cy2 - y1, cx1 - x1 : cx2 - x1]
            b = self.records[i]["boxes"].copy()
            if len(b):
                b[:, :4] = b[:, :4] * r
                b[:, [0, 2]] += x1
                b[:, [1, 3]] += y1
                b[:, [0, 2]] = b[:, [0, 2]].clip(cx1, cx2)
                b[:, [1, 3]] = b[:, [1, 3]].clip(cy1, cy2)
                boxes.append(b)
        b = np.concatenate(boxes) if boxes else np.zeros((0, 5), np.float32)
        # random scale and translation about the mosaic centre, cropped to the output size
        sc = rng.uniform(0.5, 1.5)
        tx, ty = rng.uniform(-0.1, 0.1) * s, rng.uniform(-0.1, 0.1) * s
        m = np.array([[sc, 0, s / 2 + tx - sc * xc], [0, sc, s / 2 + ty - sc * yc]], dtype=np.float32)
        out = cv2.warpAffine(canvas, m, (s, s), flags=cv2.INTER_LINEAR, borderValue=(PAD, PAD, PAD))
        if len(b):
            b[:, :4] = b[:, :4] * sc
            b[:, [0, 2]] += m[0, 2]
            b[:, [1, 3]] += m[1, 2]
            b[:, :4] = b[:, :4].clip(0, s)
        return out, b

    def _plain(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        img, r = letterbox(self.image(idx), self.size)
        b = self.records[idx]["boxes"].copy()
        b[:, :4] *= r
        return img, b

    def sample(self, idx: int, mosaic: bool) -> tuple[np.ndarray, np.ndarray]:
        img, b = self._mosaic(idx) if mosaic else self._plain(idx)
        img = np.ascontiguousarray(img)
        hsv_jitter(img, self.rng)
        if self.rng.random() < 0.5:
            img = np.ascontiguousarray(img[:, ::-1])
            if len(b):
                x1 = self.size - b[:, 2]
                b[:, 2] = self.size - b[:, 0]
                b[:, 0] = x1
        if len(b):
            keep = ((b[:, 2] - b[:, 0]) > 1.5) & ((b[:, 3] - b[:, 1]) > 1.5)
            b = b[keep]
        return img, b

    def batch(self, ids: list[int], mosaic: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        imgs, targets = [], []
        for i in ids:
            img, b = self.sample(i, mosaic)
            imgs.append(img.transpose(2, 0, 1))
            targets.append(b)
        return np.stack(imgs).astype(np.float32), targets
