"""Sum over a middle dim (keepdim), CUDA: one thread per output element walks the reduced
dimension; neighbouring threads read neighbouring addresses, so every load is coalesced.

A straightforward kernel, not yet tuned (see issue 8 for the speed-of-light target).
Compiles in the lean shape: the .cu has no torch header; a thin C++ binding launches it.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

namespace {
// x viewed as (outer, reduced, inner); out is (outer, 1, inner).
__global__ void sum_middle(const float* __restrict__ x, float* __restrict__ out,
                           int64_t outer, int64_t reduced, int64_t inner) {
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t o = idx / inner, i = idx % inner;
    const float* p = x + o * reduced * inner + i;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;  // four chains: more loads in flight
    int64_t r = 0;
    for (; r + 3 < reduced; r += 4) {
        a0 += p[r * inner];
        a1 += p[(r + 1) * inner];
        a2 += p[(r + 2) * inner];
        a3 += p[(r + 3) * inner];
    }
    for (; r < reduced; ++r) a0 += p[r * inner];
    out[idx] = (a0 + a1) + (a2 + a3);
}
}  // namespace

cudaError_t launch_sum_middle(const float* x, float* out, int64_t outer, int64_t reduced, int64_t inner,
                              cudaStream_t stream) {
    const int64_t n = outer * inner;
    if (n > 0) sum_middle<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, out, outer, reduced, inner);
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_sum_middle(const float* x, float* out, int64_t outer, int64_t reduced, int64_t inner,
                              cudaStream_t stream);

torch::Tensor sum_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    auto sizes = xc.sizes().vec();
    sizes[dim] = 1;
    auto out = torch::empty(sizes, xc.options());
    auto err = launch_sum_middle(xc.data_ptr<float>(), out.data_ptr<float>(), outer, xc.size(dim), inner,
                                 c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "sum launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="sum_dim1",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["sum_keepdim"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_keepdim(x, self.dim)
