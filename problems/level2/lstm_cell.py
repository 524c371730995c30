"""LSTM cell step: input and hidden projections (4096 x 2048 -> 4 x 2048 each) + i/f/g/o gates + cell update; returns (h', c'), fp32.

gates = x W_ih^T + b_ih + h W_hh^T + b_hh -> i, f, g, o; c' = sigmoid(f) * c + sigmoid(i) * tanh(g);
h' = sigmoid(o) * tanh(c') (torch.nn.LSTMCell semantics).
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
    """One LSTM step written out: two projections, gate nonlinearities, cell and hidden update."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)
        with torch.no_grad():
            self.ih.weight.mul_(2.0)
            self.hh.weight.mul_(2.0)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, dim=-1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_next = torch.sigmoid(o) * torch.tanh(c_next)
        return h_next, c_next


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE).tanh(), torch.randn(BATCH, HIDDEN_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
