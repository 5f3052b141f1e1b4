// grouped_common.cuh - the work lookup of the grouped (mixture-of-experts) kernels.
//
// The host sizes a grouped launch by E and by `rows`, an upper bound of offsets[E]; it never
// reads the device offsets. Every CTA maps its work slot to an expert and a token tile itself:
// expert e owns ceil(count_e / tile_m) tiles (count_e = offsets[e+1] - offsets[e]; an expert
// whose offsets are not 0 <= offsets[e] <= offsets[e+1] <= rows owns none), numbered expert by
// expert, and slot s is tile s of that numbering (slots past the last tile return at once). One
// warp reads the E + 1 offsets in chunks of 32 experts with a warp-wide prefix sum (E = 128: four
// steps of coalesced reads that stay in L2), so an expert without rows costs no CTA and no
// weight traffic.
//
// Status word: the CTA of slot 0 and column block 0 also checks every offset and (with a row
// index and a status pointer) every row index of the valid experts, and writes the OR of the
// W4A16_GROUPED_BAD_* bits (0 when all are valid) to *status: one writer, so nothing needs
// clearing before a launch.
#ifndef W4A16_GROUPED_GROUPED_COMMON_CUH
#define W4A16_GROUPED_GROUPED_COMMON_CUH

#include <stdint.h>

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
    for (int e0 = 0; e0 < p.experts; e0 += 32) {
      const int e = e0 + lane;
      int64_t lo = 0, hi = 0;
      if (e < p.experts) {
        lo = w4a16_grouped_offset(p, e);
        hi = w4a16_grouped_offset(p, e + 1);
      }
      const bool range_ok = lo >= 0 && hi >= 0 && lo <= p.rows && hi <= p.rows;
      const bool order_ok = hi >= lo;
      if (e < p.experts) {
        if (!range_ok) flags |= W4A16_GROUPED_BAD_RANGE;
        if (!order_ok) flags |= W4A16_GROUPED_BAD_ORDER;
      }
      const bool ok = e < p.experts && range_ok && order_ok;
      const int cnt = ok ? (int)(hi - lo) : 0;
      if (ok && (int)hi > end) end = (int)hi;
      const int tiles = (cnt + tile_m - 1) / tile_m;
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
          if (!check) break;
        }
      }
      base += __shfl_sync(0xffffffffu, incl, 31);
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
  if (check && p.status) {
    int flags = bad_flags;
    if (p.row_index) {  // the row indices of the rows below the last valid expert's end
      int bad = 0;
      for (int r = threadIdx.x; r < valid_end; r += blockDim.x) {
        const int t = p.row_index[r];
        bad |= t < 0 || t >= p.a_rows;
      }
      if (__syncthreads_or(bad)) flags |= W4A16_GROUPED_BAD_ROW_INDEX;
    }
    if (threadIdx.x == 0) *p.status = flags;
  }
  return w;
}

// Token row of A for grouped row r (row_index gather), or -1 when the index is out of range.
static __device__ __forceinline__ int w4a16_grouped_token(const w4a16_grouped_launch_params &p, int r) {
  if (!p.row_index) return r;
  const int t = p.row_index[r];
  return (t >= 0 && t < p.a_rows) ? t : -1;
}

#endif
