"""Mamba-style selective state-space block: in_proj, causal depthwise conv1d, input-dependent (delta, B, C), diagonal linear recurrence over 512 steps, gated out_proj, on (8, 512, 512).

u, z = split(in_proj(x)) (d_inner = 1024 each); u = silu(causal_dwconv1d_k4(u));
dt, B, C = split(x_proj(u)) (ranks 32, 16, 16); delta = softplus(dt_proj(dt)) (B, L, 1024); A = -exp(A_log) (1024, 16);
h_t = exp(delta_t A) * h_{t-1} + delta_t B_t u_t   (state (batch, 1024, 16), h_0 = 0, elementwise per channel/state);
y_t = h_t @ C_t + D * u_t; out = out_proj(y * silu(z)). The scan is an explicit Python loop over time.
Projections use normal(0, 1/fan_in) weights so the scan term is a sizeable part of the output (not swamped by D * u).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ_LEN = 512
D_MODEL = 512
D_INNER = 1024
D_STATE = 16
DT_RANK = 32
CONV_KERNEL = 4

TAGS = ["architecture", "ssm", "memory-bound"]
WORKLOADS = [
    {"name": "one_sequence", "set": {"BATCH": 1, "SEQ_LEN": 300}, "about": "a single sequence of ragged length"},
    {"name": "narrow", "set": {"BATCH": 3, "SEQ_LEN": 100, "D_MODEL": 256, "D_INNER": 500, "D_STATE": 8,
                               "DT_RANK": 16},
     "about": "a narrower block with a smaller state and an inner width that is not a multiple of 32"},
]


class Model(nn.Module):
    """Selective SSM (S6) block with a sequential scan."""

    def __init__(self, d_model: int, d_inner: int, d_state: int, dt_rank: int, conv_kernel: int):
        super().__init__()
        self.d_state = d_state
        self.dt_rank = dt_rank
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, conv_kernel, groups=d_inner, padding=conv_kernel - 1)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)
        for proj in (self.in_proj, self.x_proj, self.out_proj):  # unit-gain init keeps the scan's share of the output large
            nn.init.normal_(proj.weight, std=proj.in_features ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        u, z = self.in_proj(x).chunk(2, dim=-1)
        u = F.silu(self.conv1d(u.transpose(1, 2))[..., :steps].transpose(1, 2))
        dt, b, c = self.x_proj(u).split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = F.softplus(self.dt_proj(dt))                                  # (batch, L, d_inner)
        A = -torch.exp(self.A_log)                                             # (d_inner, d_state)
        decay = torch.exp(delta.unsqueeze(-1) * A)                             # (batch, L, d_inner, d_state)
        drive = (delta * u).unsqueeze(-1) * b.unsqueeze(2)                     # (batch, L, d_inner, d_state)
        h = x.new_zeros(batch, u.shape[-1], self.d_state)
        ys = []
        for t in range(steps):
            h = torch.addcmul(drive[:, t], decay[:, t], h)
            ys.append(torch.bmm(h, c[:, t].unsqueeze(-1)).squeeze(-1))
        y = torch.stack(ys, dim=1) + u * self.D
        return self.out_proj(y * F.silu(z))


def get_inputs():
    return [torch.randn(BATCH, SEQ_LEN, D_MODEL)]


def get_init_inputs():
    return [D_MODEL, D_INNER, D_STATE, DT_RANK, CONV_KERNEL]
