// sm90_epilogue.cuh - what the consumers do with a unit's fp32 accumulators once its mainloop ends:
//   K pair      rank 1 hands them to rank 0 through distributed shared memory; rank 0 adds them;
//   split-K     fp32 partials to the workspace (common/splitk.cuh's layout; the reduction follows);
//   stream-K    a unit that finishes a tile another cluster began publishes its partial (workspace
//               slot + flag); the cluster that began the tile adds the partials (the fixup);
//   the tile    alpha, bias, conversion, staged in shared memory and stored by TMA tensor stores
//               (TM >= 64) or 16-byte row stores; rows >= M (grouped form: past the unit's
//               expert, each row scaled by its router weight) and columns >= N are never stored.
// Every addition happens in a fixed order (K order), so a grid gives the same bits on every run.
#ifndef W4A16_SM90_EPILOGUE_CUH
#define W4A16_SM90_EPILOGUE_CUH

#include <stdint.h>

#include "common/cp_async.cuh"
#include "sm90/sm90_config.cuh"
#include "sm90/sm90_mainloop.cuh"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_schedule.cuh"

namespace w4a16_sm90 {

template <typename T, class C, bool CHUNK>
struct Epilogue {
  using Ops = DtypeOps<T>;
  static constexpr int kHalf = C::kPairPieces / 2;  // K pair, kPairHalves: the first half's pieces
  const Params &p;
  const Smem &sm;
  const Consumer &cs;
  const Maps &tm;
  const Unit &u;
  int cid;  // this CTA's cluster
  float (&acc)[C::R][C::TM / 2];
  // K pair: the stage of rank 0's ring where rank 1's accumulators (kPairHalves: their second half)
  // begin, h % STAGES with h rank 0's k-blocks; 0 without the K pair
  uint32_t ring0;
  bool pair_ring;  // rank 0 of a kPairHalves K pair: the tile's staging adds rank 1's halves
  bool sk_ring;    // stream-K, a tile this CTA began whose last partial came into the ring

  // adds a partial tile in fragment order from shared memory, this thread's pieces from `from` on
  // (nthr x 16 bytes apart): the K pair's rank 1 accumulators, a small tile's stream-K partials
  __device__ __forceinline__ void add_partial(uint32_t from) {
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 8; ++i) {
        const uint4 v = lds128(from + (uint32_t)((r * (C::TM / 8) + i) * cs.nthr) * 16u);
        acc[r][4 * i] += __uint_as_float(v.x);
        acc[r][4 * i + 1] += __uint_as_float(v.y);
        acc[r][4 * i + 2] += __uint_as_float(v.z);
        acc[r][4 * i + 3] += __uint_as_float(v.w);
      }
  }
  // K pair, kPairHalves: the offset in rank 0's ring of this thread's part of the second half's piece
  // jj (a piece is nthr x 16 bytes), from stage ring0 on around the ring
  __device__ __forceinline__ uint32_t pair_late(int jj) const {
    const uint32_t off = ring0 * (uint32_t)C::kStageBytes + (uint32_t)(jj * cs.nthr + cs.ltid) * 16u;
    return off < (uint32_t)(C::STAGES * C::kStageBytes) ? off : off - (uint32_t)(C::STAGES * C::kStageBytes);
  }
  // where the tile's box cb of TN / 64 is staged for the tensor store (pair_ring: in the stages after
  // the second half's)
  __device__ __forceinline__ uint32_t box_at(int cb) const {
    if (!pair_ring) return cs.epi + (uint32_t)(cb * (C::TM * 128));
    const uint32_t st_i = (ring0 + (uint32_t)(C::kPairLate + cb / C::kPairBoxes)) % C::STAGES;
    return sm.base + st_i * C::kStageBytes + (uint32_t)((cb % C::kPairBoxes) * (C::TM * 128));
  }

  // K pair: rank 1's accumulators go into rank 0's shared memory where rank 0 does not use it, in
  // fragment order, by st.async counted on rank 0's barrier: a stage its mainloop is done with (the one
  // its producer announced), or for kPairHalves the first half into its epilogue buffer at once and
  // the second into the ring stages its producer announced. Rank 0 adds them to its own (k-blocks
  // [0, h) then [h, k): the same bits on every run; kPairHalves: as its epilogue stages the tile),
  // tells rank 1 they are in (rank 1's barrier, phase 1: rank 1 may leave) and runs the epilogue.
  // Returns true on rank 1, which is then done with the unit.
  __device__ __forceinline__ bool kpair_handoff(uint32_t slot) {
    const uint32_t bar_free = sm.bar_order, bar_in = sm.bar_order + 8;
    if (blockIdx.x & 1u) {
      const uint32_t rbar = mapa_shared(bar_in, 0u);  // rank 0's
      if constexpr (C::kPairHalves) {
        const uint32_t repi = mapa_shared(cs.epi + (uint32_t)cs.ltid * 16u, 0u);
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i) {
            const int jp = r * (C::TM / 8) + i;
            if (jp < kHalf) st_async_v4_mapped(repi + (uint32_t)(jp * cs.nthr) * 16u, rbar, piece(r, i));
          }
        mbar_wait(bar_free, 0);
        const uint32_t rbase = mapa_shared(sm.base, 0u);
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i) {
            const int jp = r * (C::TM / 8) + i;
            if (jp >= kHalf) st_async_v4_mapped(rbase + pair_late(jp - kHalf), rbar, piece(r, i));
          }
      } else {
        mbar_wait(bar_free, 0);
        const uint32_t rslot = mapa_shared(slot, 0u);
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i)
            st_async_v4_mapped(rslot + (uint32_t)((r * (C::TM / 8) + i) * cs.nthr) * 16u, rbar, piece(r, i));
      }
      mbar_wait(bar_free, 1);
      return true;
    }
    mbar_wait(bar_in, 0);
    if constexpr (!C::kPairHalves) {
      add_partial(slot);
      if (cs.ltid == 0) mbar_arrive_cluster(bar_free, 1u);
    }
    return false;
  }
  __device__ __forceinline__ uint4 piece(int r, int i) const {
    return make_uint4(__float_as_uint(acc[r][4 * i]), __float_as_uint(acc[r][4 * i + 1]),
                      __float_as_uint(acc[r][4 * i + 2]), __float_as_uint(acc[r][4 * i + 3]));
  }

  // Split-K: fp32 partials straight from the accumulators; for a token row, lanes g = 0..7 write 8
  // consecutive floats (whole 32-byte sectors).
  __device__ __forceinline__ void store_splitk_partial() {
    const size_t step = (size_t)8 * p.n;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float *row = p.ws + ((size_t)u.z * p.m + u.m0 + 2 * cs.t + e) * p.n + u.n0 + cs.rowbase + cs.warp * 16 + cs.g;
      int m = u.m0 + 2 * cs.t + e;
#pragma unroll
      for (int i = 0; i < C::TM / 8; ++i, m += 8, row += step) {
        if (m < p.m) {
#pragma unroll
          for (int r = 0; r < C::R; ++r) {
            if (u.n0 + cs.rowbase + r * 64 + cs.warp * 16 >= p.n) continue;  // rows beyond N (tail)
            row[r * 64] = acc[r][4 * i + e];
            row[r * 64 + 8] = acc[r][4 * i + 2 + e];
          }
        }
      }
    }
  }

  // Stream-K, the end of a tile another cluster began: the accumulators go to this CTA's slot in
  // fragment order (16-byte stores, consecutive threads at consecutive addresses); the flag warp
  // releases the flag once every consumer has arrived.
  __device__ __forceinline__ void publish_streamk_partial() {
    float4 *slot = reinterpret_cast<float4 *>(p.ws) + (size_t)blockIdx.x * (C::TN * C::TM / 4);
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 8; ++i)
        slot[(r * (C::TM / 8) + i) * cs.nthr + cs.ltid] =
            make_float4(acc[r][4 * i], acc[r][4 * i + 1], acc[r][4 * i + 2], acc[r][4 * i + 3]);
    named_bar_arrive(kFlagBar + (C::kCoop ? 0u : (uint32_t)cs.c), cs.nthr + 32);
  }

  // Stream-K, a tile this unit began: add the partials of the clusters cid + 1 .. sk_last that finish
  // it, in that order (K order; with kStreamKRing sk_last's is in the ring, added as the epilogue
  // stages the tile). The flag warp has waited for (and cleared) their flags, most often during the
  // mainloop. Two partials a step (kFixupStep; both loads in flight before the adds, which keep the K
  // order) only where a partial is a few registers a thread, TM <= 32, and not for the one-CTA-per-SM
  // 16-token tiles: there ptxas spills and 128x16x256 runs 3-6 % slower at M = 16.
  static constexpr int kFixupStep = C::R * C::TM / 8 <= 4 && (C::TM >= 32 || C::kCtasPerSm == 2) ? 2 : 1;
  // The zero-point tiles of four consumer warpgroups (256x32x128, 104 registers a consumer thread) run
  // the loop over the partials in consumers() (sm90_kernel.cuh), in the unit loop's function: in a
  // function of the epilogue (streamk_fixup) the compiler computes the partials' addresses inside the
  // loop instead of before it, and ptxas then spills 20 bytes instead of 16 and schedules their
  // mainloop otherwise, 4 % slower at M = 32 (H100). Those of <= 16 tokens (full space only) keep
  // streamk_fixup, whose copies of the partials into the stage ring the loop there does not have.
  static constexpr bool kFixupInUnitLoop = C::kZeros && C::NC == 4 && C::TM > 16;
  // the last partial added from the workspace (kStreamKRing: the last comes through the ring)
  __device__ __forceinline__ int streamk_last_slot() const { return u.sk_last - (C::kStreamKRing ? 1 : 0); }
  // partial q's workspace slot (fragment order, as publish_streamk_partial stores it)
  __device__ __forceinline__ const float4 *streamk_slot(int q) const {
    return reinterpret_cast<const float4 *>(p.ws) + (size_t)(q * C::kCluster + cs.crank) * (C::TN * C::TM / 4);
  }
  // loads this thread's pieces of partial s0 (and s1 where two) into v0 (v1)
  template <int R1, int I1>
  __device__ __forceinline__ void load_fixup_pieces(const float4 *s0, const float4 *s1, bool two,
                                                    float4 (&v0)[C::R][C::TM / 8], float4 (&v1)[R1][I1]) const {
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 8; ++i) {
        v0[r][i] = __ldcg(s0 + (r * (C::TM / 8) + i) * cs.nthr + cs.ltid);
        if (two) v1[R1 > 1 ? r : 0][I1 > 1 ? i : 0] = __ldcg(s1 + (r * (C::TM / 8) + i) * cs.nthr + cs.ltid);
      }
  }
  // adds this thread's pieces of one or two partials (v1 where two), loaded by the caller
  template <int R1, int I1>
  __device__ __forceinline__ void add_fixup_pieces(const float4 (&v0)[C::R][C::TM / 8], const float4 (&v1)[R1][I1],
                                                   bool two) {
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 8; ++i) {
        acc[r][4 * i] += v0[r][i].x;
        acc[r][4 * i + 1] += v0[r][i].y;
        acc[r][4 * i + 2] += v0[r][i].z;
        acc[r][4 * i + 3] += v0[r][i].w;
        if (two) {
          const float4 w = v1[R1 > 1 ? r : 0][I1 > 1 ? i : 0];
          acc[r][4 * i] += w.x;
          acc[r][4 * i + 1] += w.y;
          acc[r][4 * i + 2] += w.z;
          acc[r][4 * i + 3] += w.w;
        }
      }
  }
  // The fixup (all but the zero-point tiles of four consumer warpgroups, kFixupInUnitLoop). The
  // cooperative tiles of <= 16 tokens first copy every partial at once into the stage ring (free: this
  // unit, the CTA's last, has read every stage, and both warpgroups are past the barrier above), each
  // thread the 16-byte pieces it adds (cp.async: no registers held, no other thread's data), then add
  // them in K order from there: one round trip to L2 instead of one a partial (H100: 128x16x256
  // 0.989-0.994x the time). Not in the scale-chunk instance (there it makes ptxas spill).
  __device__ __forceinline__ void streamk_fixup() {
    named_bar_sync(kOwnBar + (C::kCoop ? 0u : (uint32_t)cs.c), cs.nthr + 32);
    constexpr int kStep = kFixupStep;
    const int q_end = streamk_last_slot();
    constexpr int kPart = C::TN * C::TM * 4;
    const bool cpa = C::kCoop && C::TM <= 16 && !CHUNK && (q_end - cid) * kPart <= C::STAGES * C::kStageBytes;
    if (cpa) {
      for (int q = cid + 1; q <= q_end; ++q) {
        const float4 *src = streamk_slot(q) + cs.ltid;
        const uint32_t dst = sm.base + (uint32_t)((q - cid - 1) * kPart) + (uint32_t)cs.ltid * 16u;
#pragma unroll
        for (int j = 0; j < C::R * (C::TM / 8); ++j)
          w4a16_cp_async16(dst + (uint32_t)(j * cs.nthr) * 16u, src + j * cs.nthr);
      }
      w4a16_cp_async_commit();
      w4a16_cp_async_wait<0>();
      for (int q = cid + 1; q <= q_end; ++q)
        add_partial(sm.base + (uint32_t)((q - cid - 1) * kPart) + (uint32_t)cs.ltid * 16u);
    }
    for (int q = cpa ? q_end + 1 : cid + 1; q <= q_end; q += kStep) {
      const bool two = kStep == 2 && q + 1 <= q_end;
      const float4 *s0 = streamk_slot(q);
      const float4 *s1 = streamk_slot(two ? q + 1 : q);
      float4 v0[C::R][C::TM / 8], v1[kStep == 2 ? C::R : 1][kStep == 2 ? C::TM / 8 : 1];
      load_fixup_pieces(s0, s1, two, v0, v1);
      add_fixup_pieces(v0, v1, two);
    }
  }

  // A thread's accumulators of fragment (r, i) with the partial added where one is in shared memory
  // (pair_ring, sk_ring), scaled and biased.
  __device__ __forceinline__ void out4(int r, int i, float b0, float b1, float (&a)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e) a[e] = acc[r][4 * i + e];
    const int jp = r * (C::TM / 8) + i;
    if (sk_ring || pair_ring) {
      const uint4 v = lds128(!pair_ring   ? sm.base + (uint32_t)((jp * cs.nthr + cs.ltid) * 16)
                             : jp < kHalf ? cs.epi + (uint32_t)((jp * cs.nthr + cs.ltid) * 16)
                                          : sm.base + pair_late(jp - kHalf));
      a[0] += __uint_as_float(v.x);
      a[1] += __uint_as_float(v.y);
      a[2] += __uint_as_float(v.z);
      a[3] += __uint_as_float(v.w);
    }
    a[0] = a[0] * p.alpha + b0;
    a[1] = a[1] * p.alpha + b0;
    a[2] = a[2] * p.alpha + b1;
    a[3] = a[3] * p.alpha + b1;
  }

  // The output tile: staged in shared memory, then stored by TMA tensor stores (kTmaStore: one thread
  // issues them and the warpgroups go on with the next unit) or by 16-byte row stores.
  __device__ __forceinline__ void store_tile() {
    const uint16_t *bias = (const uint16_t *)p.bias;
    if (C::kTmaStore) {
      // the buffer is free once the previous tile's tensor store has read it
      if (cs.ltid == 0) bulk_wait_read0();
      named_bar_sync(cs.epi_bar, cs.nthr);
    }
    if (sk_ring) mbar_wait(sm.bar_order + 8, 0);
    // the padded staging rows (no tensor store) from token row 2 t's, for the tiles of <= 16 tokens:
    // their K-pair instance (128x16x256) then compiles without a spill and runs 2 % faster; with 32
    // tokens the same form costs 128x32x256 1 % (H100), so those keep the plain one
    const uint32_t epi_t = cs.epi + 2 * cs.t * C::kEpiStride * 2;
    // grouped form: the scales (the router's weights) of this thread's token rows 8 i + 2 t + e of the
    // unit, loaded kRsBlocks token blocks at a time ahead of their staging below (whose shared stores
    // would otherwise order each load after the previous one: a round trip to memory per token block;
    // all TM / 8 at once spill in the 256-token tile); 0 past the expert's rows
    constexpr int kRsBlocks = C::TM / 8 < 16 ? C::TM / 8 : 16;
    float rsv[kRsBlocks][2];
    auto load_row_scales = [&](int i0) {
      const float *rs = grouped_of(p).row_scale;
#pragma unroll
      for (int ii = 0; ii < kRsBlocks; ++ii)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int m = u.m0 + 8 * (i0 + ii) + 2 * cs.t + e;
          rsv[ii][e] = !rs ? 1.f : m < u.m_end ? __ldg(rs + m) : 0.f;
        }
    };
#pragma unroll
    for (int r = 0; r < C::R; ++r) {
      const int nl = cs.rowbase + r * 64 + cs.warp * 16 + cs.g;
      const bool n_in = u.n0 + nl < p.n;  // its 16-row block is inside N (else a tail's, never stored)
      const float b0 = bias && n_in ? Ops::to_float(bias[u.n0 + nl]) : 0.f;
      const float b1 = bias && n_in ? Ops::to_float(bias[u.n0 + nl + 8]) : 0.f;
      if constexpr (C::kTmaStore) {
        // TMA layout (128-byte swizzle): box n / 64, token row ml, 16-byte chunk (n % 64 / 8) ^ (ml %
        // 8). Token blocks i, i + 1 of the warp's 16 rows by one transposed stmatrix: matrix j = (rows
        // + 8 (j % 2), tokens 8 (i + j / 2) ..), this thread's register j the pair of tokens 2 t, 2 t +
        // 1 at row g (the accumulator layout); lane l gives token row l % 8 of matrix l / 8, whose 8
        // rows of N are one 16-byte chunk (H100: the end of a 128x256 tile 2.4 us against 2.9 with a
        // 2-byte store an element)
        const int q = cs.lane & 7, jm = cs.lane >> 3;
        const int nj = cs.rowbase + r * 64 + cs.warp * 16 + 8 * (jm & 1);
        const uint32_t rowa = box_at(nj >> 6) + (uint32_t)(q * 128 + ((((nj & 63) >> 3) ^ q) << 4));
#pragma unroll
        for (int i = 0; i < C::TM / 8; i += 2) {
          float a0[4], a1[4];
          out4(r, i, b0, b1, a0);
          out4(r, i + 1, b0, b1, a1);
          stmatrix_x4_trans(rowa + (uint32_t)((8 * i + 8 * (jm >> 1)) * 128), Ops::pack2(a0[0], a0[1]),
                            Ops::pack2(a0[2], a0[3]), Ops::pack2(a1[0], a1[1]), Ops::pack2(a1[2], a1[3]));
        }
      } else {
        // padded rows: o0[e] token row 2 t + e (+ 8 i) at row nl, o1[e] at row nl + 8
        uint32_t o0[2], o1[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          o0[e] = C::TM <= 16 ? epi_t + (e * C::kEpiStride + nl) * 2 : cs.epi + ((2 * cs.t + e) * C::kEpiStride + nl) * 2;
          o1[e] = o0[e] + 16;
        }
#pragma unroll
        for (int i = 0; i < C::TM / 8; ++i) {
          float a[4];
          out4(r, i, b0, b1, a);
          if constexpr (C::kGrouped) {
            if (i % kRsBlocks == 0) load_row_scales(i);
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              a[e] *= rsv[i % kRsBlocks][e];
              a[2 + e] *= rsv[i % kRsBlocks][e];
            }
          }
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const uint32_t step = 8 * C::kEpiStride * 2 * i;
            sts16(o0[e] + step, Ops::from_float(a[e]));
            sts16(o1[e] + step, Ops::from_float(a[2 + e]));
          }
        }
      }
    }
    if (C::kTmaStore) {
      fence_proxy_async_shared();
      named_bar_sync(cs.epi_bar, cs.nthr);
      if (pair_ring && cs.ltid == 0) mbar_arrive_cluster(sm.bar_order, 1u);  // read: rank 1 may leave
      if (cs.ltid == 0) {
        const CUtensorMap *map = is_tail_tile<C>(p, u.m0) ? tm.d_tail : tm.d;
#pragma unroll
        for (int cb = 0; cb < C::TN / 64; ++cb) tma_store_2d(map, box_at(cb), u.n0 + 64 * cb, u.m0);
        bulk_commit();
      }
      return;
    }
    named_bar_sync(cs.epi_bar, cs.nthr);
    const int m_end = C::kGrouped ? u.m_end : p.m;
    const int rows = m_end - u.m0 < C::TM ? m_end - u.m0 : C::TM;
    constexpr int kChunks = C::TN / 8;
    char *dst = (char *)p.d;
    for (int idx = cs.ltid; idx < rows * kChunks; idx += cs.nthr) {
      const int ml = idx / kChunks;
      const int ch = idx - ml * kChunks;
      if (u.n0 + ch * 8 >= p.n) continue;  // columns beyond N (tail)
      const uint4 v = lds128(cs.epi + (ml * C::kEpiStride + ch * 8) * 2);
      *reinterpret_cast<uint4 *>(dst + (((size_t)(u.m0 + ml) * p.ldd) + u.n0 + ch * 8) * 2) = v;
    }
    named_bar_sync(cs.epi_bar, cs.nthr);
  }

  // The whole epilogue of the unit (kFixupInUnitLoop: all but the fixup's loop over the partials in
  // the workspace, which is the caller's; nothing to store where it returns false).
  __device__ __forceinline__ bool run() {
    if (C::kPairOk && p.kpair) {
      const uint32_t h = (uint32_t)kpair_rank0_kblocks(p, (p.k + C::TK - 1) / C::TK);  // rank 0's k-blocks
      ring0 = h % C::STAGES;
      if (kpair_handoff(sm.base + ring0 * C::kStageBytes + (uint32_t)cs.ltid * 16u)) return false;
    }
    pair_ring = C::kPairHalves && C::kPairOk && p.kpair;
    sk_ring = C::kStreamKRing && p.streamk && !u.contrib && u.sk_last >= 0;
    if (p.split_k > 1) {
      store_splitk_partial();
    } else if (u.contrib) {
      publish_streamk_partial();
    } else {
      if constexpr (kFixupInUnitLoop) return true;
      if (u.sk_last >= 0) streamk_fixup();
      store_tile();
    }
    return false;
  }
};

}  // namespace w4a16_sm90

#endif
