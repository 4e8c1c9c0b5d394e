"""Checks that the PyTorch YOLOX-Nano definition reproduces the released ONNX model: loads all its
initializers (80-class head included) and compares the outputs on real images with onnxruntime."""
from __future__ import annotations

import glob
import os
import sys

import cv2
import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import letterbox  # noqa: E402
from train import SHARED  # noqa: E402
from yolox_nano import YoloxNano, export_form, load_onnx_weights  # noqa: E402


def main() -> None:
    onnx_path = os.path.join(SHARED, "models/yolox_nano.onnx")
    model = YoloxNano(80).eval()
    n = load_onnx_weights(model, onnx_path, skip_cls=False)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    files = sorted(glob.glob(os.path.join(SHARED, "media/images/*.jpg")))[:4]
    worst = 0.0
    for f in files:
        img, _ = letterbox(cv2.imread(f, cv2.IMREAD_COLOR), 416)
        x = img.transpose(2, 0, 1)[None].astype(np.float32)
        ref = sess.run(None, {"images": x})[0]
        with torch.no_grad():
            ours = export_form(model(torch.from_numpy(x))).numpy()
        d = float(np.abs(ref - ours).max())
        worst = max(worst, d)
        print(f"{os.path.basename(f)}: max |diff| {d:.2e} (max obj {ref[0, :, 4].max():.3f})")
    print(f"{n} convs loaded; worst max |diff| {worst:.2e}")
    if worst > 1e-3:
        raise SystemExit("PyTorch definition does not reproduce the ONNX model")


if __name__ == "__main__":
    main()
