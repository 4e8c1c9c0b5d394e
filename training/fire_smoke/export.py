"""Exports a checkpoint's EMA weights to ONNX in the layout of the released YOLOX-Nano file
(PROVENANCE.md 1.1: input `images` [1, 3, S, S] BGR 0-255, output `output` [1, N, 5 + nc] with
undecoded boxes and sigmoid-ed obj/class scores), checks onnxruntime against PyTorch on
firesmoke-val images, and writes the labels file and a provenance record beside the model.

  python export.py --ckpt runs/full/best.pt          # -> ../../models/fire_smoke_yolox_nano.onnx
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import letterbox, load_coco  # noqa: E402
from evaluate import postprocess  # noqa: E402
from train import REPO, SHARED  # noqa: E402
from yolox_nano import ExportWrapper, YoloxNano  # noqa: E402


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def split_hashes(split_dir: str) -> dict:
    """sha256 of annotations.json, and of the sorted list '<sha256>  <file name>' of every image."""
    img_dir = os.path.join(split_dir, "images")
    lines = "".join(f"{sha256_file(os.path.join(img_dir, n))}  {n}\n" for n in sorted(os.listdir(img_dir)))
    return {
        "annotations_sha256": sha256_file(os.path.join(split_dir, "annotations.json")),
        "images": len(os.listdir(img_dir)),
        "images_list_sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ckpt", required=True)
    p.add_argument("--out", default=os.path.join(REPO, "models/fire_smoke_yolox_nano.onnx"))
    p.add_argument("--size", type=int, default=416)
    p.add_argument("--check-images", type=int, default=16)
    p.add_argument("--train-command", default="", help="the training command, recorded in the provenance file")
    p.add_argument("--trained-on", default="", help="where training ran (machine, torch version), recorded in the provenance file")
    a = p.parse_args()

    ck = torch.load(a.ckpt, weights_only=False, map_location="cpu")
    classes = ck["classes"]
    model = YoloxNano(len(classes))
    model.load_state_dict(ck["ema"])
    model.eval()
    wrapper = ExportWrapper(model).eval()
    x = torch.zeros(1, 3, a.size, a.size)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    torch.onnx.export(wrapper, (x,), a.out, input_names=["images"], output_names=["output"], opset_version=13,
                      do_constant_folding=True, dynamo=False)
    m = onnx.load(a.out)
    onnx.checker.check_model(m)
    out_shape = [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    n_rows = sum((a.size // s) ** 2 for s in (8, 16, 32))
    assert out_shape == [1, n_rows, 5 + len(classes)], out_shape

    # onnxruntime vs PyTorch on real validation images
    sess = ort.InferenceSession(a.out, providers=["CPUExecutionProvider"])
    val = [r for r in load_coco(os.path.join(SHARED, "datasets/firesmoke-val")) if len(r["boxes"])][: a.check_images]
    worst, same = 0.0, 0
    for r in val:
        img, _ = letterbox(cv2.imread(r["file"], cv2.IMREAD_COLOR), a.size)
        t = img.transpose(2, 0, 1)[None].astype(np.float32)
        ref = wrapper(torch.from_numpy(t)).detach().numpy()
        got = sess.run(None, {"images": t})[0]
        worst = max(worst, float(np.abs(ref - got).max()))
        dr, dg = postprocess(ref[0], a.size, 0.3), postprocess(got[0], a.size, 0.3)
        same += int(len(dr) == len(dg) and (len(dr) == 0 or np.allclose(dr, dg, atol=1e-2)))
    print(f"onnxruntime vs PyTorch on {len(val)} firesmoke-val images: max |diff| {worst:.2e}, "
          f"identical detections (>= 0.3) on {same}/{len(val)}")
    if worst > 1e-3 or same != len(val):
        raise SystemExit("exported model does not match PyTorch")

    base = a.out[: -len(".onnx")]
    with open(base + ".labels.txt", "w") as f:
        f.write("\n".join(classes) + "\n")
    try:
        code_rev = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        code_rev = ""
    record = {
        "model": os.path.basename(a.out),
        "sha256": sha256_file(a.out),
        "bytes": os.path.getsize(a.out),
        "input": {"name": "images", "shape": [1, 3, a.size, a.size], "layout": "BGR 0-255, letterbox top-left on 114"},
        "output": {"name": "output", "shape": out_shape, "layout": "yolox rows [tx, ty, tw, th, obj, p_fire, p_smoke]"},
        "classes": classes,
        "init": {"file": "yolox_nano.onnx", "sha256": sha256_file(os.path.join(SHARED, "models/yolox_nano.onnx"))},
        "data": {
            "firesmoke-train": split_hashes(os.path.join(SHARED, "datasets/firesmoke-train")),
            "firesmoke-val": split_hashes(os.path.join(SHARED, "datasets/firesmoke-val")),
        },
        "checkpoint": {"epoch": ck["epoch"], "selected_on": "firesmoke-val mean AP50 (fire, smoke)", "val": ck["metrics"]},
        "train_args": ck["args"],
        "train_command": a.train_command,
        "trained_on": a.trained_on,
        "export_command": "python " + " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "code_commit": code_rev,
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": ort.__version__},
    }
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(json.dumps({k: record[k] for k in ("model", "sha256", "bytes")}))


if __name__ == "__main__":
    main()
