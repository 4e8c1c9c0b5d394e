"""Line-crossing counts by supervision's LineZone, the reference the analytics engine is checked against.

Reads JSON on stdin, coordinates normalized as the service stores them:
  {"width": int, "height": int,
   "lines": [{"id": str, "start": [x, y], "end": [x, y], "anchor": "bottom_center" | ...}],
   "frames": [{"objects": [{"track_id": int, "box": [x1, y1, x2, y2]}]}]}
and prints {"supervision": version, "lines": {id: {"in": n, "out": n}}}. supervision works on the image, so
everything is taken to the frame's pixels first (x * width, y * height, in float64) as a user of supervision
would: one sv.LineZone per line, from start to end in pixels, with minimum_crossing_threshold=1 and the line's
anchor as the only triggering anchor, triggered once per frame (an empty frame too) with the frame's objects as
float64 boxes in pixels. Run it with the python of scripts/reference/install-supervision.sh.
"""

import json
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import supervision as sv  # noqa: E402


def main() -> None:
    data = json.load(sys.stdin)
    width = float(data["width"])
    height = float(data["height"])
    scale = np.array([width, height, width, height], dtype=np.float64)
    zones = {}
    for line in data["lines"]:
        zones[line["id"]] = sv.LineZone(
            start=sv.Point(float(line["start"][0]) * width, float(line["start"][1]) * height),
            end=sv.Point(float(line["end"][0]) * width, float(line["end"][1]) * height),
            triggering_anchors=[sv.Position[line["anchor"].upper()]],
            minimum_crossing_threshold=1,
        )
    for frame in data["frames"]:
        objects = frame["objects"]
        if objects:
            detections = sv.Detections(
                xyxy=np.array([o["box"] for o in objects], dtype=np.float64) * scale,
                tracker_id=np.array([o["track_id"] for o in objects], dtype=np.int64),
            )
        else:
            detections = sv.Detections.empty()
            detections.tracker_id = np.array([], dtype=np.int64)
        for zone in zones.values():
            zone.trigger(detections)
    out = {key: {"in": zone.in_count, "out": zone.out_count} for key, zone in zones.items()}
    json.dump({"supervision": sv.__version__, "lines": out}, sys.stdout)


if __name__ == "__main__":
    main()
