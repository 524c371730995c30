"""Row gather (index_select along dim 0), C++: the int64 indices are range-checked first (vectorized min/max), then each output row is one vectorized copy of its table row, whole 64-byte output lines written with non-temporal (streaming) stores (no read-for-ownership: 1.72 ms -> 1.24 ms here) and no software prefetch (the next rows' loads depend only on the sequential index stream, so the out-of-order core has them in flight already; the prefetchnta of the rows 4 ahead this used to issue made it 1.5x slower); chunks of 256 output rows are handed out to at::parallel_for's threads from an atomic counter (a late-scheduled thread takes fewer); an AVX-512 or AVX2 build of the copy is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine (torch 2.13 CPU, 2026-12-06, `harness eval`, other work on the cores): 1.378 ms vs eager 1.924 ms (1.40x), 42% of the speed of light."""
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

constexpr int64_t ROW_CHUNK = 256;  // output rows handed to a thread at a time

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

// Output rows [i0, i1): y[i, :] = t[idx[i], :], rows of D floats (indices already checked). Full
// 64-byte lines of the output are written with non-temporal stores (LINE_COPY: straight to memory,
// without first reading the line into the cache); the unaligned head and tail of a row normally.
// No software prefetch: the loads of the next rows depend only on the sequential index stream, so
// the out-of-order core already has them in flight; a prefetchnta of the rows 4 ahead made the whole
// gather ~1.5x slower (1.9 ms instead of 1.25 ms here), T0/T1/T2 prefetches gained nothing.
#define GATHER_ROWS_BODY(LINE_COPY)                                                                   \
    for (int64_t i = i0; i < i1; ++i) {                                                               \
        const float* __restrict__ src = t + idx[i] * D;                                               \
        float* __restrict__ dst = y + i * D;                                                          \
        int64_t k = 0;                                                                                \
        for (; k < D && ((uintptr_t)(dst + k) & 63) != 0; ++k) dst[k] = src[k];                       \
        for (; k + 16 <= D; k += 16) {                                                                \
            float* d = dst + k;                                                                       \
            const float* s = src + k;                                                                 \
            LINE_COPY;                                                                                \
        }                                                                                             \
        for (; k < D; ++k) dst[k] = src[k];                                                           \
    }                                                                                                 \
    _mm_sfence(); /* the streaming stores are visible before the threads join */

using GatherFn = void (*)(const float*, const int64_t*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void gather_rows_baseline(const float* t, const int64_t* idx, float* y, int64_t i0, int64_t i1,
                                 int64_t D) {
    GATHER_ROWS_BODY(for (int q = 0; q < 16; q += 4) _mm_stream_ps(d + q, _mm_loadu_ps(s + q)))
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void gather_rows_avx2(const float* t, const int64_t* idx, float* y, int64_t i0, int64_t i1,
                             int64_t D) {
    GATHER_ROWS_BODY(_mm256_stream_ps(d, _mm256_loadu_ps(s)); _mm256_stream_ps(d + 8, _mm256_loadu_ps(s + 8)))
}

__attribute__((target("avx512f"), noinline))
static void gather_rows_avx512(const float* t, const int64_t* idx, float* y, int64_t i0, int64_t i1,
                               int64_t D) {
    GATHER_ROWS_BODY(_mm512_stream_ps(d, _mm512_loadu_ps(s)))
}
#endif

static GatherFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &gather_rows_avx512;
    if (__builtin_cpu_supports("avx2")) return &gather_rows_avx2;
#endif
    return &gather_rows_baseline;
}

// y[i, :] = t[idx[i], :] for a contiguous (V, D) float32 table t, n contiguous int64 indices and a
// contiguous (n, D) float32 output y. Returns false (y untouched) when an index is outside [0, V).
bool index_select_rows(std::uintptr_t t, std::uintptr_t idx, std::uintptr_t y, std::int64_t V, std::int64_t D,
                       std::int64_t n) {
    static const GatherFn kernel = pick_kernel();
    const int64_t* ip = reinterpret_cast<const int64_t*>(idx);
    int64_t lo = 0, hi = 0;
    if (n > 0) {
        lo = ip[0];
        hi = ip[0];
#pragma omp simd reduction(min : lo) reduction(max : hi)
        for (int64_t i = 0; i < n; ++i) {
            lo = ip[i] < lo ? ip[i] : lo;
            hi = ip[i] > hi ? ip[i] : hi;
        }
    }
    if (!(n == 0 || (lo >= 0 && hi < V))) return false;
    if (n == 0 || D == 0) return true;
    const float* tp = reinterpret_cast<const float*>(t);
    float* yp = reinterpret_cast<float*>(y);
    parallel_dynamic((n + ROW_CHUNK - 1) / ROW_CHUNK, [&](int64_t c) {
        kernel(tp, ip, yp, c * ROW_CHUNK, std::min(n, (c + 1) * ROW_CHUNK), D);
    });
    return true;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("index_select_rows", &index_select_rows); }
"""

_ext = load_inline(
    name="index_select_rows_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        if not (table.is_cpu and idx.is_cpu):
            raise ValueError("expected CPU tensors")
        if table.dtype != torch.float32:
            raise TypeError(f"expected a float32 table, got {table.dtype}")
        if table.ndim != 2:
            raise ValueError(f"expected a 2-D table, got {table.ndim}-D")
        if idx.dtype != torch.int64:
            raise TypeError(f"expected an int64 index, got {idx.dtype}")
        if idx.ndim > 1:
            raise ValueError(f"expected a 1-D index, got {idx.ndim}-D")
        table = table.contiguous()
        idx = idx.contiguous()
        V, D = table.shape
        n = idx.numel()
        out = torch.empty((n, D), dtype=torch.float32)
        if not _ext.index_select_rows(table.data_ptr(), idx.data_ptr(), out.data_ptr(), V, D, n):
            values = idx.reshape(-1).tolist()
            raise IndexError(f"index_select(): index out of range for a table of {V} rows (indices span "
                             f"[{min(values)}, {max(values)}])")
        return out
