"""Depthwise 3x3 convolution (padding 1, no bias), CUDA: each block owns up to 1024 columns of one (n, c) plane
(a float4 column quad per thread, x halos by warp shuffle) and marches down the plane's rows, 4 rows of 16-byte
loads in flight per thread; a 3-row register sliding window of partial sums turns every input row into its
contributions to 3 output rows, so each input element is read from DRAM once and the 9 weights sit in registers.
Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 2.490 ms against eager 7.666 ms (3.08x) and torch.compile 7.297 ms (2.95x); 89% of the speed of light (2.218 ms).
Any height and width take that kernel (scalar loads and stores when the width is not a multiple of 4 or a pointer is
not 16-byte aligned); another kernel size or padding takes a plain kernel (one thread per output).
Compiles in the lean shape: the .cu has no torch header; a thin C++ binding launches it.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>
#include <climits>

namespace {
constexpr int MAX_THREADS = 256;     // 1024 columns per block at most
constexpr int ROWS_IN_FLIGHT = 4;    // input rows loaded per thread before any is used
constexpr unsigned FULL = 0xffffffffu;

// out[p, y, x] = sum_{i,j} w[c, i, j] * in[p, y + i - 1, x + j - 1] (zero outside), p = n * C + c.
// Block (plane, column tile, row strip); thread owns columns xc .. xc + 3. Walking input rows r = y0 - 1 .. y1,
// row r adds w-row 2 to output r - 1 (then complete and stored), w-row 1 to output r, w-row 0 to output r + 1.
template <bool VEC>
__global__ void __launch_bounds__(MAX_THREADS, VEC ? 4 : 3)
dwconv3x3_rows(const float* __restrict__ x, const float* __restrict__ wgt, float* __restrict__ out,
               int channels, int H, int W, int rows_per_strip) {
    const int64_t plane = blockIdx.x;
    const int lane = threadIdx.x & 31;
    const int xc = (blockIdx.y * blockDim.x + threadIdx.x) * 4;
    const bool active = xc < W;
    const int y_begin = blockIdx.z * rows_per_strip;
    const int y_end = min(y_begin + rows_per_strip, H);  // outputs y_begin .. y_end - 1
    const float* __restrict__ src = x + plane * H * W;
    float* __restrict__ dst = out + plane * H * W;

    const float* wc = wgt + static_cast<int>(plane % channels) * 9;
    float w0[3], w1[3], w2[3];
#pragma unroll
    for (int j = 0; j < 3; ++j) {
        w0[j] = __ldg(wc + j);
        w1[j] = __ldg(wc + 3 + j);
        w2[j] = __ldg(wc + 6 + j);
    }

    float acc_prev[4], acc_cur[4];  // partial sums of outputs r - 1 and r before row r is added
#pragma unroll
    for (int j = 0; j < 4; ++j) acc_prev[j] = acc_cur[j] = 0.f;

    for (int r0 = y_begin - 1; r0 <= y_end; r0 += ROWS_IN_FLIGHT) {
        float v[ROWS_IN_FLIGHT][4], hl[ROWS_IN_FLIGHT], hr[ROWS_IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < ROWS_IN_FLIGHT; ++u) {
            const int r = r0 + u;
#pragma unroll
            for (int j = 0; j < 4; ++j) v[u][j] = 0.f;
            hl[u] = hr[u] = 0.f;
            if (r >= 0 && r < H && r <= y_end) {
                const float* rowp = src + static_cast<int64_t>(r) * W;
                if (VEC) {
                    if (active) {
                        const float4 q = __ldg(reinterpret_cast<const float4*>(rowp + xc));
                        v[u][0] = q.x; v[u][1] = q.y; v[u][2] = q.z; v[u][3] = q.w;
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (xc + j < W) v[u][j] = __ldg(rowp + xc + j);
                }
                // The warp's edge lanes fetch the neighbouring warps' columns (an L1/L2 hit).
                if (lane == 0 && xc >= 1 && xc - 1 < W) hl[u] = __ldg(rowp + xc - 1);
                if (lane == 31 && xc + 4 < W) hr[u] = __ldg(rowp + xc + 4);
            }
        }
#pragma unroll
        for (int u = 0; u < ROWS_IN_FLIGHT; ++u) {
            const int r = r0 + u;
            if (r > y_end) break;  // uniform over the block
            float a[6];
            a[1] = v[u][0]; a[2] = v[u][1]; a[3] = v[u][2]; a[4] = v[u][3];
            a[0] = __shfl_up_sync(FULL, a[4], 1);
            a[5] = __shfl_down_sync(FULL, a[1], 1);
            if (lane == 0) a[0] = hl[u];
            if (lane == 31) a[5] = hr[u];
            float o[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float l = a[j], m = a[j + 1], rr = a[j + 2];
                o[j] = fmaf(w2[0], l, fmaf(w2[1], m, fmaf(w2[2], rr, acc_prev[j])));
                acc_prev[j] = fmaf(w1[0], l, fmaf(w1[1], m, fmaf(w1[2], rr, acc_cur[j])));
                acc_cur[j] = fmaf(w0[0], l, fmaf(w0[1], m, w0[2] * rr));
            }
            if (r - 1 >= y_begin && active) {
                float* orow = dst + static_cast<int64_t>(r - 1) * W + xc;
                if (VEC) {
                    __stcs(reinterpret_cast<float4*>(orow), make_float4(o[0], o[1], o[2], o[3]));
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (xc + j < W) __stcs(orow + j, o[j]);
                }
            }
        }
    }
}

// Any kernel size k and padding p (stride 1): one thread per output, out (planes, Ho, Wo), Ho = H + 2p - k + 1.
__global__ void __launch_bounds__(256)
dwconv2d_any(const float* __restrict__ x, const float* __restrict__ wgt, float* __restrict__ out, int64_t planes,
             int channels, int H, int W, int Ho, int Wo, int k, int p) {
    const int64_t total = planes * Ho * Wo;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
         idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int ox = static_cast<int>(idx % Wo);
        const int64_t t = idx / Wo;
        const int oy = static_cast<int>(t % Ho);
        const int64_t plane = t / Ho;
        const float* src = x + plane * H * W;
        const float* wc = wgt + static_cast<int64_t>(plane % channels) * k * k;
        float acc = 0.f;
        for (int i = 0; i < k; ++i) {
            const int y = oy + i - p;
            if (y < 0 || y >= H) continue;
            for (int j = 0; j < k; ++j) {
                const int xx = ox + j - p;
                if (xx >= 0 && xx < W)
                    acc = fmaf(__ldg(wc + i * k + j), __ldg(src + static_cast<int64_t>(y) * W + xx), acc);
            }
        }
        out[idx] = acc;
    }
}
}  // namespace

cudaError_t launch_dwconv2d_any(const float* x, const float* w, float* out, int64_t planes, int64_t channels,
                                int64_t H, int64_t W, int64_t k, int64_t p, cudaStream_t stream) {
    const int64_t Ho = H + 2 * p - k + 1, Wo = W + 2 * p - k + 1;
    if (planes <= 0 || Ho <= 0 || Wo <= 0) return cudaSuccess;
    if (channels <= 0 || H > (1 << 30) || W > (1 << 30) || k > (1 << 14) || p > (1 << 28)) return cudaErrorInvalidValue;
    const int64_t total = planes * Ho * Wo;
    const int64_t blocks = (total + 255) / 256 < (int64_t{1} << 20) ? (total + 255) / 256 : (int64_t{1} << 20);
    dwconv2d_any<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        x, w, out, planes, static_cast<int>(channels), static_cast<int>(H), static_cast<int>(W), static_cast<int>(Ho),
        static_cast<int>(Wo), static_cast<int>(k), static_cast<int>(p));
    return cudaGetLastError();
}

cudaError_t launch_dwconv2d_3x3(const float* x, const float* w, float* out, int64_t planes, int64_t channels,
                                int64_t H, int64_t W, cudaStream_t stream) {
    if (planes == 0 || H == 0 || W == 0) return cudaSuccess;
    if (planes > INT_MAX || channels <= 0 || H > (1 << 30) || W > (1 << 30)) return cudaErrorInvalidValue;
    const int64_t quads = (W + 3) / 4;
    const int threads = static_cast<int>(quads >= MAX_THREADS ? MAX_THREADS : (quads + 31) / 32 * 32);
    const int64_t xtiles = (quads + threads - 1) / threads;
    // Whole-plane strips unless there are too few blocks to fill the GPU several times over; each extra
    // strip re-reads 2 rows.
    int64_t strips = 1;
    while (planes * xtiles * strips < 4096 && H / (strips * 2) >= 64) strips *= 2;
    const int64_t rows_per_strip = (H + strips - 1) / strips;
    strips = (H + rows_per_strip - 1) / rows_per_strip;
    if (xtiles > 65535 || strips > 65535) return cudaErrorInvalidValue;
    const bool vec = W % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(out) % 16 == 0;
    const dim3 grid(static_cast<unsigned>(planes), static_cast<unsigned>(xtiles), static_cast<unsigned>(strips));
    if (vec)
        dwconv3x3_rows<true><<<grid, threads, 0, stream>>>(x, w, out, static_cast<int>(channels),
                                                           static_cast<int>(H), static_cast<int>(W),
                                                           static_cast<int>(rows_per_strip));
    else
        dwconv3x3_rows<false><<<grid, threads, 0, stream>>>(x, w, out, static_cast<int>(channels),
                                                            static_cast<int>(H), static_cast<int>(W),
                                                            static_cast<int>(rows_per_strip));
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_dwconv2d_3x3(const float* x, const float* w, float* out, int64_t planes, int64_t channels,
                                int64_t H, int64_t W, cudaStream_t stream);
cudaError_t launch_dwconv2d_any(const float* x, const float* w, float* out, int64_t planes, int64_t channels,
                                int64_t H, int64_t W, int64_t k, int64_t p, cudaStream_t stream);

torch::Tensor dwconv2d(torch::Tensor x, torch::Tensor w, int64_t padding) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 4,
                "expected a 4-D float32 CUDA input");
    TORCH_CHECK(w.is_cuda() && w.scalar_type() == torch::kFloat32 && w.device() == x.device(),
                "expected a float32 weight on the input's device");
    TORCH_CHECK(w.dim() == 4 && w.size(0) == x.size(1) && w.size(1) == 1 && w.size(2) == w.size(3) && w.size(2) > 0,
                "expected a (C, 1, k, k) depthwise weight");
    TORCH_CHECK(padding >= 0, "expected padding >= 0");
    const int64_t k = w.size(2);
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    if (k == 3 && padding == 1) {
        auto out = torch::empty_like(xc);
        auto err = launch_dwconv2d_3x3(xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(),
                                       xc.size(0) * xc.size(1), xc.size(1), xc.size(2), xc.size(3),
                                       c10::cuda::getCurrentCUDAStream());
        TORCH_CHECK(err == cudaSuccess, "dwconv2d_3x3 launch failed: ", cudaGetErrorString(err));
        return out;
    }
    const int64_t Ho = xc.size(2) + 2 * padding - k + 1, Wo = xc.size(3) + 2 * padding - k + 1;
    TORCH_CHECK(Ho > 0 && Wo > 0, "the padded input is smaller than the kernel");
    auto out = torch::empty({xc.size(0), xc.size(1), Ho, Wo}, xc.options());
    auto err = launch_dwconv2d_any(xc.data_ptr<float>(), wc.data_ptr<float>(), out.data_ptr<float>(),
                                   xc.size(0) * xc.size(1), xc.size(1), xc.size(2), xc.size(3), k, padding,
                                   c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "dwconv2d launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="conv2d_depthwise_3x3",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["dwconv2d"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.padding = padding
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=padding, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # 3x3 with padding 1: the sliding-window kernel; any other kernel size or padding: the plain kernel
        return _ext.dwconv2d(x, self.conv.weight, self.padding)
