// sm90_schedule.cuh - the persistent grid's tile scheduler: which work units (an output tile and a
// range of its k-blocks) each CTA cluster runs, in order, for the three schedules the runtime's plan
// chooses (runtime/plan.c): tile by tile with split-K slices, stream-K (optionally after data-parallel
// tiles) and the K pair. The producer, the flag warp and the consumers of a CTA walk the same sequence
// independently (Walk), so no unit index passes between them.
#ifndef W4A16_SM90_SCHEDULE_CUH
#define W4A16_SM90_SCHEDULE_CUH

#include <stdint.h>

#include "grouped/grouped_common.cuh"
#include "sm90/sm90_config.cuh"
#include "sm90/sm90_ptx.cuh"

namespace w4a16_sm90 {

// One work unit: a CTA tile and a K slice. Slice z of split covers the k-blocks
// [z * k_iters / split, (z + 1) * k_iters / split): any split <= k_iters works (uneven slices differ
// by at most one k-block), so the runtime can fill the SMs exactly.
struct Unit {
  int n0, m0, kb0, kn, z;
  int sk_last;   // stream-K, the unit that starts its tile without finishing it: the last cluster
                 // whose K iterations finish the tile (its partials are added here); else -1
  bool contrib;  // stream-K, a unit that finishes a tile another cluster started: partials only
  int e;         // grouped form: the unit's expert (m0 is a grouped row, of D and, without a row
  int m_end;     // index, of A), and the end of its rows (rows m0 .. min(m0 + TM, m_end) are stored)
};

// The token rows unit u's wgmmas take (and its activation copies bring): TM, or with Cfg::kNarrowTail
// its rows left in the tile (u.m_end - u.m0) rounded up to 64 where that is 64 or 128 and below TM.
// The producer, the gather warps and the consumers each derive it from the unit.
template <class C>
static __device__ __forceinline__ int narrow_tile(const Unit &u) {
  if constexpr (C::kNarrowTail) {
    const int left = u.m_end - u.m0;
    if (left <= 64) return 64;
    if (C::TM > 128 && left <= 128) return 128;
  }
  return C::TM;
}

// The grouped form's table in shared memory (Cfg::kTableOff from the 1024-byte aligned base):
// before[E + 1] (the first unit of each expert; before[E] the units in all), row0[kMaxExperts],
// count[kMaxExperts] (then two ints of its scan and the gather warps' row addresses). Filled once by
// the kernel (w4a16_grouped_table, grouped_common.cuh) before the roles part.
template <class C>
static __device__ __forceinline__ int *grouped_table_ptr() {
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t a = smem_u32(smem_raw);
  return reinterpret_cast<int *>(smem_raw + (((a + 1023u) & ~1023u) - a) + C::kTableOff);
}

// Unit `it` of the grouped walk: the expert e whose units hold it (before[e] <= it < before[e + 1]: the
// last e with before[e] <= it, by bisection), then the expert's units token tile fastest (the CTAs
// resident together share a column tile's weights, read once from memory while the experts' token
// rows come from L2).
template <class C>
static __device__ __forceinline__ Unit grouped_unit(const Params &p, int it, int k_iters) {
  const int *before = grouped_table_ptr<C>();
  const int *row0 = before + C::kMaxExperts + 1;
  const int *count = row0 + C::kMaxExperts;
  const int lo = w4a16_grouped_expert_of(before, grouped_of(p).experts, it);
  const int t = it - before[lo], cnt = count[lo];
  const int m_tiles = (cnt + C::TM - 1) / C::TM;
  const int nt = t / m_tiles;
  Unit u;
  u.e = lo;
  u.m0 = row0[lo] + (t - nt * m_tiles) * C::TM;
  u.m_end = row0[lo] + cnt;
  u.n0 = nt * C::TN;
  u.kb0 = 0;
  u.kn = k_iters;
  u.z = 0;
  u.sk_last = -1;
  u.contrib = false;
  return u;
}

// Unit cu of tiles x split in the banded raster: bands of kMBand cluster rows along M, N fastest
// inside a band (the weight rows of a band stay in L2 while its token rows pass).
template <class C>
static __device__ __forceinline__ Unit decode_unit(int cu, int n_cl, int m_cl, int k_iters, int split, int cn,
                                                   int cm) {
  const int tiles = n_cl * m_cl;
  const int z = cu / tiles;
  const int t = cu - z * tiles;
  const int band = t / (C::kMBand * n_cl);
  const int within = t - band * C::kMBand * n_cl;
  const int rem = m_cl - band * C::kMBand;
  const int gm = rem < C::kMBand ? rem : C::kMBand;
  const int mt = band * C::kMBand + within % gm;
  const int nt = within / gm;
  Unit u;
  u.n0 = (nt * C::CN + cn) * C::TN;
  u.m0 = (mt * C::CM + cm) * C::TM;
  u.kb0 = (z * k_iters) / split;
  u.kn = ((z + 1) * k_iters) / split - u.kb0;
  u.z = z;
  u.sk_last = -1;
  u.contrib = false;
  return u;
}

// The units of one CTA cluster, in order: the same walk for the producer and the consumers.
// Tile by tile: units cid, cid + ncl, ... of tiles x split. Stream-K: cluster cid's part of the
// iterations, cut at tile boundaries (a cluster's first unit may finish a tile begun by the clusters
// before it, its last may begin one that the clusters after it finish). Only the position is state;
// the rest is re-derived from the parameters per unit (32-bit arithmetic: the producer runs in 48
// registers).
struct Walk {
  // tile by tile: the next unit and the unit count; stream-K: iterations, it < 0 while data-parallel
  // tiles remain (-it of them: Params::streamk - 1 at the start)
  int it, end;
};

// Stream-K: the first iteration of part c of g (Params::sk_base, sk_rem = A | B << 16): parts c < A
// hold sk_base + 1 iterations, the last B parts sk_base - 1, the others sk_base. The plan makes the
// parts shrink with the CTA index where they are long (B > 0): a launch's CTAs start in index order as
// the previous grid's leave, so the first ones have their prefetched stages in before the previous
// grid completes and the last ones do not.
static __device__ __forceinline__ int sk_start(const Params &p, int c, int g) {
  const int a = p.sk_rem & 0xffff, b = p.sk_rem >> 16;
  return c * p.sk_base + (c < a ? c : a) - (c > g - b ? c - (g - b) : 0);
}
// ... and its inverse: the part that holds iteration i (the three runs of parts in turn)
static __device__ __forceinline__ int sk_part_of(const Params &p, int i, int g) {
  const int a = p.sk_rem & 0xffff, b = p.sk_rem >> 16;
  const int big = a * (p.sk_base + 1), mid = big + (g - b - a) * p.sk_base;
  return i < big ? i / (p.sk_base + 1) : i < mid ? a + (i - big) / p.sk_base : g - b + (i - mid) / (p.sk_base - 1);
}

// K pair: rank 0's k-blocks of k, Params::kpair - 1 (the lead) more than rank 1's where that leaves
// rank 1 at least one: ceil(k / 2) with no lead
static __device__ __forceinline__ int kpair_rank0_kblocks(const Params &p, int k) {
  const int h = (k + p.kpair) / 2;
  return h < k ? h : k - 1;
}

template <class C>
static __device__ __forceinline__ Walk walk_begin(const Params &p, int cid) {
  Walk w;
  if constexpr (C::kGrouped) {
    w.it = cid;
    w.end = grouped_table_ptr<C>()[grouped_of(p).experts];
  } else if (p.kpair) {
    w.it = 0;
    w.end = 1;
  } else if (p.streamk) {
    const int g = (int)(gridDim.x / C::kCluster);
    w.it = sk_start(p, cid, g);
    w.end = sk_start(p, cid + 1, g);
    if (C::kStreamKDataParallel && p.streamk > 1) w.it = 1 - p.streamk;
  } else {
    w.it = cid;
    w.end = ((p.n + C::TN * C::CN - 1) / (C::TN * C::CN)) * ((p.m + C::TM * C::CM - 1) / (C::TM * C::CM)) * p.split_k;
  }
  return w;
}

// The next unit of the walk into u; false at its end.
template <class C>
static __device__ __forceinline__ bool walk_next(const Params &p, int cn, int cm, Walk &w, Unit &u) {
  if (w.it >= w.end) return false;  // (data-parallel tiles: it < 0 <= end)
  if constexpr (C::kGrouped) {
    u = grouped_unit<C>(p, w.it, (p.k + C::TK - 1) / C::TK);
    w.it += (int)gridDim.x;
    return true;
  }
  const int n_cl = (p.n + C::TN * C::CN - 1) / (C::TN * C::CN);  // the last may be part-full (N tail)
  const int m_cl = (p.m + C::TM * C::CM - 1) / (C::TM * C::CM);
  const int k = (p.k + C::TK - 1) / C::TK;  // the last k-block may be part-full (K tail)
  if (C::kStreamKDataParallel && w.it < 0) {
    // stream-K's data-parallel tiles first (every cluster the same number, so the stream-K parts
    // after them keep their order: a part's first unit, which may finish a tile another cluster
    // began, before its last, which may begin one); then the part's first iteration, re-derived
    const int g = (int)(gridDim.x / C::kCluster), cid = (int)(blockIdx.x / C::kCluster);
    u = decode_unit<C>(cid + (p.streamk - 1 + w.it) * g, n_cl, m_cl, k, 1, cn, cm);
    if (++w.it == 0) w.it = sk_start(p, cid, g);
    return true;
  }
  if (p.kpair) {
    // one unit: tile blockIdx / 2, rank 0 the first kpair_rank0_kblocks k-blocks, rank 1 the rest
    const int rank = (int)(blockIdx.x & 1u), h = kpair_rank0_kblocks(p, k);
    u = decode_unit<C>((int)(blockIdx.x >> 1), n_cl, m_cl, k, 1, cn, cm);
    u.kb0 = rank ? h : 0;
    u.kn = rank ? k - h : h;
    w.it = w.end;
    return true;
  }
  if (!p.streamk) {
    u = decode_unit<C>(w.it, n_cl, m_cl, k, p.split_k, cn, cm);
    w.it += (int)(gridDim.x / C::kCluster);
    return true;
  }
  const int t = w.it / k;  // among the stream-K tiles, which follow the data-parallel ones
  const int kb0 = w.it - t * k;
  u = decode_unit<C>(C::kStreamKDataParallel ? t + (p.streamk - 1) * (int)(gridDim.x / C::kCluster) : t, n_cl,
                     m_cl, k, 1, cn, cm);
  u.kb0 = kb0;
  u.kn = k - kb0 < w.end - w.it ? k - kb0 : w.end - w.it;
  u.contrib = kb0 > 0;
  if (kb0 == 0 && u.kn < k) {
    // the cluster that runs the tile's last iteration (t + 1) k - 1
    u.sk_last = sk_part_of(p, (t + 1) * k - 1, (int)(gridDim.x / C::kCluster));
  }
  w.it += u.kn;
  return true;
}

}  // namespace w4a16_sm90

#endif
