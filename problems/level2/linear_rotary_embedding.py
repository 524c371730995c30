"""Query projection (4 x 2048 tokens, 4096 -> 32 heads x 128, no bias) + head split + rotary position embedding, fp32.

q = (x @ W^T).view(B, T, H, D); out = q * cos + rotate_half(q) * sin (RoPE, theta 10000), returned as (B, H, T, D).
"""
import torch
import torch.nn as nn

BATCH = 4
SEQ_LEN = 2048
HIDDEN = 4096
NUM_HEADS = 32
ROPE_THETA = 10000.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 128},
     "public": True, "about": "a batch of one short sequence"},
    {"name": "unaligned", "set": {"BATCH": 2, "SEQ_LEN": 999, "HIDDEN": 1000, "NUM_HEADS": 10},
     "about": "a sequence length, hidden size and head size that are not powers of two"},
    {"name": "drawn", "set": {"BATCH": (1, 3), "SEQ_LEN": (1, 600), "HIDDEN": 768, "NUM_HEADS": 6},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Bias-free projection, (B, T, H, D) view, LLaMA-style rotary embedding, (B, H, T, D) layout."""

    def __init__(self, hidden: int, num_heads: int, seq_len: int, theta: float):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden // num_heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        inv_freq = 1.0 / theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim)
        angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)  # (T, D)
        self.register_buffer("cos", angles.cos()[None, :, None, :])
        self.register_buffer("sin", angles.sin()[None, :, None, :])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.num_heads, self.head_dim)
        half = self.head_dim // 2
        rotated = torch.cat([-q[..., half:], q[..., :half]], dim=-1)
        q = q * self.cos + rotated * self.sin
        return q.transpose(1, 2)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, NUM_HEADS, SEQ_LEN, ROPE_THETA]
