"""4-D tensor times matrix over the last dim: einsum('bijl,lk->bijk'), (8, 256, 512, 256) x (256, 768).

C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k]. B is scaled by 1/sqrt(L) so entries of C are O(1).
"""
import torch
import torch.nn as nn

B_DIM = 8
I_DIM = 256
J_DIM = 512
L_DIM = 256
K_DIM = 768

TAGS = ["matmul", "compute-bound"]
WORKLOADS = [
    {"name": "one_batch", "set": {"B_DIM": 1, "I_DIM": 3, "J_DIM": 333}, "public": True,
     "about": "a batch of one with few rows"},
    {"name": "unaligned", "set": {"B_DIM": 2, "I_DIM": 7, "J_DIM": 99, "L_DIM": 257, "K_DIM": 1001},
     "about": "leading, reduced and output sizes that are not multiples of 32"},
    {"name": "drawn", "set": {"B_DIM": (1, 3), "I_DIM": (1, 8), "J_DIM": (10, 200), "L_DIM": (16, 300),
                              "K_DIM": (16, 600)}, "about": "sizes drawn at random"},
]


class Model(nn.Module):
    """C = torch.einsum('bijl,lk->bijk', A, B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.randn(B_DIM, I_DIM, J_DIM, L_DIM), torch.randn(L_DIM, K_DIM) / L_DIM**0.5]


def get_init_inputs():
    return []
