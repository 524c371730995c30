"""2-layer nn.LSTM (input 128, hidden 512) over a (128, 256, 128) batch, then Linear 512->128 on the top layer's last hidden state.

_, (h_n, _) = lstm(x); out = h_n[-1] @ W^T + b. h and c start at zero. Output: (128, 128).
LSTM weight matrices are drawn from U(-3/sqrt(H), 3/sqrt(H)) (3x the default range; biases default).
"""
import torch
import torch.nn as nn

BATCH = 128
SEQ_LEN = 256
INPUT_SIZE = 128
HIDDEN_SIZE = 512
NUM_LAYERS = 2
NUM_OUTPUTS = 128

TAGS = ["architecture", "rnn", "compute-bound"]
# the FLOP counter does not see nn.LSTM: sum over layers of 2 * B * T * (in + H) * 4H, plus the head's 2 * B * H * 128
FLOPS = 223355076608
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 60}, "about": "a batch of one sequence"},
    {"name": "ragged", "set": {"BATCH": 7, "SEQ_LEN": 50, "INPUT_SIZE": 100, "HIDDEN_SIZE": 300, "NUM_LAYERS": 3,
                               "NUM_OUTPUTS": 10},
     "about": "a ragged batch, sizes that are not multiples of 32, a deeper stack and few outputs"},
]


class Model(nn.Module):
    """Sequence classifier: stacked LSTM and a linear head on the final hidden state."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, num_outputs: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)
        bound = 3.0 / hidden_size ** 0.5  # 3x PyTorch's default range: deeper layers' states would otherwise be ~0.02
        for name, weight in self.lstm.named_parameters():
            if name.startswith("weight"):
                nn.init.uniform_(weight, -bound, bound)
        self.head = nn.Linear(hidden_size, num_outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (h_n, _) = self.lstm(x)
        return self.head(h_n[-1])


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN_SIZE, NUM_LAYERS, NUM_OUTPUTS]
