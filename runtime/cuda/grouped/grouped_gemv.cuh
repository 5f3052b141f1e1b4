// grouped_gemv.cuh - the decode form of the grouped (mixture-of-experts) GEMM: a streaming pass
// over the packed weights of each expert that has rows.
//
// Grid: (N / TILE_N, min(E, rows)); CTA (x, y) takes column block x of the y-th expert with rows
// (grouped_common.cuh: slots past the last such expert return at once), so only the experts
// with rows are read and an empty expert launches nothing. The expert's rows go TILE_M (8 or 16)
// at a time (a chunk): one pass over its TILE_N x K weights per chunk, so any count is correct and
// the decode counts take one pass.
//
// A CTA is 256 threads = 8 warps: WN = TILE_N / 16 along N (a 16-row block each) x WK = 8 / WN
// along K; an iteration covers TILE_K = 64 x WK x U of K (U packed 16x64 tiles a warp). Every
// stage of the STAGES-deep cp.async ring holds the iteration's packed weights verbatim
// ([WN][WK x U][512 B], docs/LAYOUT.md: a lane's 16 bytes of a tile are its four mma.m16n8k16 A
// fragments), the chunk's activation rows (gathered through the row index; rows padded by 16
// bytes so that ldmatrix gives the B fragments conflict-free) and the group scales (zeros) of the
// stage: STAGES - 1 iterations of weights are in flight per CTA (the ring is sized so that two
// CTAs an SM keep about 50-110 KB of HBM reads in flight; the launch asks for the whole
// shared-memory carveout, so that two CTAs fit). Past the end of K the copies write
// zeros and the warps skip the tiles.
// Dequantization: scale-only modes feed the exact codes (q - 8) into the mma (bf16: 128 + q, and
// one more mma against -136 removes the bias) and apply the group scale in fp32 to each half
// tile's partial sum, per-column scales in the epilogue; zero points: w = s * q + z by one
// f16x2/bf16x2 fma a register (the weight rounded once to the activation dtype), then the mma. The WK K-slices are summed in shared memory in the fixed
// order wk = 0, 1, ... (deterministic), and warp wk = 0 writes alpha x row_scale[r] x the sum.
#ifndef W4A16_GROUPED_GROUPED_GEMV_CUH
#define W4A16_GROUPED_GROUPED_GEMV_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "grouped/grouped_common.cuh"
#include "sm80/gemm_sm80.cuh"  // the mma.sync, ldmatrix, cp.async and packed-pair helpers

#define W4A16_GGEMV_THREADS 256

template <int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES>
struct w4a16_ggemv_shape {
  static constexpr int SCV = MODE == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : 1;
  static constexpr int WN = TILE_N / 16;
  static constexpr int WK = 8 / WN;
  static constexpr int U = TILE_K / (64 * WK);
  static constexpr int NB = TILE_M / 8;                 // n8 token blocks
  static constexpr int W_BYTES = TILE_N * TILE_K / 2;   // one stage of packed weights
  static constexpr int ROW_BYTES = TILE_K * 2 + 16;
  static constexpr int A_BYTES = TILE_M * ROW_BYTES;
  static constexpr int S_ROWS = TILE_K / 32;            // most group rows a stage touches
  static constexpr int S_BYTES = S_ROWS * TILE_N * 2;   // one array (scales or zeros)
  static constexpr int STAGE_BYTES = W_BYTES + A_BYTES + SCV * S_BYTES;
  static constexpr int RED_BYTES = (WK - 1) * WN * NB * 32 * 16;
  static constexpr int SMEM = STAGES * STAGE_BYTES > RED_BYTES ? STAGES * STAGE_BYTES : RED_BYTES;
  static constexpr int WCP = W_BYTES / 16 / W4A16_GGEMV_THREADS;  // weight copies a thread a stage
  static constexpr int UPR = TILE_K / 8;                // 16-byte units of one token row a stage
  static constexpr int AUNITS = TILE_M * UPR;
  static constexpr int ACP = (AUNITS + W4A16_GGEMV_THREADS - 1) / W4A16_GGEMV_THREADS;
  static_assert(TILE_N == 32 || TILE_N == 64 || TILE_N == 128, "TILE_N: 2, 4 or 8 warps along N");
  static_assert(TILE_M == 8 || TILE_M == 16, "TILE_M: 8 or 16 token rows a pass");
  static_assert(U >= 1 && TILE_K == 64 * WK * U, "TILE_K = 64 x warps along K x tiles a warp");
  static_assert(WCP >= 1 && W_BYTES % (16 * W4A16_GGEMV_THREADS) == 0, "weight copies split over the threads");
  static_assert(S_ROWS * TILE_N / 8 <= W4A16_GGEMV_THREADS, "one scale copy a thread at most");
  static_assert(STAGES >= 2, "stages");
};

template <int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES>
constexpr int w4a16_ggemv_smem_bytes() {
  return w4a16_ggemv_shape<MODE, TILE_N, TILE_M, TILE_K, STAGES>::SMEM;
}

// a scale's 16 bits (as ld.shared.u16 gives them) as fp32
static __device__ __forceinline__ float w4a16_ggemv_bits_to_float(__half, uint16_t v) {
  return __half2float(__ushort_as_half(v));
}
static __device__ __forceinline__ float w4a16_ggemv_bits_to_float(__nv_bfloat16, uint16_t v) {
  return __uint_as_float((uint32_t)v << 16);
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES>
__global__ void __launch_bounds__(W4A16_GGEMV_THREADS, 2)
    w4a16_ggemv_kernel(const w4a16_grouped_launch_params p) {
  using S = w4a16_ggemv_shape<MODE, TILE_N, TILE_M, TILE_K, STAGES>;
  constexpr int WN = S::WN, WK = S::WK, U = S::U, NB = S::NB;
  constexpr bool PC = MODE == W4A16_PER_COLUMN_SCALE_ONLY;
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  const T tag = T();
  // bf16 scale-only modes: the codes go into the mma biased by 128 (exact, two instructions a
  // register) and one more mma against -(128 + 8) removes the bias (exact products, fp32 sums)
  constexpr bool BIASED = std::is_same<T, __nv_bfloat16>::value && !ZP;
  const uint32_t kneg[4] = {0xc308c308u, 0xc308c308u, 0xc308c308u, 0xc308c308u};  // bf16 -136 pairs
  extern __shared__ __align__(16) unsigned char w4a16_ggemv_smem[];

  w4a16_griddep_wait();  // the offsets, the row index and A may come from the kernel before
  const w4a16_grouped_work work =
      w4a16_grouped_find(p, blockIdx.y, 1 << 30, blockIdx.x == 0 && blockIdx.y == 0);
  if (work.expert < 0) {
    w4a16_griddep_launch_dependents();
    return;
  }

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wk = warp % WK, wn = warp / WK;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * TILE_N;
  const int KT = p.k >> 6;  // 64-wide packed tiles along K
  const int n_iter = (KT + WK * U - 1) / (WK * U);
  const int groups = p.k / p.group_size;
  int gshift = 0;
  while (gshift < 30 && (1 << (gshift + 1)) <= p.group_size) ++gshift;
  if (p.group_size >= p.k) gshift = 30;  // one group row (K need not be a power of two)
  const uint32_t smem0 = (uint32_t)__cvta_generic_to_shared(w4a16_ggemv_smem);

  const size_t e = (size_t)work.expert;
  // weight copies: chunk c = tid + i * THREADS of the stage's [WN][WK*U][32 lanes] x 16 bytes
  const unsigned char *w_e = static_cast<const unsigned char *>(p.w) + e * ((size_t)p.n * p.k / 2);
  const unsigned char *w_src[S::WCP];
  int w_kt[S::WCP];
#pragma unroll
  for (int i = 0; i < S::WCP; ++i) {
    const int c = tid + i * W4A16_GGEMV_THREADS;
    const int rb = c / (WK * U * 32), tl = (c / 32) % (WK * U);
    w_src[i] = w_e + (size_t)(n0 / 16 + rb) * KT * 512 + (size_t)tl * 512 + (c % 32) * 16;
    w_kt[i] = tl;
  }
  const T *s_e = static_cast<const T *>(p.scales) + e * ((size_t)groups * p.n);
  const T *z_e = ZP ? static_cast<const T *>(p.zeros) + e * ((size_t)groups * p.n) : nullptr;
  // scale copies: thread tid < s_rows x TILE_N / 8 copies 16 bytes of group row tid / (TILE_N / 8)
  constexpr int SCPR = TILE_N / 8;
  const int s_rows = (gshift == 30 || p.group_size >= TILE_K) ? 1 : TILE_K / p.group_size;
  const int s_r = tid / SCPR, s_c = tid % SCPR;
  const bool s_thread = !PC && s_r < s_rows;
  // where lane (g, t) of warp wn reads its rows' scales: + (srow * TILE_N) * 2, row g + 8: + 16
  const uint32_t s_rd = smem0 + S::W_BYTES + S::A_BYTES + (uint32_t)(wn * 16 + g) * 2;
  // ldmatrix row addresses of the 8-token blocks (rows past the chunk: their columns are never stored)
  const uint32_t ldsm0 = smem0 + S::W_BYTES + (uint32_t)(lane & 7) * S::ROW_BYTES + (lane >> 3) * 16 + wk * U * 128;
  // the lane's 16 bytes of tile (wn, wk * U + u) in a stage
  const uint32_t w_rd = smem0 + (uint32_t)((wn * WK * U + wk * U) * 512 + lane * 16);

  const T *a_base = static_cast<const T *>(p.a);
  T *d = static_cast<T *>(p.d);
  const float *rs = p.row_scale;

  for (int c0 = 0; c0 < work.count; c0 += TILE_M) {
    const int rows_c = min(TILE_M, work.count - c0);
    // this thread's activation copies: unit (tid + i * THREADS) of the chunk's [TILE_M][UPR] units
    const T *a_src[S::ACP];
    uint32_t a_ok = 0;
#pragma unroll
    for (int i = 0; i < S::ACP; ++i) {
      const int u = tid + i * W4A16_GGEMV_THREADS;
      const int r = u / S::UPR;
      const int tok = (u < S::AUNITS && r < rows_c) ? w4a16_grouped_token(p, work.row0 + c0 + r) : -1;
      a_src[i] = a_base + (tok >= 0 ? (int64_t)tok * p.lda : 0) + (u % S::UPR) * 8;
      if (tok >= 0) a_ok |= 1u << i;
    }
    auto load_stage = [&](int slot, int it) {
      const uint32_t dst = smem0 + slot * S::STAGE_BYTES;
      const int kt0 = it * WK * U;
#pragma unroll
      for (int i = 0; i < S::WCP; ++i) {
        const bool ok = kt0 + w_kt[i] < KT;
        w4a16_sm80_cp16_stream(dst + (tid + i * W4A16_GGEMV_THREADS) * 16, ok ? w_src[i] + (size_t)kt0 * 512 : w_e, ok);
      }
      const int k0 = it * TILE_K;
#pragma unroll
      for (int i = 0; i < S::ACP; ++i) {
        const int u = tid + i * W4A16_GGEMV_THREADS;
        if (S::AUNITS % W4A16_GGEMV_THREADS == 0 || u < S::AUNITS) {
          const bool ok = ((a_ok >> i) & 1u) && k0 + (u % S::UPR) * 8 < p.k;
          w4a16_sm80_cp16_zfill(dst + S::W_BYTES + (u / S::UPR) * S::ROW_BYTES + (u % S::UPR) * 16, ok ? a_src[i] + k0 : a_base,
                           ok);
        }
      }
      if (s_thread) {
        const int gr = (k0 >> gshift) + s_r;
        const bool ok = gr < groups;
        const size_t off = ok ? (size_t)gr * p.n + n0 + s_c * 8 : 0;
        const uint32_t sd = dst + S::W_BYTES + S::A_BYTES + (s_r * TILE_N + s_c * 8) * 2;
        w4a16_sm80_cp16_zfill(sd, s_e + off, ok);
        if (ZP) w4a16_sm80_cp16_zfill(sd + S::S_BYTES, z_e + off, ok);
      }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < n_iter) load_stage(s, s);
      w4a16_sm80_cp_commit();
    }

    float acc[NB][4];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nb][i] = 0.f;
    const bool two = rows_c > 8;

    int rd = 0, wr = STAGES - 1;
    for (int it = 0; it < n_iter; ++it) {
      w4a16_sm80_cp_wait<STAGES - 2>();
      __syncthreads();  // stage `it` visible to all; the slot of it - 1 free for refill
      if (it + STAGES - 1 < n_iter) load_stage(wr, it + STAGES - 1);
      w4a16_sm80_cp_commit();
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kt = (it * WK + wk) * U + u;
        if (kt < KT) {  // warp-uniform: the K tail's missing tiles add nothing
          uint32_t wq[4], q[4][4];
          w4a16_sm80_lds128(w_rd + rd * S::STAGE_BYTES + u * 512, wq);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if constexpr (BIASED)
              w4a16_u4x8_to_bf16x8_biased(wq[j], q[j]);
            else
              w4a16_sm80_dequant(tag, wq[j], q[j], ZP ? 0 : 8);
          }
          const int kl = (wk * U + u) * 64;  // k of this tile within the stage
          // B fragments of token block nb: (b[nb][2j], b[nb][2j+1]) for k16 sub-tile j; the second
          // block only where the pass has more than 8 rows
          uint32_t b[NB][8];
#pragma unroll
          for (int nb = 0; nb < NB; ++nb) {
            if (nb == 0 || two) {
              uint32_t lo[4], hi[4];
              const uint32_t a0 = ldsm0 + rd * S::STAGE_BYTES + nb * 8 * S::ROW_BYTES + u * 128;
              w4a16_sm80_ldsm_x4(a0, lo);
              w4a16_sm80_ldsm_x4(a0 + 64, hi);
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                b[nb][i] = lo[i];
                b[nb][4 + i] = hi[i];
              }
            }
          }
          if constexpr (ZP) {
            // w = s * q + z in the activation dtype (one fma a register), then the mma
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int srow = (kl + 32 * h) >> gshift;  // groups are >= 32: one pair a half tile
              const uint32_t sa = s_rd + rd * S::STAGE_BYTES + srow * TILE_N * 2;
              const uint32_t s_lo = w4a16_sm80_splat(w4a16_sm80_lds16(sa));
              const uint32_t s_hi = w4a16_sm80_splat(w4a16_sm80_lds16(sa + 16));
              const uint32_t z_lo = w4a16_sm80_splat(w4a16_sm80_lds16(sa + S::S_BYTES));
              const uint32_t z_hi = w4a16_sm80_splat(w4a16_sm80_lds16(sa + S::S_BYTES + 16));
#pragma unroll
              for (int j = 2 * h; j < 2 * h + 2; ++j) {
                q[j][0] = w4a16_sm80_fma2(tag, q[j][0], s_lo, z_lo);
                q[j][1] = w4a16_sm80_fma2(tag, q[j][1], s_hi, z_hi);
                q[j][2] = w4a16_sm80_fma2(tag, q[j][2], s_lo, z_lo);
                q[j][3] = w4a16_sm80_fma2(tag, q[j][3], s_hi, z_hi);
                w4a16_sm80_mma(tag, acc[0], q[j], &b[0][2 * j]);
                if (NB > 1 && two) w4a16_sm80_mma(tag, acc[NB - 1], q[j], &b[NB - 1][2 * j]);
              }
            }
          } else if constexpr (PC) {
            // exact codes; s[n] in the epilogue
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
              for (int nb = 0; nb < NB; ++nb)
                if (nb == 0 || two) {
                  w4a16_sm80_mma(tag, acc[nb], q[j], &b[nb][2 * j]);
                  if constexpr (BIASED) w4a16_sm80_mma(tag, acc[nb], kneg, &b[nb][2 * j]);
                }
          } else {
            // exact codes into the mma, the group scale applied in fp32 to each half tile's partial
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int srow = (kl + 32 * h) >> gshift;
              const uint32_t sa = s_rd + rd * S::STAGE_BYTES + srow * TILE_N * 2;
              const float f_lo = w4a16_ggemv_bits_to_float(tag, w4a16_sm80_lds16(sa));
              const float f_hi = w4a16_ggemv_bits_to_float(tag, w4a16_sm80_lds16(sa + 16));
#pragma unroll
              for (int nb = 0; nb < NB; ++nb)
                if (nb == 0 || two) {
                  float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                  for (int j = 2 * h; j < 2 * h + 2; ++j) {
                    w4a16_sm80_mma(tag, part, q[j], &b[nb][2 * j]);
                    if constexpr (BIASED) w4a16_sm80_mma(tag, part, kneg, &b[nb][2 * j]);
                  }
                  acc[nb][0] = fmaf(f_lo, part[0], acc[nb][0]);
                  acc[nb][1] = fmaf(f_lo, part[1], acc[nb][1]);
                  acc[nb][2] = fmaf(f_hi, part[2], acc[nb][2]);
                  acc[nb][3] = fmaf(f_hi, part[3], acc[nb][3]);
                }
            }
          }
        }
      }
      rd = rd + 1 == STAGES ? 0 : rd + 1;
      wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
    w4a16_sm80_cp_wait<0>();
    if (c0 + TILE_M >= work.count) w4a16_griddep_launch_dependents();  // the last pass's loads are done
    __syncthreads();  // the stages are free: the K-slice sums reuse them

    if constexpr (WK > 1) {
      float4 *red = reinterpret_cast<float4 *>(w4a16_ggemv_smem);
      if (wk > 0) {
#pragma unroll
        for (int nb = 0; nb < NB; ++nb)
          red[(((wk - 1) * WN + wn) * NB + nb) * 32 + lane] = make_float4(acc[nb][0], acc[nb][1], acc[nb][2], acc[nb][3]);
      }
      __syncthreads();
      if (wk == 0) {
#pragma unroll
        for (int w2 = 1; w2 < WK; ++w2)
#pragma unroll
          for (int nb = 0; nb < NB; ++nb) {
            const float4 v = red[(((w2 - 1) * WN + wn) * NB + nb) * 32 + lane];
            acc[nb][0] += v.x;
            acc[nb][1] += v.y;
            acc[nb][2] += v.z;
            acc[nb][3] += v.w;
          }
      }
    }
    if (wk == 0) {
      const int n_lo = n0 + wn * 16 + g, n_hi = n_lo + 8;
      float s_lo = p.alpha, s_hi = p.alpha;
      if constexpr (PC) {
        const T *sc = static_cast<const T *>(p.scales) + e * (size_t)p.n;
        s_lo *= w4a16_to_float(sc[n_lo]);
        s_hi *= w4a16_to_float(sc[n_hi]);
      }
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int m = nb * 8 + 2 * t + (i & 1);
          if (m < rows_c) {
            const int r = work.row0 + c0 + m;
            const float v = acc[nb][i] * ((i & 2) ? s_hi : s_lo) * (rs ? rs[r] : 1.f);
            d[(int64_t)r * p.ldd + ((i & 2) ? n_hi : n_lo)] = w4a16_from_float<T>(v);
          }
        }
    }
    __syncthreads();  // the next chunk's stages overwrite the reduction buffer
  }
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES>
static inline int w4a16_ggemv_launch(const struct w4a16_grouped_launch_params *p, cudaStream_t stream) {
  using S = w4a16_ggemv_shape<MODE, TILE_N, TILE_M, TILE_K, STAGES>;
  void (*kernel)(const w4a16_grouped_launch_params) = w4a16_ggemv_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES>;
  static std::atomic<unsigned long long> attrs_ctx{0};
  static std::atomic<int> pdl_cache[64];
  const int slots = p->experts < p->rows ? p->experts : p->rows;
  return w4a16_grouped_launch_kernel(kernel, attrs_ctx, pdl_cache, dim3((unsigned)(p->n / TILE_N), (unsigned)slots, 1),
                                     W4A16_GGEMV_THREADS, S::SMEM, cudaSharedmemCarveoutMaxShared, *p, stream);
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES>
static inline int w4a16_ggemv_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_ggemv_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES>);
}

#endif
