"""Averaged embedding bags of ragged length: nn.EmbeddingBag(131072, 512, mode="mean"), trained.

1048576 int64 ids are cut into 16384 bags at random offsets (bag b is ids[offsets[b]:offsets[b + 1]], the last runs
to the end; no bag is empty; lengths vary from 1 to several hundred, 64 on average). out[b, :] = the mean of
weight[i, :] over the ids i of bag b. The gradient of the table is a scatter-add of g[b, :] / len(b) into each row
bag b looked up (each row about 8 times in all). Judged: the output and the gradient of embedding_bag.weight (the
ids and offsets get none), for an upstream gradient g drawn anew for every call.
"""
import torch
import torch.nn as nn

NUM_EMBEDDINGS = 131072
DIM = 512
BAGS = 16384
TOTAL = 1048576  # ids in all bags together (>= BAGS)

TAGS = ["indexing", "memory-bound", "training"]
TRAINING = True
WORKLOADS = [
    {"name": "small_table", "set": {"NUM_EMBEDDINGS": 8000, "BAGS": 1000, "TOTAL": 32000}, "public": True,
     "about": "a smaller table and fewer bags"},
    {"name": "unaligned", "set": {"NUM_EMBEDDINGS": 5001, "DIM": 1000, "BAGS": 999, "TOTAL": 7001},
     "about": "a table size, an embedding width and a bag count that are not multiples of 32, short bags"},
    {"name": "hot_rows", "set": {"NUM_EMBEDDINGS": 500, "DIM": 100, "BAGS": 1000, "TOTAL": 50000},
     "about": "a small table whose every row is looked up about a hundred times"},
    {"name": "one_bag", "set": {"NUM_EMBEDDINGS": 40, "DIM": 300, "BAGS": 1, "TOTAL": 60},
     "about": "a single bag over a small table"},
    {"name": "drawn", "set": {"NUM_EMBEDDINGS": (64, 2000), "DIM": (16, 600), "BAGS": (64, 600),
                              "TOTAL": (1000, 20000)},
     "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """nn.EmbeddingBag(num_embeddings, dim, mode='mean') on 1-D ids and bag offsets; table N(0, 1) init."""

    def __init__(self, num_embeddings: int, dim: int):
        super().__init__()
        self.embedding_bag = nn.EmbeddingBag(num_embeddings, dim, mode="mean")

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.embedding_bag(ids, offsets)


def get_inputs():
    ids = torch.randint(0, NUM_EMBEDDINGS, (TOTAL,))
    # BAGS - 1 distinct cut points in 1 .. TOTAL - 1, sorted: ragged bags, none empty
    cuts = torch.randperm(TOTAL - 1)[:BAGS - 1] + 1
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), cuts.sort().values])
    return [ids, offsets]


def get_init_inputs():
    return [NUM_EMBEDDINGS, DIM]
