"""Row-wise log-softmax over the last dimension, C++: per row a vectorized max pass, an exp-and-sum pass over the L1-resident row (branch-free polynomial exp that vectorizes, no stores) software-pipelined so one fused loop sums row r's exponentials while it takes row r+1's max from memory, and one output pass y = (x - max) - log(sum); chunks of 16 rows are handed out to at::parallel_for's threads from an atomic counter (a late-scheduled thread takes fewer); an AVX-512 or AVX2+FMA build of the row kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine, torch 2.13 CPU (2026-12-06, `harness eval`, other work on the cores): 1.791 ms vs eager 8.353 ms (4.66x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#define ALWAYS_INLINE inline __attribute__((always_inline))

constexpr int64_t ROW_CHUNK = 16;  // rows handed to a thread at a time

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

static ALWAYS_INLINE float bits_to_float(int32_t i) { float f; std::memcpy(&f, &i, 4); return f; }

// exp(x) for x <= 0 (arguments are x - rowmax): x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite split
// of ln2), degree-6 polynomial for exp(r) (Cephes expf), times 2^n built from exponent bits.
// Branch-free, so loops calling it vectorize; below -87 it returns ~1.6e-38 instead of less, which
// cannot change a sum that holds exp(0) = 1.
static ALWAYS_INLINE float exp_nonpos(float x) {
    x = x < -87.0f ? -87.0f : x;                         // keeps 2^n a normal float
    const float t = x * 1.44269504088896341f;
    const float n = (t + 12582912.0f) - 12582912.0f;     // round to nearest via 1.5 * 2^23
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    return p * bits_to_float(((int32_t)n + 127) << 23);
}

static ALWAYS_INLINE float row_max(const float* __restrict__ xr, int64_t D) {
    float mx = -__builtin_inff();
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
    return mx;
}

// Rows [r0, r1): y[r, j] = (x[r, j] - max_r) - log(sum_k exp(x[r, k] - max_r)). Software-pipelined:
// one fused loop sums the exponentials of row r (in L1 since its max pass) while it takes the
// max of row r + 1 from memory, so the memory stream overlaps the exp arithmetic.
static ALWAYS_INLINE void log_softmax_rows_impl(const float* __restrict__ x, float* __restrict__ y,
                                                int64_t r0, int64_t r1, int64_t D) {
    float mx = row_max(x + r0 * D, D);
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        const float* __restrict__ xn = xr + D;
        float* __restrict__ yr = y + r * D;
        const bool has_next = r + 1 < r1;
        float sum = 0.0f, mx_next = -__builtin_inff();
        if (!(std::fabs(mx) <= 3.4e38f)) {
            // +inf, -inf or NaN in the row: the plain formula gives what eager gives (NaN / -inf).
            for (int64_t j = 0; j < D; ++j) sum += std::exp(xr[j] - mx);
            if (has_next) mx_next = row_max(xn, D);
        } else if (has_next) {
#pragma omp simd reduction(+ : sum) reduction(max : mx_next)
            for (int64_t j = 0; j < D; ++j) {
                sum += exp_nonpos(xr[j] - mx);
                mx_next = xn[j] > mx_next ? xn[j] : mx_next;
            }
        } else {
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < D; ++j) sum += exp_nonpos(xr[j] - mx);
        }
        const float ls = std::log(sum);
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) yr[j] = (xr[j] - mx) - ls;
        mx = mx_next;
    }
}

using RowsFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void log_softmax_rows_baseline(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    log_softmax_rows_impl(x, y, r0, r1, D);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void log_softmax_rows_avx2(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    log_softmax_rows_impl(x, y, r0, r1, D);
}

__attribute__((target("avx512f"), noinline))
static void log_softmax_rows_avx512(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    log_softmax_rows_impl(x, y, r0, r1, D);
}
#endif

static RowsFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &log_softmax_rows_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &log_softmax_rows_avx2;
#endif
    return &log_softmax_rows_baseline;
}

// y = log_softmax(x) over rows of contiguous float32 (R, D) x; y is (R, D), allocated by the caller.
void log_softmax_rows(std::uintptr_t x_ptr, std::uintptr_t y_ptr, std::int64_t R, std::int64_t D) {
    static const RowsFn kernel = pick_kernel();
    if (R == 0 || D == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_ptr);
    float* yp = reinterpret_cast<float*>(y_ptr);
    parallel_dynamic((R + ROW_CHUNK - 1) / ROW_CHUNK, [&](int64_t c) {
        kernel(xp, yp, c * ROW_CHUNK, std::min(R, (c + 1) * ROW_CHUNK), D);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("log_softmax_rows", &log_softmax_rows); }
"""

_ext = load_inline(
    name="log_softmax_rows_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cpu:
            raise ValueError("expected a CPU tensor")
        if x.dim() != 2:
            raise ValueError("expected a 2-D float32 tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a 2-D float32 tensor")
        x = x.contiguous()
        out = torch.empty_like(x)
        R, D = x.shape
        _ext.log_softmax_rows(x.data_ptr(), out.data_ptr(), R, D)
        return out
