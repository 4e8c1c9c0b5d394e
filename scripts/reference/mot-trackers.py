"""Peer trackers and scorers of the tracking bench (bench/tracking.bench.js), on MOTChallenge-format sequences.

Run it with the python of scripts/reference/install-trackers.sh. Two commands, each reading one JSON object on stdin:

  track: {"mot": DIR, "seqs": [name], "rates": [{"name": str, "fps": number | null}], "out": DIR, "peers": [name]}
    Runs each peer with its library defaults on the sequence's public detections (det/det.txt) and writes
    OUT/<peer>/<rate>/<seq>.txt (MOT format, the source's frame numbers). A rate with an fps keeps every k-th
    frame (frames 1, 1 + k, ...; k = round(sequence fps / rate fps)) and tells the peer the frame rate fps / k;
    one without (null) keeps every frame. Peers: sort, bytetrack, ocsort (PyPI `trackers`),
    sv-bytetrack (supervision's ByteTrack).
  score: {"mot": DIR, "seqs": [name], "rates": [{"name": str, "fps": number | null}],
          "results": DIR, "trackers": [name],
          "work": DIR}
    Scores RESULTS/<tracker>/<rate>/<seq>.txt against gt/gt.txt on the rate's frames (renumbered 1..n, as the
    sequence a tracker saw): MOTA, IDF1, ID switches by motmetrics (IoU 0.5, ground truth with conf 1), HOTA by
    TrackEval (MOT15 benchmark settings). Prints {"versions": {...}, "scores": {tracker: {rate: {seq | "COMBINED":
    {"mota", "idf1", "idsw", "hota"}}}}} with percentages as in the MOTChallenge tables.
"""

import configparser
import contextlib
import importlib.metadata as md
import io
import json
import os
import shutil
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402


def seq_info(mot, seq):
    ini = configparser.ConfigParser()
    ini.read(os.path.join(mot, seq, "seqinfo.ini"))
    s = ini["Sequence"]
    return {"fps": float(s["frameRate"]), "length": int(s["seqLength"])}


def load_rows(path):
    rows = np.loadtxt(path, delimiter=",", ndmin=2)
    return rows[np.argsort(rows[:, 0], kind="stable")]


def step(info, rate):
    """Every k-th frame, k = round(fps / rate fps) (half up, as the bench's JavaScript); 1 at the native rate."""
    return 1 if not rate.get("fps") else max(1, int(np.floor(info["fps"] / rate["fps"] + 0.5)))


def kept_frames(length, k):
    return list(range(1, length + 1, k))


def make_peer(name, frame_rate):
    if name == "sv-bytetrack":
        import supervision as sv

        return sv.ByteTrack(frame_rate=max(1, round(frame_rate)))
    import trackers

    cls = {"sort": trackers.SORTTracker, "bytetrack": trackers.ByteTrackTracker, "ocsort": trackers.OCSORTTracker}
    return cls[name](frame_rate=frame_rate)


def track(req):
    import supervision as sv

    for seq in req["seqs"]:
        info = seq_info(req["mot"], seq)
        dets = load_rows(os.path.join(req["mot"], seq, "det", "det.txt"))
        by_frame = {int(f): dets[dets[:, 0] == f] for f in np.unique(dets[:, 0])}
        for rate in req["rates"]:
            k = step(info, rate)
            for peer in req["peers"]:
                tracker = make_peer(peer, info["fps"] / k)
                lines = []
                for frame in kept_frames(info["length"], k):
                    d = by_frame.get(frame, np.zeros((0, 10)))
                    xyxy = np.stack([d[:, 2], d[:, 3], d[:, 2] + d[:, 4], d[:, 3] + d[:, 5]], axis=1)
                    detections = sv.Detections(
                        xyxy=xyxy.astype(np.float32).reshape(-1, 4),
                        confidence=d[:, 6].astype(np.float32),
                        class_id=np.zeros(len(d), dtype=int),
                    )
                    out = tracker.update_with_detections(detections) if peer == "sv-bytetrack" else tracker.update(detections)
                    for box, tid in zip(out.xyxy, out.tracker_id):
                        if tid is None or int(tid) < 0:
                            continue
                        x1, y1, x2, y2 = (float(v) for v in box)
                        lines.append(f"{frame},{int(tid)},{x1:.2f},{y1:.2f},{x2 - x1:.2f},{y2 - y1:.2f},1,-1,-1,-1\n")
                path = os.path.join(req["out"], peer, rate["name"], f"{seq}.txt")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.writelines(lines)


def renumber(rows, frames):
    """The rows on `frames`, their frame numbers made 1..len(frames)."""
    index = {f: i + 1 for i, f in enumerate(frames)}
    keep = np.array([int(f) in index for f in rows[:, 0]], dtype=bool) if len(rows) else np.zeros(0, dtype=bool)
    out = rows[keep].copy()
    if len(out):
        out[:, 0] = [index[int(f)] for f in out[:, 0]]
    return out


def write_rows(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in rows:
            f.write(",".join(str(int(v)) if i < 2 else f"{v:.3f}" for i, v in enumerate(r[:10])) + "\n")


def motmetrics_scores(gt_paths, ts_paths):
    if not hasattr(np, "asfarray"):  # motmetrics 1.4.0 predates NumPy 2 (trackers needs it), which removed it
        np.asfarray = lambda a, dtype=np.float64: np.asarray(a, dtype=dtype)
    import motmetrics as mm

    accs, names = [], []
    for seq in gt_paths:
        gt = mm.io.loadtxt(gt_paths[seq], fmt="mot15-2D", min_confidence=1)
        ts = mm.io.loadtxt(ts_paths[seq], fmt="mot15-2D")
        accs.append(mm.utils.compare_to_groundtruth(gt, ts, "iou", distth=0.5))
        names.append(seq)
    mh = mm.metrics.create()
    summary = mh.compute_many(accs, names=names, metrics=["mota", "idf1", "num_switches"], generate_overall=True)
    out = {}
    for name, row in summary.iterrows():
        key = "COMBINED" if name == "OVERALL" else name
        out[key] = {"mota": 100 * float(row["mota"]), "idf1": 100 * float(row["idf1"]), "idsw": int(row["num_switches"])}
    return out


def trackeval_hota(work, tracker, lengths):
    import trackeval

    config = trackeval.Evaluator.get_default_eval_config()
    config.update({"PRINT_RESULTS": False, "PRINT_CONFIG": False, "TIME_PROGRESS": False, "OUTPUT_SUMMARY": False,
                   "OUTPUT_DETAILED": False, "PLOT_CURVES": False, "DISPLAY_LESS_PROGRESS": True, "USE_PARALLEL": False})
    dataset = trackeval.datasets.MotChallenge2DBox({
        "GT_FOLDER": os.path.join(work, "gt"), "TRACKERS_FOLDER": os.path.join(work, "trackers"),
        "TRACKERS_TO_EVAL": [tracker], "BENCHMARK": "MOT15", "SPLIT_TO_EVAL": "train", "SKIP_SPLIT_FOL": True,
        "SEQ_INFO": lengths, "PRINT_CONFIG": False, "TRACKER_SUB_FOLDER": "data", "OUTPUT_FOLDER": os.path.join(work, "out"),
    })
    with contextlib.redirect_stdout(io.StringIO()):
        results, _ = trackeval.Evaluator(config).evaluate([dataset], [trackeval.metrics.HOTA({"PRINT_CONFIG": False})])
    per_seq = results["MotChallenge2DBox"][tracker]
    return {("COMBINED" if s == "COMBINED_SEQ" else s): 100 * float(np.mean(v["pedestrian"]["HOTA"]["HOTA"]))
            for s, v in per_seq.items()}


def score(req):
    scores = {}
    for rate in req["rates"]:
        work = os.path.join(req["work"], rate["name"])
        shutil.rmtree(work, ignore_errors=True)
        lengths, gt_paths = {}, {}
        for seq in req["seqs"]:
            info = seq_info(req["mot"], seq)
            frames = kept_frames(info["length"], step(info, rate))
            lengths[seq] = len(frames)
            gt = renumber(load_rows(os.path.join(req["mot"], seq, "gt", "gt.txt")), frames)
            gt_paths[seq] = os.path.join(work, "gt", seq, "gt", "gt.txt")
            write_rows(gt_paths[seq], gt)
        for tracker in req["trackers"]:
            ts_paths = {}
            for seq in req["seqs"]:
                info = seq_info(req["mot"], seq)
                frames = kept_frames(info["length"], step(info, rate))
                src = os.path.join(req["results"], tracker, rate["name"], f"{seq}.txt")
                rows = load_rows(src) if os.path.getsize(src) else np.zeros((0, 10))
                ts_paths[seq] = os.path.join(work, "trackers", tracker, "data", f"{seq}.txt")
                write_rows(ts_paths[seq], renumber(rows, frames))
            merged = motmetrics_scores(gt_paths, ts_paths)
            for seq, hota in trackeval_hota(work, tracker, lengths).items():
                merged[seq]["hota"] = hota
            scores.setdefault(tracker, {})[rate["name"]] = merged
    versions = {p: md.version(p) for p in ("trackers", "supervision", "motmetrics", "trackeval")}
    json.dump({"versions": versions, "scores": scores}, sys.stdout)


def main():
    req = json.load(sys.stdin)
    {"track": track, "score": score}[sys.argv[1]](req)


if __name__ == "__main__":
    main()
