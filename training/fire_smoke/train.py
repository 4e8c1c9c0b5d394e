"""Fine-tunes YOLOX-Nano (COCO weights from the released ONNX file) on firesmoke-train with a new
two-class head (fire, smoke); selects the checkpoint on firesmoke-val. Never reads dfire-valid.

  python train.py --out runs/full                 # full CPU schedule (README.md)
  python train.py --out runs/full --resume        # continue from runs/full/last.pt
  python train.py --smoke --out runs/smoke        # a tiny end-to-end run in a few minutes
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import Dataset, letterbox, load_coco  # noqa: E402
from evaluate import evaluate, postprocess  # noqa: E402
from loss import yolox_loss  # noqa: E402
from yolox_nano import YoloxNano, export_form, load_onnx_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("VISION_SHARED_DIR", os.path.join(os.path.dirname(REPO), "shared"))
CLASSES = ["fire", "smoke"]


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-dir", default=os.path.join(SHARED, "datasets/firesmoke-train"))
    p.add_argument("--val-dir", default=os.path.join(SHARED, "datasets/firesmoke-val"))
    p.add_argument("--init", default=os.path.join(SHARED, "models/yolox_nano.onnx"))
    p.add_argument("--out", required=True)
    p.add_argument("--size", type=int, default=320, help="training input side (multiple of 32)")
    p.add_argument("--freeze", choices=["none", "stem", "dark3"], default="stem",
                   help="keep the COCO weights of the early high-resolution layers (stem = Focus + dark2)")
    p.add_argument("--tail-size", type=int, default=0,
                   help="training input side of the last (no-mosaic) epochs; 0 = --size (416 = the service's side)")
    p.add_argument("--val-size", type=int, default=416, help="validation input side (the service's)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.005)
    p.add_argument("--no-mosaic-epochs", type=int, default=1, help="last epochs without mosaic")
    p.add_argument("--warmup-iters", type=int, default=100)
    p.add_argument("--seed", type=int, default=416)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads; 1 is fastest per CPU-second on a shared 2-core machine")
    p.add_argument("--images-per-epoch", type=int, default=3200, help="0 = the whole train split")
    p.add_argument("--device", default="cpu", help="torch device: cpu, or cuda where a GPU is lent")
    p.add_argument("--workers", type=int, default=0,
                   help="processes that build batches; 0 builds them in this process (the CPU schedule). With N > 0 "
                        "each batch has its own seed, so a run does not depend on N")
    p.add_argument("--smoke", action="store_true", help="tiny run on a few images")
    p.add_argument("--resume", action="store_true")
    a = p.parse_args()
    if a.smoke:
        a.epochs, a.batch, a.images_per_epoch, a.warmup_iters, a.size = 2, 4, 16, 2, 256
    return a


class EMA:
    def __init__(self, model: torch.nn.Module, decay: float = 0.995, ramp: float = 100.0):
        self.model = copy.deepcopy(model).eval()
        self.decay, self.ramp, self.updates = decay, ramp, 0
        for q in self.model.parameters():
            q.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        self.updates += 1
        d = self.decay * (1 - math.exp(-self.updates / self.ramp))
        for e, m in zip(self.model.state_dict().values(), model.state_dict().values()):
            if e.dtype.is_floating_point:
                e.mul_(d).add_(m.detach(), alpha=1 - d)


@torch.no_grad()
def validate(model: torch.nn.Module, records: list[dict], size: int, limit: int = 0, device: str = "cpu") -> dict:
    import cv2

    model.eval()
    per_image = []
    recs = records[:limit] if limit else records
    for k in range(0, len(recs), 16):
        chunk = recs[k : k + 16]
        imgs, rs = [], []
        for r in chunk:
            img, sc = letterbox(cv2.imread(r["file"], cv2.IMREAD_COLOR), size)
            imgs.append(img.transpose(2, 0, 1))
            rs.append(sc)
        out = export_form(model(torch.from_numpy(np.stack(imgs).astype(np.float32)).to(device))).cpu().numpy()
        for o, r, sc in zip(out, chunk, rs):
            d = postprocess(o, size)
            d[:, :4] /= sc
            per_image.append((d, r["boxes"]))
    res = evaluate(per_image, len(CLASSES))
    return {
        "fire_ap50": res[0]["ap50"],
        "smoke_ap50": res[1]["ap50"],
        "map50": float(np.mean([v for v in (res[0]["ap50"], res[1]["ap50"]) if v == v] or [0.0])),
        "fire_img_p@0.3": res[0]["img_precision"],
        "fire_img_r@0.3": res[0]["img_recall"],
    }


class Batches(torch.utils.data.Dataset):
    """One epoch's batches for worker processes: batch `it` is built with its own seed."""

    def __init__(self, records: list[dict], size: int, seed: int, order: list[int], batch: int, iters: int, mosaic: bool):
        self.records, self.size, self.seed, self.order = records, size, seed, order
        self.batch, self.iters, self.mosaic = batch, iters, mosaic

    def __len__(self) -> int:
        return self.iters

    def __getitem__(self, it: int) -> tuple[np.ndarray, list[np.ndarray]]:
        ds = Dataset(self.records, self.size, self.seed * 100_000 + it)
        return ds.batch(self.order[it * self.batch : (it + 1) * self.batch], self.mosaic)


def param_groups(model: torch.nn.Module, wd: float) -> list[dict]:
    decay, no_decay = [], []
    for n, q in model.named_parameters():
        if not q.requires_grad:
            continue
        (no_decay if n.endswith(".bias") else decay).append(q)
    return [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}]


def main() -> None:
    a = parse()
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)

    train = load_coco(a.train_dir)
    val = load_coco(a.val_dir)
    if a.smoke:
        train = [r for r in train if len(r["boxes"])][:16]
        val = [r for r in val if len(r["boxes"])][:24]
    n_img = a.images_per_epoch or len(train)
    iters_per_epoch = max(1, n_img // a.batch)
    total_iters = iters_per_epoch * a.epochs

    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = dev.type == "cuda"
    model = YoloxNano(len(CLASSES))
    copied = load_onnx_weights(model, a.init, skip_cls=True)
    bb = model.neck.backbone
    frozen = {"none": [], "stem": [bb.stem, bb.dark2], "dark3": [bb.stem, bb.dark2, bb.dark3]}[a.freeze]
    for mod in frozen:
        for q in mod.parameters():
            q.requires_grad_(False)
    prior = -math.log((1 - 0.01) / 0.01)
    for c in model.head.cls_preds:
        torch.nn.init.normal_(c.weight, std=0.01)
        torch.nn.init.constant_(c.bias, prior)
    model.to(dev)
    opt = torch.optim.SGD(param_groups(model, 5e-4), lr=a.lr, momentum=0.9, nesterov=True)
    ema = EMA(model)
    start_epoch, best = 0, -1.0
    last_path, best_path = os.path.join(a.out, "last.pt"), os.path.join(a.out, "best.pt")
    log_path = os.path.join(a.out, "metrics.jsonl")
    if a.resume and os.path.exists(last_path):
        ck = torch.load(last_path, weights_only=False, map_location=dev)
        model.load_state_dict(ck["model"])
        ema.model.load_state_dict(ck["ema"])
        ema.updates = ck["ema_updates"]
        opt.load_state_dict(ck["opt"])
        start_epoch, best = ck["epoch"] + 1, ck["best"]
        print(f"resumed after epoch {ck['epoch']} (best map50 {best:.4f})", flush=True)
    else:
        open(log_path, "w").close()
        print(f"initialised from {a.init}: {copied} convs copied, new 2-class head", flush=True)
    print(json.dumps({"args": vars(a), "train_images": len(train), "val_images": len(val), "iters_per_epoch": iters_per_epoch}), flush=True)

    for epoch in range(start_epoch, a.epochs):
        mosaic = epoch < a.epochs - a.no_mosaic_epochs
        ds = Dataset(train, a.size if mosaic or not a.tail_size else a.tail_size, a.seed * 1000 + epoch)
        order = list(range(len(train)))
        random.Random(a.seed * 1000 + epoch).shuffle(order)
        while len(order) < n_img:
            order += order
        if a.workers:
            src = Batches(train, ds.size, a.seed * 1000 + epoch, order, a.batch, iters_per_epoch, mosaic)
            batches = iter(torch.utils.data.DataLoader(src, batch_size=None, num_workers=a.workers, prefetch_factor=4))
        model.train()
        sums = {"total": 0.0, "iou": 0.0, "obj": 0.0, "cls": 0.0}
        t0 = time.time()
        for it in range(iters_per_epoch):
            g = epoch * iters_per_epoch + it
            if g < a.warmup_iters:
                lr = a.lr * (g + 1) / a.warmup_iters
            else:
                lr = 0.05 * a.lr + 0.95 * a.lr * 0.5 * (1 + math.cos(math.pi * (g - a.warmup_iters) / max(1, total_iters - a.warmup_iters)))
            for pg in opt.param_groups:
                pg["lr"] = lr
            if a.workers:
                imgs, targets = next(batches)
            else:
                imgs, targets = ds.batch(order[it * a.batch : (it + 1) * a.batch], mosaic)
            imgs = torch.as_tensor(imgs).to(dev, non_blocking=True)
            losses = yolox_loss(model(imgs), [np.asarray(t) for t in targets], len(CLASSES))
            opt.zero_grad(set_to_none=True)
            losses["total"].backward()
            torch.nn.utils.clip_grad_norm_([q for q in model.parameters() if q.requires_grad], 10.0)
            opt.step()
            ema.update(model)
            for k in sums:
                sums[k] += float(losses[k].detach())
            if it % 20 == 0 or it == iters_per_epoch - 1:
                el = time.time() - t0
                print(f"epoch {epoch} iter {it + 1}/{iters_per_epoch} lr {lr:.5f} loss {float(losses['total'].detach()):.3f} "
                      f"(iou {float(losses['iou']):.3f} obj {float(losses['obj']):.3f} cls {float(losses['cls']):.3f}) "
                      f"{el / (it + 1):.2f} s/iter", flush=True)
        train_s = time.time() - t0
        t1 = time.time()
        metrics = validate(ema.model, val, a.val_size, device=a.device)
        rec = {"epoch": epoch, "mosaic": mosaic, "size": ds.size, "train_s": round(train_s, 1), "val_s": round(time.time() - t1, 1),
               **{f"loss_{k}": v / iters_per_epoch for k, v in sums.items()}, **metrics}
        with open(log_path, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)
        is_best = metrics["map50"] > best
        best = max(best, metrics["map50"])
        state = {"model": model.state_dict(), "ema": ema.model.state_dict(), "ema_updates": ema.updates,
                 "opt": opt.state_dict(), "epoch": epoch, "best": best, "args": vars(a), "classes": CLASSES}
        torch.save(state, last_path + ".tmp")
        os.replace(last_path + ".tmp", last_path)
        if is_best:
            torch.save({"ema": ema.model.state_dict(), "epoch": epoch, "metrics": metrics, "args": vars(a), "classes": CLASSES}, best_path)
            print(f"new best (map50 {best:.4f}) at epoch {epoch} -> {best_path}", flush=True)


if __name__ == "__main__":
    main()
