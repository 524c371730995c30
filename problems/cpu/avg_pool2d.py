"""2-D average pooling, 4x4 window, stride 4, over a (16, 32, 128, 128) fp32 tensor (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
HEIGHT = 128
WIDTH = 128
KERNEL = 4

TAGS = ["pooling", "memory-bound"]


class Model(nn.Module):
    """out[n, c, i, j] = mean of x[n, c, 4i:4i+4, 4j:4j+4] (non-overlapping windows)."""

    def __init__(self, kernel: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    # Offset so window means are not centred on zero.
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 1]


def get_init_inputs():
    return [KERNEL]
