// grouped_gemv.cuh - the decode form of the grouped (mixture-of-experts) GEMM: a streaming pass
// over the packed weights of each expert that has rows.
//
// Grid: (N / TILE_N, min(E, rows)); CTA (x, y) takes column block x of the y-th expert with rows
// (grouped_common.cuh: slots past the last such expert return at once), so only the experts
// with rows are read and an empty expert launches nothing. The expert's rows go 16 at a time
// (a chunk): one pass over its TILE_N x K weights per chunk, so any count is correct and the
// decode counts (<= 16 rows an expert) take one pass.
//
// A CTA is 256 threads = 8 warps: WN = TILE_N / 16 along N (a 16-row block each) x WK = 8 / WN
// along K; an iteration covers TILE_K = 64 x WK x U of K (U packed 16x64 tiles a warp).
// Weights never touch shared memory: each lane loads its 16 bytes of a packed tile (its four
// mma.m16n8k16 A fragments, docs/LAYOUT.md) into registers STAGES iterations ahead of use
// (ld.global.nc.L1::no_allocate, L2 evict_first), clamped to the last tile past the end of K.
// The chunk's activation rows (gathered through the row index) and the stage's group scales
// (zeros) go through shared memory by cp.async, STAGES - 1 iterations ahead; token rows are
// padded by 16 bytes so that ldmatrix gives the B fragments conflict-free.
// Dequantization as the sm80 family: codes to f16/bf16 (common/dequant.cuh), the group scale
// multiplied in (zeros: one fma) in the activation dtype, then mma with fp32 accumulation;
// per-column scales in the epilogue. The WK K-slices are summed in shared memory in the fixed
// order wk = 0, 1, ... (deterministic), and warp wk = 0 writes alpha x row_scale[r] x the sum.
#ifndef W4A16_GROUPED_GROUPED_GEMV_CUH
#define W4A16_GROUPED_GROUPED_GEMV_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "common/dequant.cuh"
#include "common/func_attr.cuh"
#include "common/splitk.cuh"
#include "grouped/grouped_common.cuh"
#include "kernel_abi.h"
#include "w4a16/w4a16.h"

#define W4A16_GGEMV_THREADS 256
#define W4A16_GGEMV_CHUNK 16  // token rows of one pass

template <int MODE, int TILE_N, int TILE_K, int STAGES>
struct w4a16_ggemv_shape {
  static constexpr int SCV = MODE == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : 1;
  static constexpr int WN = TILE_N / 16;
  static constexpr int WK = 8 / WN;
  static constexpr int U = TILE_K / (64 * WK);
  static constexpr int ROW_BYTES = TILE_K * 2 + 16;
  static constexpr int A_BYTES = W4A16_GGEMV_CHUNK * ROW_BYTES;
  static constexpr int S_ROWS = TILE_K / 32;            // most group rows a stage touches
  static constexpr int S_BYTES = S_ROWS * TILE_N * 2;   // one array (scales or zeros)
  static constexpr int STAGE_BYTES = A_BYTES + SCV * S_BYTES;
  static constexpr int RED_BYTES = (WK - 1) * WN * 2 * 32 * 16;
  static constexpr int SMEM = STAGES * STAGE_BYTES > RED_BYTES ? STAGES * STAGE_BYTES : RED_BYTES;
  static constexpr int UPR = TILE_K / 8;                // 16-byte units of one token row a stage
  static constexpr int ACP = (W4A16_GGEMV_CHUNK * UPR + W4A16_GGEMV_THREADS - 1) / W4A16_GGEMV_THREADS;
  static_assert(TILE_N == 32 || TILE_N == 64 || TILE_N == 128, "TILE_N: 2, 4 or 8 warps along N");
  static_assert(U >= 1 && TILE_K == 64 * WK * U, "TILE_K = 64 x warps along K x tiles a warp");
  static_assert((W4A16_GGEMV_CHUNK * UPR) % W4A16_GGEMV_THREADS == 0, "activation copies split over the threads");
  static_assert(S_ROWS * TILE_N / 8 <= W4A16_GGEMV_THREADS, "one scale copy a thread at most");
  static_assert(STAGES >= 2, "stages");
};

template <int MODE, int TILE_N, int TILE_K, int STAGES>
constexpr int w4a16_ggemv_smem_bytes() {
  return w4a16_ggemv_shape<MODE, TILE_N, TILE_K, STAGES>::SMEM;
}

static __device__ __forceinline__ void w4a16_ggemv_ldg(uint32_t (&v)[4], const void *ptr, uint64_t pol) {
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "l"(ptr), "l"(pol));
}

// 16-byte copy into shared memory, zeros instead when !valid (src then not read)
static __device__ __forceinline__ void w4a16_ggemv_cp16(uint32_t dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

static __device__ __forceinline__ void w4a16_ggemv_ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

template <bool BF16>
static __device__ __forceinline__ void w4a16_ggemv_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (BF16)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// packed x2 multiply / fma in the activation dtype (bf16x2 mul as fma with -0)
template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_ggemv_mul2(uint32_t a, uint32_t b) {
  uint32_t d;
  if constexpr (BF16)
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
  else
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_ggemv_fma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  if constexpr (BF16)
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  else
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

static __device__ __forceinline__ uint32_t w4a16_ggemv_lds_splat(uint32_t addr) {
  unsigned short v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr) : "memory");
  return (uint32_t)v | ((uint32_t)v << 16);
}

template <typename T, int MODE, int TILE_N, int TILE_K, int STAGES>
__global__ void __launch_bounds__(W4A16_GGEMV_THREADS, 2)
    w4a16_ggemv_kernel(const w4a16_grouped_launch_params p) {
  using S = w4a16_ggemv_shape<MODE, TILE_N, TILE_K, STAGES>;
  constexpr int WN = S::WN, WK = S::WK, U = S::U;
  constexpr bool PC = MODE == W4A16_PER_COLUMN_SCALE_ONLY;
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  constexpr bool BF16 = std::is_same<T, __nv_bfloat16>::value;
  extern __shared__ __align__(16) unsigned char w4a16_ggemv_smem[];

  const w4a16_grouped_work work =
      w4a16_grouped_find(p, blockIdx.y, 1 << 30, blockIdx.x == 0 && blockIdx.y == 0);
  if (work.expert < 0) return;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wk = warp % WK, wn = warp / WK;
  const int g = lane >> 2, t = lane & 3;
  const int n0 = blockIdx.x * TILE_N;
  const int KT = p.k >> 6;                                 // 64-wide packed tiles along K
  const int n_iter = (KT + WK * U - 1) / (WK * U);
  const int groups = p.k / p.group_size;
  int gshift = 0;
  while (gshift < 30 && (1 << (gshift + 1)) <= p.group_size) ++gshift;
  if (p.group_size >= p.k) gshift = 30;  // one group row (K need not be a power of two)
  const uint32_t smem0 = (uint32_t)__cvta_generic_to_shared(w4a16_ggemv_smem);
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));

  const size_t e = (size_t)work.expert;
  const unsigned char *w_blk = static_cast<const unsigned char *>(p.w) + e * ((size_t)p.n * p.k / 2) +
                               (size_t)(n0 / 16 + wn) * KT * 512 + lane * 16;
  const T *s_e = static_cast<const T *>(p.scales) + e * ((size_t)groups * p.n);
  const T *z_e = ZP ? static_cast<const T *>(p.zeros) + e * ((size_t)groups * p.n) : nullptr;
  // scale copies: thread tid < s_rows x TILE_N / 8 copies 16 bytes of group row tid / (TILE_N / 8)
  constexpr int SCPR = TILE_N / 8;
  const int s_rows = (gshift == 30 || p.group_size >= TILE_K) ? 1 : TILE_K / p.group_size;
  const int s_r = tid / SCPR, s_c = tid % SCPR;
  const bool s_thread = !PC && s_r < s_rows;
  // where lane (g, t) of warp wn reads its rows' scales: + (srow * TILE_N) * 2, row g + 8: + 16
  const uint32_t s_rd = smem0 + S::A_BYTES + (uint32_t)(wn * 16 + g) * 2;
  // ldmatrix row addresses of the two 8-token blocks (rows past the chunk: their columns are
  // never stored)
  const uint32_t ldsm0 = smem0 + (uint32_t)(lane & 7) * S::ROW_BYTES + (lane >> 3) * 16 + wk * U * 128;

  const T *a_base = static_cast<const T *>(p.a);
  T *d = static_cast<T *>(p.d);
  const float *rs = p.row_scale;

  for (int c0 = 0; c0 < work.count; c0 += W4A16_GGEMV_CHUNK) {
    const int rows_c = min(W4A16_GGEMV_CHUNK, work.count - c0);
    // this thread's activation copies: unit (tid + i * THREADS) of the chunk's [16][UPR] units
    const T *a_src[S::ACP];
    uint32_t a_ok = 0;
#pragma unroll
    for (int i = 0; i < S::ACP; ++i) {
      const int u = tid + i * W4A16_GGEMV_THREADS;
      const int r = u / S::UPR;
      const int tok = r < rows_c ? w4a16_grouped_token(p, work.row0 + c0 + r) : -1;
      a_src[i] = a_base + (tok >= 0 ? (int64_t)tok * p.lda : 0) + (u % S::UPR) * 8;
      if (tok >= 0) a_ok |= 1u << i;
    }
    auto load_a = [&](int slot, int it) {
      const int k0 = it * TILE_K;
      const uint32_t dst = smem0 + slot * S::STAGE_BYTES;
#pragma unroll
      for (int i = 0; i < S::ACP; ++i) {
        const int u = tid + i * W4A16_GGEMV_THREADS;
        const bool ok = ((a_ok >> i) & 1u) && k0 + (u % S::UPR) * 8 < p.k;
        w4a16_ggemv_cp16(dst + (u / S::UPR) * S::ROW_BYTES + (u % S::UPR) * 16, ok ? a_src[i] + k0 : a_base, ok);
      }
      if (s_thread) {
        const int gr = (k0 >> gshift) + s_r;
        const bool ok = gr < groups;
        const size_t off = ok ? (size_t)gr * p.n + n0 + s_c * 8 : 0;
        const uint32_t sd = dst + S::A_BYTES + (s_r * TILE_N + s_c * 8) * 2;
        w4a16_ggemv_cp16(sd, s_e + off, ok);
        if (ZP) w4a16_ggemv_cp16(sd + S::S_BYTES, z_e + off, ok);
      }
    };

    uint32_t wbuf[STAGES][U][4];
    auto load_w = [&](int stage, int u, int it) {
      int kt = (it * WK + wk) * U + u;
      kt = kt < KT ? kt : KT - 1;
      w4a16_ggemv_ldg(wbuf[stage][u], w_blk + (size_t)kt * 512, pol);
    };
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
#pragma unroll
      for (int u = 0; u < U; ++u) load_w(s, u, s);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < n_iter) load_a(s, s);
      asm volatile("cp.async.commit_group;" ::: "memory");
    }

    float acc[2][4];
#pragma unroll
    for (int nb = 0; nb < 2; ++nb)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nb][i] = 0.f;
    const bool two = rows_c > 8;

    for (int it0 = 0; it0 < n_iter; it0 += STAGES) {
#pragma unroll
      for (int ps = 0; ps < STAGES; ++ps) {
        const int it = it0 + ps;
        if (it < n_iter) {
          asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
          __syncthreads();
          if (it + STAGES - 1 < n_iter) load_a((ps + STAGES - 1) % STAGES, it + STAGES - 1);
          asm volatile("cp.async.commit_group;" ::: "memory");
#pragma unroll
          for (int u = 0; u < U; ++u) {
            uint32_t q[4][4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              if constexpr (BF16)
                w4a16_u4x8_to_bf16x8<ZP ? 0 : 8>(wbuf[ps][u][j], q[j]);
              else
                w4a16_u4x8_to_f16x8<ZP ? 0 : 8>(wbuf[ps][u][j], q[j]);
            }
            load_w(ps, u, it + STAGES);
            const int kt = (it * WK + wk) * U + u;
            if (kt < KT) {  // warp-uniform: the K tail's missing tiles add nothing
              const int kl = (wk * U + u) * 64;  // k of this tile within the stage
              uint32_t b[2][8];
#pragma unroll
              for (int nb = 0; nb < 2; ++nb) {
                uint32_t lo[4], hi[4];
                const uint32_t a0 = ldsm0 + ps * S::STAGE_BYTES + nb * 8 * S::ROW_BYTES + u * 128;
                w4a16_ggemv_ldsm_x4(lo, a0);
                w4a16_ggemv_ldsm_x4(hi, a0 + 64);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                  b[nb][i] = lo[i];
                  b[nb][4 + i] = hi[i];
                }
              }
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                if constexpr (!PC) {
                  // group rows change at most every 32 k: one scale pair per half tile
                  const int srow = (kl + 16 * j) >> gshift;
                  const uint32_t sa = s_rd + ps * S::STAGE_BYTES + srow * TILE_N * 2;
                  const uint32_t s_lo = w4a16_ggemv_lds_splat(sa), s_hi = w4a16_ggemv_lds_splat(sa + 16);
                  if constexpr (ZP) {
                    const uint32_t z_lo = w4a16_ggemv_lds_splat(sa + S::S_BYTES);
                    const uint32_t z_hi = w4a16_ggemv_lds_splat(sa + S::S_BYTES + 16);
                    q[j][0] = w4a16_ggemv_fma2<BF16>(q[j][0], s_lo, z_lo);
                    q[j][1] = w4a16_ggemv_fma2<BF16>(q[j][1], s_hi, z_hi);
                    q[j][2] = w4a16_ggemv_fma2<BF16>(q[j][2], s_lo, z_lo);
                    q[j][3] = w4a16_ggemv_fma2<BF16>(q[j][3], s_hi, z_hi);
                  } else {
                    q[j][0] = w4a16_ggemv_mul2<BF16>(q[j][0], s_lo);
                    q[j][1] = w4a16_ggemv_mul2<BF16>(q[j][1], s_hi);
                    q[j][2] = w4a16_ggemv_mul2<BF16>(q[j][2], s_lo);
                    q[j][3] = w4a16_ggemv_mul2<BF16>(q[j][3], s_hi);
                  }
                }
                w4a16_ggemv_mma<BF16>(acc[0], q[j], b[0][2 * j], b[0][2 * j + 1]);
                if (two) w4a16_ggemv_mma<BF16>(acc[1], q[j], b[1][2 * j], b[1][2 * j + 1]);
              }
            }
          }
        }
      }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();  // the stages are free: the K-slice sums reuse them

    if constexpr (WK > 1) {
      float4 *red = reinterpret_cast<float4 *>(w4a16_ggemv_smem);
      if (wk > 0) {
#pragma unroll
        for (int nb = 0; nb < 2; ++nb)
          red[(((wk - 1) * WN + wn) * 2 + nb) * 32 + lane] = make_float4(acc[nb][0], acc[nb][1], acc[nb][2], acc[nb][3]);
      }
      __syncthreads();
      if (wk == 0) {
#pragma unroll
        for (int w2 = 1; w2 < WK; ++w2)
#pragma unroll
          for (int nb = 0; nb < 2; ++nb) {
            const float4 v = red[(((w2 - 1) * WN + wn) * 2 + nb) * 32 + lane];
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
      for (int nb = 0; nb < 2; ++nb)
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

template <typename T, int MODE, int TILE_N, int TILE_K, int STAGES>
static inline int w4a16_ggemv_launch(const struct w4a16_grouped_launch_params *p, cudaStream_t stream) {
  using S = w4a16_ggemv_shape<MODE, TILE_N, TILE_K, STAGES>;
  void (*kernel)(const w4a16_grouped_launch_params) = w4a16_ggemv_kernel<T, MODE, TILE_N, TILE_K, STAGES>;
  if (S::SMEM > 48 * 1024) {  // once per context (common/func_attr.cuh)
    static std::atomic<unsigned long long> attrs_ctx{0};
    const cudaError_t e = w4a16_func_attr::set_once(kernel, attrs_ctx, S::SMEM, -1);
    if (e != cudaSuccess) return (int)e;
  }
  const int slots = p->experts < p->rows ? p->experts : p->rows;
  const dim3 grid((unsigned)(p->n / TILE_N), (unsigned)slots, 1);
  kernel<<<grid, W4A16_GGEMV_THREADS, S::SMEM, stream>>>(*p);
  return (int)cudaGetLastError();
}

template <typename T, int MODE, int TILE_N, int TILE_K, int STAGES>
static inline int w4a16_ggemv_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_ggemv_kernel<T, MODE, TILE_N, TILE_K, STAGES>);
}

#endif
