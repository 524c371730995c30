"""Matrix product, C++: register-blocked GEMM (12x32 AVX-512 / 6x16 AVX2+FMA / 4x8 SSE micro-tiles held in registers, FMA accumulation over the whole K) with each thread owning a contiguous range of output columns: its B columns packed once into k-major panels (L2-resident), then per strip of A rows (read in place, L1-resident) all of its panels, the packed panel software-prefetched ahead of the FMAs and the next strip's A rows prefetched into L2 meanwhile; C written with non-temporal (streaming) stores when aligned (no read-for-ownership); column ranges split across threads with at::parallel_for; the AVX-512, AVX2+FMA or baseline x86-64 SSE build is chosen at run time. Measured on the 2-core CI machine, torch 2.13 CPU (2026-12-06, `harness eval`, other work on the cores): 1.054 ms vs eager 1.121 ms (1.06x)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <pybind11/pybind11.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>
#include <immintrin.h>

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

// Walks the cache lines of rows of one 2-D region, one software prefetch per step.
struct Prefetcher {
    const char* base = nullptr;
    int64_t rows = 0, lines = 0, stride = 0, r = 0, l = 0;
    void set(const float* p, int64_t nrows, int64_t row_floats, int64_t row_stride_floats) {
        base = (const char*)p;
        rows = nrows;
        lines = (row_floats * 4 + 63) / 64 + 1;  // + 1: rows need not start on a line
        stride = row_stride_floats * 4;
        r = l = 0;
    }
    int64_t total() const { return rows * lines; }
    ALWAYS_INLINE void step() {
        if (r >= rows) return;
        __builtin_prefetch(base + r * stride + l * 64, 0, 2);  // into L2: needed only later
        if (++l == lines) {
            l = 0;
            ++r;
        }
    }
};

// c[rows x NR] = a[rows x K] (row stride lda) @ b[K x NR] (packed, k-major), rows = R <= MR.
// The packed panel is prefetched PFB k-steps ahead (it streams from L2); npf steps of pf run every
// 16 k-steps. nt: non-temporal stores (c and ldc aligned to the vector width).
template <class T, int R>
static ALWAYS_INLINE void micro(int64_t K, const float* __restrict__ a, int64_t lda, const float* __restrict__ b,
                                float* __restrict__ c, int64_t ldc, bool nt, Prefetcher& pf, int npf) {
    using V = typename T::V;
    constexpr int W = T::W, NR = T::NR, PFB = 2048 / (NR * 4);  // 2 KiB ahead
    V acc[R][2];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = V{};
    auto step = [&](int64_t k) ALWAYS_INLINE_LAMBDA {
        __builtin_prefetch(b + (k + PFB) * NR, 0, 3);
        if (NR * 4 > 64) __builtin_prefetch(b + (k + PFB) * NR + 16, 0, 3);
        const V b0 = vload<V>(b + k * NR), b1 = vload<V>(b + k * NR + W);
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

// Packs columns [c0, c0 + np * NR) of B (K x N, row-major) into np panels of K x NR (zero past N).
// Row by row: each row's part is one contiguous stream for the hardware prefetcher.
template <class T>
static ALWAYS_INLINE void pack_b(const float* __restrict__ B, int64_t N, int64_t K, int64_t c0, int64_t np,
                                 float* __restrict__ bp) {
    using V = typename T::V;
    constexpr int W = T::W, NR = T::NR;
    for (int64_t k = 0; k < K; ++k) {
        const float* __restrict__ src = B + k * N + c0;
        for (int64_t p = 0; p < np; ++p) {
            float* __restrict__ dst = bp + (p * K + k) * NR;
            if (c0 + (p + 1) * NR <= N) {
                vstore<V>(dst, vload<V>(src + p * NR));
                vstore<V>(dst + W, vload<V>(src + p * NR + W));
            } else {
                for (int j = 0; j < NR; ++j) dst[j] = c0 + p * NR + j < N ? src[p * NR + j] : 0.0f;
            }
        }
    }
}

// Per-thread scratch (packed panels, edge strips), kept across calls so that it is not
// page-faulted in again every call; 64-byte aligned.
static float* thread_scratch(int64_t floats) {
    thread_local std::vector<float> buf;
    if ((int64_t)buf.size() < floats + 16) buf.resize(floats + 16);
    float* p = buf.data();
    return p + ((64 - ((uintptr_t)p & 63)) & 63) / sizeof(float);
}

struct GemmArgs {
    const float* a;
    const float* b;
    float* c;
    int64_t M, N, K, npanels, nparts;
    bool nt;
};

// One part: output columns of panels [p0, p1) for all M rows.
template <class T>
static ALWAYS_INLINE void gemm_part(const GemmArgs& g, int64_t part) {
    constexpr int MR = T::MR, MR2 = T::MR2, NR = T::NR;
    const int64_t M = g.M, N = g.N, K = g.K;
    const int64_t p0 = part * g.npanels / g.nparts, p1 = (part + 1) * g.npanels / g.nparts;
    const int64_t np = p1 - p0, c0 = p0 * NR;
    if (np <= 0) return;
    float* bp = thread_scratch(np * K * NR + MR * K + MR * NR);
    float* a_s = bp + np * K * NR;  // edge strip: MR rows of A
    float* c_s = a_s + MR * K;      // edge strip: MR x NR result
    pack_b<T>(g.b, N, K, c0, np, bp);
    const bool full_n = c0 + np * NR <= N;
    const int64_t blocks16 = np * (K / 16);

    // Rows [m0, m0 + R) against every panel of the part; the next strip's rows prefetched meanwhile.
    auto strip = [&](auto r_c, int64_t m0) ALWAYS_INLINE_LAMBDA {
        constexpr int R = decltype(r_c)::value;
        const int64_t next = std::min<int64_t>(M - (m0 + R), MR);
        Prefetcher pf;
        if (next > 0) pf.set(g.a + (m0 + R) * K, next, K, K);
        const int npf = blocks16 > 0 ? (int)((pf.total() + blocks16 - 1) / blocks16) : 0;
        for (int64_t p = 0; p < np; ++p) {
            float* cp = g.c + m0 * N + c0 + p * NR;
            if (full_n || p + 1 < np) {
                micro<T, R>(K, g.a + m0 * K, K, bp + p * K * NR, cp, N, g.nt, pf, npf);
            } else {  // last, partial panel: through the scratch tile
                micro<T, R>(K, g.a + m0 * K, K, bp + p * K * NR, c_s, NR, false, pf, npf);
                for (int i = 0; i < R; ++i)
                    for (int64_t j = 0; c0 + p * NR + j < N; ++j) cp[i * N + j] = c_s[i * NR + j];
            }
        }
    };
    int64_t m0 = 0;
    for (; m0 + MR <= M; m0 += MR) strip(std::integral_constant<int, MR>(), m0);
    for (; m0 + MR2 <= M; m0 += MR2) strip(std::integral_constant<int, MR2>(), m0);
    if (m0 < M) {
        // Last rows (fewer than MR2): a copy padded with zero rows, results copied out.
        const int64_t rows = M - m0;
        std::memset(a_s, 0, MR2 * K * sizeof(float));
        std::memcpy(a_s, g.a + m0 * K, rows * K * sizeof(float));
        Prefetcher none;
        for (int64_t p = 0; p < np; ++p) {
            micro<T, MR2>(K, a_s, K, bp + p * K * NR, c_s, NR, false, none, 0);
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < NR && c0 + p * NR + j < N; ++j)
                    g.c[(m0 + i) * N + c0 + p * NR + j] = c_s[i * NR + j];
        }
    }
    if (g.nt) _mm_sfence();  // order the streaming stores before the result is handed back
}

template <class T>
static ALWAYS_INLINE void gemm_parts_impl(const GemmArgs& g, int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) gemm_part<T>(g, t);
}

using PartsFn = void (*)(const GemmArgs&, int64_t, int64_t);
using NrFn = int (*)();

__attribute__((noinline))
static void gemm_parts_baseline(const GemmArgs& g, int64_t t0, int64_t t1) { gemm_parts_impl<TileBase>(g, t0, t1); }

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"), noinline))
static void gemm_parts_avx2(const GemmArgs& g, int64_t t0, int64_t t1) { gemm_parts_impl<TileAvx2>(g, t0, t1); }

__attribute__((target("avx512f,fma"), noinline))
static void gemm_parts_avx512(const GemmArgs& g, int64_t t0, int64_t t1) { gemm_parts_impl<TileAvx512>(g, t0, t1); }
#endif

struct Kernel {
    PartsFn fn;
    int nr, w;  // panel width and vector width (floats) of the build
};

static Kernel pick_kernel() {
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
        return {&gemm_parts_avx512, TileAvx512::NR, TileAvx512::W};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {&gemm_parts_avx2, TileAvx2::NR, TileAvx2::W};
#endif
    return {&gemm_parts_baseline, TileBase::NR, TileBase::W};
}

// c = a @ b for contiguous float32 a (M, K) and b (K, N); c (M, N) allocated by the caller.
void matmul(std::uintptr_t a_ptr, std::uintptr_t b_ptr, std::uintptr_t c_ptr, std::int64_t M, std::int64_t K,
            std::int64_t N) {
    static const Kernel kernel = pick_kernel();
    if (M == 0 || N == 0) return;
    float* op = reinterpret_cast<float*>(c_ptr);
    if (K == 0) {
        std::fill(op, op + M * N, 0.0f);
        return;
    }
    const int64_t npanels = (N + kernel.nr - 1) / kernel.nr;
    const int64_t nparts = std::min<int64_t>(at::get_num_threads(), npanels);
    // Streaming stores for an output past the caches' worth, with every row vector-aligned.
    const bool nt = M * N >= (int64_t{1} << 17) && ((uintptr_t)op % (kernel.w * 4)) == 0 && N % kernel.w == 0;
    const GemmArgs g{reinterpret_cast<const float*>(a_ptr), reinterpret_cast<const float*>(b_ptr), op,
                     M, N, K, npanels, nparts, nt};
    at::parallel_for(0, nparts, 1, [&](int64_t t0, int64_t t1) { kernel.fn(g, t0, t1); });
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("matmul", &matmul); }
"""

_ext = load_inline(
    name="matmul_square_cpu",
    cpp_sources=CPP_SOURCE,
    no_implicit_headers=True,
    extra_cflags=["-O3", "-fopenmp", "-fno-trapping-math", "-Wno-psabi"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if not (A.is_cpu and B.is_cpu):
            raise ValueError("expected CPU tensors")
        if A.dtype != torch.float32 or B.dtype != torch.float32:
            raise TypeError("expected float32 tensors")
        if A.dim() != 2 or B.dim() != 2 or A.size(1) != B.size(0):
            raise ValueError("expected (M, K) @ (K, N)")
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.size(1)
        out = torch.empty(M, N, dtype=torch.float32)
        _ext.matmul(A.data_ptr(), B.data_ptr(), out.data_ptr(), M, K, N)
        return out
