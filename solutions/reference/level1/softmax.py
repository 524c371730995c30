"""Softmax over the last dim, CUDA: one 256-thread block per row keeps the whole row in registers (8 float4 per
thread for 8192 columns; 16-byte loads and stores), so x is read from DRAM once and out written once; a block max
and a block sum (warp shuffles + an 8-slot shared exchange) in between, 48 registers: 5 rows in flight per SM.

Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 2.316 ms against eager 3.492 ms (1.51x) and torch.compile 2.454 ms (1.07x); 96% of the speed of light (2.218 ms).
exp(x - max) = 2^t with t = fma(x, log2e, -max*log2e) and one MUFU.EX2 (ex2.approx.ftz): the rounding of the shared
shift cancels in the normalization, so each term is off by < ln2 |t| 2^-24 + 2^-22 relative (< 6e-6 for |t| < 126;
smaller terms flush to 0, an absolute error < 1e-38), and 1/sum (rcp.approx) by 1 ulp: far inside rtol 1e-4. Rows
wider than 8192, not a multiple of 4 or not 16-byte aligned take a scalar kernel (online max/sum, then a second read
that mostly hits L2); a softmax along another dim runs on a copy with that dim moved last. Compiles in the lean
shape: the .cu has no torch header; a thin C++ binding launches it.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

namespace {
constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int MIN_BLOCKS = 5;        // rows in flight per SM: registers capped at 51 per thread
constexpr float LOG2E = 1.4426950408889634f;
constexpr int64_t MAX_GRID = int64_t(1) << 30;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

// 2^t in one MUFU.EX2: relative error ~2^-22; results below 2^-126 flush to 0 (-inf gives 0, NaN stays NaN).
__device__ __forceinline__ float ex2(float t) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
    return r;
}

// 1/s within 1 ulp in one MUFU.RCP, with no slow-path call (the IEEE division's call forces spills at 48 registers).
__device__ __forceinline__ float rcp(float s) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    return r;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Every thread gets the block's max (sum). `slots` (WARPS floats) must not be rewritten before all threads read it.
__device__ __forceinline__ float block_max(float v, float* slots) {
    v = warp_max(v);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = slots[0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) r = fmaxf(r, slots[w]);
    return r;
}

__device__ __forceinline__ float block_sum(float v, float* slots) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = slots[0];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) r += slots[w];
    return r;
}

// Row in registers: thread t holds float4 number i * THREADS + t of the row for i < VPT, where
// nvec = cols / 4 <= VPT * THREADS (FULL: nvec == VPT * THREADS, no bounds checks).
template <int VPT, bool FULL>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
softmax_rows_vec(const float* __restrict__ x, float* __restrict__ out, int nvec) {
    __shared__ float slot_max[WARPS], slot_sum[WARPS];
    const int tid = threadIdx.x;
    const int64_t row = blockIdx.x;
    const float4* xr = reinterpret_cast<const float4*>(x) + (row * nvec + tid);  // this thread's first float4
    float4 v[VPT];
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const int j = i * THREADS + tid;
        v[i] = (FULL || j < nvec) ? __ldg(xr + i * THREADS) : make_float4(neg_inf(), neg_inf(), neg_inf(), neg_inf());
    }
    float m0 = neg_inf(), m1 = neg_inf();
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        m0 = fmaxf(m0, fmaxf(v[i].x, v[i].y));
        m1 = fmaxf(m1, fmaxf(v[i].z, v[i].w));
    }
    const float m = block_max(fmaxf(m0, m1), slot_max);
    const float shift = -m * LOG2E;  // an all -inf row gives NaN everywhere, as torch does
    float s0 = 0.f, s1 = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {  // padding lanes hold -inf: exp2 gives 0
        v[i].x = ex2(fmaf(v[i].x, LOG2E, shift));
        v[i].y = ex2(fmaf(v[i].y, LOG2E, shift));
        v[i].z = ex2(fmaf(v[i].z, LOG2E, shift));
        v[i].w = ex2(fmaf(v[i].w, LOG2E, shift));
        s0 += v[i].x + v[i].y;
        s1 += v[i].z + v[i].w;
    }
    const float inv = rcp(block_sum(s0 + s1, slot_sum));  // the sum is in [1, cols]
    float4* orow = reinterpret_cast<float4*>(out) + (row * nvec + tid);
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const int j = i * THREADS + tid;
        if (FULL || j < nvec) orow[i * THREADS] = make_float4(v[i].x * inv, v[i].y * inv, v[i].z * inv, v[i].w * inv);
    }
}

// Any width and alignment: a per-thread online (max, sum) over a scalar walk, a block combine, then a second walk
// that writes (its reads mostly hit L2).
__global__ void __launch_bounds__(THREADS)
softmax_rows_any(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    __shared__ float slot_max[WARPS], slot_sum[WARPS];
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* orow = out + row * cols;
    float m = neg_inf(), s = 0.f;
    for (int64_t j = threadIdx.x; j < cols; j += THREADS) {
        const float v = xr[j];
        const float mn = fmaxf(m, v);
        const float ms = mn == neg_inf() ? 0.f : mn;  // nothing but -inf seen yet: s stays 0
        s = fmaf(s, ex2((m - ms) * LOG2E), ex2((v - ms) * LOG2E));
        m = mn;
    }
    const float mx = block_max(m, slot_max);
    const float mxs = mx == neg_inf() ? 0.f : mx;
    const float inv = rcp(block_sum(s * ex2((m - mxs) * LOG2E), slot_sum));
    for (int64_t j = threadIdx.x; j < cols; j += THREADS) orow[j] = ex2((xr[j] - mx) * LOG2E) * inv;
}
}  // namespace

cudaError_t launch_softmax_rows(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return cudaGetLastError();
    const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(out) % 16 == 0;
    const int64_t nvec = cols / 4;
    const int nv = static_cast<int>(nvec <= 8 * THREADS ? nvec : 0);  // only read by the register kernels
    for (int64_t r0 = 0; r0 < rows; r0 += MAX_GRID) {  // one block per row; one launch unless rows > 2^30
        const unsigned grid = static_cast<unsigned>(rows - r0 < MAX_GRID ? rows - r0 : MAX_GRID);
        const float* xs = x + r0 * cols;
        float* os = out + r0 * cols;
        if (vec && nvec == 8 * THREADS) {
            softmax_rows_vec<8, true><<<grid, THREADS, 0, stream>>>(xs, os, nv);
        } else if (vec && nvec <= 1 * THREADS) {
            softmax_rows_vec<1, false><<<grid, THREADS, 0, stream>>>(xs, os, nv);
        } else if (vec && nvec <= 2 * THREADS) {
            softmax_rows_vec<2, false><<<grid, THREADS, 0, stream>>>(xs, os, nv);
        } else if (vec && nvec <= 4 * THREADS) {
            softmax_rows_vec<4, false><<<grid, THREADS, 0, stream>>>(xs, os, nv);
        } else if (vec && nvec <= 8 * THREADS) {
            softmax_rows_vec<8, false><<<grid, THREADS, 0, stream>>>(xs, os, nv);
        } else {
            softmax_rows_any<<<grid, THREADS, 0, stream>>>(xs, os, cols);
        }
    }
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_softmax_rows(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream);

torch::Tensor softmax_last(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "expected at least one dimension");
    TORCH_CHECK(dim == -1 || dim == x.dim() - 1, "this kernel normalizes the last dimension only");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    auto err = launch_softmax_rows(xc.data_ptr<float>(), out.data_ptr<float>(), rows, cols,
                                   c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "softmax launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="softmax_rows",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["softmax_last"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dim in (-1, x.dim() - 1):
            return _ext.softmax_last(x, -1)
        # another dim: normalized as the last dim of a moved copy
        return _ext.softmax_last(x.movedim(self.dim, -1), -1).movedim(-1, self.dim)
