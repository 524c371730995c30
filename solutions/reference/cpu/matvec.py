"""Matrix-vector product, C++: 4 rows of A per sweep share each load of v, each row dot product kept in vector lanes (omp simd reductions); row blocks split across threads with at::parallel_for; an AVX2+FMA build of the kernel is chosen at run time when the CPU has it (baseline x86-64 build otherwise). Measured on the 2-core CI machine, torch 2.13 CPU (2026-12-06, `harness eval`, other work on the cores): 1.256 ms vs eager 1.270 ms (1.01x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cstdint>

#define ALWAYS_INLINE inline __attribute__((always_inline))

// y[i] = sum_k A[i, k] * v[k] for rows [i0, i1) of a contiguous (M, K) matrix.
static ALWAYS_INLINE void matvec_impl(const float* __restrict__ A, const float* __restrict__ v,
                                      float* __restrict__ y, int64_t i0, int64_t i1, int64_t K) {
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
        const float* __restrict__ a0 = A + i * K;
        const float* __restrict__ a1 = a0 + K;
        const float* __restrict__ a2 = a1 + K;
        const float* __restrict__ a3 = a2 + K;
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int64_t k = 0; k < K; ++k) {
            const float vk = v[k];
            s0 += a0[k] * vk;
            s1 += a1[k] * vk;
            s2 += a2[k] * vk;
            s3 += a3[k] * vk;
        }
        y[i] = s0;
        y[i + 1] = s1;
        y[i + 2] = s2;
        y[i + 3] = s3;
    }
    for (; i < i1; ++i) {
        const float* __restrict__ a = A + i * K;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int64_t k = 0; k < K; ++k) s += a[k] * v[k];
        y[i] = s;
    }
}

using MvFn = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void matvec_baseline(const float* A, const float* v, float* y, int64_t i0, int64_t i1, int64_t K) {
    matvec_impl(A, v, y, i0, i1, K);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void matvec_avx2(const float* A, const float* v, float* y, int64_t i0, int64_t i1, int64_t K) {
    matvec_impl(A, v, y, i0, i1, K);
}
#endif

static MvFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &matvec_avx2;
#endif
    return &matvec_baseline;
}

// y = A @ v for contiguous float32 A (M, K) and v (K); y (M) allocated by the caller.
void matvec(std::uintptr_t a_ptr, std::uintptr_t v_ptr, std::uintptr_t y_ptr, std::int64_t M, std::int64_t K) {
    static const MvFn kernel = pick_kernel();
    if (M == 0) return;
    const float* ap = reinterpret_cast<const float*>(a_ptr);
    const float* vp = reinterpret_cast<const float*>(v_ptr);
    float* yp = reinterpret_cast<float*>(y_ptr);
    if (K == 0) {
        for (int64_t i = 0; i < M; ++i) yp[i] = 0.0f;
        return;
    }
    const int64_t nblocks = (M + 3) / 4;
    at::parallel_for(0, nblocks, 4, [&](int64_t b0, int64_t b1) {
        kernel(ap, vp, yp, b0 * 4, std::min(M, b1 * 4), K);
    });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("matvec", &matvec); }
"""

_ext = load_inline(
    name="matvec_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if not (A.is_cpu and v.is_cpu):
            raise ValueError("expected CPU tensors")
        if A.dim() != 2 or v.dim() != 1 or A.size(1) != v.size(0):
            raise ValueError("expected (M, K) @ (K,)")
        if A.dtype != torch.float32 or v.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        A = A.contiguous()
        v = v.contiguous()
        M, K = A.shape
        out = torch.empty(M, dtype=torch.float32)
        _ext.matvec(A.data_ptr(), v.data_ptr(), out.data_ptr(), M, K)
        return out
