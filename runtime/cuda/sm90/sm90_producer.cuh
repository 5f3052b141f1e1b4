// sm90_producer.cuh - warpgroup 0 of the Hopper kernel: the producer thread, which issues every copy
// into the stage ring (activations, packed weights, scale and zero rows), and the flag warp, which
// handles stream-K's flags off the consumers' path.
//
// A stage of ring position pos (stage pos % STAGES) takes k-block kb of the CTA's current unit: one
// arrive.expect_tx of the stage's bytes on its "full" barrier, then the copies that complete them.
// Before that the stage's use STAGES positions back must be released ("empty" barrier). With
// Params::prefetch the first stages' weight copies go out before griddepcontrol.wait (w4a16.h,
// "Ordering": the kernel before does not write W, scales, zeros), their activations after it.
#ifndef W4A16_SM90_PRODUCER_CUH
#define W4A16_SM90_PRODUCER_CUH

#include <stdint.h>

#include "common/cp_async.cuh"
#include "common/pdl.cuh"
#include "sm90/sm90_config.cuh"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_schedule.cuh"

namespace w4a16_sm90 {

// Wait until the stage of ring position pq is free: its use STAGES positions back released (on the
// first pass, a fresh barrier's phase "-1", at once). A parity wait is only valid while the barrier is
// at most one phase short of the awaited one: the producer's next position, or (K pair, stream-K
// ring) positions pos .. pos + STAGES - 1 once every load up to pos - 1 is issued.
template <class C>
static __device__ __forceinline__ void wait_stage_free(const Smem &sm, uint32_t pq) {
  mbar_wait(sm.bar_empty + 8 * (pq % C::STAGES), ((pq / C::STAGES) & 1u) ^ 1u);
}

// The producer thread's copies (CHUNK: scale rows by chunks, Params::scale_map bit 1).
template <class C, bool CHUNK>
struct Producer {
  const Params &p;
  const Maps &tm;
  const Smem &sm;
  int cn, cm;          // this CTA's place in the cluster (along N, along M)
  uint16_t mask_a;     // the CTAs that share this CTA's activation slice (multicast)
  uint16_t mask_w;     // ... its weight slice
  int scale_rows;      // scale (zero) rows a k-block reads: TK / group for groups below TK, else 1
  const char *scales;
  const char *zeros;

  // Scale rows by chunks (cooperative schedule only, whose consumers release the stages in position
  // order): a chunk's rows go into the stage of its first k-block; before other rows go to the stage
  // of position pos, the chunk whose rows the stage took at pos - STAGES (if one began there) must be
  // released, up to pos - STAGES + kScaleChunk - 1, beyond what the wait for pos - STAGES covers.
  // Within a unit no chunk begins STAGES k-blocks after another (kScaleChunk does not divide STAGES),
  // so only the first STAGES k-blocks of a unit wait (conservatively).
  __device__ __forceinline__ void wait_scale_readers(uint32_t pos) const {
    if (pos >= (uint32_t)C::STAGES) {
      const uint32_t l = pos - C::STAGES + C::kScaleChunk - 1;
      mbar_wait(sm.bar_empty + 8 * (l % C::STAGES), (l / C::STAGES) & 1u);
    }
  }
  // k-block kb of a unit at position pos: whether it brings scale rows (a chunk's first k-block)
  __device__ __forceinline__ bool scale_step(int kb, uint32_t pos) const {
    if (!CHUNK) return true;
    if (kb % C::kScaleChunk != 0) return false;
    if (kb < C::STAGES) wait_scale_readers(pos);
    return true;
  }
  bool gather;          // grouped form with a row index: the gather warps bring the activations
  // the bytes of a k-block of unit u (its activation rows, all CN slices, unless gathered; scale rows
  // where it brings them)
  __device__ __forceinline__ uint32_t tx_of(const Unit &u, bool srows) const {
    const int act_rows = C::kGrouped ? narrow_tile<C>(u) : is_tail_tile<C>(p, u.m0) ? p.tail_rows : C::TM / C::CN;
    return (C::kGrouped && gather ? 0u : (uint32_t)(C::KT * 128 * C::CN * act_rows)) +
           (uint32_t)C::kWBytes +
           (srows ? (uint32_t)((CHUNK ? p.scale_map >> 8 : scale_rows) * C::kRowBytes * (C::kZeros ? 2 : 1)) : 0u);
  }
  // the activation copies of k-block kb of unit u into stage st (barrier fb)
  __device__ __forceinline__ void load_act(const Unit &u, int kb, uint32_t st, uint32_t fb) const {
    if (C::kGrouped && gather) return;
    const int kg = (u.kb0 + kb) * C::TK;
    if constexpr (C::kNarrowTail) {
      // a narrow unit: its rows by 64-row boxes (the grouped launch's tail map), at their places in
      // the TM-row chunks
      const int rows = narrow_tile<C>(u);
      if (rows < C::TM) {
#pragma unroll
        for (int h = 0; h < C::KT; ++h)
          for (int j = 0; j < rows; j += 64)
            tma_load_2d(st + (uint32_t)((h * C::TM + j) * 128), tm.a_tail, fb, kg + 64 * h, u.m0 + j);
        return;
      }
    }
    const CUtensorMap *map = is_tail_tile<C>(p, u.m0) ? tm.a_tail : tm.a;
    if (C::CN == 1 && C::KT > 1 && (is_tail_tile<C>(p, u.m0) ? p.act_3d_tail : p.act_3d)) {
      tma_load_3d(st, map, fb, 0, u.m0, kg / 64);
      return;
    }
#pragma unroll
    for (int h = 0; h < C::KT; ++h) {
      if (C::CN == 1) {
        tma_load_2d(st + h * C::TM * 128, map, fb, kg + 64 * h, u.m0);
      } else {
        const int rows = C::TM / C::CN;
        tma_load_2d_multicast(st + h * C::TM * 128 + cn * rows * 128, map, fb, kg + 64 * h, u.m0 + cn * rows,
                              mask_a);
      }
    }
  }
  // ... and of its packed weights, scales (zeros)
  __device__ __forceinline__ void load_w(const Unit &u, int kb, uint32_t st, uint32_t fb, bool srows) const {
    const int kg = (u.kb0 + kb) * C::TK;
    const int wk = (u.kb0 + kb) * C::KT * 128;
    // grouped form: expert e's row blocks and group rows follow those of the experts before it
    const int wrow = C::kGrouped ? (u.e * p.n + u.n0) / 16 : u.n0 / 16;
    if (C::kW3d) {
      tma_load_3d(st + C::kWOff, tm.w, fb, 0, (u.kb0 + kb) * C::KT, wrow);
    } else if (C::CM == 1) {
      tma_load_2d(st + C::kWOff, tm.w, fb, wk, wrow);
    } else {
      const int rb = C::TN / 16 / C::CM;
      tma_load_2d_multicast(st + C::kWOff + cm * rb * C::KT * 512, tm.w, fb, wk, u.n0 / 16 + cm * rb, mask_w);
    }
    const int g0 = kg / p.group + (C::kGrouped ? u.e * (p.k / p.group) : 0);
    if (p.scale_map) {
      if (!srows) return;  // the chunk's rows came with its first k-block
      tma_load_2d(st + C::kSOff, tm.s, fb, u.n0, g0);
      if (C::kZeros) tma_load_2d(st + C::kZOff, tm.z, fb, u.n0, g0);
      return;
    }
    for (int r = 0; r < scale_rows; ++r) {
      const size_t off = ((size_t)(g0 + r) * p.n + u.n0) * 2;
      bulk_load(st + C::kSOff + r * C::kRowBytes, scales + off, C::kRowBytes, fb);
      if (C::kZeros) bulk_load(st + C::kZOff + r * C::kRowBytes, zeros + off, C::kRowBytes, fb);
    }
  }

  // Every copy of the CTA's units, in walk order; returns the ring positions used (k-blocks).
  __device__ __forceinline__ uint32_t run(const Walk &walk0) const {
    // Prefetch: the first npre stages (positions 0..npre-1 = k-blocks 0..npre-1 of this CTA's first
    // unit; every stage is free) get their expect_tx and weight copies before griddepcontrol.wait,
    // their activation copies after it. The consumers wait for the stage's whole byte count, so they
    // see no stage before its activations have landed.
    int npre = 0;
    Unit u_first;
    Walk wf = walk0;
    const bool any = walk_next<C>(p, cn, cm, wf, u_first);
    if (p.prefetch && any) {
      const Unit &u = u_first;
      int cap = p.prefetch > 0 ? p.prefetch : u.kn / -p.prefetch;
      if (p.prefetch < 0 && cap < 2) cap = 2;
      npre = u.kn < C::STAGES ? u.kn : C::STAGES;
      if (npre > cap) npre = cap;
      for (int kb = 0; kb < npre; ++kb) {
        const bool srows = !p.scale_map || scale_step(kb, (uint32_t)kb);
        mbar_arrive_expect_tx(sm.bar_full + 8 * kb, tx_of(u, srows));
        load_w(u, kb, sm.base + kb * C::kStageBytes, sm.bar_full + 8 * kb, srows);
      }
    }
    w4a16_griddep_wait();
    if (npre > 0) {
      for (int kb = 0; kb < npre; ++kb) load_act(u_first, kb, sm.base + kb * C::kStageBytes, sm.bar_full + 8 * kb);
    }
    uint32_t pos = 0;
    Walk w = walk0;
    Unit u;
    while (walk_next<C>(p, cn, cm, w, u)) {
      for (int kb = 0; kb < u.kn; ++kb, ++pos) {
        if (pos < (uint32_t)npre) continue;  // issued above
        const uint32_t s = pos % C::STAGES;
        wait_stage_free<C>(sm, pos);
        const uint32_t st = sm.base + s * C::kStageBytes;
        const uint32_t fb = sm.bar_full + 8 * s;
        const bool srows = !p.scale_map || scale_step(kb, pos);
        mbar_arrive_expect_tx(fb, tx_of(u, srows));
        load_act(u, kb, st, fb);
        load_w(u, kb, st, fb, srows);
      }
    }
    return pos;
  }

  // After the last copy. Stream-K ring: every load is issued, so that the flag warp's waits for the
  // stages' release are one phase ahead. K pair, rank 0: the stage of position pos (= its k-blocks) is
  // free for good once its last use, STAGES positions back, is released, a few k-blocks before the
  // mainloop ends: expect rank 1's accumulators there and tell rank 1 (its barrier, phase 0); with
  // kPairHalves the kPairLate stages of the second half, the first to be free for good (positions
  // pos - STAGES .., each free once that use is released).
  __device__ __forceinline__ void finish(uint32_t pos) const {
    if (C::kStreamKRing && p.streamk) mbar_arrive_local(sm.bar_order);
    if (C::kPairOk && p.kpair && (blockIdx.x & 1u) == 0) {
      for (int q = 0; q < (C::kPairHalves ? C::kPairLate : 1); ++q) wait_stage_free<C>(sm, pos + (uint32_t)q);
      if (CHUNK) wait_scale_readers(pos);  // its scale rows may serve k-blocks after pos - STAGES
      mbar_arrive_expect_tx(sm.bar_order + 8, (uint32_t)(C::TN * C::TM * 4));
      mbar_arrive_cluster(sm.bar_order, 1u);
    }
  }
};

// The producer thread (thread 0 of warpgroup 0).
template <class C, bool CHUNK>
static __device__ __forceinline__ void producer_thread(const Params &p, const Maps &tm, const Smem &sm, int cn,
                                                       int cm, const Walk &walk0) {
  tma_prefetch_desc(tm.a);
  tma_prefetch_desc(tm.w);
  if (p.scale_map) tma_prefetch_desc(tm.s);
  if (p.scale_map && C::kZeros) tma_prefetch_desc(tm.z);
  if (p.tail_rows != C::TM / C::CN) tma_prefetch_desc(tm.a_tail);
  const uint16_t mask_a = (uint16_t)(((1u << C::CN) - 1u) << (cm * C::CN));
  uint16_t mask_w = 0;
#pragma unroll
  for (int y = 0; y < C::CM; ++y) mask_w |= (uint16_t)(1u << (y * C::CN + cn));
  const Producer<C, CHUNK> pr{p,      tm,
                              sm,     cn,
                              cm,     mask_a,
                              mask_w, p.group < C::TK ? C::TK / p.group : 1,
                              (const char *)p.scales, (const char *)p.zeros,
                              gathers_rows<C>(p)};
  pr.finish(pr.run(walk0));
}

// The gather warps (warps 1 to 3 of warpgroup 0; the grouped form with a row index): the activation
// rows of every stage, gathered through the row index by 16-byte cp.async copies into the layout the
// activation map would give (box h of 64 k at h x TM x 128 bytes, row r at r x 128, its 16-byte chunk
// c at (c ^ r % 8) x 16: the 128-byte swizzle). At each unit's start the warps turn its TM row
// indices into row addresses in shared memory (after Cfg::kTableInts of the table; null for a row
// past the unit's expert or an index out of range) between two barriers of their own (kGatherBar).
// Thread gt (0..95) copies chunk gt % 8 of rows gt / 8, + 12, ...; a null row and k past K read zeros.
// Outside a K tail a row's copies of the k-block's 64-k boxes go at immediate offsets from one
// address (a null row's: A's first bytes, of which zero are read), about a quarter fewer
// instructions a row than a per-box bound check, and four rows' addresses are formed before their
// copies, each in registers of its own: a copy no longer waits for the one before it to have read
// the address registers it reuses (the stall ncu reported as L1TEX scoreboard waits). The producer
// warpgroup of the grouped form keeps 56 registers for them (Cfg::producer_regs; the consumers'
// share stays 224).
// (Three warps: H100, gate_up at T = 4096 0.87-0.95x the time with two.)
// Each thread's copies of a stage arrive on the stage's full barrier when they complete
// (cp.async.mbarrier.arrive.noinc: the barrier counts 1 + kGatherThreads arrivals), so the warps run
// up to STAGES stages ahead without waiting; the consumers, after their wait on that barrier, order
// the copies (generic proxy) before their wgmma reads (async proxy) with fence.proxy.async
// (sm90_mainloop.cuh, stage_in). H200: 0.77-0.83x the time of waiting for each stage's copies and
// announcing them from the thread.
constexpr int kGatherThreads = 96;
template <class C>
static __device__ __forceinline__ void gather_warps(const Params &p, const Smem &sm, int gt, const Walk &walk0) {
  const w4a16_grouped_launch_params &g = grouped_of(p);
  constexpr int kRowsPerPass = kGatherThreads / 8;
  constexpr int kPasses = (C::TM + kRowsPerPass - 1) / kRowsPerPass;
  const int c = gt & 7, rg = gt >> 3;
  const char *a = static_cast<const char *>(g.a);
  const char **rows = reinterpret_cast<const char **>(grouped_table_ptr<C>() + C::kTableInts);
  uint32_t pos = 0;
  Walk w = walk0;
  Unit u;
  while (walk_next<C>(p, 0, 0, w, u)) {
    named_bar_sync(kGatherBar, kGatherThreads);  // every read of the previous unit's rows is done
    const int unit_rows = narrow_tile<C>(u);  // the rows the consumers' wgmmas read
    for (int r = gt; r < C::TM; r += kGatherThreads) {
      const int m = u.m0 + r;
      const int t = m < u.m_end ? __ldg(g.row_index + m) : -1;
      rows[r] = t >= 0 && t < g.a_rows ? a + (size_t)t * (size_t)g.lda * 2 : nullptr;
    }
    named_bar_sync(kGatherBar, kGatherThreads);
    for (int kb = 0; kb < u.kn; ++kb, ++pos) {
      const uint32_t s = pos % C::STAGES;
      wait_stage_free<C>(sm, pos);
      const uint32_t st = sm.base + s * C::kStageBytes;
      const int kg = (u.kb0 + kb) * C::TK;
      const int koff = kg * 2 + 16 * c;  // this thread's chunk of the k-block, in bytes
      // every 64-k box of the k-block inside K (all but a K tail's): the boxes' copies of a row then
      // go at immediate offsets from one address (a null row: A's first bytes, zero bytes read)
      if (kg + 64 * (C::KT - 1) < g.k) {
        // four rows at a time: their addresses first, then their copies (distinct registers, so no
        // copy waits for the previous one to have read its address)
        for (int j0 = 0; j0 < kPasses; j0 += 4) {
          const char *base[4];
          bool row_ok[4], live[4];
          uint32_t d[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int r = rg + kRowsPerPass * (j0 + q);
            live[q] = j0 + q < kPasses && r < unit_rows;
            const char *src = live[q] ? rows[r] : nullptr;
            row_ok[q] = src != nullptr;
            base[q] = row_ok[q] ? src + koff : a;
            d[q] = st + (uint32_t)r * 128u + ((uint32_t)(c ^ (r & 7)) << 4);
          }
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (live[q]) {
#pragma unroll
              for (int h = 0; h < C::KT; ++h)
                w4a16_cp_async16_zfill(d[q] + (uint32_t)(h * C::TM * 128), base[q] + 128 * h, row_ok[q]);
            }
        }
      } else {
        for (int j = 0; j < kPasses; ++j) {
          const int r = rg + kRowsPerPass * j;
          if (r >= unit_rows) break;
          const char *src = rows[r];
          const uint32_t d = st + (uint32_t)r * 128u + ((uint32_t)(c ^ (r & 7)) << 4);
#pragma unroll
          for (int h = 0; h < C::KT; ++h) {
            const bool ok = src != nullptr && kg + 64 * h < g.k;
            w4a16_cp_async16_zfill(d + (uint32_t)(h * C::TM * 128), ok ? src + koff + 128 * h : a, ok);
          }
        }
      }
      w4a16_cp_async_arrive_noinc(sm.bar_full + 8 * s);
    }
  }
  w4a16_cp_async_wait_all();  // (no copy outlives its thread)
}

// The flag warp (warp 1 of warpgroup 0, stream-K launches): the flags of this CTA's stream-K units,
// off the consumers' path. A partial the consumers publish: they store it and arrive on named barrier
// kFlagBar (+ c: pingpong warpgroup c, units j with j % 2 = c), this warp waits there and one lane
// releases the flag (st.release.gpu: cumulative over the stores the barrier ordered before it), so the
// consumers go on to their next unit at once instead of waiting for the release's memory barrier. A
// tile this CTA began: lane q waits for the flag of cluster cid + 1 + q (acquire) and clears it (a
// graph replay reuses the token; only this CTA reads it), and the warp arrives on kOwnBar (+ c), where
// the consumers wait before reading the partials: the flags' round trips run during the consumers'
// mainloop, not after it. With Cfg::kStreamKRing, lane 0 then brings the last contributor's partial
// into the ring.
template <class C>
static __device__ __forceinline__ void flag_warp(const Params &p, const Smem &sm, int tid, int cn, int cm,
                                                 uint32_t crank, int cid, const Walk &walk0) {
  w4a16_griddep_wait();  // flags are this grid's only after the previous one completed
  const uint32_t nthr_bar = (C::kCoop ? 128 * C::NC : 128) + 32;
  const int lane = tid & 31;
  Walk w = walk0;
  Unit u;
  uint32_t pos = 0;  // (kStreamKRing) this CTA's k-blocks so far, as the producer counts them
  for (int j = 0; walk_next<C>(p, cn, cm, w, u); ++j) {
    const uint32_t cw = C::kCoop ? 0u : (uint32_t)(j & 1);
    pos += (uint32_t)u.kn;
    if (u.contrib) {
      named_bar_sync(kFlagBar + cw, nthr_bar);
      if (lane == 0) st_release_gpu(p.flags + blockIdx.x, p.token);
    } else if (u.sk_last >= 0) {
      // (kStreamKRing: lanes 1.. wait for the flags of all but the last contributor, whose pieces lie
      // inside the tile and finish with this CTA; then lane 0 brings the last one's partial into the
      // ring while the consumers read the others')
      const int first = C::kStreamKRing ? 1 : 0;
      for (int q = lane - first; q >= 0 && q < u.sk_last - cid - first; q += 32 - first) {
        uint32_t *f = p.flags + (cid + 1 + q) * C::kCluster + crank;
        while (ld_acquire_gpu(f) != p.token) __nanosleep(32);
        *f = 0u;
      }
      __syncwarp();
      named_bar_arrive(kOwnBar + cw, nthr_bar);
      if (C::kStreamKRing && lane == 0) {
        // The partial of the cluster that finishes the tile (sk_last: its piece was its first unit)
        // into the ring from stage 0, each stage's part once the stage is free for good (its last use,
        // STAGES positions back, released), in the order the stages free. This unit is the CTA's last:
        // once the producer has issued every load (bar_order), each wait is one phase ahead, as a
        // parity wait must be. The contributor's plain stores, acquired, are ordered before the
        // copies' reads (proxy fence).
        constexpr uint32_t kP = (uint32_t)(C::TN * C::TM * 4);
        uint32_t *f = p.flags + u.sk_last * C::kCluster + crank;
        while (ld_acquire_gpu(f) != p.token) __nanosleep(32);
        *f = 0u;
        fence_proxy_async_global();
        const char *src = reinterpret_cast<const char *>(p.ws) + (size_t)(u.sk_last * C::kCluster + crank) * kP;
        mbar_arrive_expect_tx(sm.bar_order + 8, kP);
        mbar_wait(sm.bar_order, 0);
        for (int q = 0; q < C::STAGES; ++q) {
          const uint32_t pq = pos + (uint32_t)q, sq = pq % C::STAGES;
          wait_stage_free<C>(sm, pq);
          if (sq * C::kStageBytes < kP) {
            const uint32_t off = sq * C::kStageBytes, rest = kP - off;
            bulk_load(sm.base + off, src + off, rest < (uint32_t)C::kStageBytes ? rest : (uint32_t)C::kStageBytes,
                      sm.bar_order + 8);
          }
        }
      }
    }
  }
}

}  // namespace w4a16_sm90

#endif
