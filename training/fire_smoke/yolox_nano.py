"""YOLOX-Nano (depth 0.33, width 0.25, depthwise) in PyTorch, written after the Apache-2.0 YOLOX
architecture (Megvii-BaseDetection/YOLOX). BatchNorm is folded into the convolutions, as in the
released ONNX file, so every BaseConv is Conv2d(bias=True) + SiLU. Weights are loaded from the
initializers of ../shared/models/yolox_nano.onnx (see load_onnx_weights).
"""
from __future__ import annotations

import torch
import torch.nn as nn


class BaseConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int, groups: int = 1, act: bool = True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=True)
        self.act = nn.SiLU() if act else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.conv(x))


class DWConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int):
        super().__init__()
        self.dconv = BaseConv(cin, cin, k, stride, groups=cin)
        self.pconv = BaseConv(cin, cout, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pconv(self.dconv(x))


class Bottleneck(nn.Module):
    def __init__(self, cin: int, cout: int, shortcut: bool):
        super().__init__()
        self.conv1 = BaseConv(cin, cout, 1, 1)
        self.conv2 = DWConv(cout, cout, 3, 1)
        self.use_add = shortcut and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(self.conv1(x))
        return y + x if self.use_add else y


class CSPLayer(nn.Module):
    def __init__(self, cin: int, cout: int, n: int, shortcut: bool = True):
        super().__init__()
        hidden = int(cout * 0.5)
        self.conv1 = BaseConv(cin, hidden, 1, 1)
        self.conv2 = BaseConv(cin, hidden, 1, 1)
        self.conv3 = BaseConv(2 * hidden, cout, 1, 1)
        self.m = nn.Sequential(*[Bottleneck(hidden, hidden, shortcut) for _ in range(n)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1 = self.conv1(x)
        x2 = self.conv2(x)
        x1 = self.m(x1)
        return self.conv3(torch.cat((x1, x2), 1))


class SPPBottleneck(nn.Module):
    def __init__(self, cin: int, cout: int, ks: tuple[int, ...] = (5, 9, 13)):
        super().__init__()
        hidden = cin // 2
        self.conv1 = BaseConv(cin, hidden, 1, 1)
        self.m = nn.ModuleList([nn.MaxPool2d(k, 1, k // 2) for k in ks])
        self.conv2 = BaseConv(hidden * (len(ks) + 1), cout, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv1(x)
        return self.conv2(torch.cat([x] + [m(x) for m in self.m], 1))


class Focus(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = BaseConv(cin * 4, cout, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tl = x[..., ::2, ::2]
        tr = x[..., ::2, 1::2]
        bl = x[..., 1::2, ::2]
        br = x[..., 1::2, 1::2]
        return self.conv(torch.cat((tl, bl, tr, br), 1))


class CSPDarknet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        c, d = 16, 1  # int(0.25 * 64), max(round(0.33 * 3), 1)
        self.stem = Focus(3, c)
        self.dark2 = nn.Sequential(DWConv(c, c * 2, 3, 2), CSPLayer(c * 2, c * 2, d))
        self.dark3 = nn.Sequential(DWConv(c * 2, c * 4, 3, 2), CSPLayer(c * 4, c * 4, d * 3))
        self.dark4 = nn.Sequential(DWConv(c * 4, c * 8, 3, 2), CSPLayer(c * 8, c * 8, d * 3))
        self.dark5 = nn.Sequential(
            DWConv(c * 8, c * 16, 3, 2), SPPBottleneck(c * 16, c * 16), CSPLayer(c * 16, c * 16, d, False)
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.dark2(self.stem(x))
        d3 = self.dark3(x)
        d4 = self.dark4(d3)
        d5 = self.dark5(d4)
        return d3, d4, d5


class PAFPN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = CSPDarknet()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lateral_conv0 = BaseConv(256, 128, 1, 1)
        self.C3_p4 = CSPLayer(256, 128, 1, False)
        self.reduce_conv1 = BaseConv(128, 64, 1, 1)
        self.C3_p3 = CSPLayer(128, 64, 1, False)
        self.bu_conv2 = DWConv(64, 64, 3, 2)
        self.C3_n3 = CSPLayer(128, 128, 1, False)
        self.bu_conv1 = DWConv(128, 128, 3, 2)
        self.C3_n4 = CSPLayer(256, 256, 1, False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x2, x1, x0 = self.backbone(x)
        fpn_out0 = self.lateral_conv0(x0)
        f_out0 = self.C3_p4(torch.cat((self.up(fpn_out0), x1), 1))
        fpn_out1 = self.reduce_conv1(f_out0)
        pan_out2 = self.C3_p3(torch.cat((self.up(fpn_out1), x2), 1))
        pan_out1 = self.C3_n3(torch.cat((self.bu_conv2(pan_out2), fpn_out1), 1))
        pan_out0 = self.C3_n4(torch.cat((self.bu_conv1(pan_out1), fpn_out0), 1))
        return pan_out2, pan_out1, pan_out0


class Head(nn.Module):
    def __init__(self, num_classes: int, in_channels: tuple[int, ...] = (64, 128, 256), width: int = 64):
        super().__init__()
        self.num_classes = num_classes
        self.stems = nn.ModuleList([BaseConv(c, width, 1, 1) for c in in_channels])
        self.cls_convs = nn.ModuleList(
            [nn.Sequential(DWConv(width, width, 3, 1), DWConv(width, width, 3, 1)) for _ in in_channels]
        )
        self.reg_convs = nn.ModuleList(
            [nn.Sequential(DWConv(width, width, 3, 1), DWConv(width, width, 3, 1)) for _ in in_channels]
        )
        self.cls_preds = nn.ModuleList([nn.Conv2d(width, num_classes, 1) for _ in in_channels])
        self.reg_preds = nn.ModuleList([nn.Conv2d(width, 4, 1) for _ in in_channels])
        self.obj_preds = nn.ModuleList([nn.Conv2d(width, 1, 1) for _ in in_channels])

    def forward(self, feats: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
        """Raw per-level maps [B, 4 + 1 + nc, H, W] (reg, obj logit, cls logits)."""
        outs = []
        for k, x in enumerate(feats):
            x = self.stems[k](x)
            cls_out = self.cls_preds[k](self.cls_convs[k](x))
            reg_feat = self.reg_convs[k](x)
            outs.append(torch.cat((self.reg_preds[k](reg_feat), self.obj_preds[k](reg_feat), cls_out), 1))
        return outs


STRIDES = (8, 16, 32)


class YoloxNano(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.neck = PAFPN()
        self.head = Head(num_classes)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return self.head(self.neck(x))


def export_form(levels: list[torch.Tensor]) -> torch.Tensor:
    """The layout of the released ONNX file (PROVENANCE.md 1.1): [B, N, 5 + nc], rows in stride
    order, each grid row-major; box values not decoded, obj and class scores sigmoid-ed."""
    flat = []
    for o in levels:
        o = torch.cat((o[:, :4], o[:, 4:].sigmoid()), 1)
        flat.append(o.flatten(2))
    return torch.cat(flat, 2).permute(0, 2, 1)


class ExportWrapper(nn.Module):
    def __init__(self, model: YoloxNano):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return export_form(self.model(x))


def _conv_order(model: nn.Module, size: int = 64) -> list[nn.Conv2d]:
    order: list[nn.Conv2d] = []
    hooks = [m.register_forward_hook(lambda mod, i, o: order.append(mod)) for m in model.modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        model(torch.zeros(1, 3, size, size))
    for h in hooks:
        h.remove()
    return order


def load_onnx_weights(model: YoloxNano, onnx_path: str, skip_cls: bool) -> int:
    """Copies the Conv weights of the released ONNX file onto `model`, matching the convolutions in
    execution order (the ONNX node order is the trace order of the same forward). With skip_cls the
    80-class prediction convs are left at their fresh initialisation. Returns the count copied."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(onnx_path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    onnx_convs = [n for n in m.graph.node if n.op_type == "Conv"]
    ours = _conv_order(model)
    if len(onnx_convs) != len(ours):
        raise ValueError(f"conv count differs: onnx {len(onnx_convs)} vs model {len(ours)}")
    cls_preds = set(id(c) for c in model.head.cls_preds)
    copied = 0
    for node, conv in zip(onnx_convs, ours):
        w = torch.from_numpy(inits[node.input[1]].copy())
        b = torch.from_numpy(inits[node.input[2]].copy())
        if id(conv) in cls_preds and skip_cls:
            continue
        if tuple(w.shape) != tuple(conv.weight.shape):
            raise ValueError(f"shape mismatch at {node.name}: {tuple(w.shape)} vs {tuple(conv.weight.shape)}")
        conv.weight.data.copy_(w)
        conv.bias.data.copy_(b)
        copied += 1
    return copied
