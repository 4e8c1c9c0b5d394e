"""YOLOX loss with SimOTA label assignment (after the Apache-2.0 YOLOX design: Ge et al. 2021).
IoU loss (1 - IoU^2) on assigned anchors, BCE objectness on all anchors, BCE classes with IoU-aware
targets on assigned anchors, all divided by the number of assigned anchors."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from yolox_nano import STRIDES


def make_grids(levels: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    grids, strides = [], []
    for o, s in zip(levels, STRIDES):
        h, w = o.shape[-2:]
        yv, xv = torch.meshgrid(torch.arange(h, device=o.device), torch.arange(w, device=o.device), indexing="ij")
        grids.append(torch.stack((xv, yv), -1).reshape(-1, 2).float())
        strides.append(torch.full((h * w,), float(s), device=o.device))
    return torch.cat(grids), torch.cat(strides)


def flatten(levels: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([o.flatten(2) for o in levels], 2).permute(0, 2, 1)


def decode(raw: torch.Tensor, grids: torch.Tensor, strides: torch.Tensor) -> torch.Tensor:
    """Raw [B, N, 5 + nc] -> boxes [B, N, 4] as cx, cy, w, h in input pixels."""
    xy = (raw[..., :2] + grids) * strides[:, None]
    wh = torch.exp(raw[..., 2:4].clamp(max=10.0)) * strides[:, None]
    return torch.cat((xy, wh), -1)


def box_iou_cxcywh(a: torch.Tensor, b: torch.Tensor, pairwise: bool = True) -> torch.Tensor:
    a1, a2 = a[..., :2] - a[..., 2:] / 2, a[..., :2] + a[..., 2:] / 2
    b1, b2 = b[..., :2] - b[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2
    if pairwise:
        a1, a2, aw = a1[:, None], a2[:, None], a[:, None, 2:]
        b1, b2, bw = b1[None], b2[None], b[None, :, 2:]
    else:
        aw, bw = a[..., 2:], b[..., 2:]
    tl = torch.max(a1, b1)
    br = torch.min(a2, b2)
    inter = (br - tl).clamp(min=0).prod(-1)
    return inter / (aw.prod(-1) + bw.prod(-1) - inter + 1e-9)


@torch.no_grad()
def simota(gt: torch.Tensor, gcls: torch.Tensor, boxes: torch.Tensor, cls_logit: torch.Tensor,
           obj_logit: torch.Tensor, grids: torch.Tensor, strides: torch.Tensor, nc: int):
    """One image. gt [G, 4] cxcywh, gcls [G]. Returns (fg_mask [N], matched gt index per fg anchor,
    IoU of each fg anchor with its gt)."""
    n = boxes.shape[0]
    centers = (grids + 0.5) * strides[:, None]  # [N, 2]
    g_l, g_r = gt[:, :2] - gt[:, 2:] / 2, gt[:, :2] + gt[:, 2:] / 2
    in_box = ((centers[None] > g_l[:, None]) & (centers[None] < g_r[:, None])).all(-1)  # [G, N]
    rad = 2.5 * strides[None, :, None]
    in_ctr = ((centers[None] > gt[:, None, :2] - rad) & (centers[None] < gt[:, None, :2] + rad)).all(-1)
    fg = in_box.any(0) | in_ctr.any(0)
    if not fg.any():
        dev = boxes.device
        return torch.zeros(n, dtype=torch.bool, device=dev), torch.zeros(0, dtype=torch.long, device=dev), torch.zeros(0, device=dev)
    both = in_box[:, fg] & in_ctr[:, fg]
    ious = box_iou_cxcywh(gt, boxes[fg])  # [G, M]
    iou_cost = -torch.log(ious + 1e-8)
    p = (cls_logit[fg].sigmoid() * obj_logit[fg].sigmoid()).sqrt()  # [M, nc]
    onehot = F.one_hot(gcls, nc).float()  # [G, nc]
    # BCE(p, onehot) summed over classes, for every (gt, anchor) pair
    logp, log1p = torch.log(p.clamp(min=1e-8)), torch.log((1 - p).clamp(min=1e-8))
    cls_cost = -(onehot @ logp.T + (1 - onehot) @ log1p.T)
    cost = cls_cost + 3.0 * iou_cost + 1e5 * (~both).float()
    m = ious.shape[1]
    match = torch.zeros_like(cost)
    topk = torch.topk(ious, min(10, m), dim=1).values
    ks = topk.sum(1).int().clamp(min=1, max=m)
    # each gt takes its ks[g] cheapest anchors (one sort for all gts: no per-gt host round trip on a GPU)
    rank = torch.empty_like(cost, dtype=torch.long)
    order = cost.argsort(dim=1, stable=True)
    rank.scatter_(1, order, torch.arange(m, device=cost.device).expand_as(order))
    match[rank < ks[:, None]] = 1.0
    multi = match.sum(0) > 1
    if multi.any():
        best = cost[:, multi].argmin(0)
        match[:, multi] = 0.0
        match[best, multi.nonzero().squeeze(1)] = 1.0
    fg_in = match.sum(0) > 0
    fg_full = fg.clone()
    fg_full[fg] = fg_in
    matched = match[:, fg_in].argmax(0)
    pious = (match * ious).sum(0)[fg_in]
    return fg_full, matched, pious


def yolox_loss(levels: list[torch.Tensor], targets: list[np.ndarray], nc: int) -> dict[str, torch.Tensor]:
    raw = flatten(levels)  # [B, N, 5 + nc]
    grids, strides = make_grids(levels)
    boxes = decode(raw, grids, strides)
    obj_t, fg_masks, cls_t, reg_t = [], [], [], []
    for b, t in enumerate(targets):
        n = raw.shape[1]
        if len(t) == 0:
            fg_masks.append(torch.zeros(n, dtype=torch.bool, device=raw.device))
            continue
        tt = torch.from_numpy(t).to(raw.device)
        gt = torch.cat(((tt[:, :2] + tt[:, 2:4]) / 2, tt[:, 2:4] - tt[:, :2]), 1)
        gcls = tt[:, 4].long()
        fg, matched, pious = simota(gt, gcls, boxes[b].detach(), raw[b, :, 5:].detach(), raw[b, :, 4:5].detach(), grids, strides, nc)
        fg_masks.append(fg)
        cls_t.append(F.one_hot(gcls[matched], nc).float() * pious[:, None])
        reg_t.append(gt[matched])
    fg_all = torch.stack(fg_masks)
    num_fg = max(int(fg_all.sum()), 1)
    obj_t = fg_all.float()
    loss_obj = F.binary_cross_entropy_with_logits(raw[..., 4], obj_t, reduction="sum") / num_fg
    if cls_t:
        pb = boxes[fg_all]
        rt = torch.cat(reg_t)
        iou = box_iou_cxcywh(pb, rt, pairwise=False)
        loss_iou = (1 - iou**2).sum() / num_fg
        loss_cls = F.binary_cross_entropy_with_logits(raw[..., 5:][fg_all], torch.cat(cls_t), reduction="sum") / num_fg
    else:
        loss_iou = raw.sum() * 0.0
        loss_cls = raw.sum() * 0.0
    total = 5.0 * loss_iou + loss_obj + loss_cls
    return {"total": total, "iou": loss_iou.detach(), "obj": loss_obj.detach(), "cls": loss_cls.detach(), "num_fg": torch.tensor(float(num_fg))}
