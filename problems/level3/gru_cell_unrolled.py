"""GRU written out: gate math unrolled over 128 time steps (input 256, hidden 512) on a (64, 128, 256) batch; returns all hidden states.

xp = x @ W_ih^T + b_ih (all steps at once); for t: hp = h @ W_hh^T + b_hh;
r = sigmoid(xp_r + hp_r); z = sigmoid(xp_z + hp_z); n = tanh(xp_n + r * hp_n); h = (1 - z) * n + z * h
(chunks in nn.GRU's order r, z, n). h starts at zero. Output: (64, 128, 512), h at every step.
"""
import torch
import torch.nn as nn

BATCH = 64
SEQ_LEN = 128
INPUT_SIZE = 256
HIDDEN_SIZE = 512

TAGS = ["architecture", "rnn", "compute-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 100}, "about": "a batch of one sequence"},
    {"name": "ragged", "set": {"BATCH": 7, "SEQ_LEN": 40, "INPUT_SIZE": 100, "HIDDEN_SIZE": 300},
     "about": "a ragged batch with input and hidden sizes that are not multiples of 32"},
]


class Model(nn.Module):
    """Single-layer GRU with explicit gates."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.ih = nn.Linear(input_size, 3 * hidden_size)
        self.hh = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        xp = self.ih(x)
        h = x.new_zeros(batch, self.hidden_size)
        outputs = []
        for t in range(steps):
            xr, xz, xn = xp[:, t].chunk(3, dim=1)
            hr, hz, hn = self.hh(h).chunk(3, dim=1)
            r = torch.sigmoid(xr + hr)
            z = torch.sigmoid(xz + hz)
            n = torch.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
            outputs.append(h)
        return torch.stack(outputs, dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
