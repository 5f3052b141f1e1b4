// sm90_launch.cuh - the Hopper family's host side: the tensor maps, the kernel parameters and the
// launch (and the split-K reduction after it).
#ifndef W4A16_SM90_LAUNCH_CUH
#define W4A16_SM90_LAUNCH_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "common/func_attr.cuh"
#include "common/splitk.cuh"
#include "kernel_abi.h"
#include "sm90/sm90_kernel.cuh"

extern "C" thread_local int w4a16_sm90_last_streamk, w4a16_sm90_last_kpair, w4a16_sm90_last_split,
    w4a16_sm90_last_skew;

namespace w4a16_sm90 {

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
  return C::kPairHalves ? C::TN * C::TM * 4 / 32768 : 0;
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
          encode(t == 0 ? &tm_a : &tm_a_tail, DtypeOps<T>::kTmaType, 3, const_cast<void *>(p->a), dims, strides, box, estr,
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
    if (encode(t == 0 ? &tm_a : &tm_a_tail, DtypeOps<T>::kTmaType, 2, const_cast<void *>(p->a), dims, strides, box, estr,
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
    if (encode(t == 0 ? &tm_d : &tm_d_tail, DtypeOps<T>::kTmaType, 2, p->d, dims, strides, box, estr,
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
  prm.act_3d = a3d;
  prm.act_3d_tail = a3d_tail;  // M < TM: every unit is the tail tile's
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
    prm.kpair = 1 + (C::kPairHalves ? kpair_lead<C>() : 0);
    prm.split_k = 1;
    clusters = 2 * tiles;  // CTAs (kCluster is 1)
    attr[0].val.clusterDim.x = 2;
  } else if (p->stream_k && prm.split_k == 1 && streamk_enabled()) {
    const long long k_iters = k_blocks;
    long long g = clusters < tiles * k_iters ? clusters : tiles * k_iters;
    const long long dp = C::kStreamKDataParallel ? streamk_dp_tiles(tiles, g, k_iters, C::kStreamKRing) : 0;  // data-parallel tiles a cluster
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
  prm.scale_map = 0;
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
  if (C::kCoop && C::kScaleChunk > 1 && (prm.kpair ? schunk_mode() >= 1 : schunk_mode() >= 2) && g >= 128 && g <= C::TK &&
      (g & (g - 1)) == 0 &&
      C::kScaleChunk * (C::TK / g) <= C::kScaleRowsMax) {
    chunked = 1;
    box_rows = C::kScaleChunk * (C::TK / g);  // chunks begin at group boundaries (k-blocks hold whole groups)
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
      return encode(map, DtypeOps<T>::kTmaType, 2, const_cast<void *>(src), dims, strides, box, estr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
    };
    if (rows_map(&tm_s, p->scales) && (!C::kZeros || rows_map(&tm_z, p->zeros))) prm.scale_map = 1 | (chunked << 1) | (rows << 8);
    else if (tails) return (int)cudaErrorInvalidValue;
  }
  if (!prm.streamk && !prm.kpair && clusters > units) clusters = units;
  cfg.gridDim = dim3((unsigned)(clusters * C::kCluster), 1, 1);
  cfg.numAttrs = pdl_enabled() ? 2 : 1;
  if constexpr (C::kScaleChunk > 1) {
    if (prm.scale_map & 2) {
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

#endif
