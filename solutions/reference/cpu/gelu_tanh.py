"""GELU (tanh approximation), C++: uses 0.5*x*(1 + tanh(u)) = x*sigmoid(2u), evaluated from exp(-2|u|) with a branch-free polynomial exp so the elementwise loop vectorizes; element ranges split across threads with at::parallel_for; an AVX2+FMA build of the loop is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine (torch 2.13 CPU, 2026-12-06, `harness eval`, other work on the cores): 0.735 ms vs eager 1.138 ms (1.55x), 22% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cstdint>
#include <cstring>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE float bits_to_float(int32_t i) { float f; std::memcpy(&f, &i, 4); return f; }

// exp(x) for x <= 0: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), degree-6
// polynomial for exp(r) (Cephes expf), times 2^n built from exponent bits. A single clamp
// (x >= -87 keeps 2^n a normal float) and no branches, so loops calling it vectorize.
static ALWAYS_INLINE float exp_nonpos(float x) {
    x = x < -87.0f ? -87.0f : x;
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

// 0.5 * x * (1 + tanh(u)) = x * sigmoid(2u). With e = exp(-2|u|) in (0, 1]:
// sigmoid(2u) = 1 / (1 + e) for u >= 0 and e / (1 + e) for u < 0, so exp never overflows.
static ALWAYS_INLINE void gelu_impl(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t i0, int64_t i1) {
    constexpr float kBeta = 0.7978845608028654f;   // sqrt(2 / pi)
    constexpr float kKappa = 0.044715f;
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) {
        const float v = x[i];
        const float u = kBeta * (v + kKappa * v * v * v);
        const float au = u < 0.0f ? -u : u;
        const float e = exp_nonpos(-2.0f * au);
        y[i] = v * (u < 0.0f ? e : 1.0f) / (1.0f + e);
    }
}

using RangeFn = void (*)(const float*, float*, int64_t, int64_t);

__attribute__((noinline))
static void gelu_baseline(const float* x, float* y, int64_t i0, int64_t i1) { gelu_impl(x, y, i0, i1); }

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void gelu_avx2(const float* x, float* y, int64_t i0, int64_t i1) { gelu_impl(x, y, i0, i1); }
#endif

static RangeFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &gelu_avx2;
#endif
    return &gelu_baseline;
}

// y = gelu_tanh(x) over n contiguous float32 elements (x and y contiguous, same shape).
void gelu_tanh(std::uintptr_t x, std::uintptr_t y, std::int64_t n) {
    static const RangeFn kernel = pick_kernel();
    if (n == 0) return;
    const float* xp = reinterpret_cast<const float*>(x);
    float* yp = reinterpret_cast<float*>(y);
    at::parallel_for(0, n, 16384, [&](int64_t i0, int64_t i1) { kernel(xp, yp, i0, i1); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("gelu_tanh", &gelu_tanh); }
"""

_ext = load_inline(
    name="gelu_tanh_cpu",
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
        if x.dtype != torch.float32:
            raise TypeError(f"expected a float32 tensor, got {x.dtype}")
        x = x.contiguous()
        out = torch.empty_like(x)
        _ext.gelu_tanh(x.data_ptr(), out.data_ptr(), x.numel())
        return out
