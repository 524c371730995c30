"""Summed embedding bags: nn.EmbeddingBag(131072, 512, mode="sum") over 16384 bags of 64 int64 ids, trained.

out[b, :] = sum over l of weight[ids[b, l], :]. The backward is the point: the gradient of the table is a
scatter-add, grad_weight[r, :] = sum over every (b, l) with ids[b, l] == r of g[b, :], and each row is looked up
about 8 times across the bags (rows that are never looked up get zeros). Judged: the output and the gradient of
embedding_bag.weight (the ids get none), for an upstream gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn

NUM_EMBEDDINGS = 131072
DIM = 512
BAGS = 16384
BAG_SIZE = 64

TAGS = ["indexing", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "small_table", "set": {"NUM_EMBEDDINGS": 8000, "BAGS": 1000, "BAG_SIZE": 32}, "public": True,
     "about": "a smaller table and fewer bags"},
    {"name": "unaligned", "set": {"NUM_EMBEDDINGS": 5001, "DIM": 1000, "BAGS": 999, "BAG_SIZE": 7},
     "about": "a table size, an embedding width and a bag count that are not multiples of 32, short bags"},
    {"name": "hot_rows", "set": {"NUM_EMBEDDINGS": 500, "DIM": 100, "BAGS": 1000, "BAG_SIZE": 50},
     "about": "a small table whose every row is looked up about a hundred times"},
    {"name": "narrow", "set": {"NUM_EMBEDDINGS": 100003, "DIM": 17, "BAGS": 300, "BAG_SIZE": 300},
     "about": "very narrow embeddings over a large table"},
    {"name": "drawn", "set": {"NUM_EMBEDDINGS": (64, 2000), "DIM": (16, 600), "BAGS": (64, 600),
                              "BAG_SIZE": (8, 40)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.EmbeddingBag(num_embeddings, dim, mode='sum') on 2-D ids (one bag per row); table N(0, 1) init."""

    def __init__(self, num_embeddings: int, dim: int):
        super().__init__()
        self.embedding_bag = nn.EmbeddingBag(num_embeddings, dim, mode="sum")

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding_bag(ids)


def get_inputs():
    return [torch.randint(0, NUM_EMBEDDINGS, (BAGS, BAG_SIZE))]


def get_init_inputs():
    return [NUM_EMBEDDINGS, DIM]
