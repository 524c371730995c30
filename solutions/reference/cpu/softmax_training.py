"""Row-wise softmax trained (forward and backward), C++: a torch.autograd.Function over two row kernels. The forward reads each row once from memory into L1 for its maximum (the next row software-prefetched meanwhile), then computes e = exp(x - max) (a branch-free polynomial exp on 16 / 8 / 4 lanes) into the output row with its sum, and scales the L1-resident row by 1/sum; the output is kept for the backward, which reads each row of it and of the upstream gradient once for s = sum(p * g) and streams out p * (g - s) from L1 (non-temporal stores), prefetching the next rows. Rows are split across threads with at::parallel_for; an AVX-512, AVX2+FMA or baseline x86-64 SSE build of the kernels is chosen at run time. The forward's time is the exps and one trip through x and the output, as in eager's fused softmax kernel; the backward's is one trip through the output, the upstream gradient and the input's gradient, one pass over each row from memory, with streaming stores that skip the read-for-ownership of the input's gradient. Measured on the 2-core development machine (Intel Xeon, torch 2.13 CPU, 2026-12-07, `harness eval --target cpu`, other work on the cores, flagged noisy_timing): 3.52 ms vs eager 4.00 ms (1.16x; forward 1.72 + backward 1.80 ms against 1.82 + 2.18; 1.58x, 3.49 ms vs 5.50 ms, in another run)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))

typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef int32_t i32x16 __attribute__((vector_size(64)));

template <class V> struct IntOf;
template <> struct IntOf<f32x4> { using T = i32x4; };
template <> struct IntOf<f32x8> { using T = i32x8; };
template <> struct IntOf<f32x16> { using T = i32x16; };

template <class V> static ALWAYS_INLINE V vload(const float* p) { V v; std::memcpy(&v, p, sizeof(V)); return v; }
template <class V> static ALWAYS_INLINE void vstore(float* p, V v) { std::memcpy(p, &v, sizeof(V)); }
template <class V> static ALWAYS_INLINE V vsplat(float s) { return V{} + s; }
template <class V> static ALWAYS_INLINE V vmax(V a, V b) { return a > b ? a : b; }
template <class V> static ALWAYS_INLINE float hsum(V v) {
    float s = 0.0f;
    for (int i = 0; i < (int)(sizeof(V) / 4); ++i) s += v[i];
    return s;
}

// Non-temporal (streaming) stores of whole aligned vectors: an output row is not read again by this call, so its
// lines skip the read-for-ownership. Inline asm, since the intrinsics cannot be inlined into the width-generic row
// code; each width's instruction is reached only from the build whose ISA has it.
static ALWAYS_INLINE void vstream(float* p, f32x4 v) { asm volatile("movntps %1, %0" : "=m"(*(f32x4*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x8 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x8*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x16 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x16*)p) : "v"(v)); }
static ALWAYS_INLINE void stream_fence() { asm volatile("sfence" ::: "memory"); }

// Pull rows [p, p + D) of each array toward L1 ahead of their turn: a row of 1024 floats is one 4 KiB page, and the
// hardware prefetcher does not cross pages, so without this each row would start with a full memory latency.
static ALWAYS_INLINE void prefetch_row(const float* p, int64_t D) {
    for (int64_t j = 0; j < D; j += 16) __builtin_prefetch(p + j);
}

// out[j] = vf(j) (a vector at j, streamed) or sf(j) (a scalar, at the unaligned head and the ragged tail), j < n.
template <class V, class VF, class SF>
static ALWAYS_INLINE void stream_row(float* __restrict__ out, int64_t n, VF vf, SF sf) {
    constexpr int64_t W = (int64_t)(sizeof(V) / sizeof(float));
    const int64_t head = std::min<int64_t>(n, (int64_t)((sizeof(V) - (uintptr_t)out % sizeof(V)) % sizeof(V)) / 4);
    int64_t j = 0;
    for (; j < head; ++j) out[j] = sf(j);
    for (; j + W <= n; j += W) vstream(out + j, vf(j));
    for (; j < n; ++j) out[j] = sf(j);
}
template <class V> static ALWAYS_INLINE float hmax(V v) {
    float m = v[0];
    for (int i = 1; i < (int)(sizeof(V) / 4); ++i) m = v[i] > m ? v[i] : m;
    return m;
}

// exp(t) for t <= 0 (here t = x - rowmax). t = k ln2 + f with k = round(t / ln2) and ln2 split in two (so f is exact
// to a few ulps), exp(f) by a degree-6 polynomial on |f| <= ln2 / 2, then scaled by 2^k built in the exponent bits.
// Arguments under -87 are clamped (their exp, < 2^-125, is 0 beside the row's largest term, which is 1).
template <class V, class I>
static ALWAYS_INLINE V exp_le0(V t) {
    t = t < -87.0f ? -87.0f : t;
    const V k = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;   // round to nearest (1.5 * 2^23 trick)
    const V f = (t - k * 0.693359375f) - k * -2.12194440e-4f;
    V p = f * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * f + 8.3334519073e-3f;
    p = p * f + 4.1665795894e-2f;
    p = p * f + 1.6666665459e-1f;
    p = p * f + 5.0000001201e-1f;
    p = p * (f * f) + f + 1.0f;
    I bits;
    if constexpr (sizeof(V) == 4) bits = ((I)k + 127) << 23;
    else bits = (__builtin_convertvector(k, I) + 127) << 23;
    V scale;
    std::memcpy(&scale, &bits, sizeof(V));
    return p * scale;
}

// Forward over rows [r0, r1) of a contiguous (R, D) x: y = exp(x - max) / sum.
template <class V>
static ALWAYS_INLINE void fwd_rows_impl(const float* __restrict__ x, float* __restrict__ y, int64_t r0, int64_t r1,
                                        int64_t D) {
    using I = typename IntOf<V>::T;
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D2 = D - D % (2 * W), D1 = D - D % W;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ yr = y + r * D;
        V m0 = vsplat<V>(-__builtin_inff()), m1 = m0;
        for (int64_t j = 0; j < D2; j += 2 * W) {
            m0 = vmax(m0, vload<V>(xr + j));
            m1 = vmax(m1, vload<V>(xr + j + W));
        }
        float mx = hmax(vmax(m0, m1));
        for (int64_t j = D2; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
        if (r + 1 < r1) prefetch_row(xr + D, D);
        const V vm = vsplat<V>(mx);
        V s0 = V{}, s1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            const V e0 = exp_le0<V, I>(vload<V>(xr + j) - vm);
            const V e1 = exp_le0<V, I>(vload<V>(xr + j + W) - vm);
            vstore<V>(yr + j, e0);
            vstore<V>(yr + j + W, e1);
            s0 += e0;
            s1 += e1;
        }
        float s = hsum(s0 + s1);
        for (int64_t j = D2; j < D; ++j) {
            yr[j] = exp_le0<float, int32_t>(xr[j] - mx);
            s += yr[j];
        }
        const float inv = 1.0f / s;
        const V vi = vsplat<V>(inv);
        for (int64_t j = 0; j < D1; j += W) vstore<V>(yr + j, vload<V>(yr + j) * vi);
        for (int64_t j = D1; j < D; ++j) yr[j] *= inv;
    }
}

// Backward over rows [r0, r1): dx = p * (g - sum_j p g).
template <class V>
static ALWAYS_INLINE void bwd_rows_impl(const float* __restrict__ p, const float* __restrict__ g,
                                        float* __restrict__ dx, int64_t r0, int64_t r1, int64_t D) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D2 = D - D % (2 * W);
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ pr = p + r * D;
        const float* __restrict__ gr = g + r * D;
        float* __restrict__ dxr = dx + r * D;
        V s0 = V{}, s1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            s0 += vload<V>(pr + j) * vload<V>(gr + j);
            s1 += vload<V>(pr + j + W) * vload<V>(gr + j + W);
        }
        float s = hsum(s0 + s1);
        for (int64_t j = D2; j < D; ++j) s += pr[j] * gr[j];
        if (r + 1 < r1) {
            prefetch_row(pr + D, D);
            prefetch_row(gr + D, D);
        }
        const V vs = vsplat<V>(s);
        stream_row<V>(dxr, D, [&](int64_t j) { return vload<V>(pr + j) * (vload<V>(gr + j) - vs); },
                      [&](int64_t j) { return pr[j] * (gr[j] - s); });
    }
    stream_fence();
}

#define KERNELS(ATTR, SUFFIX, V)                                                                                   \
    ATTR static void fwd_rows_##SUFFIX(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {            \
        fwd_rows_impl<V>(x, y, r0, r1, D);                                                                         \
    }                                                                                                              \
    ATTR static void bwd_rows_##SUFFIX(const float* p, const float* g, float* dx, int64_t r0, int64_t r1,        \
                                       int64_t D) {                                                                \
        bwd_rows_impl<V>(p, g, dx, r0, r1, D);                                                                     \
    }

KERNELS(__attribute__((noinline)), sse, f32x4)
#if defined(__GNUC__) && defined(__x86_64__)
KERNELS(__attribute__((target("avx2,fma"), noinline)), avx2, f32x8)
KERNELS(__attribute__((target("avx512f,fma"), noinline)), avx512, f32x16)
#endif

struct Kernels {
    void (*fwd)(const float*, float*, int64_t, int64_t, int64_t);
    void (*bwd)(const float*, const float*, float*, int64_t, int64_t, int64_t);
};

static Kernels pick() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return {&fwd_rows_avx512, &bwd_rows_avx512};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {&fwd_rows_avx2, &bwd_rows_avx2};
#endif
    return {&fwd_rows_sse, &bwd_rows_sse};
}

static const Kernels& kernels() {
    static const Kernels k = pick();
    return k;
}

// Rows per task: about 16K elements, so that a few long rows still go to both threads.
static int64_t row_grain(int64_t D) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)); }

// x, y: contiguous (R, D) float32.
void softmax_fwd(std::uintptr_t x, std::uintptr_t y, std::int64_t R, std::int64_t D) {
    if (R == 0 || D == 0) return;
    const Kernels& k = kernels();
    const float* xp = reinterpret_cast<const float*>(x);
    float* yp = reinterpret_cast<float*>(y);
    at::parallel_for(0, R, row_grain(D), [&](int64_t r0, int64_t r1) { k.fwd(xp, yp, r0, r1, D); });
}

// p (the forward's output), g, dx: contiguous (R, D) float32.
void softmax_bwd(std::uintptr_t p, std::uintptr_t g, std::uintptr_t dx, std::int64_t R, std::int64_t D) {
    if (R == 0 || D == 0) return;
    const Kernels& k = kernels();
    const float* pp = reinterpret_cast<const float*>(p);
    const float* gp = reinterpret_cast<const float*>(g);
    float* dxp = reinterpret_cast<float*>(dx);
    at::parallel_for(0, R, row_grain(D), [&](int64_t r0, int64_t r1) { k.bwd(pp, gp, dxp, r0, r1, D); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_fwd", &softmax_fwd);
    m.def("softmax_bwd", &softmax_bwd);
}
"""

_ext = load_inline(
    name="softmax_training_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x2 = x.contiguous()
        R, D = x2.shape
        y = torch.empty_like(x2)
        _ext.softmax_fwd(x2.data_ptr(), y.data_ptr(), R, D)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        R, D = y.shape
        g = grad.contiguous()
        dx = torch.empty_like(y)
        _ext.softmax_bwd(y.data_ptr(), g.data_ptr(), dx.data_ptr(), R, D)
        return dx


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cpu:
            raise ValueError("expected a CPU tensor")
        if x.dtype != torch.float32:
            raise TypeError("expected a float32 tensor")
        if x.ndim != 2:
            raise ValueError("expected a 2-D tensor (softmax over dim 1)")
        return _Softmax.apply(x)
