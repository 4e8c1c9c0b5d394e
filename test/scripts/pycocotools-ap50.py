"""Box AP at IoU 0.5 of test/fixtures/fire-metrics-boxes.json by pycocotools (the COCO reference evaluator).

Prints JSON: {"ap50": AP sampled at 100001 recall points}.
pycocotools matches greedily by descending score at IoU >= threshold, as scripts/fire-metrics.js does, but
by default averages the precision envelope at 101 recall points (0, 0.01, ..., 1): close to, not the same
as, the area under the envelope over all recall points (VOC 2010+) that fire-metrics.js reports. On a grid
of 100001 points that mean converges to the area (within about steps / 100000 here).
"""
import contextlib
import json
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def ap50(fixture, rec_points):
    gt = COCO()
    anns, dets = [], []
    for im in fixture["images"]:
        for box in im["gts"]:
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": 1, "bbox": box,
                         "area": box[2] * box[3], "iscrowd": 0})
        for d in im["dets"]:
            dets.append({"image_id": im["id"], "category_id": 1, "bbox": d["bbox"], "score": d["score"]})
    gt.dataset = {
        "images": [{"id": im["id"], "width": im["width"], "height": im["height"]} for im in fixture["images"]],
        "annotations": anns,
        "categories": [{"id": 1, "name": "fire"}],
    }
    gt.createIndex()
    dt = gt.loadRes(dets)
    e = COCOeval(gt, dt, "bbox")
    e.params.iouThrs = np.array([0.5])
    e.params.recThrs = np.linspace(0.0, 1.0, rec_points)
    e.params.maxDets = [100]
    e.params.areaRng = [[0, 1e10]]
    e.params.areaRngLbl = ["all"]
    e.evaluate()
    e.accumulate()
    precision = e.eval["precision"][0, :, 0, 0, 0]  # [IoU, recall, class, area, max dets]
    return float(np.mean(precision))


with open(sys.argv[1]) as f:
    data = json.load(f)
with contextlib.redirect_stdout(sys.stderr):  # pycocotools prints its progress
    out = {"ap50": ap50(data, 100001)}
print(json.dumps(out))
