"""2-layer bidirectional nn.GRU (input 256, hidden 512 per direction, batch_first) over a (64, 256, 256) batch; returns all outputs.

Each layer runs a forward-in-time and a backward-in-time GRU and concatenates their hidden states
(1024 features), which feed the next layer; h starts at zero. Output: (64, 256, 1024).
"""
import torch
import torch.nn as nn

BATCH = 64
SEQ_LEN = 256
INPUT_SIZE = 256
HIDDEN_SIZE = 512
NUM_LAYERS = 2

TAGS = ["architecture", "rnn", "compute-bound"]
# the FLOP counter does not see nn.GRU: sum over layers and directions of 2 * B * T * (in + H) * 3H
FLOPS = 231928233984
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 60}, "about": "a batch of one sequence"},
    {"name": "ragged", "set": {"BATCH": 5, "SEQ_LEN": 50, "INPUT_SIZE": 100, "HIDDEN_SIZE": 300},
     "about": "a ragged batch with input and hidden sizes that are not multiples of 32"},
]


class Model(nn.Module):
    """Stacked bidirectional GRU."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=num_layers, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output, _ = self.gru(x)
        return output


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS]
