"""RMSNorm over the last dim (8192) with a learned scale, CUDA: one 512-thread block per row holds the row in
registers (4 float4 per thread, loaded with L1::no_allocate), so x is read from DRAM once and written once: the
sum of squares is reduced by warp shuffles and one shared-memory step, then out = (x * rsqrt(mean + eps)) * w
with w read through L1 (it stays resident across the row blocks) and streaming stores. Several blocks per SM
overlap one row's reduction with others' loads and stores; other shapes take a plain two-pass kernel.
Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 1.526 ms against eager 5.648 ms (3.70x) and torch.compile 1.691 ms (1.10x); 97% of the speed of light (1.479 ms).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

namespace {
constexpr int THREADS = 512;
constexpr int WARPS = THREADS / 32;
constexpr int VPT = 4;                      // float4 per thread, at most
constexpr int ROW4_MAX = THREADS * VPT;     // rows up to 8192 floats
constexpr int FB_THREADS = 512;
constexpr int FB_WARPS = FB_THREADS / 32;

__device__ __forceinline__ float4 ld_stream(const float4* p) {
    float4 v;
    asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

// Block b normalizes rows b, b + gridDim.x, ...; thread t owns float4 t + k * THREADS of the row.
__global__ void __launch_bounds__(THREADS, 4)
rms_norm_rows(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ out, int64_t rows,
              int h, float eps) {
    __shared__ float part[2][WARPS];   // per-warp sums of squares, double-buffered by row parity
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int h4 = h >> 2;
    const float4* w4 = reinterpret_cast<const float4*>(weight);
    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
        const float4* src = reinterpret_cast<const float4*>(x + row * h);
        float4 v[VPT];
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int j = tid + k * THREADS;
            v[k] = j < h4 ? ld_stream(src + j) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        float ss = 0.f;
#pragma unroll
        for (int k = 0; k < VPT; ++k)
            ss += (v[k].x * v[k].x + v[k].y * v[k].y) + (v[k].z * v[k].z + v[k].w * v[k].w);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
        if (lane == 0) part[parity][warp] = ss;
        __syncthreads();
        float total = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) total += part[parity][w];
        const float r = rsqrtf(total / static_cast<float>(h) + eps);
        float4* dst = reinterpret_cast<float4*>(out + row * h);
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int j = tid + k * THREADS;
            if (j < h4) {
                const float4 w = __ldg(w4 + j);
                __stcs(dst + j, make_float4(v[k].x * r * w.x, v[k].y * r * w.y, v[k].z * r * w.z, v[k].w * r * w.w));
            }
        }
        // part[parity] is next written two rows later, after every thread passed the next row's barrier.
    }
}

// Any shape / alignment: one block per row, two passes over global memory.
__global__ void __launch_bounds__(FB_THREADS)
rms_norm_fallback(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ out,
                  int64_t rows, int64_t h, float eps) {
    __shared__ float red[FB_WARPS];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * h;
        float* yr = out + row * h;
        float ss = 0.f;
        for (int64_t i = threadIdx.x; i < h; i += FB_THREADS) ss += xr[i] * xr[i];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
        if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
        __syncthreads();
        float total = 0.f;
#pragma unroll
        for (int w = 0; w < FB_WARPS; ++w) total += red[w];
        __syncthreads();  // red is rewritten for the next row
        const float r = rsqrtf(total / static_cast<float>(h) + eps);
        for (int64_t i = threadIdx.x; i < h; i += FB_THREADS) yr[i] = xr[i] * r * weight[i];
    }
}
}  // namespace

cudaError_t launch_rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t h, float eps,
                            cudaStream_t stream) {
    if (rows <= 0 || h <= 0) return cudaSuccess;
    const int64_t grid = rows < (int64_t{1} << 30) ? rows : (int64_t{1} << 30);
    const uintptr_t addr_bits = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(weight) |
                                reinterpret_cast<uintptr_t>(out);
    if ((addr_bits & 15) == 0 && h % 4 == 0 && h / 4 <= ROW4_MAX) {
        rms_norm_rows<<<static_cast<unsigned>(grid), THREADS, 0, stream>>>(x, weight, out, rows, static_cast<int>(h),
                                                                          eps);
    } else {
        rms_norm_fallback<<<static_cast<unsigned>(grid), FB_THREADS, 0, stream>>>(x, weight, out, rows, h, eps);
    }
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_rms_norm(const float* x, const float* weight, float* out, int64_t rows, int64_t h, float eps,
                            cudaStream_t stream);

torch::Tensor rms_norm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 1, "expected at least one dim");
    const int64_t h = x.size(-1);
    TORCH_CHECK(weight.device() == x.device() && weight.scalar_type() == torch::kFloat32 && weight.dim() == 1 &&
                weight.numel() == h, "weight: float32 vector of the last dim's size on x's device");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t rows = h == 0 ? 0 : xc.numel() / h;
    auto err = launch_rms_norm(xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(), rows, h,
                               static_cast<float>(eps), c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "rms_norm launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="rms_norm_rows",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["rms_norm_forward"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rms_norm_forward(x, self.weight, self.eps)
