// grouped_sm80.cuh - the tensor-core form of the grouped (mixture-of-experts) GEMM: the sm80-class
// mma.sync + ldmatrix + cp.async multistage GEMM (sm80/gemm_sm80.cuh, whose loader, weight and
// scale copies and MMAs it calls unchanged) over (expert, token tile, column tile) work items.
//
// Grid: n_tiles x m_slots CTAs, m_slots = ceil(rows / TILE_M) + min(E, rows): an upper bound of
// the token tiles over all experts (sum of ceil(count_e / TILE_M) <= rows / TILE_M + the experts
// with rows) that the host knows without reading the offsets. CTA order as the dense kernel:
// groups of 8 token slots, slots fastest inside a group, so CTAs resident together share an
// expert's band of weight tiles in L2. Each CTA maps its slot to (expert, tile) from the device
// offsets (grouped_common.cuh) and returns at once where the slot is past the last tile.
// Activation rows are gathered through the row index by the cp.async copies themselves (a row
// index out of range, and rows past the expert's count, are zero-filled). Epilogue: alpha,
// the expert's per-column scale, the row's router scale, conversion, staged through shared
// memory and written with 16-byte stores to the expert's grouped rows. No split-K: a grouped
// launch has as many tiles as the routed tokens give. Programmatic dependent launch as
// grouped_common.cuh says.
#ifndef W4A16_GROUPED_GROUPED_SM80_CUH
#define W4A16_GROUPED_GROUPED_SM80_CUH

#include "grouped/grouped_common.cuh"
#include "sm80/gemm_sm80.cuh"

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
__global__ void __launch_bounds__(THREADS, (w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>::kMinBlocks))
    w4a16_gsm80_kernel(const w4a16_grouped_launch_params p) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  using Ld = w4a16_sm80_loader<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  extern __shared__ __align__(128) uint8_t w4a16_gsm80_smem[];
  const uint32_t smem = w4a16_sm80_smem_addr(w4a16_gsm80_smem);

  constexpr int kRaster = 8;
  const int n_tiles = (p.n + TILE_N - 1) / TILE_N;
  const int m_slots = gridDim.x / n_tiles;
  const int bid = blockIdx.x;
  const int group = bid / (kRaster * n_tiles);
  const int first_m = group * kRaster;
  const int gm = min(m_slots - first_m, kRaster);
  const int in_group = bid - group * (kRaster * n_tiles);
  const int slot = first_m + in_group % gm;
  const int n0 = (in_group / gm) * TILE_N;

  w4a16_griddep_wait();  // the offsets, the row index and A may come from the kernel before
  const w4a16_grouped_work work = w4a16_grouped_find(p, slot, TILE_M, bid == 0);
  if (work.expert < 0) {
    w4a16_griddep_launch_dependents();
    return;
  }
  const int m0 = work.tile * TILE_M;  // within the expert's rows
  const size_t e = (size_t)work.expert;
  const int groups = p.k / p.group_size;

  // the expert as a dense problem: its weights, scales (zeros) and row count
  w4a16_launch_params lp = {};
  lp.a = p.a;
  lp.w = static_cast<const uint8_t *>(p.w) + e * ((size_t)p.n * p.k / 2);
  lp.scales = static_cast<const T *>(p.scales) + e * ((size_t)groups * p.n);
  lp.zeros = p.zeros ? static_cast<const T *>(p.zeros) + e * ((size_t)groups * p.n) : nullptr;
  lp.lda = p.lda;
  lp.m = work.count;
  lp.n = p.n;
  lp.k = p.k;
  lp.group_size = p.group_size;
  Ld L;
  w4a16_sm80_loader_init(L, lp, n0, m0);

  // gathered activation rows: this thread's chunk column and, per copy, its token row's source
  const int tid = threadIdx.x;
  const int arow = tid / Ld::kACpr, acol = tid % Ld::kACpr;
  const T *a_base = static_cast<const T *>(p.a);
  const T *a_src[C::kAIters];
  uint32_t a_ok = 0;
#pragma unroll
  for (int it = 0; it < C::kAIters; ++it) {
    const int r = arow + it * (THREADS / Ld::kACpr);
    const bool in = (C::kAChunks % THREADS == 0 || tid + it * THREADS < C::kAChunks) && m0 + r < work.count;
    const int tok = in ? w4a16_grouped_token(p, work.row0 + m0 + r) : -1;
    a_src[it] = a_base + (tok >= 0 ? (int64_t)tok * p.lda : 0) + acol * 8;
    if (tok >= 0) a_ok |= 1u << it;
  }
  auto load_acts = [&](int slot_, int kt) {
    const int k0 = kt * TILE_K;
    const uint32_t dst = smem + STAGES * C::kWStage + slot_ * C::kAStage;
    const bool kin = k0 + acol * 8 < p.k;
#pragma unroll
    for (int it = 0; it < C::kAIters; ++it) {
      if (C::kAChunks % THREADS == 0 || tid + it * THREADS < C::kAChunks) {
        const bool valid = kin && ((a_ok >> it) & 1u);
        w4a16_sm80_cp16_zfill(dst + L.a_dst[it], valid ? a_src[it] + k0 : a_base, valid);
      }
    }
  };
  auto load_stage = [&](int slot_, int kt) {
    w4a16_sm80_load_weights(L, smem, slot_, kt);
    load_acts(slot_, kt);
    w4a16_sm80_load_scales(L, smem, slot_, kt);
  };

  float acc[C::kNT][C::kMT][4];
#pragma unroll
  for (int i = 0; i < C::kNT; ++i)
#pragma unroll
    for (int t = 0; t < C::kMT; ++t)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][t][q] = 0.f;

  const int kt_n = (p.k + TILE_K - 1) / TILE_K;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_n) load_stage(s, s);
    w4a16_sm80_cp_commit();
  }
  int rd = 0, wr = STAGES - 1;
  for (int it = 0; it < kt_n; ++it) {
    w4a16_sm80_cp_wait<STAGES - 2>();
    __syncthreads();
    if (it + STAGES - 1 < kt_n) load_stage(wr, it + STAGES - 1);
    w4a16_sm80_cp_commit();
    w4a16_sm80_compute_stage<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>(L.group_shift, smem, rd, acc);
    rd = rd + 1 == STAGES ? 0 : rd + 1;
    wr = wr + 1 == STAGES ? 0 : wr + 1;
  }
  w4a16_sm80_cp_wait<0>();
  w4a16_griddep_launch_dependents();  // every load of this CTA is done

  // ---- epilogue: alpha (x s[n] per-column) x row_scale[r], staged, 16-byte stores ----
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_n = warp % C::kWarpsN;
  const int warp_m = warp / C::kWarpsN;
  const int g = lane >> 2, t4 = lane & 3;
  const T *scales = static_cast<const T *>(lp.scales);
  __syncthreads();
  T *sc = reinterpret_cast<T *>(w4a16_gsm80_smem);
  float rsv[C::kMT][2];
#pragma unroll
  for (int t = 0; t < C::kMT; ++t)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + warp_m * C::kWM + t * 8 + 2 * t4 + h;
      rsv[t][h] = (p.row_scale && m < work.count) ? p.row_scale[work.row0 + m] : 1.f;
    }
#pragma unroll
  for (int i = 0; i < C::kNT; ++i) {
    const int nl = warp_n * C::kWN + i * 16 + g;
    const int n = n0 + nl;
    const bool n_in = n0 + warp_n * C::kWN + i * 16 < p.n;
    float mul_lo = p.alpha, mul_hi = p.alpha;
    if (C::kScaleArrays == 0 && n_in) {
      mul_lo *= w4a16_to_float(scales[n]);
      mul_hi *= w4a16_to_float(scales[n + 8]);
    }
#pragma unroll
    for (int t = 0; t < C::kMT; ++t) {
      const int ml = warp_m * C::kWM + t * 8 + 2 * t4;
      sc[ml * C::kLdc + nl] = w4a16_from_float<T>(acc[i][t][0] * mul_lo * rsv[t][0]);
      sc[(ml + 1) * C::kLdc + nl] = w4a16_from_float<T>(acc[i][t][1] * mul_lo * rsv[t][1]);
      sc[ml * C::kLdc + nl + 8] = w4a16_from_float<T>(acc[i][t][2] * mul_hi * rsv[t][0]);
      sc[(ml + 1) * C::kLdc + nl + 8] = w4a16_from_float<T>(acc[i][t][3] * mul_hi * rsv[t][1]);
    }
  }
  __syncthreads();
  T *d = static_cast<T *>(p.d);
  const int rows = min(TILE_M, work.count - m0);
  constexpr int kCpr = TILE_N / 8;
  for (int c = tid; c < rows * kCpr; c += THREADS) {
    const int r = c / kCpr;
    const int cc = c % kCpr;
    if (n0 + cc * 8 >= p.n) continue;
    *reinterpret_cast<uint4 *>(d + (int64_t)(work.row0 + m0 + r) * p.ldd + n0 + cc * 8) =
        *reinterpret_cast<const uint4 *>(sc + r * C::kLdc + cc * 8);
  }
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static inline int w4a16_gsm80_launch(const struct w4a16_grouped_launch_params *p, cudaStream_t stream) {
  using C = w4a16_sm80_cfg<MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  void (*kernel)(const w4a16_grouped_launch_params) = w4a16_gsm80_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>;
  static std::atomic<unsigned long long> attrs_ctx{0};
  static std::atomic<int> pdl_cache[64];
  const long long used = p->experts < p->rows ? p->experts : p->rows;
  const long long m_slots = (p->rows + TILE_M - 1) / TILE_M + used;
  const long long n_tiles = (p->n + TILE_N - 1) / TILE_N;
  return w4a16_grouped_launch_kernel(kernel, attrs_ctx, pdl_cache, dim3((unsigned)(m_slots * n_tiles)), THREADS,
                                     C::kSmem, -1, *p, stream);
}

template <typename T, int MODE, int TILE_N, int TILE_M, int TILE_K, int STAGES, int THREADS>
static inline int w4a16_gsm80_probe(void) {
  cudaFuncAttributes attr;
  return (int)cudaFuncGetAttributes(&attr, w4a16_gsm80_kernel<T, MODE, TILE_N, TILE_M, TILE_K, STAGES, THREADS>);
}

#endif
