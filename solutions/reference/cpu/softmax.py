"""Row-wise softmax, C++: each row read from memory once (software-prefetched two rows ahead): a max pass over the row as it arrives, an exp-and-sum pass (branch-free polynomial exp on 16 / 8 / 4 lanes) from L1 into an L1-resident scratch row, and the scaled row written with non-temporal (streaming) stores during the next row's exp pass (no read-for-ownership of the output: a third less memory traffic, and the stores drain while the exps compute); rows split across threads with at::parallel_for; an AVX-512, AVX2+FMA or baseline x86-64 SSE build of the row kernel is chosen at run time. Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 7.825 ms vs eager 7.989 ms (1.02x), 4% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>
#include <immintrin.h>
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
template <class V> static ALWAYS_INLINE float hmax(V v) {
    float m = v[0];
    for (int i = 1; i < (int)(sizeof(V) / 4); ++i) m = v[i] > m ? v[i] : m;
    return m;
}

// exp(x) for x <= 0 (softmax arguments are x - rowmax): x = n*ln2 + r with |r| <= ln2/2
// (Cody-Waite split of ln2), degree-6 polynomial for exp(r) (Cephes expf), times 2^n built
// from exponent bits. Branch-free; one version for scalars (V = float) and every vector width.
template <class V, class I>
static ALWAYS_INLINE V exp_nonpos(V x) {
    x = x < -87.0f ? -87.0f : x;                         // keeps 2^n a normal float
    const V t = x * 1.44269504088896341f;
    const V n = (t + 12582912.0f) - 12582912.0f;         // round to nearest via 1.5 * 2^23
    V r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    I e;
    if constexpr (sizeof(V) == 4) e = ((I)n + 127) << 23;
    else e = (__builtin_convertvector(n, I) + 127) << 23;
    V scale;
    std::memcpy(&scale, &e, sizeof(V));
    return p * scale;
}

// y[j] = e[j] * s for j < n, written with non-temporal stores (the aligned body; the ragged ends
// with plain stores). One per build; the caller's sfence orders them before the result is returned.
__attribute__((noinline))
static void scale_stream_sse(const float* __restrict__ e, float* __restrict__ y, float s, int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 15); ++j) y[j] = e[j] * s;
    const __m128 vs = _mm_set1_ps(s);
    for (; j + 4 <= n; j += 4) _mm_stream_ps(y + j, _mm_mul_ps(_mm_loadu_ps(e + j), vs));
    for (; j < n; ++j) y[j] = e[j] * s;
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void scale_stream_avx2(const float* __restrict__ e, float* __restrict__ y, float s, int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 31); ++j) y[j] = e[j] * s;
    const __m256 vs = _mm256_set1_ps(s);
    for (; j + 16 <= n; j += 16) {
        _mm256_stream_ps(y + j, _mm256_mul_ps(_mm256_loadu_ps(e + j), vs));
        _mm256_stream_ps(y + j + 8, _mm256_mul_ps(_mm256_loadu_ps(e + j + 8), vs));
    }
    for (; j < n; ++j) y[j] = e[j] * s;
}

__attribute__((target("avx512f"), noinline))
static void scale_stream_avx512(const float* __restrict__ e, float* __restrict__ y, float s, int64_t n) {
    int64_t j = 0;
    for (; j < n && ((uintptr_t)(y + j) & 63); ++j) y[j] = e[j] * s;
    const __m512 vs = _mm512_set1_ps(s);
    for (; j + 32 <= n; j += 32) {
        _mm512_stream_ps(y + j, _mm512_mul_ps(_mm512_loadu_ps(e + j), vs));
        _mm512_stream_ps(y + j + 16, _mm512_mul_ps(_mm512_loadu_ps(e + j + 16), vs));
    }
    for (; j < n; ++j) y[j] = e[j] * s;
}
#endif

using StreamFn = void (*)(const float*, float*, float, int64_t);

// The same for one aligned vector, inside the width-generic row loop below (inline asm because the
// intrinsics cannot be inlined into it; each is only reached from the build whose ISA has it).
static ALWAYS_INLINE void vstream(float* p, f32x4 v) { asm volatile("movntps %1, %0" : "=m"(*(f32x4*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x8 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x8*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x16 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x16*)p) : "v"(v)); }

// Rows [r0, r1) of a contiguous (R, D) matrix. Per row: max (the row's one trip from memory,
// prefetched during the row two before), then e = exp(x - max) into a scratch row (L1 for D up to
// ~4K) with its sum; the previous row's y = e / sum is streamed out during this row's exp loop, so
// the write-combining buffers drain while the exps are computed instead of stalling a burst at the
// row's end. 4 vectors per step keep independent chains in flight.
template <class V>
static ALWAYS_INLINE void softmax_rows_impl(const float* __restrict__ x, float* __restrict__ y,
                                            int64_t r0, int64_t r1, int64_t D, StreamFn stream) {
    using I = typename IntOf<V>::T;
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    const int64_t Dp = (D + 15) / 16 * 16;
    std::vector<float> scratch(2 * Dp + 16);  // two scratch rows, 64-byte aligned
    float* base = scratch.data() + ((64 - ((uintptr_t)scratch.data() & 63)) & 63) / 4;
    float* __restrict__ e = base;            // this row's exps
    float* __restrict__ ep = base + Dp;      // the previous row's, streamed out during this row
    float* yp = nullptr;
    float sp = 0.0f;
    const int64_t D4 = D - D % (4 * W);
    for (int64_t r = r0; r < r1; ++r) {
        const float* __restrict__ xr = x + r * D;
        float* __restrict__ yr = y + r * D;
        V m0 = vsplat<V>(-__builtin_inff()), m1 = m0, m2 = m0, m3 = m0;
        for (int64_t j = 0; j < D4; j += 4 * W) {
            m0 = vmax(m0, vload<V>(xr + j));
            m1 = vmax(m1, vload<V>(xr + j + W));
            m2 = vmax(m2, vload<V>(xr + j + 2 * W));
            m3 = vmax(m3, vload<V>(xr + j + 3 * W));
        }
        float mx = hmax(vmax(vmax(m0, m1), vmax(m2, m3)));
        for (int64_t j = D4; j < D; ++j) mx = xr[j] > mx ? xr[j] : mx;
        const V vm = vsplat<V>(mx);
        V s0 = V{}, s1 = V{}, s2 = V{}, s3 = V{};
        const char* __restrict__ ahead = (const char*)(xr + 2 * D);
        const bool prefetch = r + 2 < r1;
        // The previous row goes out inside the loop when it is whole vectors, aligned; else after it.
        const bool inter = yp != nullptr && D4 == D && ((uintptr_t)yp % sizeof(V)) == 0;
        const V vsp = vsplat<V>(sp);
        for (int64_t j = 0; j < D4; j += 4 * W) {
            if (prefetch) {
                for (int64_t q = 0; q < 4 * W * (int64_t)sizeof(float); q += 64) __builtin_prefetch(ahead + j * 4 + q, 0, 3);
            }
            if (inter) {
                vstream(yp + j, vload<V>(ep + j) * vsp);
                vstream(yp + j + W, vload<V>(ep + j + W) * vsp);
                vstream(yp + j + 2 * W, vload<V>(ep + j + 2 * W) * vsp);
                vstream(yp + j + 3 * W, vload<V>(ep + j + 3 * W) * vsp);
            }
            const V e0 = exp_nonpos<V, I>(vload<V>(xr + j) - vm);
            const V e1 = exp_nonpos<V, I>(vload<V>(xr + j + W) - vm);
            const V e2 = exp_nonpos<V, I>(vload<V>(xr + j + 2 * W) - vm);
            const V e3 = exp_nonpos<V, I>(vload<V>(xr + j + 3 * W) - vm);
            vstore<V>(e + j, e0);
            vstore<V>(e + j + W, e1);
            vstore<V>(e + j + 2 * W, e2);
            vstore<V>(e + j + 3 * W, e3);
            s0 += e0;
            s1 += e1;
            s2 += e2;
            s3 += e3;
        }
        if (yp != nullptr && !inter) stream(ep, yp, sp, D);
        float sum = hsum((s0 + s1) + (s2 + s3));
        for (int64_t j = D4; j < D; ++j) {
            e[j] = exp_nonpos<float, int32_t>(xr[j] - mx);
            sum += e[j];
        }
        std::swap(e, ep);
        yp = yr;
        sp = 1.0f / sum;
    }
    if (yp != nullptr) stream(ep, yp, sp, D);
    _mm_sfence();
}

using RowsFn = void (*)(const float*, float*, int64_t, int64_t, int64_t);

__attribute__((noinline))
static void softmax_rows_sse(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    softmax_rows_impl<f32x4>(x, y, r0, r1, D, &scale_stream_sse);
}

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void softmax_rows_avx2(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    softmax_rows_impl<f32x8>(x, y, r0, r1, D, &scale_stream_avx2);
}

__attribute__((target("avx512f,fma"), noinline))
static void softmax_rows_avx512(const float* x, float* y, int64_t r0, int64_t r1, int64_t D) {
    softmax_rows_impl<f32x16>(x, y, r0, r1, D, &scale_stream_avx512);
}
#endif

static RowsFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return &softmax_rows_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &softmax_rows_avx2;
#endif
    return &softmax_rows_sse;
}

// x, y: addresses of contiguous (R, D) float32 matrices; y = softmax(x) over each row.
void softmax_rows(std::uintptr_t x_addr, std::uintptr_t y_addr, std::int64_t R, std::int64_t D) {
    static const RowsFn kernel = pick_kernel();
    if (R == 0 || D == 0) return;
    const float* xp = reinterpret_cast<const float*>(x_addr);
    float* yp = reinterpret_cast<float*>(y_addr);
    at::parallel_for(0, R, 16, [&](int64_t r0, int64_t r1) { kernel(xp, yp, r0, r1, D); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_rows", &softmax_rows);
}
"""

_ext = load_inline(
    name="softmax_rows_cpu",
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
            raise TypeError("expected a 2-D float32 tensor")
        if x.dim() != 2:
            raise ValueError("expected a 2-D float32 tensor")
        xc = x.contiguous()
        out = torch.empty(xc.shape, dtype=torch.float32)
        _ext.softmax_rows(xc.data_ptr(), out.data_ptr(), xc.size(0), xc.size(1))
        return out
