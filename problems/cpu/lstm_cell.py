"""One LSTM cell step (input 512, hidden 512) on a batch of 128, returning (h', c') (CPU-sized)."""
import torch
import torch.nn as nn

BATCH = 128
INPUT_SIZE = 512
HIDDEN_SIZE = 512

TAGS = ["rnn", "compute-bound"]
WORKLOADS = [
    {"name": "unaligned", "set": {"BATCH": 33, "INPUT_SIZE": 100, "HIDDEN_SIZE": 257},
     "about": "a batch, input size and hidden size that are not multiples of 32"},
    {"name": "one_row", "set": {"BATCH": 1}, "about": "a batch of one row"},
    {"name": "drawn", "set": {"BATCH": (1, 40), "INPUT_SIZE": (8, 300), "HIDDEN_SIZE": (8, 300)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """gates = x W_ih^T + b_ih + h W_hh^T + b_hh, split into i, f, g, o;
    c' = sigmoid(f) * c + sigmoid(i) * tanh(g); h' = sigmoid(o) * tanh(c')."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        return self.cell(x, (h, c))


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE), torch.randn(BATCH, HIDDEN_SIZE), torch.randn(BATCH, HIDDEN_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE]
