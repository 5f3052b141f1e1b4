// gemm_sm90.cuh - the Hopper family (sm_90a): TMA + wgmma, warp-specialized W4A16 GEMM.
//
//   D[M,N] = alpha * A[M,K] . dequant(W)[N,K]^T (+ bias[N])
//
// Orientation (generator/model.py): the weights are wgmma's register operand A, so a
// CTA tile is TN rows of N (wgmma M, 64 per instruction) x TM tokens (wgmma N, 8..256)
// x TK of K. Activations are wgmma's B operand: [TM tokens x 64 k] boxes reach shared
// memory by TMA with a 128-byte swizzle (K-major, exactly the layout wgmma reads).
//
// Warp specialization (384 threads): warpgroup 0 is the producer (one thread issues all
// copies; setmaxnreg.dec to 48, Cfg::producer_regs; another warp handles stream-K's flags),
// warpgroups 1 and 2 are consumers (setmaxnreg.inc to 224, 232 beside a 40-register producer; to
// 96 for the register-light tiles that run two CTAs per SM, Cfg::kCtasPerSm; the cooperative
// schedule may also run four consumer warpgroups, Cfg::NC = 4, 640 threads at 104 registers
// each, generator name suffix "_wg4"): they
// read their packed weight fragments from shared memory (one 16-byte load per lane per
// 16x64 block, docs/LAYOUT.md), convert int4 -> fp16/bf16 (common/dequant.cuh),
// apply the group scale (and zero) in registers, and issue wgmma with A from registers.
// Small token tiles with scale-only groups of at least TK take a post-scaled mainloop instead
// (Cfg::kPost): exact biased codes into the wgmma, the group scale applied to an fp32 partial
// per k-block, conversion overlapping the wgmmas in flight. The conversion of a k-block overlaps
// the previous block's wgmmas where registers hold two fragment buffers (Cfg::overlap_in), the
// other half of its own block's wgmmas for the tile_k 256 tiles (Cfg::halves_in), else none.
//
// Pipeline: STAGES shared-memory stages, each holding the activation tile (TMA, swizzled: KT boxes
// of [TM rows x 64 k]; a full token tile's KT boxes by one copy of a 3-D map, [K/64] x [M] x [64 k]
// with a 128-byte chunk stride, Params::a3d: a copy a box makes the producer's copy issue a bound of
// the small token tiles; one copy takes 0.87-1.01x the time for 128x32x256, 0.92-1.05x for
// 256x16x128, H100), the
// packed weight tile (TMA over the packed buffer seen as a 2-D array of 32-bit words,
// [N/16 row blocks] x [K/64 * 128 words]; tile_k 256, whose box row of 512 words exceeds a box
// dimension's 256 elements: 3-D, [N/16] x [K/64] x [128 words], the same bytes in shared memory)
// and the scale (zero) rows of the tile (one copy of a 2-D map, Params::s2d; 1-D bulk copies, one a
// row, for the tile_k 256 tiles of <= 32 tokens below four rows a stage, s2d_min_rows; those tiles
// in the K pair take the rows of three or four k-blocks by one copy of the map instead, Cfg::kSChunk,
// kernel parameter CHUNK). One "full"
// mbarrier per stage (producer's arrive.expect_tx + the copies' complete_tx) and one "empty"
// mbarrier per stage (an arrival from every local consumer thread that read the stage, and one per
// consumer warp of every other CTA of the cluster, whose producers multicast into this CTA's stage).
//
// Schedules: cooperative - both consumer warpgroups work on every tile, each on TN/2
// rows; pingpong - the consumer warpgroups take alternate tiles of the CTA (each does
// all TN rows), so one's epilogue overlaps the other's mainloop. Their mainloops take
// turns (two "order" mbarriers): a warpgroup starts waiting on the stages of its next
// tile only after the other has passed all the stages of the tile before, so no wait
// on a stage's parity can run a phase ahead of the barrier.
//
// Clusters CN x CM (CTAs along N share the activation tile, CTAs along M share the
// weight tile): each CTA loads 1/CN of the activation box and 1/CM of the weight box and
// multicasts it to the CTAs that share it. A consumer warp frees a stage in the other CTAs by
// a remote arrival of CTA-scope release semantics (sm90_ptx.cuh mbar_arrive_cluster: with
// .release.cluster, a MEMBAR.ALL.GPU per stage and warp makes the cluster kernels 1.3-2x slower
// than 1x1x1; with CTA scope 128x256x64 2x1x1 is 6-7 % faster than 1x1x1 at M = 4096).
//
// Persistent grid: min(work units, SMs / cluster size) clusters walk the units
// (cluster tile x K slice) in a banded raster (bands of 8 cluster rows along M, N
// fastest inside a band), the same sequence for the producer and both consumers.
//
// Split-K (p->split_k > 1, any value <= K/TK: slices of floor/ceil(K/TK/split) k-blocks,
// runtime/families.c picks it so that the units fill the SMs in one wave): each K slice
// writes fp32 partials (common/splitk.cuh) and the launch enqueues the deterministic
// reduction (its own copy here, launched as a programmatic dependent).
//
// Stream-K (p->stream_k, runtime/families.c picks it where the output tiles leave the last wave
// part-empty and split-K does not apply, or for tile_k 256 from M = 17 in place of split-K too):
// the grid's G clusters share the I = tiles x k-blocks iterations of the problem, tile-major, in G
// consecutive parts of I / G or I / G + 1 (tiles of <= 16 or >= 128 tokens with long parts:
// I / G - 1 .. I / G + 1, shrinking with the index; sk_start). A tile cut between clusters is begun
// (k-block 0) by the last unit of one cluster and finished by the first units of the next ones:
// those write their fp32 accumulators to their CTA's slot of the workspace (fragment order) and
// raise their CTA's flag (the launch's token, release); the cluster that began the tile waits for
// those flags (acquire), adds the slots in cluster order (K order; with Cfg::kSkRing the last
// cluster's slot comes into the stage ring by bulk copies as the mainloop ends and is added last,
// as the epilogue stages the tile: a fixed order either way, the same bits on every run of the
// grid), clears the flags (a graph replay reuses the token) and runs the epilogue. Only a cluster's
// last unit waits, and only for first units, which never wait: no chain of waits. Where the tiles
// fill more than a wave, the parts cover only the last part-wave's tiles and each cluster first
// runs as many of the others tile by tile (the data-parallel + stream-K hybrid of the paper below;
// Params::streamk, streamk_dp_tiles): those never wait either. The launch keeps the grid within
// what the device holds at once (occupancy); even with fewer CTAs resident, as long as they start
// in index order and two fit, a waiting cluster waits only for later clusters' first units, and the
// earlier clusters can always finish and make room. After the approach of Osama et al., "Stream-K:
// Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU" (PPoPP
// 2023). The flags are a warp of the producer warpgroup's (the flag warp, W4A16_SM90_FLAG_WARP): it
// releases a partial's flag once the consumers that stored it have arrived on a named barrier, and
// waits for the flags of a tile its CTA began while the consumers still run that tile's mainloop;
// the consumers neither wait for a release's memory barrier nor poll (H100, against the consumers
// doing both: 10240x8192 M = 17..64 0.97-0.99x the time, 28672x4096 0.975-0.98x, 4096x4096
// M = 17..32 1.02x, 0.996x geomean over 42 stream-K problems).
//
// K pair (p->kpair, where the runtime chose stream-K or split 2 but two CTAs a tile fill 70-100 %
// of the SMs, e.g. N = 8192 in tiles of 128 rows at M <= tile_m on 132 SMs): the grid is launched
// in clusters of two, CTA 2 t + r takes tile t's first kpair_h k-blocks (rank 0) or the rest
// (rank 1). Rank 0's producer announces, once its last use is released, the stage that its remaining
// k-blocks no longer need; rank 1 writes its fp32 accumulators there by st.async (distributed
// shared memory, counted on an mbarrier of rank 0), rank 0 adds them after its own and runs the
// epilogue. No workspace, no flags, no global round trip: stream-K's fixup (the partial's release,
// the flag, the reads) costs 9-24 % of these problems' time.
// Also in place of split-K into two slices (where the runtime splits a tile_k < 256 tile's K in
// two): no fp32 partials through memory and no reduction kernel. Tiles whose accumulators exceed a
// stage (kPairRing: 128x128x128, 128x256x64, 256x64x128, 128x64x128) hand them over in two halves:
// the first into rank 0's epilogue buffer as soon as rank 1's mainloop ends, the second into the
// ring stages rank 0's mainloop frees first, with rank 0 a few k-blocks ahead (Params::kpair - 1,
// kpair_lead) so that both move while its mainloop runs; rank 0 adds them as its epilogue stages
// the tile in the ring stages after the second half's (H100: a handoff through the ring takes
// 0.92-1.00x split-K's time on 17 problems of M = 17..512; the two halves take 0.954-0.993x the time
// of a single handoff through the ring on five problems of M = 128..512).
//
// Programmatic dependent launch: the GEMM and the reduction are launched with
// programmatic stream serialization and let their dependents launch at once. The GEMM's
// producer issues the weight/scale copies of its first stages before griddepcontrol.wait
// (w4a16.h "Ordering" allows reading W, scales, zeros early), the activations after it;
// nothing else touches global memory before the wait (how many stages: prefetch_stages()).
// W4A16_SM90_PREFETCH=0 restores wait-then-trigger with no early reads, W4A16_SM90_NO_PDL=1
// plain stream order.
//
// Epilogue: alpha, bias, conversion in registers; the tile goes through shared memory
// and leaves by TMA tensor stores (TM >= 64: staged by transposed stmatrix of packed pairs, one
// thread issues the stores and the warpgroups go on with the next tile) or by 16-byte
// row-contiguous stores; rows >= M are never
// stored (the tensor store drops rows outside the tensor). The last token tile of a problem whose
// M is not a multiple of TM loads and stores through tensor maps of its own (tm_a_tail, tm_d_tail)
// whose boxes hold only its rows, rounded up to 8 (tail_rows; not with activation multicast): TMA
// rows outside the tensor cost as much as real ones, or more. Its activation chunks of a stage come
// by one 3-D copy as well, tail_rows * 128 bytes apart (Params::a3d_tail; the wgmma descriptors step
// by that distance).
//
// N and K tails (the 1x1x1 clusters: N % 16 == 0 and K % 64 == 0 suffice): the last row tile may
// reach beyond N and the last k-block beyond K. The weight, activation and scale (zero) maps have
// exact extents, so TMA loads zeros there (the scale rows then always by the map, Params::s2d): those
// weights are 0 x code (+ 0) and those activations 0, and they add nothing. The tensor stores drop
// the columns beyond N; the 16-byte row stores, the split-K partials and the bias reads are
// predicated on n < N.
#ifndef W4A16_SM90_GEMM_SM90_CUH
#define W4A16_SM90_GEMM_SM90_CUH

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <type_traits>

#include "common/cp_async.cuh"
#include "common/dequant.cuh"
#include "common/func_attr.cuh"
#include "common/splitk.cuh"
#include "kernel_abi.h"
#include "sm90/sm90_ptx.cuh"
#include "sm90/sm90_wgmma.cuh"
#include "w4a16/w4a16.h"

#ifndef W4A16_SM90_LIGHT_REGS
#define W4A16_SM90_LIGHT_REGS 96
#endif
#ifndef W4A16_SM90_OVERLAP2
#define W4A16_SM90_OVERLAP2 88
#endif
// Two fragment buffers for the one-CTA-per-SM tile_k 256 tiles where they fit (128x16x256): 1 in the
// kernel instance with scale chunks only (Cfg::overlap_in), 2 in both, 0 in neither (A/B build switch)
#ifndef W4A16_SM90_OVERLAP_K256
#define W4A16_SM90_OVERLAP_K256 1
#endif
// 1: stream-K's flags by a warp of the producer warpgroup (the flag warp): it releases a
// contributor's flag after the consumers' stores and waits for an owner's contributors' flags;
// 0: a consumer thread releases after a barrier of the consumers, the owner's consumers poll (A/B
// build switch)
#ifndef W4A16_SM90_FLAG_WARP
#define W4A16_SM90_FLAG_WARP 1
#endif
// 1: a stream-K owner of a tile of at most 32 tokens (or of a two-CTA-per-SM tile) reads its
// contributors' partials two at a time; 0: one at a time (A/B build switch; see the fixup)
#ifndef W4A16_SM90_FIXUP_STEP2
#define W4A16_SM90_FIXUP_STEP2 1
#endif
// 1: the tile_k 256 tiles without two fragment buffers (Cfg::overlap_in false) convert and issue
// each k-block in two halves (Cfg::halves_in); 0: convert the whole block, then issue it (A/B build
// switch)
#ifndef W4A16_SM90_HALVES
#define W4A16_SM90_HALVES 1
#endif
// 1: a stream-K owner's last partial comes into its stage ring by bulk copies as its last k-blocks
// free the stages (Cfg::kSkRing); 0: read from global memory like the others (A/B build switch)
#ifndef W4A16_SM90_SK_RING
#define W4A16_SM90_SK_RING 1
#endif
// 1: a stream-K owner of a cooperative tile of <= 16 tokens copies all its contributors' partials
// into its stage ring at once (cp.async) and adds them from there; 0: reads them from global memory
// one at a time (A/B build switch; see the fixup)
#ifndef W4A16_SM90_FIXUP_CPASYNC
#define W4A16_SM90_FIXUP_CPASYNC 1
#endif
// (the smallest partial, in bytes, that takes the ring: 128 KB, the 128x256 tiles; A/B switch)
#ifndef W4A16_SM90_SK_RING_MIN
#define W4A16_SM90_SK_RING_MIN 131072
#endif

// The schedule of this thread's last sm90 launch (runtime/families.c; declared for the tests in
// runtime/internal.h): Params::streamk, Params::kpair, the split-K slices, stream-K's skew B
extern "C" thread_local int w4a16_sm90_last_streamk, w4a16_sm90_last_kpair, w4a16_sm90_last_split,
    w4a16_sm90_last_skew;

namespace w4a16_sm90 {

// ------------------------------------------------------------------------- configuration
template <int MODE_, int TN_, int TM_, int TK_, int CN_, int CM_, int SCHED_, int STAGES_, int NC_ = 2>
struct Cfg {
  static constexpr int MODE = MODE_, TN = TN_, TM = TM_, TK = TK_, CN = CN_, CM = CM_, STAGES = STAGES_;
  static constexpr bool kCoop = SCHED_ == W4A16_SCHEDULE_COOPERATIVE;
  static constexpr bool kZeros = MODE_ == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  static constexpr int kSub = kZeros ? 0 : 8;
  // consumer warpgroups: 2, or 4 for the cooperative schedule (twice the warps per scheduler, at 104
  // registers each: 64 rows a warpgroup, so TN = 256 and small TM). H100: 256x32x128 with four is
  // 3-11 % faster than with two and wins 28672x4096 at
  // M = 17..32; at M = 64 four and two tie (the consumers are not short of warps there).
  static constexpr int NC = NC_;
  static constexpr int kThreads = 128 * (NC + 1);
  static constexpr int kWgRows = kCoop ? TN / NC : TN;  // rows of N per consumer warpgroup
  static constexpr int R = kWgRows / 64;               // wgmma M blocks per warpgroup
  static constexpr int KT = TK / 64;                   // 16x64 packed blocks along K per stage
  static constexpr int K16 = TK / 16;                  // wgmma k steps per stage
  static constexpr int kCluster = CN * CM;
  static constexpr int kActBytes = TM * TK * 2;        // KT boxes of [TM rows x 128 bytes]
  static constexpr int kWBytes = TN * TK / 2;
  static constexpr int kGrMax = TK / 32;               // scale rows per stage (group 32)
  static constexpr int kRowBytes = TN * 2;             // one scale row of the tile
  static constexpr int kWOff = kActBytes;
  static constexpr int kSOff = kWOff + kWBytes;
  static constexpr int kZOff = kSOff + kGrMax * kRowBytes;
  static constexpr int kStageRaw = kZOff + (kZeros ? kGrMax * kRowBytes : 0);
  static constexpr int kStageBytes = (kStageRaw + 1023) / 1024 * 1024;
  // Epilogue staging: with kTmaStore (TM >= 64) TN/64 boxes of [TM rows x 128 bytes] in the
  // TMA 128-byte swizzle, stored by cp.async.bulk.tensor; else rows padded to TN + 8
  // elements (conflict-free 2-byte stores) and 16-byte stores by the threads.
  static constexpr bool kTmaStore = TM >= 64;
  static constexpr int kEpiStride = TN + 8;
  static constexpr int kEpiBufBytes = kTmaStore ? TM * TN * 2 : TM * kEpiStride * 2;
  static constexpr int kEpiBytes = (kCoop ? 1 : 2) * kEpiBufBytes;
  static constexpr int kEpiOff = STAGES * kStageBytes;
  static constexpr int kBarOff = kEpiOff + (kEpiBytes + 15) / 16 * 16;
  static constexpr int kSmemRaw = kBarOff + STAGES * 16 + 16 + 1024;  // + 2 order barriers, alignment slack
  static constexpr int kWarpsPerStage = kCoop ? 4 * NC : 4;        // consumer warps reading a stage
  // arrivals that free a stage: every local consumer thread that read it, plus one per
  // consumer warp of each other CTA of the cluster (their producers multicast into it)
  static constexpr int kEmptyCount = kWarpsPerStage * 32 + (kCluster - 1) * kWarpsPerStage;
  static constexpr int kMBand = 8;                                  // raster band (cluster rows)
  // two A-fragment buffers (conversion overlaps the previous wgmmas) where registers allow;
  // keep in step with generator/families/sm90.py consumer_registers()
  static constexpr int kRegsOverlap =
      R * TM / 2 + 2 * R * K16 * 4 + R * KT * 4 + R * K16 * (kZeros ? 2 : 1) + 40;
  static constexpr int kRegsSerial = kRegsOverlap - R * K16 * 4;  // one fragment buffer
  // Two CTAs per SM (so that the next kernel's CTA can be resident and prefetch its weights
  // while this one streams) for register-light tiles whose shared memory fits half an SM
  // (228 KB minus 1 KB reserved per CTA): 80 registers per thread at launch, the producer
  // keeps 48 and the consumers rise to 96 (128 x 48 + 256 x 96 = 384 x 80; at 24 the
  // producer spilled).
  // Keep in step with generator/families/sm90.py ctas_per_sm().
  static constexpr int kSmemHalfSm = 233472 / 2 - 1024;
  static constexpr int kCtasPerSm =
      (NC == 2 && kRegsSerial <= W4A16_SM90_LIGHT_REGS && kSmemRaw <= kSmemHalfSm) ? 2 : 1;
  // A one-CTA-per-SM tile (registers) asks for more than half an SM of shared memory even where
  // its stages need less, so that "shared memory <= kSmemHalfSm" tells the two-per-SM tiles
  // (the runtime's split rule can read it off the kernel descriptor's smem_bytes).
  static constexpr int kSmemBytes = kCtasPerSm == 1 && kSmemRaw <= kSmemHalfSm ? kSmemHalfSm + 1024 : kSmemRaw;
  // One CTA per SM: the registers a thread gets at launch (64K over kThreads, in units of 8: 168 for
  // 384 threads, 96 for 640), the producer gives back down to producer_regs() and the consumers
  // share the rest (setmaxnreg: 224, or 232 beside a 40-register producer, for two consumer
  // warpgroups; 104 for four).
  static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
  static constexpr int consumer_regs_beside(int producer) {
    const int share = (kLaunchRegs * kThreads - 128 * producer) / (128 * NC) / 8 * 8;  // in units of 8
    return kCtasPerSm == 2 ? 96 : share < 232 ? share : 232;
  }
  // Two fragment buffers fit the consumers' registers (1 CTA/SM: beyond ~208 ptxas serializes the
  // wgmmas, C7512)
  static constexpr bool kOverlapFits =
      kRegsOverlap <= (kCtasPerSm == 2 ? W4A16_SM90_OVERLAP2 : NC == 2 ? 208 : consumer_regs_beside(40) - 24);
  // Whether the kernel instance with scale chunks or without (the kernel's CHUNK) holds two fragment
  // buffers. A one-CTA-per-SM tile_k 256 tile where they fit (128x16x256) holds them only in its
  // chunked instance (the K pair) and converts by halves (halves_in) in the other: H100, the halves
  // with a 48-register producer take 0.97-0.99x the time on seven layers at M = 1..16 but 1.03x on
  // 8192x8192 (the K pair with chunks).
  // W4A16_SM90_OVERLAP_K256 = 2: two buffers in both instances; 0: in neither (A/B build switch).
  static constexpr bool overlap_in(bool chunk) {
    return kOverlapFits && (K16 < 16 || kCtasPerSm == 2 || W4A16_SM90_OVERLAP_K256 >= (chunk ? 1 : 2));
  }
  // Without two buffers, a tile_k 256 k-block is converted and issued in two halves of 8 k16 steps,
  // each half with its own wgmma group, in the registers of one block's fragments: the
  // conversion of one half runs while the other half's wgmmas are in flight (wgmma.wait_group 1
  // frees the half about to be overwritten), where the whole-block order drains every wgmma
  // before converting. H100, halves against the whole-block order: 128x32x256 1.023x,
  // 128x64x256 1.016x geomean speed-up over 40 problems of M = 16..128; the tile_k 128 tiles (4
  // steps a half) gain nothing (256x16x128, 256x32x128 0.993x) and keep the whole-block order.
  static constexpr bool halves_in(bool chunk) { return !overlap_in(chunk) && TK_ == 256 && W4A16_SM90_HALVES != 0; }
  // The producer's registers after setmaxnreg.dec: 48 (at 40 ptxas spills 12-48 bytes in the
  // producer and the consumers' set-up of most tiles), but 40 with four consumer
  // warpgroups (their 104 registers either way) and where a one-CTA-per-SM tile's consumers hold two
  // fragment buffers of 16 k16 steps (128x16x256, chunked): at the 224 registers a 48-register
  // producer leaves them, ptxas serializes their wgmmas (C7512).
  static constexpr int producer_regs(bool chunk) {
    return NC == 4 || (kCtasPerSm == 1 && K16 >= 16 && overlap_in(chunk)) ? 40 : 48;
  }
  static constexpr int consumer_regs(bool chunk) { return consumer_regs_beside(producer_regs(chunk)); }
  // Post-scaled mainloop (FINEGRAINED_SCALE_ONLY, group >= TK at run time, small TM): the codes
  // go into the wgmma biased and exact (MAGIC + q, no subtraction, no scale: 7 instructions per
  // packed word instead of 15), one more wgmma per k16 step against a constant -(MAGIC + 8)
  // fragment removes the bias, each k-block accumulates into its own fp32 partial and the group
  // scale is applied to that partial (one FFMA per accumulator per k-block); the fragments of
  // one k16 step at a time cycle through a ring of kRing register slots, so conversion runs
  // while the wgmmas of the previous steps are in flight (only the block's last kRing - 1 steps
  // drain before its partial is folded). The partial costs R x TM / 2 registers: small TM only,
  // and one CTA per SM (at the 96 registers of two CTAs per SM, and with a ring of 4 slots,
  // ptxas serializes the wgmmas: C7512, insufficient registers; so it does for 128x16x256, hence
  // TK <= 128: a group of 128 with 256 k per stage would not take this loop anyway).
  // Not with four consumer warpgroups: at their 104 registers both loops compiled into one kernel
  // spill (256x32x128: 140 bytes) and it runs 1.1-1.6x slower than the pre-scaled loop.
  // The K-pair mode (Params::kpair) for cooperative 1x1x1 tiles: rank 1's accumulators go into a
  // stage of rank 0, or in two halves (kPairRing, below) where they exceed a stage; it uses the two
  // order barriers, idle in this schedule. (kPairRing: tiles with the tensor-store epilogue only,
  // which adds rank 1's accumulators as it stages the tile: added in registers first, 128x256x64
  // spilled 432 bytes)
  static constexpr bool kPairRing = TN * TM * 4 > kStageBytes;
  // kPairRing, in two halves: the first half of rank 1's pieces (fragment order, nthr x 16 bytes a
  // piece) goes into rank 0's epilogue buffer (fp32 half a tile: the bytes of the staged 16-bit
  // tile), unused by rank 0 until its epilogue, as soon as rank 1's mainloop ends; the second into the
  // kPairLate stages of rank 0's ring that its mainloop releases for good first (from stage h %
  // STAGES on, h its k-blocks, around the ring). Rank 0 runs Params::kpair - 1 more k-blocks than rank
  // 1, so that both move while its mainloop runs, and stages its output tile in the kPairOut stages
  // after those (TN / 64 boxes of TM x 128 bytes, kPairBoxes a stage), leaving the first half in
  // place until its epilogue has read it.
  static constexpr int kPairPieces = R * (TM / 8);
  static constexpr int kPairLate = (TN * TM * 2 + kStageBytes - 1) / kStageBytes;
  static_assert(kStageBytes >= TM * 128, "a stage holds a box of the output tile (TK >= 64)");
  static constexpr int kPairBoxes = kStageBytes / (TM * 128);
  static constexpr int kPairOut = (TN / 64 + kPairBoxes - 1) / kPairBoxes;
  static constexpr bool kPairOk =
      kCoop && kCluster == 1 && (kPairRing ? kTmaStore && kPairLate + kPairOut <= STAGES : true);
  // Stream-K: the last partial of a tile this CTA began comes into the stage ring (from stage 0,
  // fragment order) by bulk copies of the flag warp, each stage's part as soon as
  // the mainloop has released that stage for good, and the epilogue adds it as it stages the tile:
  // cooperative tiles with the tensor-store epilogue whose fp32 tile fits the ring, of 128 KB (the
  // 128x256 tiles). H100: 128x256x64 0.983-0.998x the time
  // of the global reads on seven stream-K problems of M = 256..1024 (2x1x1: 0.989-0.996x);
  // 128x128x128 (64 KB) 0.988-1.003x and 128x64x256 (32 KB) 0.987-1.011x over three forms of the
  // handoff, so those read from memory
  static constexpr bool kSkRing = W4A16_SM90_SK_RING && W4A16_SM90_FLAG_WARP && kCoop && kTmaStore &&
                                  TN * TM * 4 >= W4A16_SM90_SK_RING_MIN && TN * TM * 4 <= STAGES * kStageBytes;
  static constexpr bool kPost =
      MODE_ == W4A16_FINEGRAINED_SCALE_ONLY && TM_ <= 32 && kCtasPerSm == 1 && kCoop && NC == 2 && TK_ <= 128;
  static constexpr int kRing = 2;
  // Stream-K with data-parallel tiles first (Params::streamk > 1; the launch asks for them only
  // here): the tiles of 64 tokens or more, which take stream-K over more than a wave of tiles. Not
  // compiled into the others, nor into the zero-point cluster tiles: the walk's extra branch made
  // ptxas spill there (128x16x256's producer 148 bytes, zero-point 128x256x64 2x1x1 56 bytes).
  static constexpr bool kSkDp = TM_ >= 64 && !(kZeros && kCluster > 1);
  // k-blocks whose scale (zero) rows one copy brings where the launch chunks them (Params::s2d bit
  // 1, the kernel's CHUNK): the tile_k 256 tiles of 16 or 32 tokens only, which otherwise take a bulk
  // copy a row (two a k-block for groups of 128; see s2d_min_rows). Four (eight rows at groups of
  // 128: kGrMax) or fewer: at most STAGES - 1 and not a divisor of STAGES, so that no two chunks of a
  // unit begin STAGES k-blocks apart (see the producer). Chunks for the other tiles (already one
  // copy of the 2-D map a k-block) make them 1-3 % slower.
  static constexpr int schunk_of(int c) { return c < 2 ? 1 : (c <= STAGES_ - 1 && STAGES_ % c != 0) ? c : schunk_of(c - 1); }
  // (Not the 8-token tile: its chunked instance spills 72 bytes in ptxas -v.)
  static constexpr int kSChunk = TK_ == 256 && TM_ >= 16 && TM_ <= 32 ? schunk_of(4) : 1;

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
};

struct Params {
  const void *scales;
  const void *zeros;
  const void *bias;
  void *d;
  float *ws;
  int64_t ldd;
  int m, n, k;
  int group;
  int gshift;  // log2(group) when group < TK (then a power of two), else unused
  int split_k;
  // != 0: stream-K (split_k is 1), with D = (streamk - 1) x G tiles data-parallel first: tiles
  // 0 .. D - 1 tile by tile (cluster c takes c, c + G, ...), then the I = (tiles - D) x k-blocks
  // iterations of the others (tile-major, I < 2^31) in G = gridDim / cluster parts, part c of
  // sk_base + 1 iterations for c < A, sk_base - 1 for c >= G - B, sk_base between, with sk_rem =
  // A | B << 16 (sk_start; B = 0: the first I % G parts one longer, A = I % G); ws holds one
  // partial tile per CTA and flags one 32-bit word per CTA (see "Stream-K" above)
  int streamk;
  int sk_base, sk_rem;
  // != 0: K split in two across the two CTAs of a cluster (Cfg::kPairOk, launched with cluster
  // dimension 2): CTA 2 t + r runs tile t's k-blocks [r h, h + r (k - h)) with h = kpair_h() =
  // min(floor((k + kpair) / 2), k - 1), rank 0 kpair - 1 k-blocks ahead of rank 1 (the lead), and
  // rank 1 hands its accumulators to rank 0 through shared memory (no workspace, no flags)
  int kpair;
  uint32_t token;      // this launch's flag value (never 0)
  uint32_t *flags;
  // != 0: early trigger, and the weights of the first stages are loaded before griddepcontrol.wait:
  // min(STAGES, prefetch) of them (> 0) or min(STAGES, max(2, k-blocks / -prefetch)) (< 0)
  int prefetch;
  // != 0: tm_a is 3-D ([K/64 chunks][M rows][64 k], chunk stride 128 bytes), so one copy brings a
  // full token tile's KT boxes of a stage (same shared layout as KT 2-D copies)
  int a3d;
  // != 0 (only where M < TM: the one token tile is the part-full one): tm_a_tail is 3-D too (box
  // [KT][tail_rows][64 k]), a stage's activations by one copy, its KT chunks tail_rows * 128 bytes
  // apart in shared memory (the consumers' wgmma descriptors step by that, a launch-wide value so
  // that it stays in uniform registers; the rows a chunk's descriptor reads beyond them, the next
  // chunk's or stale ones, only reach wgmma columns of tokens >= M, never stored)
  int a3d_tail;
  // != 0: a stage's scale (zero) rows by one copy of the 2-D maps tm_s (tm_z), [G groups] x [N], box
  // [s2d >> 8 rows] x [tile_n], instead of one bulk copy a row; bit 1 (chunked): one copy brings the
  // rows of Cfg::kSChunk k-blocks, with a unit's k-blocks 0, kSChunk, 2 kSChunk, ... into that
  // stage's scale rows (from the group of its first k), and the chunk's other k-blocks read them
  // there (see "Scale rows by chunks" in launch(); the group a power of two). Kept in one field: two
  // more Params fields made ptxas spill in the 40-register producer of the one-CTA-per-SM tiles
  int s2d;
  // rows of the last token tile's boxes (tm_a_tail, tm_d_tail: M - its m0 rounded up to 8, at most
  // TM; TM / CN with activation multicast); that tile's stages count only these bytes
  int tail_rows;
  float alpha;
};

template <typename T> struct Pk;
template <> struct Pk<__nv_bfloat16> {
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
  static __device__ __forceinline__ uint16_t from_float(float v) {
    __nv_bfloat16 h = __float2bfloat16_rn(v);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  // lo in the low half (the lower address)
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  static __device__ __forceinline__ float to_float(uint16_t v) {
    return __bfloat162float(*reinterpret_cast<__nv_bfloat16 *>(&v));
  }
  static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};
template <> struct Pk<__half> {
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
  static __device__ __forceinline__ uint16_t from_float(float v) {
    __half h = __float2half_rn(v);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  // lo in the low half (the lower address)
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  static __device__ __forceinline__ float to_float(uint16_t v) {
    return __half2float(*reinterpret_cast<__half *>(&v));
  }
  static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};

// The packed word of k16 step k16 in a lane's 16-byte load of its 16x64 block (k16 compile-time).
static __device__ __forceinline__ uint32_t word_of(const uint4 &v, int k16) {
  return (k16 & 3) == 0 ? v.x : (k16 & 3) == 1 ? v.y : (k16 & 3) == 2 ? v.z : v.w;
}

// One work unit: a CTA tile and a K slice. Slice z of split covers the k-blocks
// [z * k_iters / split, (z + 1) * k_iters / split): any split <= k_iters works (uneven
// slices differ by at most one k-block), so the runtime can fill the SMs exactly.
struct Unit {
  int n0, m0, kb0, kn, z;
  int sk_last;   // stream-K, the unit that starts its tile without finishing it: the last cluster
                 // whose K iterations finish the tile (its partials are added here); else -1
  bool contrib;  // stream-K, a unit that finishes a tile another cluster started: partials only
};

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
// iterations, cut at tile boundaries (a cluster's first unit may finish a tile begun by the
// clusters before it, its last may begin one that the clusters after it finish). Only the
// position is state; the rest is re-derived from the parameters per unit (32-bit arithmetic: the
// producer runs in 48 registers).
struct Walk {
  // tile by tile: the next unit and the unit count; stream-K: iterations, it < 0 while data-parallel
  // tiles remain (-it of them: Params::streamk - 1 at the start)
  int it, end;
};

// Stream-K: the first iteration of part c of g (Params::sk_base, sk_rem = A | B << 16): parts c < A
// hold sk_base + 1 iterations, the last B parts sk_base - 1, the others sk_base. The launch makes the
// parts shrink with the CTA index where they are long (B > 0, see launch): a launch's CTAs start in
// index order as the previous grid's leave, so the first ones have their prefetched stages in
// before the previous grid completes and the last ones do not.
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
static __device__ __forceinline__ int kpair_h(const Params &p, int k) {
  const int h = (k + p.kpair) / 2;
  return h < k ? h : k - 1;
}

template <class C>
static __device__ __forceinline__ Walk walk_begin(const Params &p, int cid) {
  Walk w;
  if (p.kpair) {
    w.it = 0;
    w.end = 1;
  } else if (p.streamk) {
    const int g = (int)(gridDim.x / C::kCluster);
    w.it = sk_start(p, cid, g);
    w.end = sk_start(p, cid + 1, g);
    if (C::kSkDp && p.streamk > 1) w.it = 1 - p.streamk;
  } else {
    w.it = cid;
    w.end = ((p.n + C::TN * C::CN - 1) / (C::TN * C::CN)) * ((p.m + C::TM * C::CM - 1) / (C::TM * C::CM)) * p.split_k;
  }
  return w;
}

template <class C>
static __device__ __forceinline__ bool walk_next(const Params &p, int cn, int cm, Walk &w, Unit &u) {
  if (w.it >= w.end) return false;  // (data-parallel tiles: it < 0 <= end)
  const int n_cl = (p.n + C::TN * C::CN - 1) / (C::TN * C::CN);  // the last may be part-full (N tail)
  const int m_cl = (p.m + C::TM * C::CM - 1) / (C::TM * C::CM);
  const int k = (p.k + C::TK - 1) / C::TK;  // the last k-block may be part-full (K tail)
  if (C::kSkDp && w.it < 0) {
    // stream-K's data-parallel tiles first (every cluster the same number, so the stream-K parts
    // after them keep their order: a part's first unit, which may finish a tile another cluster
    // began, before its last, which may begin one); then the part's first iteration, re-derived
    const int g = (int)(gridDim.x / C::kCluster), cid = (int)(blockIdx.x / C::kCluster);
    u = decode_unit<C>(cid + (p.streamk - 1 + w.it) * g, n_cl, m_cl, k, 1, cn, cm);
    if (++w.it == 0) w.it = sk_start(p, cid, g);
    return true;
  }
  if (p.kpair) {
    // one unit: tile blockIdx / 2, rank 0 the first kpair_h k-blocks, rank 1 the rest
    const int rank = (int)(blockIdx.x & 1u), h = kpair_h(p, k);
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
  u = decode_unit<C>(C::kSkDp ? t + (p.streamk - 1) * (int)(gridDim.x / C::kCluster) : t, n_cl, m_cl, k, 1, cn, cm);
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

// ------------------------------------------------------------------------- the kernel
// CHUNK: the scale rows come by chunks (Params::s2d bit 1; Cfg::kSChunk > 1 only). A kernel of its
// own: compiled into the one kernel, the chunk code costs the launches without chunks 2-4 %.
template <typename T, class C, bool CHUNK>
__global__ void __launch_bounds__(C::kThreads, C::kCtasPerSm)
    w4a16_sm90_kernel(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_w,
                      const __grid_constant__ CUtensorMap tm_d, const __grid_constant__ CUtensorMap tm_a_tail,
                      const __grid_constant__ CUtensorMap tm_d_tail, const __grid_constant__ CUtensorMap tm_s,
                      const __grid_constant__ CUtensorMap tm_z, const Params p) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kOv = C::overlap_in(CHUNK), kHv = C::halves_in(CHUNK);  // this instance's k-block order
  // named barriers: 0 the CTA, 1 (cooperative) or 2 + c (pingpong) the consumers' epilogue,
  // kFlagBar (+ c) a contributor's partial handed to the flag warp, kOwnBar (+ c) the flag warp's
  // word that the partials a tile's owner adds are in
  constexpr uint32_t kFlagBar = 4, kOwnBar = 6;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t bar_full = base + C::kBarOff;
  const uint32_t bar_empty = bar_full + C::STAGES * 8;
  const uint32_t bar_order = bar_empty + C::STAGES * 8;  // pingpong: turns of consumer warpgroups 0, 1
  // wait until the stage of ring position pq is free: its use STAGES positions back released (on the
  // first pass, a fresh barrier's phase "-1", at once). A parity wait is only valid while the barrier
  // is at most one phase short of the awaited one: the producer's next position, or (K pair, stream-K
  // ring) positions pos .. pos + STAGES - 1 once every load up to pos - 1 is issued
  auto wait_free = [&](uint32_t pq) { mbar_wait(bar_empty + 8 * (pq % C::STAGES), ((pq / C::STAGES) & 1u) ^ 1u); };
  const int tid = threadIdx.x;
  const int wg = tid / 128;
  const uint32_t crank = C::kCluster > 1 ? cluster_ctarank() : 0u;
  const int cn = (int)(crank % C::CN);
  const int cm = (int)(crank / C::CN);

  if (tid == 0) {
    for (int s = 0; s < C::STAGES; ++s) {
      mbar_init(bar_full + 8 * s, 1);
      mbar_init(bar_empty + 8 * s, C::kEmptyCount);
    }
    // K pair: "rank 0's stages are free" (rank 1's) and "rank 1's accumulators are in" (rank 0's)
    // (stream-K, kSkRing: bar_order is "the producer has issued every load", bar_order + 8 "the last
    // partial is in")
    const uint32_t order_count = (C::kPairOk && p.kpair) || (C::kSkRing && p.streamk) ? 1u : 128u;
    mbar_init(bar_order, order_count);
    mbar_init(bar_order + 8, order_count);
    fence_barrier_init();
  }
  if (C::kCluster > 1 || (C::kPairOk && p.kpair)) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  // Launched with programmatic stream serialization: the set-up above overlaps the
  // previous kernel. The grid is persistent (every CTA resident from the start), so letting
  // the next grid launch at once cannot starve this one: its CTAs take the room ours leave
  // (or the second slot of an SM, kCtasPerSm = 2), may read their own weights, and wait in
  // their griddepcontrol.wait for this grid's completion. With p.prefetch the producer
  // issues the weight (scale, zero) copies of its first stages before its wait (w4a16.h,
  // "Ordering": the kernel before does not write them) and everything else waits; without
  // it (W4A16_SM90_PREFETCH=0) every thread waits first, then lets the next grid launch.
  if (p.prefetch) {
    griddep_launch_dependents();
  } else {
    griddep_wait();
    griddep_launch_dependents();
  }

  const int cid = blockIdx.x / C::kCluster;
  const Walk walk0 = walk_begin<C>(p, cid);
  // the token tile that holds the last row of M, without being full: its own tensor maps
  auto is_tail = [&](const Unit &u) { return u.m0 < p.m && u.m0 + C::TM > p.m; };

  if (wg == 0) {
    // ===================================================================== producer
    setmaxnreg_dec<C::producer_regs(CHUNK)>();
    if (tid == 0) {
      tma_prefetch_desc(&tm_a);
      tma_prefetch_desc(&tm_w);
      if (p.s2d) tma_prefetch_desc(&tm_s);
      if (p.s2d && C::kZeros) tma_prefetch_desc(&tm_z);
      if (p.tail_rows != C::TM / C::CN) tma_prefetch_desc(&tm_a_tail);
      const uint16_t mask_a = (uint16_t)(((1u << C::CN) - 1u) << (cm * C::CN));
      uint16_t mask_w = 0;
#pragma unroll
      for (int y = 0; y < C::CM; ++y) mask_w |= (uint16_t)(1u << (y * C::CN + cn));
      const int gr_rows = p.group < C::TK ? C::TK / p.group : 1;
      // scale rows by chunks (Params::s2d bit 1, Cfg::kSChunk; cooperative schedule only, whose
      // consumers release the stages in position order): a chunk's rows go into the stage of its
      // first k-block; before other rows go to the stage of position pos, the chunk whose rows the
      // stage took at pos - STAGES (if one began there) must be released, up to pos - STAGES +
      // kSChunk - 1, beyond what the wait for pos - STAGES covers. Within a unit no chunk begins
      // STAGES k-blocks after another (kSChunk does not divide STAGES), so only the first STAGES
      // k-blocks of a unit wait (conservatively)
      constexpr int ch = C::kSChunk;
      auto wait_scale_readers = [&](uint32_t pos) {
        if (pos >= (uint32_t)C::STAGES) {
          const uint32_t l = pos - C::STAGES + ch - 1;
          mbar_wait(bar_empty + 8 * (l % C::STAGES), (l / C::STAGES) & 1u);
        }
      };
      // k-block kb of unit u at position pos: whether it brings scale rows (a chunk's first k-block)
      auto scale_step = [&](int kb, uint32_t pos) -> bool {
        if (!CHUNK) return true;
        if (kb % ch != 0) return false;
        if (kb < C::STAGES) wait_scale_readers(pos);
        return true;
      };
      // the bytes of k-block kb of unit u (its activation rows, all CN slices; scale rows where it
      // begins a chunk)
      auto tx_of = [&](const Unit &u, bool srows) -> uint32_t {
        return (uint32_t)(C::KT * 128 * C::CN * (is_tail(u) ? p.tail_rows : C::TM / C::CN)) + (uint32_t)C::kWBytes +
               (srows ? (uint32_t)((CHUNK ? p.s2d >> 8 : gr_rows) * C::kRowBytes * (C::kZeros ? 2 : 1))
                      : 0u);
      };
      const char *sc = (const char *)p.scales;
      const char *zr = (const char *)p.zeros;
      // the copies of k-block kb of unit u into stage st (barrier fb): activations ...
      auto load_act = [&](const Unit &u, int kb, uint32_t st, uint32_t fb) {
        const int kg = (u.kb0 + kb) * C::TK;
        const CUtensorMap *map = is_tail(u) ? &tm_a_tail : &tm_a;
        if (C::CN == 1 && C::KT > 1 && (is_tail(u) ? p.a3d_tail : p.a3d)) {
          tma_load_3d(st, map, fb, 0, u.m0, kg / 64);
          return;
        }
#pragma unroll
        for (int h = 0; h < C::KT; ++h) {
          if (C::CN == 1) {
            tma_load_2d(st + h * C::TM * 128, map, fb, kg + 64 * h, u.m0);
          } else {
            const int rows = C::TM / C::CN;
            tma_load_2d_multicast(st + h * C::TM * 128 + cn * rows * 128, map, fb, kg + 64 * h,
                                  u.m0 + cn * rows, mask_a);
          }
        }
      };
      // ... and packed weights, scales (zeros)
      auto load_w = [&](const Unit &u, int kb, uint32_t st, uint32_t fb, bool srows) {
        const int kg = (u.kb0 + kb) * C::TK;
        const int wk = (u.kb0 + kb) * C::KT * 128;
        if (C::kW3d) {
          tma_load_3d(st + C::kWOff, &tm_w, fb, 0, (u.kb0 + kb) * C::KT, u.n0 / 16);
        } else if (C::CM == 1) {
          tma_load_2d(st + C::kWOff, &tm_w, fb, wk, u.n0 / 16);
        } else {
          const int rb = C::TN / 16 / C::CM;
          tma_load_2d_multicast(st + C::kWOff + cm * rb * C::KT * 512, &tm_w, fb, wk, u.n0 / 16 + cm * rb,
                                mask_w);
        }
        const int g0 = kg / p.group;
        if (p.s2d) {
          if (!srows) return;  // the chunk's rows came with its first k-block
          tma_load_2d(st + C::kSOff, &tm_s, fb, u.n0, g0);
          if (C::kZeros) tma_load_2d(st + C::kZOff, &tm_z, fb, u.n0, g0);
          return;
        }
        for (int r = 0; r < gr_rows; ++r) {
          const size_t off = ((size_t)(g0 + r) * p.n + u.n0) * 2;
          bulk_load(st + C::kSOff + r * C::kRowBytes, sc + off, C::kRowBytes, fb);
          if (C::kZeros) bulk_load(st + C::kZOff + r * C::kRowBytes, zr + off, C::kRowBytes, fb);
        }
      };
      // Prefetch: the first npre stages (positions 0..npre-1 = k-blocks 0..npre-1 of this
      // CTA's first unit; every stage is free) get their expect_tx and weight copies before
      // griddepcontrol.wait, their activation copies after it. The consumers wait for the
      // stage's whole byte count, so they see no stage before its activations have landed.
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
          const bool srows = !p.s2d || scale_step(kb, (uint32_t)kb);
          mbar_arrive_expect_tx(bar_full + 8 * kb, tx_of(u, srows));
          load_w(u, kb, base + kb * C::kStageBytes, bar_full + 8 * kb, srows);
        }
      }
      griddep_wait();
      if (npre > 0) {
        for (int kb = 0; kb < npre; ++kb) load_act(u_first, kb, base + kb * C::kStageBytes, bar_full + 8 * kb);
      }
      uint32_t pos = 0;
      Walk w = walk0;
      Unit u;
      while (walk_next<C>(p, cn, cm, w, u)) {
        for (int kb = 0; kb < u.kn; ++kb, ++pos) {
          if (pos < (uint32_t)npre) continue;  // issued above
          const uint32_t s = pos % C::STAGES;
          wait_free(pos);
          const uint32_t st = base + s * C::kStageBytes;
          const uint32_t fb = bar_full + 8 * s;
          const bool srows = !p.s2d || scale_step(kb, pos);
          mbar_arrive_expect_tx(fb, tx_of(u, srows));
          load_act(u, kb, st, fb);
          load_w(u, kb, st, fb, srows);
        }
      }
      // stream-K (kSkRing): every load issued, so that the flag warp's waits for the stages' release
      // are one phase ahead (see there)
      if (C::kSkRing && p.streamk) mbar_arrive_local(bar_order);
      if (C::kPairOk && p.kpair && (blockIdx.x & 1u) == 0) {
        // K pair, rank 0: the stage of position pos (= this CTA's k-blocks) is free for good once its
        // last use, STAGES positions back, is released, a few k-blocks before the mainloop ends:
        // expect rank 1's accumulators there and tell rank 1 (its barrier, phase 0)
        // (kPairRing: the kPairLate stages of the second half, the first to be free for good: those of
        // positions pos - STAGES .. , each free once that use is released)
        for (int q = 0; q < (C::kPairRing ? C::kPairLate : 1); ++q) wait_free(pos + (uint32_t)q);
        if (CHUNK) wait_scale_readers(pos);  // its scale rows may serve k-blocks after pos - STAGES
        mbar_arrive_expect_tx(bar_order + 8, (uint32_t)(C::TN * C::TM * 4));
        mbar_arrive_cluster(bar_order, 1u);
      }
    } else if (tid >= 32 && tid < 64 && p.streamk && W4A16_SM90_FLAG_WARP) {
      // ===================================================================== flag warp (stream-K)
      // The flags of this CTA's stream-K units, off the consumers' path. A partial the consumers
      // publish: they store it and arrive on named barrier kFlagBar (+ c: pingpong warpgroup c, units
      // j with j % 2 = c), this warp waits there and one lane releases the flag (st.release.gpu:
      // cumulative over the stores the barrier ordered before it), so the consumers go on to their
      // next unit at once, where the release's memory barrier held a whole warpgroup until the
      // partial's stores were acknowledged. A tile this CTA began: lane q waits for the flag of
      // cluster cid + 1 + q (acquire) and clears it (a graph replay reuses the token; only this CTA
      // reads it), and the warp arrives on kOwnBar (+ c), where the consumers wait before reading the
      // partials: the flags' round trips run during the consumers' mainloop, not after it. With
      // kSkRing, lane 0 then brings the last contributor's partial into the ring (below).
      griddep_wait();  // flags are this grid's only after the previous one completed
      const uint32_t nthr_bar = (C::kCoop ? 128 * C::NC : 128) + 32;
      const int lane = tid & 31;
      Walk w = walk0;
      Unit u;
      uint32_t pos = 0;  // (kSkRing) this CTA's k-blocks so far, as the producer counts them
      for (int j = 0; walk_next<C>(p, cn, cm, w, u); ++j) {
        const uint32_t cw = C::kCoop ? 0u : (uint32_t)(j & 1);
        pos += (uint32_t)u.kn;
        if (u.contrib) {
          named_bar_sync(kFlagBar + cw, nthr_bar);
          if (lane == 0) st_release_gpu(p.flags + blockIdx.x, p.token);
        } else if (u.sk_last >= 0) {
          // (acquire polls: relaxed ones and one fence.acq_rel after them are 1 % slower, the fence
          // holding the handoff)
          // (kSkRing: lanes 1.. wait for the flags of all but the last contributor, whose pieces lie
          // inside the tile and finish with this CTA; then lane 0 brings the last one's partial into
          // the ring, while the consumers read the others')
          const int first = C::kSkRing ? 1 : 0;
          for (int q = lane - first; q >= 0 && q < u.sk_last - cid - first; q += 32 - first) {
            uint32_t *f = p.flags + (cid + 1 + q) * C::kCluster + crank;
            while (ld_acquire_gpu(f) != p.token) __nanosleep(32);
            *f = 0u;
          }
          __syncwarp();
          named_bar_arrive(kOwnBar + cw, nthr_bar);
          if (C::kSkRing && lane == 0) {
            // The partial of the cluster that finishes the tile (sk_last: its piece was its first
            // unit, in long ago) into the ring from stage 0, each stage's part once the stage is free
            // for good (its last use, STAGES positions back, released), in the order the stages free.
            // This unit is the CTA's last: once the producer has issued every load (bar_order), each
            // wait is one phase ahead, as a parity wait must be. The contributor's plain stores,
            // acquired, are ordered before the copies' reads (proxy fence).
            constexpr uint32_t kP = (uint32_t)(C::TN * C::TM * 4);
            uint32_t *f = p.flags + u.sk_last * C::kCluster + crank;
            while (ld_acquire_gpu(f) != p.token) __nanosleep(32);
            *f = 0u;
            fence_proxy_async_global();
            const char *src = reinterpret_cast<const char *>(p.ws) + (size_t)(u.sk_last * C::kCluster + crank) * kP;
            mbar_arrive_expect_tx(bar_order + 8, kP);
            mbar_wait(bar_order, 0);
            for (int q = 0; q < C::STAGES; ++q) {
              const uint32_t pq = pos + (uint32_t)q, sq = pq % C::STAGES;
              wait_free(pq);
              if (sq * C::kStageBytes < kP) {
                const uint32_t off = sq * C::kStageBytes, rest = kP - off;
                bulk_load(base + off, src + off, rest < (uint32_t)C::kStageBytes ? rest : (uint32_t)C::kStageBytes,
                          bar_order + 8);
              }
            }
          }
        }
      }
    }
    __syncwarp();
  } else {
    // ===================================================================== consumers
    setmaxnreg_inc<C::consumer_regs(CHUNK)>();
    griddep_wait();  // before the epilogue's global reads (bias) and writes (D, partials)
    const int c = wg - 1;
    const int warp = (tid / 32) & 3;
    const int lane = tid & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int rowbase = C::kCoop ? c * C::kWgRows : 0;
    const int nthr = C::kCoop ? 128 * C::NC : 128;
    const int ltid = C::kCoop ? tid - 128 : tid - 128 * (c + 1);
    const uint32_t epi_bar = C::kCoop ? 1u : 2u + (uint32_t)c;
    const uint32_t epi = base + C::kEpiOff + (C::kCoop ? 0 : c * C::kEpiBufBytes);
    const bool small_group = p.group < C::TK;
    // free a stage: every thread that read it arrives locally; lane 0 of each warp
    // arrives on the other CTAs of the cluster after the warp's reads (__syncwarp)
    auto release = [&](uint32_t st_idx) {
      mbar_arrive_local(bar_empty + 8 * st_idx);
      if (C::kCluster > 1) {
        __syncwarp();
        if (lane == 0) {
#pragma unroll
          for (int q = 0; q < C::kCluster; ++q)
            if (q != (int)crank) mbar_arrive_cluster(bar_empty + 8 * st_idx, q);
        }
      }
    };

    int j = 0;          // this CTA's unit counter
    uint32_t mine = 0;  // mainloops this warpgroup has run (pingpong turn parity)
    uint32_t pos_next = 0;  // the producer's stage position at the start of unit j
    Walk w = walk0;
    Unit u;
    for (; walk_next<C>(p, cn, cm, w, u); ++j) {
      const uint32_t pos0 = pos_next;
      pos_next += (uint32_t)u.kn;
      if (!C::kCoop && (j & 1) != c) continue;
      const int kb_per = u.kn;
      // the distance of the stage's activation chunks (64 k each) in 16-byte units: TM rows, or the
      // tail rows where the (only) token tile came by one 3-D copy (Params::a3d_tail)
      const uint32_t chunk16 = (uint32_t)((p.a3d_tail ? p.tail_rows : C::TM) * 8);
      if (!C::kCoop) {
        // warpgroup 0's mainloop i follows warpgroup 1's mainloop i-1; 1's i follows 0's i
        if (c == 1) {
          mbar_wait(bar_order + 8, mine & 1u);
        } else if (mine > 0) {
          mbar_wait(bar_order, (mine - 1) & 1u);
        }
      }
      ++mine;

      float acc[C::R][C::TM / 2];
#pragma unroll
      for (int r = 0; r < C::R; ++r)
#pragma unroll
        for (int i = 0; i < C::TM / 2; ++i) acc[r][i] = 0.f;

      // k-block step: wait for the stage, read packed weights and scales, convert into
      // A-fragment buffer B, issue the wgmmas. With kOv the conversion of block kb
      // runs while the wgmmas of block kb-1 are in flight (two fragment buffers,
      // wgmma.wait_group 1); with kHv each half of the block waits only for the wgmmas of
      // the same half of block kb-1; otherwise the previous wgmmas are drained first.
      uint32_t prev_s = 0;
      // the scale (zero) rows of k-block kb: in the stage of its chunk's first k-block, rows from
      // that k-block's group on (Params::s2d bit 1; groups of at most TK: TK / group rows a k-block)
      auto srow = [&](int kb) -> uint32_t {
        const int cs = kb - kb % C::kSChunk;
        const uint32_t sst = base + ((pos0 + (uint32_t)cs) % C::STAGES) * C::kStageBytes;
        return sst + C::kSOff + (uint32_t)(((kb - cs) * (C::TK >> p.gshift)) * C::kRowBytes);
      };
      // wait for k-block kb's stage; its packed weight fragments (one 16-byte load per 16x64
      // block) into wq; returns the stage index
      auto stage_in = [&](int kb, uint4 (&wq)[C::R][C::KT]) -> uint32_t {
        const uint32_t pos = pos0 + kb;
        const uint32_t s = pos % C::STAGES;
        mbar_wait(bar_full + 8 * s, (pos / C::STAGES) & 1u);
        const uint32_t st = base + s * C::kStageBytes;
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int kt = 0; kt < C::KT; ++kt)
            wq[r][kt] = lds128(st + C::kWOff + (((rowbase >> 4) + r * 4 + warp) * C::KT + kt) * 512 + lane * 16);
        return s;
      };
      uint32_t a[kOv ? 2 : 1][C::R][C::K16][4];  // fragment buffers (overlap, halves)
      auto kstep = [&](auto buf, int kb) {
        constexpr int B = kOv ? decltype(buf)::value : 0;
        uint32_t a_local[C::R][C::K16][4];  // whole-block order: fragments live within one step
        auto &frag = kOv || kHv ? a[B] : a_local;
        uint4 wq[C::R][C::KT];
        const uint32_t s = stage_in(kb, wq);
        const uint32_t st = base + s * C::kStageBytes;
        const uint32_t sr = CHUNK ? srow(kb) : st + C::kSOff;
        // scales (zeros) of rows g and g+8, per pair of k16 steps (a group spans >= 32 k)
        uint32_t s2[C::R][C::K16 / 2][2];
        uint32_t z2[C::R][C::K16 / 2][2];
#pragma unroll
        for (int jj = 0; jj < C::K16 / 2; ++jj) {
          const int gr = small_group ? ((jj * 32) >> p.gshift) : 0;
#pragma unroll
          for (int r = 0; r < C::R; ++r) {
            const uint32_t a0 = sr + gr * C::kRowBytes + (rowbase + r * 64 + warp * 16 + g) * 2;
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
        // the A fragment of row block r, step k16: dequantized, scaled (and shifted by the zero)
        auto convert = [&](int r, int k16, uint32_t (&f)[4]) {
          const uint4 v = wq[r][k16 >> 2];
          const uint32_t w = word_of(v, k16);
          uint32_t q[4];
          Pk<T>::template cvt<C::kSub>(w, q);
          const uint32_t slo = s2[r][k16 >> 1][0], shi = s2[r][k16 >> 1][1];
          if (C::kZeros) {
            const uint32_t zlo = z2[r][k16 >> 1][0], zhi = z2[r][k16 >> 1][1];
            f[0] = Pk<T>::fma(q[0], slo, zlo);
            f[1] = Pk<T>::fma(q[1], shi, zhi);
            f[2] = Pk<T>::fma(q[2], slo, zlo);
            f[3] = Pk<T>::fma(q[3], shi, zhi);
          } else {
            f[0] = Pk<T>::mul(q[0], slo);
            f[1] = Pk<T>::mul(q[1], shi);
            f[2] = Pk<T>::mul(q[2], slo);
            f[3] = Pk<T>::mul(q[3], shi);
          }
        };
        // steps LO .. HI - 1 of the block: fragments converted into frag, then their wgmmas as
        // one group
        auto issue = [&](auto lo, auto hi) {
          constexpr int LO = decltype(lo)::value, HI = decltype(hi)::value;
#pragma unroll
          for (int k16 = LO; k16 < HI; ++k16)
#pragma unroll
            for (int r = 0; r < C::R; ++r) convert(r, k16, frag[r][k16]);
          wgmma_fence();
          // the stage's descriptor once, each step's offset added to its address field in 16-byte
          // units (no carry: shared memory addresses stay below 2^18): one uniform add per wgmma
          // where the encoding from the address took five (ptxas does not fold them)
          const uint64_t desc0 = smem_desc_sw128(st);
          uint64_t dch[C::KT];  // each chunk's descriptor
#pragma unroll
          for (int h = 0; h < C::KT; ++h) dch[h] = desc0 + (uint64_t)(h * chunk16);
#pragma unroll
          for (int k16 = LO; k16 < HI; ++k16) {
            const uint64_t desc = dch[k16 >> 2] + (uint64_t)((k16 & 3) * 2);
#pragma unroll
            for (int r = 0; r < C::R; ++r)
              w4a16_wgmma_rs<C::TM, T>::run(acc[r], frag[r][k16], desc, (kb | k16) != 0);
          }
          wgmma_commit();
        };
        if constexpr (kHv) {
          constexpr int H = C::K16 / 2;
          // each half into the same registers as that half of the previous block, whose wgmma
          // group is the second newest: wait_group 1 frees them; before the second half the
          // previous block's wgmmas are all done and its stage is released
          wgmma_wait<1>();
          issue(std::integral_constant<int, 0>(), std::integral_constant<int, H>());
          wgmma_wait<1>();
          if (kb > 0) release(prev_s);
          issue(std::integral_constant<int, H>(), std::integral_constant<int, C::K16>());
          prev_s = s;
          return;
        }
        if (!kOv && kb > 0) {
          // the previous stage's wgmmas are done: its shared memory and our A registers are free
          wgmma_wait<0>();
          release(prev_s);
        }
        issue(std::integral_constant<int, 0>(), std::integral_constant<int, C::K16>());
        if (kOv) {
          // all but this block's wgmmas are done: the previous stage is free
          wgmma_wait<1>();
          if (kb > 0) release(prev_s);
        }
        prev_s = s;
      };
      bool post = false;  // the post-scaled mainloop (Cfg::kPost) for groups of at least TK
      if constexpr (C::kPost) post = p.group >= C::TK;
      if (post) {
        if constexpr (C::kPost) {
          // ---- post-scaled mainloop (Cfg::kPost): one scale row per k-block
          float part[C::R][C::TM / 2];  // fp32 partial of the current k-block
          float sprev[C::R][2];         // the scales of the block in part, rows g and g + 8
          uint32_t ring[C::kRing][C::R][4];
          constexpr uint32_t kNegBias = std::is_same<T, __nv_bfloat16>::value ? 0xc308c308u   // bf16 -136
                                                                              : 0xe408e408u;  // f16 -1032
          // (opaque to the compiler, so that it keeps one register quad instead of rematerializing
          // the constant before every wgmma)
          uint32_t nb_frag[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) nb_frag[e] = kNegBias ^ ((uint32_t)(p.k >> 31) << e);  // K > 0
          // acc += s x part once the block's wgmmas are complete (wgmma.wait_group 0: no wgmma in
          // flight while the accumulators are read, else ptxas serializes every wgmma, C7514)
          auto fold = [&]() {
#pragma unroll
            for (int r = 0; r < C::R; ++r)
#pragma unroll
              for (int i = 0; i < C::TM / 2; ++i) {
                reg_fence(part[r][i]);
                acc[r][i] = fmaf(sprev[r][(i >> 1) & 1], part[r][i], acc[r][i]);
              }
          };
          for (int kb = 0; kb < kb_per; ++kb) {
            uint4 wq[C::R][C::KT];
            const uint32_t s = stage_in(kb, wq);
            const uint32_t st = base + s * C::kStageBytes;
            const uint32_t sr = CHUNK ? srow(kb) : st + C::kSOff;
            float sf[C::R][2];
#pragma unroll
            for (int r = 0; r < C::R; ++r) {
              const uint32_t a0 = sr + (rowbase + r * 64 + warp * 16 + g) * 2;
              sf[r][0] = Pk<T>::to_float(lds16(a0));
              sf[r][1] = Pk<T>::to_float(lds16(a0 + 16));
            }
            const uint64_t desc0 = smem_desc_sw128(st);
            uint64_t dch[C::KT];  // each chunk's descriptor
#pragma unroll
            for (int h = 0; h < C::KT; ++h) dch[h] = desc0 + (uint64_t)(h * chunk16);
            if (kb > 0) {
              // the previous block's last steps drain (the shared loads above are in flight)
              wgmma_wait<0>();
              fold();
              release(prev_s);
            }
#pragma unroll
            for (int k16 = 0; k16 < C::K16; ++k16) {
              constexpr int kR = C::kRing;
              // at most kR - 1 steps in flight: step k16 - kR, this slot's last reader, is done
              if (k16 >= kR) wgmma_wait<kR - 1>();
              uint32_t(&f)[C::R][4] = ring[k16 % kR];
#pragma unroll
              for (int r = 0; r < C::R; ++r) {
                const uint4 v = wq[r][k16 >> 2];
                const uint32_t w = word_of(v, k16);
                Pk<T>::cvt_biased(w, f[r]);
              }
              wgmma_fence();
              // the stage's descriptor plus the step's offset in 16-byte units (the address field
              // does not carry: shared memory addresses stay below 2^18)
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
          fold();
        }
      } else {
        if (kOv) {
          int kb = 0;
          for (; kb + 1 < kb_per; kb += 2) {
            kstep(std::integral_constant<int, 0>(), kb);
            kstep(std::integral_constant<int, 1>(), kb + 1);
          }
          if (kb < kb_per) kstep(std::integral_constant<int, 0>(), kb);
        } else {
          for (int kb = 0; kb < kb_per; ++kb) kstep(std::integral_constant<int, 0>(), kb);
        }
        wgmma_wait<0>();
      }
#pragma unroll
      for (int r = 0; r < C::R; ++r)
#pragma unroll
        for (int i = 0; i < C::TM / 2; ++i) reg_fence(acc[r][i]);
      release(prev_s);
      if (!C::kCoop) mbar_arrive_local(bar_order + 8 * (1 - c));  // the other warpgroup's turn

      // ------------------------------------------------------------------- epilogue
      // adds a partial tile in fragment order from shared memory, this thread's pieces from `from` on
      // (nthr x 16 bytes apart): the K pair's rank 1 accumulators, a small tile's stream-K partials
      auto add_partial = [&](uint32_t from) {
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i) {
            const uint4 v = lds128(from + (uint32_t)((r * (C::TM / 8) + i) * nthr) * 16u);
            acc[r][4 * i] += __uint_as_float(v.x);
            acc[r][4 * i + 1] += __uint_as_float(v.y);
            acc[r][4 * i + 2] += __uint_as_float(v.z);
            acc[r][4 * i + 3] += __uint_as_float(v.w);
          }
      };
      // K pair, kPairRing: the offset in rank 0's ring of this thread's part of the second half's
      // piece jj (a piece is nthr x 16 bytes), from stage h % STAGES on around the ring (ring0)
      uint32_t ring0 = 0;
      auto pair_late = [&](int jj) -> uint32_t {
        const uint32_t off = ring0 * (uint32_t)C::kStageBytes + (uint32_t)(jj * nthr + ltid) * 16u;
        return off < (uint32_t)(C::STAGES * C::kStageBytes) ? off : off - (uint32_t)(C::STAGES * C::kStageBytes);
      };
      constexpr int kHalf = C::kPairPieces / 2;
      if (C::kPairOk && p.kpair) {
        // K pair: rank 1's accumulators go into rank 0's shared memory where rank 0 does not use it,
        // in fragment order, by st.async counted on rank 0's barrier: a stage its mainloop is done with
        // (the one its producer announced, see above), or for kPairRing the first half into its
        // epilogue buffer at once and the second into the ring stages its producer announced. Rank 0
        // adds them to its own (k-blocks [0, h) then [h, k): the same bits on every run; kPairRing: as
        // its epilogue stages the tile), tells rank 1 they are in (rank 1's barrier, phase 1: rank 1
        // may leave) and runs the epilogue
        const uint32_t bar_free = bar_order, bar_in = bar_order + 8;
        const uint32_t h = (uint32_t)kpair_h(p, (p.k + C::TK - 1) / C::TK);  // rank 0's k-blocks
        ring0 = h % C::STAGES;
        const uint32_t slot = base + ring0 * C::kStageBytes + (uint32_t)ltid * 16u;
        if (blockIdx.x & 1u) {
          const uint32_t rbar = mapa_shared(bar_in, 0u);  // rank 0's
          auto piece = [&](int r, int i) {
            return make_uint4(__float_as_uint(acc[r][4 * i]), __float_as_uint(acc[r][4 * i + 1]),
                              __float_as_uint(acc[r][4 * i + 2]), __float_as_uint(acc[r][4 * i + 3]));
          };
          if constexpr (C::kPairRing) {
            const uint32_t repi = mapa_shared(epi + (uint32_t)ltid * 16u, 0u);
#pragma unroll
            for (int r = 0; r < C::R; ++r)
#pragma unroll
              for (int i = 0; i < C::TM / 8; ++i) {
                const int jp = r * (C::TM / 8) + i;
                if (jp < kHalf) st_async_v4_mapped(repi + (uint32_t)(jp * nthr) * 16u, rbar, piece(r, i));
              }
            mbar_wait(bar_free, 0);
            const uint32_t rbase = mapa_shared(base, 0u);
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
                st_async_v4_mapped(rslot + (uint32_t)((r * (C::TM / 8) + i) * nthr) * 16u, rbar, piece(r, i));
          }
          mbar_wait(bar_free, 1);
          continue;
        }
        mbar_wait(bar_in, 0);
        if constexpr (!C::kPairRing) {
          add_partial(slot);
          if (ltid == 0) mbar_arrive_cluster(bar_free, 1u);
        }
      }
      // rank 0 of a K pair whose partner's accumulators fill several stages: the epilogue adds them
      // (the first half from the epilogue buffer, the second by pair_late) as it stages the tile in
      // the stages after the second half's (pair_box)
      const bool pair_ring = C::kPairRing && C::kPairOk && p.kpair;
      // ... or the last partial of a stream-K tile this CTA began (kSkRing, copied in by the flag
      // warp: from stage 0, fragment order)
      const bool sk_ring = C::kSkRing && p.streamk && !u.contrib && u.sk_last >= 0;
      // where the tile's box cb of TN / 64 is staged for the tensor store
      auto box_at = [&](int cb) -> uint32_t {
        if (!pair_ring) return epi + (uint32_t)(cb * (C::TM * 128));
        const uint32_t st_i = (ring0 + (uint32_t)(C::kPairLate + cb / C::kPairBoxes)) % C::STAGES;
        return base + st_i * C::kStageBytes + (uint32_t)((cb % C::kPairBoxes) * (C::TM * 128));
      };
      if (p.split_k > 1) {
        // fp32 partials straight from the accumulators: for a token row, lanes g = 0..7
        // write 8 consecutive floats (whole 32-byte sectors)
        const size_t step = (size_t)8 * p.n;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float *row = p.ws + ((size_t)u.z * p.m + u.m0 + 2 * t + e) * p.n + u.n0 + rowbase + warp * 16 + g;
          int m = u.m0 + 2 * t + e;
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i, m += 8, row += step) {
            if (m < p.m) {
#pragma unroll
              for (int r = 0; r < C::R; ++r) {
                if (u.n0 + rowbase + r * 64 + warp * 16 >= p.n) continue;  // rows beyond N (tail)
                row[r * 64] = acc[r][4 * i + e];
                row[r * 64 + 8] = acc[r][4 * i + 2 + e];
              }
            }
          }
        }
      } else if (u.contrib) {
        // stream-K, the end of a tile another cluster began: the accumulators go to this CTA's
        // slot in fragment order (16-byte stores, consecutive threads at consecutive addresses),
        // then the flag (release; the CTA barrier orders every thread's stores before it)
        float4 *slot = reinterpret_cast<float4 *>(p.ws) + (size_t)blockIdx.x * (C::TN * C::TM / 4);
#pragma unroll
        for (int r = 0; r < C::R; ++r)
#pragma unroll
          for (int i = 0; i < C::TM / 8; ++i)
            slot[(r * (C::TM / 8) + i) * nthr + ltid] =
                make_float4(acc[r][4 * i], acc[r][4 * i + 1], acc[r][4 * i + 2], acc[r][4 * i + 3]);
        if (W4A16_SM90_FLAG_WARP) {
          named_bar_arrive(kFlagBar + (C::kCoop ? 0u : (uint32_t)c), nthr + 32);  // the flag warp releases it
        } else {
          named_bar_sync(epi_bar, nthr);
          if (ltid == 0) st_release_gpu(p.flags + blockIdx.x, p.token);
        }
      } else {
        if (u.sk_last >= 0) {
          // stream-K, a tile this unit began: add the partials of the clusters cid + 1 .. sk_last
          // that finish it, in that order (K order: the same bits on every run of this grid; kSkRing:
          // sk_last's is in the ring, added as the epilogue stages the tile). Thread
          // j waits for the flag of cluster cid + 1 + j (the flags' round trips overlap: a small
          // layer's tile has three or four contributors), and the small tiles' partials are read two
          // at a time (both loads in flight before the adds, which keep the K order)
          const int nq = u.sk_last - cid;
          if (W4A16_SM90_FLAG_WARP) {
            // the flag warp has waited for (and cleared) the flags, most often during our mainloop
            named_bar_sync(kOwnBar + (C::kCoop ? 0u : (uint32_t)c), nthr + 32);
          } else {
            for (int j = ltid; j < nq; j += nthr) {
              const uint32_t *f = p.flags + (cid + 1 + j) * C::kCluster + crank;
              while (ld_acquire_gpu(f) != p.token) __nanosleep(32);
            }
            named_bar_sync(epi_bar, nthr);
          }
          auto slot_of = [&](int q) {
            return reinterpret_cast<const float4 *>(p.ws) + (size_t)(q * C::kCluster + crank) * (C::TN * C::TM / 4);
          };
          // (two partials a step only where a partial is a few registers a thread, TM <= 32, and
          // not for the one-CTA-per-SM 16-token tiles: there ptxas then spills 40 more bytes and
          // 128x16x256 runs 3-6 % slower at M = 16)
          constexpr int kStep = W4A16_SM90_FIXUP_STEP2 && C::R * C::TM / 8 <= 4 && (C::TM >= 32 || C::kCtasPerSm == 2) ? 2 : 1;
          const int q_end = u.sk_last - (C::kSkRing ? 1 : 0);  // (kSkRing: the last comes through the ring)
          // The cooperative tiles of <= 16 tokens: every partial at once into the stage ring (free:
          // this unit, the CTA's last, has read every stage, and both warpgroups are past the
          // barrier above), each thread copying the 16-byte pieces it adds (cp.async: no registers
          // held, no other thread's data), then added in K order from there: one round trip to L2
          // instead of one a partial. H100: 128x16x256 0.989-0.994x the time on 10240x8192 /
          // 4096x14336 at M = 1..16; 128x32x256, 128x64x256 and 128x128x128 0.997-1.006x, so those
          // keep the reads from global memory. Not in the scale-chunk instance (the K pair's; there
          // it makes ptxas spill).
          constexpr int kPart = C::TN * C::TM * 4;
          const bool cpa = W4A16_SM90_FIXUP_CPASYNC && C::kCoop && C::TM <= 16 && !CHUNK &&
                           (q_end - cid) * kPart <= C::STAGES * C::kStageBytes;
          if (cpa) {
            for (int q = cid + 1; q <= q_end; ++q) {
              const float4 *src = slot_of(q) + ltid;
              const uint32_t dst = base + (uint32_t)((q - cid - 1) * kPart) + (uint32_t)ltid * 16u;
#pragma unroll
              for (int j = 0; j < C::R * (C::TM / 8); ++j) w4a16_cp_async16(dst + (uint32_t)(j * nthr) * 16u, src + j * nthr);
            }
            w4a16_cp_async_commit();
            w4a16_cp_async_wait<0>();
            for (int q = cid + 1; q <= q_end; ++q)
              add_partial(base + (uint32_t)((q - cid - 1) * kPart) + (uint32_t)ltid * 16u);
          }
          for (int q = cpa ? q_end + 1 : cid + 1; q <= q_end; q += kStep) {
            const bool two = kStep == 2 && q + 1 <= q_end;
            const float4 *s0 = slot_of(q);
            const float4 *s1 = slot_of(two ? q + 1 : q);
            float4 v0[C::R][C::TM / 8], v1[kStep == 2 ? C::R : 1][kStep == 2 ? C::TM / 8 : 1];
#pragma unroll
            for (int r = 0; r < C::R; ++r)
#pragma unroll
              for (int i = 0; i < C::TM / 8; ++i) {
                v0[r][i] = __ldcg(s0 + (r * (C::TM / 8) + i) * nthr + ltid);
                if (two) v1[kStep == 2 ? r : 0][kStep == 2 ? i : 0] = __ldcg(s1 + (r * (C::TM / 8) + i) * nthr + ltid);
              }
#pragma unroll
            for (int r = 0; r < C::R; ++r)
#pragma unroll
              for (int i = 0; i < C::TM / 8; ++i) {
                acc[r][4 * i] += v0[r][i].x;
                acc[r][4 * i + 1] += v0[r][i].y;
                acc[r][4 * i + 2] += v0[r][i].z;
                acc[r][4 * i + 3] += v0[r][i].w;
                if (two) {
                  const float4 w = v1[kStep == 2 ? r : 0][kStep == 2 ? i : 0];
                  acc[r][4 * i] += w.x;
                  acc[r][4 * i + 1] += w.y;
                  acc[r][4 * i + 2] += w.z;
                  acc[r][4 * i + 3] += w.w;
                }
              }
          }
          // only this CTA reads those flags: clear them for the next launch with this token (a
          // CUDA graph replay); each waiting thread clears its own, after the barrier above
          if (!W4A16_SM90_FLAG_WARP)
            for (int j = ltid; j < nq; j += nthr) p.flags[(cid + 1 + j) * C::kCluster + crank] = 0u;
        }
        const uint16_t *bias = (const uint16_t *)p.bias;
        if (C::kTmaStore) {
          // the buffer is free once the previous tile's tensor store has read it
          if (ltid == 0) bulk_wait_read0();
          named_bar_sync(epi_bar, nthr);
        }
        if (sk_ring) mbar_wait(bar_order + 8, 0);
        // the padded staging rows (no tensor store) from token row 2 t's, for the tiles of <= 16 tokens:
        // their K-pair instance (128x16x256) then compiles without its 4-byte spill and runs 2 % faster
        // (8192x8192 M = 1 / 16); with 32 tokens the same form costs 128x32x256 1 % (H100), so those
        // keep the plain one
        const uint32_t epi_t = epi + 2 * t * C::kEpiStride * 2;
        // a thread's accumulators with the partial added where one is (pair_ring, sk_ring), scaled, biased
        auto out4 = [&](int r, int i, float b0, float b1, float (&a)[4]) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[e] = acc[r][4 * i + e];
          const int jp = r * (C::TM / 8) + i;
          if (sk_ring || pair_ring) {
            const uint4 v = lds128(!pair_ring ? base + (uint32_t)((jp * nthr + ltid) * 16)
                                   : jp < kHalf ? epi + (uint32_t)((jp * nthr + ltid) * 16) : base + pair_late(jp - kHalf));
            a[0] += __uint_as_float(v.x);
            a[1] += __uint_as_float(v.y);
            a[2] += __uint_as_float(v.z);
            a[3] += __uint_as_float(v.w);
          }
          a[0] = a[0] * p.alpha + b0;
          a[1] = a[1] * p.alpha + b0;
          a[2] = a[2] * p.alpha + b1;
          a[3] = a[3] * p.alpha + b1;
        };
#pragma unroll
        for (int r = 0; r < C::R; ++r) {
          const int nl = rowbase + r * 64 + warp * 16 + g;
          const bool n_in = u.n0 + nl < p.n;  // its 16-row block is inside N (else a tail's, never stored)
          const float b0 = bias && n_in ? Pk<T>::to_float(bias[u.n0 + nl]) : 0.f;
          const float b1 = bias && n_in ? Pk<T>::to_float(bias[u.n0 + nl + 8]) : 0.f;
          if constexpr (C::kTmaStore) {
            // TMA layout (128-byte swizzle): box n / 64, token row ml, 16-byte chunk (n % 64 / 8) ^
            // (ml % 8). Token blocks i, i + 1 of the warp's 16 rows by one transposed stmatrix: matrix
            // j = (rows + 8 (j % 2), tokens 8 (i + j / 2) ..), this thread's register j the pair of
            // tokens 2 t, 2 t + 1 at row g (the accumulator layout); lane l gives token row l % 8 of
            // matrix l / 8, whose 8 rows of N are one 16-byte chunk. One 2-byte store an element takes
            // the end of a 128x256 tile (mainloop end to the stores' completion) to 2.9 us, this 2.4,
            // and M = 256..1024 runs 0.989-0.996x the time with this (H100)
            const int q = lane & 7, jm = lane >> 3;
            const int nj = rowbase + r * 64 + warp * 16 + 8 * (jm & 1);
            const uint32_t rowa = box_at(nj >> 6) + (uint32_t)(q * 128 + ((((nj & 63) >> 3) ^ q) << 4));
#pragma unroll
            for (int i = 0; i < C::TM / 8; i += 2) {
              float a0[4], a1[4];
              out4(r, i, b0, b1, a0);
              out4(r, i + 1, b0, b1, a1);
              stmatrix_x4_trans(rowa + (uint32_t)((8 * i + 8 * (jm >> 1)) * 128), Pk<T>::pack2(a0[0], a0[1]),
                                Pk<T>::pack2(a0[2], a0[3]), Pk<T>::pack2(a1[0], a1[1]), Pk<T>::pack2(a1[2], a1[3]));
            }
          } else {
            // padded rows: o0[e] token row 2 t + e (+ 8 i) at row nl, o1[e] at row nl + 8
            uint32_t o0[2], o1[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              o0[e] = C::TM <= 16 ? epi_t + (e * C::kEpiStride + nl) * 2 : epi + ((2 * t + e) * C::kEpiStride + nl) * 2;
              o1[e] = o0[e] + 16;
            }
#pragma unroll
            for (int i = 0; i < C::TM / 8; ++i) {
              float a[4];
              out4(r, i, b0, b1, a);
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                const uint32_t step = 8 * C::kEpiStride * 2 * i;
                sts16(o0[e] + step, Pk<T>::from_float(a[e]));
                sts16(o1[e] + step, Pk<T>::from_float(a[2 + e]));
              }
            }
          }
        }
        if (C::kTmaStore) {
          fence_proxy_async_shared();
          named_bar_sync(epi_bar, nthr);
          if (pair_ring && ltid == 0) mbar_arrive_cluster(bar_order, 1u);  // read: rank 1 may leave
          if (ltid == 0) {
            const CUtensorMap *map = is_tail(u) ? &tm_d_tail : &tm_d;
#pragma unroll
            for (int cb = 0; cb < C::TN / 64; ++cb) tma_store_2d(map, box_at(cb), u.n0 + 64 * cb, u.m0);
            bulk_commit();
          }
          continue;
        }
        named_bar_sync(epi_bar, nthr);
        const int rows = p.m - u.m0 < C::TM ? p.m - u.m0 : C::TM;
        constexpr int kChunks = C::TN / 8;
        char *dst = (char *)p.d;
        for (int idx = ltid; idx < rows * kChunks; idx += nthr) {
          const int ml = idx / kChunks;
          const int ch = idx - ml * kChunks;
          if (u.n0 + ch * 8 >= p.n) continue;  // columns beyond N (tail)
          const uint4 v = lds128(epi + (ml * C::kEpiStride + ch * 8) * 2);
          *reinterpret_cast<uint4 *>(dst + (((size_t)(u.m0 + ml) * p.ldd) + u.n0 + ch * 8) * 2) = v;
        }
        named_bar_sync(epi_bar, nthr);
      }
    }
    if (C::kTmaStore && ltid == 0) bulk_wait0();
  }
  if (C::kCluster > 1) cluster_sync();
#endif
}

// The split-K reduction of common/splitk.cuh (same order z = 0, 1, ..., same bits),
// launched as a programmatic dependent of the GEMM: its launch overlaps the GEMM and it
// waits (griddepcontrol.wait) for the GEMM's partials before reading them. With `early`
// it lets its own dependent (the next layer's GEMM, say) launch before that wait, so the
// next kernel's CTAs can become resident and prefetch their weights while this runs.
template <typename T>
__global__ void __launch_bounds__(256) splitk_reduce_pdl(const float *__restrict__ ws, int split_k, int m, int n,
                                                         float alpha, const T *__restrict__ bias, T *__restrict__ d,
                                                         int64_t ldd, int early) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  if (early) griddep_launch_dependents();
  griddep_wait();
  if (!early) griddep_launch_dependents();
  w4a16_splitk_reduce_body<T>(ws, split_k, m, n, alpha, bias, d, ldd);
#endif
}

// ------------------------------------------------------------------------- host side
// (the tensor-map encoder, encode_tiled_fn, is in sm90_ptx.cuh: shared with the GEMV TMA schedule)

// W4A16_SM90_NO_PDL set (any value): plain stream-ordered launches (diagnostic A/B switch).
static inline bool pdl_enabled() {
  static const bool on = getenv("W4A16_SM90_NO_PDL") == nullptr;
  return on;
}

// How many stages' weights the producer loads before griddepcontrol.wait (Params::prefetch).
// Default -8: max(2, k-blocks of its first unit / 8), at most STAGES. Measured on the H100:
// prefetching all stages gains 3-4% on the long layers but loses 3-7% on split-K layers with
// 16-21 k-blocks per unit (the reduction kernel between two GEMMs seems to wait behind those
// bytes); 2 stages there, all on long units.
// W4A16_SM90_PREFETCH=0: no early weight reads, and every kernel lets its dependent launch
// only after its own wait (A/B switch); =<n> > 0: at most n stages; =-<d>: max(2, k-blocks / d).
// Default: a unit's k-blocks / 8 stages (at least 2); / 3 for the 16-token tiles, whose stages are
// mostly weights (H100: / 4 for 128x16x256 with the K pair, 16 k-blocks a CTA, 8192x8192 M = 16
// 0.96-0.98x the time, 0.98-0.99x over the layers at M = 1..64, where 128x64x256 loses 1-3 % with
// 4; with stream-K's shrinking parts / 3 against / 4 0.982-0.983x on 10240x8192 at M = 1..16,
// 28672x4096 0.991x, 4096x14336 1.012x, six other problems 0.997-1.002x; / 2, 4 or 8 stages
// 1.01-1.07x on 10240x8192). / 4 for the 32-token tile_k 256 tiles in a stream-K launch without
// data-parallel tiles (`sk_only`; H100: 128x32x256 on 10240x8192 at M = 24 / 32 0.977 / 0.974x,
// 4096x14336 0.996-0.998x, five other layers 0.998-1.003x; under the K pair / 4 costs 8192x8192
// 2.3-2.7 %, and 256x32x128 with four consumer warpgroups loses up to 5 % on 28672x4096).
template <class C>
static inline int prefetch_stages(bool sk_only) {
  static const char *e = getenv("W4A16_SM90_PREFETCH");
  static const int set = e ? atoi(e) : 0;  // parsed once, like the file's other switches
  if (e) return set;
  return C::TM <= 16 ? -3 : C::TM <= 32 && C::TK == 256 && sk_only ? -4 : -8;
}

// Diagnostics (measuring split rules without the runtime's help), used only where the
// workspace the caller passed holds the slices' partials (else the runtime's split stays):
// W4A16_SM90_SPLIT=<n> runs split n; W4A16_SM90_SPLIT_SLOTS=1 runs the largest split whose
// units fit the CTA slots of one wave (SMs x CTAs per SM, not SMs), capped at MAX_SPLIT_K 12.
static inline int split_override(int split, int tiles, int slots, int m, int n, int k_iters, size_t ws_bytes) {
  static const int want = []() {
    const char *e = getenv("W4A16_SM90_SPLIT");
    return e ? atoi(e) : 0;
  }();
  static const bool by_slots = getenv("W4A16_SM90_SPLIT_SLOTS") != nullptr;
  int s = want;
  if (s < 1 && by_slots) s = tiles >= slots ? 1 : (slots / tiles < 12 ? slots / tiles : 12);
  if (s < 1) return split;
  if (s > k_iters) s = k_iters;
  if (s > 1 && (size_t)s * (size_t)m * (size_t)n * sizeof(float) > ws_bytes) return split;
  return s;
}

// An A/B switch: on unless the environment variable `name` is set to 0 (read by each caller once).
static inline bool env_switch_on(const char *name) {
  const char *e = getenv(name);
  return !(e && atoi(e) == 0);
}
// W4A16_SM90_STREAMK=0: tile by tile even where the runtime chose stream-K (the runtime reads it
// too, runtime/families.c).
static inline bool streamk_enabled() {
  static const bool on = env_switch_on("W4A16_SM90_STREAMK");
  return on;
}
// Stream-K's data-parallel tiles a cluster (Params::streamk - 1) for `tiles` output tiles over g
// clusters: W = floor((tiles - 1) / g), so that stream-K takes the last part-wave's tiles (under one
// tile a cluster), except that one wave of them with less than a quarter wave left over goes all
// to stream-K (W = 0). H100: against stream-K over all
// tiles, 17 of 18 kernel x problem pairs of 1.45-3.4 waves at M = 64..1024 run in 0.88-0.99x the
// time (6144x4096 M = 512 on 128x128x128 1.014x); with 160 tiles on 132 SMs (a quarter wave
// left over: W = 1 cut those 28 tiles into pieces of under a fifth of a tile) 1.004-1.023x, hence
// W = 0 there. Also W = 0 for the tiles whose last partial comes through the stage ring (kSkRing,
// `ring`) where W = 1 would leave stream-K pieces of under 32 k-blocks: each of those tiles then has a
// contributor whose whole part lies inside it, so its owner waits at the end for that partial's store
// and reads it, where stream-K over all tiles gives each tile at most one contributor, whose partial
// comes through the ring. H100: 128x256x64 on 6144x4096 M = 1024 (192 tiles,
// pieces of 29 k-blocks) 0.98x (1x1x1) and 0.97x (2x1x1) the time; with pieces of 58 k-blocks (8192x8192
// M = 768) 1.02x, and with W >= 2 1.01-1.04x. A/B switch W4A16_SM90_SK_DP: 0 none, 2 one fewer than
// W where positive (one to two tiles' worth a cluster by stream-K), 3 W always (1: this rule).
static inline long long streamk_dp_tiles(long long tiles, long long g, long long k_iters, bool ring) {
  static const int mode = []() {
    const char *e = getenv("W4A16_SM90_SK_DP");
    return e ? atoi(e) : 1;
  }();
  if (g < 1 || mode <= 0) return 0;
  long long w = (tiles - 1) / g;  // tiles - w g >= 1
  if (mode == 1 && w == 1 && 4 * (tiles - g) < g) w = 0;
  if (mode == 1 && w == 1 && ring && (tiles - g) * k_iters < 32 * g) w = 0;
  if (mode == 2 && w > 0) --w;
  return w;
}
// The fewest scale (zero) rows a stage must hold for them to come by one copy of the 2-D map
// (Params::s2d) instead of one bulk copy per row. Default: one, except the tile_k 256 tiles of 16 or
// 32 tokens, which keep bulk copies below four rows. H100 (bf16 groups of 128 and 64, eleven
// default tiles, M = 1..256): at one or two rows the map's copy takes 0.96-0.98x the time on
// 128x128x128 and 128x256x64, 0.94-0.98x on 128x16x128, 0.98-0.99x on 128x64x256 and the 256-row
// tiles, while 128x16x256 loses 1.3-1.6 % at M <= 16 and 128x32x256 up to 3.7 % at M = 32
// (10240x8192, 4096x14336). W4A16_SM90_S2D=0: bulk copies always; =<n> > 0: the map from n rows on (A/B switch).
template <class C>
static inline int s2d_min_rows() {
  static const int n = []() {
    const char *e = getenv("W4A16_SM90_S2D");
    if (e) return atoi(e) > 0 ? atoi(e) : 1 << 30;
    return C::TK >= 256 && C::TM <= 32 ? 4 : 1;
  }();
  return n;
}
// W4A16_SM90_SCHUNK=0: the scale (zero) rows of every k-block by a copy of their own (Params::s2d bit
// 1); =2: by chunks in every launch, not only the K pair's (measurement switch).
static inline int schunk_mode() {
  static const int m = []() {
    const char *e = getenv("W4A16_SM90_SCHUNK");
    return e ? atoi(e) : 1;
  }();
  return m;
}
// W4A16_SM90_A3D=0: the activations of a stage by KT 2-D copies.
static inline bool a3d_enabled() {
  static const bool on = env_switch_on("W4A16_SM90_A3D");
  return on;
}
// W4A16_SM90_SKEW=0: stream-K's parts equal (but for the remainder) instead of shrinking with the
// CTA index (A/B switch)
static inline bool skew_enabled() {
  static const bool on = env_switch_on("W4A16_SM90_SKEW");
  return on;
}
// W4A16_SM90_KPAIR=0: stream-K where the K-pair mode would run.
static inline bool kpair_enabled() {
  static const bool on = env_switch_on("W4A16_SM90_KPAIR");
  return on;
}
// The K pair's lead (Params::kpair - 1): the k-blocks rank 0 runs beyond rank 1 in the tiles whose
// accumulators go through the ring (Cfg::kPairRing), so that rank 1's first half reaches rank 0's
// epilogue buffer, and its second half the ring stages freed first, while rank 0's mainloop runs:
// one k-block per 32 KB of rank 1's accumulators (4 for 128x256x64, 2 for 128x128x128; the other
// K-pair tiles keep equal halves). H100: 128x256x64 at
// lead 4 against 2 0.970 / 0.987x on 4096x4096 M = 512, 0.993 / 0.998x on 8192x8192 M = 256;
// 128x128x128 at lead 2 against 4 0.955-0.977x / 0.977-0.990x on 4096x4096 M = 256, 6144x4096 and
// 8192x8192 M = 128 (the equal halves' time = 1). W4A16_SM90_KPAIR_LEAD=<d>: d for every kPairRing
// tile (measurement switch).
template <class C>
static inline int kpair_lead() {
  static const int set = []() {  // parsed once; unset or negative: the rule below
    const char *e = getenv("W4A16_SM90_KPAIR_LEAD");
    return e ? atoi(e) : -1;
  }();
  if (set >= 0) return set;
  return C::kPairRing ? C::TN * C::TM * 4 / 32768 : 0;
}

// How many clusters of `csize` CTAs of this kernel can be resident at once (0 when the query fails);
// clusters must sit in one GPC, so fewer may fit than SMs / csize.
template <class C, class K>
static inline int max_active_clusters(K kern, int csize, long long ctas) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)csize;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3((unsigned)ctas, 1, 1);
  cfg.blockDim = dim3(C::kThreads, 1, 1);
  cfg.dynamicSmemBytes = C::kSmemBytes;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  return n;
}

// max_active_clusters for clusters of CS CTAs of this kernel on a device of `sms` SMs (a grid of
// `ctas` CTAs), queried once per kernel, cluster size and SM count. Thread-safe: the SM count and
// the answer share one atomic word (concurrent first calls may each query; they store the same).
template <class C, int CS, class K>
static inline int resident_clusters(K kern, int sms, long long ctas) {
  static std::atomic<uint64_t> cache{0};  // (sms + 1) << 32 | clusters; 0: not queried yet
  const uint64_t key = (uint64_t)(uint32_t)(sms + 1) << 32;
  uint64_t v = cache.load(std::memory_order_relaxed);
  if ((v & ~(uint64_t)0xffffffffu) != key) {
    v = key | (uint32_t)max_active_clusters<C>(kern, CS, ctas);
    cache.store(v, std::memory_order_relaxed);
  }
  return (int)(uint32_t)v;
}

// A flag value per launch for stream-K: never 0, and never four equal bytes (the patterns of a
// memset workspace). Thread-safe.
static inline uint32_t next_token() {
  static std::atomic<uint32_t> counter{0};
  for (;;) {
    uint32_t t = (counter.fetch_add(1u, std::memory_order_relaxed) + 1u) * 2654435761u;  // Knuth's multiplicative hash
    const uint32_t b = t & 0xffu;
    if (t != 0 && t != b * 0x01010101u) return t;
  }
}

// The CTAs of kernel kern that one SM holds at once (queried once per instantiation).
template <class C, class K>
static inline int resident_ctas_per_sm(K kern) {
  static const int n = [&]() {
    int v = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kern, C::kThreads, C::kSmemBytes) != cudaSuccess) {
      cudaGetLastError();
      v = 0;
    }
    return v;
  }();
  return n;
}

// Rows of the last token tile's activation and output boxes: where M is not a multiple of TM (and
// the activations are not multicast) that tile moves only its own rows, rounded up to whole 8-row
// swizzle atoms: a box row beyond M is an out-of-bounds row that TMA zero-fills (loads) or drops
// (stores), and those cost as much as real rows or more (H100, boxes of TM rows: 128x64x256 on
// 28672x4096 takes 50.7 us at M = 17, 43.6 at M = 33, 33.0 at M = 48; 128x128x128 143
// us at M = 160 against 114 at M = 200). The shared-memory rows beyond the box keep stale data:
// they only feed the wgmma columns of tokens >= M, which are never stored (stream-K partials carry
// them and drop them in the same place). W4A16_SM90_CLIP_BOX=0: always TM rows (A/B switch).
static inline bool clip_box_enabled() {
  static const bool on = []() {
    const char *e = getenv("W4A16_SM90_CLIP_BOX");
    return !(e && atoi(e) == 0);
  }();
  return on;
}

template <class C>
static inline int tail_rows(int m) {
  const int last = m % C::TM;  // rows of the last token tile, 0: a full one
  if (C::CN != 1 || last == 0 || !clip_box_enabled()) return C::TM / C::CN;
  const int r = (last + 7) / 8 * 8;
  return r < C::TM ? r : C::TM;
}

template <typename T, class C>
static inline int launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  EncodeTiledFn encode = encode_tiled_fn();
  if (!encode) return (int)cudaErrorNotSupported;
  const int tail = tail_rows<C>(p->m);
  CUtensorMap tm_a, tm_w, tm_a_tail;
  int a3d = 0, a3d_tail = 0;
  if (C::CN == 1 && C::KT > 1 && a3d_enabled()) {
    // [K/64 chunks][M rows][64 k]: the chunk stride (128 bytes) is below the row stride, which the
    // encoder may refuse; then the 2-D maps below. t = 0: the full token tiles; t = 1: a part-full
    // one where it is the only one, M < TM (box of tail rows; its chunks land tail * 128 bytes apart,
    // Params::a3d_tail)
    for (int t = 0; t < (p->m < C::TM ? 2 : 1); ++t) {
      const cuuint64_t dims[3] = {64, (cuuint64_t)p->m, (cuuint64_t)(p->k / 64)};
      const cuuint64_t strides[2] = {(cuuint64_t)p->lda * 2, 128};
      const cuuint32_t box[3] = {64, (cuuint32_t)(t == 0 ? C::TM : tail), (cuuint32_t)C::KT};
      const cuuint32_t estr[3] = {1, 1, 1};
      (t == 0 ? a3d : a3d_tail) =
          encode(t == 0 ? &tm_a : &tm_a_tail, Pk<T>::kTmaType, 3, const_cast<void *>(p->a), dims, strides, box, estr,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
    }
  }
  for (int t = 0; t < 2; ++t) {  // t = 0: the full token tiles; t = 1: a part-full last one (tail rows)
    if (t == 0 ? a3d : a3d_tail) continue;
    const cuuint64_t dims[2] = {(cuuint64_t)p->k, (cuuint64_t)p->m};
    const cuuint64_t strides[1] = {(cuuint64_t)p->lda * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)(t == 0 ? C::TM / C::CN : tail)};
    const cuuint32_t estr[2] = {1, 1};
    if (encode(t == 0 ? &tm_a : &tm_a_tail, Pk<T>::kTmaType, 2, const_cast<void *>(p->a), dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
  }
  if (C::kW3d) {  // [N/16 row blocks][K/64 blocks][128 words]
    const cuuint64_t dims[3] = {128, (cuuint64_t)(p->k / 64), (cuuint64_t)(p->n / 16)};
    const cuuint64_t strides[2] = {512, (cuuint64_t)(p->k / 64 * 512)};
    const cuuint32_t box[3] = {128, (cuuint32_t)C::KT, (cuuint32_t)(C::TN / 16)};
    const cuuint32_t estr[3] = {1, 1, 1};
    if (encode(&tm_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, const_cast<void *>(p->w), dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
  } else {
    const cuuint64_t dims[2] = {(cuuint64_t)(p->k / 64 * 128), (cuuint64_t)(p->n / 16)};
    const cuuint64_t strides[1] = {(cuuint64_t)(p->k / 64 * 512)};
    const cuuint32_t box[2] = {(cuuint32_t)(C::KT * 128), (cuuint32_t)(C::TN / 16 / C::CM)};
    const cuuint32_t estr[2] = {1, 1};
    if (encode(&tm_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<void *>(p->w), dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
  }
  CUtensorMap tm_d, tm_d_tail;
  memset(&tm_d, 0, sizeof(tm_d));
  memset(&tm_d_tail, 0, sizeof(tm_d_tail));
  for (int t = 0; C::kTmaStore && t < 2; ++t) {  // (the split may still change below: W4A16_SM90_SPLIT)
    const cuuint64_t dims[2] = {(cuuint64_t)p->n, (cuuint64_t)p->m};
    const cuuint64_t strides[1] = {(cuuint64_t)p->ldd * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)(t == 0 || C::CN != 1 ? C::TM : tail)};
    const cuuint32_t estr[2] = {1, 1};
    if (encode(t == 0 ? &tm_d : &tm_d_tail, Pk<T>::kTmaType, 2, p->d, dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
  }
  Params prm;
  prm.scales = p->scales;
  prm.zeros = p->zeros;
  prm.bias = p->bias;
  prm.d = p->d;
  prm.ws = (float *)p->workspace;
  prm.ldd = p->ldd;
  prm.m = p->m;
  prm.n = p->n;
  prm.k = p->k;
  prm.group = p->group_size;
  prm.gshift = 0;  // (used only where group < TK: a power of two; bounded, per-column groups are K)
  while (prm.gshift < 30 && (1 << (prm.gshift + 1)) <= p->group_size) ++prm.gshift;
  // one group row (group K, G = 1), below TK only with a K tail (K < TK, not always a power of two):
  // every k of the k-block in row 0
  if (p->group_size >= p->k) prm.gshift = 30;
  // k-blocks, the last part-full where TK does not divide K (its k beyond K: zeros by TMA)
  const int k_blocks = (p->k + C::TK - 1) / C::TK;
  prm.split_k = p->split_k > 1 ? p->split_k : 1;
  if (prm.split_k > k_blocks) prm.split_k = k_blocks;  // every slice needs >= 1 k-block
  prm.tail_rows = tail;
  prm.a3d = a3d;
  prm.a3d_tail = a3d_tail;  // M < TM: every unit is the tail tile's
  prm.alpha = p->alpha;

  // the last row tile may be part-full (N tail): its rows beyond N load as zeros (the weight and
  // scale maps' extents are exact) and are never stored
  const int n_cl = (p->n + C::TN * C::CN - 1) / (C::TN * C::CN);
  const int m_cl = (p->m + C::TM * C::CM - 1) / (C::TM * C::CM);
  const int sms = p->sm_count > 0 ? p->sm_count : 132;
  prm.split_k = split_override(prm.split_k, (p->m + C::TM - 1) / C::TM * ((p->n + C::TN - 1) / C::TN),
                               sms * C::kCtasPerSm, p->m, p->n, k_blocks, p->workspace ? p->workspace_bytes : 0);
  const long long units = (long long)n_cl * m_cl * prm.split_k;
  long long clusters = (long long)sms * C::kCtasPerSm / C::kCluster;
  if (clusters < 1) clusters = 1;

  auto kern = w4a16_sm90_kernel<T, C, false>;
  static std::atomic<unsigned long long> attrs_ctx{0};  // once per context (common/func_attr.cuh)
  cudaError_t err = w4a16_func_attr::set_once(kern, attrs_ctx, C::kSmemBytes, -1);
  if (err != cudaSuccess) return (int)err;

  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[2];
  cfg.blockDim = dim3(C::kThreads, 1, 1);
  cfg.dynamicSmemBytes = C::kSmemBytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = C::kCluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  if (C::kCluster > 1) {
    // clusters must sit in one GPC: fewer may fit at once than SMs / cluster size, and the
    // persistent grid must be resident as a whole (queried once per kernel and SM count)
    const int fit = resident_clusters<C, C::kCluster>(kern, sms, clusters * C::kCluster);
    if (fit > 0 && clusters > fit) clusters = fit;
  }
  // Stream-K (the runtime's choice, runtime/families.c) where it is safe: the grid is resident as a
  // whole (a cluster that began a tile waits for the clusters that finish it) and the workspace
  // holds a partial tile per CTA and the flags.
  prm.streamk = 0;
  prm.sk_base = 0;
  prm.sk_rem = 0;
  prm.token = 0;
  prm.flags = nullptr;
  prm.kpair = 0;
  // K pair (Params::kpair) in place of stream-K where two CTAs a tile fill the GPU: the tiles pair
  // up with at least 70 % of the SMs and every pair is resident at once (clusters of two sit in one
  // GPC). Stream-K's fixup (the partial's release, the flag, the reads) costs 9-24 % of these
  // problems' time on an H100-class part; 6144x4096's 48 tiles (96 CTAs) at M = 32 / 64 take
  // 0.97x stream-K's time in the K pair; with 32 tiles (64 CTAs) the halves take 1.3-1.45x
  // stream-K's time.
  // Also in place of split-K into two slices (the runtime's choice for the tiles of tile_k < 256 at
  // these tile counts): no fp32 partials through memory, no reduction kernel (H100: 0.92-1.00x the
  // time of split-K on 17 problems).
  // The workspace the runtime sized for split-K goes unused.
  const long long tiles = (long long)n_cl * m_cl;
  const bool kpair_from = (p->stream_k && prm.split_k == 1 && streamk_enabled()) || (!p->stream_k && prm.split_k == 2);
  if (C::kPairOk && kpair_from && kpair_enabled() && k_blocks >= 2 &&
      2 * tiles <= sms && 20 * tiles >= 7 * (long long)sms && tiles <= resident_clusters<C, 2>(kern, sms, sms / 2 * 2)) {
    prm.kpair = 1 + (C::kPairRing ? kpair_lead<C>() : 0);
    prm.split_k = 1;
    clusters = 2 * tiles;  // CTAs (kCluster is 1)
    attr[0].val.clusterDim.x = 2;
  } else if (p->stream_k && prm.split_k == 1 && streamk_enabled()) {
    const long long k_iters = k_blocks;
    long long g = clusters < tiles * k_iters ? clusters : tiles * k_iters;
    const long long dp = C::kSkDp ? streamk_dp_tiles(tiles, g, k_iters, C::kSkRing) : 0;  // data-parallel tiles a cluster
    const long long iters = (tiles - dp * g) * k_iters;
    const size_t slots = (size_t)g * C::kCluster * C::TN * C::TM * sizeof(float);
    const long long fit = (long long)resident_ctas_per_sm<C>(kern) * sms / C::kCluster;
    if (iters <= INT32_MAX && g <= fit && p->workspace &&
        p->workspace_bytes >= slots + (size_t)g * C::kCluster * sizeof(uint32_t)) {
      prm.streamk = 1 + (int)dp;
      prm.sk_base = (int)(iters / g);
      prm.sk_rem = (int)(iters % g);
      // Parts that shrink with the CTA index (Params::sk_rem, sk_start) for the tiles of <= 16 and
      // >= 128 tokens: the first I % G + B one iteration longer, the last B one shorter, B = (G - I %
      // G) / 2, where the parts hold at least 8 iterations. H100: 128x16x256 on 10240x8192 (19-20
      // k-blocks a part) 0.983-0.986x the time at M = 1..16 with B = 12..40 of 40; 57344x8192,
      // 8192x28672, 28672x4096, 4096x14336 at M = 16 within +-0.2 %; 128x64x256 (not skewed)
      // 1.000-1.001x at M = 64 but 1.004-1.014x at M = 32; 128x128x128 on 6144x4096 at M = 192 /
      // 256 and 4096x4096 at M = 384 (23 k-blocks a part) 0.971-0.979x, 128x256x64 on 10240x8192 at
      // M = 192 / 256 0.998-1.000x.
      const long long skew = (g - iters % g) / 2;
      if ((C::TM <= 16 || C::TM >= 128) && dp == 0 && prm.sk_base >= 8 && skew > 0 && skew_enabled())
        prm.sk_rem = (int)(iters % g + skew) | (int)(skew << 16);
      prm.token = next_token();
      prm.flags = (uint32_t *)((char *)p->workspace + slots);
      clusters = g;
    }
  }
  prm.prefetch = pdl_enabled() ? prefetch_stages<C>(prm.streamk == 1) : 0;
  // the group scales (zeros), [G = K / group] x [N] of the activation dtype: a stage's rows by one
  // copy of a 2-D map where it holds s2d_min_rows<C>() rows or more (per-column: one row, G = 1).
  // H100: groups of 32 0.94x the time of a bulk copy a row (best kernel per problem, geomean;
  // 8192x8192 M = 32 0.85x), zero points 0.98x; one or two rows 0.94-0.99x on all but the tile_k
  // 256 tiles of <= 32 tokens (see s2d_min_rows).
  CUtensorMap tm_s, tm_z;
  memset(&tm_s, 0, sizeof(tm_s));
  memset(&tm_z, 0, sizeof(tm_z));
  prm.s2d = 0;
  const int s_rows = p->group_size > 0 && p->group_size < C::TK ? C::TK / p->group_size : 1;
  // Scale rows by chunks (Cfg::kSChunk > 1: the tile_k 256 tiles of <= 32 tokens): one copy of the
  // 2-D map brings the rows of kSChunk k-blocks into the stage of the chunk's first k-block, where
  // the chunk's other k-blocks read them, in place of a bulk copy a row and k-block (each copy of a
  // stage costs nearly independently of its bytes). The
  // producer makes sure the readers of a stage's rows are done before the stage takes other rows
  // (wait_scale_readers: conservatively, within the first STAGES k-blocks of a unit). Only in the K
  // pair (Params::kpair: one unit a CTA, so no such wait): H100, 8192x8192 / 8192x28672 at
  // M = 1..32 0.94-0.99x the time, while under stream-K the chunks cost 5-6 % (10240x8192,
  // 4096x14336 at M = 24..32; as much without the wait) and tile by tile they change nothing. The
  // cooperative schedule only (its consumers release the stages in order) and groups of 128 .. TK
  // (a power of two: the consumers shift); W4A16_SM90_SCHUNK=0: a copy a row or one of the map a
  // k-block (A/B switch).
  int box_rows = s_rows, chunked = 0;
  const int g = p->group_size;
  if (C::kCoop && C::kSChunk > 1 && (prm.kpair ? schunk_mode() >= 1 : schunk_mode() >= 2) && g >= 128 && g <= C::TK &&
      (g & (g - 1)) == 0 &&
      C::kSChunk * (C::TK / g) <= C::kGrMax) {
    chunked = 1;
    box_rows = C::kSChunk * (C::TK / g);  // chunks begin at group boundaries (k-blocks hold whole groups)
  }
  // a part-full last row tile or k-block (N, K tails): always the map, whose exact extents give zeros
  // beyond N and beyond the last group row (a bulk copy a row would read past the arrays)
  const bool tails = p->n % (C::TN * C::CN) != 0 || p->k % C::TK != 0;
  if (p->group_size > 0 && (chunked || tails || box_rows >= s2d_min_rows<C>())) {
    const int rows = box_rows;
    const cuuint64_t dims[2] = {(cuuint64_t)p->n, (cuuint64_t)(p->k / p->group_size)};
    const cuuint64_t strides[1] = {(cuuint64_t)p->n * 2};
    const cuuint32_t box[2] = {(cuuint32_t)C::TN, (cuuint32_t)rows};
    const cuuint32_t estr[2] = {1, 1};
    auto rows_map = [&](CUtensorMap *map, const void *src) {
      return encode(map, Pk<T>::kTmaType, 2, const_cast<void *>(src), dims, strides, box, estr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
    };
    if (rows_map(&tm_s, p->scales) && (!C::kZeros || rows_map(&tm_z, p->zeros))) prm.s2d = 1 | (chunked << 1) | (rows << 8);
    else if (tails) return (int)cudaErrorInvalidValue;
  }
  if (!prm.streamk && !prm.kpair && clusters > units) clusters = units;
  cfg.gridDim = dim3((unsigned)(clusters * C::kCluster), 1, 1);
  cfg.numAttrs = pdl_enabled() ? 2 : 1;
  if constexpr (C::kSChunk > 1) {
    if (prm.s2d & 2) {
      auto kc = w4a16_sm90_kernel<T, C, true>;
      static std::atomic<unsigned long long> chunked_attrs_ctx{0};
      err = w4a16_func_attr::set_once(kc, chunked_attrs_ctx, C::kSmemBytes, -1);
      if (err != cudaSuccess) return (int)err;
      kern = kc;
    }
  }
  err = cudaLaunchKernelEx(&cfg, kern, tm_a, tm_w, tm_d, tm_a_tail, tm_d_tail, tm_s, tm_z, prm);
  w4a16_sm90_last_streamk = prm.streamk;  // what ran (runtime/internal.h: for the tests)
  w4a16_sm90_last_kpair = prm.kpair;
  w4a16_sm90_last_skew = prm.streamk ? prm.sk_rem >> 16 : 0;
  w4a16_sm90_last_split = prm.split_k;
  if (err != cudaSuccess) return (int)err;
  if (prm.split_k > 1) {
    cudaLaunchConfig_t rc = {};
    rc.gridDim = w4a16_splitk_reduce_grid(p->m, p->n, sms);
    rc.blockDim = dim3(256, 1, 1);
    rc.dynamicSmemBytes = 0;
    rc.stream = stream;
    rc.attrs = &attr[1];
    rc.numAttrs = pdl_enabled() ? 1 : 0;
    err = cudaLaunchKernelEx(&rc, splitk_reduce_pdl<T>, (const float *)p->workspace, prm.split_k, p->m, p->n,
                             p->alpha, (const T *)p->bias, (T *)p->d, (int64_t)p->ldd,
                             prm.prefetch != 0);
    if (err != cudaSuccess) return (int)err;
  }
  return (int)cudaGetLastError();
}

template <typename T, class C>
static inline int probe() {
  cudaFuncAttributes a;
  return (int)cudaFuncGetAttributes(&a, w4a16_sm90_kernel<T, C, false>);
}

}  // namespace w4a16_sm90

// Entry points used by templates/sm90_kernel.cu.j2.
template <typename T, int MODE, int TN, int TM, int TK, int CN, int CM, int SCHED, int STAGES, int NC>
static inline int w4a16_sm90_launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  return w4a16_sm90::launch<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, CN, CM, SCHED, STAGES, NC>>(p, stream);
}

template <typename T, int MODE, int TN, int TM, int TK, int CN, int CM, int SCHED, int STAGES, int NC>
static inline int w4a16_sm90_probe(void) {
  return w4a16_sm90::probe<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, CN, CM, SCHED, STAGES, NC>>();
}

#endif
