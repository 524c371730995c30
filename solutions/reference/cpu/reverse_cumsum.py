"""Reverse cumulative sum, C++: each row is scanned once from its end with a double accumulator (as eager does); blocks of 8 rows are scanned together so 8 independent add chains hide the add latency; row blocks are split across threads with at::parallel_for. Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 0.499 ms vs eager 1.358 ms (2.72x), 32% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

constexpr int64_t ROW_BLOCK = 8;

// Rows [r0, r1) of a contiguous (R, N) float matrix: y[r, j] = sum_{k >= j} x[r, k].
static void reverse_cumsum_rows(const float* __restrict__ x, float* __restrict__ y,
                                int64_t r0, int64_t r1, int64_t N) {
    int64_t r = r0;
    for (; r + ROW_BLOCK <= r1; r += ROW_BLOCK) {
        const float* __restrict__ xb = x + r * N;
        float* __restrict__ yb = y + r * N;
        double acc[ROW_BLOCK];
        for (int k = 0; k < ROW_BLOCK; ++k) acc[k] = 0.0;
        for (int64_t j = N - 1; j >= 0; --j) {
            for (int k = 0; k < ROW_BLOCK; ++k) {
                acc[k] += (double)xb[k * N + j];
                yb[k * N + j] = (float)acc[k];
            }
        }
    }
    for (; r < r1; ++r) {
        const float* __restrict__ xr = x + r * N;
        float* __restrict__ yr = y + r * N;
        double acc = 0.0;
        for (int64_t j = N - 1; j >= 0; --j) {
            acc += (double)xr[j];
            yr[j] = (float)acc;
        }
    }
}

// x, y: addresses of contiguous (R, N) float32 matrices; y[r, j] = sum_{k >= j} x[r, k].
void reverse_cumsum(std::uintptr_t x_addr, std::uintptr_t y_addr, std::int64_t R, std::int64_t N) {
    if (R == 0 || N == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    const int64_t nblocks = (R + ROW_BLOCK - 1) / ROW_BLOCK;
    at::parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
        reverse_cumsum_rows(xp, yp, b0 * ROW_BLOCK, std::min(R, b1 * ROW_BLOCK), N);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("reverse_cumsum", &reverse_cumsum);
}
"""

_ext = load_inline(
    name="reverse_cumsum_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cpu":
            raise ValueError("expected a CPU tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a 2-D float32 tensor")
        if x.dim() != 2:
            raise ValueError("expected a 2-D float32 tensor")
        if self.dim not in (1, -1):
            raise ValueError("only the last dimension is supported")
        xc = x.contiguous()
        out = torch.empty_like(xc)
        _ext.reverse_cumsum(xc.data_ptr(), out.data_ptr(), xc.size(0), xc.size(1))
        return out
