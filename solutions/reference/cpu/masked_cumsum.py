"""Masked cumulative sum, C++: x * mask is folded into the scan (mask read as bool bytes), double accumulator as in eager; blocks of 8 rows are scanned together so 8 independent add chains hide the add latency; row blocks are split across threads with at::parallel_for. Measured on the 2-core CI machine (torch 2.13 CPU, `harness run --timing-budget 10`): 0.646 ms vs eager 1.500 ms (2.32x), 55% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cstdint>

constexpr int64_t ROW_BLOCK = 8;

// Rows [r0, r1) of contiguous (R, N) x and mask: y[r, j] = sum_{k <= j} x[r, k] * mask[r, k].
static void masked_cumsum_rows(const float* __restrict__ x, const bool* __restrict__ m,
                               float* __restrict__ y, int64_t r0, int64_t r1, int64_t N) {
    int64_t r = r0;
    for (; r + ROW_BLOCK <= r1; r += ROW_BLOCK) {
        const float* __restrict__ xb = x + r * N;
        const bool* __restrict__ mb = m + r * N;
        float* __restrict__ yb = y + r * N;
        double acc[ROW_BLOCK];
        for (int k = 0; k < ROW_BLOCK; ++k) acc[k] = 0.0;
        for (int64_t j = 0; j < N; ++j) {
            for (int k = 0; k < ROW_BLOCK; ++k) {
                acc[k] += (double)(xb[k * N + j] * (float)mb[k * N + j]);
                yb[k * N + j] = (float)acc[k];
            }
        }
    }
    for (; r < r1; ++r) {
        const float* __restrict__ xr = x + r * N;
        const bool* __restrict__ mr = m + r * N;
        float* __restrict__ yr = y + r * N;
        double acc = 0.0;
        for (int64_t j = 0; j < N; ++j) {
            acc += (double)(xr[j] * (float)mr[j]);
            yr[j] = (float)acc;
        }
    }
}

torch::Tensor masked_cumsum(torch::Tensor x, torch::Tensor mask, int64_t dim) {
    TORCH_CHECK(x.device().is_cpu() && mask.device().is_cpu(), "expected CPU tensors");
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D float32 x");
    TORCH_CHECK(mask.scalar_type() == torch::kBool && mask.sizes() == x.sizes(),
                "expected a bool mask with the shape of x");
    TORCH_CHECK(dim == 1 || dim == -1, "only the last dimension is supported");
    auto xc = x.contiguous();
    auto mc = mask.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t R = xc.size(0), N = xc.size(1);
    if (R == 0 || N == 0) return out;
    const float* xp = xc.data_ptr<float>();
    const bool* mp = mc.data_ptr<bool>();
    float* yp = out.data_ptr<float>();
    const int64_t nblocks = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    at::parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
        masked_cumsum_rows(xp, mp, yp, b0 * ROW_BLOCK, std::min(R, b1 * ROW_BLOCK), N);
    });
    return out;
}
"""

_ext = load_inline(
    name="masked_cumsum_cpu",
    cpp_sources=CPP_SOURCE,
    functions=["masked_cumsum"],
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return _ext.masked_cumsum(x, mask, self.dim)
