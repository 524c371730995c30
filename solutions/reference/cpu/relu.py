"""ReLU, C++: one pass over the flattened tensor, max(0, x) with NaN passing through as in eager, outputs of 4 MiB and more written with non-temporal (streaming) stores (no read-for-ownership of output lines that are not read back: a third less memory traffic), element ranges of whole 256-byte blocks split across threads with at::parallel_for; an AVX-512, AVX2 or baseline x86-64 SSE build of the loop is chosen at run time. Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 11.983 ms vs eager 14.459 ms (1.21x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>
#include <immintrin.h>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

// y[i] = max(0, x[i]) for i in [i0, i1). The MAXPS forms below take (0, x): they return their
// second operand when either is NaN, so NaN passes through as in eager. With `stream`, the aligned
// body goes out with non-temporal stores and an sfence orders them before the result is handed back.
static inline float relu1(float v) { return v < 0.0f ? 0.0f : v; }

__attribute__((noinline))
static void relu_sse(const float* __restrict__ x, float* __restrict__ y, int64_t i0, int64_t i1, bool stream) {
    int64_t i = i0;
    for (; i < i1 && ((uintptr_t)(y + i) & 15); ++i) y[i] = relu1(x[i]);
    const __m128 z = _mm_setzero_ps();
    if (stream) {
        for (; i + 16 <= i1; i += 16) {
            _mm_stream_ps(y + i, _mm_max_ps(z, _mm_loadu_ps(x + i)));
            _mm_stream_ps(y + i + 4, _mm_max_ps(z, _mm_loadu_ps(x + i + 4)));
            _mm_stream_ps(y + i + 8, _mm_max_ps(z, _mm_loadu_ps(x + i + 8)));
            _mm_stream_ps(y + i + 12, _mm_max_ps(z, _mm_loadu_ps(x + i + 12)));
        }
        _mm_sfence();
    } else {
        for (; i + 4 <= i1; i += 4) _mm_store_ps(y + i, _mm_max_ps(z, _mm_loadu_ps(x + i)));
    }
    for (; i < i1; ++i) y[i] = relu1(x[i]);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2"), noinline))
static void relu_avx2(const float* __restrict__ x, float* __restrict__ y, int64_t i0, int64_t i1, bool stream) {
    int64_t i = i0;
    for (; i < i1 && ((uintptr_t)(y + i) & 31); ++i) y[i] = relu1(x[i]);
    const __m256 z = _mm256_setzero_ps();
    if (stream) {
        for (; i + 32 <= i1; i += 32) {
            _mm256_stream_ps(y + i, _mm256_max_ps(z, _mm256_loadu_ps(x + i)));
            _mm256_stream_ps(y + i + 8, _mm256_max_ps(z, _mm256_loadu_ps(x + i + 8)));
            _mm256_stream_ps(y + i + 16, _mm256_max_ps(z, _mm256_loadu_ps(x + i + 16)));
            _mm256_stream_ps(y + i + 24, _mm256_max_ps(z, _mm256_loadu_ps(x + i + 24)));
        }
        _mm_sfence();
    } else {
        for (; i + 8 <= i1; i += 8) _mm256_store_ps(y + i, _mm256_max_ps(z, _mm256_loadu_ps(x + i)));
    }
    for (; i < i1; ++i) y[i] = relu1(x[i]);
}

__attribute__((target("avx512f"), noinline))
static void relu_avx512(const float* __restrict__ x, float* __restrict__ y, int64_t i0, int64_t i1, bool stream) {
    int64_t i = i0;
    for (; i < i1 && ((uintptr_t)(y + i) & 63); ++i) y[i] = relu1(x[i]);
    const __m512 z = _mm512_setzero_ps();
    if (stream) {
        for (; i + 64 <= i1; i += 64) {   // a whole 256-byte block per step: four full lines
            _mm512_stream_ps(y + i, _mm512_max_ps(z, _mm512_loadu_ps(x + i)));
            _mm512_stream_ps(y + i + 16, _mm512_max_ps(z, _mm512_loadu_ps(x + i + 16)));
            _mm512_stream_ps(y + i + 32, _mm512_max_ps(z, _mm512_loadu_ps(x + i + 32)));
            _mm512_stream_ps(y + i + 48, _mm512_max_ps(z, _mm512_loadu_ps(x + i + 48)));
        }
        _mm_sfence();
    } else {
        for (; i + 16 <= i1; i += 16) _mm512_store_ps(y + i, _mm512_max_ps(z, _mm512_loadu_ps(x + i)));
    }
    for (; i < i1; ++i) y[i] = relu1(x[i]);
}
#endif

using RangeFn = void (*)(const float*, float*, int64_t, int64_t, bool);

static RangeFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return &relu_avx512;
    if (__builtin_cpu_supports("avx2")) return &relu_avx2;
#endif
    return &relu_sse;
}

// y = relu(x) over n floats; x and y are the addresses of contiguous float32 buffers.
void relu_fwd(std::uintptr_t x_addr, std::uintptr_t y_addr, std::int64_t n) {
    static const RangeFn kernel = pick_kernel();
    if (n == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    // Streaming pays off once the output is well past what the caches would keep for a consumer.
    const bool stream = n >= (int64_t{1} << 20);
    // Chunks are whole 256-byte blocks, so no two threads write parts of one cache line.
    const int64_t nblk = (n + 63) / 64;
    at::parallel_for(0, nblk, 512, [&](int64_t b0, int64_t b1) {
        kernel(xp, yp, b0 * 64, std::min(n, b1 * 64), stream);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_fwd", &relu_fwd);
}
"""

_ext = load_inline(
    name="relu_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cpu":
            raise ValueError("expected a CPU tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a float32 tensor")
        xc = x.contiguous()
        out = torch.empty(xc.shape, dtype=torch.float32)
        _ext.relu_fwd(xc.data_ptr(), out.data_ptr(), xc.numel())
        return out
