"""Sum over one dimension (keepdim=False), C++: the tensor is viewed as (outer, reduced, inner) and split into strips of 256 contiguous inner columns, each strip summed by streaming 4 rows per sweep into an L1-resident float accumulator (vectorized over the columns, folded into a second accumulator every 256 rows to bound rounding growth) and written once; strips are handed out to at::parallel_for's threads from an atomic counter (a late-scheduled thread takes fewer); an AVX-512 or AVX2 build of the strip kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 7.431 ms vs eager 8.010 ms (1.08x), 4% of the speed of light."""
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

constexpr int64_t STRIP = 256;  // inner columns per work item (1 KiB of accumulator)
constexpr int64_t FOLD = 256;   // rows summed into the inner accumulator before it is folded

// f(c) for c in [0, n) on at::parallel_for's threads, the items handed out one at a time from an
// atomic counter: a thread the OS schedules late (the 2 cores are shared) takes fewer of them.
// Each item writes its own outputs, so the result does not depend on which thread ran it.
template <class F>
static void parallel_dynamic(int64_t n, const F& f) {
    std::atomic<int64_t> next{0};
    at::parallel_for(0, std::min<int64_t>(n, at::get_num_threads()), 1, [&](int64_t, int64_t) {
        for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < n;) f(c);
    });
}

// y[k] = sum_{i < R} x[i * K + k] for k in [0, W), W <= STRIP (x points at the strip's first column).
static ALWAYS_INLINE void sum_strip_impl(const float* __restrict__ x, float* __restrict__ y,
                                         int64_t R, int64_t K, int64_t W) {
    float acc[STRIP] __attribute__((aligned(64)));
    float tot[STRIP] __attribute__((aligned(64)));
    for (int64_t k = 0; k < W; ++k) tot[k] = 0.0f;
    for (int64_t i0 = 0; i0 < R; i0 += FOLD) {
        const int64_t i1 = std::min(R, i0 + FOLD);
        for (int64_t k = 0; k < W; ++k) acc[k] = 0.0f;
        int64_t i = i0;
        for (; i + 4 <= i1; i += 4) {
            const float* __restrict__ a = x + i * K;
            const float* __restrict__ b = a + K;
            const float* __restrict__ c = b + K;
            const float* __restrict__ d = c + K;
#pragma omp simd
            for (int64_t k = 0; k < W; ++k) acc[k] += (a[k] + b[k]) + (c[k] + d[k]);
        }
        for (; i < i1; ++i) {
            const float* __restrict__ a = x + i * K;
#pragma omp simd
            for (int64_t k = 0; k < W; ++k) acc[k] += a[k];
        }
#pragma omp simd
        for (int64_t k = 0; k < W; ++k) tot[k] += acc[k];
    }
#pragma omp simd
    for (int64_t k = 0; k < W; ++k) y[k] = tot[k];
}

using StripFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void sum_strip_baseline(const float* x, float* y, int64_t R, int64_t K, int64_t W) {
    sum_strip_impl(x, y, R, K, W);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void sum_strip_avx2(const float* x, float* y, int64_t R, int64_t K, int64_t W) {
    sum_strip_impl(x, y, R, K, W);
}

__attribute__((target("avx512f"), noinline))
static void sum_strip_avx512(const float* x, float* y, int64_t R, int64_t K, int64_t W) {
    sum_strip_impl(x, y, R, K, W);
}
#endif

static StripFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &sum_strip_avx512;
    if (__builtin_cpu_supports("avx2")) return &sum_strip_avx2;
#endif
    return &sum_strip_baseline;
}

// x: address of a contiguous (O, R, K) float32 tensor, y: of a contiguous (O, K) one; y[o, k] = sum_i x[o, i, k].
void sum_dim(std::uintptr_t x_addr, std::uintptr_t y_addr, std::int64_t O, std::int64_t R, std::int64_t K) {
    static const StripFn kernel = pick_kernel();
    if (O == 0 || K == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    const int64_t strips = (K + STRIP - 1) / STRIP;
    parallel_dynamic(O * strips, [&](int64_t c) {
        const int64_t o = c / strips, k0 = (c % strips) * STRIP;
        kernel(xp + o * R * K + k0, yp + o * K + k0, R, K, std::min(STRIP, K - k0));
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("sum_dim", &sum_dim);
}
"""

_ext = load_inline(
    name="sum_dim0_cpu",
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
            raise TypeError("expected a float32 tensor")
        if x.dim() < 1:
            raise ValueError("expected a float32 tensor")
        nd = x.dim()
        dim = self.dim + nd if self.dim < 0 else self.dim
        if not 0 <= dim < nd:
            raise ValueError("dim out of range")
        xc = x.contiguous()
        shape = xc.shape
        outer = math.prod(shape[:dim])
        inner = math.prod(shape[dim + 1:])
        out = torch.empty(shape[:dim] + shape[dim + 1:], dtype=torch.float32)
        _ext.sum_dim(xc.data_ptr(), out.data_ptr(), outer, shape[dim], inner)
        return out
