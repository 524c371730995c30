"""The benchmark's candidates: distinct variants of a few relu kernels (the body, block size and vector width vary,
plus a tag unique to the invocation, so that no build is ever cached), in each shape a model writes.

Shapes (cuda): `lean` puts only the kernel and a raw-pointer launcher in the .cu (no torch header; the binding is
C++); `torch` includes torch/extension.h in the .cu, as most model answers do; `triton` is a @triton.jit kernel (no
build: Triton compiles it at its first launch, in the evaluation). On the cpu target a candidate is C++ (`cpp`), or
Triton run by its interpreter (`triton`, never a default there).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

SHAPES = {"cuda": ("lean", "torch", "triton"), "cpu": ("cpp", "triton")}
DEFAULT_SHAPES = {"cuda": ("lean", "torch"), "cpu": ("cpp",)}
BODIES = ("v > 0.f ? v : 0.f", "fmaxf(v, 0.f)", "v * (v > 0.f)")
BLOCKS = (128, 256, 512, 1024)
WIDTHS = (1, 4)  # floats per load: scalar, or float4


def variants() -> itertools.cycle:
    return itertools.cycle(itertools.product(BODIES, BLOCKS, WIDTHS))


def cuda_kernel(body: str, width: int, tag: str) -> str:
    load = "const float4 q = reinterpret_cast<const float4*>(x)[i];" if width == 4 else "const float v = x[i];"
    if width == 4:
        store = ("float4 r; float v; v = q.x; r.x = BODY; v = q.y; r.y = BODY; v = q.z; r.z = BODY; "
                 "v = q.w; r.w = BODY; reinterpret_cast<float4*>(out)[i] = r;").replace("BODY", body)
    else:
        store = f"out[i] = {body};"
    return f"""
// {tag}
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {{
    const int64_t count = n / {width};
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x) {{
        {load}
        {store}
    }}
    for (int64_t i = count * {width} + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {{
        const float v = x[i];
        out[i] = {body};
    }}
}}
"""


def lean_source(body: str, block: int, width: int, tag: str) -> str:
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <cuda_runtime.h>
#include <cstdint>
{cuda_kernel(body, width, tag)}
void launch_relu(const float* x, float* out, int64_t n, cudaStream_t stream) {{
    relu_kernel<<<1056, {block}, 0, stream>>>(x, out, n);
}}
"""

CPP = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

void launch_relu(const float* x, float* out, int64_t n, cudaStream_t stream);

torch::Tensor relu(torch::Tensor x) {{
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    launch_relu(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), c10::cuda::getCurrentCUDAStream());
    return out;
}}
"""

ext = load_inline(name="bench_relu", cpp_sources=CPP, cuda_sources=CUDA, functions=["relu"],
                  no_implicit_headers=True, extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


def torch_source(body: str, block: int, width: int, tag: str) -> str:
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
{cuda_kernel(body, width, tag)}
torch::Tensor relu(torch::Tensor x) {{
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    relu_kernel<<<1056, {block}, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel());
    return out;
}}
"""

ext = load_inline(name="bench_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=CUDA,
                  functions=["relu"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


def cpp_source(body: str, block: int, width: int, tag: str) -> str:
    # block and width become the loop's unroll factor on the CPU
    unroll = max(1, block // 128) * width
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
// {tag}
#include <cmath>
torch::Tensor relu(torch::Tensor x) {{
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = xc.numel();
    at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {{
        #pragma GCC unroll {unroll}
        for (int64_t i = begin; i < end; ++i) {{
            const float v = in[i];
            o[i] = {body.replace("fmaxf", "std::fmax")};
        }}
    }});
    return out;
}}
"""

ext = load_inline(name="bench_relu", cpp_sources=CPP, functions=["relu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


TRITON_BODIES = {"v > 0.f ? v : 0.f": "tl.where(v > 0.0, v, 0.0)", "fmaxf(v, 0.f)": "tl.maximum(v, 0.0)",
                 "v * (v > 0.f)": "v * (v > 0.0)"}


def triton_source(body: str, block: int, width: int, tag: str) -> str:
    # elements a program: block x 4 x width (512 to 16384); the tag sits in the kernel, whose source keys its compile
    size, warps = block * 4 * width, max(1, block // 128)
    return f'''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # {tag}
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    v = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, {TRITON_BODIES[body]}, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, {size}),)](x, out, n, BLOCK={size}, num_warps={warps})
        return out
'''


SOURCES: dict[str, Callable[[str, int, int, str], str]] = {"lean": lean_source, "torch": torch_source,
                                                            "cpp": cpp_source, "triton": triton_source}


def batch(shape: str, n: int, salt: str) -> list[str]:
    """`n` distinct sources of `shape`: variants of the relu kernel, each tagged uniquely."""
    make = SOURCES[shape]
    return [make(body, block, width, f"bench {salt} {shape} {i}")
            for i, (body, block, width) in zip(range(n), variants())]
