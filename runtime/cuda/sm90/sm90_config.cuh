// sm90_config.cuh - the Hopper family's compile-time configuration and resource model (Cfg), the
// kernel parameters (Params) and the 16-bit element operations (DtypeOps).
//
// Cfg derives everything a kernel instantiation fixes at compile time from its template arguments
// (mode, tile TN x TM x TK, cluster CN x CM, schedule, stages, consumer warpgroups): the shared-memory
// layout of a stage and of the epilogue, the registers of each warpgroup (setmaxnreg), whether two
// CTAs share an SM, and which schedule features the instance carries (post-scaled mainloop, K pair,
// stream-K ring, scale chunks). generator/families/sm90.py mirrors the shared-memory and register
// arithmetic (smem_bytes, ctas_per_sm, consumer_registers); keep the two in step.
#ifndef W4A16_SM90_CONFIG_CUH
#define W4A16_SM90_CONFIG_CUH

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "common/dequant.cuh"
#include "kernel_abi.h"
#include "w4a16/w4a16.h"

namespace w4a16_sm90 {

template <int MODE_, int TN_, int TM_, int TK_, int CN_, int CM_, int SCHED_, int STAGES_, int NC_ = 2,
          bool GROUPED_ = false>
struct Cfg {
  static constexpr int MODE = MODE_, TN = TN_, TM = TM_, TK = TK_, CN = CN_, CM = CM_, STAGES = STAGES_;
  // The grouped (mixture-of-experts) form (grouped/grouped_sm90.cuh): the persistent walk takes
  // (expert, token tile, column tile) units from a table of the device offsets in shared memory
  // (kTableOff), each unit's rows end at its expert's last row (16-byte row stores, no tensor
  // store), and there is no split-K, stream-K or K pair.
  static constexpr bool kGrouped = GROUPED_;
  static constexpr int kMaxExperts = 256;  // the table's experts (grouped form)
  // Grouped form, TM > 64: a unit whose expert has at most 64 (128, below a TM of 256) rows left in
  // the token tile runs as a 64- (128-) token tile: its activations come as that many rows (64-row
  // boxes) and its wgmmas take that N, so an expert's last, part-full tile costs the tensor cores its
  // rows rounded up to 64 rather than TM (narrow_tile, sm90_schedule.cuh).
  static constexpr bool kNarrowTail = GROUPED_ && TM_ > 64 && CN_ == 1;
  static constexpr bool kCoop = SCHED_ == W4A16_SCHEDULE_COOPERATIVE;
  static constexpr bool kZeros = MODE_ == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  static constexpr int kSub = kZeros ? 0 : 8;  // the code's offset (q - 8) where no zero point shifts it
  // Consumer warpgroups: 2, or 4 for the cooperative schedule (twice the warps per scheduler at 104
  // registers each: 64 rows a warpgroup, so TN = 256 and a small TM).
  static constexpr int NC = NC_;
  static constexpr int kThreads = 128 * (NC + 1);
  static constexpr int kWgRows = kCoop ? TN / NC : TN;  // rows of N per consumer warpgroup
  static constexpr int R = kWgRows / 64;               // wgmma M blocks per warpgroup
  static constexpr int KT = TK / 64;                   // 16x64 packed blocks along K per stage
  static constexpr int K16 = TK / 16;                  // wgmma k steps per stage
  static constexpr int kCluster = CN * CM;
  // ---- one stage: activations | packed weights | scale rows | zero rows, 1024-byte aligned
  static constexpr int kActBytes = TM * TK * 2;        // KT boxes of [TM rows x 128 bytes]
  static constexpr int kWBytes = TN * TK / 2;
  static constexpr int kScaleRowsMax = TK / 32;        // scale rows per stage (group 32)
  static constexpr int kRowBytes = TN * 2;             // one scale row of the tile
  static constexpr int kWOff = kActBytes;
  static constexpr int kSOff = kWOff + kWBytes;
  static constexpr int kZOff = kSOff + kScaleRowsMax * kRowBytes;
  static constexpr int kStageRaw = kZOff + (kZeros ? kScaleRowsMax * kRowBytes : 0);
  static constexpr int kStageBytes = (kStageRaw + 1023) / 1024 * 1024;
  // ---- epilogue staging: with kTmaStore (TM >= 64) TN/64 boxes of [TM rows x 128 bytes] in the TMA
  // 128-byte swizzle, stored by cp.async.bulk.tensor; else rows padded to TN + 8 elements
  // (conflict-free 2-byte stores) and 16-byte stores by the threads. Pingpong: one buffer a warpgroup.
  static constexpr bool kTmaStore = TM >= 64 && !kGrouped;
  static constexpr int kEpiStride = TN + 8;
  static constexpr int kEpiBufBytes = kTmaStore ? TM * TN * 2 : TM * kEpiStride * 2;
  static constexpr int kEpiBytes = (kCoop ? 1 : 2) * kEpiBufBytes;
  static constexpr int kEpiOff = STAGES * kStageBytes;
  // ---- barriers: STAGES full, STAGES empty, two order barriers; the grouped form's table (each
  // expert's first unit, E + 1 of them, its first row and its row count: 3 kMaxExperts + 1 ints, two
  // more for its scan, padded) and the gather warps' row addresses of their unit (TM pointers); then
  // the alignment slack
  static constexpr int kBarOff = kEpiOff + (kEpiBytes + 15) / 16 * 16;
  static constexpr int kTableOff = kBarOff + STAGES * 16 + 16;
  static constexpr int kTableInts = (3 * kMaxExperts + 1) / 4 * 4 + 4;
  static constexpr int kTableBytes = kGrouped ? kTableInts * 4 + TM * 8 : 0;
  static constexpr int kSmemRaw = kTableOff + kTableBytes + 1024;
  static constexpr int kWarpsPerStage = kCoop ? 4 * NC : 4;  // consumer warps reading a stage
  // arrivals that free a stage: every local consumer thread that read it, plus one per consumer warp
  // of each other CTA of the cluster (their producers multicast into it)
  static constexpr int kEmptyCount = kWarpsPerStage * 32 + (kCluster - 1) * kWarpsPerStage;
  static constexpr int kMBand = 8;  // raster band (cluster rows along M)

  // ---- registers. A consumer thread's estimate with two A-fragment buffers (the conversion of a
  // k-block overlaps the previous block's wgmmas) and with one; keep in step with
  // generator/families/sm90.py consumer_registers().
  static constexpr int kRegsOverlap =
      R * TM / 2 + 2 * R * K16 * 4 + R * KT * 4 + R * K16 * (kZeros ? 2 : 1) + 40;
  static constexpr int kRegsSerial = kRegsOverlap - R * K16 * 4;
  // Two CTAs per SM (the next kernel's CTA can be resident and prefetch its weights while this one
  // streams) for the register-light tiles whose shared memory fits half an SM (228 KB minus 1 KB
  // reserved per CTA): 80 registers a thread at launch, the producer keeps 48 and the consumers rise
  // to kLightRegs (128 x 48 + 256 x 96 = 384 x 80). Keep in step with sm90.py ctas_per_sm().
  static constexpr int kLightRegs = 96;
  static constexpr int kSmemHalfSm = 233472 / 2 - 1024;
  static constexpr int kCtasPerSm = (NC == 2 && kRegsSerial <= kLightRegs && kSmemRaw <= kSmemHalfSm) ? 2 : 1;
  // A one-CTA-per-SM tile asks for more than half an SM of shared memory even where its stages need
  // less, so that "shared memory <= kSmemHalfSm" tells the two-per-SM tiles (the runtime's split rule
  // reads it off the kernel descriptor's smem_bytes).
  static constexpr int kSmemBytes = kCtasPerSm == 1 && kSmemRaw <= kSmemHalfSm ? kSmemHalfSm + 1024 : kSmemRaw;
  // One CTA per SM: the registers a thread gets at launch (64K over kThreads, in units of 8: 168 for
  // 384 threads, 96 for 640); the producer gives back down to producer_regs() and the consumers share
  // the rest (setmaxnreg: 224, or 232 beside a 40-register producer, for two consumer warpgroups; 104
  // for four).
  static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
  static constexpr int consumer_regs_beside(int producer) {
    const int share = (kLaunchRegs * kThreads - 128 * producer) / (128 * NC) / 8 * 8;  // in units of 8
    return kCtasPerSm == 2 ? kLightRegs : share < 232 ? share : 232;
  }
  // The most registers two fragment buffers may take: 88 of the 96 at two CTAs per SM; 208 for one
  // CTA per SM (beyond it ptxas serializes the wgmmas, C7512); four consumer warpgroups: their share
  // beside a 40-register producer less 24.
  static constexpr int kOverlapRegsTwoPerSm = 88;
  static constexpr bool kOverlapFits =
      kRegsOverlap <= (kCtasPerSm == 2 ? kOverlapRegsTwoPerSm : NC == 2 ? 208 : consumer_regs_beside(40) - 24);
  // Whether the kernel instance with scale chunks (CHUNK, the K pair's) or without holds two fragment
  // buffers. A one-CTA-per-SM tile_k 256 tile where they fit (128x16x256) holds them only in its
  // chunked instance and converts by halves in the other (H100: the halves beside a 48-register
  // producer take 0.97-0.99x the time on seven layers at M = 1..16; two buffers win under the K pair).
  static constexpr bool overlap_in(bool chunk) { return kOverlapFits && (K16 < 16 || kCtasPerSm == 2 || chunk); }
  // Without two buffers, a tile_k 256 k-block is converted and issued in two halves of 8 k16 steps,
  // each half with its own wgmma group, in the registers of one block's fragments: the conversion of
  // one half runs while the other half's wgmmas are in flight (wgmma.wait_group 1 frees the half about
  // to be overwritten), where the whole-block order drains every wgmma before converting (H100:
  // 128x32x256 1.023x, 128x64x256 1.016x geomean speed-up over M = 16..128). The tile_k 128 tiles (4
  // steps a half) gain nothing and keep the whole-block order.
  static constexpr bool halves_in(bool chunk) { return !overlap_in(chunk) && TK_ == 256; }
  // The producer's registers after setmaxnreg.dec: 48 (at 40 ptxas spills in the producer and the
  // consumers' set-up of most tiles), but 40 with four consumer warpgroups and where a one-CTA-per-SM
  // tile's consumers hold two fragment buffers of 16 k16 steps (128x16x256, chunked): at the 224
  // registers a 48-register producer leaves them, ptxas serializes their wgmmas (C7512).
  static constexpr int producer_regs(bool chunk) {
    return NC == 4 || (kCtasPerSm == 1 && K16 >= 16 && overlap_in(chunk)) ? 40 : kGrouped ? 56 : 48;
  }
  static constexpr int consumer_regs(bool chunk) { return consumer_regs_beside(producer_regs(chunk)); }

  // ---- per-column integer zero points (FINEGRAINED_SCALE_AND_ZEROS with one group row whose offsets
  // -z / s are integers, Mainloop::pcol_fast): the pre-scaled mainloop converts q - zq in two
  // instructions a register, chosen per warp and k-block by a uniform branch around the conversion
  // only (a mainloop of its own spills and serializes the wgmmas, C7512); not with four consumer
  // warpgroups, whose 104 registers it spills.
  static constexpr bool kPcolFast = kZeros && NC == 2;

  // ---- post-scaled mainloop (FINEGRAINED_SCALE_ONLY with a group of at least TK at run time): the
  // codes go into the wgmma biased and exact (MAGIC + q: 7 instructions per packed word instead of
  // 15), one more wgmma per k16 step against a constant -(MAGIC + 8) fragment removes the bias, each
  // k-block accumulates into its own fp32 partial and the group scale is applied to that partial (one
  // FFMA per accumulator per k-block). The fragments of one k16 step at a time cycle through a ring of
  // kRing register slots, so conversion runs while the previous steps' wgmmas are in flight. The
  // partial costs R x TM / 2 registers: small TM, one CTA per SM (at 96 registers, and for
  // 128x16x256, ptxas serializes the wgmmas: C7512), two consumer warpgroups (at 104 registers both
  // loops in one kernel spill).
  static constexpr bool kPostScaled =
      MODE_ == W4A16_FINEGRAINED_SCALE_ONLY && TM_ <= 32 && kCtasPerSm == 1 && kCoop && NC == 2 && TK_ <= 128;
  static constexpr int kRing = 2;

  // ---- K pair (Params::kpair, cooperative 1x1x1 tiles): rank 1's accumulators go into a stage of
  // rank 0, or in two halves where they exceed a stage (kPairHalves; tiles with the tensor-store
  // epilogue only, which adds rank 1's accumulators as it stages the tile): the first half into rank
  // 0's epilogue buffer (fp32 half a tile: the bytes of the staged 16-bit tile) as soon as rank 1's
  // mainloop ends, the second into the kPairLate stages of rank 0's ring that its mainloop releases
  // for good first (from stage h % STAGES on, h its k-blocks). Rank 0 runs Params::kpair - 1 more
  // k-blocks than rank 1 so that both move while its mainloop runs, and stages its output tile in the
  // kPairOut stages after those (TN / 64 boxes of TM x 128 bytes, kPairBoxes a stage). The K pair uses
  // the two order barriers, idle in the cooperative schedule.
  static constexpr bool kPairHalves = TN * TM * 4 > kStageBytes;
  static constexpr int kPairPieces = R * (TM / 8);  // a thread's 16-byte pieces of its accumulators
  static constexpr int kPairLate = (TN * TM * 2 + kStageBytes - 1) / kStageBytes;
  static_assert(kStageBytes >= TM * 128, "a stage holds a box of the output tile (TK >= 64)");
  static constexpr int kPairBoxes = kStageBytes / (TM * 128);
  static constexpr int kPairOut = (TN / 64 + kPairBoxes - 1) / kPairBoxes;
  static constexpr bool kPairOk =
      kCoop && kCluster == 1 && !kGrouped && (kPairHalves ? kTmaStore && kPairLate + kPairOut <= STAGES : true);
  // The K pair's default lead (Params::kpair - 1) for the kPairHalves tiles: one k-block per 32 KB of
  // rank 1's accumulators (4 for 128x256x64, 2 for 128x128x128), so that both halves move while rank
  // 0's mainloop runs; the other tiles split K evenly.
  static constexpr int kPairLead = kPairHalves ? TN * TM * 4 / 32768 : 0;

  // ---- stream-K: the last partial of a tile this CTA began comes into the stage ring (from stage 0,
  // fragment order) by bulk copies of the flag warp, each stage's part as soon as the mainloop has
  // released that stage for good, and the epilogue adds it as it stages the tile: cooperative tiles
  // with the tensor-store epilogue whose fp32 tile (at least 128 KB: the 128x256 tiles) fits the ring.
  // H100: 128x256x64 0.983-0.998x the time of the global reads; the smaller tiles gain nothing.
  static constexpr int kStreamKRingMinBytes = 131072;
  static constexpr bool kStreamKRing =
      kCoop && kTmaStore && !kGrouped && TN * TM * 4 >= kStreamKRingMinBytes && TN * TM * 4 <= STAGES * kStageBytes;
  // Stream-K with data-parallel tiles first (Params::streamk > 1): the tiles of 64 tokens or more.
  // Not compiled into the others, nor into the zero-point cluster tiles: the walk's extra branch makes
  // ptxas spill there (128x16x256's producer, zero-point 128x256x64 2x1x1).
  static constexpr bool kStreamKDataParallel = TM_ >= 64 && !(kZeros && kCluster > 1) && !GROUPED_;

  // ---- scale rows by chunks (Params::scale_map bit 1, the kernel's CHUNK): the k-blocks whose scale
  // (zero) rows one copy brings, for the tile_k 256 tiles of 16 or 32 tokens only (which otherwise
  // take a bulk copy a row). At most four (eight rows at groups of 128: kScaleRowsMax), at most
  // STAGES - 1 and not a divisor of STAGES, so that no two chunks of a unit begin STAGES k-blocks
  // apart (see the producer). Not the 8-token tile: its chunked instance spills.
  static constexpr int scale_chunk_of(int c) {
    return c < 2 ? 1 : (c <= STAGES_ - 1 && STAGES_ % c != 0) ? c : scale_chunk_of(c - 1);
  }
  static constexpr int kScaleChunk = TK_ == 256 && TM_ >= 16 && TM_ <= 32 ? scale_chunk_of(4) : 1;

  static_assert(TN % 64 == 0 && R >= 1 && kWgRows * (kCoop ? NC : 1) == TN, "tile_n: 64 rows per wgmma per warpgroup");
  static_assert(NC == 2 || (NC == 4 && kCoop), "consumer warpgroups: 2, or 4 (cooperative)");
  static_assert(TM % 8 == 0 && TM >= 8 && TM <= 256, "tile_m: wgmma N in 8..256");
  static_assert(TK == 64 || TK == 128 || TK == 256, "tile_k: 64, 128 or 256");
  // the packed-weight box of a stage: [TN/16 row blocks][KT blocks][128 words]; a tensor-map box
  // dimension holds at most 256 elements, so beyond KT = 2 the map is 3-D (same shared layout)
  static constexpr bool kW3d = KT > 2;
  static_assert(!kW3d || CM == 1, "tile_k 256: weight multicast (cluster_m > 1) not built");
  static_assert((TM / CN) % 8 == 0, "activation multicast slice: whole 8-row swizzle atoms");
  static_assert((TN / 16) % CM == 0, "weight multicast slice: whole 16-row blocks");
  static_assert(kSmemBytes <= 232448, "shared memory");
  static_assert(!kGrouped || (kCluster == 1 && kScaleChunk == 1), "grouped form: 1x1x1 clusters, no scale chunks");
};

// The kernel's run-time parameters (one __grid_constant__-like struct by value; the launch fills it
// from the runtime's plan, runtime/plan.c, and the problem).
struct Params {
  const void *scales;
  const void *zeros;
  const void *bias;
  void *d;
  float *ws;
  int64_t ldd;
  int m, n, k;
  int group;
  int gshift;  // log2(group) when group < TK (then a power of two); 30 for one group row (group >= K)
  int split_k;
  // != 0: stream-K (split_k is 1), with D = (streamk - 1) x G tiles data-parallel first: tiles
  // 0 .. D - 1 tile by tile (cluster c takes c, c + G, ...), then the I = (tiles - D) x k-blocks
  // iterations of the others (tile-major, I < 2^31) in G = gridDim / cluster parts, part c of
  // sk_base + 1 iterations for c < A, sk_base - 1 for c >= G - B, sk_base between, with sk_rem =
  // A | B << 16 (sk_start; B = 0: the first I % G parts one longer, A = I % G); ws holds one
  // partial tile per CTA and flags one 32-bit word per CTA (gemm_sm90.cuh, "Stream-K")
  int streamk;
  int sk_base, sk_rem;
  // != 0: K split in two across the two CTAs of a cluster (Cfg::kPairOk, launched with cluster
  // dimension 2): CTA 2 t + r runs tile t's k-blocks [r h, h + r (k - h)) with h = kpair_rank0_kblocks()
  // = min(floor((k + kpair) / 2), k - 1), rank 0 kpair - 1 k-blocks ahead of rank 1 (the lead), and
  // rank 1 hands its accumulators to rank 0 through shared memory (no workspace, no flags)
  int kpair;
  uint32_t token;  // this launch's flag value (never 0)
  uint32_t *flags;
  // != 0: early trigger, and the weights of the first stages are loaded before griddepcontrol.wait:
  // min(STAGES, prefetch) of them (> 0) or min(STAGES, max(2, k-blocks / -prefetch)) (< 0)
  int prefetch;
  // != 0: tm_a is 3-D ([K/64 chunks][M rows][64 k], chunk stride 128 bytes), so one copy brings a
  // full token tile's KT boxes of a stage (same shared layout as KT 2-D copies)
  int act_3d;
  // != 0 (only where M < TM: the one token tile is the part-full one): tm_a_tail is 3-D too (box
  // [KT][tail_rows][64 k]), a stage's activations by one copy, its KT chunks tail_rows * 128 bytes
  // apart in shared memory (the consumers' wgmma descriptors step by that, a launch-wide value so
  // that it stays in uniform registers; the rows a chunk's descriptor reads beyond them, the next
  // chunk's or stale ones, only reach wgmma columns of tokens >= M, never stored)
  int act_3d_tail;
  // != 0: a stage's scale (zero) rows by one copy of the 2-D maps tm_s (tm_z), [G groups] x [N], box
  // [scale_map >> 8 rows] x [tile_n], instead of one bulk copy a row; bit 1 (chunked): one copy brings
  // the rows of Cfg::kScaleChunk k-blocks, with a unit's k-blocks 0, kScaleChunk, 2 kScaleChunk, ...
  // into that stage's scale rows (from the group of its first k), and the chunk's other k-blocks read
  // them there (the group a power of two). Kept in one field: two more Params fields made ptxas spill
  // in the 40-register producer of the one-CTA-per-SM tiles
  int scale_map;
  // rows of the last token tile's boxes (tm_a_tail, tm_d_tail: M - its m0 rounded up to 8, at most
  // TM; TM / CN with activation multicast); that tile's stages count only these bytes
  int tail_rows;
  float alpha;
};

// The grouped form's parameters (Cfg::kGrouped): the dense ones (m = rows, n and k an expert's) and
// the grouped problem: the experts, offsets, row index and scale, status word; A is [rows, lda], the
// weights [E][N/16][K/64][128 words] (one 2-D or 3-D map over E N / 16 row blocks), the scales
// (zeros) [E][G][N] (one map over E G rows), D [rows, ldd]. A type of its own, so that the dense
// kernels' parameters stay as they are.
struct GroupedParams : Params {
  w4a16_grouped_launch_params gp;
};
template <class C>
using KernelParams = typename std::conditional<C::kGrouped, GroupedParams, Params>::type;
// The grouped problem of a grouped-form kernel's parameters (only there is p a GroupedParams).
static __device__ __forceinline__ const w4a16_grouped_launch_params &grouped_of(const Params &p) {
  return static_cast<const GroupedParams &>(p).gp;
}
// Whether the gather warps bring a grouped-form kernel's activations: a row index that the runtime
// has not applied already (w4a16_grouped_launch_params::a_gathered).
template <class C>
static __device__ __forceinline__ bool gathers_rows(const Params &p) {
  return C::kGrouped && grouped_of(p).row_index != nullptr && !grouped_of(p).a_gathered;
}

// Operations on pairs of 16-bit elements of the activation dtype (packed in a 32-bit register, the
// lower element in the low half) and the int4 conversions of common/dequant.cuh.
template <typename T> struct DtypeOps;
template <> struct DtypeOps<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) {
    __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162 *>(&a), *reinterpret_cast<__nv_bfloat162 *>(&b));
    return *reinterpret_cast<uint32_t *>(&r);
  }
  static __device__ __forceinline__ uint32_t fma(uint32_t a, uint32_t b, uint32_t c) {
    __nv_bfloat162 r = __hfma2(*reinterpret_cast<__nv_bfloat162 *>(&a), *reinterpret_cast<__nv_bfloat162 *>(&b),
                               *reinterpret_cast<__nv_bfloat162 *>(&c));
    return *reinterpret_cast<uint32_t *>(&r);
  }
  template <int SUB> static __device__ __forceinline__ void cvt(uint32_t w, uint32_t out[4]) {
    w4a16_u4x8_to_bf16x8<SUB>(w, out);
  }
  static __device__ __forceinline__ void cvt_biased(uint32_t w, uint32_t out[4]) {  // 128 + q
    w4a16_u4x8_to_bf16x8_biased(w, out);
  }
  // the codes less the integer offsets of rows g and g + 8 (common/dequant.cuh, w4a16_pcol_offset)
  static __device__ __forceinline__ void cvt_less(uint32_t w, uint32_t c0, uint32_t c1, uint32_t out[4]) {
    w4a16_u4x8_to_bf16x8_less(w, c0, c1, out);
  }
  static __device__ __forceinline__ uint16_t from_float(float v) {
    __nv_bfloat16 h = __float2bfloat16_rn(v);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  static __device__ __forceinline__ float to_float(uint16_t v) {
    return __bfloat162float(*reinterpret_cast<__nv_bfloat16 *>(&v));
  }
  static constexpr uint32_t kNegBias = 0xc308c308u;  // -136 twice: -(128 + 8), the biased codes' offset
  static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};
template <> struct DtypeOps<__half> {
  static __device__ __forceinline__ uint32_t mul(uint32_t a, uint32_t b) {
    __half2 r = __hmul2(*reinterpret_cast<__half2 *>(&a), *reinterpret_cast<__half2 *>(&b));
    return *reinterpret_cast<uint32_t *>(&r);
  }
  static __device__ __forceinline__ uint32_t fma(uint32_t a, uint32_t b, uint32_t c) {
    __half2 r = __hfma2(*reinterpret_cast<__half2 *>(&a), *reinterpret_cast<__half2 *>(&b),
                        *reinterpret_cast<__half2 *>(&c));
    return *reinterpret_cast<uint32_t *>(&r);
  }
  template <int SUB> static __device__ __forceinline__ void cvt(uint32_t w, uint32_t out[4]) {
    w4a16_u4x8_to_f16x8<SUB>(w, out);
  }
  static __device__ __forceinline__ void cvt_biased(uint32_t w, uint32_t out[4]) {  // 1024 + q
    w4a16_u4x8_to_f16x8_biased(w, out);
  }
  // the codes less the integer offsets of rows g and g + 8 (common/dequant.cuh, w4a16_pcol_offset)
  static __device__ __forceinline__ void cvt_less(uint32_t w, uint32_t c0, uint32_t c1, uint32_t out[4]) {
    w4a16_u4x8_to_f16x8_less(w, c0, c1, out);
  }
  static __device__ __forceinline__ uint16_t from_float(float v) {
    __half h = __float2half_rn(v);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  static __device__ __forceinline__ float to_float(uint16_t v) {
    return __half2float(*reinterpret_cast<__half *>(&v));
  }
  static constexpr uint32_t kNegBias = 0xe408e408u;  // -1032 twice: -(1024 + 8)
  static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};

// The packed word of k16 step k16 in a lane's 16-byte load of its 16x64 block (k16 compile-time).
static __device__ __forceinline__ uint32_t word_of(const uint4 &v, int k16) {
  return (k16 & 3) == 0 ? v.x : (k16 & 3) == 1 ? v.y : (k16 & 3) == 2 ? v.z : v.w;
}

// The CTA's shared memory (32-bit shared-window addresses): the stage ring, then the epilogue buffer
// (Cfg::kEpiOff), then the barriers.
struct Smem {
  uint32_t base;       // the stage ring, 1024-byte aligned: stage s at base + s * Cfg::kStageBytes
  uint32_t bar_full;   // STAGES "full" mbarriers: the producer's expect_tx + the copies' complete_tx
  uint32_t bar_empty;  // STAGES "empty" mbarriers: Cfg::kEmptyCount arrivals free a stage
  // two "order" mbarriers (bar_order, bar_order + 8): pingpong, the consumer warpgroups' turns; K
  // pair, "rank 0's stages are free" (rank 1's) and "rank 1's accumulators are in" (rank 0's);
  // stream-K ring, "the producer has issued every load" and "the last partial is in"
  uint32_t bar_order;
};

// The kernel's tensor maps (addresses of its __grid_constant__ parameters).
struct Maps {
  const CUtensorMap *a, *w, *d, *a_tail, *d_tail, *s, *z;
};

// Named barriers: 0 the CTA, 1 (cooperative) or 2 + c (pingpong) the consumers' epilogue,
// kFlagBar (+ c) a stream-K partial handed to the flag warp, kOwnBar (+ c) the flag warp's word that
// the partials a tile's owner adds are in, kGatherBar the grouped form's gather warps.
constexpr uint32_t kFlagBar = 4, kOwnBar = 6, kGatherBar = 8;

// The token tile that holds the last row of M without being full: its own tensor maps.
// (The grouped form has none: its boxes are whole token tiles, the rows past an expert's are not stored.)
template <class C>
static __device__ __forceinline__ bool is_tail_tile(const Params &p, int m0) {
  return !C::kGrouped && m0 < p.m && m0 + C::TM > p.m;
}

}  // namespace w4a16_sm90

#endif
