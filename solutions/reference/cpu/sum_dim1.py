"""Sum over one dimension (keepdim), C++: the tensor is viewed as (outer, reduced, inner) and cut into work units of one outer slice by one column tile of at most 256 inner floats; the AVX-512 build holds a whole tile's sums in up to 16 zmm registers and streams the tile's rows once, four rows per step added pairwise before they reach the accumulators (each input byte read once, with 64-byte loads, the ragged last vector of a row masked, no accumulator traffic through memory), and each output element is written once; the units are handed out to at::parallel_for's threads from an atomic counter (a thread the OS schedules late takes fewer); an AVX2 or baseline x86-64 build (an L1-resident accumulator row, 4 rows per sweep) is chosen at run time when the CPU lacks AVX-512. Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 7.008 ms vs eager 7.859 ms (1.12x), 9% of the speed of light."""
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <immintrin.h>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

constexpr int64_t TILE = 256;  // inner floats per work unit at most (16 zmm accumulators)

// One work unit: y[k] = sum_i x[i * K + k] for k in [0, w), rows i in [0, R) of stride K floats.
using TileFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);

// Baseline / AVX2: an accumulator row kept in L1, 4 rows added per sweep (vectorized over k).
static ALWAYS_INLINE void tile_rowacc(const float* __restrict__ x, float* __restrict__ y, int64_t R, int64_t K,
                                      int64_t w) {
    for (int64_t k = 0; k < w; ++k) y[k] = 0.0f;
    int64_t i = 0;
    for (; i + 4 <= R; i += 4) {
        const float* __restrict__ a = x + i * K;
        const float* __restrict__ b = a + K;
        const float* __restrict__ c = b + K;
        const float* __restrict__ d = c + K;
#pragma omp simd
        for (int64_t k = 0; k < w; ++k) y[k] += (a[k] + b[k]) + (c[k] + d[k]);
    }
    for (; i < R; ++i) {
        const float* __restrict__ a = x + i * K;
#pragma omp simd
        for (int64_t k = 0; k < w; ++k) y[k] += a[k];
    }
}

__attribute__((noinline))
static void tile_baseline(const float* x, float* y, int64_t R, int64_t K, int64_t w) {
    tile_rowacc(x, y, R, K, w);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void tile_avx2(const float* x, float* y, int64_t R, int64_t K, int64_t w) {
    tile_rowacc(x, y, R, K, w);
}

// AVX-512: NV accumulators of 16 floats stay in registers for the whole unit (w in (16 (NV - 1), 16 NV]);
// the last vector of each row is a masked load, so no byte outside the tile is touched.
template <int NV>
__attribute__((target("avx512f"), noinline))
static void tile_avx512(const float* __restrict__ x, float* __restrict__ y, int64_t R, int64_t K, int64_t w) {
    const __mmask16 tail = (__mmask16)((1u << (w - 16 * (NV - 1))) - 1u);
    __m512 acc[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= R; i += 4) {
        const float* r0 = x + i * K;
        const float* r1 = r0 + K;
        const float* r2 = r1 + K;
        const float* r3 = r2 + K;
#pragma GCC unroll 16
        for (int v = 0; v < NV - 1; ++v) {
            const __m512 s01 = _mm512_add_ps(_mm512_loadu_ps(r0 + 16 * v), _mm512_loadu_ps(r1 + 16 * v));
            const __m512 s23 = _mm512_add_ps(_mm512_loadu_ps(r2 + 16 * v), _mm512_loadu_ps(r3 + 16 * v));
            acc[v] = _mm512_add_ps(acc[v], _mm512_add_ps(s01, s23));
        }
        constexpr int v = NV - 1;
        const __m512 s01 = _mm512_add_ps(_mm512_maskz_loadu_ps(tail, r0 + 16 * v), _mm512_maskz_loadu_ps(tail, r1 + 16 * v));
        const __m512 s23 = _mm512_add_ps(_mm512_maskz_loadu_ps(tail, r2 + 16 * v), _mm512_maskz_loadu_ps(tail, r3 + 16 * v));
        acc[v] = _mm512_add_ps(acc[v], _mm512_add_ps(s01, s23));
    }
    for (; i < R; ++i) {
        const float* r0 = x + i * K;
#pragma GCC unroll 16
        for (int v = 0; v < NV - 1; ++v) acc[v] = _mm512_add_ps(acc[v], _mm512_loadu_ps(r0 + 16 * v));
        acc[NV - 1] = _mm512_add_ps(acc[NV - 1], _mm512_maskz_loadu_ps(tail, r0 + 16 * (NV - 1)));
    }
#pragma GCC unroll 16
    for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(y + 16 * v, acc[v]);
    _mm512_mask_storeu_ps(y + 16 * (NV - 1), tail, acc[NV - 1]);
}

__attribute__((target("avx512f"), noinline))
static void tile_avx512_any(const float* x, float* y, int64_t R, int64_t K, int64_t w) {
    switch ((w + 15) / 16) {
        case 1: return tile_avx512<1>(x, y, R, K, w);
        case 2: return tile_avx512<2>(x, y, R, K, w);
        case 3: return tile_avx512<3>(x, y, R, K, w);
        case 4: return tile_avx512<4>(x, y, R, K, w);
        case 5: return tile_avx512<5>(x, y, R, K, w);
        case 6: return tile_avx512<6>(x, y, R, K, w);
        case 7: return tile_avx512<7>(x, y, R, K, w);
        case 8: return tile_avx512<8>(x, y, R, K, w);
        case 9: return tile_avx512<9>(x, y, R, K, w);
        case 10: return tile_avx512<10>(x, y, R, K, w);
        case 11: return tile_avx512<11>(x, y, R, K, w);
        case 12: return tile_avx512<12>(x, y, R, K, w);
        case 13: return tile_avx512<13>(x, y, R, K, w);
        case 14: return tile_avx512<14>(x, y, R, K, w);
        case 15: return tile_avx512<15>(x, y, R, K, w);
        default: return tile_avx512<16>(x, y, R, K, w);
    }
}
#endif

static TileFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &tile_avx512_any;
    if (__builtin_cpu_supports("avx2")) return &tile_avx2;
#endif
    return &tile_baseline;
}

// x: address of a contiguous (O, R, K) float32 tensor, y: of a contiguous (O, 1, K) one; y[o, k] = sum_i x[o, i, k].
void sum_dim(std::uintptr_t x_addr, std::uintptr_t y_addr, std::int64_t O, std::int64_t R, std::int64_t K) {
    static const TileFn kernel = pick_kernel();
    if (O == 0 || K == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    // Column tiles of equal width (a multiple of 16 floats, at most TILE): K = 300 is 2 x 160, not 256 + 44.
    const int64_t nt = (K + TILE - 1) / TILE;
    const int64_t tw = ((K + nt - 1) / nt + 15) / 16 * 16;
    const int64_t units = O * nt;
    // Each unit writes its own outputs, so the result does not depend on which thread ran it.
    std::atomic<int64_t> next{0};
    at::parallel_for(0, std::min<int64_t>(units, at::get_num_threads()), 1, [&](int64_t, int64_t) {
        for (int64_t u; (u = next.fetch_add(1, std::memory_order_relaxed)) < units;) {
            const int64_t o = u / nt, k0 = (u % nt) * tw;
            kernel(xp + o * R * K + k0, yp + o * K + k0, R, K, std::min(tw, K - k0));
        }
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("sum_dim", &sum_dim);
}
"""

_ext = load_inline(
    name="sum_dim1_cpu",
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
        out = torch.empty(shape[:dim] + (1,) + shape[dim + 1:], dtype=torch.float32)
        _ext.sum_dim(xc.data_ptr(), out.data_ptr(), outer, shape[dim], inner)
        return out
