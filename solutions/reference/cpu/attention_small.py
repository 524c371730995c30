"""Scaled dot-product attention, C++: per (batch, head) K^T (in-register transposes) and V packed into k-major panels, then per 8-query strip Q K^T with a register-blocked FMA micro-kernel (8x32 AVX-512 / 6x16 AVX2+FMA / 4x8 SSE tiles) into an L1-resident score strip, a max / exp-and-sum pass (branch-free polynomial exp), and P V with the same micro-kernel and the 1 / sum scaling applied before the store, the next pair's q, k, v software-prefetched meanwhile; (batch, head) pairs handed out to at::parallel_for threads from an atomic counter; the AVX-512 or AVX2+FMA build is chosen at run time (baseline x86-64 build otherwise). Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 12.803 ms vs eager 58.643 ms (4.58x), 2% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <atomic>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define ALWAYS_INLINE_LAMBDA __attribute__((always_inline))

typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef int32_t i32x16 __attribute__((vector_size(64)));
template <class V> struct IntVec;
template <> struct IntVec<f32x4> { typedef i32x4 type; };
template <> struct IntVec<f32x8> { typedef i32x8 type; };
template <> struct IntVec<f32x16> { typedef i32x16 type; };

template <class V> static ALWAYS_INLINE V vload(const float* p) { V v; __builtin_memcpy(&v, p, sizeof(V)); return v; }
template <class V> static ALWAYS_INLINE void vstore(float* p, V v) { __builtin_memcpy(p, &v, sizeof(V)); }

// A build's register tile: MR rows x NV vectors of W floats (NR = NV * W columns).
template <class V_, int MR_, int NV_> struct Tile {
    using V = V_;
    static constexpr int W = (int)(sizeof(V_) / sizeof(float));
    static constexpr int MR = MR_;
    static constexpr int NV = NV_;
    static constexpr int NR = NV_ * W;
};
using TileBase = Tile<f32x4, 4, 2>;     // SSE: 8 accumulators of 16 xmm
using TileAvx2 = Tile<f32x8, 6, 2>;     // AVX2: 12 accumulators of 16 ymm
using TileAvx512 = Tile<f32x16, 8, 2>;  // AVX-512: 16 accumulators of 32 zmm

// Walks the cache lines of up to three 2-D regions (rows of row_floats floats, row_stride_floats
// apart), one software prefetch per step: the next task's operands (and, for writing, its output
// block), fetched while this one computes.
struct Prefetcher {
    const char* base[3];
    int64_t rows[3], lines[3], stride[3];
    bool write[3];
    int n = 0, cur = 0;
    int64_t r = 0, l = 0;
    void add(const float* p, int64_t nrows, int64_t row_floats, int64_t row_stride_floats, bool for_write = false) {
        if (n == 3 || nrows <= 0 || row_floats <= 0) return;
        base[n] = (const char*)p;
        write[n] = for_write;
        rows[n] = nrows;
        lines[n] = (row_floats * 4 + 63) / 64 + 1;  // + 1: rows need not start on a line
        stride[n] = row_stride_floats * 4;
        ++n;
    }
    int64_t total() const {
        int64_t t = 0;
        for (int i = 0; i < n; ++i) t += rows[i] * lines[i];
        return t;
    }
    ALWAYS_INLINE void step() {
        if (cur >= n) return;
        const char* p = base[cur] + r * stride[cur] + l * 64;
        if (write[cur]) __builtin_prefetch(p, 1, 2);
        else __builtin_prefetch(p, 0, 2);
        if (++l == lines[cur]) {
            l = 0;
            if (++r == rows[cur]) {
                r = 0;
                ++cur;
            }
        }
    }
};

// acc[MR x NR] = a[MR x K] (row stride lda) @ b[K x NR] (packed, k-major); npf prefetches from pf
// every 16 steps.
template <class T>
static ALWAYS_INLINE void micro(typename T::V (&acc)[T::MR][T::NV], int64_t K, const float* __restrict__ a,
                                int64_t lda, const float* __restrict__ b, Prefetcher& pf, int npf) {
    using V = typename T::V;
    constexpr int MR = T::MR, NV = T::NV, W = T::W, NR = T::NR;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[i][j] = V{};
    auto step = [&](int64_t k) ALWAYS_INLINE_LAMBDA {
        V bv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) bv[j] = vload<V>(b + k * NR + j * W);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const float av = a[i * lda + k];
#pragma GCC unroll 4
            for (int j = 0; j < NV; ++j) acc[i][j] += bv[j] * av;
        }
    };
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
        for (int i = 0; i < npf; ++i) pf.step();
#pragma GCC unroll 2
        for (int kk = 0; kk < 16; ++kk) step(k + kk);
    }
    for (; k < K; ++k) step(k);
}

// In-register transpose of W rows of W floats (one stage per bit of the index).
template <class V, int B>
static ALWAYS_INLINE void transpose_stage(V* r) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    using I = typename IntVec<V>::type;
    I lo, hi;
#pragma GCC unroll 16
    for (int j = 0; j < W; ++j) {
        lo[j] = (j & B) ? W + j - B : j;
        hi[j] = (j & B) ? W + j : j + B;
    }
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i) {
        if (!(i & B)) {
            const V a = r[i], b = r[i + B];
            r[i] = __builtin_shuffle(a, b, lo);
            r[i + B] = __builtin_shuffle(a, b, hi);
        }
    }
    if constexpr (B > 1) transpose_stage<V, B / 2>(r);
}

// dst[k * ldd + j] = src[j * lds + k] for j, k < W.
template <class V>
static ALWAYS_INLINE void transpose_block(const float* __restrict__ src, int64_t lds, float* __restrict__ dst, int64_t ldd) {
    constexpr int W = (int)(sizeof(V) / sizeof(float));
    V r[W];
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i) r[i] = vload<V>(src + i * lds);
    transpose_stage<V, W / 2>(r);
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i) vstore<V>(dst + i * ldd, r[i]);
}

// exp(x) for x <= 0 (softmax arguments are x - rowmax): x = n*ln2 + r with |r| <= ln2/2
// (Cody-Waite split of ln2), degree-6 polynomial for exp(r) (Cephes expf), times 2^n built
// from exponent bits. Branch-free, so loops calling it vectorize.
static ALWAYS_INLINE float exp_nonpos(float x) {
    x = x < -87.0f ? -87.0f : x;
    const float t = x * 1.44269504088896341f;
    const float n = (t + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    const int32_t e = ((int32_t)n + 127) << 23;
    float s;
    std::memcpy(&s, &e, 4);
    return p * s;
}

struct AttnArgs {
    const float *q, *k, *v;
    float* out;
    int64_t BH, Lq, Lk, D, Dv;
    float scale;
    std::atomic<int64_t>* next;
};

static inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// One task: the whole (batch, head) pair bh.
template <class T>
static ALWAYS_INLINE void attn_task(const AttnArgs& g, int64_t bh, float* __restrict__ buf, Prefetcher& pf) {
    using V = typename T::V;
    constexpr int MR = T::MR, NV = T::NV, W = T::W, NR = T::NR;
    const int64_t Lq = g.Lq, Lk = g.Lk, D = g.D, Dv = g.Dv;
    const int64_t Lkp = round_up(Lk, NR), Dvp = round_up(Dv, NR);
    const float* __restrict__ q = g.q + bh * Lq * D;
    const float* __restrict__ k = g.k + bh * Lk * D;
    const float* __restrict__ v = g.v + bh * Lk * Dv;
    float* __restrict__ out = g.out + bh * Lq * Dv;
    float* __restrict__ bk = buf;              // K^T: Lkp / NR panels of D x NR
    float* __restrict__ bv = bk + D * Lkp;     // V: Dvp / NR panels of Lk x NR
    float* __restrict__ s = bv + Lk * Dvp;     // MR x Lkp score strip
    float* __restrict__ qs = s + MR * Lkp;     // MR x D copy of the last query rows
    float* __restrict__ os = qs + MR * D;      // MR x Dvp output strip for the last rows

    // Pack K^T: bk[p][d][j] = k[p * NR + j][d].
    for (int64_t j0 = 0; j0 < Lkp; j0 += W) {
        float* dst = bk + (j0 / NR) * D * NR + j0 % NR;
        int64_t d = 0;
        if (j0 + W <= Lk)
            for (; d + W <= D; d += W) transpose_block<V>(k + j0 * D + d, D, dst + d * NR, NR);
        for (int64_t j = 0; j < W; ++j)
            for (int64_t dd = d; dd < D; ++dd) dst[dd * NR + j] = j0 + j < Lk ? k[(j0 + j) * D + dd] : 0.0f;
    }
    // Pack V: bv[p][r][j] = v[r][p * NR + j].
    for (int64_t p = 0; p < Dvp / NR; ++p) {
        float* dst = bv + p * Lk * NR;
        const int64_t c0 = p * NR;
        if (c0 + NR <= Dv) {
            for (int64_t r = 0; r < Lk; ++r) std::memcpy(dst + r * NR, v + r * Dv + c0, NR * sizeof(float));
        } else {
            for (int64_t r = 0; r < Lk; ++r)
                for (int64_t j = 0; j < NR; ++j) dst[r * NR + j] = c0 + j < Dv ? v[r * Dv + c0 + j] : 0.0f;
        }
    }

    const float scale = g.scale;
    // Spread the prefetches evenly over this task's 16-step blocks.
    const int64_t blocks = ((Lq + MR - 1) / MR) * ((Lkp / NR) * (D / 16) + (Dvp / NR) * (Lk / 16));
    const int npf = blocks > 0 ? (int)((pf.total() + blocks - 1) / blocks) : 0;
    for (int64_t m0 = 0; m0 < Lq; m0 += MR) {
        const bool full = m0 + MR <= Lq;
        const float* qa = q + m0 * D;
        if (!full) {  // rows past Lq read a copy of row Lq - 1
            for (int i = 0; i < MR; ++i)
                std::memcpy(qs + i * D, q + (m0 + i < Lq ? m0 + i : Lq - 1) * D, D * sizeof(float));
            qa = qs;
        }
        // Scores.
        for (int64_t p = 0; p < Lkp / NR; ++p) {
            V acc[MR][NV];
            micro<T>(acc, D, qa, D, bk + p * D * NR, pf, npf);
#pragma GCC unroll 16
            for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
                for (int j = 0; j < NV; ++j) vstore<V>(s + i * Lkp + p * NR + j * W, acc[i][j] * scale);
        }
        // Softmax numerators in place, 1 / sum per row.
        float inv[MR];
        for (int i = 0; i < MR; ++i) {
            float* __restrict__ sr = s + i * Lkp;
            float mx = -__builtin_inff();
#pragma omp simd reduction(max : mx)
            for (int64_t j = 0; j < Lk; ++j) mx = sr[j] > mx ? sr[j] : mx;
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < Lk; ++j) {
                const float e = exp_nonpos(sr[j] - mx);
                sr[j] = e;
                sum += e;
            }
            inv[i] = 1.0f / sum;
        }
        // Output rows: (P V) / sum.
        float* dst = full && Dv == Dvp ? out + m0 * Dv : os;
        const int64_t ldd = full && Dv == Dvp ? Dv : Dvp;
        for (int64_t p = 0; p < Dvp / NR; ++p) {
            V acc[MR][NV];
            micro<T>(acc, Lk, s, Lkp, bv + p * Lk * NR, pf, npf);
#pragma GCC unroll 16
            for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
                for (int j = 0; j < NV; ++j) vstore<V>(dst + i * ldd + p * NR + j * W, acc[i][j] * inv[i]);
        }
        if (dst == os)
            for (int64_t i = 0; i < MR && m0 + i < Lq; ++i)
                std::memcpy(out + (m0 + i) * Dv, os + i * Dvp, Dv * sizeof(float));
    }
}

template <class T>
static ALWAYS_INLINE void attn_worker_impl(const AttnArgs& g) {
    constexpr int NR = T::NR, MR = T::MR;
    const int64_t Lkp = round_up(g.Lk, NR), Dvp = round_up(g.Dv, NR);
    std::vector<float> buf(g.D * Lkp + g.Lk * Dvp + MR * Lkp + MR * g.D + MR * Dvp + 16);
    // Tasks are claimed one ahead so that the next one's q, k and v can be prefetched.
    int64_t t = g.next->fetch_add(1, std::memory_order_relaxed);
    while (t < g.BH) {
        const int64_t t_next = g.next->fetch_add(1, std::memory_order_relaxed);
        Prefetcher pf;
        if (t_next < g.BH) {
            pf.add(g.k + t_next * g.Lk * g.D, 1, g.Lk * g.D, 0);
            pf.add(g.v + t_next * g.Lk * g.Dv, 1, g.Lk * g.Dv, 0);
            pf.add(g.q + t_next * g.Lq * g.D, 1, g.Lq * g.D, 0);
        }
        attn_task<T>(g, t, buf.data(), pf);
        t = t_next;
    }
}

using WorkerFn = void (*)(const AttnArgs&);

__attribute__((noinline))
static void attn_worker_baseline(const AttnArgs& g) { attn_worker_impl<TileBase>(g); }

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void attn_worker_avx2(const AttnArgs& g) { attn_worker_impl<TileAvx2>(g); }

__attribute__((target("avx512f,fma"), noinline))
static void attn_worker_avx512(const AttnArgs& g) { attn_worker_impl<TileAvx512>(g); }
#endif

static WorkerFn pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return &attn_worker_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &attn_worker_avx2;
#endif
    return &attn_worker_baseline;
}

void attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t out, std::int64_t BH,
               std::int64_t Lq, std::int64_t Lk, std::int64_t D, std::int64_t Dv) {
    static const WorkerFn worker = pick_kernel();
    std::atomic<int64_t> next{0};
    const AttnArgs g{reinterpret_cast<const float*>(q), reinterpret_cast<const float*>(k),
                     reinterpret_cast<const float*>(v), reinterpret_cast<float*>(out),
                     BH, Lq, Lk, D, Dv, (float)std::pow((double)D, -0.5), &next};
    const int64_t nth = std::min<int64_t>(at::get_num_threads(), BH);
    at::parallel_for(0, nth, 1, [&](int64_t, int64_t) { worker(g); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("attention", &attention); }
"""

_ext = load_inline(
    name="attention_small_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        for t in (q, k, v):
            if t.device.type != "cpu":
                raise ValueError("expected CPU tensors")
            if t.dtype != torch.float32:
                raise TypeError("expected float32 tensors")
            if t.dim() < 2:
                raise ValueError("expected (..., seq, dim) tensors")
        if q.dim() != k.dim() or q.dim() != v.dim():
            raise ValueError("q, k, v must have the same rank")
        if q.shape[:-2] != k.shape[:-2] or q.shape[:-2] != v.shape[:-2]:
            raise ValueError("q, k, v batch dimensions differ")
        Lq, D = q.shape[-2:]
        Lk, Dv = k.size(-2), v.size(-1)
        if k.size(-1) != D or v.size(-2) != Lk:
            raise ValueError("k must be (..., Lk, D) and v (..., Lk, Dv)")
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out = torch.empty(*q.shape[:-1], Dv, dtype=torch.float32)
        BH = q.numel() // (Lq * D if Lq * D > 0 else 1)
        if out.numel() == 0:
            return out
        if Lk == 0:
            raise ValueError("attention over an empty key sequence")
        _ext.attention(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), BH, Lq, Lk, D, Dv)
        return out
