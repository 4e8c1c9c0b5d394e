"""Measures the exported ONNX model on firesmoke-val with onnxruntime (the service's preprocessing:
letterbox 416, BGR 0-255) and chooses the scene lower bound there: the bound with the best
image-level F0.5 for fire on a 0.05 grid (precision weighted over recall, the rule used for the
built-in detector). Records the figures in the model's provenance JSON. Never reads dfire-valid.

  python calibrate.py                      # ../../models/fire_smoke_yolox_nano.onnx
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import cv2
import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import letterbox, load_coco  # noqa: E402
from evaluate import evaluate, postprocess  # noqa: E402
from train import REPO, SHARED  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=os.path.join(REPO, "models/fire_smoke_yolox_nano.onnx"))
    p.add_argument("--val-dir", default=os.path.join(SHARED, "datasets/firesmoke-val"))
    a = p.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    size = sess.get_inputs()[0].shape[2]
    per_image = []
    for r in load_coco(a.val_dir):
        img, sc = letterbox(cv2.imread(r["file"], cv2.IMREAD_COLOR), size)
        out = sess.run(None, {"images": img.transpose(2, 0, 1)[None].astype(np.float32)})[0][0]
        d = postprocess(out, size, 0.01)
        d[:, :4] /= sc
        per_image.append((d, r["boxes"]))
    rows = []
    for lb in np.arange(0.05, 0.951, 0.05):
        res = evaluate(per_image, 2, float(lb))
        pf, rf = res[0]["img_precision"], res[0]["img_recall"]
        f05 = 1.25 * pf * rf / (0.25 * pf + rf) if pf + rf else 0.0
        rows.append({"lower_bound": round(float(lb), 2), "fire_p": pf, "fire_r": rf, "fire_f05": f05,
                     "smoke_p": res[1]["img_precision"], "smoke_r": res[1]["img_recall"]})
        print(f"@{lb:.2f} fire P {pf:.3f} R {rf:.3f} F0.5 {f05:.3f} | smoke P {res[1]['img_precision']:.3f} R {res[1]['img_recall']:.3f}")
    best = max(rows, key=lambda x: (round(x["fire_f05"], 6), x["lower_bound"]))
    full = evaluate(per_image, 2, best["lower_bound"])
    summary = {"images": len(per_image), "fire_ap50": full[0]["ap50"], "smoke_ap50": full[1]["ap50"],
               "lower_bound": best["lower_bound"], "at_lower_bound": best, "note": "detections >= 0.01, AP50 VOC all points"}
    print(json.dumps(summary, indent=2))
    meta = a.model[: -len(".onnx")] + ".json"
    if os.path.exists(meta):
        with open(meta) as f:
            record = json.load(f)
        record["firesmoke_val"] = summary
        record["firesmoke_val_curve"] = rows
        with open(meta, "w") as f:
            json.dump(record, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
