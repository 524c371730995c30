"""SAC Gaussian policy head: Linear (8192 x 4096 -> 2 x 2048) split into mean and log-std, tanh-rescaled log-std, returns (tanh(mean), std), fp32.

mean, s = split(x @ W^T + b); log_std = lo + (hi - lo) * (tanh(s) + 1) / 2 with (lo, hi) = (-5, 2);
returns (tanh(mean), exp(log_std)).
"""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 4096
ACTION_DIM = 2048
LOG_STD_MIN = -5.0
LOG_STD_MAX = 2.0

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 999, "IN_FEATURES": 1000, "ACTION_DIM": 501},
     "about": "a row count and feature sizes that are not multiples of 32"},
    {"name": "tall", "set": {"BATCH": 4099, "IN_FEATURES": 257, "ACTION_DIM": 67},
     "about": "many rows with few input features and actions, none a multiple of 32"},
    {"name": "drawn", "set": {"BATCH": (1, 700), "IN_FEATURES": (64, 1500), "ACTION_DIM": (32, 700)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """Deterministic action and the bounded standard deviation of a squashed Gaussian policy."""

    def __init__(self, in_features: int, action_dim: int, log_std_min: float, log_std_max: float):
        super().__init__()
        self.fc = nn.Linear(in_features, 2 * action_dim)
        with torch.no_grad():
            self.fc.weight.mul_(2.0)
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max

    def forward(self, x: torch.Tensor):
        mean, log_std = self.fc(x).chunk(2, dim=-1)
        log_std = torch.tanh(log_std)
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (log_std + 1)
        return torch.tanh(mean), log_std.exp()


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, ACTION_DIM, LOG_STD_MIN, LOG_STD_MAX]
