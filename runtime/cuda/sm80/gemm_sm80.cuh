// gemm_sm80.cuh - the sm80-class W4A16 GEMM: mma.sync.m16n8k16 + ldmatrix + cp.async multistage.
//
// Runs on sm80 and every later architecture (sm86, sm89, sm90, ...).
//
//   D[M,N] = alpha * A[M,K] . dequant(W)[N,K]^T (+ bias[N])
//
// Orientation: weights are mma's A (register) operand, 16 rows of N per instruction;
// activations are the B operand, 8 tokens per instruction. So in the kernel a "tile"
// is TILE_N (weight rows) x TILE_M (tokens) x TILE_K, and the accumulator of one mma
// holds D^T: rows = n, columns = tokens.
//
// Data flow of one CTA (STAGES-deep cp.async pipeline, one commit group per K tile):
//   weights  packed 16x64 tiles (docs/LAYOUT.md), copied verbatim: a stage holds
//            [TILE_N/16][TILE_K/64][512 B]; a lane's LDS.128 of a tile gives its four
//            A fragments (one per k16 sub-tile), converted by common/dequant.cuh.
//   acts     A[m0.., k0..] row-major, TILE_M x TILE_K, 16-byte chunks XOR-swizzled
//            (chunk c of row r lives at c ^ (r & 7)) so ldmatrix.x4 is conflict-free;
//            rows >= M are zero-filled by cp.async (src-size 0).
// Tails: N need only be a multiple of 16 and K of 64 (the packed layout's blocks), not of the
//            tile. The last row tile's 16-row blocks at or beyond N, the last K tile's 64-wide
//            blocks at or beyond K, and scale (zero) rows at or beyond G = K / group are never
//            read: cp.async writes zeros there (src-size 0), so the weights they stand for are
//            0 x code = 0 (scale-only) or 0 x code + 0 (zeros) and the activations 0: they add
//            nothing, and the epilogue stores (and reads scales / bias for) only columns < N.
//   scales   FINEGRAINED modes: the scale (and zero) rows of the groups that the K tile
//            touches, TILE_N wide, copied per stage; PER_COLUMN: s[n] does not depend on
//            k, so it is applied to the fp32 accumulator in the epilogue.
// Warp layout: warp tile WN x WM with WM = min(TILE_M, 64), WARPS_M = TILE_M / WM,
// WARPS_N = warps / WARPS_M, WN = TILE_N / WARPS_N (a multiple of 16).
// Epilogue: alpha (and s[n] per-column), bias, conversion, staged through shared memory
// and written with 16-byte stores for rows < M. With split_k > 1 (gridDim.z slices) fp32
// partials go to the workspace (common/splitk.cuh) and the reduce kernel finishes.
#ifndef W4A16_SM80_GEMM_SM80_CUH
#define W4A16_SM80_GEMM_SM80_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "common/dequant.cuh"
#include "common/func_attr.cuh"
#include "common/splitk.cuh"
#include "kernel_abi.h"
#include "w4a16/w4a16.h"

// ---------------------------------------------------------------------------
// Compile-time configuration of one instantiation
// ---------------------------------------------------------------------------
template <int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
struct w4a16_sm80_cfg {
  static constexpr int kWarps = THREADS / 32;
  static constexpr int kWM = TILE_M < 64 ? TILE_M : 64;  // tokens per warp
  static constexpr int kWarpsM = TILE_M / kWM;
  static constexpr int kWarpsN = kWarps / kWarpsM;
  static constexpr int kWN = TILE_N / kWarpsN;           // weight rows per warp
  static constexpr int kNT = kWN / 16;                    // m16 (weight) fragments per warp
  static constexpr int kMT = kWM / 8;                     // n8 (token) fragments per warp
  static constexpr int kKB = TILE_K / 64;                 // packed 16x64 tiles along K per stage
  // 0 per-column (applied in the epilogue), 1 scales, 2 scales + zeros
  static constexpr int kScaleArrays =
      MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : (MODE == W4A16_FINEGRAINED_SCALE_ONLY ? 1 : 0);
  static constexpr int kSub = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 0 : 8;
  static constexpr int kScaleRows = TILE_K / 32;          // most groups a K tile can touch
  // bytes per stage
  static constexpr int kWStage = TILE_N * TILE_K / 2;
  static constexpr int kAStage = TILE_M * TILE_K * 2;
  static constexpr int kSArray = kScaleRows * TILE_N * 2;
  static constexpr int kSStage = kScaleArrays * kSArray;
  static constexpr int kPipe = STAGES * (kWStage + kAStage + kSStage);
  static constexpr int kLdc = TILE_N + 8;                 // epilogue staging row (elements), padded
  static constexpr int kEpi = TILE_M * kLdc * 2;
  static constexpr int kSmem = kPipe > kEpi ? kPipe : kEpi;
  // copies per thread per stage
  static constexpr int kWChunks = kWStage / 16;
  static constexpr int kWIters = kWChunks / THREADS;
  static constexpr int kAChunks = kAStage / 16;
  static constexpr int kAIters = (kAChunks + THREADS - 1) / THREADS;
  // Occupancy (measured on H100): small-accumulator tiles are held to 128 registers (four
  // 4-warp / two 8-warp CTAs per SM); 4-warp tiles with 64 accumulators to 168 (three CTAs,
  // spill-free); 8-warp tiles with 64 accumulators to 128 (two CTAs: 5-25% faster than one,
  // at the price of a few spilled words reloaded once per K tile); 128-accumulator tiles
  // take what they need (one CTA).
  static constexpr int kAccRegs = kNT * kMT * 4;
  static constexpr int kMinBlocks = kAccRegs >= 128 ? 1 : (kWarps >= 8 ? 2 : (kAccRegs >= 64 ? 3 : 4));

  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "threads");
  static_assert(TILE_M % 16 == 0 && TILE_M % kWM == 0 && kWarps % kWarpsM == 0, "token tile");
  static_assert(TILE_N % kWarpsN == 0 && kWN % 16 == 0, "weight tile: each warp needs a multiple of 16 rows");
  static_assert(TILE_K % 64 == 0, "K tile: a multiple of the packed 64");
  static_assert(kWChunks % THREADS == 0, "weight stage must split evenly over the threads");
  static_assert(TILE_N % 64 == 0 || kScaleArrays == 0, "scale rows must be 128-byte multiples");
  static_assert(STAGES >= 2, "stages");
};

// bytes of dynamic shared memory (the generator's smem_bytes must agree: see the template)
template <int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
constexpr int w4a16_sm80_smem_bytes() {
  return w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>::kSmem;
}

// ---------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------
static __device__ __forceinline__ uint32_t w4a16_sm80_smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

// 16-byte global -> shared copy, L2 only, with a 256-byte L2 prefetch (weights stream); zeros
// instead when !valid (src is then not read)
static __device__ __forceinline__ void w4a16_sm80_cp16_stream(uint32_t dst, const void *src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}

// 16-byte copy that writes zeros instead when !valid (src is then not read)
static __device__ __forceinline__ void w4a16_sm80_cp16_zfill(uint32_t dst, const void *src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}

static __device__ __forceinline__ void w4a16_sm80_cp_commit(void) {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void w4a16_sm80_cp_wait(void) {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

static __device__ __forceinline__ void w4a16_sm80_lds128(uint32_t addr, uint32_t r[4]) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

static __device__ __forceinline__ uint16_t w4a16_sm80_lds16(uint32_t addr) {
  uint16_t v;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(addr));
  return v;
}

static __device__ __forceinline__ void w4a16_sm80_ldsm_x4(uint32_t addr, uint32_t r[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a (16x16, row) * b (16x8, col); fp32 accumulate
static __device__ __forceinline__ void w4a16_sm80_mma(__half, float c[4], const uint32_t a[4], const uint32_t b[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

static __device__ __forceinline__ void w4a16_sm80_mma(__nv_bfloat16, float c[4], const uint32_t a[4],
                                                      const uint32_t b[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---------------------------------------------------------------------------
// Packed 16-bit pair arithmetic (one 32-bit register = two elements)
// ---------------------------------------------------------------------------
static __device__ __forceinline__ void w4a16_sm80_dequant(__half, uint32_t w, uint32_t out[4], int sub) {
  if (sub) w4a16_u4x8_to_f16x8<8>(w, out); else w4a16_u4x8_to_f16x8<0>(w, out);
}

static __device__ __forceinline__ void w4a16_sm80_dequant(__nv_bfloat16, uint32_t w, uint32_t out[4], int sub) {
  if (sub) w4a16_u4x8_to_bf16x8<8>(w, out); else w4a16_u4x8_to_bf16x8<0>(w, out);
}

// both halves = x
static __device__ __forceinline__ uint32_t w4a16_sm80_splat(uint16_t x) {
  return (uint32_t)x | ((uint32_t)x << 16);
}

static __device__ __forceinline__ uint32_t w4a16_sm80_mul2(__half, uint32_t a, uint32_t b) {
  __half2 r = __hmul2(*reinterpret_cast<__half2 *>(&a), *reinterpret_cast<__half2 *>(&b));
  return *reinterpret_cast<uint32_t *>(&r);
}

static __device__ __forceinline__ uint32_t w4a16_sm80_mul2(__nv_bfloat16, uint32_t a, uint32_t b) {
  __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162 *>(&a), *reinterpret_cast<__nv_bfloat162 *>(&b));
  return *reinterpret_cast<uint32_t *>(&r);
}

static __device__ __forceinline__ uint32_t w4a16_sm80_fma2(__half, uint32_t a, uint32_t b, uint32_t c) {
  __half2 r = __hfma2(*reinterpret_cast<__half2 *>(&a), *reinterpret_cast<__half2 *>(&b),
                      *reinterpret_cast<__half2 *>(&c));
  return *reinterpret_cast<uint32_t *>(&r);
}

static __device__ __forceinline__ uint32_t w4a16_sm80_fma2(__nv_bfloat16, uint32_t a, uint32_t b, uint32_t c) {
  __nv_bfloat162 r = __hfma2(*reinterpret_cast<__nv_bfloat162 *>(&a), *reinterpret_cast<__nv_bfloat162 *>(&b),
                             *reinterpret_cast<__nv_bfloat162 *>(&c));
  return *reinterpret_cast<uint32_t *>(&r);
}

// ---------------------------------------------------------------------------
// Per-thread copy state, computed once per CTA: sources at k = 0 and predicates
// ---------------------------------------------------------------------------
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
struct w4a16_sm80_loader {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  static constexpr int kWCpt = TILE_K / 2;  // 16-byte weight chunks per 16-row block per stage
  static constexpr int kACpr = TILE_K / 8;  // 16-byte activation chunks per row per stage
  static constexpr int kSCpr = TILE_N / 8;  // 16-byte scale chunks per group row
  static constexpr int kSChunks = C::kScaleRows * kSCpr;
  static constexpr int kSIters = (kSChunks + THREADS - 1) / THREADS;
  static_assert(THREADS % kWCpt == 0, "a thread's weight chunks must sit at one offset in successive row blocks");
  static_assert(THREADS % kACpr == 0, "a thread's activation chunks must sit in one column");
  static_assert(THREADS % kSCpr == 0, "a thread's scale chunks must sit in one column");

  const uint8_t *w;   // first weight chunk of this thread (k = 0)
  const uint8_t *w_safe;  // an address inside the weights, for the copies that read nothing
  int64_t w_step;     // bytes between its successive weight chunks
  uint32_t w_valid;   // bit it: 16-row block of iteration it is < N
  int w_kb;           // the thread's 64-wide K block within a stage
  int k_blocks;       // K / 64
  const T *a;         // first activation chunk (k = 0); row 0 when invalid
  int64_t a_step;     // elements between its successive activation rows
  uint32_t a_valid;   // bit it: row of iteration it is < M
  int a_k;            // the thread's first k within a stage (its 8-element column chunk)
  int k;              // K
  const T *s;         // scale chunk (group row 0, k = 0)
  const T *z;         // zero chunk
  uint32_t s_valid;   // bit it: chunk of iteration it exists (a group row the stage holds, column < N)
  int s_row;          // the thread's first group row within a stage
  int groups;         // G = K / group: rows of scales / zeros
  int64_t n;          // row stride of scales / zeros
  int group_shift;    // k >> group_shift = group row (31 for one group a column: group = K)
  uint32_t a_dst[C::kAIters];  // byte offsets (within a stage) of the activation chunks
};

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_loader_init(
    w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> &L, const w4a16_launch_params &p, int n0,
    int m0) {
  using Ld = w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  using C = typename Ld::C;
  const int tid = threadIdx.x;
  L.w_step = (int64_t)(THREADS / Ld::kWCpt) * p.k * 8;
  L.w = static_cast<const uint8_t *>(p.w) + (int64_t)(n0 / 16 + tid / Ld::kWCpt) * p.k * 8 + (tid % Ld::kWCpt) * 16;
  L.w_safe = static_cast<const uint8_t *>(p.w);
  L.w_valid = 0;
#pragma unroll
  for (int it = 0; it < C::kWIters; ++it)
    if ((n0 / 16 + tid / Ld::kWCpt + it * (THREADS / Ld::kWCpt)) * 16 < p.n) L.w_valid |= 1u << it;
  L.w_kb = (tid % Ld::kWCpt) / 32;  // 32 chunks of 16 bytes = one 512-byte 16x64 block
  L.k_blocks = p.k / 64;
  L.k = p.k;
  const int arow = tid / Ld::kACpr, acol = tid % Ld::kACpr;
  L.a_k = acol * 8;
  L.a_step = (int64_t)(THREADS / Ld::kACpr) * p.lda;
  L.a_valid = 0;
#pragma unroll
  for (int it = 0; it < C::kAIters; ++it) {
    const int r = arow + it * (THREADS / Ld::kACpr);
    if ((C::kAChunks % THREADS == 0 || tid + it * THREADS < C::kAChunks) && m0 + r < p.m) L.a_valid |= 1u << it;
    L.a_dst[it] = r * (TILE_K * 2) + ((acol ^ (r & 7)) << 4);
  }
  // rows >= M read nothing (zero-fill); keep their pointer on row m0 anyway
  L.a = static_cast<const T *>(p.a) + (int64_t)m0 * p.lda + acol * 8 + (m0 + arow < p.m ? (int64_t)arow * p.lda : 0);
  L.n = p.n;
  const int gs = p.group_size;
  // one group a column (group = K, which need not be a power of two): every k in row 0
  L.group_shift = gs >= p.k ? 31 : __ffs(gs) - 1;  // else a power of two
  L.groups = p.k / gs;
  const int rows = gs < TILE_K ? TILE_K / gs : 1;  // group rows a stage holds
  L.s_row = tid / Ld::kSCpr;
  L.s_valid = 0;
  const bool s_col = n0 + (tid % Ld::kSCpr) * 8 < p.n;  // 8-column chunks: N % 16 == 0
#pragma unroll
  for (int it = 0; it < Ld::kSIters; ++it) {
    const int c = tid + it * THREADS;
    if (c < Ld::kSChunks && c / Ld::kSCpr < rows && s_col) L.s_valid |= 1u << it;
  }
  const int64_t soff = (int64_t)(tid / Ld::kSCpr) * p.n + n0 + (tid % Ld::kSCpr) * 8;
  L.s = static_cast<const T *>(p.scales) + soff;
  L.z = static_cast<const T *>(p.zeros) + soff;
}

// The copies of K tile `kt` into pipeline slot `slot` (no commit), in three parts so that a
// kernel with other activation rows (runtime/cuda/grouped/grouped_sm80.cuh gathers them) reuses
// the weight and scale copies: weights, activations, scales (and zeros), issued in that order.
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_load_weights(
    const w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> &L, uint32_t smem, int slot, int kt) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  const int tid = threadIdx.x;
  const int k0 = kt * TILE_K;
  // verbatim [TILE_N/16][TILE_K/64][512 B]; blocks beyond N or K read nothing
  const uint8_t *src = L.w + (int64_t)k0 * 8;
  const uint32_t dst = smem + slot * C::kWStage + tid * 16;
  const bool kin = (k0 >> 6) + L.w_kb < L.k_blocks;
#pragma unroll
  for (int it = 0; it < C::kWIters; ++it) {
    const bool valid = kin && ((L.w_valid >> it) & 1u);
    w4a16_sm80_cp16_stream(dst + it * THREADS * 16, valid ? src + it * L.w_step : L.w_safe, valid);
  }
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_load_acts(
    const w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> &L, uint32_t smem, int slot, int kt) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  const int tid = threadIdx.x;
  const int k0 = kt * TILE_K;
  const T *src = L.a + k0;
  const uint32_t dst = smem + STAGES * C::kWStage + slot * C::kAStage;
  const bool kin = k0 + L.a_k < L.k;  // 8-element chunks: K % 64 == 0
#pragma unroll
  for (int it = 0; it < C::kAIters; ++it) {
    if (C::kAChunks % THREADS == 0 || tid + it * THREADS < C::kAChunks) {
      const bool valid = kin && ((L.a_valid >> it) & 1u);
      w4a16_sm80_cp16_zfill(dst + L.a_dst[it], valid ? src + it * L.a_step : src, valid);
    }
  }
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_load_scales(
    const w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> &L, uint32_t smem, int slot, int kt) {
  using Ld = w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  using C = typename Ld::C;
  const int tid = threadIdx.x;
  const int k0 = kt * TILE_K;
  if (C::kScaleArrays > 0) {  // the group rows of this K tile, TILE_N wide (rows < G: zeros beyond)
    const int g0 = k0 >> L.group_shift;
    const int64_t off = (int64_t)g0 * L.n;
    const uint32_t dst = smem + STAGES * (C::kWStage + C::kAStage) + slot * C::kSStage + tid * 16;
#pragma unroll
    for (int it = 0; it < Ld::kSIters; ++it) {
      if ((L.s_valid >> it) & 1u) {
        const int r = it * THREADS / Ld::kSCpr;
        const bool valid = g0 + L.s_row + r < L.groups;
        const int64_t o = valid ? off + (int64_t)r * L.n : 0;
        w4a16_sm80_cp16_zfill(dst + it * THREADS * 16, L.s + o, valid);
        if (C::kScaleArrays > 1) w4a16_sm80_cp16_zfill(dst + C::kSArray + it * THREADS * 16, L.z + o, valid);
      }
    }
  }
}

// Issue the copies of K tile `kt` into pipeline slot `slot` (no commit).
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_load_stage(
    const w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> &L, uint32_t smem, int slot, int kt) {
  w4a16_sm80_load_weights(L, smem, slot, kt);
  w4a16_sm80_load_acts(L, smem, slot, kt);
  w4a16_sm80_load_scales(L, smem, slot, kt);
}

// The MMAs of one pipeline slot.
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static __device__ __forceinline__ void w4a16_sm80_compute_stage(
    int group_shift, uint32_t smem, int slot,
    float (&acc)[w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>::kNT]
                [w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>::kMT][4]) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warp_n = warp % C::kWarpsN;
  const int warp_m = warp / C::kWarpsN;
  const T tag = T();

  const uint32_t sw = smem + slot * C::kWStage + (warp_n * C::kNT * C::kKB) * 512 + lane * 16;
  // ldmatrix.x4 rows: lanes 0-7 / 8-15 tokens 0-7 at k chunks 2j / 2j+1; lanes 16-31 tokens 8-15
  const int a_row = warp_m * C::kWM + ((lane >> 4) << 3) + (lane & 7);
  const int a_xor = ((lane >> 3) & 1) ^ (lane & 7);
  const uint32_t sa = smem + STAGES * C::kWStage + slot * C::kAStage + a_row * (TILE_K * 2);
  const uint32_t ss = smem + STAGES * (C::kWStage + C::kAStage) + slot * C::kSStage +
                      (warp_n * C::kWN + (lane >> 2)) * 2;

#pragma unroll
  for (int kb = 0; kb < C::kKB; ++kb) {
    uint32_t wq[C::kNT][4];
#pragma unroll
    for (int i = 0; i < C::kNT; ++i) w4a16_sm80_lds128(sw + (i * C::kKB + kb) * 512, wq[i]);

    uint32_t s2[C::kNT][2], z2[C::kNT][2];
#pragma unroll
    for (int j4 = 0; j4 < 4; ++j4) {
      const int j = kb * 4 + j4;  // k16 sub-tile within the stage
      uint32_t b[C::kMT][2];
#pragma unroll
      for (int t = 0; t < C::kMT / 2; ++t) {
        uint32_t r[4];
        w4a16_sm80_ldsm_x4(sa + t * 16 * (TILE_K * 2) + (((2 * j) ^ a_xor) << 4), r);
        b[2 * t][0] = r[0];
        b[2 * t][1] = r[1];
        b[2 * t + 1][0] = r[2];
        b[2 * t + 1][1] = r[3];
      }
      // groups are multiples of 32: scales change at most every second k16 sub-tile
      if (C::kScaleArrays > 0 && (j4 & 1) == 0) {
        const int srow = (16 * j) >> group_shift;  // 0 when the group spans the stage
#pragma unroll
        for (int i = 0; i < C::kNT; ++i) {
          const uint32_t a0 = ss + (srow * TILE_N + i * 16) * 2;
          s2[i][0] = w4a16_sm80_splat(w4a16_sm80_lds16(a0));
          s2[i][1] = w4a16_sm80_splat(w4a16_sm80_lds16(a0 + 16));
          if (C::kScaleArrays > 1) {
            z2[i][0] = w4a16_sm80_splat(w4a16_sm80_lds16(a0 + C::kSArray));
            z2[i][1] = w4a16_sm80_splat(w4a16_sm80_lds16(a0 + C::kSArray + 16));
          }
        }
      }
#pragma unroll
      for (int i = 0; i < C::kNT; ++i) {
        uint32_t a[4];
        w4a16_sm80_dequant(tag, wq[i][j4], a, C::kSub);
        if (C::kScaleArrays == 1) {
          // registers a0,a2 hold weight row g, a1,a3 row g+8
          a[0] = w4a16_sm80_mul2(tag, a[0], s2[i][0]);
          a[1] = w4a16_sm80_mul2(tag, a[1], s2[i][1]);
          a[2] = w4a16_sm80_mul2(tag, a[2], s2[i][0]);
          a[3] = w4a16_sm80_mul2(tag, a[3], s2[i][1]);
        } else if (C::kScaleArrays == 2) {
          a[0] = w4a16_sm80_fma2(tag, a[0], s2[i][0], z2[i][0]);
          a[1] = w4a16_sm80_fma2(tag, a[1], s2[i][1], z2[i][1]);
          a[2] = w4a16_sm80_fma2(tag, a[2], s2[i][0], z2[i][0]);
          a[3] = w4a16_sm80_fma2(tag, a[3], s2[i][1], z2[i][1]);
        }
#pragma unroll
        for (int t = 0; t < C::kMT; ++t) w4a16_sm80_mma(tag, acc[i][t], a, b[t]);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
__global__ void __launch_bounds__(THREADS, (w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>::kMinBlocks))
    w4a16_sm80_kernel(const w4a16_launch_params p) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  extern __shared__ __align__(128) uint8_t w4a16_sm80_smem[];
  const uint32_t smem = w4a16_sm80_smem_addr(w4a16_sm80_smem);

  // Tile order: groups of kRaster M tiles, M fastest inside a group, so CTAs resident
  // together share a few activation tiles and a band of weight tiles in L2.
  constexpr int kRaster = 8;
  const int n_tiles = (p.n + TILE_N - 1) / TILE_N;  // the last may be part-full (N tail)
  const int m_tiles = (p.m + TILE_M - 1) / TILE_M;
  const int bid = blockIdx.x;
  const int group = bid / (kRaster * n_tiles);
  const int first_m = group * kRaster;
  const int gm = min(m_tiles - first_m, kRaster);
  const int in_group = bid - group * (kRaster * n_tiles);

  const int m0 = (first_m + in_group % gm) * TILE_M;
  const int n0 = (in_group / gm) * TILE_N;
  const int split = gridDim.z;
  // K tiles of this split-K slice (the last K tile may be part-full: K tail; the runtime keeps
  // ceil(K / TILE_K) a multiple of split)
  const int kt_n = (p.k + TILE_K - 1) / TILE_K / split;
  const int kt_begin = blockIdx.z * kt_n;

  w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS> L;
  w4a16_sm80_loader_init(L, p, n0, m0);

  float acc[C::kNT][C::kMT][4];
#pragma unroll
  for (int i = 0; i < C::kNT; ++i)
#pragma unroll
    for (int t = 0; t < C::kMT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][t][e] = 0.f;

  // prologue: STAGES-1 tiles in flight
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_n) w4a16_sm80_load_stage(L, smem, s, kt_begin + s);
    w4a16_sm80_cp_commit();
  }
  int slot = 0;
  int load_slot = STAGES - 1;
  for (int it = 0; it < kt_n; ++it) {
    w4a16_sm80_cp_wait<STAGES - 2>();
    __syncthreads();  // tile `it` visible to all; slot of tile it-1 free for refill
    if (it + STAGES - 1 < kt_n) w4a16_sm80_load_stage(L, smem, load_slot, kt_begin + it + STAGES - 1);
    w4a16_sm80_cp_commit();
    w4a16_sm80_compute_stage<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>(L.group_shift, smem, slot, acc);
    slot = slot + 1 == STAGES ? 0 : slot + 1;
    load_slot = load_slot + 1 == STAGES ? 0 : load_slot + 1;
  }
  w4a16_sm80_cp_wait<0>();

  // ---- epilogue ----
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warp_n = warp % C::kWarpsN;
  const int warp_m = warp / C::kWarpsN;
  const int g = lane >> 2, t4 = lane & 3;
  const T *scales = static_cast<const T *>(p.scales);
  const T *bias = static_cast<const T *>(p.bias);

  if (split > 1) {
    // fp32 partials, no alpha / bias (per-column scale included): ws[(z*M + m)*N + n]
    float *ws = static_cast<float *>(p.workspace) + (int64_t)blockIdx.z * p.m * p.n;
#pragma unroll
    for (int i = 0; i < C::kNT; ++i) {
      const int n = n0 + warp_n * C::kWN + i * 16 + g;
      if (n0 + warp_n * C::kWN + i * 16 >= p.n) continue;  // a 16-row block beyond N (tail)
      float s_lo = 1.f, s_hi = 1.f;
      if (C::kScaleArrays == 0) {
        s_lo = w4a16_to_float(scales[n]);
        s_hi = w4a16_to_float(scales[n + 8]);
      }
#pragma unroll
      for (int t = 0; t < C::kMT; ++t) {
        const int m = m0 + warp_m * C::kWM + t * 8 + 2 * t4;
        if (m < p.m) {
          ws[(int64_t)m * p.n + n] = acc[i][t][0] * s_lo;
          ws[(int64_t)m * p.n + n + 8] = acc[i][t][2] * s_hi;
        }
        if (m + 1 < p.m) {
          ws[(int64_t)(m + 1) * p.n + n] = acc[i][t][1] * s_lo;
          ws[(int64_t)(m + 1) * p.n + n + 8] = acc[i][t][3] * s_hi;
        }
      }
    }
    return;
  }

  __syncthreads();  // every warp is done with the pipeline buffers
  T *sc = reinterpret_cast<T *>(w4a16_sm80_smem);
#pragma unroll
  for (int i = 0; i < C::kNT; ++i) {
    const int nl = warp_n * C::kWN + i * 16 + g;  // within the tile
    const int n = n0 + nl;
    const bool n_in = n0 + warp_n * C::kWN + i * 16 < p.n;  // its 16-row block is inside N
    float mul_lo = p.alpha, mul_hi = p.alpha, add_lo = 0.f, add_hi = 0.f;
    if (C::kScaleArrays == 0 && n_in) {
      mul_lo *= w4a16_to_float(scales[n]);
      mul_hi *= w4a16_to_float(scales[n + 8]);
    }
    if (bias && n_in) {
      add_lo = w4a16_to_float(bias[n]);
      add_hi = w4a16_to_float(bias[n + 8]);
    }
#pragma unroll
    for (int t = 0; t < C::kMT; ++t) {
      const int ml = warp_m * C::kWM + t * 8 + 2 * t4;
      sc[ml * C::kLdc + nl] = w4a16_from_float<T>(acc[i][t][0] * mul_lo + add_lo);
      sc[(ml + 1) * C::kLdc + nl] = w4a16_from_float<T>(acc[i][t][1] * mul_lo + add_lo);
      sc[ml * C::kLdc + nl + 8] = w4a16_from_float<T>(acc[i][t][2] * mul_hi + add_hi);
      sc[(ml + 1) * C::kLdc + nl + 8] = w4a16_from_float<T>(acc[i][t][3] * mul_hi + add_hi);
    }
  }
  __syncthreads();
  T *d = static_cast<T *>(p.d);
  const int rows = min(TILE_M, p.m - m0);
  constexpr int kCpr = TILE_N / 8;
  for (int c = threadIdx.x; c < rows * kCpr; c += THREADS) {
    const int r = c / kCpr;
    const int cc = c % kCpr;
    if (n0 + cc * 8 >= p.n) continue;  // columns beyond N (tail)
    *reinterpret_cast<uint4 *>(d + (int64_t)(m0 + r) * p.ldd + n0 + cc * 8) =
        *reinterpret_cast<const uint4 *>(sc + r * C::kLdc + cc * 8);
  }
}

// ---------------------------------------------------------------------------
// Host side (called by the generated <name>_launch / <name>_probe)
// ---------------------------------------------------------------------------
template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static inline int w4a16_sm80_launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  void (*kernel)(const w4a16_launch_params) = w4a16_sm80_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {  // once per context (common/func_attr.cuh)
    static std::atomic<unsigned long long> attrs_ctx{0};
    e = w4a16_func_attr::set_once(kernel, attrs_ctx, C::kSmem, -1);
    if (e != cudaSuccess) return (int)e;
  }
  const int split = p->split_k > 1 ? p->split_k : 1;
  const int m_tiles = (p->m + TILE_M - 1) / TILE_M;
  const dim3 grid((unsigned)(((p->n + TILE_N - 1) / TILE_N) * m_tiles), 1, (unsigned)split);
  kernel<<<grid, THREADS, C::kSmem, stream>>>(*p);
  e = cudaGetLastError();
  if (e != cudaSuccess || split == 1) return (int)e;
  return (int)w4a16_splitk_reduce_launch<T>(static_cast<const float *>(p->workspace), split, p->m, p->n, p->alpha,
                                            static_cast<const T *>(p->bias), static_cast<T *>(p->d), p->ldd,
                                            p->sm_count, stream);
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static inline int w4a16_sm80_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_sm80_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>);
}

#endif
