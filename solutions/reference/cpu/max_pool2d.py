"""2-D max pooling, C++: per output row a vectorized vertical max of the window's input rows (software-prefetched two output rows ahead) into an aligned L1-resident row padded with -inf, then a horizontal windowed max over it (3x3 stride 2: eight outputs per step from unit-stride loads and even/odd shuffles; generic loops otherwise), NaN propagated as in eager; (sample, channel) planes split across threads with at::parallel_for; an AVX2 build of the plane kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine, torch 2.13 CPU (2026-12-06, `harness eval`, other work on the cores): 1.066 ms vs eager 13.898 ms (13.03x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>
#include <cstdint>
#include <limits>
#include <vector>

#define ALWAYS_INLINE inline __attribute__((always_inline))

// max that propagates NaN like eager's pooling (`val > max || isnan(val)`): once NaN, stays NaN.
static ALWAYS_INLINE float nanmax(float m, float v) { return (v > m || v != v) ? v : m; }

struct PoolShape {
    int64_t H, W, OH, OW, k, s, p, n;   // n: elements of the input
};

// Horizontal pass: y[j] = max_{d < K} t[j * S + d] over a row t padded with -inf.
template <int K, int S>
static ALWAYS_INLINE void hmax_fixed(const float* __restrict__ t, float* __restrict__ y, int64_t OW) {
#pragma omp simd
    for (int64_t j = 0; j < OW; ++j) {
        float m = t[j * S];
        for (int d = 1; d < K; ++d) m = nanmax(m, t[j * S + d]);
        y[j] = m;
    }
}

// 3-wide window, stride 2, eight outputs at a time from unit-stride loads: with L(o) the eight
// floats at t + 2j + o, y = max(even(L0, L8), odd(L0, L8), even(L2, L10)). GCC vector
// extensions, so the same code becomes SSE or AVX shuffles in each build.
typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));

static ALWAYS_INLINE void hmax_k3s2(const float* __restrict__ t, float* __restrict__ y, int64_t OW) {
    const v8i ev = {0, 2, 4, 6, 8, 10, 12, 14}, od = {1, 3, 5, 7, 9, 11, 13, 15};
    int64_t j = 0;
    for (; j + 8 <= OW; j += 8) {
        const float* p = t + 2 * j;
        v8f a, b, c, d;
        __builtin_memcpy(&a, p, sizeof(a));
        __builtin_memcpy(&b, p + 8, sizeof(b));
        __builtin_memcpy(&c, p + 2, sizeof(c));
        __builtin_memcpy(&d, p + 10, sizeof(d));
        v8f m = __builtin_shuffle(a, b, ev);
        v8f u = __builtin_shuffle(a, b, od);
        m = (u > m || u != u) ? u : m;                   // nanmax, lane-wise
        u = __builtin_shuffle(c, d, ev);
        m = (u > m || u != u) ? u : m;
        __builtin_memcpy(y + j, &m, sizeof(m));
    }
    for (; j < OW; ++j) y[j] = nanmax(nanmax(t[2 * j], t[2 * j + 1]), t[2 * j + 2]);
}

static ALWAYS_INLINE void hmax_generic(const float* __restrict__ t, float* __restrict__ y, int64_t OW,
                                       int64_t k, int64_t s) {
    for (int64_t j = 0; j < OW; ++j) y[j] = t[j * s];
    for (int64_t d = 1; d < k; ++d) {
#pragma omp simd
        for (int64_t j = 0; j < OW; ++j) y[j] = nanmax(y[j], t[j * s + d]);
    }
}

// Planes [q0, q1) of a contiguous (N*C, H, W) float tensor. t: scratch of W + 2p + k floats.
static ALWAYS_INLINE void maxpool_planes_impl(const float* __restrict__ x, float* __restrict__ y,
                                              int64_t q0, int64_t q1, PoolShape sh, float* __restrict__ t) {
    const int64_t H = sh.H, W = sh.W, OH = sh.OH, OW = sh.OW, k = sh.k, s = sh.s, p = sh.p;
    const float ninf = -std::numeric_limits<float>::infinity();
    const int64_t TW = W + 2 * p + k;
    for (int64_t c = 0; c < TW; ++c) t[c] = ninf;       // the padding columns stay -inf
    float* __restrict__ tc = t + p;                       // tc[c] = column c of the window rows
    for (int64_t q = q0; q < q1; ++q) {
        const float* __restrict__ xq = x + q * H * W;
        float* __restrict__ yq = y + q * OH * OW;
        for (int64_t oi = 0; oi < OH; ++oi) {
            int64_t r0 = oi * s - p, r1 = r0 + k;           // padding rows are skipped
            r0 = r0 < 0 ? 0 : r0;
            r1 = r1 > H ? H : r1;
            const float* __restrict__ a = xq + r0 * W;
            // Software prefetch of the s rows that output row oi + 2 adds to its window, into the
            // next plane at the end of this one (the hardware prefetcher alone leaves this read
            // stream short of the memory bandwidth).
            const int64_t pf0 = (q * H + (oi + 2) * s - p + k - s) * W;
            const int64_t pf1 = pf0 + s * W < sh.n ? pf0 + s * W : sh.n;
            for (int64_t j = pf0; j < pf1; j += 16) __builtin_prefetch(x + j);
#pragma omp simd
            for (int64_t c = 0; c < W; ++c) tc[c] = a[c];
            for (int64_t r = r0 + 1; r < r1; ++r) {
                const float* __restrict__ b = xq + r * W;
#pragma omp simd
                for (int64_t c = 0; c < W; ++c) tc[c] = nanmax(tc[c], b[c]);
            }
            float* __restrict__ yr = yq + oi * OW;
            if (k == 3 && s == 2)
                hmax_k3s2(t, yr, OW);
            else if (k == 2 && s == 2)
                hmax_fixed<2, 2>(t, yr, OW);
            else
                hmax_generic(t, yr, OW, k, s);
        }
    }
}

using PlanesFn = void (*)(const float*, float*, int64_t, int64_t, PoolShape, float*);

__attribute__((noinline))
static void maxpool_planes_baseline(const float* x, float* y, int64_t q0, int64_t q1, PoolShape sh, float* t) {
    maxpool_planes_impl(x, y, q0, q1, sh, t);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void maxpool_planes_avx2(const float* x, float* y, int64_t q0, int64_t q1, PoolShape sh, float* t) {
    maxpool_planes_impl(x, y, q0, q1, sh, t);
}
#endif

static PlanesFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) return &maxpool_planes_avx2;
#endif
    return &maxpool_planes_baseline;
}

// y = max_pool2d(x) for contiguous float32 x (N, C, H, W) into y (N, C, OH, OW), allocated by the caller;
// the caller checked the parameters and computed OH, OW (floor mode).
void maxpool2d_fwd(std::uintptr_t x_ptr, std::uintptr_t y_ptr, std::int64_t N, std::int64_t C, std::int64_t H,
                   std::int64_t W, std::int64_t OH, std::int64_t OW, std::int64_t kernel_size, std::int64_t stride,
                   std::int64_t padding) {
    static const PlanesFn kernel = pick_kernel();
    if (N * C * OH * OW == 0) return;
    const PoolShape sh{H, W, OH, OW, kernel_size, stride, padding, N * C * H * W};
    const float* xp = reinterpret_cast<const float*>(x_ptr);
    float* yp = reinterpret_cast<float*>(y_ptr);
    // The horizontal pass reads t[(OW - 1) * s + k - 1] <= W + 2p - 1 (floor-mode output size).
    const int64_t TW = W + 2 * padding + kernel_size;
    at::parallel_for(0, N * C, 1, [&](int64_t q0, int64_t q1) {
        // Scratch row placed so that its column 0 (t + padding) is 64-byte aligned.
        std::vector<float> buf(TW + 16);
        float* t = buf.data();
        while (((uintptr_t)(t + padding) & 63) != 0) ++t;
        kernel(xp, yp, q0, q1, sh, t);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("maxpool2d_fwd", &maxpool2d_fwd); }
"""

_ext = load_inline(
    name="max_pool2d_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.kernel = int(kernel)
        self.stride = int(stride)
        self.padding = int(padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s, p = self.kernel, self.stride, self.padding
        if not x.is_cpu:
            raise ValueError("expected a CPU tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a float32 tensor")
        if x.dim() != 4:
            raise ValueError("expected an (N, C, H, W) tensor")
        if not (k > 0 and s > 0 and p >= 0 and 2 * p <= k):
            raise ValueError("invalid pooling parameters")
        N, C, H, W = x.shape
        if H + 2 * p < k or W + 2 * p < k:
            raise ValueError("input too small for the pooling window")
        OH = (H + 2 * p - k) // s + 1
        OW = (W + 2 * p - k) // s + 1
        x = x.contiguous()
        out = torch.empty(N, C, OH, OW, dtype=torch.float32)
        _ext.maxpool2d_fwd(x.data_ptr(), out.data_ptr(), N, C, H, W, OH, OW, k, s, p)
        return out
