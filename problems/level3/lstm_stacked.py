"""3-layer nn.LSTM (input 256, hidden 512, batch_first) over a (64, 256, 256) sequence batch; returns the top layer's outputs.

Standard LSTM recurrence per layer (gates i, f, g, o); layer k+1 consumes layer k's hidden states;
h and c start at zero. Output: (64, 256, 512).
LSTM weight matrices are drawn from U(-3/sqrt(H), 3/sqrt(H)) (3x the default range; biases default).
"""
import torch
import torch.nn as nn

BATCH = 64
SEQ_LEN = 256
INPUT_SIZE = 256
HIDDEN_SIZE = 512
NUM_LAYERS = 3

TAGS = ["architecture", "rnn", "compute-bound"]
# the FLOP counter does not see nn.LSTM: sum over layers of 2 * B * T * (in + H) * 4H (the gate matmuls)
FLOPS = 188978561024
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 60}, "about": "a batch of one sequence"},
    {"name": "ragged", "set": {"BATCH": 7, "SEQ_LEN": 50, "INPUT_SIZE": 100, "HIDDEN_SIZE": 300, "NUM_LAYERS": 2},
     "about": "a ragged batch, sizes that are not multiples of 32 and fewer layers"},
]


class Model(nn.Module):
    """Stacked unidirectional LSTM."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)
        bound = 3.0 / hidden_size ** 0.5  # 3x PyTorch's default range: deeper layers' states would otherwise be ~0.02
        for name, weight in self.lstm.named_parameters():
            if name.startswith("weight"):
                nn.init.uniform_(weight, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output, _ = self.lstm(x)
        return output


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS]
