"""RMSNorm over the last dimension, C++: per row one vectorized sum-of-squares pass (four independent accumulators) and one scale-by-rsqrt-and-weight pass over the L1-resident row written with non-temporal stores (no read-for-ownership of the output), the next row software-prefetched during the output pass; rows split across threads with at::parallel_for; an AVX2+FMA build of the row kernel (AVX streaming stores) is chosen at run time when the CPU has it (baseline x86-64 SSE build otherwise). Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 8.008 ms vs eager 32.006 ms (4.00x), 8% of the speed of light."""
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

// y[j] = x[j] * rs * w[j] over one row, written with non-temporal (streaming) stores: the output
// is not read back, so this skips the read-for-ownership of every output line. SSE in the
// baseline build, AVX in the AVX2 one; one call per row.
__attribute__((noinline))
static void scale_row_stream_sse(const float* __restrict__ x, const float* __restrict__ w, float rs,
                                 float* __restrict__ y, int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 15); ++j) y[j] = x[j] * rs * w[j];
    const __m128 vr = _mm_set1_ps(rs);
    for (; j + 4 <= n; j += 4)
        _mm_stream_ps(y + j, _mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(x + j), vr), _mm_loadu_ps(w + j)));
    for (; j < n; ++j) y[j] = x[j] * rs * w[j];
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx"), noinline))
static void scale_row_stream_avx(const float* __restrict__ x, const float* __restrict__ w, float rs,
                                 float* __restrict__ y, int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 31); ++j) y[j] = x[j] * rs * w[j];
    const __m256 vr = _mm256_set1_ps(rs);
    for (; j + 8 <= n; j += 8)
        _mm256_stream_ps(y + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + j), vr), _mm256_loadu_ps(w + j)));
    for (; j < n; ++j) y[j] = x[j] * rs * w[j];
}
#endif

using ScaleRowFn = void (*)(const float*, const float*, float, float*, int64_t);

static ALWAYS_INLINE void rmsnorm_rows_impl(const float* __restrict__ x, const float* __restrict__ w,
                                            float* __restrict__ y, int64_t r0, int64_t r1, int64_t D,
                                            float eps, ScaleRowFn scale_row) {
    const float inv_d = 1.0f / (float)D;
    const int64_t Q = D / 4;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ yr = y + r * D;
        const float* __restrict__ x1 = xr + Q;
        const float* __restrict__ x2 = xr + 2 * Q;
        const float* __restrict__ x3 = xr + 3 * Q;

        // Sum of squares, the row read as four interleaved quarters: four independent vector
        // accumulators hide the FP add latency (and keep the fp32 sums short).
        float q0 = 0.0f, q1 = 0.0f, q2 = 0.0f, q3 = 0.0f;
#pragma omp simd reduction(+ : q0, q1, q2, q3)
        for (int64_t j = 0; j < Q; ++j) {
            q0 += xr[j] * xr[j];
            q1 += x1[j] * x1[j];
            q2 += x2[j] * x2[j];
            q3 += x3[j] * x3[j];
        }
        float q = (q0 + q1) + (q2 + q3);
        for (int64_t j = 4 * Q; j < D; ++j) q += xr[j] * xr[j];
        const float rs = 1.0f / std::sqrt(q * inv_d + eps);

        // Pull the next row in while this one is written out (the row stream does not fit in
        // cache; this hides most of the load latency behind the output pass).
        if (r + 1 < r1)
            for (int64_t j = 0; j < D; j += 16) __builtin_prefetch(xr + D + j);
        scale_row(xr, w, rs, yr, D);
    }
    _mm_sfence();   // order the streaming stores before the result is handed back
}

using RowsFn = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t, float);

__attribute__((noinline))
static void rmsnorm_rows_baseline(const float* x, const float* w, float* y, int64_t r0, int64_t r1,
                                  int64_t D, float eps) {
    rmsnorm_rows_impl(x, w, y, r0, r1, D, eps, &scale_row_stream_sse);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void rmsnorm_rows_avx2(const float* x, const float* w, float* y, int64_t r0, int64_t r1,
                              int64_t D, float eps) {
    rmsnorm_rows_impl(x, w, y, r0, r1, D, eps, &scale_row_stream_avx);
}
#endif

static RowsFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &rmsnorm_rows_avx2;
#endif
    return &rmsnorm_rows_baseline;
}

// x, y: addresses of contiguous (R, D) float32 matrices, w: of D float32 weights.
void rmsnorm_fwd(std::uintptr_t x_addr, std::uintptr_t w_addr, std::uintptr_t y_addr, std::int64_t R,
                 std::int64_t D, double eps) {
    static const RowsFn kernel = pick_kernel();
    if (R == 0 || D == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    const float* wp = reinterpret_cast<const float*>(w_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    const float e = (float)eps;
    at::parallel_for(0, R, 8, [&](int64_t r0, int64_t r1) { kernel(xp, wp, yp, r0, r1, D, e); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("rmsnorm_fwd", &rmsnorm_fwd);
}
"""

_ext = load_inline(
    name="rms_norm_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        # Same parameter, created by the same call, as the reference: identical seeded values.
        self.weight = nn.Parameter(1 + 0.5 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight.detach()
        if x.device.type != "cpu" or weight.device.type != "cpu":
            raise ValueError("expected CPU tensors")
        if x.dtype != torch.float32 or weight.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if x.dim() < 1:
            raise ValueError("expected at least 1 dimension")
        d = x.size(-1)
        if weight.numel() != d:
            raise ValueError("weight must match the last dimension")
        xc = x.contiguous()
        wc = weight.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        if n == 0:
            return out
        _ext.rmsnorm_fwd(xc.data_ptr(), wc.data_ptr(), out.data_ptr(), n // d, d, self.eps)
        return out
