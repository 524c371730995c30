"""RMSNorm trained (forward and backward), C++: a torch.autograd.Function over two row kernels. The forward reads each row once from memory into L1 (the next row software-prefetched meanwhile) for its sum of squares (two independent vector accumulators) and streams out x * rs * w from L1 (non-temporal stores), keeping the row's rs = 1/sqrt(mean(x^2) + eps); the backward takes each row of the upstream gradient and x in one pass for the row's sum of g*w*xhat while adding g*xhat into the weight's partial sum for its chunk of up to 64 rows, then streams out the input's gradient rs * (g*w - xhat * mean(g*w*xhat)) in a second pass over the L1-resident rows, prefetching the next rows; the chunks' partial sums are added up column by column at the end (on one thread: a few microseconds). Rows (forward) and chunks (backward) are split across threads with at::parallel_for; an AVX-512, AVX2+FMA or baseline x86-64 SSE build of the kernels is chosen at run time. Nearly all the time is the two trips through x and one through the upstream gradient, with the output and the input's gradient written once each; eager autograd of the reference's five elementwise and reduction ops runs about a dozen passes, each with its own temporary. Measured on the 2-core development machine (Intel Xeon, torch 2.13 CPU, 2026-12-07, `harness eval --target cpu`, other work on the cores, flagged noisy_timing): 1.96 ms vs eager 9.89 ms (5.05x; forward 0.88 + backward 1.08 ms against 2.63 + 7.17), 41% of the speed of light."""
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

template <class V> static ALWAYS_INLINE V vload(const float* p) { V v; std::memcpy(&v, p, sizeof(V)); return v; }
template <class V> static ALWAYS_INLINE void vstore(float* p, V v) { std::memcpy(p, &v, sizeof(V)); }
template <class V> static ALWAYS_INLINE V vsplat(float s) { return V{} + s; }
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

// Forward over rows [r0, r1) of a contiguous (R, D) x: rs = 1 / sqrt(mean(x^2) + eps), y = x * rs * w; rs kept per
// row. Two passes per row (sum of squares on two accumulators; output from L1).
template <class V>
static ALWAYS_INLINE void fwd_rows_impl(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, float* __restrict__ rstd, int64_t r0, int64_t r1,
                                        int64_t D, float eps) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D2 = D - D % (2 * W);
    const float inv_d = 1.0f / (float)D;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ yr = y + r * D;
        V q0 = V{}, q1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            const V a = vload<V>(xr + j), b = vload<V>(xr + j + W);
            q0 += a * a;
            q1 += b * b;
        }
        float q = hsum(q0 + q1);
        for (int64_t j = D2; j < D; ++j) q += xr[j] * xr[j];
        const float rs = 1.0f / std::sqrt(q * inv_d + eps);
        rstd[r] = rs;
        if (r + 1 < r1) prefetch_row(xr + D, D);
        const V vr = vsplat<V>(rs);
        stream_row<V>(yr, D, [&](int64_t j) { return vload<V>(xr + j) * vr * vload<V>(w + j); },
                      [&](int64_t j) { return xr[j] * rs * w[j]; });
    }
    stream_fence();
}

// Backward over rows [r0, r1) (one chunk): dx per row and the chunk's partial sums of g * xhat (dw).
//   xhat = x * rs, c = mean_j(g w xhat), dx = rs * (g w - xhat c).
template <class V>
static ALWAYS_INLINE void bwd_rows_impl(const float* __restrict__ g, const float* __restrict__ x,
                                        const float* __restrict__ w, const float* __restrict__ rstd,
                                        float* __restrict__ dx, float* __restrict__ dw, int64_t r0, int64_t r1,
                                        int64_t D) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D2 = D - D % (2 * W);
    const float inv_d = 1.0f / (float)D;
    for (int64_t j = 0; j < D; ++j) dw[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ gr = g + r * D;
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ dxr = dx + r * D;
        const float rs = rstd[r];
        const V vr = vsplat<V>(rs);
        V c0 = V{}, c1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            const V g0 = vload<V>(gr + j), g1 = vload<V>(gr + j + W);
            const V h0 = vload<V>(xr + j) * vr, h1 = vload<V>(xr + j + W) * vr;
            c0 += g0 * vload<V>(w + j) * h0;
            c1 += g1 * vload<V>(w + j + W) * h1;
            vstore<V>(dw + j, vload<V>(dw + j) + g0 * h0);
            vstore<V>(dw + j + W, vload<V>(dw + j + W) + g1 * h1);
        }
        float c = hsum(c0 + c1);
        for (int64_t j = D2; j < D; ++j) {
            const float h = xr[j] * rs;
            c += gr[j] * w[j] * h;
            dw[j] += gr[j] * h;
        }
        c *= inv_d;
        if (r + 1 < r1) {
            prefetch_row(gr + D, D);
            prefetch_row(xr + D, D);
        }
        const V vc = vsplat<V>(c);
        stream_row<V>(dxr, D, [&](int64_t j) { return vr * (vload<V>(gr + j) * vload<V>(w + j) - vload<V>(xr + j) * vr * vc); },
                      [&](int64_t j) { return rs * (gr[j] * w[j] - xr[j] * rs * c); });
    }
    stream_fence();
}

// out[j] = sum over n partial rows (stride ld) of part[k * ld + j], for j in [j0, j1).
template <class V>
static ALWAYS_INLINE void colsum_impl(const float* __restrict__ part, float* __restrict__ out, int64_t n,
                                      int64_t ld, int64_t j0, int64_t j1) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    int64_t j = j0;
    for (; j + W <= j1; j += W) {
        V s = V{};
        for (int64_t k = 0; k < n; ++k) s += vload<V>(part + k * ld + j);
        vstore<V>(out + j, s);
    }
    for (; j < j1; ++j) {
        float s = 0.0f;
        for (int64_t k = 0; k < n; ++k) s += part[k * ld + j];
        out[j] = s;
    }
}

#define KERNELS(ATTR, SUFFIX, V)                                                                                   \
    ATTR static void fwd_rows_##SUFFIX(const float* x, const float* w, float* y, float* rstd, int64_t r0,       \
                                       int64_t r1, int64_t D, float eps) {                                        \
        fwd_rows_impl<V>(x, w, y, rstd, r0, r1, D, eps);                                                           \
    }                                                                                                              \
    ATTR static void bwd_rows_##SUFFIX(const float* g, const float* x, const float* w, const float* rstd,       \
                                       float* dx, float* dw, int64_t r0, int64_t r1, int64_t D) {                 \
        bwd_rows_impl<V>(g, x, w, rstd, dx, dw, r0, r1, D);                                                        \
    }                                                                                                              \
    ATTR static void colsum_##SUFFIX(const float* part, float* out, int64_t n, int64_t ld, int64_t j0,          \
                                     int64_t j1) {                                                                 \
        colsum_impl<V>(part, out, n, ld, j0, j1);                                                                  \
    }

KERNELS(__attribute__((noinline)), sse, f32x4)
#if defined(__GNUC__) && defined(__x86_64__)
KERNELS(__attribute__((target("avx2,fma"), noinline)), avx2, f32x8)
KERNELS(__attribute__((target("avx512f,fma"), noinline)), avx512, f32x16)
#endif

struct Kernels {
    void (*fwd)(const float*, const float*, float*, float*, int64_t, int64_t, int64_t, float);
    void (*bwd)(const float*, const float*, const float*, const float*, float*, float*, int64_t, int64_t, int64_t);
    void (*colsum)(const float*, float*, int64_t, int64_t, int64_t, int64_t);
};

static Kernels pick() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return {&fwd_rows_avx512, &bwd_rows_avx512, &colsum_avx512};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {&fwd_rows_avx2, &bwd_rows_avx2, &colsum_avx2};
#endif
    return {&fwd_rows_sse, &bwd_rows_sse, &colsum_sse};
}

static const Kernels& kernels() {
    static const Kernels k = pick();
    return k;
}

// Rows per task: about 16K elements, so that a few long rows still go to both threads.
static int64_t row_grain(int64_t D) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)); }

// x, y: contiguous (R, D) float32; w: D float32; rstd: R float32 (written).
void rms_fwd(std::uintptr_t x, std::uintptr_t w, std::uintptr_t y, std::uintptr_t rstd, std::int64_t R,
             std::int64_t D, double eps) {
    if (R == 0 || D == 0) return;
    const Kernels& k = kernels();
    const float* xp = reinterpret_cast<const float*>(x);
    const float* wp = reinterpret_cast<const float*>(w);
    float* yp = reinterpret_cast<float*>(y);
    float* rp = reinterpret_cast<float*>(rstd);
    const float e = (float)eps;
    at::parallel_for(0, R, row_grain(D), [&](int64_t r0, int64_t r1) { k.fwd(xp, wp, yp, rp, r0, r1, D, e); });
}

// g, x, dx: contiguous (R, D) float32; partial: ceil(R / chunk) * D float32 scratch; dw: D float32.
void rms_bwd(std::uintptr_t g, std::uintptr_t x, std::uintptr_t w, std::uintptr_t rstd, std::uintptr_t dx,
             std::uintptr_t partial, std::uintptr_t dw, std::int64_t R, std::int64_t D, std::int64_t chunk) {
    if (D == 0) return;
    const Kernels& k = kernels();
    const float* gp = reinterpret_cast<const float*>(g);
    const float* xp = reinterpret_cast<const float*>(x);
    const float* wp = reinterpret_cast<const float*>(w);
    const float* rp = reinterpret_cast<const float*>(rstd);
    float* dxp = reinterpret_cast<float*>(dx);
    float* pp = reinterpret_cast<float*>(partial);
    float* out = reinterpret_cast<float*>(dw);
    const int64_t chunks = (R + chunk - 1) / chunk;
    if (chunks == 0) {
        std::memset(out, 0, sizeof(float) * D);
        return;
    }
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
            k.bwd(gp, xp, wp, rp, dxp, pp + c * D, c * chunk, std::min(R, (c + 1) * chunk), D);
    });
    k.colsum(pp, out, chunks, D, 0, D);   // a few microseconds: not worth another parallel region
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("rms_fwd", &rms_fwd);
    m.def("rms_bwd", &rms_bwd);
}
"""

_ext = load_inline(
    name="rms_norm_training_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


def _chunk(rows: int) -> int:
    """Rows per partial sum of the parameters' gradients: 64, or fewer so that a few rows still make 8 chunks."""
    return max(1, min(64, -(-rows // 8)))


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        D = x.shape[-1]
        x2 = x.contiguous().view(-1, D)
        w = weight.contiguous()
        R = x2.shape[0]
        y = torch.empty_like(x2)
        rstd = torch.empty(R, dtype=torch.float32)
        _ext.rms_fwd(x2.data_ptr(), w.data_ptr(), y.data_ptr(), rstd.data_ptr(), R, D, eps)
        ctx.save_for_backward(x2, w, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, grad):
        x2, w, rstd = ctx.saved_tensors
        R, D = x2.shape
        g = grad.contiguous().view(R, D)
        dx = torch.empty_like(x2)
        chunk = _chunk(R)
        partial = torch.empty((R + chunk - 1) // chunk, D, dtype=torch.float32)
        dw = torch.empty(D, dtype=torch.float32)
        _ext.rms_bwd(g.data_ptr(), x2.data_ptr(), w.data_ptr(), rstd.data_ptr(), dx.data_ptr(), partial.data_ptr(),
                     dw.data_ptr(), R, D, chunk)
        return dx.view(grad.shape), dw, None


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        # The reference's parameter, made by the same call (the same seeded values).
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        if not (x.is_cpu and weight.is_cpu):
            raise ValueError("expected CPU tensors")
        if x.dtype != torch.float32 or weight.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if x.ndim < 1 or weight.numel() != x.shape[-1]:
            raise ValueError("weight must match the last dimension of x")
        return _RMSNorm.apply(x, weight, self.eps)
