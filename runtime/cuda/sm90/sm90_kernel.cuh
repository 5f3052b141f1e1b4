// sm90_kernel.cuh - the Hopper kernel's __global__ function: shared-memory set-up, the programmatic
// dependent launch trigger, and the roles of its warpgroups (warpgroup 0: the producer thread and the
// flag warp, sm90_producer.cuh; the others: consumers, sm90_mainloop.cuh and sm90_epilogue.cuh).
#ifndef W4A16_SM90_KERNEL_CUH
#define W4A16_SM90_KERNEL_CUH

#include <cuda.h>
#include <stdint.h>

#include "common/pdl.cuh"
#include "grouped/grouped_common.cuh"
#include "sm90/sm90_config.cuh"
#include "sm90/sm90_epilogue.cuh"
#include "sm90/sm90_mainloop.cuh"
#include "sm90/sm90_producer.cuh"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_schedule.cuh"

namespace w4a16_sm90 {

// The consumer warpgroups: each unit of the walk (pingpong: every other one) through the mainloop
// and the epilogue.
template <typename T, class C, bool CHUNK>
static __device__ __forceinline__ void consumers(const Params &p, const Maps &tm, const Smem &sm, int tid, int wg,
                                                 uint32_t crank, int cn, int cm, int cid, const Walk &walk0) {
  setmaxnreg_inc<C::consumer_regs(CHUNK)>();
  w4a16_griddep_wait();  // before the epilogue's global reads (bias) and writes (D, partials)
  Consumer cs;
  cs.c = wg - 1;
  cs.warp = (tid / 32) & 3;
  cs.lane = tid & 31;
  cs.g = cs.lane >> 2;
  cs.t = cs.lane & 3;
  cs.rowbase = C::kCoop ? cs.c * C::kWgRows : 0;
  cs.nthr = C::kCoop ? 128 * C::NC : 128;
  cs.ltid = C::kCoop ? tid - 128 : tid - 128 * (cs.c + 1);
  cs.epi_bar = C::kCoop ? 1u : 2u + (uint32_t)cs.c;
  cs.epi = sm.base + C::kEpiOff + (C::kCoop ? 0 : cs.c * C::kEpiBufBytes);
  cs.crank = crank;
  cs.small_group = p.group < C::TK;

  int j = 0;              // this CTA's unit counter
  uint32_t mine = 0;      // mainloops this warpgroup has run (pingpong turn parity)
  uint32_t pos_next = 0;  // the producer's stage position at the start of unit j
  Walk w = walk0;
  Unit u;
  for (; walk_next<C>(p, cn, cm, w, u); ++j) {
    const uint32_t pos0 = pos_next;
    pos_next += (uint32_t)u.kn;
    if (!C::kCoop && (j & 1) != cs.c) continue;
    const uint32_t chunk16 = (uint32_t)((p.act_3d_tail ? p.tail_rows : C::TM) * 8);
    if (!C::kCoop) {
      // warpgroup 0's mainloop i follows warpgroup 1's mainloop i-1; 1's i follows 0's i
      if (cs.c == 1) {
        mbar_wait(sm.bar_order + 8, mine & 1u);
      } else if (mine > 0) {
        mbar_wait(sm.bar_order, (mine - 1) & 1u);
      }
    }
    ++mine;
    float acc[C::R][C::TM / 2];
    Mainloop<T, C, CHUNK> ml{p, sm, cs, pos0, chunk16, acc, 0u, narrow_tile<C>(u)};
    ml.run(u.kn);
    release_stage<C>(sm, cs, ml.prev_s);
    if (!C::kCoop) mbar_arrive_local(sm.bar_order + 8 * (1 - cs.c));  // the other warpgroup's turn
    using Epi = Epilogue<T, C, CHUNK>;
    Epi ep{p, sm, cs, tm, u, cid, acc, 0u, false, false};
    if (!ep.run()) continue;
    if constexpr (Epi::kFixupInUnitLoop) {
      // the stream-K fixup (Epilogue::streamk_fixup) with its loop here, in the unit loop's function
      // (Epilogue::kFixupInUnitLoop says why)
      static_assert(C::TM > 16, "the fixup's copies into the stage ring (TM <= 16) are Epilogue::streamk_fixup's");
      if (u.sk_last >= 0) {
        named_bar_sync(kOwnBar + (C::kCoop ? 0u : (uint32_t)cs.c), cs.nthr + 32);  // the flag warp's word
        constexpr int kStep = Epi::kFixupStep;
        const int q_end = ep.streamk_last_slot();
        for (int q = cid + 1; q <= q_end; q += kStep) {
          const bool two = kStep == 2 && q + 1 <= q_end;
          const float4 *s0 = ep.streamk_slot(q);
          const float4 *s1 = ep.streamk_slot(two ? q + 1 : q);
          float4 v0[C::R][C::TM / 8], v1[kStep == 2 ? C::R : 1][kStep == 2 ? C::TM / 8 : 1];
          ep.load_fixup_pieces(s0, s1, two, v0, v1);
          ep.add_fixup_pieces(v0, v1, two);
        }
      }
      ep.store_tile();
    }
  }
  if (C::kTmaStore && cs.ltid == 0) bulk_wait0();
}

// CHUNK: the scale rows come by chunks (Params::scale_map bit 1; Cfg::kScaleChunk > 1 only). A kernel
// of its own: compiled into the one kernel, the chunk code costs the launches without chunks 2-4 %.
template <typename T, class C, bool CHUNK>
__global__ void __launch_bounds__(C::kThreads, C::kCtasPerSm)
    w4a16_sm90_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_w,
                      const __grid_constant__ CUtensorMap tm_d, const __grid_constant__ CUtensorMap tm_a_tail,
                      const __grid_constant__ CUtensorMap tm_d_tail, const __grid_constant__ CUtensorMap tm_s,
                      const __grid_constant__ CUtensorMap tm_z, const KernelParams<C> p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  Smem sm;
  sm.base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  sm.bar_full = sm.base + C::kBarOff;
  sm.bar_empty = sm.bar_full + C::STAGES * 8;
  sm.bar_order = sm.bar_empty + C::STAGES * 8;
  const Maps tm{&tm_a, &tm_w, &tm_d, &tm_a_tail, &tm_d_tail, &tm_s, &tm_z};
  const int tid = threadIdx.x;
  const int wg = tid / 128;
  const uint32_t crank = C::kCluster > 1 ? cluster_ctarank() : 0u;
  const int cn = (int)(crank % C::CN);
  const int cm = (int)(crank / C::CN);

  if (tid == 0) {
    for (int s = 0; s < C::STAGES; ++s) {
      // (the gather warps, grouped form with a row index: one arrival each besides the producer's)
      mbar_init(sm.bar_full + 8 * s, gathers_rows<C>(p) ? 1 + kGatherThreads : 1);
      mbar_init(sm.bar_empty + 8 * s, C::kEmptyCount);
    }
    // the order barriers: one arrival each for the K pair and the stream-K ring, a warpgroup's
    // threads for the pingpong turns
    const uint32_t order_count = (C::kPairOk && p.kpair) || (C::kStreamKRing && p.streamk) ? 1u : 128u;
    mbar_init(sm.bar_order, order_count);
    mbar_init(sm.bar_order + 8, order_count);
    fence_barrier_init();
  }
  if (C::kCluster > 1 || (C::kPairOk && p.kpair)) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  // Launched with programmatic stream serialization: the set-up above overlaps the previous kernel.
  // The grid is persistent (every CTA resident from the start), so letting the next grid launch at
  // once cannot starve this one: its CTAs take the room ours leave (or the second slot of an SM,
  // kCtasPerSm = 2), may read their own weights, and wait in their griddepcontrol.wait for this grid's
  // completion. With p.prefetch the producer issues the weight (scale, zero) copies of its first
  // stages before its wait and everything else waits; without it every thread waits first, then lets
  // the next grid launch.
  if (p.prefetch) {
    w4a16_griddep_launch_dependents();
  } else {
    w4a16_griddep_wait();
    w4a16_griddep_launch_dependents();
  }

  if constexpr (C::kGrouped) {
    // the unit table from the device offsets (the launch has no prefetch: every thread has waited)
    int *tab = grouped_table_ptr<C>();
    w4a16_grouped_table(grouped_of(p), C::TM, (p.n + C::TN - 1) / C::TN, tab, tab + C::kMaxExperts + 1,
                        tab + 2 * C::kMaxExperts + 1, tab + 3 * C::kMaxExperts + 1, blockIdx.x == 0);
  }
  const int cid = blockIdx.x / C::kCluster;
  const Walk walk0 = walk_begin<C>(p, cid);
  if (wg == 0) {
    setmaxnreg_dec<C::producer_regs(CHUNK)>();
    if (tid == 0) {
      producer_thread<C, CHUNK>(p, tm, sm, cn, cm, walk0);
    } else if (tid >= 32 && tid < 64 && p.streamk) {
      flag_warp<C>(p, sm, tid, cn, cm, crank, cid, walk0);
    } else if (tid >= 32 && gathers_rows<C>(p)) {
      gather_warps<C>(p, sm, tid - 32, walk0);
    }
    __syncwarp();
  } else {
    consumers<T, C, CHUNK>(p, tm, sm, tid, wg, crank, cn, cm, cid, walk0);
  }
  if (C::kCluster > 1) cluster_sync();
#endif
}

}  // namespace w4a16_sm90

#endif
