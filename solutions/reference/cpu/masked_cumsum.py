"""Masked cumulative sum, C++: x * mask is folded into the scan (mask read as bool bytes), double accumulator as in eager; blocks of 8 rows are scanned together so 8 independent add chains hide the add latency; row blocks are split across threads with at::parallel_for. Measured on the 2-core CI machine, torch 2.13 CPU (2026-12-06, `harness eval`, other work on the cores): 0.661 ms vs eager 1.689 ms (2.55x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>
#include <algorithm>
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

// y = cumsum(x * mask) along the rows of contiguous (R, N) float32 x and bool mask; y (R, N) allocated by the caller.
void masked_cumsum(std::uintptr_t x_ptr, std::uintptr_t m_ptr, std::uintptr_t y_ptr, std::int64_t R, std::int64_t N) {
    if (R == 0 || N == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_ptr);
    const bool* mp = reinterpret_cast<const bool*>(m_ptr);
    float* yp = reinterpret_cast<float*>(y_ptr);
    const int64_t nblocks = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    at::parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
        masked_cumsum_rows(xp, mp, yp, b0 * ROW_BLOCK, std::min(R, b1 * ROW_BLOCK), N);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("masked_cumsum", &masked_cumsum); }
"""

_ext = load_inline(
    name="masked_cumsum_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not (x.is_cpu and mask.is_cpu):
            raise ValueError("expected CPU tensors")
        if x.dim() != 2:
            raise ValueError("expected a 2-D float32 x")
        if x.dtype != torch.float32:
            raise TypeError("expected a 2-D float32 x")
        if mask.dtype != torch.bool:
            raise TypeError("expected a bool mask with the shape of x")
        if mask.shape != x.shape:
            raise ValueError("expected a bool mask with the shape of x")
        if self.dim not in (1, -1):
            raise ValueError("only the last dimension is supported")
        x = x.contiguous()
        mask = mask.contiguous()
        out = torch.empty_like(x)
        R, N = x.shape
        _ext.masked_cumsum(x.data_ptr(), mask.data_ptr(), out.data_ptr(), R, N)
        return out
