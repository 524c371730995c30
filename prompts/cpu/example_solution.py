import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <cmath>
#include <cstdint>

// A plain loop the compiler vectorizes, split over the cores by at::parallel_for in chunks big
// enough to amortize the scheduling. -ffast-math lets glibc supply a vector exp; -march=native
// uses this machine's widest SIMD (builds and evaluations run on the same machine).
static void scaled_silu_range(const float* __restrict__ x, float* __restrict__ out, int64_t begin,
                              int64_t end, float scale) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
        const float v = x[i];
        out[i] = scale * v / (1.0f + std::exp(-v));
    }
}

torch::Tensor scaled_silu(torch::Tensor x, double scale) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "expected a float32 CPU tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* xp = xc.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    at::parallel_for(0, xc.numel(), 16384, [&](int64_t begin, int64_t end) {
        scaled_silu_range(xp, op, begin, end, s);
    });
    return out;
}
"""

# -fopenmp matters: without it at::parallel_for runs on one thread.
_ext = load_inline(
    name="scaled_silu_cpu",
    cpp_sources=CPP_SOURCE,
    functions=["scaled_silu"],
    extra_cflags=["-O3", "-march=native", "-ffast-math", "-fopenmp"],
    extra_ldflags=["-fopenmp"],
)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scaled_silu(x, self.scale)
