"""LSTM written out: gate math unrolled over 128 time steps (input 256, hidden 512) on a (64, 128, 256) batch; returns all hidden states.

xp = x @ W_ih^T + b_ih (all steps at once); for t: g = xp[:, t] + h @ W_hh^T + b_hh;
i, f, c~, o = sigmoid(g0), sigmoid(g1), tanh(g2), sigmoid(g3) (the four H-wide chunks of g);
c = f * c + i * c~; h = o * tanh(c). h and c start at zero. Output: (64, 128, 512), h at every step.
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
    """Single-layer LSTM with explicit gates (same gate order as nn.LSTM: i, f, g, o)."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        xp = self.ih(x)
        h = x.new_zeros(batch, self.hidden_size)
        c = x.new_zeros(batch, self.hidden_size)
        outputs = []
        for t in range(steps):
            gates = xp[:, t] + self.hh(h)
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
