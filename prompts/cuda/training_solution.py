import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# As in the forward-only example: the .cu holds only kernels and launchers over raw pointers (no torch header),
# the C++ binding below is the only code that sees torch, and every launch goes on the caller's stream.
CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

namespace {
constexpr int kThreads = 256;

// Block (x, y) owns 256 columns, one per thread (a warp reads 128 contiguous bytes), and walks down the rows
// [y * rpb, (y + 1) * rpb), rpb rows per block, with its column's weight in a register.
__global__ void forward_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                               float* __restrict__ t, float* __restrict__ out, int64_t rows, int64_t cols,
                               int64_t rpb) {
    const int64_t j = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x, r0 = blockIdx.y * rpb;
    if (j >= cols) return;
    const float wj = w[j], bj = b[j];
#pragma unroll 4
    for (int64_t r = r0; r < min(r0 + rpb, rows); ++r) {
        const float v = tanhf(x[r * cols + j]);
        t[r * cols + j] = v;  // for the backward, which needs 1 - t^2
        out[r * cols + j] = v * wj + bj;
    }
}

// The same walk: dx = g * w * (1 - t^2), and g * t (for dw) and g (for db) summed down the rows in registers,
// then written to this block's own row of `partial` ([row blocks, 2, cols]): no two blocks write one element,
// so no atomics, and the sums do not depend on the order the blocks run in.
__global__ void backward_kernel(const float* __restrict__ g, const float* __restrict__ t, const float* __restrict__ w,
                                float* __restrict__ dx, float* __restrict__ partial, int64_t rows, int64_t cols,
                                int64_t rpb) {
    const int64_t j = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x, r0 = blockIdx.y * rpb;
    if (j >= cols) return;
    const float wj = w[j];
    float sw = 0.0f, sb = 0.0f;
#pragma unroll 4
    for (int64_t r = r0; r < min(r0 + rpb, rows); ++r) {
        const float gv = g[r * cols + j], tv = t[r * cols + j];
        dx[r * cols + j] = gv * wj * (1.0f - tv * tv);
        sw += gv * tv;
        sb += gv;
    }
    partial[2 * blockIdx.y * cols + j] = sw;
    partial[(2 * blockIdx.y + 1) * cols + j] = sb;
}

// A second small kernel: one thread per column adds up that column's partials, always in the same order.
__global__ void column_sum_kernel(const float* __restrict__ partial, float* __restrict__ dw, float* __restrict__ db,
                                  int64_t row_blocks, int64_t cols) {
    const int64_t j = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
    if (j >= cols) return;
    float sw = 0.0f, sb = 0.0f;
#pragma unroll 8
    for (int64_t k = 0; k < row_blocks; ++k) {
        sw += partial[2 * k * cols + j];
        sb += partial[(2 * k + 1) * cols + j];
    }
    dw[j] = sw;
    db[j] = sb;
}
}  // namespace

cudaError_t launch_forward(const float* x, const float* w, const float* b, float* t, float* out, int64_t rows,
                           int64_t cols, int64_t rpb, cudaStream_t stream) {
    const dim3 grid((cols + kThreads - 1) / kThreads, (rows + rpb - 1) / rpb);
    forward_kernel<<<grid, kThreads, 0, stream>>>(x, w, b, t, out, rows, cols, rpb);
    return cudaGetLastError();
}

cudaError_t launch_backward(const float* g, const float* t, const float* w, float* dx, float* partial, float* dw,
                            float* db, int64_t rows, int64_t cols, int64_t rpb, cudaStream_t stream) {
    const dim3 grid((cols + kThreads - 1) / kThreads, (rows + rpb - 1) / rpb);
    backward_kernel<<<grid, kThreads, 0, stream>>>(g, t, w, dx, partial, rows, cols, rpb);
    column_sum_kernel<<<grid.x, kThreads, 0, stream>>>(partial, dw, db, grid.y, cols);  // runs after: same stream
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_forward(const float* x, const float* w, const float* b, float* t, float* out, int64_t rows,
                           int64_t cols, int64_t rpb, cudaStream_t stream);
cudaError_t launch_backward(const float* g, const float* t, const float* w, float* dx, float* partial, float* dw,
                            float* db, int64_t rows, int64_t cols, int64_t rpb, cudaStream_t stream);

void forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor t, torch::Tensor out, int64_t rpb) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D float32 CUDA x");
    auto err = launch_forward(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), t.data_ptr<float>(),
                              out.data_ptr<float>(), x.size(0), x.size(1), rpb, c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "forward launch failed: ", cudaGetErrorString(err));
}

void backward(torch::Tensor g, torch::Tensor t, torch::Tensor w, torch::Tensor dx, torch::Tensor partial,
              torch::Tensor dw, torch::Tensor db, int64_t rpb) {
    auto err = launch_backward(g.data_ptr<float>(), t.data_ptr<float>(), w.data_ptr<float>(), dx.data_ptr<float>(),
                               partial.data_ptr<float>(), dw.data_ptr<float>(), db.data_ptr<float>(), g.size(0),
                               g.size(1), rpb, c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "backward launch failed: ", cudaGetErrorString(err));
}
"""

_ext = load_inline(
    name="scaled_tanh_training",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["forward", "backward"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],  # no --use_fast_math: tanhf stays the accurate one
)
ROWS_PER_BLOCK = 256  # 16 x 64 = 1024 blocks of 256 threads at 16384 x 4096: about 8 an SM


class ScaledTanh(torch.autograd.Function):
    """The forward and the backward both ours: autograd calls backward with the gradient of out."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        x = x.contiguous()
        t, out = torch.empty_like(x), torch.empty_like(x)
        _ext.forward(x, weight.contiguous(), bias.contiguous(), t, out, ROWS_PER_BLOCK)
        ctx.save_for_backward(t, weight)  # t, not x: the backward reads it instead of computing tanh again
        return out

    @staticmethod
    def backward(ctx, grad):
        t, weight = ctx.saved_tensors
        grad = grad.contiguous()
        dx, dw, db = torch.empty_like(grad), torch.empty_like(weight), torch.empty_like(weight)
        row_blocks = (grad.size(0) + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK  # each sums its rows into its own partial
        partial = torch.empty(row_blocks, 2, grad.size(1), device=grad.device)
        _ext.backward(grad, t, weight.contiguous(), dx, partial, dw, db, ROWS_PER_BLOCK)
        return dx, dw, db  # one gradient per forward input, in order


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(cols) + 0.5)  # the same names and shapes as Model's
        self.bias = nn.Parameter(torch.rand(cols) - 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ScaledTanh.apply(x, self.weight, self.bias)
