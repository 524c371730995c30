import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# The .cu holds only the kernel and a launcher over raw pointers: no torch header, so nvcc compiles
# it in seconds. The C++ binding below is the only code that sees torch.
CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

namespace {
__device__ __forceinline__ float scaled_silu(float v, float scale) {
    return scale * v / (1.0f + __expf(-v));
}

// Four elements per thread through float4 loads; a grid-stride loop covers any size.
__global__ void scaled_silu_kernel(const float4* __restrict__ x, float4* __restrict__ out,
                                   int64_t n4, float scale) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        float4 v = x[i];
        out[i] = make_float4(scaled_silu(v.x, scale), scaled_silu(v.y, scale),
                             scaled_silu(v.z, scale), scaled_silu(v.w, scale));
    }
}

__global__ void scaled_silu_tail(const float* __restrict__ x, float* __restrict__ out,
                                 int64_t start, int64_t n, float scale) {
    const int64_t i = start + threadIdx.x;
    if (i < n) out[i] = scaled_silu(x[i], scale);
}
}  // namespace

cudaError_t launch_scaled_silu(const float* x, float* out, int64_t n, float scale, cudaStream_t stream) {
    static const int sm_count = [] {
        int device = 0, count = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
        return count;
    }();
    const int64_t n4 = n / 4;
    if (n4 > 0) {  // enough blocks to fill every SM several times over; the loop strides the rest
        const int64_t blocks = std::min<int64_t>((n4 + 255) / 256, static_cast<int64_t>(sm_count) * 8);
        scaled_silu_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
            reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(out), n4, scale);
    }
    if (n % 4) scaled_silu_tail<<<1, 4, 0, stream>>>(x, out, n4 * 4, n, scale);
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_scaled_silu(const float* x, float* out, int64_t n, float scale, cudaStream_t stream);

torch::Tensor scaled_silu(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto xc = x.contiguous();
    // float4 access needs 16-byte alignment: fresh allocations have it, a view at an offset may not.
    if (reinterpret_cast<uintptr_t>(xc.data_ptr()) % 16 != 0) xc = xc.clone();
    auto out = torch::empty_like(xc);
    auto err = launch_scaled_silu(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(),
                                  static_cast<float>(scale), c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "scaled_silu launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="scaled_silu",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["scaled_silu"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scaled_silu(x, self.scale)
