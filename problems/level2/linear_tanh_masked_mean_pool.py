"""Linear on (32, 256, 4096) tokens -> 4096 + tanh + mean over the valid (unpadded) tokens of each sequence, fp32.

y = tanh(x @ W^T + b); out[b] = sum_t mask[b, t] * y[b, t] / sum_t mask[b, t], shape (32, 4096).
"""
import torch
import torch.nn as nn

BATCH = 32
SEQ_LEN = 256
IN_FEATURES = 4096
OUT_FEATURES = 4096

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_sample", "set": {"BATCH": 1}, "public": True, "about": "a batch of one sequence"},
    {"name": "unaligned", "set": {"BATCH": 3, "SEQ_LEN": 999, "IN_FEATURES": 500, "OUT_FEATURES": 1001},
     "about": "long sequences, and sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 8), "SEQ_LEN": (1, 700), "IN_FEATURES": (64, 800),
                              "OUT_FEATURES": (64, 1200)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Token projection with tanh, then attention-mask-weighted mean pooling (sentence embedding)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.fc.weight.mul_(2.0)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(self.fc(x))
        m = mask.unsqueeze(-1).to(y.dtype)
        return (y * m).sum(dim=1) / m.sum(dim=1)


def get_inputs():
    # tokens of a sequence share a component, so the pooled vectors are not ~0
    x = torch.randn(BATCH, SEQ_LEN, IN_FEATURES) + 0.7 * torch.randn(BATCH, 1, IN_FEATURES)
    lengths = torch.randint(1, SEQ_LEN + 1, (BATCH,))
    mask = torch.arange(SEQ_LEN)[None, :] < lengths[:, None]
    return [x, mask]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
