"""Batched matrix product, C++: register-blocked GEMM per batch (12x32 AVX-512 / 6x16 AVX2+FMA / 4x8 SSE micro-tiles held in registers, FMA accumulation over the whole K), B read in place (each k-row's slice of a 32-column panel, software-prefetched ahead of the FMAs) and A read in place (a strip of rows L1-resident across the panels), the next batch's A and B software-prefetched into L2 while this one computes; C written with non-temporal (streaming) stores when aligned (no read-for-ownership); batches split across threads with at::parallel_for; the AVX-512, AVX2+FMA or baseline x86-64 SSE build is chosen at run time. Measured on the 2-core CI machine (2026-12-06, `harness eval`, other work on the cores): 7.241 ms vs eager 8.259 ms (1.14x), 6% of the speed of light."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#include <immintrin.h>
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define ALWAYS_INLINE_LAMBDA __attribute__((always_inline))

typedef float f32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef float f32x16 __attribute__((vector_size(64)));

template <class V> static ALWAYS_INLINE V vload(const float* p) { V v; std::memcpy(&v, p, sizeof(V)); return v; }
template <class V> static ALWAYS_INLINE void vstore(float* p, V v) { std::memcpy(p, &v, sizeof(V)); }

// Non-temporal store of one aligned vector (the output is not read back here: no read-for-ownership,
// no cache pollution). Inline asm because the intrinsics cannot be inlined into the width-generic
// templates below; each is only reached from the build whose ISA has the instruction.
static ALWAYS_INLINE void vstream(float* p, f32x4 v) { asm volatile("movntps %1, %0" : "=m"(*(f32x4*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x8 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x8*)p) : "x"(v)); }
static ALWAYS_INLINE void vstream(float* p, f32x16 v) { asm volatile("vmovntps %1, %0" : "=m"(*(f32x16*)p) : "v"(v)); }

// A build's register tile: MR rows (MR2 for the last strips) x 2 vectors of W floats (NR = 2 W columns).
template <class V_, int MR_, int MR2_> struct Tile {
    using V = V_;
    static constexpr int W = (int)(sizeof(V_) / sizeof(float));
    static constexpr int MR = MR_;
    static constexpr int MR2 = MR2_;
    static constexpr int NR = 2 * W;
};
using TileBase = Tile<f32x4, 4, 2>;     // SSE: 8 accumulators of 16 xmm
using TileAvx2 = Tile<f32x8, 6, 4>;     // AVX2: 12 accumulators of 16 ymm
using TileAvx512 = Tile<f32x16, 12, 8>; // AVX-512: 24 accumulators of 32 zmm

// Walks the cache lines of up to two 2-D regions (rows of row_floats floats, row_stride_floats
// apart), one software prefetch per step.
struct Prefetcher {
    const char* base[2];
    int64_t rows[2], lines[2], stride[2];
    int n = 0, cur = 0;
    int64_t r = 0, l = 0;
    void add(const float* p, int64_t nrows, int64_t row_floats, int64_t row_stride_floats) {
        if (n == 2 || nrows <= 0 || row_floats <= 0) return;
        base[n] = (const char*)p;
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
        __builtin_prefetch(base[cur] + r * stride[cur] + l * 64, 0, 2);  // into L2: needed only later
        if (++l == lines[cur]) {
            l = 0;
            if (++r == rows[cur]) {
                r = 0;
                ++cur;
            }
        }
    }
};

// c[rows x NR] = a[rows x K] (row stride lda) @ b[K x NR] (row stride ldb), rows = R <= MR. The
// rows of b are prefetched PFB k-steps ahead (they come from L2); npf steps of pf run every 16
// k-steps. nt: non-temporal stores (c and ldc aligned to the vector width).
template <class T, int R>
static ALWAYS_INLINE void micro(int64_t K, const float* __restrict__ a, int64_t lda, const float* __restrict__ b,
                                int64_t ldb, float* __restrict__ c, int64_t ldc, bool nt, Prefetcher& pf, int npf) {
    using V = typename T::V;
    constexpr int W = T::W, NR = T::NR, PFB = 8;
    V acc[R][2];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = V{};
    auto step = [&](int64_t k) ALWAYS_INLINE_LAMBDA {
        __builtin_prefetch(b + (k + PFB) * ldb, 0, 3);
        if (NR * 4 > 64) __builtin_prefetch(b + (k + PFB) * ldb + 16, 0, 3);
        const V b0 = vload<V>(b + k * ldb), b1 = vload<V>(b + k * ldb + W);
#pragma GCC unroll 16
        for (int i = 0; i < R; ++i) {
            const float av = a[i * lda + k];
            acc[i][0] += b0 * av;
            acc[i][1] += b1 * av;
        }
    };
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
        for (int q = 0; q < npf; ++q) pf.step();
#pragma GCC unroll 2
        for (int kk = 0; kk < 16; ++kk) step(k + kk);
    }
    for (; k < K; ++k) step(k);
    if (nt) {
#pragma GCC unroll 16
        for (int i = 0; i < R; ++i) {
            vstream(c + i * ldc, acc[i][0]);
            vstream(c + i * ldc + W, acc[i][1]);
        }
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < R; ++i) {
            vstore<V>(c + i * ldc, acc[i][0]);
            vstore<V>(c + i * ldc + W, acc[i][1]);
        }
    }
}

// Per-thread scratch (edge strips), kept across calls; 64-byte aligned.
static float* thread_scratch(int64_t floats) {
    thread_local std::vector<float> buf;
    if ((int64_t)buf.size() < floats + 16) buf.resize(floats + 16);
    float* p = buf.data();
    return p + ((64 - ((uintptr_t)p & 63)) & 63) / sizeof(float);
}

struct BmmArgs {
    const float* a;
    const float* b;
    float* c;
    int64_t batch, M, N, K;
    bool nt;
};

// C = A @ B of one batch; `ahead` prefetches the next batch's A and B meanwhile, spread evenly.
template <class T>
static ALWAYS_INLINE void gemm_batch(const BmmArgs& g, const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, Prefetcher& ahead) {
    constexpr int MR = T::MR, MR2 = T::MR2, NR = T::NR;
    const int64_t M = g.M, N = g.N, K = g.K;
    const int64_t nfull = N / NR, rem = N - nfull * NR;
    const int64_t npan = nfull + (rem > 0);
    float* scratch = thread_scratch(K * NR + MR * K + MR * NR);
    float* b_s = scratch;            // last, partial panel: a zero-padded copy
    float* a_s = b_s + K * NR;       // last rows: a zero-padded copy
    float* c_s = a_s + MR * K;       // edge tiles: the result, copied out
    if (rem > 0) {
        for (int64_t k = 0; k < K; ++k)
            for (int j = 0; j < NR; ++j) b_s[k * NR + j] = j < rem ? B[k * N + nfull * NR + j] : 0.0f;
    }
    const int64_t blocks = ((M + MR - 1) / MR) * npan * (K / 16);
    const int npf = blocks > 0 ? (int)((ahead.total() + blocks - 1) / blocks) : 0;

    // Rows [m0, m0 + R) against every panel (a of row stride lda, out to c of row stride ldc).
    auto strip = [&](auto r_c, const float* a, float* c, int64_t ldc, bool nt) ALWAYS_INLINE_LAMBDA {
        constexpr int R = decltype(r_c)::value;
        for (int64_t p = 0; p < nfull; ++p) micro<T, R>(K, a, K, B + p * NR, N, c + p * NR, ldc, nt, ahead, npf);
        if (rem > 0) {
            micro<T, R>(K, a, K, b_s, NR, c_s, NR, false, ahead, npf);
            for (int i = 0; i < R; ++i)
                for (int64_t j = 0; j < rem; ++j) c[i * ldc + nfull * NR + j] = c_s[i * NR + j];
        }
    };
    int64_t m0 = 0;
    for (; m0 + MR <= M; m0 += MR) strip(std::integral_constant<int, MR>(), A + m0 * K, C + m0 * N, N, g.nt);
    for (; m0 + MR2 <= M; m0 += MR2) strip(std::integral_constant<int, MR2>(), A + m0 * K, C + m0 * N, N, g.nt);
    if (m0 < M) {
        const int64_t rows = M - m0;
        std::memset(a_s, 0, MR2 * K * sizeof(float));
        std::memcpy(a_s, A + m0 * K, rows * K * sizeof(float));
        // Last rows (fewer than MR2): a copy padded with zero rows, one panel at a time through
        // the scratch tile, results copied out.
        for (int64_t p = 0; p < npan; ++p) {
            const float* bp = p < nfull ? B + p * NR : b_s;
            const int64_t ldb = p < nfull ? N : NR;
            micro<T, MR2>(K, a_s, K, bp, ldb, c_s, NR, false, ahead, npf);
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < NR && p * NR + j < N; ++j) C[(m0 + i) * N + p * NR + j] = c_s[i * NR + j];
        }
    }
}

template <class T>
static ALWAYS_INLINE void bmm_batches_impl(const BmmArgs& g, int64_t b0, int64_t b1) {
    const int64_t sa = g.M * g.K, sb = g.K * g.N, sc = g.M * g.N;
    for (int64_t bi = b0; bi < b1; ++bi) {
        Prefetcher ahead;
        if (bi + 1 < b1) {
            ahead.add(g.a + (bi + 1) * sa, 1, sa, 0);
            ahead.add(g.b + (bi + 1) * sb, 1, sb, 0);
        }
        gemm_batch<T>(g, g.a + bi * sa, g.b + bi * sb, g.c + bi * sc, ahead);
    }
    if (g.nt) _mm_sfence();  // order the streaming stores before the result is handed back
}

using BatchesFn = void (*)(const BmmArgs&, int64_t, int64_t);

__attribute__((noinline))
static void bmm_batches_baseline(const BmmArgs& g, int64_t b0, int64_t b1) { bmm_batches_impl<TileBase>(g, b0, b1); }

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void bmm_batches_avx2(const BmmArgs& g, int64_t b0, int64_t b1) { bmm_batches_impl<TileAvx2>(g, b0, b1); }

__attribute__((target("avx512f,fma"), noinline))
static void bmm_batches_avx512(const BmmArgs& g, int64_t b0, int64_t b1) { bmm_batches_impl<TileAvx512>(g, b0, b1); }
#endif

struct Kernel {
    BatchesFn fn;
    int w;  // vector width (floats) of the build
};

static Kernel pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return {&bmm_batches_avx512, TileAvx512::W};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {&bmm_batches_avx2, TileAvx2::W};
#endif
    return {&bmm_batches_baseline, TileBase::W};
}

void bmm(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::int64_t batch, std::int64_t M, std::int64_t K,
         std::int64_t N) {
    static const Kernel kernel = pick_kernel();
    float* op = reinterpret_cast<float*>(c);
    if (K == 0) {
        std::fill(op, op + batch * M * N, 0.0f);
        return;
    }
    // Streaming stores for an output past the caches' worth, with every row vector-aligned.
    const bool nt = batch * M * N >= (int64_t{1} << 17) && ((uintptr_t)op % (kernel.w * 4)) == 0 && N % kernel.w == 0;
    const BmmArgs g{reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), op, batch, M, N, K, nt};
    at::parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) { kernel.fn(g, b0, b1); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("bmm", &bmm); }
"""

_ext = load_inline(
    name="bmm_small_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if A.device.type != "cpu" or B.device.type != "cpu":
            raise ValueError("expected CPU tensors")
        if A.dtype != torch.float32 or B.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if A.dim() != 3 or B.dim() != 3 or A.size(0) != B.size(0) or A.size(2) != B.size(1):
            raise ValueError("expected (batch, M, K) @ (batch, K, N)")
        A, B = A.contiguous(), B.contiguous()
        batch, M, K = A.shape
        N = B.size(2)
        out = torch.empty(batch, M, N, dtype=torch.float32)
        if out.numel() == 0:
            return out
        _ext.bmm(A.data_ptr(), B.data_ptr(), out.data_ptr(), batch, M, K, N)
        return out
