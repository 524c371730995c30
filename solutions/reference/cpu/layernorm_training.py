"""LayerNorm trained (forward and backward), C++: a torch.autograd.Function over two row kernels. The forward reads each row once from memory into L1, the next row software-prefetched meanwhile (a sum pass, a centred sum-of-squares pass and a normalize-scale-shift pass, each on independent vector accumulators), keeps the row's mean and 1/std, and writes the output with non-temporal (streaming) stores; the backward takes each row of the upstream gradient and x in one pass for the row's two sums (of g*w and of g*w*xhat) while adding g*xhat and g into the weight's and bias's partial sums for its chunk of up to 64 rows, then streams out the input's gradient in a second pass over the L1-resident rows, prefetching the next rows; the chunks' partial sums are added up column by column at the end (on one thread: a few microseconds). Rows (forward) and chunks (backward) are split across threads with at::parallel_for; an AVX-512, AVX2+FMA or baseline x86-64 SSE build of the kernels is chosen at run time. The time is memory traffic: one trip through x and the output in the forward, one through the upstream gradient, x and the input's gradient in the backward. Eager's native layer-norm kernels make the same trips (its backward also takes the weight's and bias's gradients in its one pass), so the margin is small: the streaming stores, which skip the read-for-ownership of the output and of the input's gradient, and the prefetches across the rows' 4 KiB pages, where the hardware prefetcher stops. Measured on the 2-core development machine (Intel Xeon, torch 2.13 CPU, 2026-12-07, `harness eval --target cpu`, other work on the cores, flagged noisy_timing): 2.27 ms vs eager 2.88 ms (1.27x; forward 0.89 + backward 1.38 ms against 1.21 + 1.69), 14% of the speed of light."""
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

// Forward over rows [r0, r1) of a contiguous (R, D) x: y = (x - mean) * rstd * w + b, mean and rstd kept per row.
// Three passes per row (sum; centred sum of squares; output), the last two from L1.
template <class V>
static ALWAYS_INLINE void fwd_rows_impl(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ b, float* __restrict__ y, float* __restrict__ mean,
                                        float* __restrict__ rstd, int64_t r0, int64_t r1, int64_t D, float eps) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D2 = D - D % (2 * W);
    const float inv_d = 1.0f / (float)D;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ yr = y + r * D;
        V s0 = V{}, s1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            s0 += vload<V>(xr + j);
            s1 += vload<V>(xr + j + W);
        }
        float s = hsum(s0 + s1);
        for (int64_t j = D2; j < D; ++j) s += xr[j];
        const float m = s * inv_d;
        if (r + 1 < r1) prefetch_row(xr + D, D);
        const V vm = vsplat<V>(m);
        V q0 = V{}, q1 = V{};
        for (int64_t j = 0; j < D2; j += 2 * W) {
            const V d0 = vload<V>(xr + j) - vm, d1 = vload<V>(xr + j + W) - vm;
            q0 += d0 * d0;
            q1 += d1 * d1;
        }
        float q = hsum(q0 + q1);
        for (int64_t j = D2; j < D; ++j) q += (xr[j] - m) * (xr[j] - m);
        const float rs = 1.0f / std::sqrt(q * inv_d + eps);   // biased variance, as nn.LayerNorm
        mean[r] = m;
        rstd[r] = rs;
        const V vr = vsplat<V>(rs);
        stream_row<V>(yr, D, [&](int64_t j) { return (vload<V>(xr + j) - vm) * vr * vload<V>(w + j) + vload<V>(b + j); },
                      [&](int64_t j) { return (xr[j] - m) * rs * w[j] + b[j]; });
    }
    stream_fence();
}

// Backward over rows [r0, r1) (one chunk): dx per row; the chunk's partial sums of g * xhat (dw) and g (db).
//   xhat = (x - mean) * rstd, a = mean_j(g w), c = mean_j(g w xhat), dx = rstd * (g w - a - xhat c).
template <class V>
static ALWAYS_INLINE void bwd_rows_impl(const float* __restrict__ g, const float* __restrict__ x,
                                        const float* __restrict__ w, const float* __restrict__ mean,
                                        const float* __restrict__ rstd, float* __restrict__ dx,
                                        float* __restrict__ dw, float* __restrict__ db, int64_t r0, int64_t r1,
                                        int64_t D) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t D1 = D - D % W;
    const float inv_d = 1.0f / (float)D;
    for (int64_t j = 0; j < D; ++j) dw[j] = db[j] = 0.0f;
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ gr = g + r * D;
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ dxr = dx + r * D;
        const float m = mean[r], rs = rstd[r];
        const V vm = vsplat<V>(m), vr = vsplat<V>(rs);
        V a0 = V{}, c0 = V{};
        for (int64_t j = 0; j < D1; j += W) {
            const V gv = vload<V>(gr + j);
            const V xh = (vload<V>(xr + j) - vm) * vr;
            const V gw = gv * vload<V>(w + j);
            a0 += gw;
            c0 += gw * xh;
            vstore<V>(dw + j, vload<V>(dw + j) + gv * xh);
            vstore<V>(db + j, vload<V>(db + j) + gv);
        }
        float a = hsum(a0), c = hsum(c0);
        for (int64_t j = D1; j < D; ++j) {
            const float xh = (xr[j] - m) * rs, gw = gr[j] * w[j];
            a += gw;
            c += gw * xh;
            dw[j] += gr[j] * xh;
            db[j] += gr[j];
        }
        a *= inv_d;
        c *= inv_d;
        if (r + 1 < r1) {
            prefetch_row(gr + D, D);
            prefetch_row(xr + D, D);
        }
        const V va = vsplat<V>(a), vc = vsplat<V>(c);
        stream_row<V>(dxr, D,
                      [&](int64_t j) {
                          const V xh = (vload<V>(xr + j) - vm) * vr;
                          return vr * (vload<V>(gr + j) * vload<V>(w + j) - va - xh * vc);
                      },
                      [&](int64_t j) { return rs * (gr[j] * w[j] - a - (xr[j] - m) * rs * c); });
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

#define KERNELS(ATTR, SUFFIX, V)                                                                                  \
    ATTR static void fwd_rows_##SUFFIX(const float* x, const float* w, const float* b, float* y, float* mean,          \
                                  float* rstd, int64_t r0, int64_t r1, int64_t D, float eps) {                    \
        fwd_rows_impl<V>(x, w, b, y, mean, rstd, r0, r1, D, eps);                                                 \
    }                                                                                                             \
    ATTR static void bwd_rows_##SUFFIX(const float* g, const float* x, const float* w, const float* mean,             \
                                  const float* rstd, float* dx, float* dw, float* db, int64_t r0, int64_t r1,     \
                                  int64_t D) {                                                                    \
        bwd_rows_impl<V>(g, x, w, mean, rstd, dx, dw, db, r0, r1, D);                                             \
    }                                                                                                             \
    ATTR static void colsum_##SUFFIX(const float* part, float* out, int64_t n, int64_t ld, int64_t j0, int64_t j1) {  \
        colsum_impl<V>(part, out, n, ld, j0, j1);                                                                 \
    }

KERNELS(__attribute__((noinline)), sse, f32x4)
#if defined(__GNUC__) && defined(__x86_64__)
KERNELS(__attribute__((target("avx2,fma"), noinline)), avx2, f32x8)
KERNELS(__attribute__((target("avx512f,fma"), noinline)), avx512, f32x16)
#endif

struct Kernels {
    void (*fwd)(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, int64_t, float);
    void (*bwd)(const float*, const float*, const float*, const float*, const float*, float*, float*, float*,
                int64_t, int64_t, int64_t);
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

// x, y: contiguous (R, D) float32; w, b: D float32; mean, rstd: R float32 (written).
void ln_fwd(std::uintptr_t x, std::uintptr_t w, std::uintptr_t b, std::uintptr_t y, std::uintptr_t mean,
            std::uintptr_t rstd, std::int64_t R, std::int64_t D, double eps) {
    if (R == 0 || D == 0) return;
    const Kernels& k = kernels();
    const float* xp = reinterpret_cast<const float*>(x);
    const float* wp = reinterpret_cast<const float*>(w);
    const float* bp = reinterpret_cast<const float*>(b);
    float* yp = reinterpret_cast<float*>(y);
    float* mp = reinterpret_cast<float*>(mean);
    float* rp = reinterpret_cast<float*>(rstd);
    const float e = (float)eps;
    at::parallel_for(0, R, row_grain(D),
                     [&](int64_t r0, int64_t r1) { k.fwd(xp, wp, bp, yp, mp, rp, r0, r1, D, e); });
}

// g, x, dx: contiguous (R, D) float32; partial: ceil(R / chunk) * 2 * D float32 scratch; dwdb: 2 * D float32
// (the weight's gradient, then the bias's).
void ln_bwd(std::uintptr_t g, std::uintptr_t x, std::uintptr_t w, std::uintptr_t mean, std::uintptr_t rstd,
            std::uintptr_t dx, std::uintptr_t partial, std::uintptr_t dwdb, std::int64_t R, std::int64_t D,
            std::int64_t chunk) {
    if (D == 0) return;
    const Kernels& k = kernels();
    const float* gp = reinterpret_cast<const float*>(g);
    const float* xp = reinterpret_cast<const float*>(x);
    const float* wp = reinterpret_cast<const float*>(w);
    const float* mp = reinterpret_cast<const float*>(mean);
    const float* rp = reinterpret_cast<const float*>(rstd);
    float* dxp = reinterpret_cast<float*>(dx);
    float* pp = reinterpret_cast<float*>(partial);
    float* out = reinterpret_cast<float*>(dwdb);
    const int64_t chunks = (R + chunk - 1) / chunk;
    if (chunks == 0) {
        std::memset(out, 0, sizeof(float) * 2 * D);
        return;
    }
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
            k.bwd(gp, xp, wp, mp, rp, dxp, pp + c * 2 * D, pp + c * 2 * D + D, c * chunk,
                  std::min(R, (c + 1) * chunk), D);
    });
    k.colsum(pp, out, chunks, 2 * D, 0, 2 * D);   // a few microseconds: not worth another parallel region
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("ln_fwd", &ln_fwd);
    m.def("ln_bwd", &ln_bwd);
}
"""

_ext = load_inline(
    name="layernorm_training_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


def _chunk(rows: int) -> int:
    """Rows per partial sum of the parameters' gradients: 64, or fewer so that a few rows still make 8 chunks."""
    return max(1, min(64, -(-rows // 8)))


class _LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        D = x.shape[-1]
        x2 = x.contiguous().view(-1, D)
        w, b = weight.contiguous(), bias.contiguous()
        R = x2.shape[0]
        y = torch.empty_like(x2)
        mean = torch.empty(R, dtype=torch.float32)
        rstd = torch.empty(R, dtype=torch.float32)
        _ext.ln_fwd(x2.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), mean.data_ptr(), rstd.data_ptr(), R, D,
                    eps)
        ctx.save_for_backward(x2, w, mean, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, grad):
        x2, w, mean, rstd = ctx.saved_tensors
        R, D = x2.shape
        g = grad.contiguous().view(R, D)
        dx = torch.empty_like(x2)
        chunk = _chunk(R)
        partial = torch.empty((R + chunk - 1) // chunk, 2, D, dtype=torch.float32)
        sums = torch.empty(2, D, dtype=torch.float32)
        _ext.ln_bwd(g.data_ptr(), x2.data_ptr(), w.data_ptr(), mean.data_ptr(), rstd.data_ptr(), dx.data_ptr(),
                    partial.data_ptr(), sums.data_ptr(), R, D, chunk)
        return dx.view(grad.shape), sums[0], sums[1], None


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        # The reference's parameters, made by the same calls in the same order (the same seeded values).
        self.ln = nn.LayerNorm(hidden)
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self.ln.weight, self.ln.bias
        if not (x.is_cpu and weight.is_cpu and bias.is_cpu):
            raise ValueError("expected CPU tensors")
        if x.dtype != torch.float32 or weight.dtype != torch.float32 or bias.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if x.ndim < 1 or weight.numel() != x.shape[-1] or bias.numel() != x.shape[-1]:
            raise ValueError("weight and bias must match the last dimension of x")
        return _LayerNorm.apply(x, weight, bias, self.ln.eps)
