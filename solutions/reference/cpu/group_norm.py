"""GroupNorm, C++: per (sample, group) block one in-order vectorized pass for the shifted first and second moments (32 fp32 lane accumulators per sum, channel-plane sums added in double) and one fused per-channel scale-and-shift pass over the L2-resident block written with non-temporal stores (no read-for-ownership of the output); (sample, group) blocks split across threads with at::parallel_for; an AVX2+FMA build of the block kernel is chosen at run time when the CPU has it (baseline x86-64 SSE build otherwise). Measured on the 2-core CI machine (torch 2.13 CPU, 2026-12-06, `harness eval`, other work on the cores): 1.395 ms vs eager 2.198 ms (1.58x), 46% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cmath>
#include <cstdint>
#include <immintrin.h>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

// y[j] = x[j] * sc + of over one channel plane, written with non-temporal (streaming) stores:
// the output is not read back, so this skips the read-for-ownership of every output line and
// leaves the cache to the input. One call per plane; SSE in the baseline build, AVX in the AVX2 one.
__attribute__((noinline))
static void scale_shift_stream_sse(const float* __restrict__ x, float* __restrict__ y, float sc, float of,
                                   int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 15); ++j) y[j] = x[j] * sc + of;
    const __m128 vs = _mm_set1_ps(sc), vo = _mm_set1_ps(of);
    for (; j + 4 <= n; j += 4) _mm_stream_ps(y + j, _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(x + j), vs), vo));
    for (; j < n; ++j) y[j] = x[j] * sc + of;
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void scale_shift_stream_avx2(const float* __restrict__ x, float* __restrict__ y, float sc, float of,
                                    int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 31); ++j) y[j] = x[j] * sc + of;
    const __m256 vs = _mm256_set1_ps(sc), vo = _mm256_set1_ps(of);
    int64_t j8 = j + ((n - j) & ~(int64_t)15);
    for (; j < j8; j += 16) {
        _mm256_stream_ps(y + j, _mm256_fmadd_ps(_mm256_loadu_ps(x + j), vs, vo));
        _mm256_stream_ps(y + j + 8, _mm256_fmadd_ps(_mm256_loadu_ps(x + j + 8), vs, vo));
    }
    for (; j < n; ++j) y[j] = x[j] * sc + of;
}
#endif

using PlaneFn = void (*)(const float*, float*, float, float, int64_t);

// Blocks [i0, i1) of a contiguous (N*G, Cg, HW) float tensor; block i holds channels
// (i % G) * Cg ... + Cg - 1 of sample i / G.
static ALWAYS_INLINE void groupnorm_blocks_impl(const float* __restrict__ x, const float* __restrict__ w,
                                                const float* __restrict__ b, float* __restrict__ y,
                                                int64_t i0, int64_t i1, int64_t G, int64_t Cg,
                                                int64_t HW, float eps, PlaneFn plane) {
    const int64_t L = Cg * HW;
    const int64_t Q = HW / 4;
    for (int64_t i = i0; i < i1; ++i) {
        const float* __restrict__ xb = x + i * L;
        float* __restrict__ yb = y + i * L;
        const int64_t c0 = (i % G) * Cg;

        // Moments of d = x - shift, shift = the block's first element (keeps E[d^2] - E[d]^2
        // well conditioned when |mean| >> std). Each channel plane is swept once in order (a
        // single stream the hardware prefetcher follows) into K = 32 fp32 lane accumulators per
        // sum (several independent vector chains); plane sums are added in double.
        const float shift = xb[0];
        double s = 0.0, q = 0.0;
        constexpr int64_t K = 32;
        for (int64_t c = 0; c < Cg; ++c) {
            const float* __restrict__ xp = xb + c * HW;
            float sa[K], qa[K];
            for (int k = 0; k < K; ++k) { sa[k] = 0.0f; qa[k] = 0.0f; }
            int64_t j = 0;
            for (; j + K <= HW; j += K) {
#pragma omp simd
                for (int64_t k = 0; k < K; ++k) {
                    const float d = xp[j + k] - shift;
                    sa[k] += d;
                    qa[k] += d * d;
                }
            }
            float sp = 0.0f, qp = 0.0f;
            for (; j < HW; ++j) {
                const float d = xp[j] - shift;
                sp += d;
                qp += d * d;
            }
            for (int k = 0; k < K; ++k) { sp += sa[k]; qp += qa[k]; }
            s += (double)sp;
            q += (double)qp;
        }
        const double md = s / (double)L;
        double var = q / (double)L - md * md;              // biased, as nn.GroupNorm
        var = var < 0.0 ? 0.0 : var;
        const float mean = (float)((double)shift + md);
        const float rstd = (float)(1.0 / std::sqrt(var + (double)eps));

        // y = x * scale[c] + offset[c] over the block, which is still in L2 from the pass above;
        // the output goes out with streaming stores.
        for (int64_t c = 0; c < Cg; ++c) {
            const float sc = rstd * w[c0 + c];
            const float of = b[c0 + c] - mean * sc;
            const float* __restrict__ xp = xb + c * HW;
            float* __restrict__ yp = yb + c * HW;
            plane(xp, yp, sc, of, HW);
        }
    }
    _mm_sfence();   // order the streaming stores before the result is handed back
}

using BlocksFn = void (*)(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                          int64_t, int64_t, float);

__attribute__((noinline))
static void groupnorm_blocks_baseline(const float* x, const float* w, const float* b, float* y, int64_t i0,
                                      int64_t i1, int64_t G, int64_t Cg, int64_t HW, float eps) {
    groupnorm_blocks_impl(x, w, b, y, i0, i1, G, Cg, HW, eps, &scale_shift_stream_sse);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void groupnorm_blocks_avx2(const float* x, const float* w, const float* b, float* y, int64_t i0,
                                  int64_t i1, int64_t G, int64_t Cg, int64_t HW, float eps) {
    groupnorm_blocks_impl(x, w, b, y, i0, i1, G, Cg, HW, eps, &scale_shift_stream_avx2);
}
#endif

static BlocksFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &groupnorm_blocks_avx2;
#endif
    return &groupnorm_blocks_baseline;
}

// GroupNorm of a contiguous float32 x of N * C * HW elements into y (same shape), C channels in
// `groups` groups; w, b: C float32 each.
void groupnorm_fwd(std::uintptr_t x, std::uintptr_t w, std::uintptr_t b, std::uintptr_t y, std::int64_t N,
                   std::int64_t C, std::int64_t HW, std::int64_t groups, double eps) {
    static const BlocksFn kernel = pick_kernel();
    if (N * C * HW == 0) return;
    const int64_t Cg = C / groups;
    const float* xp = reinterpret_cast<const float*>(x);
    const float* wp = reinterpret_cast<const float*>(w);
    const float* bp = reinterpret_cast<const float*>(b);
    float* yp = reinterpret_cast<float*>(y);
    const float e = (float)eps;
    at::parallel_for(0, N * groups, 1, [&](int64_t i0, int64_t i1) {
        kernel(xp, wp, bp, yp, i0, i1, groups, Cg, HW, e);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("groupnorm_fwd", &groupnorm_fwd); }
"""

_ext = load_inline(
    name="group_norm_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        # Same submodule and the same seeded affine values, drawn in the same order, as the reference.
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.gn.weight.copy_(1 + 0.5 * torch.randn(channels))
            self.gn.bias.copy_(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias, groups = self.gn.weight, self.gn.bias, self.gn.num_groups
        if not (x.is_cpu and weight.is_cpu and bias.is_cpu):
            raise ValueError("expected CPU tensors")
        if x.dtype != torch.float32 or weight.dtype != torch.float32 or bias.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if x.ndim < 2:
            raise ValueError("expected (N, C, *) input")
        N, C = x.size(0), x.size(1)
        if groups <= 0 or C % groups != 0:
            raise ValueError("channels must be divisible by groups")
        if weight.numel() != C or bias.numel() != C:
            raise ValueError("weight/bias must have C elements")
        x = x.contiguous()
        weight = weight.contiguous()
        bias = bias.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _ext.groupnorm_fwd(x.data_ptr(), weight.data_ptr(), bias.data_ptr(), out.data_ptr(), N, C,
                           n // (N * C) if n else 0, groups, self.gn.eps)
        return out
