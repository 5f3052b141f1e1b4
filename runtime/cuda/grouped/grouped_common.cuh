// grouped_common.cuh - the work lookup of the grouped (mixture-of-experts) kernels.
//
// The host sizes a grouped launch by E and by `rows`, an upper bound of offsets[E]; it never
// reads the device offsets. Every CTA maps its work slot to an expert and a token tile itself:
// expert e owns ceil(count_e / tile_m) tiles (count_e = offsets[e+1] - offsets[e]; an expert
// whose offsets are not 0 <= offsets[e] <= offsets[e+1] <= rows owns none), numbered expert by
// expert, and slot s is tile s of that numbering (slots past the last tile return at once). One
// warp reads the E + 1 offsets (up to 256 experts in one round trip to memory) and scans them in
// chunks of 32 experts with a warp-wide prefix sum, so an expert without rows costs no CTA and no
// weight traffic.
//
// Programmatic dependent launch (sm_90 images): the kernels wait (griddepcontrol.wait) before
// reading anything, the offsets included (the kernel before may have written them), and let their
// dependent launch once their main loop is done; so only the launch latency overlaps.
//
// Status word: the CTA of slot 0 and column block 0 also checks every offset and (with a row
// index and a status pointer) every row index of the valid experts, and writes the OR of the
// W4A16_GROUPED_BAD_* bits (0 when all are valid) to *status: one writer, so nothing needs
// clearing before a launch.
#ifndef W4A16_GROUPED_GROUPED_COMMON_CUH
#define W4A16_GROUPED_GROUPED_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <stdlib.h>

#include <atomic>

#include "common/func_attr.cuh"
#include "common/pdl.cuh"
#include "debug.h"
#include "kernel_abi.h"
#include "w4a16/w4a16.h"

struct w4a16_grouped_work {
  int expert;  // -1: no work for this slot
  int row0;    // the expert's first grouped row
  int count;   // its rows
  int tile;    // the slot's token tile within the expert
};

static __device__ __forceinline__ int64_t w4a16_grouped_offset(const w4a16_grouped_launch_params &p, int e) {
  return p.offsets64 ? static_cast<const int64_t *>(p.offsets)[e] : (int64_t) static_cast<const int32_t *>(p.offsets)[e];
}

// Expert rows from the expert's offsets lo = offsets[e], hi = offsets[e + 1]: hi - lo where 0 <= lo <=
// hi <= rows (a valid expert), else -1 (it owns no rows) with the reason's W4A16_GROUPED_BAD_* bits
// added to flags.
static __device__ __forceinline__ int w4a16_grouped_rows_of(const w4a16_grouped_launch_params &p, int64_t lo,
                                                            int64_t hi, int &flags) {
  const bool range_ok = lo >= 0 && hi >= 0 && lo <= p.rows && hi <= p.rows;
  const bool order_ok = hi >= lo;
  if (!range_ok) flags |= W4A16_GROUPED_BAD_RANGE;
  if (!order_ok) flags |= W4A16_GROUPED_BAD_ORDER;
  return range_ok && order_ok ? (int)(hi - lo) : -1;
}

// The status word (every thread of the CTA calls it, after a barrier that published warp 0's flags
// and the end of the last valid expert): the offsets' flags, and with a row index the indices of the
// rows below that end; one store by thread 0.
static __device__ __forceinline__ void w4a16_grouped_write_status(const w4a16_grouped_launch_params &p, int flags,
                                                                  int valid_end) {
  if (!p.status) return;
  if (p.row_index) {
    int bad = 0;
    for (int r = threadIdx.x; r < valid_end; r += blockDim.x) {
      const int t = p.row_index[r];
      bad |= t < 0 || t >= p.a_rows;
    }
    if (__syncthreads_or(bad)) flags |= W4A16_GROUPED_BAD_ROW_INDEX;
  }
  if (threadIdx.x == 0) *p.status = flags;
}

// The work of `slot` (tile_m tokens a tile), computed by warp 0 and handed to the CTA through
// shared memory (every thread calls it; it synchronizes the CTA once). check: this CTA writes the
// status word.
static __device__ __forceinline__ w4a16_grouped_work w4a16_grouped_find(const w4a16_grouped_launch_params &p, int slot,
                                                                     int tile_m, bool check) {
  __shared__ w4a16_grouped_work found;
  __shared__ int bad_flags;
  __shared__ int valid_end;
  const int lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    int base = 0;  // tiles of the experts before this chunk
    int flags = 0;
    int end = 0;   // the largest end offset of a valid expert
    w4a16_grouped_work w = {-1, 0, 0, 0};
    // blocks of 8 chunks of 32 experts: the block's offsets are loaded at once (one round trip to
    // memory for E <= 256), then scanned chunk by chunk
    for (int b0 = 0; b0 < p.experts; b0 += 256) {
      int64_t lo_r[8], hi_r[8];
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const int e = b0 + 32 * c + lane;
        lo_r[c] = e < p.experts ? w4a16_grouped_offset(p, e) : 0;
        hi_r[c] = e < p.experts ? w4a16_grouped_offset(p, e + 1) : 0;
      }
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const int e0 = b0 + 32 * c;
        if (e0 >= p.experts) break;
        const int e = e0 + lane;
        const int64_t lo = lo_r[c], hi = hi_r[c];
        const int valid = e < p.experts ? w4a16_grouped_rows_of(p, lo, hi, flags) : -1;
        const int cnt = valid > 0 ? valid : 0;
        if (valid >= 0 && (int)hi > end) end = (int)hi;
        const int tiles = cnt > 0 ? (cnt - 1) / tile_m + 1 : 0;
        int incl = tiles;  // inclusive prefix sum over the chunk
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const int v = __shfl_up_sync(0xffffffffu, incl, d);
          if (lane >= d) incl += v;
        }
        const int excl = base + incl - tiles;
        if (w.expert < 0) {
          const unsigned hit = __ballot_sync(0xffffffffu, tiles > 0 && slot >= excl && slot < excl + tiles);
          if (hit) {
            const int src = __ffs(hit) - 1;
            const int ex = __shfl_sync(0xffffffffu, excl, src);
            w.expert = e0 + src;
            w.row0 = (int)__shfl_sync(0xffffffffu, (int)lo, src);
            w.count = __shfl_sync(0xffffffffu, cnt, src);
            w.tile = slot - ex;
          }
        }
        base += __shfl_sync(0xffffffffu, incl, 31);
      }
      if (w.expert >= 0 && !check) break;
    }
    if (lane == 0) found = w;
    if (check) {
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) {
        flags |= __shfl_xor_sync(0xffffffffu, flags, d);
        end = max(end, __shfl_xor_sync(0xffffffffu, end, d));
      }
      if (lane == 0) {
        bad_flags = flags;
        valid_end = end;
      }
    }
  }
  __syncthreads();
  const w4a16_grouped_work w = found;
  if (check) w4a16_grouped_write_status(p, bad_flags, valid_end);
  return w;
}

// The unit table of a persistent grouped kernel (grouped/grouped_sm90.cuh), E <= 256 experts: before[e]
// the first unit of expert e (its units: ceil(count / tile_m) token tiles x n_tiles column tiles),
// before[E] the units in all, row0[e] and count[e] the expert's grouped rows (none where its offsets
// are invalid, as w4a16_grouped_find counts them). Warp 0 loads the E + 1 offsets at once (one round
// trip to memory) and scans them in chunks of 32 experts; scratch[0..1] (shared) carry its flags and
// the end of the last valid expert to the CTA. Every thread calls it; it synchronizes the CTA. check:
// this CTA writes the status word.
static __device__ __forceinline__ void w4a16_grouped_table(const w4a16_grouped_launch_params &p, int tile_m,
                                                           int n_tiles, int *before, int *row0, int *count,
                                                           int *scratch, bool check) {
  const int lane = threadIdx.x & 31;
  if (threadIdx.x < 32) {
    int64_t lo_r[8], hi_r[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int e = 32 * c + lane;
      lo_r[c] = e < p.experts ? w4a16_grouped_offset(p, e) : 0;
      hi_r[c] = e < p.experts ? w4a16_grouped_offset(p, e + 1) : 0;
    }
    int base = 0, flags = 0, end = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if (32 * c >= p.experts) break;
      const int e = 32 * c + lane;
      const int valid = e < p.experts ? w4a16_grouped_rows_of(p, lo_r[c], hi_r[c], flags) : -1;
      const int cnt = valid > 0 ? valid : 0;
      if (valid >= 0 && (int)hi_r[c] > end) end = (int)hi_r[c];
      const int units = cnt > 0 ? ((cnt - 1) / tile_m + 1) * n_tiles : 0;
      int incl = units;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
      }
      if (e < p.experts) {
        before[e] = base + incl - units;
        row0[e] = cnt > 0 ? (int)lo_r[c] : 0;
        count[e] = cnt;
      }
      base += __shfl_sync(0xffffffffu, incl, 31);
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      flags |= __shfl_xor_sync(0xffffffffu, flags, d);
      end = max(end, __shfl_xor_sync(0xffffffffu, end, d));
    }
    if (lane == 0) {
      before[p.experts] = base;
      scratch[0] = flags;
      scratch[1] = end;
    }
  }
  __syncthreads();
  if (check) w4a16_grouped_write_status(p, scratch[0], scratch[1]);
}

// The expert whose units hold unit `it` of a persistent grouped walk over w4a16_grouped_table's
// before[0..experts]: the last e with before[e] <= it (bisection; an expert without units has
// before[e] == before[e + 1], so the last such e has units). Requires 0 <= it < before[experts].
static __device__ __forceinline__ int w4a16_grouped_expert_of(const int *before, int experts, int it) {
  int lo = 0, hi = experts;
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (before[mid] <= it) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Token row of A for grouped row r (row_index gather, unless the runtime gathered A already), or -1
// when the index is out of range.
static __device__ __forceinline__ int w4a16_grouped_token(const w4a16_grouped_launch_params &p, int r) {
  if (!p.row_index || p.a_gathered) return r;
  const int t = p.row_index[r];
  return (t >= 0 && t < p.a_rows) ? t : -1;
}

// Launch KERNEL (grid, threads, smem bytes of dynamic shared memory) with the arguments p and then
// extra (the kernel's further parameters, if any): the dynamic shared-memory limit raised once per context where smem and the
// kernel's 32 bytes of static shared memory pass 48 KB, the preferred shared-memory carveout set
// where carveout >= 0 (percent), and programmatic stream serialization where the device's image of
// the kernel was compiled for sm_90 or later (it then holds the wait) and the call did not ask for
// plain stream order (p.no_pdl).
template <class K, class... Extra>
static inline int w4a16_grouped_launch_kernel(K kernel, std::atomic<unsigned long long> &attrs_ctx,
                                              std::atomic<int> (&pdl_cache)[64], dim3 grid, int threads, int smem,
                                              int carveout, const w4a16_grouped_launch_params &p,
                                              cudaStream_t stream, const Extra &...extra) {
  if (smem + 64 > 48 * 1024 || carveout >= 0) {
    const cudaError_t e = w4a16_func_attr::set_once(kernel, attrs_ctx, smem + 64 > 48 * 1024 ? smem : 0, carveout);
    if (e != cudaSuccess) return (int)e;
  }
  const bool pdl = !p.no_pdl && w4a16_debug()->gemv_pdl && w4a16_kernel_image_waits_cached(kernel, pdl_cache);
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3((unsigned)threads, 1, 1);
  cfg.dynamicSmemBytes = (size_t)smem;
  cfg.stream = stream;
  cfg.attrs = at;
  cfg.numAttrs = pdl ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p, extra...);
  if (e == cudaSuccess) e = cudaGetLastError();
  return (int)e;
}

#endif
