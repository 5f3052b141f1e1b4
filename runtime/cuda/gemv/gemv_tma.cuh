// gemv_tma.cuh - the decode path on sm_90: the weights stream through shared memory by TMA bulk
// copies, and each kernel overlaps its weight stream with the previous kernel's tail.
//
// Why (docs/PERFORMANCE.md, GEMV family, "the sm_90 TMA-streaming schedule"): a decode GEMV is one pass over
// the weights, so what is left between it and the HBM roofline is the time the memory system
// idles at its start (launch, first-byte latency) and end (tail, epilogue). tools/pdl_stream_probe.cu
// measured that back-to-back streaming kernels reach 0.96-1.00 of 3.1 TB/s on 35-240 MB layers
// (0.82 at 8.7 MB) when (a) the grid is one wave of equal CTAs, (b) each CTA issues tens of KB of
// weight loads before griddepcontrol.wait, (c) it lets its dependent launch at once, and (d) the
// dependent's CTAs fit beside the running ones (shared memory <= ~1/2 of an SM per CTA). This
// kernel does (b) and (c); (a) only approximately (units of whole row blocks); (d) where each CTA has
// one unit whose weights all go out before the wait (gemv_tma_launch.cuh, "beside"; the grid then padded to
// its CTAs per SM times the SMs, so that on the grids of one unit per SM the next launch's CTAs come in once the
// previous grid has completed), in the SM's whole shared-memory carveout, which every launch asks for.
//
// A CTA is 8 consumer warps + 1 producer warp. Its unit of work is R = TILE_N / 16 consecutive
// 16-row blocks of weights over all of K (no split); the grid has one CTA per unit up to two
// CTAs per SM (one for the tile_m 16 layouts of more than half an SM), which then walk several
// units (a grid of one CTA per SM was measured slower: the decode math of an SM needs the warps
// of 2 CTAs). Stage = 4 TPW KB of
// packed weights (TPW = 4 or 2 tiles of 512 bytes per consumer warp; 8 KB stages let the math of
// the first stages start earlier on layers of one unit per CTA: 4096x4096 M = 1-8 4-13 % faster,
// docs/PERFORMANCE.md): TT = 8 TPW / R 64-wide tiles of each of the R row blocks (tile_k = 64 TT; the
// packed layout keeps a row block's tiles contiguous, docs/LAYOUT.md, so that is R bulk copies),
// plus the stage's activations (one tensor-map box, swizzled: see the layout below) and the
// group scales (and zeros) of its rows (one tensor-map box each). STAGES stages ring on a
// "full" mbarrier each (the producer warp's
// lane 0 posts expect_tx and issues the copies) and an "empty" one (each consumer thread arrives
// when done with the stage; the producer waits for it before refilling the slot).
//
// Warp w takes tiles TPW w .. TPW w + TPW - 1 of the stage's [R][TT] tiles: row block (TPW w) / TT,
// TPW consecutive 64-wide k tiles, two at a time (their shared-memory loads first, then the math;
// four would spill at the 96-register cap of two CTAs per SM). Per tile: one 16-byte shared load
// per lane (its mma A fragments), dequant (common/dequant.cuh), ldmatrix of the activations,
// mma.sync m16n8k16 and the group scale in fp32. Two consumers (VAR below): the specialized one
// (fine-grained modes with group >= 128, per-column; w4a16_gemv_tma_stage_fast) hoists every
// stage-invariant address out of the loop (M = 1: ldmatrix addresses are immediates; the scale
// pair of a 128-k tile pair is one address) and feeds exact codes (q - 8): 66 SASS instructions
// per 512-byte tile at M = 1 (44 of them dequant), 74 at M > 1 (tile_m 16: two n8 token blocks
// share each dequantized fragment), against about 80 executed by the
// generic one, whose chain per tile is twice as long (8 mma: w4a16_gemv_tile_mma,
// shared with gemv.cuh; bf16 codes biased by 128, the bias removed by one more mma,
// w4a16_gemv_biased). Per-column zero points on the tile_m 16 kernels take the specialized stage in
// a per-column form (W4A16_GEMV_TMA_PCOL below). The 8 / R warps of a row block are summed in a
// reduction buffer in warp order (deterministic), then stored (w4a16_gemv_store).
//
// Programmatic dependent launch: before griddepcontrol.wait a CTA issues the weight and scale
// (zero) copies of its first STAGES stages - the quantized weights, which w4a16.h's ordering
// contract keeps constant across the dependency - and executes launch_dependents, so the next
// kernel's CTAs can start streaming while this one runs; A is copied after the wait, D written
// after it. Shared memory is sized at launch for the actual M (A rows) and group size.
// sm_90a only (cp.async.bulk, mbarrier tx counts, griddepcontrol); the runtime's architecture
// guard never launches it elsewhere.
#ifndef W4A16_GEMV_GEMV_TMA_CUH
#define W4A16_GEMV_GEMV_TMA_CUH

#include "gemv/gemv.cuh"
#include "sm90/sm90_ptx.cuh"

// packed-weight bytes per stage: 8 consumer warps x TPW 64-wide tiles of 512 bytes (TPW = 4: 16 KB;
// TPW = 2: 8 KB, finer stages for layers of one or two units per CTA)
#define W4A16_GEMV_TMA_STAGE_W(TPW) (4096 * (TPW))
// the largest layout of a kernel that runs two CTAs per SM (generator/families/gemv.py TMA_SMEM_LIMIT)
#define W4A16_GEMV_TMA_HALF_SM (113 * 1024)
// just over half an SM's shared memory: a CTA that asks for it leaves no room for a second one
// (two of them and their reserved 1 KB exceed the 228 KB)
#define W4A16_GEMV_TMA_OVER_HALF_SM (W4A16_GEMV_TMA_HALF_SM + 1024)

// Shared-memory layout of one launch (runtime M and group size), from a 1024-byte aligned base:
// STAGES x [weights | A | scales | zeros], the row-block reduction buffer, the stage barriers.
// A of a stage is one 3-D TMA box [TT k tiles][M rows][64 k] with the 128-byte swizzle (16-byte
// chunk c of 128-byte line L at c ^ (L % 8)): rows of one k tile are consecutive lines, so
// ldmatrix over 8 token rows is conflict-free (M = 1: one plain bulk copy, unswizzled, measured
// faster on the smallest layers); scales are one 2-D box [groups][16 R]. One copy per operand
// and stage, not one per token row or group: on 8192x8192 that took M = 8 from 16.2 to 13.1 µs.
struct w4a16_gemv_tma_layout {
  uint32_t a_off;    // offset of the activations in a stage (1024-aligned)
  uint32_t s_off;    // offset of the scales in a stage (then zeros at + z_step)
  uint32_t s_bytes;  // scale bytes per stage: groups per stage x R x 32
  uint32_t z_step;   // the zeros' offset from the scales: s_bytes rounded up to 128, the alignment of a
                     // tensor copy's destination (one group row of 16 or 32 rows is 32 or 64 bytes)
  uint32_t stage;    // bytes per stage (multiple of 1024)
  uint32_t red;      // offset of the row-block reduction buffer ((8 - R) warps x n8 blocks x 512 bytes)
  uint32_t bars;     // offset of the STAGES full, then STAGES empty barriers
  uint32_t total;    // dynamic shared memory bytes
};

static constexpr __host__ __device__ __forceinline__ struct w4a16_gemv_tma_layout w4a16_gemv_tma_layout_of(
    int R, int tpw, int tile_m, int stages, int m, int group_shift, int vectors) {
  struct w4a16_gemv_tma_layout l = {};
  const int tt = 8 * tpw / R;
  const int gps = vectors ? ((64 * tt) >> group_shift > 0 ? (64 * tt) >> group_shift : 1) : 0;
  l.a_off = (uint32_t)W4A16_GEMV_TMA_STAGE_W(tpw);
  l.s_off = l.a_off + (uint32_t)(m * tt * 128);
  l.s_bytes = (uint32_t)(gps * R * 32);
  l.z_step = (l.s_bytes + 127u) & ~127u;
  l.stage = (l.s_off + (vectors > 1 ? l.z_step + l.s_bytes : l.s_bytes * (uint32_t)vectors) + 1023u) & ~1023u;
  l.red = l.stage * (uint32_t)stages;
  l.bars = l.red + (uint32_t)(8 - R) * (uint32_t)((tile_m + 7) / 8) * 512u;
  l.total = l.bars + 16u * (uint32_t)stages + 1024u;  // + base alignment slack
  return l;
}

// The consumer's specializations (template parameter VAR of the kernel), chosen per launch by
// w4a16_gemv_tma_launch (gemv_tma_launch.cuh) from M and the group size (W4A16_GEMV_TMA_GENERIC,
// runtime/debug.h: none, for measurement):
//   W4A16_GEMV_TMA_M1    M == 1: A came by a plain copy, so the ldmatrix addresses are immediates
//                        off one base;
//   W4A16_GEMV_TMA_GBIG  FINEGRAINED_SCALE_ONLY / _AND_ZEROS with group >= 128: the two tiles of a
//                        batch (128 aligned k) share one group row, so one scale (zero) pair per
//                        batch, its address hoisted out of the loop; PER_COLUMN_SCALE_ONLY: no
//                        scales in the loop.
//   W4A16_GEMV_TMA_G64   the fine-grained modes with group 64: one scale (zero) row per tile;
//   W4A16_GEMV_TMA_G32   group 32: one per half tile (two mma chains per tile, one per row);
//                        both at immediate offsets from the warp's first row.
// With either of M1, GBIG (the fine-grained modes: with one of the group bits) the stage goes
// through w4a16_gemv_tma_stage_fast: stage-invariant addresses hoisted, exact codes (q - 8 by the
// packed subtraction of common/dequant.cuh, no bias-removing mma; zero points: q, and the zero
// applied to each token's activation sum), mma free to interleave across the warp's four tiles.
//   W4A16_GEMV_TMA_PCOL  FINEGRAINED_SCALE_AND_ZEROS with one group a column (group = K; alone or
//                        with M1): per-column zero points. With zq = -z / s, w = s q + z = s (q - zq),
//                        so the codes go into the mma as (q - 8) - (zq - 8) (the exact q - 8 of the
//                        per-column mode, then one more packed subtraction of the row's zq - 8, held
//                        in the activation dtype) and s[n] is applied in the epilogue as for
//                        PER_COLUMN_SCALE_ONLY: no scale or zero streamed, no activation-sum mma. The
//                        weight is rounded once to the activation dtype (as q - zq, a relative error
//                        of one rounding of w, as in the zero-point modes' q s + z). A column whose
//                        zq is not finite in that dtype (s = 0, or |z / s| past fp16's range) takes
//                        its codes as q - 8 and gets s sum_k a (q - 8) + (z + 8 s) sum_k a from the
//                        activation sums, read from global memory in the epilogue (rare: a warp with
//                        no such column never reads them). Where every row of a warp has an integer
//                        offset (zq within the rounding of z in the dtype of an integer r, |r| <= 120:
//                        the zero points of GPTQ, AWQ and compressed-tensors checkpoints, z = -s zq),
//                        its codes come exact as q - r in one subtraction (MAGIC + q less MAGIC + r,
//                        both exact), the cost of the per-column scale-only codes; the result then
//                        differs from s q + z by at most the rounding of z to the dtype.
//   W4A16_GEMV_TMA_PERM  with M1 | GBIG: act-order (args.a_perm, w4a16_gemm_args): the row of A the
//                        stages read is A[0, a_perm[k]]. No stage copies A: after the wait the
//                        producer lane bulk-copies the whole row (2 K bytes) into shared memory once,
//                        and the 256 consumer threads gather it through a_perm into a second row (8
//                        columns a thread at a time; their indices read from global memory before
//                        the copy lands: a_perm is constant across the dependency, like the
//                        weights), which every stage's ldmatrix then reads at the stage's k. It
//                        replaces w4a16_gather_k's kernel before the GEMV; 4 K bytes of shared
//                        memory more (w4a16_gemv_tma_perm_layout). The runtime chooses it in calls
//                        with W4A16_GEMM_NO_PDL (runtime/gemm.c): with the programmatic launch the
//                        separate gather, which runs while the GEMV's first stages stream, costs less
//                        (H100 decode step, docs/PERFORMANCE.md).
// The generic consumer (per-half scales, zeros, w4a16_gemv_tile_mma; bf16 codes biased by 128 and
// the bias removed by one more mma per k16 step) runs only under W4A16_GEMV_TMA_GENERIC.
#define W4A16_GEMV_TMA_M1 1
#define W4A16_GEMV_TMA_GBIG 2
#define W4A16_GEMV_TMA_G64 4
#define W4A16_GEMV_TMA_G32 8
#define W4A16_GEMV_TMA_PCOL 16
#define W4A16_GEMV_TMA_PERM 32

// The act-order variant's (W4A16_GEMV_TMA_PERM) shared memory past the layout of a launch without A
// in its stages (w4a16_gemv_tma_layout_of with m = 0): the row's barrier after the stage barriers,
// then the row as copied (2 K bytes) and as gathered (2 K bytes), 128-aligned.
struct w4a16_gemv_tma_perm_layout {
  uint32_t bar;       // the row copy's mbarrier
  uint32_t raw;       // A[0, 0 .. K) as copied
  uint32_t gathered;  // A[0, a_perm[0 .. K)), what the stages read
  uint32_t total;     // dynamic shared memory bytes
};

static constexpr __host__ __device__ __forceinline__ struct w4a16_gemv_tma_perm_layout w4a16_gemv_tma_perm_layout_of(
    const struct w4a16_gemv_tma_layout &l, int stages, int k) {
  struct w4a16_gemv_tma_perm_layout p = {};
  p.bar = l.bars + 16u * (uint32_t)stages;
  p.raw = (p.bar + 8u + 127u) & ~127u;
  p.gathered = p.raw + 2u * (uint32_t)k;
  p.total = p.gathered + 2u * (uint32_t)k + 1024u;  // + base alignment slack
  return p;
}

// Group vectors a stage streams (scales, zeros) for the kernel of MODE and consumer variant VAR:
// none for per-column scales and for per-column zero points (W4A16_GEMV_TMA_PCOL, whose scale and
// zero are read once per unit), 2 for zero points in groups, 1 otherwise.
static constexpr __host__ __device__ int w4a16_gemv_tma_vectors(int mode, int var) {
  return mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0
         : mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? ((var & W4A16_GEMV_TMA_PCOL) != 0 ? 0 : 2)
                                                     : 1;
}

// The per-column zero point of one weight row as the codes' second subtrahend (W4A16_GEMV_TMA_PCOL):
// (zq - 8, zq - 8) in the activation dtype with zq = -z / s, and *exotic set (the pair 0) where that
// value is not finite in the dtype; the row then needs the activation-sum correction.
template <typename T>
static __device__ __forceinline__ uint32_t w4a16_gemv_pcol_zero(float s, float z, bool *exotic) {
  const float c = -z / s - 8.f;
  const T h = w4a16_from_float<T>(c);
  const float back = w4a16_to_float(h);
  *exotic = !(s != 0.f && isfinite(c) && isfinite(back));
  if (*exotic) return 0u;
  const uint32_t bits = (uint32_t)(*reinterpret_cast<const unsigned short *>(&h));
  return bits | bits << 16;
}

// Sum over all of K of token row m of A (fp32; every lane of the warp gets it): the activation
// sum of the exotic-column correction (W4A16_GEMV_TMA_PCOL), off the fast path.
template <typename T>
static __device__ __noinline__ float w4a16_gemv_row_sum(const T *a, int k_total) {
  float s = 0.f;
  for (int k = (int)(threadIdx.x & 31); k < k_total; k += 32) s += w4a16_to_float(a[k]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

// One stage of one consumer warp, specialized (VAR above): tiles u = 0..3 of the warp (row block
// rw, k tiles t0 + u), two at a time, for NB n8 blocks of tokens (tile_m 16: two, each weight
// fragment dequantized once for both). st: the stage's shared-memory address; w_off: the lane's 16
// bytes of tile 0; a_base[nb]: M1: the lane's ldmatrix address of tile 0 (tile u: + 128 u, high
// 32 k: + 64); else tile 0's 128-byte line of the lane's token row in block nb (line of tile u:
// + u a_step, the 16-byte chunk swizzled by the line where a_swz is set); s_pair: the scale address
// (row g) of tiles 0-1 and 2-3 (groups >= 128; smaller groups: rows off s_pair[0]); z_bytes: the
// zeros' offset from the scales (zero points);
// nb_live: the n8 token blocks that hold rows (the grouped form's unit of at most 8 rows on a 16-row
// tile: 1, and block 1's ldmatrix and mma are not issued; its acc stays as it was).
//
// Zero points (FINEGRAINED_SCALE_AND_ZEROS): w = q s + z with the raw code q (0..15), so per
// group sum_k w a_k = s sum_k (MAGIC + q) a_k + (z - MAGIC s) sum_k a_k. The codes go into the mma
// biased and exact (MAGIC + q, one lop3 per register: common/dequant.cuh, MAGIC = 128 for bf16,
// 1024 for fp16), a second mma per k16 step against a constant fragment of ones gives sum_k a_k of
// each token (the same for all 16 rows; exact products, fp32 sums), and both partials are folded
// per tile: acc += s part + (z - MAGIC s) sum, the last factor formed in fp32. 28 dequant
// instructions per tile instead of the symmetric modes' 44 (no packed subtraction), for 4 more mma
// in a chain of their own; the generic consumer instead forms q s + z per weight in 16-bit floats.
// Like the bias-removing mma of the generic bf16 consumer (w4a16_gemv_biased), the result equals
// the exact codes' up to the fp32 rounding of the larger biased partial sums.
template <bool BF16, int MODE, int R, int NB, int TPW, int VAR, bool FZ = false>
static __device__ __forceinline__ void w4a16_gemv_tma_stage_fast(float (&acc)[NB][4], uint32_t st, uint32_t w_off,
                                                                 const uint32_t (&a_base)[NB],
                                                                 const uint32_t (&s_pair)[2], uint32_t a_step,
                                                                 uint32_t a_swz, uint32_t z_bytes,
                                                                 const uint32_t (&zc)[2], int nb_live = NB) {
  static_assert(NB == 1 || NB == 2, "tile_m 4, 8 or 16: one or two n8 token blocks");
  static_assert(NB == 1 || (VAR & W4A16_GEMV_TMA_M1) == 0, "M = 1: one n8 block");
  // per-column zero points (W4A16_GEMV_TMA_PCOL): the per-column stage, and the row's zq - 8 (zc:
  // rows g, g + 8) subtracted from the codes
  constexpr bool PCZ = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS && (VAR & W4A16_GEMV_TMA_PCOL) != 0;
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !PCZ;  // zero points per group row
  constexpr int DQ_MODE = PCZ ? W4A16_PER_COLUMN_SCALE_ONLY : MODE;
  constexpr bool M1 = (VAR & W4A16_GEMV_TMA_M1) != 0;
  // k covered by one scale (zero) row: a tile pair (groups >= 128), a tile (64), half a tile (32);
  // 0: per-column (the scales in the epilogue)
  constexpr int GS = DQ_MODE == W4A16_PER_COLUMN_SCALE_ONLY ? 0
                     : (VAR & W4A16_GEMV_TMA_GBIG) != 0  ? 128
                     : (VAR & W4A16_GEMV_TMA_G64) != 0   ? 64
                     : (VAR & W4A16_GEMV_TMA_G32) != 0   ? 32
                                                         : -1;
  static_assert(GS >= 0, "fine-grained modes: one of the group bits");
  constexpr int NH = GS == 32 ? 2 : 1;  // scale rows per tile
  constexpr uint32_t kSRow = R * 32;    // bytes per group row of the stage's scales
  // the ones fragment (bf16 / fp16 1.0 pairs) of the zero-point sum mma, and the codes' bias (the
  // symmetric modes with biased codes and the sum mma, -(MAGIC + 8) s as its factor, are 0-24 %
  // slower than with their exact codes)
  const uint32_t one2 = BF16 ? 0x3f803f80u : 0x3c003c00u;
  const uint32_t kones[4] = {one2, one2, one2, one2};
  constexpr float kMagic = BF16 ? 128.f : 1024.f;
  (void)kones;
  (void)z_bytes;
  (void)zc;
  static_assert(!FZ || (MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS && (VAR & W4A16_GEMV_TMA_PCOL) != 0),
                "integer offsets: the per-column zero-point consumer only");
  const uint32_t chunk16 = (uint32_t)((threadIdx.x & 31) >> 3) << 4;
#pragma unroll
  for (int u0 = 0; u0 < TPW; u0 += 2) {
    uint32_t wq[2][4], b[2][NB][8];
#pragma unroll
    for (int x = 0; x < 2; ++x)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(wq[x][0]), "=r"(wq[x][1]), "=r"(wq[x][2]), "=r"(wq[x][3])
                   : "r"(st + w_off + (u0 + x) * 512));
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        if (nb > 0 && nb >= nb_live) continue;
        uint32_t lo[4], hi[4];
        uint32_t la;
        if constexpr (M1) {
          la = st + a_base[nb] + (uint32_t)(u0 + x) * 128u;
        } else {
          // stage-relative address of tile u's line (line0 + u M); the 128-byte swizzle XORs the
          // 16-byte chunk with the line (the box starts 1024-aligned)
          const uint32_t lb = a_base[nb] + (uint32_t)(u0 + x) * a_step;
          la = st + lb + (chunk16 ^ (lb & a_swz) >> 3);
        }
        w4a16_gemv_ldsm_x4(lo, la);
        w4a16_gemv_ldsm_x4(hi, M1 ? la + 64u : (la ^ 64u));  // k + 32: chunk + 4
#pragma unroll
        for (int y = 0; y < 4; ++y) {
          b[x][nb][y] = lo[y];
          b[x][nb][4 + y] = hi[y];
        }
      }
    // the scales of rows g and g + 8 (per-column: 1, applied in the epilogue) and, for zero points,
    // z - MAGIC s (the sum's factor: the codes come biased), of scale row h of tile x
    float sf[2][NH][2], zf[2][NH][2];
    auto to_f = [](uint32_t v) {
      return BF16 ? __uint_as_float(v << 16) : __half2float(__ushort_as_half((unsigned short)v));
    };
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int h = 0; h < NH; ++h) {
        // the row's address: the pair's (groups >= 128), else off the warp's first row by immediates
        const uint32_t s_a = GS == 128 ? st + s_pair[u0 / 2]
                                       : st + s_pair[0] + (uint32_t)(((u0 + x) * 64 + 32 * h) / (GS > 0 ? GS : 64)) * kSRow;
        if constexpr (GS == 0) {
          sf[x][h][0] = sf[x][h][1] = 1.f;
        } else if (GS == 128 && x == 1) {  // the pair's row, loaded for x = 0
          sf[1][h][0] = sf[0][h][0];
          sf[1][h][1] = sf[0][h][1];
        } else {
          sf[x][h][0] = to_f(w4a16_gemv_lds_u16(s_a));
          sf[x][h][1] = to_f(w4a16_gemv_lds_u16(s_a + 16));
        }
        zf[x][h][0] = zf[x][h][1] = 0.f;
        if constexpr (ZP) {
          if (GS == 128 && x == 1) {
            zf[1][h][0] = zf[0][h][0];
            zf[1][h][1] = zf[0][h][1];
          } else {
            zf[x][h][0] = fmaf(-kMagic, sf[x][h][0], to_f(w4a16_gemv_lds_u16(s_a + z_bytes)));
            zf[x][h][1] = fmaf(-kMagic, sf[x][h][1], to_f(w4a16_gemv_lds_u16(s_a + z_bytes + 16)));
          }
        }
      }
#pragma unroll
    for (int x = 0; x < 2; ++x) {
      uint32_t q[4][4];
      if constexpr (ZP) {  // MAGIC + q, exact
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if constexpr (BF16)
            w4a16_u4x8_to_bf16x8_biased(wq[x][j], q[j]);
          else
            w4a16_u4x8_to_f16x8_biased(wq[x][j], q[j]);
        }
      } else if constexpr (FZ) {
        // exact q - r: MAGIC + q (one lop3) less the row's MAGIC + r (zc: rows g, g + 8; common/dequant.cuh)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if constexpr (BF16)
            w4a16_u4x8_to_bf16x8_less(wq[x][j], zc[0], zc[1], q[j]);
          else
            w4a16_u4x8_to_f16x8_less(wq[x][j], zc[0], zc[1], q[j]);
        }
      } else {
        w4a16_gemv_dequant<BF16, DQ_MODE, false>(wq[x], q);  // exact q - 8
        if constexpr (PCZ) {  // q - zq: the A fragment's registers 0, 2 are row g, 1, 3 row g + 8
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) q[j][r] = w4a16_gemv_sub2<BF16>(q[j][r], zc[r & 1]);
        }
      }
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int h = 0; h < NH; ++h) {  // the k16 steps of scale row h: j = 4 h / NH ..
          if (nb > 0 && nb >= nb_live) continue;
          float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int j = 4 * h / NH; j < 4 * (h + 1) / NH; ++j)
            w4a16_gemv_mma<BF16, false>(part, q[j], b[x][nb][2 * j], b[x][nb][2 * j + 1]);
          acc[nb][0] = fmaf(sf[x][h][0], part[0], acc[nb][0]);
          acc[nb][1] = fmaf(sf[x][h][0], part[1], acc[nb][1]);
          acc[nb][2] = fmaf(sf[x][h][1], part[2], acc[nb][2]);
          acc[nb][3] = fmaf(sf[x][h][1], part[3], acc[nb][3]);
          if constexpr (ZP) {
            float sum[4] = {0.f, 0.f, 0.f, 0.f};  // sum_k a_k of tokens 2t, 2t + 1 (rows g, g + 8 alike)
#pragma unroll
            for (int j = 4 * h / NH; j < 4 * (h + 1) / NH; ++j)
              w4a16_gemv_mma<BF16, false>(sum, kones, b[x][nb][2 * j], b[x][nb][2 * j + 1]);
            acc[nb][0] = fmaf(zf[x][h][0], sum[0], acc[nb][0]);
            acc[nb][1] = fmaf(zf[x][h][0], sum[1], acc[nb][1]);
            acc[nb][2] = fmaf(zf[x][h][1], sum[2], acc[nb][2]);
            acc[nb][3] = fmaf(zf[x][h][1], sum[3], acc[nb][3]);
          }
        }
    }
  }
}

// The WPR consumer warps of a row block (warps w .. w + WPR - 1, w % WPR == 0), summed in warp order
// through the reduction buffer red ((8 - R) warps x NB n8 blocks x 32 lanes of float4; named barriers
// 1 and 2 over the 256 consumer threads): true in the leading warp, whose acc then holds the sum; the
// others' acc are spent. Deterministic. Every consumer thread calls it once a unit (the leaders' reads
// of the previous unit are done when all pass the first barrier).
template <int NB, int WPR>
static __device__ __forceinline__ bool w4a16_gemv_tma_reduce(float (&acc)[NB][4], float4 *red, int warp, int lane) {
  if constexpr (WPR > 1) {
    asm volatile("bar.sync 1, %0;" ::"n"(W4A16_GEMV_THREADS) : "memory");  // the consumer warps
    if (warp % WPR != 0) {  // the non-leading warps, packed: slot warp - warp / WPR - 1
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        red[((warp - warp / WPR - 1) * NB + nb) * 32 + lane] = make_float4(acc[nb][0], acc[nb][1], acc[nb][2], acc[nb][3]);
    }
    asm volatile("bar.sync 2, %0;" ::"n"(W4A16_GEMV_THREADS) : "memory");
    if (warp % WPR != 0) return false;
#pragma unroll
    for (int w2 = 1; w2 < WPR; ++w2)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const float4 v = red[((warp + w2 - warp / WPR - 1) * NB + nb) * 32 + lane];
        acc[nb][0] += v.x;
        acc[nb][1] += v.y;
        acc[nb][2] += v.z;
        acc[nb][3] += v.w;
      }
  }
  return true;
}

// CTAs per SM the registers must allow (__launch_bounds__): 3 (72 registers at most) for the
// one-row-block units (R = 1), whose grids hold two CTAs a SM, so that a CTA of the next kernel fits
// beside them where the launch lets it (w4a16_gemv_tma_launch_variant, "beside"), in the consumers that fit 72
// registers without spilling (groups >= 128 and per-column, zero points only per column); 2 otherwise.
#define W4A16_GEMV_TMA_MIN_CTAS(MODE, R, VAR)                                                             \
  ((R) == 1 && ((MODE) != W4A16_FINEGRAINED_SCALE_AND_ZEROS || ((VAR) & W4A16_GEMV_TMA_PCOL) != 0) &&      \
           ((VAR) & (W4A16_GEMV_TMA_M1 | W4A16_GEMV_TMA_GBIG | W4A16_GEMV_TMA_PCOL)) != 0 &&               \
           ((VAR) & (W4A16_GEMV_TMA_G64 | W4A16_GEMV_TMA_G32)) == 0                                        \
       ? 3                                                                                                \
       : 2)

template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW, int VAR = 0>
__global__ void __launch_bounds__(W4A16_GEMV_THREADS + 32, W4A16_GEMV_TMA_MIN_CTAS(MODE, R, VAR))
    w4a16_gemv_tma_kernel(const struct w4a16_gemv_args args, const __grid_constant__ CUtensorMap tm_a,
                          const __grid_constant__ CUtensorMap tm_s, const __grid_constant__ CUtensorMap tm_z) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  constexpr bool PC = MODE == W4A16_PER_COLUMN_SCALE_ONLY;
  constexpr bool PCZ = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS && (VAR & W4A16_GEMV_TMA_PCOL) != 0;
  static_assert(!PCZ || (VAR & ~W4A16_GEMV_TMA_M1) == W4A16_GEMV_TMA_PCOL, "PCOL: alone or with M1");
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !PCZ;  // zeros streamed per stage
  constexpr int VEC = w4a16_gemv_tma_vectors(MODE, VAR);
  constexpr int TT = 8 * TPW / R;  // 64-wide k tiles of each row block per stage
  constexpr int TK = 64 * TT;     // K per stage
  constexpr int NB = (TILE_M + 7) / 8;  // n8 token blocks
  constexpr int WPR = 8 / R;      // warps per row block
  constexpr int UB = 2;  // tiles whose loads are issued together (4 spill at the 96-register cap)
  constexpr bool BF16 = std::is_same<T, __nv_bfloat16>::value;
  constexpr bool M1 = (VAR & W4A16_GEMV_TMA_M1) != 0;
  constexpr bool PERM = (VAR & W4A16_GEMV_TMA_PERM) != 0;  // act-order: the row gathered once (VAR above)
  static_assert(!PERM || VAR == (W4A16_GEMV_TMA_M1 | W4A16_GEMV_TMA_GBIG | W4A16_GEMV_TMA_PERM),
                "PERM: with M1 and GBIG only");
  // the specialized consumer (VAR above): per-column with either bit, the fine-grained modes with
  // one of the group bits
  constexpr bool FAST = (PC && VAR != 0) || PCZ ||
                        (!PC && (VAR & (W4A16_GEMV_TMA_GBIG | W4A16_GEMV_TMA_G64 | W4A16_GEMV_TMA_G32)) != 0);
  constexpr bool BIASED = w4a16_gemv_biased<BF16, MODE>::value;  // generic consumer: bias removed by one more mma
  static_assert(R == 1 || R == 2 || R == 4 || R == 8, "R: 1, 2, 4 or 8 row blocks per CTA");
  static_assert(TPW == 2 || TPW == 4, "TPW: 2 or 4 tiles per consumer warp and stage");
  static_assert(TILE_M == 4 || TILE_M == 8 || TILE_M == 16, "TILE_M is 4, 8 or 16");

  extern __shared__ __align__(1024) unsigned char w4a16_gemv_tma_smem[];
  const uint32_t base0 = (uint32_t)__cvta_generic_to_shared(w4a16_gemv_tma_smem);
  const uint32_t base = (base0 + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1024 bytes
  const int M = args.m, N = args.n;
  const int gshift = (int)args.gshift;
  // (act-order: no A in the stages; the row's own space after them)
  const struct w4a16_gemv_tma_layout L = w4a16_gemv_tma_layout_of(R, TPW, TILE_M, STAGES, PERM ? 0 : M, gshift, VEC);
  const struct w4a16_gemv_tma_perm_layout PL = w4a16_gemv_tma_perm_layout_of(L, STAGES, args.k);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int ktiles = args.k >> 6;           // 64-wide tiles per row block
  const int n_st = args.k / TK;             // stages per unit
  const int units = N / (16 * R);           // units of R row blocks; this CTA takes blockIdx.x + j gridDim.x
  const int my_units = (units - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
  const int total = my_units * n_st;        // stages this CTA streams, in order (unit, stage)
  const uint32_t bars = base + L.bars;

  // the producer lane: the copies of stage c into slot c % STAGES. Weights and scales are
  // "constant" (may precede the wait), activations are not.
  uint64_t pol_stream = 0;
  if (threadIdx.x == W4A16_GEMV_THREADS) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol_stream));
    w4a16_sm90::tma_prefetch_desc(&tm_a);
    if constexpr (VEC > 0) w4a16_sm90::tma_prefetch_desc(&tm_s);
    if constexpr (ZP) w4a16_sm90::tma_prefetch_desc(&tm_z);
  }
  const uint32_t tx = (uint32_t)W4A16_GEMV_TMA_STAGE_W(TPW) + (uint32_t)(PERM ? 0 : M * TK * 2) + L.s_bytes * VEC;
  // sequence number c = (unit j of this CTA, stage i of its K): slot c % STAGES
  auto issue_const = [&](int c) {
    const int j = c / n_st, i = c - j * n_st;
    const int rb0 = ((int)blockIdx.x + j * (int)gridDim.x) * R;
    const unsigned char *wsrc = args.w + (size_t)rb0 * ktiles * 512;
    const uint32_t st = base + (uint32_t)(c % STAGES) * L.stage;
    const uint32_t bar = bars + 8u * (uint32_t)(c % STAGES);
    w4a16_sm90::mbar_arrive_expect_tx(bar, tx);
#pragma unroll
    for (int r = 0; r < R; ++r)
      w4a16_sm90::bulk_load_hint(st + r * TT * 512, wsrc + ((size_t)r * ktiles + (size_t)i * TT) * 512, TT * 512,
                                 bar, pol_stream);
    if constexpr (VEC > 0) {  // [groups of the stage][16 R rows]: one box
      const int g0 = (i * TK) >> gshift;
      w4a16_sm90::tma_load_2d(st + L.s_off, &tm_s, bar, rb0 * 16, g0);
      if constexpr (ZP) w4a16_sm90::tma_load_2d(st + L.s_off + L.z_step, &tm_z, bar, rb0 * 16, g0);
    }
  };
  auto issue_a = [&](int c) {  // [TT k tiles][M rows][64 k]: one box (M = 1: one plain copy)
    if constexpr (PERM) return;  // the row came once, before the stages
    const int i = c % n_st;
    const uint32_t st = base + (uint32_t)(c % STAGES) * L.stage;
    const uint32_t bar = bars + 8u * (uint32_t)(c % STAGES);
    if (M == 1)
      w4a16_sm90::bulk_load(st + L.a_off, (const T *)args.a + (size_t)i * TK, TK * 2, bar);
    else
      w4a16_sm90::tma_load_3d(st + L.a_off, &tm_a, bar, 0, 0, i * TT);
  };

  const bool producer = warp == W4A16_GEMV_WARPS;  // the 9th warp: lane 0 issues every copy
  if (producer && lane == 0) {
    for (int s = 0; s < STAGES; ++s) {
      w4a16_sm90::mbar_init(bars + 8u * s, 1);
      w4a16_sm90::mbar_init(bars + 8u * (STAGES + s), W4A16_GEMV_THREADS);
    }
    if constexpr (PERM) w4a16_sm90::mbar_init(base + PL.bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int c = 0; c < STAGES && c < total; ++c) issue_const(c);
  }
  __syncthreads();
  // every CTA of this grid is resident (one wave of CTAs that fit twice per SM): the next
  // kernel may launch now; it waits for this grid's completion before reading what we write
  w4a16_griddep_launch_dependents();
  if (producer) {
    if (lane == 0) {
      w4a16_griddep_wait();
      if constexpr (PERM) {  // the whole row of A, once
        w4a16_sm90::mbar_arrive_expect_tx(base + PL.bar, (uint32_t)args.k * 2u);
        w4a16_sm90::bulk_load(base + PL.raw, args.a, (uint32_t)args.k * 2u, base + PL.bar);
      }
      for (int c = 0; c < STAGES && c < total; ++c) issue_a(c);
      for (int c = STAGES; c < total; ++c) {
        // slot c % STAGES is free once the 256 consumer threads have arrived for stage c - STAGES
        w4a16_sm90::mbar_wait(bars + 8u * (uint32_t)(STAGES + c % STAGES), (uint32_t)(c / STAGES - 1) & 1u);
        issue_const(c);
        issue_a(c);
      }
    }
    return;
  }

  // this warp's tiles: row block rw, k tiles t0 .. t0 + 3 of each stage
  const int rw = (TPW * warp) / TT, t0 = (TPW * warp) % TT;
  // ldmatrix: this lane's token row (rows >= M clamped to M - 1: computed, never stored) and
  // 16-byte chunk (lane >> 3: k 8 (lane >> 3) of the tile's low 32 k, + 4 for the high 32)
  int arow[NB];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    const int row = nb * 8 + (lane & 7);
    arow[nb] = row < M ? row : M - 1;
  }
  const int chunk = lane >> 3;
  const int swz = M > 1 ? 7 : 0;  // M = 1: A came by a plain copy (one row, no swizzle)
  const uint32_t w_off = (uint32_t)(rw * TT + t0) * 512 + lane * 16;
  const uint32_t s_off = L.s_off + rw * 32 + g * 2;

  // the fast consumer's stage-invariant offsets (w4a16_gemv_tma_stage_fast)
  uint32_t a_base[NB], a_step = 0, a_swz = 0;
  uint32_t s_pair[2] = {0u, 0u};
  if constexpr (PERM) {
    a_base[0] = 0u;  // per stage, off the gathered row (below)
  } else if constexpr (M1) {
    a_base[0] = L.a_off + (uint32_t)t0 * 128u + (uint32_t)chunk * 16u;  // row 0, line t0 + u: + 128 u
  } else {
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) {
      const int line = t0 * M + arow[nb];  // tile t0's line; tile u's: + u M (swizzled by line & 7)
      a_base[nb] = L.a_off + (uint32_t)line * 128u;
    }
    a_step = (uint32_t)M * 128u;
    a_swz = M > 1 ? 0x380u : 0u;  // M = 1: a plain copy, not swizzled
  }
  if constexpr (FAST && !PC && !PCZ) {  // the group row of tiles (t0, t0 + 1) and (t0 + 2, t0 + 3) in a stage
#pragma unroll
    for (int p = 0; p < 2; ++p)
      s_pair[p] = s_off + (uint32_t)(((t0 + 2 * p) * 64) >> gshift) * (uint32_t)(R * 32);
  }
  (void)a_step;
  (void)a_swz;

  if constexpr (PERM) {
    // gathered[k] = raw[a_perm[k]] in chunks of 8 columns (one 16-byte store); a pass gives each
    // consumer thread two chunks, c and c + 256. Each pass's indices are loaded before the previous
    // pass's gather, the first pass's before the row has landed. An index outside [0, K)
    // reads nothing and gives NaN (0x7fff in fp16 and bf16), as w4a16_gather_k.
    const int32_t *perm = args.a_perm;
    const int chunks = args.k >> 3;
    const uint32_t k_u = (uint32_t)args.k;
    int4 idx[2][2];
    auto load_idx = [&](int c, int4 (&q)[2]) {
      if (c < chunks) {
        q[0] = __ldg(reinterpret_cast<const int4 *>(perm + 8 * c));
        q[1] = __ldg(reinterpret_cast<const int4 *>(perm + 8 * c + 4));
      }
    };
    auto gather = [&](int c, const int4 (&q)[2]) {
      if (c >= chunks) return;
      const int v[8] = {q[0].x, q[0].y, q[0].z, q[0].w, q[1].x, q[1].y, q[1].z, q[1].w};
      uint32_t out[4];
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        const uint32_t lo = (uint32_t)v[e] < k_u ? w4a16_gemv_lds_u16(base + PL.raw + 2u * (uint32_t)v[e]) : 0x7fffu;
        const uint32_t hi =
            (uint32_t)v[e + 1] < k_u ? w4a16_gemv_lds_u16(base + PL.raw + 2u * (uint32_t)v[e + 1]) : 0x7fffu;
        out[e / 2] = lo | hi << 16;
      }
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(base + PL.gathered + 16u * (uint32_t)c),
                   "r"(out[0]), "r"(out[1]), "r"(out[2]), "r"(out[3])
                   : "memory");
    };
    int c = (int)threadIdx.x;
    load_idx(c, idx[0]);
    load_idx(c + W4A16_GEMV_THREADS, idx[1]);
    w4a16_sm90::mbar_wait(base + PL.bar, 0u);
    for (; c < chunks; c += 2 * W4A16_GEMV_THREADS) {
      int4 next[2][2];
      load_idx(c + 2 * W4A16_GEMV_THREADS, next[0]);
      load_idx(c + 3 * W4A16_GEMV_THREADS, next[1]);
      gather(c, idx[0]);
      gather(c + W4A16_GEMV_THREADS, idx[1]);
#pragma unroll
      for (int x = 0; x < 2; ++x) idx[0][x] = next[0][x], idx[1][x] = next[1][x];
    }
    asm volatile("bar.sync 3, %0;" ::"n"(W4A16_GEMV_THREADS) : "memory");  // the row is complete
  }

  float4 *red = reinterpret_cast<float4 *>(w4a16_gemv_tma_smem + (base - base0) + L.red);
  uint32_t slot = 0, phase = 0;  // slot and parity of stage sequence number c: c % STAGES, (c / STAGES) & 1
  for (int j = 0; j < my_units; ++j) {
    const int rb0 = ((int)blockIdx.x + j * (int)gridDim.x) * R;  // first row block of the unit
    float acc[NB][4];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[nb][x] = 0.f;
    // per-column zero points: zq - 8 of rows g, g + 8 (constant, like the weights; the scale and
    // zero are read again in the epilogue rather than held through the loop)
    // or, where every row of the warp has an integer offset r (int_zeros), MAGIC + r in its place (fp16:
    // see w4a16_gemv_tma_stage_fast)
    uint32_t zc[2] = {0u, 0u};
    bool int_zeros = false;
    if constexpr (PCZ) {
      float sv[2], zv[2], r[2];
      bool all_int = true;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int n = 16 * (rb0 + rw) + g + 8 * h;
        sv[h] = w4a16_to_float(((const T *)args.scales)[n]);
        zv[h] = w4a16_to_float(((const T *)args.zeros)[n]);
        all_int = w4a16_pcol_integer<BF16>(sv[h], zv[h], &r[h]) && all_int;
      }
      int_zeros = __all_sync(0xffffffffu, all_int) && args.pcol_int;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (int_zeros) {
          zc[h] = w4a16_pcol_offset<BF16>(r[h], h);
        } else {
          bool exotic;
          zc[h] = w4a16_gemv_pcol_zero<T>(sv[h], zv[h], &exotic);
        }
      }
    }

    for (int i = 0; i < n_st; ++i) {
      const uint32_t st = base + slot * L.stage;
      const uint32_t full = bars + 8u * slot;
      w4a16_sm90::mbar_wait(full, phase);
      // this thread is done with the slot: every consumer thread arrives (its own reads are then
      // ordered before the refill, as compute-sanitizer's racecheck models it)
      auto release = [&]() {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(full + 8u * STAGES) : "memory");
        if (++slot == STAGES) {
          slot = 0;
          phase ^= 1u;
        }
      };
      if constexpr (PERM) {  // the gathered row at the stage's k, as an offset from the stage
        const uint32_t a_row[1] = {base + PL.gathered + (uint32_t)(i * TK * 2) + (uint32_t)t0 * 128u +
                                   (uint32_t)chunk * 16u - st};
        w4a16_gemv_tma_stage_fast<BF16, MODE, R, NB, TPW, VAR>(acc, st, w_off, a_row, s_pair, a_step, a_swz,
                                                                L.z_step, zc);
        release();
        continue;
      }
      if constexpr (FAST) {
        if (PCZ && int_zeros)  // warp-uniform
          w4a16_gemv_tma_stage_fast<BF16, MODE, R, NB, TPW, VAR, PCZ>(acc, st, w_off, a_base, s_pair, a_step, a_swz,
                                                                       L.z_step, zc);
        else
          w4a16_gemv_tma_stage_fast<BF16, MODE, R, NB, TPW, VAR>(acc, st, w_off, a_base, s_pair, a_step, a_swz,
                                                                  L.z_step, zc);
        release();
        continue;
      }
      const int g0 = (i * TK) >> gshift;  // first group row of the stage
      // UB tiles at a time: every shared-memory load of the batch is issued before its math (the
      // asm statements keep their order, so this order is the schedule)
#pragma unroll
      for (int u0 = 0; u0 < TPW; u0 += UB) {
        uint32_t wq[UB][4], b[UB][NB][8], sv[UB][4], zv[UB][4];
#pragma unroll
        for (int x = 0; x < UB; ++x)
          asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                       : "=r"(wq[x][0]), "=r"(wq[x][1]), "=r"(wq[x][2]), "=r"(wq[x][3])
                       : "r"(st + w_off + (u0 + x) * 512));
#pragma unroll
        for (int x = 0; x < UB; ++x)
#pragma unroll
          for (int nb = 0; nb < NB; ++nb) {
            uint32_t lo[4], hi[4];
            const int line = (t0 + u0 + x) * M + arow[nb];  // 128-byte line of (k tile, row)
            const uint32_t la = st + L.a_off + (uint32_t)line * 128u;
            w4a16_gemv_ldsm_x4(lo, la + (uint32_t)((chunk ^ (line & swz)) << 4));
            w4a16_gemv_ldsm_x4(hi, la + (uint32_t)(((chunk + 4) ^ (line & swz)) << 4));
#pragma unroll
            for (int y = 0; y < 4; ++y) {
              b[x][nb][y] = lo[y];
              b[x][nb][4 + y] = hi[y];
            }
          }
#pragma unroll
        for (int x = 0; x < UB; ++x) {
#pragma unroll
          for (int y = 0; y < 4; ++y) sv[x][y] = zv[x][y] = 0u;
          if constexpr (!PC) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              // group row of (tile u0 + x, k half h) within the stage
              const int gl = ((i * TK + (t0 + u0 + x) * 64 + 32 * h) >> gshift) - g0;
              const uint32_t a_ = st + s_off + (uint32_t)gl * (R * 32);
              sv[x][2 * h] = w4a16_gemv_lds_u16(a_);
              sv[x][2 * h + 1] = w4a16_gemv_lds_u16(a_ + 16);
              if constexpr (ZP) {
                zv[x][2 * h] = w4a16_gemv_lds_u16(a_ + L.z_step);
                zv[x][2 * h + 1] = w4a16_gemv_lds_u16(a_ + L.z_step + 16);
              }
            }
          }
        }
#pragma unroll
        for (int x = 0; x < UB; ++x) {
          uint32_t q[4][4];
          w4a16_gemv_dequant<BF16, MODE, BIASED>(wq[x], q);
          w4a16_gemv_tile_mma<BF16, MODE, NB, BIASED, false>(acc, q, b[x], sv[x], zv[x], gshift >= 6);
        }
      }
      release();
    }

    // D is written below: the previous grid must have completed (the producer waited before
    // copying A; these threads did not; at once after the first time)
    w4a16_griddep_wait();
    if (!w4a16_gemv_tma_reduce<NB, WPR>(acc, red, warp, lane)) continue;
    if constexpr (PCZ) {
      // D = s acc (+ (z + 8 s) sum_k a for the exotic rows, whose codes went in as q - 8)
      float pc_s[2], pc_z[2];
      bool exotic[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int n = 16 * (rb0 + rw) + g + 8 * h;
        pc_s[h] = w4a16_to_float(((const T *)args.scales)[n]);
        pc_z[h] = w4a16_to_float(((const T *)args.zeros)[n]);
        (void)w4a16_gemv_pcol_zero<T>(pc_s[h], pc_z[h], &exotic[h]);
      }
      const bool any_exotic = __any_sync(0xffffffffu, exotic[0] || exotic[1]);
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float asum = 0.f;
          if (any_exotic) {  // warp-uniform: every lane takes part in the row sums
            for (int m = 0; m < M; ++m) {
              const float rs = w4a16_gemv_row_sum<T>((const T *)args.a + (size_t)m * (size_t)args.lda, args.k);
              if (m == nb * 8 + 2 * t + e) asum = rs;
            }
          }
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float &v = acc[nb][2 * h + e];
            v = exotic[h] ? fmaf(fmaf(8.f, pc_s[h], pc_z[h]), asum, pc_s[h] * v) : pc_s[h] * v;
          }
        }
    }
    w4a16_gemv_store<T, PCZ ? W4A16_FINEGRAINED_SCALE_AND_ZEROS : MODE, NB>(args, acc, rb0 + rw, g, t, false, 0);
  }
#endif
}

#endif
