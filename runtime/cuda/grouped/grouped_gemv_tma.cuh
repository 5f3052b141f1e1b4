// grouped_gemv_tma.cuh - the decode form of the grouped (mixture-of-experts) GEMM on sm_90: the
// dense TMA GEMV's weight stream (gemv/gemv_tma.cuh) walked over the experts that have rows.
//
// Why: the cp.async decode form (grouped_gemv.cuh) streams large experts at about two thirds of the
// rate the dense TMA GEMV reaches on the same card (docs/PERFORMANCE.md, mixture of experts): its
// grid of one CTA per (column block, expert slot) runs in several uneven waves and every thread
// issues its own 16-byte copies. This form keeps the dense kernel's schedule: one wave of persistent
// CTAs (two an SM where the layout fits half an SM), a producer warp whose lane 0 issues the bulk
// copies of packed weights (and the tensor-map box of the stage's scales and zeros), and the eight
// consumer warps of w4a16_gemv_tma_stage_fast.
//
// Work: unit = (expert e, column block of R 16-row blocks, chunk of TILE_M of the expert's rows).
// Each CTA builds the unit table of its launch in shared memory (w4a16_grouped_table, E <= 256:
// expert e owns ceil(count_e / TILE_M) x ceil(N / 16 R) units), and walks units blockIdx.x + j
// gridDim.x; an expert's units go chunk fastest, so the CTAs resident together that read one column
// block's weights for several chunks read them from memory once. An expert without rows owns none.
//
// Per stage (TT = 8 TPW / R 64-wide k tiles of each row block, TK = 64 TT of K): the R row blocks'
// packed tiles by one bulk copy each (expert e's weights start e N K / 2 bytes in), the scales (and
// zeros) as one box [groups of the stage][16 R] of a tensor map over all experts' [E G][N] (row
// e G + g), and the chunk's activation rows, gathered through the row index by the producer warp's
// 32 lanes with 16-byte cp.async copies into the layout of the dense kernel's activation box
// (line x TILE_M + r of 128 bytes for k tile x, token row r, its 16-byte chunk c at c ^ (line % 8)).
// The lanes copy one row at a time, lane l its chunks l, l + 32, ... of the row's 8 TT, so a stage
// costs each lane TT / 4 copies a row the chunk has (rows past the chunk's count are not copied: the
// consumers read its last row instead); lane l < rc holds the token of row l, read from the row
// index one unit ahead. The producer warp shares its SM's issue slots with the consumers, whose
// instruction rate bounds these kernels as much as memory does. The full barrier of a stage counts
// 1 + 32 arrivals: lane 0's expect_tx, then each lane's cp.async.mbarrier.arrive.noinc when its
// copies are done.
//
// Tails: N % 16 == 0 and K % 64 == 0 are enough. A last column block partly past N copies only its
// row blocks below N (the stores skip the others); a last stage partly past K copies only its tiles
// below K, and the activations of k >= K are zero-filled, so whatever the smem of the tiles not
// copied holds (finite 4-bit codes), their products are zero. The scales of those tiles come from
// the next expert's rows or the map's zero fill: finite.
//
// Consumer (w4a16_gemv_tma_stage_fast, the swizzled general form; VAR: GBIG for per-column scales
// and groups >= 128 or one group a column, G64 and G32 for the smaller groups; the row count of an
// expert is not known to the host, so never M1) and the deterministic reduction over the 8 / R warps
// of a row block are the dense kernel's. TILE_M 16: a unit of at most 8 rows passes nb_live = 1, so
// the second n8 token block's ldmatrix and mma are not issued (an expert's 9-16 rows take one pass
// over its weights, its fewer rows cost about what TILE_M 8 costs). The leading warp of each row
// block writes alpha x row_scale[r] x (per-column: s[e][n]) x its sum for the chunk's rows.
//
// Programmatic dependent launch: every thread waits (griddepcontrol.wait) before reading anything
// (the offsets, row index and A come from the kernels before) and lets the dependent launch after
// its last unit's main loop.
#ifndef W4A16_GROUPED_GROUPED_GEMV_TMA_CUH
#define W4A16_GROUPED_GROUPED_GEMV_TMA_CUH

#include <string.h>

#include <atomic>
#include <type_traits>

#include "common/cp_async.cuh"
#include "gemv/gemv_tma.cuh"
#include "gemv/gemv_tma_launch.cuh"
#include "grouped/grouped_common.cuh"
#include "sm90/sm90_ptx.cuh"

// the experts of the unit table (runtime/grouped.c refuses more for this form)
#define W4A16_GGEMV_TMA_MAX_EXPERTS 256
// the table: before[E + 1], row0[E], count[E], two ints of scratch (w4a16_grouped_table)
#define W4A16_GGEMV_TMA_TABLE_BYTES ((3 * W4A16_GGEMV_TMA_MAX_EXPERTS + 4) * 4)

// Dynamic shared memory of a launch: the dense layout at M = TILE_M (w4a16_gemv_tma_layout_of, its
// barriers and alignment slack included) and the unit table after the barriers.
static constexpr __host__ __device__ __forceinline__ uint32_t w4a16_ggemv_tma_smem(int R, int tpw, int tile_m, int stages,
                                                                        int group_shift, int vectors) {
  return w4a16_gemv_tma_layout_of(R, tpw, tile_m, stages, tile_m, group_shift, vectors).total +
         W4A16_GGEMV_TMA_TABLE_BYTES;
}

// One unit of the walk: expert e, first row block rb0, the chunk's first grouped row r0 and rows rc.
struct w4a16_ggemv_tma_unit {
  int e, rb0, r0, rc;
};

template <int R, int TILE_M>
static __device__ __forceinline__ w4a16_ggemv_tma_unit w4a16_ggemv_tma_unit_of(const int *before, int experts,
                                                                               int it) {
  const int *row0 = before + W4A16_GGEMV_TMA_MAX_EXPERTS + 1;
  const int *count = row0 + W4A16_GGEMV_TMA_MAX_EXPERTS;
  const int e = w4a16_grouped_expert_of(before, experts, it);
  const int t = it - before[e], cnt = count[e];
  const int chunks = (cnt + TILE_M - 1) / TILE_M;
  const int col = t / chunks, chunk = t - col * chunks;
  w4a16_ggemv_tma_unit u;
  u.e = e;
  u.rb0 = col * R;
  u.r0 = row0[e] + chunk * TILE_M;
  u.rc = min(TILE_M, cnt - chunk * TILE_M);
  return u;
}

template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW, int VAR>
__global__ void __launch_bounds__(W4A16_GEMV_THREADS + 32, 2)
    w4a16_ggemv_tma_kernel(const w4a16_grouped_launch_params p, const int gshift,
                           const __grid_constant__ CUtensorMap tm_s, const __grid_constant__ CUtensorMap tm_z) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
  constexpr bool PC = MODE == W4A16_PER_COLUMN_SCALE_ONLY;
  constexpr bool ZP = MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  static_assert(VAR == W4A16_GEMV_TMA_GBIG || (!PC && (VAR == W4A16_GEMV_TMA_G64 || VAR == W4A16_GEMV_TMA_G32)),
                "the swizzled specialized consumer: GBIG, or G64 / G32 for the fine-grained modes");
  static_assert(TILE_M == 4 || TILE_M == 8 || TILE_M == 16, "TILE_M: 4, 8 or 16 rows a chunk");
  static_assert(TILE_M <= 8 || VAR == W4A16_GEMV_TMA_GBIG, "tile_m 16: groups >= 128 and per-column");
  constexpr int VEC = w4a16_gemv_tma_vectors(MODE, VAR);
  constexpr int TT = 8 * TPW / R;  // 64-wide k tiles of each row block per stage
  constexpr int TK = 64 * TT;     // K per stage
  constexpr int NB = (TILE_M + 7) / 8;  // n8 token blocks
  constexpr int WPR = 8 / R;      // warps per row block
  constexpr int CH = TT * 8;          // 16-byte chunks of one activation row in a stage
  constexpr int CPL = (CH + 31) / 32;  // of them a producer lane copies per row
  constexpr bool BF16 = std::is_same<T, __nv_bfloat16>::value;

  extern __shared__ __align__(1024) unsigned char w4a16_ggemv_tma_smem_raw[];
  const uint32_t base0 = (uint32_t)__cvta_generic_to_shared(w4a16_ggemv_tma_smem_raw);
  const uint32_t base = (base0 + 1023u) & ~1023u;  // the 128-byte swizzle repeats every 1024 bytes
  const struct w4a16_gemv_tma_layout L = w4a16_gemv_tma_layout_of(R, TPW, TILE_M, STAGES, TILE_M, gshift, VEC);
  int *before = reinterpret_cast<int *>(w4a16_ggemv_tma_smem_raw + (base - base0) + L.bars + 16u * STAGES);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int ktiles = p.k >> 6;                    // 64-wide tiles per row block
  const int n_st = (ktiles + TT - 1) / TT;        // stages per unit (the last may be part-full)
  const int nrb = p.n >> 4;                       // 16-row blocks of an expert
  const int n_tiles = (nrb + R - 1) / R;          // column blocks (the last may be part-full)
  const uint32_t bars = base + L.bars;
  const bool producer = warp == W4A16_GEMV_WARPS;  // the 9th warp

  if (producer && lane == 0) {
    for (int s = 0; s < STAGES; ++s) {
      w4a16_sm90::mbar_init(bars + 8u * s, 1 + 32);  // expect_tx + the 32 lanes' copies
      w4a16_sm90::mbar_init(bars + 8u * (STAGES + s), W4A16_GEMV_THREADS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  w4a16_griddep_wait();  // the offsets, the row index and A may come from the kernel before
  // (synchronizes the CTA: the barriers are initialized after it)
  w4a16_grouped_table(p, TILE_M, n_tiles, before, before + W4A16_GGEMV_TMA_MAX_EXPERTS + 1,
                      before + 2 * W4A16_GGEMV_TMA_MAX_EXPERTS + 1, before + 3 * W4A16_GGEMV_TMA_MAX_EXPERTS + 1,
                      blockIdx.x == 0);
  const int units = before[p.experts];
  const int my_units = units > (int)blockIdx.x ? (units - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x : 0;
  if (my_units == 0) {
    w4a16_griddep_launch_dependents();
    return;
  }

  if (producer) {
    uint64_t pol_stream = 0;
    if (lane == 0) {
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol_stream));
      if constexpr (VEC > 0) w4a16_sm90::tma_prefetch_desc(&tm_s);
      if constexpr (ZP) w4a16_sm90::tma_prefetch_desc(&tm_z);
    }
    const T *a = static_cast<const T *>(p.a);
    const size_t e_bytes = (size_t)p.n * (size_t)p.k / 2;  // packed bytes of one expert
    const int groups = gshift == 30 ? 1 : p.k >> gshift;
    // lane l < rc holds the token row of the unit's row l (-1: an index out of range, zero-filled);
    // the next unit's are read when a unit starts, so no row-index load waits before a stage
    const int first = (int)blockIdx.x;
    w4a16_ggemv_tma_unit u = {0, 0, 0, 0}, u_next = w4a16_ggemv_tma_unit_of<R, TILE_M>(before, p.experts, first);
    int tok = -1, tok_next = lane < u_next.rc ? w4a16_grouped_token(p, u_next.r0 + lane) : -1;
    const int total = my_units * n_st;
    for (int c = 0; c < total; ++c) {
      const int j = c / n_st, i = c - j * n_st;
      if (i == 0) {
        u = u_next;
        tok = tok_next;
        if (j + 1 < my_units) {
          u_next = w4a16_ggemv_tma_unit_of<R, TILE_M>(before, p.experts, first + (j + 1) * (int)gridDim.x);
          tok_next = lane < u_next.rc ? w4a16_grouped_token(p, u_next.r0 + lane) : -1;
        }
      }
      const uint32_t slot = (uint32_t)(c % STAGES);
      const uint32_t st = base + slot * L.stage, full = bars + 8u * slot;
      // slot c % STAGES is free once the 256 consumer threads have arrived for stage c - STAGES
      if (c >= STAGES) w4a16_sm90::mbar_wait(bars + 8u * (STAGES + slot), (uint32_t)(c / STAGES - 1) & 1u);
      if (lane == 0) {
        const int tiles = min(TT, ktiles - i * TT), rbs = min(R, nrb - u.rb0);
        w4a16_sm90::mbar_arrive_expect_tx(full, (uint32_t)(rbs * tiles * 512) + L.s_bytes * VEC);
        const unsigned char *wsrc =
            static_cast<const unsigned char *>(p.w) + (size_t)u.e * e_bytes + (size_t)u.rb0 * ktiles * 512;
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (r < rbs)
            w4a16_sm90::bulk_load_hint(st + r * TT * 512, wsrc + ((size_t)r * ktiles + (size_t)i * TT) * 512,
                                       (uint32_t)tiles * 512u, full, pol_stream);
        if constexpr (VEC > 0) {  // [groups of the stage][16 R rows] of expert e's rows e G + g
          const int g0 = u.e * groups + ((i * TK) >> gshift);
          w4a16_sm90::tma_load_2d(st + L.s_off, &tm_s, full, u.rb0 * 16, g0);
          if constexpr (ZP) w4a16_sm90::tma_load_2d(st + L.s_off + L.z_step, &tm_z, full, u.rb0 * 16, g0);
        }
      }
      // the stage's TK columns of each row of the chunk: CH 16-byte chunks a row, chunk jc (tile jc / 8,
      // its chunk jc % 8) by lane jc % 32, into line x TILE_M + r of the swizzled layout
      const int k0 = i * TK;
      for (int r = 0; r < u.rc; ++r) {
        const int tr = __shfl_sync(0xffffffffu, tok, r);
        const T *row = a + (int64_t)(tr >= 0 ? tr : 0) * p.lda + k0;
#pragma unroll
        for (int y = 0; y < CPL; ++y) {
          const int jc = lane + 32 * y;
          if (CH % 32 == 0 || jc < CH) {
            const uint32_t line = (uint32_t)((jc >> 3) * TILE_M + r);
            const bool ok = tr >= 0 && k0 + 8 * jc < p.k;
            w4a16_cp_async16_zfill(st + L.a_off + line * 128u + ((((uint32_t)jc & 7u) ^ (line & 7u)) << 4),
                                   ok ? row + 8 * jc : a, ok);
          }
        }
      }
      w4a16_cp_async_arrive_noinc(full);
    }
    w4a16_cp_async_wait_all();  // (no copy outlives its thread)
    w4a16_griddep_launch_dependents();
    return;
  }

  // this warp's tiles: row block rw, k tiles t0 .. t0 + TPW - 1 of each stage
  const int rw = (TPW * warp) / TT, t0 = (TPW * warp) % TT;
  const uint32_t w_off = (uint32_t)(rw * TT + t0) * 512 + lane * 16;
  const uint32_t s_off = L.s_off + rw * 32 + g * 2;
  const uint32_t a_step = (uint32_t)TILE_M * 128u, a_swz = 0x380u;
  uint32_t s_pair[2] = {0u, 0u};
  if constexpr (!PC) {  // the group row of tiles (t0, t0 + 1) and (t0 + 2, t0 + 3) in a stage
#pragma unroll
    for (int q = 0; q < 2; ++q) s_pair[q] = s_off + (uint32_t)(((t0 + 2 * q) * 64) >> gshift) * (uint32_t)(R * 32);
  }
  const uint32_t zc[2] = {0u, 0u};
  float4 *red = reinterpret_cast<float4 *>(w4a16_ggemv_tma_smem_raw + (base - base0) + L.red);
  T *d = static_cast<T *>(p.d);
  uint32_t slot = 0, phase = 0;  // slot and parity of stage sequence number c: c % STAGES, (c / STAGES) & 1
  for (int j = 0; j < my_units; ++j) {
    // ldmatrix: the lane's token row of block nb (rows past the chunk read its last row: computed,
    // never stored), tile t0's line of it; tile u's: + u TILE_M lines. (The unit is looked up again
    // for the epilogue rather than held through the main loop, whose registers are at the cap.)
    uint32_t a_base[NB];
    int nb_live;  // the n8 token blocks with rows (the others' products are neither computed nor stored)
    {
      const int rc =
          w4a16_ggemv_tma_unit_of<R, TILE_M>(before, p.experts, (int)blockIdx.x + j * (int)gridDim.x).rc;
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const int row = min(nb * 8 + (lane & 7), rc - 1);
        a_base[nb] = L.a_off + (uint32_t)(t0 * TILE_M + row) * 128u;
      }
      nb_live = (rc + 7) / 8;
    }
    float acc[NB][4];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int x = 0; x < 4; ++x) acc[nb][x] = 0.f;
    for (int i = 0; i < n_st; ++i) {
      const uint32_t st = base + slot * L.stage;
      const uint32_t full = bars + 8u * slot;
      w4a16_sm90::mbar_wait(full, phase);
      w4a16_gemv_tma_stage_fast<BF16, MODE, R, NB, TPW, VAR>(acc, st, w_off, a_base, s_pair, a_step, a_swz, L.z_step,
                                                             zc, nb_live);
      // this thread is done with the slot
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(full + 8u * STAGES) : "memory");
      if (++slot == STAGES) {
        slot = 0;
        phase ^= 1u;
      }
    }
    if (j + 1 == my_units) w4a16_griddep_launch_dependents();
    // the row block's sum in its leading warp (deterministic)
    if (!w4a16_gemv_tma_reduce<NB, WPR>(acc, red, warp, lane)) continue;
    const w4a16_ggemv_tma_unit u =
        w4a16_ggemv_tma_unit_of<R, TILE_M>(before, p.experts, (int)blockIdx.x + j * (int)gridDim.x);
    if (u.rb0 + rw >= nrb) continue;  // a row block past N (the last column block's)
    const int n_lo = 16 * (u.rb0 + rw) + g, n_hi = n_lo + 8;
    float s_lo = p.alpha, s_hi = p.alpha;
    if constexpr (PC) {
      const T *sc = static_cast<const T *>(p.scales) + (size_t)u.e * (size_t)p.n;
      s_lo *= w4a16_to_float(sc[n_lo]);
      s_hi *= w4a16_to_float(sc[n_hi]);
    }
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const int m = nb * 8 + 2 * t + (x & 1);
        if (m < u.rc) {
          const int r = u.r0 + m;
          const float v = acc[nb][x] * ((x & 2) ? s_hi : s_lo) * (p.row_scale ? p.row_scale[r] : 1.f);
          d[(int64_t)r * p.ldd + ((x & 2) ? n_hi : n_lo)] = w4a16_from_float<T>(v);
        }
      }
  }
#endif
}

// Launches the kernel of consumer variant VAR with the call's scale (zero) maps.
template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW, int VAR>
static inline int w4a16_ggemv_tma_launch_variant(const struct w4a16_grouped_launch_params *p, int gshift,
                                                 const CUtensorMap &tm_s, const CUtensorMap &tm_z,
                                                 cudaStream_t stream) {
  constexpr int VEC = w4a16_gemv_tma_vectors(MODE, VAR);
  void (*kernel)(const w4a16_grouped_launch_params, const int, const CUtensorMap, const CUtensorMap) =
      w4a16_ggemv_tma_kernel<T, MODE, R, TILE_M, STAGES, TPW, VAR>;
  // the limit of the largest layout (the smallest group the kernel takes: 32, tile_m 16 128), set
  // once per context (w4a16_grouped_launch_kernel); each launch asks for its own group's size, two
  // CTAs an SM where that fits half of the SM's shared memory, else one
  const uint32_t largest = w4a16_ggemv_tma_smem(R, TPW, TILE_M, STAGES, TILE_M == 16 ? 7 : 5, VEC);
  const uint32_t smem = w4a16_ggemv_tma_smem(R, TPW, TILE_M, STAGES, gshift, VEC);
  static std::atomic<unsigned long long> attrs_ctx{0};
  static std::atomic<int> pdl_cache[64];
  const cudaError_t attr_err = w4a16_func_attr::set_once(kernel, attrs_ctx, (int)largest, cudaSharedmemCarveoutMaxShared);
  if (attr_err != cudaSuccess) return (int)attr_err;
  const int per_sm = smem <= W4A16_GEMV_TMA_HALF_SM ? 2 : 1;
  const int sms = p->sm_count > 0 ? p->sm_count : 132;
  return w4a16_grouped_launch_kernel(kernel, attrs_ctx, pdl_cache, dim3((unsigned)(per_sm * sms), 1, 1),
                                     W4A16_GEMV_THREADS + 32, (int)smem, cudaSharedmemCarveoutMaxShared, *p, stream,
                                     gshift, tm_s, tm_z);
}

// Host side (called from the generated instantiation files). The runtime has checked N % 16 == 0,
// K % 64 == 0, E <= 256, the group (fine-grained powers of two >= 32, >= 128 for tile_m 16, or K).
template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW>
static inline int w4a16_ggemv_tma_launch(const struct w4a16_grouped_launch_params *p, cudaStream_t stream) {
  constexpr int TT = 8 * TPW / R;
  const int gshift = w4a16_group_shift(p->group_size, p->k);
  const CUtensorMapDataType dt =
      std::is_same<T, __nv_bfloat16>::value ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  w4a16_sm90::EncodeTiledFn encode = w4a16_sm90::encode_tiled_fn();
  if (!encode) return (int)cudaErrorNotSupported;
  CUtensorMap tm_s, tm_z;
  memset(&tm_s, 0, sizeof tm_s);
  memset(&tm_z, 0, sizeof tm_z);
  if (MODE != W4A16_PER_COLUMN_SCALE_ONLY) {  // scales (zeros) [E G][N]: a stage's box [groups of the stage][16 R]
    const long long rows = (long long)p->experts * (gshift == 30 ? 1 : p->k >> gshift);
    const int gps = gshift == 30 || (64 * TT) >> gshift == 0 ? 1 : (64 * TT) >> gshift;
    if (!w4a16_gemv_tma_scale_map(encode, &tm_s, dt, p->scales, p->n, rows, R, gps) ||
        (MODE == W4A16_FINEGRAINED_SCALE_AND_ZEROS &&
         !w4a16_gemv_tma_scale_map(encode, &tm_z, dt, p->zeros, p->n, rows, R, gps)))
      return (int)cudaErrorInvalidValue;
  }
  constexpr int GB = W4A16_GEMV_TMA_GBIG;
  if constexpr (MODE != W4A16_PER_COLUMN_SCALE_ONLY && TILE_M <= 8) {
    if (gshift == 6)
      return w4a16_ggemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, W4A16_GEMV_TMA_G64>(p, gshift, tm_s, tm_z,
                                                                                                 stream);
    if (gshift == 5)
      return w4a16_ggemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, W4A16_GEMV_TMA_G32>(p, gshift, tm_s, tm_z,
                                                                                                 stream);
  }
  return w4a16_ggemv_tma_launch_variant<T, MODE, R, TILE_M, STAGES, TPW, GB>(p, gshift, tm_s, tm_z, stream);
}

template <typename T, int MODE, int R, int TILE_M, int STAGES, int TPW>
static inline int w4a16_ggemv_tma_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_ggemv_tma_kernel<T, MODE, R, TILE_M, STAGES, TPW, W4A16_GEMV_TMA_GBIG>);
}

#endif
