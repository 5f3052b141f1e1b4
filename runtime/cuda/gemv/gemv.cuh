// gemv.cuh - the decode path (M <= 16): one streaming pass over the packed weights.
//
// A CTA is 256 threads = 8 warps: WK = 128 / TILE_N warps along K x WN = TILE_N / 16 along N,
// each warp owning one 16-row block of weights (RB = 1):
//   rows:  TILE_N weight rows (N of the problem)
//   K:     the CTA's K range (all of K, or K / split_k); one iteration covers TILE_K: warp
//          (wn, wk) takes U = TILE_K / (64 * WK) consecutive 64-wide packed tiles of its K slice
//   M:     every token row 0 .. M-1 (M <= TILE_M) in the same pass: weights are read once
//
// Weights (docs/LAYOUT.md) never touch shared memory: each lane loads its 16 bytes of a 16x64
// tile straight into registers (ld.global.nc.L1::no_allocate with an L2 evict_first policy),
// STAGES iterations ahead of use (STAGES x U x 512 bytes in flight per warp). The loads are
// unconditional (clamped to the last tile): a predicated load makes the compiler merge old and
// new values with a register copy that stalls on the load.
// Activations (tiny, re-read by every CTA, left in L2) and the group scales (and zeros) go
// through shared memory by cp.async, STAGES - 1 iterations ahead: the WN warps of one K slice
// share its activation slice, copy it together and sync on their own named barrier (a single
// warp: __syncwarp), so warps of different K slices never wait for each other in the loop.
// Token rows are padded by 16 bytes: ldmatrix hands out the mma B fragments conflict-free.
//
// The products run on the tensor cores: a lane's packed word is exactly its A fragment of
// mma.sync.m16n8k16 (16 weight rows x 16 k), the tokens are the n8 operand (TILE_M = 8: one
// mma per packed word; 16: two), accumulation is fp32. Why not CUDA-core FMAs: at the HBM
// roofline an H100 SM receives ~3.4 packed words (27 weights) per clock, i.e. ~38 issue slots
// per word (4 schedulers x 32 lanes / 3.4); dequant alone takes 9-11 of them, and FMAs take 4
// HFMA2 per word per token (8 FFMA in fp32): M = 8 would need ~45-75 slots per word and
// M = 16 ~80-140, far over the budget. With mma it is ~24 slots per word for any M <= 16.
//
// Dequant (common/dequant.cuh) gives (q - 8), or q, exactly in f16/bf16.
//   FINEGRAINED_SCALE_ONLY: the exact codes go into the mma (one k half = 2 mma at a time) and
//     the group scale is applied in fp32 to that partial: no rounding of the weights at all.
//   FINEGRAINED_SCALE_AND_ZEROS: w = s * q + z by one f16x2/bf16x2 fma per register (the
//     weight rounded once to the activation dtype, as in every W4A16 tensor-core GEMM).
//   PER_COLUMN_SCALE_ONLY: exact codes; s[n] applied in fp32 in the epilogue.
// Fine-grained group sizes are powers of two >= 32 (a 32-wide k half never straddles groups).
//
// Reductions: the WK K-slices of a CTA are summed in shared memory in the fixed order
// wk = 0, 1, ... (deterministic); with split_k > 1 (gridDim.z) each slice writes fp32 partials
// per common/splitk.cuh and the launch enqueues its deterministic reduce.
// Graph-safe: no allocation, no synchronization; the workspace is the caller's.
//
// Programmatic dependent launch (sm_90+ code only; the launch sets the attribute only when the
// loaded kernel image was compiled for compute >= 90, so it contains the wait): the kernel and
// the split-K reduce are launched with programmatic stream serialization, so they may start
// while the previous kernel of the stream still runs. Before griddepcontrol.wait the kernel
// only computes addresses and issues the first STAGES iterations of packed-weight loads,
// through the coherent path (ptxas moves the wait above .nc loads). Weights are taken as
// constant across calls: a kernel that rewrites them must not run directly before this one
// in the same stream. A, the scales (cp.async) and every write to D or the workspace come
// after the wait, which returns once the previous grid has completed and its
// memory is visible. griddepcontrol.launch_dependents comes right after the wait when the grid
// is larger than one wave of resident CTAs (the next kernel's CTAs then take the SM slots of
// finished CTAs and prefetch their weights), after the main loop otherwise; the next kernel still
// waits for this grid's completion before it reads anything we write. (Measurement overrides of
// both, W4A16_GEMV_NO_PDL and W4A16_GEMV_PDL_TRIGGER: runtime/debug.h.)
#ifndef W4A16_GEMV_GEMV_CUH
#define W4A16_GEMV_GEMV_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include <atomic>
#include <type_traits>

#include "common/cp_async.cuh"
#include "common/dequant.cuh"
#include "common/func_attr.cuh"
#include "common/pdl.cuh"
#include "common/splitk.cuh"
#include "debug.h"
#include "kernel_abi.h"
#include "w4a16/w4a16.h"

#define W4A16_GEMV_THREADS 256
#define W4A16_GEMV_MAX_DEVICES 64  // devices whose launch properties are cached (beyond: computed per launch)
#define W4A16_GEMV_WARPS (W4A16_GEMV_THREADS / 32)

// Kernel arguments (by value).
struct w4a16_gemv_args {
  const unsigned char *w;  // packed weights
  const void *a;           // [M, lda]
  const void *scales;      // [G, N]
  const void *zeros;       // [G, N] (zero-point mode)
  const void *bias;        // [N] or NULL
  void *d;                 // [M, ldd]
  float *ws;               // split-K partials [split][M][N] (split_k > 1)
  int64_t lda, ldd;
  int m, n, k;
  int kz_tiles;            // 64-wide K tiles per split slice
  uint32_t gshift;         // log2(group size): the fine-grained group sizes are powers of two
  float alpha;
  int late_trigger;        // PDL: griddepcontrol.launch_dependents after the main loop (1) or at once (0)
  int pcol_int;            // TMA GEMV per-column zero points: integer offsets as such (1; 0: never)
  const int32_t *a_perm;   // TMA GEMV act-order at M = 1 (W4A16_GEMV_TMA_PERM): int32 [K]; else NULL
};

// ---------------------------------------------------------------------------------------------
// Device helpers (inline PTX)
// ---------------------------------------------------------------------------------------------
static __device__ __forceinline__ uint64_t w4a16_gemv_policy_evict_first(void) {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// 16-byte streaming load of packed weights: read once, not kept in L1, first out of L2.
static __device__ __forceinline__ void w4a16_gemv_ldg_stream(uint32_t (&v)[4], const void *ptr, uint64_t pol) {
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(ptr), "l"(pol));
}

// The same load through the coherent path (no .nc), for the loads issued before
// griddepcontrol.wait: ptxas moves read-only (.nc, LDG.CONSTANT) loads freely across the wait
// and placed it above them (nothing left to overlap); it keeps coherent loads before it.
static __device__ __forceinline__ void w4a16_gemv_ldg_stream_early(uint32_t (&v)[4], const void *ptr, uint64_t pol) {
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(ptr), "l"(pol)
               : "memory");
}

static __device__ __forceinline__ void w4a16_gemv_ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// c += a (16x16, row) * b (16x8, col), fp32 accumulators. ORDERED: volatile asm, kept in program
// order with the kernel's other asm (the register-staged kernel's tuned schedule); otherwise a
// plain instruction the compiler may interleave with independent work (other tiles' chains).
#define W4A16_GEMV_MMA_ASM(QUAL, TY)                                                               \
  asm QUAL("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, " \
           "{%8, %9}, {%0, %1, %2, %3};"                                                          \
           : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                       \
           : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
template <bool BF16, bool ORDERED = true>
static __device__ __forceinline__ void w4a16_gemv_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                      uint32_t b1) {
  if constexpr (BF16 && ORDERED)
    W4A16_GEMV_MMA_ASM(volatile, "bf16");
  else if constexpr (BF16)
    W4A16_GEMV_MMA_ASM(, "bf16");
  else if constexpr (ORDERED)
    W4A16_GEMV_MMA_ASM(volatile, "f16");
  else
    W4A16_GEMV_MMA_ASM(, "f16");
}
#undef W4A16_GEMV_MMA_ASM

// packed x2 multiply / fma in the activation dtype (bf16x2 mul as fma with -0: sm80 has no mul.bf16x2)
template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_gemv_mul2(uint32_t a, uint32_t b) {
  uint32_t d;
  if constexpr (BF16)
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
  else
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_gemv_fma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  if constexpr (BF16)
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  else
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_gemv_sub2(uint32_t a, uint32_t b) {
  uint32_t d;
  if constexpr (BF16)
    asm("sub.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// A value the compiler must keep in a register (it cannot re-derive it inside the loop)
static __device__ __forceinline__ uint32_t w4a16_gemv_pin(uint32_t x) {
  uint32_t y;
  asm volatile("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}

static __device__ __forceinline__ uint32_t w4a16_gemv_lds_u16(uint32_t addr) {
  unsigned short v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr) : "memory");
  return v;
}

// (x.lo, x.lo): a 16-bit value in both halves
static __device__ __forceinline__ uint32_t w4a16_gemv_dup16(uint32_t x) { return __byte_perm(x, 0u, 0x1010); }

// Whether the GEMV kernels feed bf16 codes biased by 128 into the mma and remove the bias with
// one more mma against a constant fragment (bf16 symmetric modes): the codes (128 + q) and
// -136 (-(128 + 8)) are exact in bf16, the products exact in the fp32 accumulation, so the
// result equals the mma of the exact (q - 8) up to fp32 rounding of the larger partial sums;
// it trades 16 packed subtractions per 16x64 tile for 4 mma.
template <bool BF16, int MODE>
struct w4a16_gemv_biased {
  static constexpr bool value = BF16 && MODE != W4A16_FINEGRAINED_SCALE_AND_ZEROS;
};

// Dequantize the lane's 4 packed words of one 16x64 tile (common/dequant.cuh): exact (q - 8) /
// q, or 128 + q when BIASED (only where w4a16_gemv_biased holds).
template <bool BF16, int MODE, bool BIASED>
static __device__ __forceinline__ void w4a16_gemv_dequant(const uint32_t (&w)[4], uint32_t (&q)[4][4]) {
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  static_assert(!BIASED || w4a16_gemv_biased<BF16, MODE>::value, "biased codes: bf16 symmetric modes only");
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (BIASED)
      w4a16_u4x8_to_bf16x8_biased(w[j], q[j]);
    else if constexpr (BF16)
      w4a16_u4x8_to_bf16x8<ZP ? 0 : 8>(w[j], q[j]);
    else
      w4a16_u4x8_to_f16x8<ZP ? 0 : 8>(w[j], q[j]);
  }
}

// One 16x64 packed tile of one warp: q = its codes from w4a16_gemv_dequant with the same BIASED
// (4 k16 steps x the lane's A fragment), b = the B fragments of the tile for each n8 token block (ldmatrix), sv / zv
// = the group scale / zero of (row g, k half 0) (g + 8, 0) (g, 1) (g + 8, 1) as 16-bit values;
// whole: the tile lies in one group (group >= 64: sv[2..3] = sv[0..1]); ORDERED: see
// w4a16_gemv_mma. Accumulates into acc[nb]:
//   FINEGRAINED_SCALE_ONLY: codes into the mma (+ the bias-removing mma, see w4a16_gemv_biased),
//     the scale applied in fp32 per k half, or per tile when whole;
//   FINEGRAINED_SCALE_AND_ZEROS: w = s * q + z by one f16x2/bf16x2 fma per register;
//   PER_COLUMN_SCALE_ONLY: codes as above (s[n] in the epilogue).
template <bool BF16, int MODE, int NB, bool BIASED, bool ORDERED = true>
static __device__ __forceinline__ void w4a16_gemv_tile_mma(float (&acc)[NB][4], uint32_t (&q)[4][4],
                                                           const uint32_t (&b)[NB][8], const uint32_t (&sv)[4],
                                                           const uint32_t (&zv)[4], bool whole) {
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  const uint32_t kneg[4] = {0xc308c308u, 0xc308c308u, 0xc308c308u, 0xc308c308u};  // bf16 -136 pairs
  if constexpr (MODE == W4A16_FINEGRAINED_SCALE_ONLY) {
    // the scale of (row g, half 0) (g + 8, 0) (g, 1) (g + 8, 1) in fp32
    float sf[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = sv[i];
      if constexpr (BF16)
        sf[i] = __uint_as_float(v << 16);
      else
        sf[i] = __half2float(__ushort_as_half((unsigned short)v));
    }
    if (whole) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          w4a16_gemv_mma<BF16, ORDERED>(part, q[j], b[nb][2 * j], b[nb][2 * j + 1]);
          if constexpr (BIASED) w4a16_gemv_mma<BF16, ORDERED>(part, kneg, b[nb][2 * j], b[nb][2 * j + 1]);
        }
        acc[nb][0] = fmaf(sf[0], part[0], acc[nb][0]);
        acc[nb][1] = fmaf(sf[0], part[1], acc[nb][1]);
        acc[nb][2] = fmaf(sf[1], part[2], acc[nb][2]);
        acc[nb][3] = fmaf(sf[1], part[3], acc[nb][3]);
      }
      return;
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 2 * h; j < 2 * h + 2; ++j) {
          w4a16_gemv_mma<BF16, ORDERED>(part, q[j], b[nb][2 * j], b[nb][2 * j + 1]);
          if constexpr (BIASED) w4a16_gemv_mma<BF16, ORDERED>(part, kneg, b[nb][2 * j], b[nb][2 * j + 1]);
        }
        acc[nb][0] = fmaf(sf[2 * h], part[0], acc[nb][0]);
        acc[nb][1] = fmaf(sf[2 * h], part[1], acc[nb][1]);
        acc[nb][2] = fmaf(sf[2 * h + 1], part[2], acc[nb][2]);
        acc[nb][3] = fmaf(sf[2 * h + 1], part[3], acc[nb][3]);
      }
    }
  } else {
    if constexpr (ZP) {
      // w = s * q + z in the activation dtype; (v, v) pairs per (row, k half)
      uint32_t s2[4], z2[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s2[i] = w4a16_gemv_dup16(sv[i]);
        z2[i] = w4a16_gemv_dup16(zv[i]);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int h = j >> 1;
        q[j][0] = w4a16_gemv_fma2<BF16>(q[j][0], s2[2 * h], z2[2 * h]);
        q[j][1] = w4a16_gemv_fma2<BF16>(q[j][1], s2[2 * h + 1], z2[2 * h + 1]);
        q[j][2] = w4a16_gemv_fma2<BF16>(q[j][2], s2[2 * h], z2[2 * h]);
        q[j][3] = w4a16_gemv_fma2<BF16>(q[j][3], s2[2 * h + 1], z2[2 * h + 1]);
      }
    }
    // PER_COLUMN: codes here, s[n] in the epilogue
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        w4a16_gemv_mma<BF16, ORDERED>(acc[nb], q[j], b[nb][2 * j], b[nb][2 * j + 1]);
        if constexpr (BIASED) w4a16_gemv_mma<BF16, ORDERED>(acc[nb], kneg, b[nb][2 * j], b[nb][2 * j + 1]);
      }
  }
}

// Epilogue of one 16-row block rb: acc[nb] = (row 16 rb + g, tokens nb * 8 + 2t, +1),
// (row 16 rb + g + 8, same tokens). Writes alpha * v (* s[n] per-column) + bias[n] to D in the
// activation dtype, or (partial) the fp32 value to split slice z of the workspace; tokens >= M
// are never stored.
template <typename T, int MODE, int NB>
static __device__ __forceinline__ void w4a16_gemv_store(const struct w4a16_gemv_args &args, const float (&acc)[NB][4],
                                                        int rb, int g, int t, bool partial, int z) {
  const int n_lo = 16 * rb + g, n_hi = n_lo + 8;
  float s_lo = 1.f, s_hi = 1.f;
  if constexpr (MODE == W4A16_PER_COLUMN_SCALE_ONLY) {
    s_lo = w4a16_to_float(((const T *)args.scales)[n_lo]);
    s_hi = w4a16_to_float(((const T *)args.scales)[n_hi]);
  }
  const T *bias = (const T *)args.bias;
  float b_lo = 0.f, b_hi = 0.f;
  if (!partial && bias) {
    b_lo = w4a16_to_float(bias[n_lo]);
    b_hi = w4a16_to_float(bias[n_hi]);
  }
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = nb * 8 + 2 * t + (i & 1);
      const int n = (i & 2) ? n_hi : n_lo;
      if (m < args.m) {
        const float v = acc[nb][i] * ((i & 2) ? s_hi : s_lo);
        if (partial)
          args.ws[((size_t)z * args.m + m) * args.n + n] = v;
        else
          ((T *)args.d)[m * args.ldd + n] = w4a16_from_float<T>(args.alpha * v + ((i & 2) ? b_hi : b_lo));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------
template <int TILE_N, int TILE_M, int TILE_K, int STAGES, int WK, int SCV>
struct w4a16_gemv_shape {  // SCV: group vectors per stage (0 per-column, 1 scales, 2 scales + zeros)
  static constexpr int WN = W4A16_GEMV_WARPS / WK;        // warps along N
  static constexpr int RB = TILE_N / (16 * WN);           // 16-row blocks per warp
  static constexpr int U = TILE_K / (64 * WK);            // 64-wide K tiles per warp per iteration
  static constexpr int NB = TILE_M / 8;                   // n8 token blocks (mma per packed word)
  static constexpr int ROW_BYTES = TILE_K * 2 + 16;       // one token's A slice of a stage, padded
  static constexpr int SLOT_BYTES = TILE_M * ROW_BYTES;   // one stage of A
  // one stage of a warp's scales (and zeros): per 64-wide tile, row block and k half, the 16
  // values of the row block (32 bytes, contiguous in [G, N])
  static constexpr int SC_WARP = U * RB * 2 * 32;
  static constexpr int STAGE_BYTES = SLOT_BYTES + W4A16_GEMV_WARPS * SC_WARP * SCV;
  static constexpr int RED_BYTES = (WK - 1) * WN * RB * NB * 32 * 16;  // K-slice reduction
  static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES > RED_BYTES ? STAGES * STAGE_BYTES : RED_BYTES;
  static_assert(WK >= 1 && W4A16_GEMV_WARPS % WK == 0, "warps along K divide the 8 warps");
  static_assert(U >= 1 && TILE_K == 64 * WK * U, "TILE_K = 64 x warps along K x tiles per warp");
  static_assert(TILE_N % (16 * WN) == 0 && RB >= 1, "TILE_N = a multiple of 16 x warps along N");
  static_assert(TILE_M == 8 || TILE_M == 16, "TILE_M is 8 or 16");
  static_assert(STAGES >= 2, "STAGES >= 2");
};

// CTAs per SM the register allocation aims at: 3 (<= 80 registers) where that spills nothing
#define W4A16_GEMV_MIN_CTAS(TILE_M) ((TILE_M) == 8 ? 3 : 2)

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int WK>
__global__ void __launch_bounds__(W4A16_GEMV_THREADS, W4A16_GEMV_MIN_CTAS(TILE_M))
    w4a16_gemv_kernel(const struct w4a16_gemv_args args) {
  constexpr bool PC = MODE == W4A16_PER_COLUMN_SCALE_ONLY;
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  constexpr int SCV = PC ? 0 : ZP ? 2 : 1;
  typedef w4a16_gemv_shape<TILE_N, TILE_M, TILE_K, STAGES, WK, SCV> S;
  constexpr int WN = S::WN, RB = S::RB, NB = S::NB, U = S::U;
  constexpr int ROW_BYTES = S::ROW_BYTES, STAGE_BYTES = S::STAGE_BYTES, SC_WARP = S::SC_WARP;
  constexpr int NSC = U * RB * 2 * 2;  // 16-byte copies of a warp's scales per stage
  // The WN warps of one K slice (same wk) share its activations: they alone copy that part of
  // each stage and synchronize on their own named barrier (a warp alone: __syncwarp), so warps
  // of different K slices never wait for each other inside the loop.
  constexpr int UPR = U * 8;                     // 16-byte units of one token's A per K slice and iteration
  constexpr int GT = WN * 32;                    // threads sharing a K slice
  constexpr int ARS = GT / UPR;                  // token rows the group copies per step
  constexpr int ACP = (TILE_M + ARS - 1) / ARS;  // copies per thread per iteration (predicated by M)
  static_assert(GT % UPR == 0, "the units of a row divide the group");
  constexpr bool BF16 = std::is_same<T, __nv_bfloat16>::value;
  static_assert(NSC * SCV <= 32, "a warp's scale copies fit its lanes");

  extern __shared__ __align__(16) unsigned char w4a16_gemv_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wk = warp % WK, wn = warp / WK;
  const int g = lane >> 2, t = lane & 3;
  const int M = args.m, N = args.n;
  const int kt_begin = blockIdx.z * args.kz_tiles;  // first 64-wide tile of this split slice
  const int n_iter = args.kz_tiles / (WK * U);  // iterations of TILE_K
  const int nt0 = blockIdx.x * (WN * RB) + wn * RB;  // first 16-row block of this warp
  const uint32_t smem0 = (uint32_t)__cvta_generic_to_shared(w4a16_gemv_smem);
  const uint64_t pol = w4a16_gemv_policy_evict_first();

  // weights: lane's 16 bytes of tile (row block nt0 + r, k tile kt_begin + (it * WK + wk) * U + u)
  const size_t wrb = (size_t)(args.k >> 6) * 512;  // bytes between row blocks
  const unsigned char *w_ld = args.w + (size_t)nt0 * wrb + (size_t)(kt_begin + wk * U) * 512 + lane * 16;
  // scales (zeros) go through shared memory with the activations of their stage (cp.async: no
  // register waits on them). Lane c < NSC * SCV copies 16 bytes: vector c / NSC (scales, zeros),
  // half c & 1 of the 16 values of (tile u, row block r, k half h) = ((c % NSC) >> 2, .., (c >> 1) & 1)
  const uint32_t gshift = args.gshift;
  const int sc_c = lane % NSC, sc_u = (sc_c >> 2) / RB, sc_r = (sc_c >> 2) % RB, sc_h = (sc_c >> 1) & 1;
  const T *sc_src = (const T *)(lane < NSC ? args.scales : args.zeros) + 16 * (nt0 + sc_r) + 8 * (sc_c & 1);
  const uint32_t sc_koff = 64u * sc_u + 32u * sc_h;
  uint32_t k_a = (uint32_t)(kt_begin + wk * U) * 64u;  // k of the warp's first tile of the next A stage
  const uint32_t sc_dst = w4a16_gemv_pin(smem0 + S::SLOT_BYTES + warp * SC_WARP * SCV + (lane / NSC) * SC_WARP +
                                         ((sc_u * RB + sc_r) * 2 + sc_h) * 32 + (sc_c & 1) * 16);
  // where lane (g, t) reads the scale of (tile u, row block r, half h, row g): + ((u * RB + r) * 2 + h) * 32
  const uint32_t sc_rd = w4a16_gemv_pin(smem0 + S::SLOT_BYTES + warp * SC_WARP * SCV + g * 2);
  // activations: thread gt of the K slice's group copies unit gt % UPR of its slice, token rows
  // a_row + i * ARS
  const int gt = wn * 32 + lane;
  const int a_row = gt / UPR, a_unit = wk * UPR + gt % UPR;
  const T *a_ld = (const T *)args.a + (int64_t)kt_begin * 64 + a_row * args.lda + a_unit * 8;
  const int64_t a_step = ARS * args.lda;
  const uint32_t a_dst = w4a16_gemv_pin(smem0 + a_row * ROW_BYTES + a_unit * 16);
  // copies i < a_cnt hold token rows < M (pinned: the loop must not re-derive it)
  const int a_cnt = (int)w4a16_gemv_pin((uint32_t)(M > a_row ? (M - a_row + ARS - 1) / ARS : 0));

  // ldmatrix row addresses: token (clamped to M - 1: columns >= M are computed, never stored)
  uint32_t ldsm_addr[NB];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    int row = nb * 8 + (lane & 7);
    row = row < M ? row : M - 1;
    ldsm_addr[nb] = w4a16_gemv_pin(smem0 + (uint32_t)row * ROW_BYTES + wk * U * 128 + (lane >> 3) * 16);
  }

  // register stages: the lane's packed words (and its scale / zero) of STAGES iterations
  uint32_t wbuf[STAGES][U][RB][4];

  // Loads of stage P, tile U_: unconditional (predicated loads would make the compiler merge the
  // old and new values with a register copy that waits for the load); past the last iteration
  // the addresses stay clamped on it, so the few extra loads re-read a tile already in L2.
#define W4A16_GEMV_LOAD_W(P, U_)                                                                   \
  do {                                                                                             \
    _Pragma("unroll") for (int r = 0; r < RB; ++r)                                                 \
        w4a16_gemv_ldg_stream(wbuf[P][U_][r], w_ld + r * wrb + (U_) * 512, pol);                   \
  } while (0)
  // the prologue's loads, issued before griddepcontrol.wait (see w4a16_gemv_ldg_stream_early)
#define W4A16_GEMV_LOAD_W_EARLY(P, U_)                                                             \
  do {                                                                                             \
    _Pragma("unroll") for (int r = 0; r < RB; ++r)                                                 \
        w4a16_gemv_ldg_stream_early(wbuf[P][U_][r], w_ld + r * wrb + (U_) * 512, pol);             \
  } while (0)
  // after loading iteration J: step to J + 1 unless J is the last
#define W4A16_GEMV_ADVANCE_W(J)                                                                    \
  do {                                                                                             \
    const bool more_ = (J) + 1 < n_iter;                                                           \
    w_ld += more_ ? WK * U * 512 : 0;                                                              \
  } while (0)

#define W4A16_GEMV_LOAD_A(SLOT)                                                                    \
  do {                                                                                             \
    _Pragma("unroll") for (int i = 0; i < ACP; ++i) if (i < a_cnt)                                 \
        w4a16_cp_async16(a_dst + (SLOT) * STAGE_BYTES + i * (ARS * ROW_BYTES), a_ld + i * a_step); \
    if constexpr (!PC) {                                                                           \
      if (lane < NSC * SCV) {                                                                      \
        const size_t gq_ = (size_t)((k_a + sc_koff) >> gshift) * N;                                \
        w4a16_cp_async16(sc_dst + (SLOT) * STAGE_BYTES, sc_src + gq_);                        \
      }                                                                                            \
    }                                                                                              \
    a_ld += TILE_K;                                                                                \
    k_a += TILE_K;                                                                                 \
  } while (0)

  // prologue: weights of iterations 0 .. STAGES-1, activations of 0 .. STAGES-2
#pragma unroll
  for (int p = 0; p < STAGES; ++p) {
#pragma unroll
    for (int u = 0; u < U; ++u) W4A16_GEMV_LOAD_W_EARLY(p, u);
    W4A16_GEMV_ADVANCE_W(p);
  }
  // Programmatic dependent launch: only the constant packed weights were read above; A, the
  // scales and every global write come after the previous grid has completed.
  w4a16_griddep_wait();
  if (!args.late_trigger) w4a16_griddep_launch_dependents();
#pragma unroll
  for (int p = 0; p < STAGES - 1; ++p) {
    if (p < n_iter) W4A16_GEMV_LOAD_A(p);
    w4a16_cp_async_commit();
  }

  float acc[RB][NB][4];
#pragma unroll
  for (int r = 0; r < RB; ++r)
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[r][nb][i] = 0.f;

  for (int it0 = 0; it0 < n_iter; it0 += STAGES) {
#pragma unroll
    for (int p = 0; p < STAGES; ++p) {
      const int it = it0 + p;  // its A slot and its register stage are both p
      if (it < n_iter) {
        w4a16_cp_async_wait<STAGES - 2>();
        // slot p of this K slice is filled; every warp of the slice is done with slot p-1
        if constexpr (WN == 1)
          __syncwarp();
        else
          asm volatile("bar.sync %0, %1;" ::"r"(wk + 1), "n"(GT) : "memory");
        if (it + STAGES - 1 < n_iter) W4A16_GEMV_LOAD_A((p + STAGES - 1) % STAGES);
        w4a16_cp_async_commit();

#pragma unroll
        for (int u = 0; u < U; ++u) {
          // dequantize tile u of stage p (codes -> f16/bf16 pairs), then refill it with the
          // tile of iteration it + STAGES
          uint32_t q[RB][4][4];
#pragma unroll
          for (int r = 0; r < RB; ++r) w4a16_gemv_dequant<BF16, MODE, false>(wbuf[p][u][r], q[r]);
          W4A16_GEMV_LOAD_W(p, u);
          if (u == U - 1) W4A16_GEMV_ADVANCE_W(it + STAGES);

          // B fragments of tile u: token block nb, k16 sub-tile j -> (b[nb][2j], b[nb][2j+1])
          uint32_t b[NB][8];
#pragma unroll
          for (int nb = 0; nb < NB; ++nb) {
            uint32_t lo[4], hi[4];
            w4a16_gemv_ldsm_x4(lo, ldsm_addr[nb] + p * STAGE_BYTES + u * 128);
            w4a16_gemv_ldsm_x4(hi, ldsm_addr[nb] + p * STAGE_BYTES + u * 128 + 64);
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              b[nb][i] = lo[i];
              b[nb][4 + i] = hi[i];
            }
          }

#pragma unroll
          for (int r = 0; r < RB; ++r) {
            // group values v[i] of (row g, half 0) (g + 8, 0) (g, 1) (g + 8, 1) from shared memory
            uint32_t sv[4] = {0u, 0u, 0u, 0u}, zv[4] = {0u, 0u, 0u, 0u};
            if constexpr (!PC) {
              const uint32_t a_ = sc_rd + p * STAGE_BYTES + (u * RB + r) * 64;
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                sv[i] = w4a16_gemv_lds_u16(a_ + (i >> 1) * 32 + (i & 1) * 16);
                if constexpr (ZP) zv[i] = w4a16_gemv_lds_u16(a_ + SC_WARP + (i >> 1) * 32 + (i & 1) * 16);
              }
            }
            // exact codes, per k half: this kernel's register cap (80 at tile_m 8) leaves no room for more
            w4a16_gemv_tile_mma<BF16, MODE, NB, false>(acc[r], q[r], b, sv, zv, false);
          }
        }
      }
    }
  }
  // every weight load of this CTA is issued: the next kernel may take the SM slots we free
  if (args.late_trigger) w4a16_griddep_launch_dependents();
#undef W4A16_GEMV_LOAD_W
#undef W4A16_GEMV_LOAD_W_EARLY
#undef W4A16_GEMV_ADVANCE_W
#undef W4A16_GEMV_LOAD_A

  // sum the WK K-slices of the CTA in the fixed order wk = 0, 1, ... (shared memory reused)
  if constexpr (WK > 1) {
    w4a16_cp_async_wait<0>();
    __syncthreads();
    float4 *red = reinterpret_cast<float4 *>(w4a16_gemv_smem);
    if (wk > 0) {
#pragma unroll
      for (int r = 0; r < RB; ++r)
#pragma unroll
        for (int nb = 0; nb < NB; ++nb)
          red[((((wk - 1) * WN + wn) * RB + r) * NB + nb) * 32 + lane] =
              make_float4(acc[r][nb][0], acc[r][nb][1], acc[r][nb][2], acc[r][nb][3]);
    }
    __syncthreads();
    if (wk > 0) return;
#pragma unroll
    for (int w2 = 1; w2 < WK; ++w2)
#pragma unroll
      for (int r = 0; r < RB; ++r)
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
          const float4 v = red[((((w2 - 1) * WN + wn) * RB + r) * NB + nb) * 32 + lane];
          acc[r][nb][0] += v.x;
          acc[r][nb][1] += v.y;
          acc[r][nb][2] += v.z;
          acc[r][nb][3] += v.w;
        }
  }

  // epilogue: D (or this slice's fp32 partials) of each row block
  const bool partial = gridDim.z > 1;
#pragma unroll
  for (int r = 0; r < RB; ++r) w4a16_gemv_store<T, MODE, NB>(args, acc[r], nt0 + r, g, t, partial, blockIdx.z);
}

// ---------------------------------------------------------------------------------------------
// Host side: launch and probe (called from the generated instantiation files)
// ---------------------------------------------------------------------------------------------
// Whether launches of KERNEL may carry programmatic stream serialization: the image the device
// runs must contain griddepcontrol.wait, i.e. be compiled for compute >= 90 (the sm_80 SASS and
// compute_80 PTX of the same source have none, and a kernel launched with the attribute but no
// wait could read A while the previous kernel still writes it). The launch queries it once per
// instantiation.
static inline bool w4a16_gemv_pdl_ok(void (*kernel)(const struct w4a16_gemv_args)) {
  return w4a16_debug()->gemv_pdl && w4a16_kernel_image_waits(kernel);
}

// The kernel arguments of a launch: split = the K split (gridDim.z), gshift = log2(group size)
// (the fine-grained group sizes below K are powers of two; a group of K: 30, every k in row 0).
static inline struct w4a16_gemv_args w4a16_gemv_args_of(const struct w4a16_launch_params *p, int split) {
  struct w4a16_gemv_args a;
  a.w = (const unsigned char *)p->w;
  a.a = p->a;
  a.scales = p->scales;
  a.zeros = p->zeros;
  a.bias = p->bias;
  a.d = p->d;
  a.ws = (float *)p->workspace;
  a.lda = p->lda;
  a.ldd = p->ldd;
  a.m = p->m;
  a.n = p->n;
  a.k = p->k;
  a.kz_tiles = (p->k / 64) / split;
  a.gshift = (uint32_t)w4a16_group_shift(p->group_size, p->k);  // group = 1 << gshift, or 30: one group row
  a.alpha = p->alpha;
  a.late_trigger = 0;
  a.pcol_int = 1;
  a.a_perm = p->a_perm;
  return a;
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int WK>
static inline int w4a16_gemv_launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  const int split = p->split_k > 1 ? p->split_k : 1;
  struct w4a16_gemv_args a = w4a16_gemv_args_of(p, split);

  void (*kernel)(const struct w4a16_gemv_args) = w4a16_gemv_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, WK>;
  const int smem = w4a16_gemv_shape<TILE_N, TILE_M, TILE_K, STAGES, WK,
                                    MODE == W4A16_PER_COLUMN_SCALE_ONLY ? 0
                                    : MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : 1>::SMEM_BYTES;
  if (smem > 48 * 1024) {  // once per context (common/func_attr.cuh)
    static std::atomic<unsigned long long> attrs_ctx{0};
    cudaError_t e = w4a16_func_attr::set_once(kernel, attrs_ctx, smem, -1);
    if (e != cudaSuccess) return (int)e;
  }
  // Per instantiation and device, computed on first use there (a process may drive GPUs of
  // different architectures: whether the loaded image has the PDL wait, and the occupancy, are
  // properties of the current device's copy). 0 = not yet known; threads that race compute and
  // store the same value.
  static std::atomic<int> cache[W4A16_GEMV_MAX_DEVICES][2];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= W4A16_GEMV_MAX_DEVICES) {
    (void)cudaGetLastError();
    dev = -1;
  }
  int pdl_state = dev >= 0 ? cache[dev][0].load(std::memory_order_relaxed) : 0;
  if (pdl_state == 0) {
    pdl_state = w4a16_gemv_pdl_ok(kernel) ? 2 : 1;
    if (dev >= 0) cache[dev][0].store(pdl_state, std::memory_order_relaxed);
  }
  const bool pdl = pdl_state == 2;
  // resident CTAs per SM of this instantiation (for W4A16_GEMV_PDL_TRIGGER=auto), stored + 1
  int per_sm = dev >= 0 ? cache[dev][1].load(std::memory_order_relaxed) - 1 : -1;
  if (per_sm < 0) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, W4A16_GEMV_THREADS, (size_t)smem) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    per_sm = n;
    if (dev >= 0) cache[dev][1].store(n + 1, std::memory_order_relaxed);
  }
  const long long ctas = (long long)(p->n / TILE_N) * split;
  // where the kernel lets its dependent launch: right after griddepcontrol.wait where the grid is
  // larger than one wave of resident CTAs (its dependents then only take the slots of finished
  // CTAs), after its main loop otherwise (single-wave grids: dependents resident early would sit
  // beside the running CTAs for the whole kernel); W4A16_GEMV_PDL_TRIGGER overrides (debug.h)
  const int trig = w4a16_debug()->gemv_pdl_trigger;  // 0 early, 1 late, 2 by the grid
  a.late_trigger = trig == 1 || (trig == 2 && (per_sm <= 0 || ctas <= (long long)per_sm * (p->sm_count > 0 ? p->sm_count : 132)));
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(p->n / TILE_N), 1, (unsigned)split);
  cfg.blockDim = dim3(W4A16_GEMV_THREADS, 1, 1);
  cfg.dynamicSmemBytes = (size_t)smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = pdl && !p->no_pdl ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, a);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess || split == 1) return (int)e;
  // the deterministic reduction (common/splitk.cuh), as a programmatic dependent of the GEMV that
  // waits for its partials and then lets its own dependent launch (common/pdl.cuh)
  e = w4a16_splitk_reduce_pdl_launch<T>((const float *)p->workspace, split, p->m, p->n, p->alpha, (const T *)p->bias,
                                        (T *)p->d, (int64_t)p->ldd, p->sm_count, 0, pdl, stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  return (int)e;
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int WK>
static inline int w4a16_gemv_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_gemv_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, WK>);
}

#endif
