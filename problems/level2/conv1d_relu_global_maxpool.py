"""Conv1d k5 (512->512 channels, length 2048, valid) + ReLU + max over time -> (128, 512) features, fp32.

The TextCNN pattern over token embeddings: y[n, c] = max over t of relu(conv1d(x, W, b))[n, c, t].
"""
import torch
import torch.nn as nn

BATCH = 128
IN_CHANNELS = 512
OUT_CHANNELS = 512
LENGTH = 2048
KERNEL = 5

TAGS = ["fusion", "conv", "compute-bound"]
WORKLOADS = [
    {"name": "one_signal", "set": {"BATCH": 1, "LENGTH": 700}, "public": True,
     "about": "a batch of one sequence whose length is not a multiple of 32"},
    {"name": "odd_channels", "set": {"BATCH": 9, "IN_CHANNELS": 100, "OUT_CHANNELS": 300, "LENGTH": 333, "KERNEL": 3},
     "about": "channel counts that are not multiples of 32, a smaller kernel and a short odd length"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "IN_CHANNELS": (16, 200), "OUT_CHANNELS": (16, 200),
                              "LENGTH": (8, 300)},
     "about": "batch, channel counts and length drawn at random"},
]


class Model(nn.Module):
    """Valid conv over the sequence, ReLU, global max pooling over time."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)).amax(dim=2)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
