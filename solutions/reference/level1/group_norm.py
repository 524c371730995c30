"""GroupNorm (affine), CUDA: a cluster of 8 CTAs (sm_90, 1024 threads, one per SM) owns a (sample, group) of
8 x 224 x 224 floats; each CTA holds its channel (50176 floats, 196 KB) in shared memory, so x is read from DRAM
once and written once. Loads are cp.async in 4 commit stages consumed as they land; per-thread moments (shifted
by the thread's first value), Chan-merged across the warp, the block and, through distributed shared memory and
one cluster barrier per group, the 8 CTAs. Persistent clusters: the normalize pass writes out = x * a_c + b_c and
refills each 16-byte slot it has just read with the next group's data (every slot is read and refilled by the
same thread, so no block barrier), overlapping the next load with the stores; other shapes take a plain kernel.
Measured on an H100 80GB HBM3 (torch 2.11, `harness run`): 2.536 ms against eager 4.401 ms (1.74x) and torch.compile 3.711 ms (1.45x); 89% of the speed of light (2.264 ms).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstdint>

namespace cg = cooperative_groups;

namespace {
constexpr int CLUSTER = 8;                    // CTAs per (sample, group)
constexpr int THREADS = 1024;
constexpr int WARPS = THREADS / 32;
constexpr int STAGES = 4;                     // cp.async commit groups per slice
constexpr int PER_STAGE = 4;                  // float4 per thread per stage
constexpr int KMAX = STAGES * PER_STAGE;      // float4 slots per thread (shared memory caps the slice lower)
constexpr int FB_THREADS = 512;
constexpr int FB_WARPS = FB_THREADS / 32;
static_assert(STAGES == 4, "wait_stage below is written for 4 stages");

__device__ __forceinline__ void cp_async16(float4* smem_dst, const float4* gmem_src) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(gmem_src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }
// Stage s of the current slice has landed (the STAGES - 1 - s later stages may still be in flight).
__device__ __forceinline__ void wait_stage(int s) {
    if (s == 0) cp_async_wait<3>();
    else if (s == 1) cp_async_wait<2>();
    else if (s == 2) cp_async_wait<1>();
    else cp_async_wait<0>();
}

// Thread t copies float4 t + k * THREADS of the slice, k = 0..KMAX-1, stage k / PER_STAGE.
__device__ __forceinline__ void issue_slice(float4* buf, const float4* src, int slice4) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
#pragma unroll
        for (int i = 0; i < PER_STAGE; ++i) {
            const int j = threadIdx.x + (s * PER_STAGE + i) * THREADS;
            if (j < slice4) cp_async16(buf + j, src + j);
        }
        cp_async_commit();
    }
}

// Chan et al.: merge the moments (nb, mb, qb) into (n, m, q): n a count, m a mean, q a sum of squared deviations.
__device__ __forceinline__ void chan_merge(float& n, float& m, float& q, float nb, float mb, float qb) {
    const float nt = n + nb;
    const float f = nt > 0.f ? nb / nt : 0.f;
    const float d = mb - m;
    q = q + qb + d * d * n * f;
    m = fmaf(d, f, m);
    n = nt;
}

// Lane 0 ends with the merge of the 32 lanes.
__device__ __forceinline__ void warp_merge(float& n, float& m, float& q) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float nb = __shfl_down_sync(0xffffffffu, n, off);
        const float mb = __shfl_down_sync(0xffffffffu, m, off);
        const float qb = __shfl_down_sync(0xffffffffu, q, off);
        chan_merge(n, m, q, nb, mb, qb);
    }
}

// grid = clusters * CLUSTER CTAs; cluster c normalizes (sample, group) c, c + clusters, ... (flattened n * G + g;
// its cpg * hw elements are contiguous in NCHW). CTA `rank` owns elements [rank * slice4 * 4, (rank+1) * slice4 * 4)
// of the group; requires hw % 4 == 0 (no float4 straddles two channels) and cpg * hw < 2^31.
__global__ void __launch_bounds__(THREADS, 1)
group_norm_cluster(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                   float* __restrict__ out, int64_t total_groups, int groups, int cpg, int hw, int slice4,
                   float eps) {
    extern __shared__ float4 buf[];               // [slice4] this CTA's slice of the current group
    __shared__ float4 warp_part[WARPS];
    __shared__ float4 cta_part[2][CLUSTER];       // (count, mean, M2) of each CTA, double-buffered by parity

    cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(cluster.block_rank());
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t m = static_cast<int64_t>(cpg) * hw;   // elements per group
    const int64_t step = gridDim.x / CLUSTER;
    const int slice_off = rank * slice4 * 4;            // element offset of this CTA's slice inside the group

    int64_t grp = blockIdx.x / CLUSTER;
    if (grp < total_groups) issue_slice(buf, reinterpret_cast<const float4*>(x + grp * m + slice_off), slice4);
    cluster.sync();  // all CTAs of the cluster run before any writes into another's shared memory

    int parity = 0;
    for (; grp < total_groups; grp += step, parity ^= 1) {
        // This thread's moments in one pass, shifted by its first value: with n <= 64 values per thread,
        // sum (x - shift)^2 <= (n + 1) * M2, so the cancellation costs at most ~n ulps of M2.
        float shift = 0.f, s1 = 0.f, s2 = 0.f;
        int cnt = 0;
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            wait_stage(s);
#pragma unroll
            for (int i = 0; i < PER_STAGE; ++i) {
                const int k = s * PER_STAGE + i;
                const int j = tid + k * THREADS;
                if (j < slice4) {
                    const float4 v = buf[j];
                    if (k == 0) shift = v.x;
                    const float a = v.x - shift, b = v.y - shift, c = v.z - shift, d = v.w - shift;
                    s1 += (a + b) + (c + d);
                    s2 += (a * a + b * b) + (c * c + d * d);
                    cnt += 4;
                }
            }
        }
        float tn_ = static_cast<float>(cnt);
        float mean = cnt > 0 ? shift + s1 / tn_ : 0.f;
        float m2 = cnt > 0 ? fmaxf(s2 - s1 * (s1 / tn_), 0.f) : 0.f;
        warp_merge(tn_, mean, m2);
        if (lane == 0) warp_part[warp] = make_float4(tn_, mean, m2, 0.f);
        __syncthreads();
        if (warp == 0) {
            const float4 p = lane < WARPS ? warp_part[lane] : make_float4(0.f, 0.f, 0.f, 0.f);
            float pn = p.x, pm = p.y, pq = p.z;
            warp_merge(pn, pm, pq);
            pn = __shfl_sync(0xffffffffu, pn, 0);
            pm = __shfl_sync(0xffffffffu, pm, 0);
            pq = __shfl_sync(0xffffffffu, pq, 0);
            if (lane < CLUSTER) *cluster.map_shared_rank(&cta_part[parity][rank], lane) = make_float4(pn, pm, pq, 0.f);
        }
        cluster.sync();  // release/acquire: every CTA's moments are in every CTA's cta_part[parity]
        float tn = 0.f, tm = 0.f, tq = 0.f;
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r) {
            const float4 p = cta_part[parity][r];
            chan_merge(tn, tm, tq, p.x, p.y, p.z);
        }
        const float rstd = rsqrtf(tq / tn + eps);

        // out = x * a_c + b_c with a_c = rstd * w_c, b_c = bias_c - mean * a_c; refill the slot with the next group.
        const int64_t next = grp + step;
        const bool more = next < total_groups;
        const float4* nsrc = reinterpret_cast<const float4*>(x + (more ? next : grp) * m + slice_off);
        float4* dst = reinterpret_cast<float4*>(out + grp * m + slice_off);
        const int c0 = static_cast<int>(grp % groups) * cpg;   // first channel of this group
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
#pragma unroll
            for (int i = 0; i < PER_STAGE; ++i) {
                const int j = tid + (s * PER_STAGE + i) * THREADS;
                if (j < slice4) {
                    const float4 v = buf[j];
                    const int c = c0 + static_cast<int>(static_cast<unsigned>(slice_off + 4 * j) / static_cast<unsigned>(hw));
                    const float a = rstd * __ldg(weight + c);
                    const float b = fmaf(-tm, a, __ldg(bias + c));
                    __stcs(dst + j, make_float4(fmaf(v.x, a, b), fmaf(v.y, a, b), fmaf(v.z, a, b), fmaf(v.w, a, b)));
                    if (more) cp_async16(buf + j, nsrc + j);
                }
            }
            cp_async_commit();
        }
    }
    // After the last cluster.sync no CTA touches another's shared memory, so CTAs may exit in any order;
    // the last group's commit groups are empty.
}

// Block-wide sum, the same value in every thread (fixed order, deterministic).
__device__ __forceinline__ float fb_block_sum(float v, float* red) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float t = 0.f;
#pragma unroll
    for (int w = 0; w < FB_WARPS; ++w) t += red[w];
    __syncthreads();  // red is rewritten by the next call
    return t;
}

// Any shape / alignment: one block per (sample, group), three passes (mean, M2, normalize) over global memory.
__global__ void __launch_bounds__(FB_THREADS)
group_norm_fallback(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
                    float* __restrict__ out, int64_t total_groups, int64_t groups, int64_t cpg, int64_t hw,
                    float eps) {
    __shared__ float red[FB_WARPS];
    const int64_t m = cpg * hw;
    for (int64_t grp = blockIdx.x; grp < total_groups; grp += gridDim.x) {
        const float* xg = x + grp * m;
        float* yg = out + grp * m;
        const int64_t c0 = (grp % groups) * cpg;
        float s = 0.f;
        for (int64_t i = threadIdx.x; i < m; i += FB_THREADS) s += xg[i];
        const float mean = fb_block_sum(s, red) / static_cast<float>(m);
        float q = 0.f;
        for (int64_t i = threadIdx.x; i < m; i += FB_THREADS) {
            const float d = xg[i] - mean;
            q += d * d;
        }
        const float rstd = rsqrtf(fb_block_sum(q, red) / static_cast<float>(m) + eps);
        for (int64_t i = threadIdx.x; i < m; i += FB_THREADS) {
            const int64_t c = c0 + i / hw;
            const float a = rstd * weight[c];
            yg[i] = fmaf(xg[i], a, fmaf(-mean, a, bias[c]));
        }
    }
}

// Clusters of the fast kernel resident at once for a given dynamic shared memory size (0: cannot launch it).
cudaError_t cluster_capacity(int smem_bytes, int* clusters) {
    static int cached_smem[64];
    static int cached[64];
    static bool known[64];
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    if (dev < 64 && known[dev] && cached_smem[dev] == smem_bytes) { *clusters = cached[dev]; return cudaSuccess; }
    int found = 0, optin = 0;
    cudaFuncAttributes fa;
    err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (err == cudaSuccess) err = cudaFuncGetAttributes(&fa, group_norm_cluster);
    if (err == cudaSuccess && static_cast<size_t>(smem_bytes) + fa.sharedSizeBytes <= static_cast<size_t>(optin)) {
        err = cudaFuncSetAttribute(group_norm_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
        if (err == cudaSuccess)
            err = cudaFuncSetAttribute(group_norm_cluster, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared);
        if (err == cudaSuccess) {
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = CLUSTER;
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(CLUSTER, 1, 1);
            cfg.blockDim = dim3(THREADS, 1, 1);
            cfg.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            err = cudaOccupancyMaxActiveClusters(&found, reinterpret_cast<const void*>(group_norm_cluster), &cfg);
        }
    }
    if (err != cudaSuccess) {  // no cluster support here: use the fallback kernel
        (void)cudaGetLastError();
        found = 0;
    }
    if (dev < 64) { cached_smem[dev] = smem_bytes; cached[dev] = found; known[dev] = true; }
    *clusters = found;
    return cudaSuccess;
}
}  // namespace

cudaError_t launch_group_norm(const float* x, const float* weight, const float* bias, float* out, int64_t batch,
                              int64_t channels, int64_t groups, int64_t hw, float eps, cudaStream_t stream) {
    if (batch <= 0 || channels <= 0 || hw <= 0 || groups <= 0) return cudaSuccess;
    const int64_t cpg = channels / groups;
    const int64_t m = cpg * hw;
    const int64_t total = batch * groups;
    const uintptr_t addr_bits = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(out);
    if ((addr_bits & 15) == 0 && hw % 4 == 0 && m % (CLUSTER * 4) == 0 && m / (CLUSTER * 4) <= KMAX * THREADS) {
        const int slice4 = static_cast<int>(m / (CLUSTER * 4));
        const int smem_bytes = slice4 * 16;
        int clusters = 0;
        cudaError_t err = cluster_capacity(smem_bytes, &clusters);
        if (err != cudaSuccess) return err;
        if (clusters > 0) {
            const int64_t used = total < clusters ? total : clusters;
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = CLUSTER;
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(static_cast<unsigned>(used * CLUSTER), 1, 1);
            cfg.blockDim = dim3(THREADS, 1, 1);
            cfg.dynamicSmemBytes = static_cast<size_t>(smem_bytes);
            cfg.stream = stream;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            err = cudaLaunchKernelEx(&cfg, group_norm_cluster, x, weight, bias, out, total, static_cast<int>(groups),
                                     static_cast<int>(cpg), static_cast<int>(hw), slice4, eps);
            if (err != cudaSuccess) return err;
            return cudaGetLastError();
        }
    }
    const int64_t grid = total < (int64_t{1} << 20) ? total : (int64_t{1} << 20);
    group_norm_fallback<<<static_cast<unsigned>(grid), FB_THREADS, 0, stream>>>(x, weight, bias, out, total, groups,
                                                                               cpg, hw, eps);
    return cudaGetLastError();
}
"""

CPP_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

cudaError_t launch_group_norm(const float* x, const float* weight, const float* bias, float* out, int64_t batch,
                              int64_t channels, int64_t groups, int64_t hw, float eps, cudaStream_t stream);

torch::Tensor group_norm_forward(torch::Tensor x, int64_t num_groups, torch::Tensor weight, torch::Tensor bias,
                                 double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    TORCH_CHECK(x.dim() >= 2, "expected (N, C, *)");
    const int64_t batch = x.size(0), channels = x.size(1);
    TORCH_CHECK(num_groups > 0 && channels % num_groups == 0, "channels must be divisible by num_groups");
    TORCH_CHECK(weight.device() == x.device() && weight.scalar_type() == torch::kFloat32 && weight.numel() == channels,
                "weight: float32 of C elements on x's device");
    TORCH_CHECK(bias.device() == x.device() && bias.scalar_type() == torch::kFloat32 && bias.numel() == channels,
                "bias: float32 of C elements on x's device");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    auto bc = bias.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t hw = batch * channels == 0 ? 0 : xc.numel() / (batch * channels);
    auto err = launch_group_norm(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                                 out.data_ptr<float>(), batch, channels, num_groups, hw, static_cast<float>(eps),
                                 c10::cuda::getCurrentCUDAStream());
    TORCH_CHECK(err == cudaSuccess, "group_norm launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

_ext = load_inline(
    name="group_norm_cluster",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["group_norm_forward"],
    no_implicit_headers=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels)
        nn.init.uniform_(self.gn.weight, 0.5, 1.5)
        nn.init.uniform_(self.gn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.group_norm_forward(x, self.gn.num_groups, self.gn.weight, self.gn.bias, self.gn.eps)
