import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cmath>
#include <cstdint>

// forward: out = t * w + b with t = tanh(x); t is kept for the backward (it needs 1 - t^2).
void forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor t, torch::Tensor out) {
    const float *xp = x.data_ptr<float>(), *wp = w.data_ptr<float>(), *bp = b.data_ptr<float>();
    float *tp = t.data_ptr<float>(), *op = out.data_ptr<float>();
    const int64_t cols = x.size(1);
    at::parallel_for(0, x.size(0), 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
#pragma omp simd
            for (int64_t j = 0; j < cols; ++j) {
                const float v = std::tanh(xp[r * cols + j]);
                tp[r * cols + j] = v;
                op[r * cols + j] = v * wp[j] + bp[j];
            }
        }
    });
}

// backward: dx = g * w * (1 - t^2) row by row; dw = sum over rows of g * t and db = sum over rows of g, each
// chunk of rows summing into its own row of `partial` (no two threads write one element), added up after.
void backward(torch::Tensor g, torch::Tensor t, torch::Tensor w, torch::Tensor dx, torch::Tensor partial,
              torch::Tensor dw, torch::Tensor db, int64_t chunk) {
    const float *gp = g.data_ptr<float>(), *tp = t.data_ptr<float>(), *wp = w.data_ptr<float>();
    float *dxp = dx.data_ptr<float>(), *pp = partial.data_ptr<float>();
    const int64_t rows = g.size(0), cols = g.size(1), chunks = partial.size(0);
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            float *pw = pp + c * 2 * cols, *pb = pw + cols;
            for (int64_t j = 0; j < 2 * cols; ++j) pw[j] = 0.0f;
            for (int64_t r = c * chunk; r < std::min(rows, (c + 1) * chunk); ++r) {
#pragma omp simd
                for (int64_t j = 0; j < cols; ++j) {
                    const float gv = gp[r * cols + j], tv = tp[r * cols + j];
                    dxp[r * cols + j] = gv * wp[j] * (1.0f - tv * tv);
                    pw[j] += gv * tv;
                    pb[j] += gv;
                }
            }
        }
    });
    float *dwp = dw.data_ptr<float>(), *dbp = db.data_ptr<float>();
    at::parallel_for(0, cols, 256, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
            float sw = 0.0f, sb = 0.0f;
            for (int64_t c = 0; c < chunks; ++c) {
                sw += pp[c * 2 * cols + j];
                sb += pp[c * 2 * cols + cols + j];
            }
            dwp[j] = sw;
            dbp[j] = sb;
        }
    });
}
"""

_ext = load_inline(
    name="scaled_tanh_training_cpu",
    cpp_sources=CPP_SOURCE,
    functions=["forward", "backward"],
    extra_cflags=["-O3", "-march=native", "-ffast-math", "-fopenmp"],  # -ffast-math: a vector tanh
    extra_ldflags=["-fopenmp"],
)
CHUNK = 64  # rows per partial sum of the parameters' gradients


class ScaledTanh(torch.autograd.Function):
    """The forward and the backward both ours: autograd calls backward with the gradient of out."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        x = x.contiguous()
        t, out = torch.empty_like(x), torch.empty_like(x)
        _ext.forward(x, weight.contiguous(), bias.contiguous(), t, out)
        ctx.save_for_backward(t, weight)
        return out

    @staticmethod
    def backward(ctx, grad):
        t, weight = ctx.saved_tensors
        grad = grad.contiguous()
        dx = torch.empty_like(grad)
        partial = torch.empty((grad.size(0) + CHUNK - 1) // CHUNK, 2, grad.size(1))
        dw, db = torch.empty_like(weight), torch.empty_like(weight)
        _ext.backward(grad, t, weight.contiguous(), dx, partial, dw, db, CHUNK)
        return dx, dw, db  # one gradient per forward input, in order


class ModelNew(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(cols) + 0.5)  # the same names and shapes as Model's
        self.bias = nn.Parameter(torch.rand(cols) - 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ScaledTanh.apply(x, self.weight, self.bias)
