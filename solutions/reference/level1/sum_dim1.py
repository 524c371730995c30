"""Sum over a middle dim (keepdim), CUDA: one persistent 512-thread block per SM streams a contiguous run of rows
through shared memory (16-byte cp.async, 3 stages x 4 rows = 64 KB each, ~128 KB of reads in flight per SM) and
adds columns out of shared memory into registers; a tiny second kernel adds the per-block partials.
x is viewed as (outer, reduced, inner): outer * reduced rows of `inner` floats, contiguous end to end, cut into one
equal run per block, so each SM reads DRAM strictly sequentially. A stage is up to 4 rows of one batch starting at
a row index that is a multiple of 4: for 4095-float rows that is one 65520-byte, 16-byte-aligned chunk, copied with
16-byte cp.async.cg only; any other alignment (other shapes, a sliced input) adds <= 3 head and <= 3 tail floats
copied with 4-byte cp.async, so no alignment is assumed. Thread t adds columns t, t + 512, ... of each staged row
(conflict-free shared loads), 8 columns per thread. A run that crosses a batch boundary writes one partial row per
batch it touches (slot block + batch, never shared); the second kernel adds each batch's 1-3 partials in block
order, so the result is bit-for-bit reproducible. Rows wider than 4096 floats take a direct-load kernel instead
(each thread owns 8 columns 512 apart of a column tile, same partial scheme).
Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 3.064 ms against eager 3.148 ms (1.03x) and torch.compile 3.785 ms (1.26x); 97% of the speed of light (2.958 ms).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdint>

namespace {
constexpr int THREADS = 512;
constexpr int NC = 8;                  // columns per thread, THREADS apart
constexpr int TILE = THREADS * NC;     // columns per column tile; rows up to TILE floats take the staged kernel
constexpr int BLOCKS_PER_SM = 3;       // direct-load kernel: 512 threads x <= 40 registers
constexpr int FIN_THREADS = 256;
constexpr int STAGES = 3;              // staged kernel: shared-memory ring of STAGES row chunks
constexpr int STAGE_CAP = 16384;       // row floats per stage (64 KB): 4 rows of 4095 floats
static_assert(THREADS >= 8, "head/tail copies use threads 0..7");

// Rows per stage and floats per stage buffer (room for a <= 3-float lead, a multiple of 4 floats = 16 bytes).
__host__ __device__ inline int64_t stage_rows(int64_t inner) {
    const int64_t r = STAGE_CAP / inner;
    return r > 1 ? r : 1;
}
__host__ __device__ inline int64_t stage_floats(int64_t inner) { return (stage_rows(inner) * inner + 6) / 4 * 4; }

__device__ __forceinline__ void cp_async_16(float* dst, const float* src) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_4(float* dst, const float* src) {
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// The stage starting at row u ends at the next multiple of rps, the end of u's batch, or the end of the run.
__device__ __forceinline__ int64_t stage_end(int64_t u, int64_t rps, int64_t reduced, int64_t u_end) {
    int64_t e = (u / rps + 1) * rps;
    const int64_t be = (u / reduced + 1) * reduced;
    if (be < e) e = be;
    return e < u_end ? e : u_end;
}

// Floats before x[e0] in its 16-byte line: the stage buffer holds x[e0 + i] at position lead + i, so the buffer
// (16-byte aligned) and global memory agree on 16-byte alignment.
__device__ __forceinline__ int stage_lead(const float* x, int64_t e0) {
    return static_cast<int>((reinterpret_cast<uintptr_t>(x + e0) >> 2) & 3);
}

// Copy rows [u, e) (floats [e0, e1) of x) into buf: whole 16-byte lines [ab, ae) with 16-byte copies, the <= 3
// floats before ab (threads 0..2) and the <= 3 floats after ae (threads 4..6) with 4-byte copies.
__device__ __forceinline__ void stage_issue(const float* __restrict__ x, float* buf, int64_t u, int64_t e,
                                            int64_t inner, int t) {
    const int64_t e0 = u * inner, e1 = e * inner;
    const int lead = stage_lead(x, e0);
    int64_t ab = e0 + ((4 - lead) & 3);             // first 16-byte boundary at or after e0
    if (ab > e1) ab = e1;
    int64_t ae = e1 - ((lead + (e1 - e0)) & 3);     // last 16-byte boundary at or before e1
    if (ae < ab) ae = ab;
    const int nb = static_cast<int>((ae - ab) >> 2);
    float* sb = buf + (ab - e0 + lead);             // position ab - e0 + lead is a multiple of 4
    const float* gb = x + ab;
    for (int i = t; i < nb; i += THREADS) cp_async_16(sb + 4 * i, gb + 4 * i);
    const int nh = static_cast<int>(ab - e0), nt = static_cast<int>(e1 - ae);
    if (t < nh) {
        cp_async_4(buf + lead + t, x + e0 + t);
    } else if (t >= 4 && t - 4 < nt) {
        cp_async_4(buf + (ae - e0 + lead) + (t - 4), x + ae + (t - 4));
    }
}

// Staged kernel (inner <= TILE). Block g owns rows [lines * g / G, lines * (g + 1) / G) of the outer * reduced rows
// (lines = outer * reduced) and writes, for every batch j it touches, the sum of its rows of that batch into partial
// slot g + j (inner floats per slot). Stages never cross a batch boundary; a ring of STAGES buffers keeps
// STAGES - 1 stages in flight while one is added.
__global__ void __launch_bounds__(THREADS, 1)
sum_staged(const float* __restrict__ x, float* __restrict__ partial, int64_t reduced, int64_t inner,
           int64_t lines) {
    extern __shared__ __align__(16) float smem[];
    const int t = threadIdx.x;
    const int64_t G = gridDim.x, g = blockIdx.x;
    const int64_t rps = stage_rows(inner);
    const int64_t sbf = stage_floats(inner);
    const int64_t u_begin = lines * g / G, u_end = lines * (g + 1) / G;
    bool valid[NC];
#pragma unroll
    for (int k = 0; k < NC; ++k) valid[k] = t + k * THREADS < inner;

    int64_t pu = u_begin;  // first row not yet issued
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (pu < u_end) {
            const int64_t pe = stage_end(pu, rps, reduced, u_end);
            stage_issue(x, smem + s * sbf, pu, pe, inner, t);
            pu = pe;
        }
        cp_async_commit();
    }
    float acc[NC];
#pragma unroll
    for (int k = 0; k < NC; ++k) acc[k] = 0.f;
    int cb = 0, pb = STAGES - 1;  // buffer to add from, buffer to fill next
    for (int64_t cu = u_begin; cu < u_end;) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of stage cu have landed
        __syncthreads();              // everyone's have, and everyone is done adding from buffer pb
        if (pu < u_end) {
            const int64_t pe = stage_end(pu, rps, reduced, u_end);
            stage_issue(x, smem + pb * sbf, pu, pe, inner, t);
            pu = pe;
        }
        cp_async_commit();
        pb = pb + 1 == STAGES ? 0 : pb + 1;

        const int64_t ce = stage_end(cu, rps, reduced, u_end);
        const float* row = smem + cb * sbf + stage_lead(x, cu * inner) + t;
        const int n = static_cast<int>(ce - cu);
        float part[NC];
#pragma unroll
        for (int k = 0; k < NC; ++k) part[k] = 0.f;
#pragma unroll 4
        for (int i = 0; i < n; ++i, row += inner) {
#pragma unroll
            for (int k = 0; k < NC; ++k) if (valid[k]) part[k] += row[k * THREADS];
        }
#pragma unroll
        for (int k = 0; k < NC; ++k) acc[k] += part[k];
        if (ce == u_end || ce % reduced == 0) {  // end of this block's share of batch cu / reduced
            float* dst = partial + (g + cu / reduced) * inner + t;
#pragma unroll
            for (int k = 0; k < NC; ++k) {
                if (valid[k]) dst[k * THREADS] = acc[k];
                acc[k] = 0.f;
            }
        }
        cb = cb + 1 == STAGES ? 0 : cb + 1;
        cu = ce;
    }
}

// x is (outer, reduced, inner). A "line" is one row of one column tile: line u belongs to group
// j = u / reduced (group j = (batch b, column tile ct), j = b * n_ct + ct) and is row u % reduced of it.
// Block g owns lines [lines * g / G, lines * (g + 1) / G) and writes, for every group j it touches, the sum of
// its lines of that group into partial slot g + j (slot_w floats per slot). The slots are distinct: walking the
// lines in order, each new (block, group) pair raises g or j (or both).
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
sum_lines(const float* __restrict__ x, float* __restrict__ partial, int64_t reduced, int64_t inner,
          int64_t n_ct, int64_t slot_w, int64_t lines) {
    const int t = threadIdx.x;
    const int64_t G = gridDim.x, g = blockIdx.x;
    int64_t u = lines * g / G;
    const int64_t u_end = lines * (g + 1) / G;
    while (u < u_end) {
        const int64_t j = u / reduced;
        const int64_t seg_end = (j + 1) * reduced < u_end ? (j + 1) * reduced : u_end;
        const int64_t b = j / n_ct, ct = j - b * n_ct;
        const int64_t col0 = ct * TILE;
        const int w = static_cast<int>(inner - col0 < TILE ? inner - col0 : TILE);  // width of this column tile
        bool valid[NC];
#pragma unroll
        for (int k = 0; k < NC; ++k) valid[k] = t + k * THREADS < w;
        const float* p = x + (b * reduced + (u - j * reduced)) * inner + col0 + t;
        float acc[NC];
#pragma unroll
        for (int k = 0; k < NC; ++k) acc[k] = 0.f;
        int64_t n = seg_end - u;
        for (; n >= 2; n -= 2, p += 2 * inner) {
            float v0[NC], v1[NC];
#pragma unroll
            for (int k = 0; k < NC; ++k) v0[k] = valid[k] ? __ldg(p + k * THREADS) : 0.f;
#pragma unroll
            for (int k = 0; k < NC; ++k) v1[k] = valid[k] ? __ldg(p + inner + k * THREADS) : 0.f;
#pragma unroll
            for (int k = 0; k < NC; ++k) acc[k] = (acc[k] + v0[k]) + v1[k];
        }
        if (n > 0) {
#pragma unroll
            for (int k = 0; k < NC; ++k) acc[k] += valid[k] ? __ldg(p + k * THREADS) : 0.f;
        }
        float* dst = partial + (g + j) * slot_w + t;
#pragma unroll
        for (int k = 0; k < NC; ++k) if (valid[k]) dst[k * THREADS] = acc[k];
        u = seg_end;
    }
}

// out[b, c] = sum, in block order, of the partials of group j = (b, c / TILE): blocks g0..g1, slots g + j.
// Block g owns line u iff lines * g / G <= u < lines * (g + 1) / G, i.e. g = ((u + 1) * G - 1) / lines.
__global__ void __launch_bounds__(FIN_THREADS)
sum_finalize(const float* __restrict__ partial, float* __restrict__ out, int64_t outer, int64_t reduced,
             int64_t inner, int64_t n_ct, int64_t slot_w, int64_t lines, int64_t G) {
    const int64_t n = outer * inner;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * FIN_THREADS + threadIdx.x; idx < n;
         idx += static_cast<int64_t>(gridDim.x) * FIN_THREADS) {
        const int64_t b = idx / inner, c = idx - b * inner;
        const int64_t ct = c / TILE, ci = c - ct * TILE;
        const int64_t j = b * n_ct + ct;
        float s = 0.f;
        if (reduced > 0) {
            const int64_t g0 = ((j * reduced + 1) * G - 1) / lines;
            const int64_t g1 = ((j + 1) * reduced * G - 1) / lines;
            for (int64_t g = g0; g <= g1; ++g) s += partial[(g + j) * slot_w + ci];
        }
        out[idx] = s;
    }
}
}  // namespace

// Grid of the first pass and the partial buffer it needs (floats); call before launch_sum_middle.
cudaError_t plan_sum_middle(int64_t outer, int64_t reduced, int64_t inner, int64_t* grid, int64_t* workspace) {
    *grid = 0;
    *workspace = 0;
    const int64_t n_ct = (inner + TILE - 1) / TILE;
    const int64_t lines = outer * n_ct * reduced;
    if (lines == 0) return cudaSuccess;
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return err;
    if (inner <= TILE) {
        const int smem_bytes = static_cast<int>(STAGES * stage_floats(inner) * sizeof(float));
        err = cudaFuncSetAttribute(sum_staged, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        if (err != cudaSuccess) return err;
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_staged, THREADS, smem_bytes);
    } else {
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_lines, THREADS, 0);
    }
    if (err != cudaSuccess) return err;
    int64_t g = static_cast<int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
    if (g < 1) g = 1;
    if (g > lines) g = lines;  // every block owns at least one line
    const int64_t slot_w = inner < TILE ? inner : TILE;
    *grid = g;
    *workspace = (g + outer * n_ct - 1) * slot_w;
    return cudaSuccess;
}

cudaError_t launch_sum_middle(const float* x, float* out, float* workspace, int64_t outer, int64_t reduced,
                              int64_t inner, int64_t grid, cudaStream_t stream) {
    const int64_t n = outer * inner;
    if (n == 0) return cudaSuccess;
    const int64_t n_ct = (inner + TILE - 1) / TILE;
    const int64_t lines = outer * n_ct * reduced;
    const int64_t slot_w = inner < TILE ? inner : TILE;
    if (lines > 0) {
        if (inner <= TILE) {  // n_ct == 1, slot_w == inner: the same lines and slots as sum_lines
            const int smem_bytes = static_cast<int>(STAGES * stage_floats(inner) * sizeof(float));
            sum_staged<<<static_cast<unsigned>(grid), THREADS, smem_bytes, stream>>>(x, workspace, reduced, inner,
                                                                                     lines);
        } else {
            sum_lines<<<static_cast<unsigned>(grid), THREADS, 0, stream>>>(x, workspace, reduced, inner, n_ct,
                                                                          slot_w, lines);
        }
        const cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) return err;
    }
    int64_t fin_blocks = (n + FIN_THREADS - 1) / FIN_THREADS;
    if (fin_blocks > 65536) fin_blocks = 65536;
    sum_finalize<<<static_cast<unsigned>(fin_blocks), FIN_THREADS, 0, stream>>>(workspace, out, outer, reduced,
                                                                                 inner, n_ct, slot_w, lines, grid);
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t plan_sum_middle(int64_t outer, int64_t reduced, int64_t inner, int64_t* grid, int64_t* workspace);
cudaError_t launch_sum_middle(const float* x, float* out, float* workspace, int64_t outer, int64_t reduced,
                              int64_t inner, int64_t grid, cudaStream_t stream);

torch::Tensor sum_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t reduced = xc.size(dim);
    auto sizes = xc.sizes().vec();
    sizes[dim] = 1;
    auto out = torch::empty(sizes, xc.options());
    int64_t grid = 0, workspace_floats = 0;
    auto err = plan_sum_middle(outer, reduced, inner, &grid, &workspace_floats);
    TORCH_CHECK(err == cudaSuccess, "sum planning failed: ", cudaGetErrorString(err));
    auto workspace = torch::empty({workspace_floats > 0 ? workspace_floats : 1}, xc.options());
    err = launch_sum_middle(xc.data_ptr<float>(), out.data_ptr<float>(), workspace.data_ptr<float>(), outer, reduced,
                            inner, grid, c10::cuda::getCurrentCUDAStream());
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
