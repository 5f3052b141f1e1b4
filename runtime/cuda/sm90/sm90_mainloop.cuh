// sm90_mainloop.cuh - the consumers' mainloop of the Hopper kernel: for each k-block of a unit, wait
// for its stage, read the packed weight fragments (one 16-byte load per lane per 16x64 block,
// docs/LAYOUT.md) and the scale (zero) rows, convert int4 -> fp16/bf16 in registers
// (common/dequant.cuh), apply the group scale (and zero) and issue wgmma with A from registers and B
// (the activations) from shared memory by descriptor; release each stage once its wgmmas are done.
//
// Three orders of a k-block's conversion against the wgmmas (Cfg::overlap_in, halves_in):
//   overlap  two fragment buffers: block kb converts while block kb - 1's wgmmas are in flight;
//   halves   tile_k 256 without room for two buffers: each half of the block waits only for the
//            same half of the previous block (two wgmma groups a block);
//   serial   the previous block's wgmmas drain before the conversion.
// The post-scaled mainloop (Cfg::kPostScaled) replaces the pre-scaled one for scale-only groups of at
// least TK. Per-column zero points (one group row): a warp whose rows' offsets -z / s are all
// integers converts q - zq exactly and scales its accumulators at the end of the unit
// (Mainloop::pcol_fast). With Cfg::kNarrowTail a unit's wgmmas take N = its token width
// (Mainloop::width: TM, or a narrow unit's 64 or 128) and write the first width / 2 accumulators of
// a row block. The width is chosen per wgmma group by a uniform branch around its fence, wgmmas and
// commit, all three inside each branch: with the fence or the commit outside it ptxas injects
// warpgroup.arrive (C7519), and a mainloop of its own per width makes it serialize every wgmma of
// the kernel (C7512).
#ifndef W4A16_SM90_MAINLOOP_CUH
#define W4A16_SM90_MAINLOOP_CUH

#include <stdint.h>

#include <type_traits>

#include "sm90/sm90_config.cuh"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_wgmma.cuh"

namespace w4a16_sm90 {

// A consumer thread's place in the CTA.
struct Consumer {
  int c;             // consumer warpgroup (0 .. NC - 1)
  int warp;          // warp within the warpgroup
  int lane, g, t;    // lane; its accumulator row g = lane / 4 and token pair t = lane % 4
  int rowbase;       // the warpgroup's first row of N in the tile (cooperative: c x kWgRows)
  int nthr;          // threads that share a tile (cooperative: every consumer; pingpong: 128)
  int ltid;          // this thread's index among them
  uint32_t epi_bar;  // the named barrier of those threads' epilogue
  uint32_t epi;      // their epilogue staging buffer
  uint32_t crank;    // the CTA's rank in its cluster
  bool small_group;  // groups below TK: a k-block reads TK / group scale rows
};

// Free a stage: every thread that read it arrives locally; lane 0 of each warp arrives on the other
// CTAs of the cluster after the warp's reads (__syncwarp).
template <class C>
static __device__ __forceinline__ void release_stage(const Smem &sm, const Consumer &cs, uint32_t st_idx) {
  mbar_arrive_local(sm.bar_empty + 8 * st_idx);
  if (C::kCluster > 1) {
    __syncwarp();
    if (cs.lane == 0) {
#pragma unroll
      for (int q = 0; q < C::kCluster; ++q)
        if (q != (int)cs.crank) mbar_arrive_cluster(sm.bar_empty + 8 * st_idx, q);
    }
  }
}

// The mainloop of one unit (kn k-blocks from ring position pos0) into acc.
template <typename T, class C, bool CHUNK>
struct Mainloop {
  static constexpr bool kOverlap = C::overlap_in(CHUNK), kHalves = C::halves_in(CHUNK);
  using Ops = DtypeOps<T>;
  const Params &p;
  const Smem &sm;
  const Consumer &cs;
  uint32_t pos0;
  // the distance of a stage's activation chunks (64 k each) in 16-byte units: TM rows, or the tail
  // rows where the (only) token tile came by one 3-D copy (Params::act_3d_tail)
  uint32_t chunk16;
  float (&acc)[C::R][C::TM / 2];
  uint32_t prev_s;  // the stage of the previous k-block, released once its wgmmas are done
  int width;        // the unit's token width (narrow_tile, sm90_schedule.cuh)
  // Per-column zero points (Cfg::kPcolFast, one group row, group >= K: pcol()): where every row of a
  // warp has an integer offset r = -z / s (common/dequant.cuh, w4a16_pcol_integer), read from the
  // unit's first stage (pcol_load), its codes go in as q - r, exact, in two instructions a register
  // and no scale or zero rows are read (pc_fast: pc_a the rows' offset constants; their scales are
  // applied to the accumulators at the end of the unit); otherwise the zero-point conversion of
  // groups, q s + z. The warps of a warpgroup may differ: the branch covers the conversion only, and
  // every warp issues the same wgmmas.
  bool pc_fast = false;
  uint32_t pc_a[C::R][2] = {};

  __device__ __forceinline__ bool pcol() const { return C::kZeros && p.gshift == 30; }
  // Per-column zero points: whether the warp's rows all have integer offsets, from the unit's first
  // stage (waited for here; stage_in's wait on it then passes at once)
  __device__ __forceinline__ bool pcol_fast(int kn) {
    if (!pcol() || kn <= 0) return false;
    mbar_wait(sm.bar_full + 8 * (pos0 % C::STAGES), (pos0 / C::STAGES) & 1u);
    pcol_load(CHUNK ? chunk_scale_rows(0) : sm.base + (pos0 % C::STAGES) * C::kStageBytes + C::kSOff);
    return pc_fast;
  }
  // the warp's choice of conversion from its rows' scales and zeros (the rows at sr)
  __device__ __forceinline__ void pcol_load(uint32_t sr) {
    constexpr bool kBf16 = std::is_same<T, __nv_bfloat16>::value;
    float sv[C::R][2], zv[C::R][2], rv[C::R][2];
    bool all_int = true;
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t a0 = sr + (cs.rowbase + r * 64 + cs.warp * 16 + cs.g + 8 * h) * 2;
        sv[r][h] = Ops::to_float(lds16(a0));
        zv[r][h] = Ops::to_float(lds16(a0 + (C::kZOff - C::kSOff)));
        all_int = w4a16_pcol_integer<kBf16>(sv[r][h], zv[r][h], &rv[r][h]) && all_int;
      }
    pc_fast = __all_sync(0xffffffffu, all_int);
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        pc_a[r][h] = w4a16_pcol_offset<kBf16>(rv[r][h], h);
      }
  }

  // the scale (zero) rows of k-block kb under chunks: in the stage of its chunk's first k-block, rows
  // from that k-block's group on (groups of at most TK: TK / group rows a k-block)
  __device__ __forceinline__ uint32_t chunk_scale_rows(int kb) const {
    const int cs0 = kb - kb % C::kScaleChunk;
    const uint32_t sst = sm.base + ((pos0 + (uint32_t)cs0) % C::STAGES) * C::kStageBytes;
    return sst + C::kSOff + (uint32_t)(((kb - cs0) * (C::TK >> p.gshift)) * C::kRowBytes);
  }
  // wait for k-block kb's stage; its packed weight fragments (one 16-byte load per 16x64 block) into
  // wq; returns the stage index
  __device__ __forceinline__ uint32_t stage_in(int kb, uint4 (&wq)[C::R][C::KT]) const {
    const uint32_t pos = pos0 + kb;
    const uint32_t s = pos % C::STAGES;
    mbar_wait(sm.bar_full + 8 * s, (pos / C::STAGES) & 1u);
    if constexpr (C::kGrouped) {
      // the gather warps' activations came by cp.async (the generic proxy); wgmma reads them through
      // the async proxy (sm90_producer.cuh, gather_warps)
      if (gathers_rows<C>(p)) fence_proxy_async_shared();
    }
    const uint32_t st = sm.base + s * C::kStageBytes;
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int kt = 0; kt < C::KT; ++kt)
        wq[r][kt] = lds128(st + C::kWOff + (((cs.rowbase >> 4) + r * 4 + cs.warp) * C::KT + kt) * 512 + cs.lane * 16);
    return s;
  }
  // each activation chunk's wgmma descriptor for stage st: the descriptor once, each step's offset
  // added to its address field in 16-byte units (no carry: shared memory addresses stay below 2^18):
  // one uniform add per wgmma where the encoding from the address took five
  __device__ __forceinline__ void chunk_descs(uint32_t st, uint64_t (&dch)[C::KT]) const {
    const uint64_t desc0 = smem_desc_sw128(st);
#pragma unroll
    for (int h = 0; h < C::KT; ++h) dch[h] = desc0 + (uint64_t)(h * chunk16);
  }

  // The wgmma group of steps LO .. HI - 1 (fragments frag, descriptors dch), N = W: fence, wgmmas,
  // commit
  template <int W, int LO, int HI>
  __device__ __forceinline__ void mmas(int kb, const uint64_t (&dch)[C::KT], const uint32_t (&frag)[C::R][C::K16][4]) {
    wgmma_fence();
#pragma unroll
    for (int k16 = LO; k16 < HI; ++k16) {
      const uint64_t desc = dch[k16 >> 2] + (uint64_t)((k16 & 3) * 2);
#pragma unroll
      for (int r = 0; r < C::R; ++r)
        w4a16_wgmma_rs<W, T>::run(*reinterpret_cast<float(*)[W / 2]>(&acc[r][0]), frag[r][k16], desc, (kb | k16) != 0);
    }
    wgmma_commit();
  }

  // The fragments of steps LO .. HI - 1: dequantized, scaled and shifted by the zero.
  template <int LO, int HI>
  __device__ __forceinline__ void convert(const uint4 (&wq)[C::R][C::KT], const uint32_t (&s2)[C::R][C::K16 / 2][2],
                                          const uint32_t (&z2)[C::R][C::K16 / 2][2],
                                          uint32_t (&frag)[C::R][C::K16][4]) const {
#pragma unroll
    for (int k16 = LO; k16 < HI; ++k16)
#pragma unroll
      for (int r = 0; r < C::R; ++r) {
        uint32_t(&f)[4] = frag[r][k16];
        const uint32_t w = word_of(wq[r][k16 >> 2], k16);
        uint32_t q[4];
        Ops::template cvt<C::kSub>(w, q);
        const uint32_t slo = s2[r][k16 >> 1][0], shi = s2[r][k16 >> 1][1];
        if (C::kZeros) {
          const uint32_t zlo = z2[r][k16 >> 1][0], zhi = z2[r][k16 >> 1][1];
          f[0] = Ops::fma(q[0], slo, zlo);
          f[1] = Ops::fma(q[1], shi, zhi);
          f[2] = Ops::fma(q[2], slo, zlo);
          f[3] = Ops::fma(q[3], shi, zhi);
        } else {
          f[0] = Ops::mul(q[0], slo);
          f[1] = Ops::mul(q[1], shi);
          f[2] = Ops::mul(q[2], slo);
          f[3] = Ops::mul(q[3], shi);
        }
      }
  }

  // Steps LO .. HI - 1 of k-block kb (stage st): the fragments converted into frag (convert; per-column
  // integer zero points, pc_fast: q - r), then their wgmmas as one group.
  template <int LO, int HI>
  __device__ __forceinline__ void issue(int kb, uint32_t st, const uint4 (&wq)[C::R][C::KT],
                                        const uint32_t (&s2)[C::R][C::K16 / 2][2],
                                        const uint32_t (&z2)[C::R][C::K16 / 2][2],
                                        uint32_t (&frag)[C::R][C::K16][4]) {
    if (C::kPcolFast && pc_fast) {
#pragma unroll
      for (int k16 = LO; k16 < HI; ++k16)
#pragma unroll
        for (int r = 0; r < C::R; ++r)
          Ops::cvt_less(word_of(wq[r][k16 >> 2], k16), pc_a[r][0], pc_a[r][1], frag[r][k16]);
    } else {
      convert<LO, HI>(wq, s2, z2, frag);
    }
    uint64_t dch[C::KT];
    chunk_descs(st, dch);
    if constexpr (C::kNarrowTail) {
      constexpr int kMid = C::TM > 128 ? 128 : C::TM;
      if (width == 64) {
        mmas<64, LO, HI>(kb, dch, frag);
      } else if (kMid < C::TM && width == kMid) {
        mmas<kMid, LO, HI>(kb, dch, frag);
      } else {
        mmas<C::TM, LO, HI>(kb, dch, frag);
      }
    } else {
      mmas<C::TM, LO, HI>(kb, dch, frag);
    }
  }

  // One k-block of the pre-scaled mainloop into fragment buffer B of a (B = 1 only with kOverlap);
  // per-column integer zero points (pc_fast) read no scale or zero rows.
  template <int B>
  __device__ __forceinline__ void kstep(int kb, uint32_t (&a)[kOverlap ? 2 : 1][C::R][C::K16][4]) {
    uint32_t a_local[C::R][C::K16][4];  // serial order: fragments live within one step
    auto &frag = kOverlap || kHalves ? a[B] : a_local;
    uint4 wq[C::R][C::KT];
    const uint32_t s = stage_in(kb, wq);
    const uint32_t st = sm.base + s * C::kStageBytes;
    const uint32_t sr = CHUNK ? chunk_scale_rows(kb) : st + C::kSOff;
    // scales (zeros) of rows g and g+8, per pair of k16 steps (a group spans >= 32 k)
    uint32_t s2[C::R][C::K16 / 2][2];
    uint32_t z2[C::R][C::K16 / 2][2];
    if (!(C::kPcolFast && pc_fast)) {
#pragma unroll
      for (int jj = 0; jj < C::K16 / 2; ++jj) {
        const int gr = cs.small_group ? ((jj * 32) >> p.gshift) : 0;
#pragma unroll
        for (int r = 0; r < C::R; ++r) {
          const uint32_t a0 = sr + gr * C::kRowBytes + (cs.rowbase + r * 64 + cs.warp * 16 + cs.g) * 2;
          const uint32_t lo = lds16(a0), hi = lds16(a0 + 16);
          s2[r][jj][0] = lo | (lo << 16);
          s2[r][jj][1] = hi | (hi << 16);
          if (C::kZeros) {
            const uint32_t zl = lds16(a0 + (C::kZOff - C::kSOff)), zh = lds16(a0 + (C::kZOff - C::kSOff) + 16);
            z2[r][jj][0] = zl | (zl << 16);
            z2[r][jj][1] = zh | (zh << 16);
          }
        }
      }
    }
    if constexpr (kHalves) {
      // each half into the same registers as that half of the previous block, whose wgmma group is
      // the second newest: wait_group 1 frees them; before the second half the previous block's
      // wgmmas are all done and its stage is released
      constexpr int H = C::K16 / 2;
      wgmma_wait<1>();
      issue<0, H>(kb, st, wq, s2, z2, frag);
      wgmma_wait<1>();
      if (kb > 0) release_stage<C>(sm, cs, prev_s);
      issue<H, C::K16>(kb, st, wq, s2, z2, frag);
      prev_s = s;
      return;
    }
    if (!kOverlap && kb > 0) {
      // the previous stage's wgmmas are done: its shared memory and our A registers are free
      wgmma_wait<0>();
      release_stage<C>(sm, cs, prev_s);
    }
    issue<0, C::K16>(kb, st, wq, s2, z2, frag);
    if (kOverlap) {
      // all but this block's wgmmas are done: the previous stage is free
      wgmma_wait<1>();
      if (kb > 0) release_stage<C>(sm, cs, prev_s);
    }
    prev_s = s;
  }

  // The pre-scaled mainloop over kn k-blocks.
  __device__ __forceinline__ void pre_scaled(int kn) {
    uint32_t a[kOverlap ? 2 : 1][C::R][C::K16][4];  // fragment buffers (overlap, halves)
    if (kOverlap) {
      int kb = 0;
      for (; kb + 1 < kn; kb += 2) {
        kstep<0>(kb, a);
        kstep<kOverlap ? 1 : 0>(kb + 1, a);
      }
      if (kb < kn) kstep<0>(kb, a);
    } else {
      for (int kb = 0; kb < kn; ++kb) kstep<0>(kb, a);
    }
    wgmma_wait<0>();
  }

  // The post-scaled mainloop (Cfg::kPostScaled) over kn k-blocks: one scale row per k-block.
  __device__ __forceinline__ void post_scaled(int kn) {
    float part[C::R][C::TM / 2];  // fp32 partial of the current k-block
    float sprev[C::R][2];         // the scales of the block in part, rows g and g + 8
    uint32_t ring[C::kRing][C::R][4];
    // (opaque to the compiler, so that it keeps one register quad instead of rematerializing the
    // constant before every wgmma; K > 0)
    uint32_t nb_frag[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) nb_frag[e] = Ops::kNegBias ^ ((uint32_t)(p.k >> 31) << e);
    for (int kb = 0; kb < kn; ++kb) {
      uint4 wq[C::R][C::KT];
      const uint32_t s = stage_in(kb, wq);
      const uint32_t st = sm.base + s * C::kStageBytes;
      const uint32_t sr = CHUNK ? chunk_scale_rows(kb) : st + C::kSOff;
      float sf[C::R][2];
#pragma unroll
      for (int r = 0; r < C::R; ++r) {
        const uint32_t a0 = sr + (cs.rowbase + r * 64 + cs.warp * 16 + cs.g) * 2;
        sf[r][0] = Ops::to_float(lds16(a0));
        sf[r][1] = Ops::to_float(lds16(a0 + 16));
      }
      uint64_t dch[C::KT];
      chunk_descs(st, dch);
      if (kb > 0) {
        // the previous block's last steps drain (the shared loads above are in flight)
        wgmma_wait<0>();
        fold(part, sprev);
        release_stage<C>(sm, cs, prev_s);
      }
#pragma unroll
      for (int k16 = 0; k16 < C::K16; ++k16) {
        constexpr int kR = C::kRing;
        // at most kR - 1 steps in flight: step k16 - kR, this slot's last reader, is done
        if (k16 >= kR) wgmma_wait<kR - 1>();
        uint32_t(&f)[C::R][4] = ring[k16 % kR];
#pragma unroll
        for (int r = 0; r < C::R; ++r) Ops::cvt_biased(word_of(wq[r][k16 >> 2], k16), f[r]);
        wgmma_fence();
        const uint64_t desc = dch[k16 >> 2] + (uint64_t)((k16 & 3) * 2);
#pragma unroll
        for (int r = 0; r < C::R; ++r) {
          w4a16_wgmma_rs<C::TM, T>::run(part[r], f[r], desc, k16 != 0);
          w4a16_wgmma_rs<C::TM, T>::run(part[r], nb_frag, desc, 1);
        }
        wgmma_commit();
      }
#pragma unroll
      for (int r = 0; r < C::R; ++r) {
        sprev[r][0] = sf[r][0];
        sprev[r][1] = sf[r][1];
      }
      prev_s = s;
    }
    wgmma_wait<0>();
    fold(part, sprev);
  }
  // acc += s x part once the block's wgmmas are complete (wgmma.wait_group 0: no wgmma in flight while
  // the accumulators are read, else ptxas serializes every wgmma, C7514)
  __device__ __forceinline__ void fold(float (&part)[C::R][C::TM / 2], const float (&sprev)[C::R][2]) {
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 2; ++i) {
        reg_fence(part[r][i]);
        acc[r][i] = fmaf(sprev[r][(i >> 1) & 1], part[r][i], acc[r][i]);
      }
  }

  // The unit's mainloop: acc from zero, then released every stage but the last (prev_s).
  __device__ __forceinline__ void run(int kn) {
    bool post = false;  // the post-scaled mainloop for groups of at least TK
    if constexpr (C::kPostScaled) post = p.group >= C::TK;
    // (before the accumulators are zeroed: ptxas spills zeros held across its wait)
    const bool fast = C::kPcolFast && !post && pcol_fast(kn);
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 2; ++i) acc[r][i] = 0.f;
    if (post) {
      if constexpr (C::kPostScaled) post_scaled(kn);
    } else {
      pre_scaled(kn);
    }
    if (fast) {
      // the rows' scales, from the last stage (not yet released; every stage holds the same row)
      const uint32_t sr = CHUNK ? chunk_scale_rows(kn - 1) : sm.base + prev_s * C::kStageBytes + C::kSOff;
#pragma unroll
      for (int r = 0; r < C::R; ++r) {
        const uint32_t a0 = sr + (cs.rowbase + r * 64 + cs.warp * 16 + cs.g) * 2;
        const float s0 = Ops::to_float(lds16(a0)), s1 = Ops::to_float(lds16(a0 + 16));
#pragma unroll
        for (int i = 0; i < C::TM / 2; ++i) acc[r][i] *= (i & 2) ? s1 : s0;
      }
    }
#pragma unroll
    for (int r = 0; r < C::R; ++r)
#pragma unroll
      for (int i = 0; i < C::TM / 2; ++i) reg_fence(acc[r][i]);
  }
};

}  // namespace w4a16_sm90

#endif
