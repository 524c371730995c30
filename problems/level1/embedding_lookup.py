"""nn.Embedding lookup of (64, 16384) int64 ids in a (131072, 1024) fp32 table."""
import torch
import torch.nn as nn

VOCAB = 131072
DIM = 1024
BATCH = 64
SEQ = 16384

TAGS = ["indexing", "memory-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"VOCAB": 8000, "BATCH": 1, "SEQ": 2048}, "public": True,
     "about": "a single shorter sequence over a smaller vocabulary"},
    {"name": "unaligned", "set": {"VOCAB": 5001, "DIM": 1000, "BATCH": 3, "SEQ": 999},
     "about": "a vocabulary, an embedding width and a sequence length that are not multiples of 32"},
    {"name": "narrow", "set": {"VOCAB": 100003, "DIM": 17, "BATCH": 8, "SEQ": 3001},
     "about": "very narrow embeddings over a large vocabulary"},
    {"name": "drawn", "set": {"VOCAB": (100, 8000), "DIM": (16, 1000), "BATCH": (1, 4), "SEQ": (10, 2000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """out[b, s, :] = weight[ids[b, s], :]; the table is an nn.Embedding parameter (N(0, 1) init)."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding(ids)


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ))]


def get_init_inputs():
    return [VOCAB, DIM]
