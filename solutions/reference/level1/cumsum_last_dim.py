"""Inclusive cumulative sum along the last dim, CUDA: a persistent grid (SMs x occupancy blocks of 256 threads)
walks the rows (row = block + k * grid) in tiles of 4096 floats; each thread holds four coalesced float4 of a
tile (1024 floats apart), the block scans them with four interleaved warp-shuffle scans plus one 32-entry scan of
the warp totals (double-buffered in shared memory: one barrier per tile), and a running carry links the tiles of a
row. The next tile's four float4 are loaded before the current one is scanned, so every block keeps 16 KB of reads
in flight while it computes and stores: one read and one write of the data, a single kernel.
Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 2.316 ms against eager 3.363 ms (1.45x) and torch.compile 2.590 ms (1.12x); 96% of the speed of light (2.218 ms).
Any row length (scalar loads and stores for a row tail, or for every row when the length is not a multiple of 4 or a
pointer is not 16-byte aligned) and any row count take that kernel; a scan along another dim runs it on a copy with
that dim moved last.
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
constexpr int VEC = 4;                    // float4 per thread per tile
constexpr int STRIDE = THREADS * 4;       // floats between a thread's float4 in a tile
constexpr int TILE = STRIDE * VEC;        // 4096 floats
constexpr int BLOCKS_PER_SM = 4;
static_assert(WARPS * VEC == 32, "one lane per (float4 slot, warp) in the block scan");

// Tile layout: thread t holds elements start + i * STRIDE + 4 * t + {0..3}, i < VEC. In element order that is
// slot i, then warp, then lane, then component, so the block scan runs over the 32 (i, warp) totals in order
// i * WARPS + warp.
__device__ __forceinline__ void load_tile(const float* __restrict__ row, int64_t start, int64_t cols, bool vec,
                                          float4 (&v)[VEC]) {
    const int64_t e0 = start + 4 * static_cast<int64_t>(threadIdx.x);
    if (vec && start + TILE <= cols) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) v[i] = __ldg(reinterpret_cast<const float4*>(row + e0 + i * STRIDE));
    } else {
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const int64_t e = e0 + i * STRIDE;
            if (vec && e + 3 < cols) {
                v[i] = __ldg(reinterpret_cast<const float4*>(row + e));
            } else {
                v[i].x = e < cols ? row[e] : 0.f;
                v[i].y = e + 1 < cols ? row[e + 1] : 0.f;
                v[i].z = e + 2 < cols ? row[e + 2] : 0.f;
                v[i].w = e + 3 < cols ? row[e + 3] : 0.f;
            }
        }
    }
}

// One 16-byte store, spelled out: the compiler otherwise merged the full-tile path's first float4 store with the
// scalar tail path's and split it into four 4-byte stores.
__device__ __forceinline__ void store_float4(float* p, const float4& v) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

__device__ __forceinline__ void store_tile(float* __restrict__ row, int64_t start, int64_t cols, bool vec,
                                           const float4 (&v)[VEC]) {
    const int64_t e0 = start + 4 * static_cast<int64_t>(threadIdx.x);
    if (vec && start + TILE <= cols) {
#pragma unroll
        for (int i = 0; i < VEC; ++i) store_float4(row + e0 + i * STRIDE, v[i]);
        return;
    }
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int64_t e = e0 + i * STRIDE;
        if (vec && e + 3 < cols) {
            store_float4(row + e, v[i]);
        } else {
            if (e < cols) row[e] = v[i].x;
            if (e + 1 < cols) row[e + 1] = v[i].y;
            if (e + 2 < cols) row[e + 2] = v[i].z;
            if (e + 3 < cols) row[e + 3] = v[i].w;
        }
    }
}

__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
cumsum_rows(const float* __restrict__ x, float* __restrict__ out, int64_t rows, int64_t cols,
            int64_t tiles_per_row, bool vec) {
    __shared__ float warp_total[2][32];  // double-buffered: one barrier per tile
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t G = gridDim.x;
    const int64_t my_rows = (rows - blockIdx.x + G - 1) / G;  // rows blockIdx.x, +G, +2G, ... (grid <= rows)
    const int64_t items = my_rows * tiles_per_row;          // the same for every thread of the block
    int64_t row = blockIdx.x, tile = 0;
    float4 cur[VEC], nxt[VEC];
    load_tile(x + row * cols, 0, cols, vec, cur);
    float carry = 0.f;  // sum of the row left of the current tile
    int buf = 0;
    for (int64_t k = 0; k < items; ++k) {
        int64_t next_row = row, next_tile = tile + 1;
        if (next_tile == tiles_per_row) { next_tile = 0; next_row += G; }
        if (k + 1 < items) load_tile(x + next_row * cols, next_tile * TILE, cols, vec, nxt);  // in flight meanwhile

        float incl[VEC], excl[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) incl[i] = ((cur[i].x + cur[i].y) + cur[i].z) + cur[i].w;  // this float4's sum
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
#pragma unroll
            for (int i = 0; i < VEC; ++i) {
                const float other = __shfl_up_sync(0xffffffffu, incl[i], offset);
                if (lane >= offset) incl[i] += other;
            }
        }
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float before = __shfl_up_sync(0xffffffffu, incl[i], 1);
            excl[i] = lane == 0 ? 0.f : before;  // sum of the lanes left of this one, same slot
        }
        if (lane == 31) {
#pragma unroll
            for (int i = 0; i < VEC; ++i) warp_total[buf][i * WARPS + warp] = incl[i];
        }
        __syncthreads();
        // Every warp scans the 32 (slot, warp) totals itself: no second barrier.
        const float total = warp_total[buf][lane];
        float upto = total;
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
            const float other = __shfl_up_sync(0xffffffffu, upto, offset);
            if (lane >= offset) upto += other;
        }
        const float shifted = __shfl_up_sync(0xffffffffu, upto, 1);
        const float before_slot = lane == 0 ? 0.f : shifted;  // sum of the (slot, warp) pairs before this lane's
        const float tile_total = __shfl_sync(0xffffffffu, upto, 31);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
            const float base = carry + (__shfl_sync(0xffffffffu, before_slot, i * WARPS + warp) + excl[i]);
            float4 o;
            o.x = base + cur[i].x;
            o.y = o.x + cur[i].y;
            o.z = o.y + cur[i].z;
            o.w = o.z + cur[i].w;
            cur[i] = o;
        }
        store_tile(out + row * cols, tile * TILE, cols, vec, cur);
        carry = next_tile == 0 ? 0.f : carry + tile_total;
        buf ^= 1;
        row = next_row;
        tile = next_tile;
#pragma unroll
        for (int i = 0; i < VEC; ++i) cur[i] = nxt[i];
    }
}
}  // namespace

cudaError_t launch_cumsum(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
    if (rows == 0 || cols == 0) return cudaSuccess;
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return err;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cumsum_rows, THREADS, 0);
    if (err != cudaSuccess) return err;
    int64_t grid = static_cast<int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
    if (grid > rows) grid = rows;  // every block owns at least one row
    const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(out) % 16 == 0;
    const int64_t tiles_per_row = (cols + TILE - 1) / TILE;
    cumsum_rows<<<static_cast<unsigned>(grid), THREADS, 0, stream>>>(x, out, rows, cols, tiles_per_row, vec);
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_cumsum(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream);

torch::Tensor cumsum_last(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 1 && (dim == -1 || dim == x.dim() - 1), "this kernel scans the last dimension only");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    auto err = launch_cumsum(xc.data_ptr<float>(), out.data_ptr<float>(), rows, cols,
                             c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "cumsum launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="cumsum_last_dim",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["cumsum_last"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.dim in (-1, x.dim() - 1):
            return _ext.cumsum_last(x, -1)
        # another dim: scanned as the last dim of a moved copy
        return _ext.cumsum_last(x.movedim(self.dim, -1), -1).movedim(-1, self.dim)
