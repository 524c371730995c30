"""GRU cell step: input and hidden projections (4096 x 2048 -> 3 x 2048 each) + reset/update gates + candidate, fp32.

gi = x W_ih^T + b_ih, gh = h W_hh^T + b_hh (each split r, z, n); r = sigmoid(gi_r + gh_r),
z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n); out = (1 - z) * n + z * h (torch.nn.GRUCell semantics).
"""
import torch
import torch.nn as nn

BATCH = 4096
INPUT_SIZE = 2048
HIDDEN_SIZE = 2048

TAGS = ["fusion", "matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_row", "set": {"BATCH": 1}, "public": True, "about": "a batch of one row"},
    {"name": "unaligned", "set": {"BATCH": 257, "INPUT_SIZE": 1000, "HIDDEN_SIZE": 999},
     "about": "a row count, input size and hidden size that are not multiples of 32"},
    {"name": "narrow_input", "set": {"BATCH": 300, "INPUT_SIZE": 67, "HIDDEN_SIZE": 1500},
     "about": "an input much narrower than the hidden state"},
    {"name": "drawn", "set": {"BATCH": (1, 500), "INPUT_SIZE": (50, 1000), "HIDDEN_SIZE": (50, 1000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """One GRU step written out: two projections and the gate arithmetic."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 3 * hidden_size)
        self.hh = nn.Linear(hidden_size, 3 * hidden_size)
        with torch.no_grad():
            self.ih.weight.mul_(2.0)
            self.hh.weight.mul_(2.0)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        i_r, i_z, i_n = self.ih(x).chunk(3, dim=-1)
        h_r, h_z, h_n = self.hh(h).chunk(3, dim=-1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1.0 - z) * n + z * h


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE).tanh()]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
