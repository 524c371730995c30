"""nn.Embedding lookup of (64, 16384) int64 ids in a (131072, 1024) fp32 table."""
import torch
import torch.nn as nn

VOCAB = 131072
DIM = 1024
BATCH = 64
SEQ = 16384

TAGS = ["indexing", "memory-bound"]


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
