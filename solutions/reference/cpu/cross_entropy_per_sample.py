"""Per-sample cross-entropy (reduction='none'), C++: per row of logits a vectorized max pass and an exp-and-sum pass over the L1-resident row (branch-free polynomial exp that vectorizes), software-pipelined so one fused loop sums row r's exponentials while it takes row r+1's max from memory, then loss = log(sum) - (logit[target] - max), never materializing the log-softmax that eager writes and re-reads; targets are range-checked first (ignore_index -100 gives 0 as in torch); chunks of 32 rows are handed out to at::parallel_for's threads from an atomic counter (a late-scheduled thread takes fewer); an AVX-512 or AVX2+FMA build of the row kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 12.002 ms vs eager 33.645 ms (2.80x), 3% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

constexpr int64_t ROW_CHUNK = 32;       // rows handed to a thread at a time
constexpr int64_t IGNORE_INDEX = -100;  // torch's default ignore_index: that row's loss is 0

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

static ALWAYS_INLINE float row_max(const float* __restrict__ xr, int64_t C) {
    float mx = -__builtin_inff();
#pragma omp simd reduction(max : mx)
    for (int64_t j = 0; j < C; ++j) mx = xr[j] > mx ? xr[j] : mx;
    return mx;
}

// Rows [r0, r1): y[r] = log(sum_j exp(x[r, j] - max_r)) - (x[r, t_r] - max_r). Software-pipelined:
// one fused loop sums the exponentials of row r (in L1 since its max pass) while it takes the
// max of row r + 1 from memory, so the memory stream overlaps the exp arithmetic.
static ALWAYS_INLINE void ce_rows_impl(const float* __restrict__ x, const int64_t* __restrict__ tgt,
                                       float* __restrict__ y, int64_t r0, int64_t r1, int64_t C) {
    float mx = row_max(x + r0 * C, C);
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * C;
        const float* __restrict__ xn = xr + C;
        const bool has_next = r + 1 < r1;
        float sum = 0.0f, mx_next = -__builtin_inff();
        if (!(std::fabs(mx) <= 3.4e38f)) {
            // +inf, -inf or NaN in the row: the plain formula gives what eager gives (NaN / inf).
            for (int64_t j = 0; j < C; ++j) sum += std::exp(xr[j] - mx);
            if (has_next) mx_next = row_max(xn, C);
        } else if (has_next) {
#pragma omp simd reduction(+ : sum) reduction(max : mx_next)
            for (int64_t j = 0; j < C; ++j) {
                sum += exp_nonpos(xr[j] - mx);
                mx_next = xn[j] > mx_next ? xn[j] : mx_next;
            }
        } else {
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < C; ++j) sum += exp_nonpos(xr[j] - mx);
        }
        const int64_t t = tgt[r];
        y[r] = t == IGNORE_INDEX ? 0.0f : std::log(sum) - (xr[t] - mx);
        mx = mx_next;
    }
}

using RowsFn = void (*)(const float*, const int64_t*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void ce_rows_baseline(const float* x, const int64_t* t, float* y, int64_t r0, int64_t r1, int64_t C) {
    ce_rows_impl(x, t, y, r0, r1, C);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void ce_rows_avx2(const float* x, const int64_t* t, float* y, int64_t r0, int64_t r1, int64_t C) {
    ce_rows_impl(x, t, y, r0, r1, C);
}

__attribute__((target("avx512f"), noinline))
static void ce_rows_avx512(const float* x, const int64_t* t, float* y, int64_t r0, int64_t r1, int64_t C) {
    ce_rows_impl(x, t, y, r0, r1, C);
}
#endif

static RowsFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &ce_rows_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &ce_rows_avx2;
#endif
    return &ce_rows_baseline;
}

// Checks the targets first: returns how many lie outside [0, C) other than IGNORE_INDEX, and
// computes nothing unless that is 0.
std::int64_t cross_entropy_rows(std::uintptr_t logits, std::uintptr_t target, std::uintptr_t y, std::int64_t R,
                                std::int64_t C) {
    static const RowsFn kernel = pick_kernel();
    const float* xp = reinterpret_cast<const float*>(logits);
    const int64_t* tp = reinterpret_cast<const int64_t*>(target);
    float* yp = reinterpret_cast<float*>(y);
    int64_t bad = 0;
#pragma omp simd reduction(+ : bad)
    for (int64_t r = 0; r < R; ++r) bad += (tp[r] < 0 || tp[r] >= C) && tp[r] != IGNORE_INDEX;
    if (bad != 0 || R == 0) return bad;
    parallel_dynamic((R + ROW_CHUNK - 1) / ROW_CHUNK, [&](int64_t c) {
        kernel(xp, tp, yp, c * ROW_CHUNK, std::min(R, (c + 1) * ROW_CHUNK), C);
    });
    return 0;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("cross_entropy_rows", &cross_entropy_rows); }
"""

_ext = load_inline(
    name="cross_entropy_per_sample_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if logits.device.type != "cpu" or target.device.type != "cpu":
            raise ValueError("expected CPU tensors")
        if logits.dtype != torch.float32:
            raise TypeError("expected float32 logits")
        if target.dtype != torch.int64:
            raise TypeError("expected int64 targets")
        if logits.dim() != 2:
            raise ValueError("expected 2-D logits")
        if target.dim() != 1:
            raise ValueError("expected 1-D targets")
        if target.size(0) != logits.size(0):
            raise ValueError("expected one target per row of logits")
        x = logits.contiguous()
        t = target.contiguous()
        R, C = x.shape
        out = torch.empty(R, dtype=torch.float32)
        if _ext.cross_entropy_rows(x.data_ptr(), t.data_ptr(), out.data_ptr(), R, C):
            raise ValueError(f"cross_entropy: target out of bounds for {C} classes")
        return out
