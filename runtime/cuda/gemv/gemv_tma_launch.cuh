// gemv_tma_launch.cuh - the host side of the sm_90 TMA GEMV (gemv_tma.cuh): its tensor maps, the
// consumer variant a call takes (by M and the group size), and the grid and shared memory that let the
// next kernel's CTAs stream beside it where that pays.
#ifndef W4A16_GEMV_GEMV_TMA_LAUNCH_CUH
#define W4A16_GEMV_GEMV_TMA_LAUNCH_CUH

#include <string.h>

#include <atomic>
#include <type_traits>

#include "common/func_attr.cuh"
#include "debug.h"
#include "gemv/gemv_tma.cuh"
#include "sm90/sm90_ptx.cuh"

// The tensor map of a [rows][n] scale (zero) matrix (rows: the group rows, 1 for one group a column;
// E G for the grouped form's experts) whose box is a stage's [gps group rows][16 R columns]; false
// where the driver refuses it.
static inline bool w4a16_gemv_tma_scale_map(w4a16_sm90::EncodeTiledFn encode, CUtensorMap *tm, CUtensorMapDataType dt,
                                            const void *ptr, long long n, long long rows, int R, int gps) {
  const cuuint64_t dims[2] = {(cuuint64_t)n, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)n * 2};
  const cuuint32_t box[2] = {(cuuint32_t)(16 * R), (cuuint32_t)gps};
  const cuuint32_t estr[2] = {1, 1};
  return encode(tm, dt, 2, const_cast<void *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
         CUDA_SUCCESS;
}

// Launches the kernel of consumer variant VAR (gemv_tma.cuh) with the call's arguments and maps.
template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW, int VAR>
static inline int w4a16_gemv_tma_launch_variant(const struct w4a16_launch_params *p, const struct w4a16_gemv_args &a,
                                    const CUtensorMap &tm_a, const CUtensorMap &tm_s, const CUtensorMap &tm_z,
                                    cudaStream_t stream) {
  constexpr int VEC = w4a16_gemv_tma_vectors(MODE, VAR);
  void (*kernel)(const struct w4a16_gemv_args, const CUtensorMap, const CUtensorMap, const CUtensorMap) =
      w4a16_gemv_tma_kernel<T, MODE, R, TILE_M, STAGES, TPW, VAR>;
  // the limit of the largest layout (M = TILE_M, group 32); each launch asks for its own size.
  // Set once per context (common/func_attr.cuh: the attribute belongs to the context's copy of the
  // kernel; a process may drive several GPUs or reset one), as in the sm80 and sm90 families.
  const uint32_t largest = w4a16_gemv_tma_layout_of(R, TPW, TILE_M, STAGES, TILE_M, 5, VEC).total;
  const uint32_t attr_bytes = largest > W4A16_GEMV_TMA_OVER_HALF_SM ? largest : W4A16_GEMV_TMA_OVER_HALF_SM;
  // And the SM's shared-memory carveout: all of it (228 KB on sm_90), with the same record. How many CTAs an SM
  // holds - two of this grid, one of the next kernel's beside it, or none beside - is planned below
  // from shared-memory sizes against the whole 228 KB. Left to the driver (no preference), the carveout
  // an SM runs in is whatever earlier launches left it in: the same kernel then runs in two or more
  // states from one process to the next and after other kernels in the same process (fp16 32x4x1024
  // s4 on 4096x4096 at M = 2: 3.7, 4.1-4.2 or 4.6-5.1 us; H100). A preference of 0 or 50 % puts
  // 16x8x1024 s4 at 6.0 and 4.3 us on 4096x4096
  // M = 1 against 3.85 at 100 %: two CTAs of 49 KB and the next kernel's third no longer fit.
  static std::atomic<unsigned long long> attrs_ctx{0};
  const cudaError_t attr_err =
      w4a16_func_attr::set_once(kernel, attrs_ctx, (int)attr_bytes, (int)cudaSharedmemCarveoutMaxShared);
  if (attr_err != cudaSuccess) return (int)attr_err;
  constexpr bool PERM = (VAR & W4A16_GEMV_TMA_PERM) != 0;  // act-order: no A in the stages, the row after them
  const struct w4a16_gemv_tma_layout l =
      w4a16_gemv_tma_layout_of(R, TPW, TILE_M, STAGES, PERM ? 0 : p->m, (int)a.gshift, VEC);

  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  // one CTA per unit, at most two per SM (the CTAs then walk several units): one wave with a
  // free slot per SM for the next kernel's CTAs. Measured (H100, M = 1, docs/PERFORMANCE.md):
  // grids of 1.2-1.6 waves (10240x8192, 28672x4096) ran 15-30% slower than capped at 2 per SM;
  // one CTA per SM for every unit, slower still (the SM's decode math needs the warps of 2 CTAs).
  // W4A16_GEMV_TMA_CTAS (debug.h) overrides the cap. A layout of more than half an SM of shared memory
  // (the tile_m 16 variants with deeper pipelines) is capped at one CTA per SM instead.
  const int units = p->n / (16 * R);
  const int cap = w4a16_debug()->gemv_tma_ctas;
  const int per_sm = largest <= W4A16_GEMV_TMA_HALF_SM ? 2 : 1;
  const int sms = p->sm_count > 0 ? p->sm_count : 132;
  const int ctas = cap > 0 ? cap : per_sm * sms;
  int grid = units < ctas ? units : ctas;
  cfg.blockDim = dim3(W4A16_GEMV_THREADS + 32, 1, 1);
  // Where the grid holds two CTAs on an SM, a third one, the next kernel's (it launches as soon as
  // this one starts), fits beside them if registers (W4A16_GEMV_TMA_MIN_CTAS) and shared memory allow.
  // It pays only where it can stream its whole unit before its griddepcontrol.wait: every CTA of
  // both grids has one unit, whose weights fit the STAGES stages issued before the wait. Elsewhere
  // the early CTAs cost up to 1.3x a kernel (the SMs they land on end up with more of the next grid's
  // units than the others: even where they are let in, 4096x4096 M = 1, a per-CTA timeline put the 256
  // CTAs of a launch three / two / one on 62 / 5 / 60 SMs; H100: best kernel per problem 4096x4096
  // M = 1 / 4 0.95x / 0.84x with them,
  // 4096x14336 M = 1 1.18x, the multi-unit layers up to 1.05x). There each CTA asks for half an SM of
  // shared memory (two of them and their reserved 1 KB fill the 228 KB), so that no third CTA fits.
  // Likewise beside a grid of one CTA per SM (at most 132 units, or the tile_m 16 layouts of more than
  // half an SM): let in where its units do not fit the stages, it costs up to 1.65x a kernel (H100:
  // without it the bf16 TMA GEMV kernels on the eight layers at M = 1, 8, 9, 16 run 0.60-0.87x the
  // time where the grid has at most one unit a CTA, 0.98-1.03x on the layers of several; the best
  // kernel per problem 4096x14336 M = 9 0.65x, 4096x4096 M = 9 / 16 0.80x / 0.95x, elsewhere the
  // same). So only where the units fit; elsewhere the
  // CTA asks for just over half an SM, so that no second one fits.
  const bool fits = units <= grid && (long long)STAGES * W4A16_GEMV_TMA_STAGE_W(TPW) >= (long long)R * 16 * (p->k / 2);
  const bool beside = fits || (grid <= sms && w4a16_debug()->gemv_tma_beside);
  // Where the next kernel's CTAs come beside, the grid is padded to per_sm x sms CTAs: the CTAs past
  // the last unit only wait for the previous grid and exit. On a grid of at most one unit per SM with
  // two CTA slots per SM (32x4x1024 s4 on 4096x4096: 128 units, 264 CTAs) they hold each SM's second
  // slot until the previous grid has completed, so the next launch's CTAs come in then: their weights
  // stream while this grid does its math after the wait, not while it still streams its own. fp16
  // 32x4x1024 s4 on 4096x4096 at M = 1 / 2 (H100): 5.1-5.3 /
  // 5.3-5.5 us unpadded (the next launch's CTAs beside from the start), the same padded to one CTA on
  // every SM, 4.2-4.3 / 4.7-4.8 with no CTA beside, 4.1-4.3 / 4.5-4.7 padded to two. Grids of two CTAs
  // per SM (256 units: 264 CTAs) are unchanged by it.
  if (beside && cap <= 0) grid = per_sm * sms;
  uint32_t smem = PERM ? w4a16_gemv_tma_perm_layout_of(l, STAGES, p->k).total : l.total;
  if (!beside) {  // shared memory that leaves no room for the next kernel's CTA
    const uint32_t block = grid <= sms ? W4A16_GEMV_TMA_OVER_HALF_SM : W4A16_GEMV_TMA_HALF_SM;
    if (smem < block) smem = block;
  }
  cfg.gridDim = dim3((unsigned)grid, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = w4a16_debug()->gemv_pdl && !p->no_pdl ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, a, tm_a, tm_s, tm_z);
  if (e == cudaSuccess) e = cudaGetLastError();
  return (int)e;
}


// Host side (called from the generated instantiation files). Launch checks done by the runtime:
// N % TILE_N == 0, K % (64 TT) == 0, M <= TILE_M, fine-grained group sizes powers of two >= 32 or K
// (one group row: gshift 30, w4a16_gemv_args_of).
template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW>
static inline int w4a16_gemv_tma_launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  constexpr int VEC = w4a16_gemv_tma_vectors(MODE, 0);  // the tensor maps of the variants that stream them
  struct w4a16_gemv_args a = w4a16_gemv_args_of(p, 1);
  a.pcol_int = w4a16_debug()->gemv_pcz != 3;  // W4A16_GEMV_TMA_PCZ=sub: integer offsets as any others
  if (VEC == 0) a.gshift = 0;  // per-column: no group rows (the layout's scale area is empty)

  constexpr int TT = 8 * TPW / R;
  const CUtensorMapDataType dt =
      std::is_same<T, __nv_bfloat16>::value ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  w4a16_sm90::EncodeTiledFn encode = w4a16_sm90::encode_tiled_fn();
  if (!encode) return (int)cudaErrorNotSupported;
  const cuuint32_t estr[3] = {1, 1, 1};
  CUtensorMap tm_a, tm_s, tm_z;
  memset(&tm_s, 0, sizeof tm_s);
  memset(&tm_z, 0, sizeof tm_z);
  {  // A as [K/64][M][64]: a stage's box [TT][M][64], 128-byte swizzle (see the layout)
    const cuuint64_t dims[3] = {64, (cuuint64_t)p->m, (cuuint64_t)(p->k / 64)};
    const cuuint64_t strides[2] = {(cuuint64_t)p->lda * 2, 128};
    const cuuint32_t box[3] = {64, (cuuint32_t)p->m, (cuuint32_t)TT};
    if (encode(&tm_a, dt, 3, const_cast<void *>(p->a), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return (int)cudaErrorInvalidValue;
  }
  if (VEC > 0) {  // scales (zeros) [G][N] (G = 1: group K): a stage's box [groups of the stage][16 R]
    const int gps = (64 * TT) >> a.gshift > 0 ? (64 * TT) >> a.gshift : 1;
    if (!w4a16_gemv_tma_scale_map(encode, &tm_s, dt, p->scales, p->n, p->k / p->group_size, R, gps) ||
        (VEC > 1 && !w4a16_gemv_tma_scale_map(encode, &tm_z, dt, p->zeros, p->n, p->k / p->group_size, R, gps)))
      return (int)cudaErrorInvalidValue;
  }

  // act-order (given only at M = 1): the row gathered in the kernel (W4A16_GEMV_TMA_PERM) for fine-grained
  // groups >= 128 where the layout with the row keeps two CTAs an SM; elsewhere nothing is launched and
  // the runtime gathers A into the workspace first (kernel_abi.h)
  if (p->a_perm) {
    if constexpr (TILE_M <= 8 && MODE != W4A16_PER_COLUMN_SCALE_ONLY) {
      constexpr int PV = W4A16_GEMV_TMA_M1 | W4A16_GEMV_TMA_GBIG | W4A16_GEMV_TMA_PERM;
      const uint32_t total = w4a16_gemv_tma_perm_layout_of(
                                 w4a16_gemv_tma_layout_of(R, TPW, TILE_M, STAGES, 0, (int)a.gshift, VEC), STAGES, p->k)
                                 .total;
      if (p->m == 1 && a.gshift >= 7 && a.gshift < 30 && !w4a16_debug()->gemv_tma_generic &&
          total <= W4A16_GEMV_TMA_HALF_SM)
        return w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, PV>(p, a, tm_a, tm_s, tm_z, stream);
    }
    return W4A16_LAUNCH_UNFUSED;
  }

  // the consumer's specialization (VAR above), chosen by M and the group size of this call
  // (M1 is specialized for one n8 token block: tile_m 16 runs M = 1 through the general form.
  // tile_m 16 has only the specialized consumer: its kernels take fine-grained groups >= 128 and
  // per-column (min_group, generator/families/gemv.py), and W4A16_GEMV_TMA_GENERIC does not apply.)
  constexpr int M1 = TILE_M <= 8 ? W4A16_GEMV_TMA_M1 : 0, GB = W4A16_GEMV_TMA_GBIG;
  constexpr int G64 = W4A16_GEMV_TMA_G64, G32 = W4A16_GEMV_TMA_G32;
  if constexpr (MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS) {  // per-column zero points: group = K
    // one group a column (gshift 30): tile_m 16 takes the per-column consumer (W4A16_GEMV_TMA_PCOL),
    // tile_m 4 and 8 the zero-point consumer of groups >= 128 below. H100, bf16, six Llama layers,
    // time over per-column scale-only, geometric mean (max): tile_m 16 at M = 16, 1.10 (1.13) per
    // column against 1.20 (1.24); M <= 8, 1.08 (1.16) against 1.05 (1.12), where the two packed
    // subtractions per register cost more than the zero-point consumer's sum mma; fp16 alike (M = 12,
    // 16: 1.09 (1.16) against 1.17 (1.29); M <= 8: 1.07 against 1.05).
    // W4A16_GEMV_TMA_PCZ (debug.h) overrides the choice.
    constexpr int PCOL = W4A16_GEMV_TMA_PCOL;
    const int how = w4a16_debug()->gemv_pcz;  // 0 the rule, 1 per-column, 2 group, 3 per-column without integers
    if (a.gshift == 30 && !w4a16_debug()->gemv_tma_generic && (how == 1 || how == 3 || (how == 0 && TILE_M > 8)))
      return p->m == 1 && M1 != 0
                 ? w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, M1 | PCOL>(p, a, tm_a, tm_s, tm_z, stream)
                 : w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, PCOL>(p, a, tm_a, tm_s, tm_z, stream);
  }
  if constexpr (TILE_M > 8) {
    return w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, GB>(p, a, tm_a, tm_s, tm_z, stream);
  } else {
  if (!w4a16_debug()->gemv_tma_generic) {
    if constexpr (MODE != W4A16_PER_COLUMN_SCALE_ONLY) {  // scale-only and zero points, by the group
      const bool m1 = p->m == 1 && M1 != 0;
      if (a.gshift >= 7)
        return m1 ? w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, M1 | GB>(p, a, tm_a, tm_s, tm_z, stream)
                  : w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, GB>(p, a, tm_a, tm_s, tm_z, stream);
      if (a.gshift == 6)
        return m1 ? w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, M1 | G64>(p, a, tm_a, tm_s, tm_z, stream)
                  : w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, G64>(p, a, tm_a, tm_s, tm_z, stream);
      if (a.gshift == 5)
        return m1 ? w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, M1 | G32>(p, a, tm_a, tm_s, tm_z, stream)
                  : w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, G32>(p, a, tm_a, tm_s, tm_z, stream);
    } else {  // per-column
      if (p->m == 1 && M1) return w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, M1>(p, a, tm_a, tm_s, tm_z, stream);
      return w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, GB>(p, a, tm_a, tm_s, tm_z, stream);
    }
  }
  return w4a16_gemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, 0>(p, a, tm_a, tm_s, tm_z, stream);
  }
}

template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW>
static inline int w4a16_gemv_tma_probe(void) {
  cudaFuncAttributes attr;
  // (tile_m 16: the specialized consumer is the only one built)
  return (int)cudaFuncGetAttributes(&attr, w4a16_gemv_tma_kernel<T, MODE, R, TILE_M, STAGES, TPW,
                                                                  (TILE_M > 8 ? W4A16_GEMV_TMA_GBIG : 0)>);
}

#endif
