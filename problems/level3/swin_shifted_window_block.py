"""Swin transformer block with shifted 7x7 window attention on a 56x56 map (B=64, C=128, 4 heads, MLP 512).

x (B, 56*56, C): LN, cyclic shift by -3, partition into 7x7 windows, per-window MHA with a learned relative position
bias and the shifted-window mask (-100 between tokens from different regions), merge windows, shift back, residual;
then x + MLP_GELU(LN(x)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
RESOLUTION = 56
DIM = 128
HEADS = 4
WINDOW = 7
SHIFT = 3
MLP_RATIO = 4

TAGS = ["architecture", "attention", "compute-bound"]
WORKLOADS = [
    {"name": "small_map", "set": {"BATCH": 2, "RESOLUTION": 28}, "about": "a smaller feature map and batch"},
    {"name": "other_width", "set": {"BATCH": 3, "RESOLUTION": 35, "DIM": 96, "HEADS": 3},
     "about": "a narrower model with fewer heads on an odd-sized feature map"},
    {"name": "other_window", "set": {"BATCH": 2, "RESOLUTION": 32, "WINDOW": 8, "SHIFT": 4},
     "about": "a different window size and shift"},
]


def window_partition(x: torch.Tensor, w: int) -> torch.Tensor:
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, w * w, c)


def window_merge(windows: torch.Tensor, w: int, b: int, h: int, wd: int) -> torch.Tensor:
    x = windows.view(b, h // w, wd // w, w, w, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h, wd, -1)


class Model(nn.Module):
    """One Swin-T stage-1 block with shift (SW-MSA)."""

    def __init__(self, dim: int, resolution: int, heads: int, window: int, shift: int, mlp_ratio: int):
        super().__init__()
        self.dim, self.res, self.heads, self.window, self.shift = dim, resolution, heads, window, shift
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)
        self.relative_position_bias_table = nn.Parameter(0.5 * torch.randn((2 * window - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("relative_position_index", rel[:, :, 0] * (2 * window - 1) + rel[:, :, 1])
        img_mask = torch.zeros(1, resolution, resolution, 1)
        cnt = 0
        for hs in (slice(0, -window), slice(-window, -shift), slice(-shift, None)):
            for ws in (slice(0, -window), slice(-window, -shift), slice(-shift, None)):
                img_mask[:, hs, ws, :] = cnt
                cnt += 1
        mask_windows = window_partition(img_mask, window).squeeze(-1)                  # (nW, w*w)
        diff = mask_windows[:, None, :] - mask_windows[:, :, None]
        self.register_buffer("attn_mask", torch.where(diff != 0, -100.0, 0.0))         # (nW, w*w, w*w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, length, c = x.shape
        r, w, n = self.res, self.window, self.window * self.window
        shortcut = x
        x = torch.roll(self.norm1(x).view(b, r, r, c), shifts=(-self.shift, -self.shift), dims=(1, 2))
        windows = window_partition(x, w)                                               # (B*nW, N, C)
        bw = windows.shape[0]
        qkv = self.qkv(windows).view(bw, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = torch.matmul(q, k.transpose(-2, -1))                                    # (B*nW, heads, N, N)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(n, n, -1)
        attn = attn + bias.permute(2, 0, 1).unsqueeze(0)
        n_windows = self.attn_mask.shape[0]
        attn = attn.view(b, n_windows, self.heads, n, n) + self.attn_mask[None, :, None]
        attn = torch.softmax(attn.view(bw, self.heads, n, n), dim=-1)
        out = self.proj(torch.matmul(attn, v).transpose(1, 2).reshape(bw, n, c))
        out = torch.roll(window_merge(out, w, b, r, r), shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + out.reshape(b, length, c)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def get_inputs():
    return [torch.randn(BATCH, RESOLUTION * RESOLUTION, DIM)]


def get_init_inputs():
    return [DIM, RESOLUTION, HEADS, WINDOW, SHIFT, MLP_RATIO]
