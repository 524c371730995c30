"""Vanilla (Elman) tanh RNN written out over 256 time steps (input 256, hidden 1024) on a (128, 256, 256) batch; returns all hidden states.

xp = x @ W_ih^T + b_ih (all steps at once); for t: h = tanh(xp[:, t] + h @ W_hh^T + b_hh); h starts at zero.
Output: (128, 256, 1024).
"""
import torch
import torch.nn as nn

BATCH = 128
SEQ_LEN = 256
INPUT_SIZE = 256
HIDDEN_SIZE = 1024

TAGS = ["architecture", "rnn", "compute-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 100}, "about": "a batch of one sequence"},
    {"name": "ragged", "set": {"BATCH": 7, "SEQ_LEN": 40, "INPUT_SIZE": 100, "HIDDEN_SIZE": 300},
     "about": "a ragged batch with input and hidden sizes that are not multiples of 32"},
]


class Model(nn.Module):
    """Single-layer tanh RNN with an explicit time loop."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.ih = nn.Linear(input_size, hidden_size)
        self.hh = nn.Linear(hidden_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        xp = self.ih(x)
        h = x.new_zeros(batch, self.hidden_size)
        outputs = []
        for t in range(steps):
            h = torch.tanh(xp[:, t] + self.hh(h))
            outputs.append(h)
        return torch.stack(outputs, dim=1)


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
