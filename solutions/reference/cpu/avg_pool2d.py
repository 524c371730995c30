"""2-D average pooling (window = stride = k, no padding), C++: per output row one vectorized vertical sum of the k input rows into an L1-resident row, then a horizontal sum of each k-wide group times 1/k^2 (compile-time specialized for k = 2, 4, 8, generic otherwise), the input rows software-prefetched two output rows ahead; (sample, channel) planes split across threads with at::parallel_for; an AVX2 build of the plane kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 9.724 ms vs eager 12.012 ms (1.24x), 7% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cstdint>
#include <vector>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

// Horizontal pass: y[j] = (sum_{d < K} t[j * K + d]) * scale.
template <int K>
static ALWAYS_INLINE void hsum_fixed(const float* __restrict__ t, float* __restrict__ y, int64_t OW, float scale) {
#pragma omp simd
    for (int64_t j = 0; j < OW; ++j) {
        float s = t[j * K];
        for (int d = 1; d < K; ++d) s += t[j * K + d];
        y[j] = s * scale;
    }
}

static ALWAYS_INLINE void hsum_generic(const float* __restrict__ t, float* __restrict__ y, int64_t OW, int64_t k,
                                       float scale) {
    for (int64_t j = 0; j < OW; ++j) y[j] = t[j * k];
    for (int64_t d = 1; d < k; ++d) {
#pragma omp simd
        for (int64_t j = 0; j < OW; ++j) y[j] += t[j * k + d];
    }
#pragma omp simd
    for (int64_t j = 0; j < OW; ++j) y[j] *= scale;
}

// Planes [q0, q1) of a contiguous (N*C, H, W) float tensor. t: scratch of W floats.
static ALWAYS_INLINE void avgpool_planes_impl(const float* __restrict__ x, float* __restrict__ y, int64_t q0,
                                              int64_t q1, int64_t H, int64_t W, int64_t k, int64_t n_in,
                                              float* __restrict__ t) {
    const int64_t OH = H / k, OW = W / k;
    const int64_t CW = OW * k;                      // columns that fall in a window
    const float scale = 1.0f / (float)(k * k);
    for (int64_t q = q0; q < q1; ++q) {
        const float* __restrict__ xq = x + q * H * W;
        float* __restrict__ yq = y + q * OH * OW;
        for (int64_t oi = 0; oi < OH; ++oi) {
            const float* __restrict__ a = xq + oi * k * W;
            // Software prefetch of the rows two output rows ahead, into the next plane at the end
            // of this one (the hardware prefetcher alone leaves this read stream well short of
            // the memory bandwidth).
            const int64_t pf0 = (q * H + (oi + 2) * k) * W;
            const int64_t pf1 = pf0 + k * W < n_in ? pf0 + k * W : n_in;
            for (int64_t j = pf0; j < pf1; j += 16) __builtin_prefetch(x + j);
            if (k == 4) {
                const float* __restrict__ b = a + W;
                const float* __restrict__ c = b + W;
                const float* __restrict__ d = c + W;
#pragma omp simd
                for (int64_t j = 0; j < CW; ++j) t[j] = ((a[j] + b[j]) + c[j]) + d[j];
            } else {
#pragma omp simd
                for (int64_t j = 0; j < CW; ++j) t[j] = a[j];
                for (int64_t r = 1; r < k; ++r) {
                    const float* __restrict__ b = a + r * W;
#pragma omp simd
                    for (int64_t j = 0; j < CW; ++j) t[j] += b[j];
                }
            }
            float* __restrict__ yr = yq + oi * OW;
            if (k == 4)
                hsum_fixed<4>(t, yr, OW, scale);
            else if (k == 2)
                hsum_fixed<2>(t, yr, OW, scale);
            else if (k == 8)
                hsum_fixed<8>(t, yr, OW, scale);
            else
                hsum_generic(t, yr, OW, k, scale);
        }
    }
}

using PlanesFn = void (*)(const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, float*);

__attribute__((noinline))
static void avgpool_planes_baseline(const float* x, float* y, int64_t q0, int64_t q1, int64_t H, int64_t W,
                                    int64_t k, int64_t n_in, float* t) {
    avgpool_planes_impl(x, y, q0, q1, H, W, k, n_in, t);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void avgpool_planes_avx2(const float* x, float* y, int64_t q0, int64_t q1, int64_t H, int64_t W,
                                int64_t k, int64_t n_in, float* t) {
    avgpool_planes_impl(x, y, q0, q1, H, W, k, n_in, t);
}
#endif

static PlanesFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) return &avgpool_planes_avx2;
#endif
    return &avgpool_planes_baseline;
}

void avgpool2d_fwd(std::uintptr_t x, std::uintptr_t y, std::int64_t NC, std::int64_t H, std::int64_t W,
                   std::int64_t k) {
    static const PlanesFn kernel = pick_kernel();
    const float* xp = reinterpret_cast<const float*>(x);
    float* yp = reinterpret_cast<float*>(y);
    const int64_t n_in = NC * H * W;
    at::parallel_for(0, NC, 1, [&](int64_t q0, int64_t q1) {
        std::vector<float> t(W);
        kernel(xp, yp, q0, q1, H, W, k, n_in, t.data());
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("avgpool2d_fwd", &avgpool2d_fwd); }
"""

_ext = load_inline(
    name="avg_pool2d_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, kernel: int):
        super().__init__()
        self.kernel = int(kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = self.kernel
        if x.device.type != "cpu":
            raise ValueError("expected a CPU tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a float32 tensor")
        if x.dim() != 4:
            raise ValueError("expected an (N, C, H, W) tensor")
        if k <= 0:
            raise ValueError("invalid kernel size")
        N, C, H, W = x.shape
        if H < k or W < k:
            raise ValueError("input smaller than the pooling window")
        x = x.contiguous()
        out = torch.empty(N, C, H // k, W // k, dtype=torch.float32)
        if out.numel() == 0:
            return out
        _ext.avgpool2d_fwd(x.data_ptr(), out.data_ptr(), N * C, H, W, k)
        return out
