// sm90_launch.cuh - the Hopper family's host side: the kernel's facts for the runtime's launch plan
// (runtime/plan.c), and the launch that follows the plan: the tensor maps, the kernel parameters, the
// kernel and, after split-K, the reduction. The launch makes no scheduling choice of its own; it only
// falls back where a tensor map does not encode (the 3-D activation map, the scale map without tails).
#ifndef W4A16_SM90_LAUNCH_CUH
#define W4A16_SM90_LAUNCH_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <atomic>

#include "common/func_attr.cuh"
#include "common/pdl.cuh"
#include "kernel_abi.h"
#include "sm90/sm90_kernel.cuh"

namespace w4a16_sm90 {

// The kernel's maximum dynamic shared memory, set once per CUDA context (common/func_attr.cuh) before
// its first launch or occupancy query.
template <typename T, class C, bool CHUNK>
static inline cudaError_t kernel_attrs() {
  static std::atomic<unsigned long long> ctx{0};
  return w4a16_func_attr::set_once(w4a16_sm90_kernel<T, C, CHUNK>, ctx, C::kSmemBytes, -1);
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

// The kernel's CTAs one SM holds at once (0 when the query fails).
template <class C, class K>
static inline int resident_ctas_per_sm(K kern) {
  int v = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kern, C::kThreads, C::kSmemBytes) != cudaSuccess) {
    cudaGetLastError();
    v = 0;
  }
  return v;
}

// The kernel's facts for the plan (runtime/plan.h). The residency is queried once per kernel and SM
// count: the SM count and the answers share one atomic word (thread-safe; concurrent first calls may
// each query, and store the same).
template <typename T, class C>
static inline int facts(int sm_count, struct w4a16_sm90_facts *f) {
  const int sms = sm_count > 0 ? sm_count : 132;
  static std::atomic<uint64_t> cache{0};  // (sms + 1) << 32 | clusters | pairs << 12 | CTAs a SM << 24
  const uint64_t key = (uint64_t)(uint32_t)(sms + 1) << 32;
  uint64_t v = cache.load(std::memory_order_relaxed);
  if ((v & ~(uint64_t)0xffffffffu) != key) {
    const cudaError_t e = kernel_attrs<T, C, false>();
    if (e != cudaSuccess) return (int)e;
    auto kern = w4a16_sm90_kernel<T, C, false>;
    long long clusters = (long long)sms * C::kCtasPerSm / C::kCluster;
    if (clusters < 1) clusters = 1;
    const int rc = C::kCluster > 1 ? max_active_clusters<C>(kern, C::kCluster, clusters * C::kCluster) : 0;
    const int rp = C::kPairOk ? max_active_clusters<C>(kern, 2, sms / 2 * 2) : 0;
    const int rs = resident_ctas_per_sm<C>(kern);
    v = key | (uint64_t)(rc < 4095 ? rc : 4095) | (uint64_t)(rp < 4095 ? rp : 4095) << 12 |
        (uint64_t)(rs < 255 ? rs : 255) << 24;
    cache.store(v, std::memory_order_relaxed);
  }
  f->ctas_per_sm = C::kCtasPerSm;
  f->pair_ok = C::kPairOk;
  f->pair_halves = C::kPairHalves;
  f->pair_lead = C::kPairLead;
  f->streamk_dp = C::kStreamKDataParallel;
  f->streamk_ring = C::kStreamKRing;
  f->scale_chunk = C::kScaleChunk;
  f->resident_clusters = (int)(v & 0xfffu);
  f->resident_pairs = (int)((v >> 12) & 0xfffu);
  f->resident_ctas_per_sm = (int)((v >> 24) & 0xffu);
  return 0;
}

// A flag value per launch for stream-K: never 0, and never four equal bytes (the patterns of a memset
// workspace). Thread-safe.
static inline uint32_t next_token() {
  static std::atomic<uint32_t> counter{0};
  for (;;) {
    uint32_t t = (counter.fetch_add(1u, std::memory_order_relaxed) + 1u) * 2654435761u;  // Knuth's multiplicative hash
    const uint32_t b = t & 0xffu;
    if (t != 0 && t != b * 0x01010101u) return t;
  }
}

// A 2-D or 3-D tensor map of the activation dtype (or of 32-bit words, packed weights) over [dims],
// true where the encoder takes it.
static inline bool encode_map(CUtensorMap *map, CUtensorMapDataType type, int rank, const void *base,
                              const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  const cuuint32_t estr[3] = {1, 1, 1};
  return encode_tiled_fn()(map, type, (cuuint32_t)rank, const_cast<void *>(base), dims, strides, box, estr,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The activation maps: tm_a for the full token tiles, tm_a_tail for a part-full last one (boxes of its
// rows). 3-D where the plan asks and the encoder takes it ([K/64 chunks][M rows][64 k]: the chunk
// stride, 128 bytes, lies below the row stride, which the encoder may refuse; the tail map only where
// M < TM, its chunks then tail * 128 bytes apart), else 2-D. Returns false where a 2-D map fails.
template <typename T, class C>
static inline bool activation_maps(const struct w4a16_launch_params *p, int act_3d, int tail, CUtensorMap *tm_a,
                                   CUtensorMap *tm_a_tail, int *a3d, int *a3d_tail) {
  *a3d = *a3d_tail = 0;
  if (act_3d) {
    for (int t = 0; t < (p->m < C::TM ? 2 : 1); ++t) {
      const cuuint64_t dims[3] = {64, (cuuint64_t)p->m, (cuuint64_t)(p->k / 64)};
      const cuuint64_t strides[2] = {(cuuint64_t)p->lda * 2, 128};
      const cuuint32_t box[3] = {64, (cuuint32_t)(t == 0 ? C::TM : tail), (cuuint32_t)C::KT};
      (t == 0 ? *a3d : *a3d_tail) = encode_map(t == 0 ? tm_a : tm_a_tail, DtypeOps<T>::kTmaType, 3, p->a, dims,
                                               strides, box, CU_TENSOR_MAP_SWIZZLE_128B,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    }
  }
  for (int t = 0; t < 2; ++t) {
    if (t == 0 ? *a3d : *a3d_tail) continue;
    const cuuint64_t dims[2] = {(cuuint64_t)p->k, (cuuint64_t)p->m};
    const cuuint64_t strides[1] = {(cuuint64_t)p->lda * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)(t == 0 ? C::TM / C::CN : tail)};
    if (!encode_map(t == 0 ? tm_a : tm_a_tail, DtypeOps<T>::kTmaType, 2, p->a, dims, strides, box,
                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B))
      return false;
  }
  return true;
}

// The packed weights as 32-bit words: [N/16 row blocks][K/64 * 128 words] (2-D), or for tile_k 256
// (a box row beyond 256 elements) [N/16][K/64][128 words] (3-D): the same bytes in shared memory.
template <class C>
static inline bool weight_map(const struct w4a16_launch_params *p, CUtensorMap *tm_w) {
  if (C::kW3d) {
    const cuuint64_t dims[3] = {128, (cuuint64_t)(p->k / 64), (cuuint64_t)(p->n / 16)};
    const cuuint64_t strides[2] = {512, (cuuint64_t)(p->k / 64 * 512)};
    const cuuint32_t box[3] = {128, (cuuint32_t)C::KT, (cuuint32_t)(C::TN / 16)};
    return encode_map(tm_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, p->w, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  }
  const cuuint64_t dims[2] = {(cuuint64_t)(p->k / 64 * 128), (cuuint64_t)(p->n / 16)};
  const cuuint64_t strides[1] = {(cuuint64_t)(p->k / 64 * 512)};
  const cuuint32_t box[2] = {(cuuint32_t)(C::KT * 128), (cuuint32_t)(C::TN / 16 / C::CM)};
  return encode_map(tm_w, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, p->w, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

// The output maps of the tensor-store epilogue (TM >= 64): boxes of 64 columns x TM rows, the tail's of
// its rows.
template <typename T, class C>
static inline bool output_maps(const struct w4a16_launch_params *p, int tail, CUtensorMap *tm_d,
                               CUtensorMap *tm_d_tail) {
  memset(tm_d, 0, sizeof(*tm_d));
  memset(tm_d_tail, 0, sizeof(*tm_d_tail));
  for (int t = 0; C::kTmaStore && t < 2; ++t) {
    const cuuint64_t dims[2] = {(cuuint64_t)p->n, (cuuint64_t)p->m};
    const cuuint64_t strides[1] = {(cuuint64_t)p->ldd * 2};
    const cuuint32_t box[2] = {64, (cuuint32_t)(t == 0 || C::CN != 1 ? C::TM : tail)};
    if (!encode_map(t == 0 ? tm_d : tm_d_tail, DtypeOps<T>::kTmaType, 2, p->d, dims, strides, box,
                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE))
      return false;
  }
  return true;
}

// The scale (zero) maps, [G groups] x [N], boxes of `rows` rows x TN where the plan takes them
// (Params::scale_map); false where one does not encode.
template <typename T, class C>
static inline bool scale_maps(const struct w4a16_launch_params *p, int rows, CUtensorMap *tm_s, CUtensorMap *tm_z) {
  const cuuint64_t dims[2] = {(cuuint64_t)p->n, (cuuint64_t)(p->k / p->group_size)};
  const cuuint64_t strides[1] = {(cuuint64_t)p->n * 2};
  const cuuint32_t box[2] = {(cuuint32_t)C::TN, (cuuint32_t)rows};
  return encode_map(tm_s, DtypeOps<T>::kTmaType, 2, p->scales, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B) &&
         (!C::kZeros || encode_map(tm_z, DtypeOps<T>::kTmaType, 2, p->zeros, dims, strides, box,
                                   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B));
}

// Params from the problem and the plan (the tensor maps' outcome in act_3d, act_3d_tail).
template <class C>
static inline Params make_params(const struct w4a16_launch_params *p, const w4a16_plan &pl) {
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
  // log2(group), used only where group < TK (then a power of two; bounded, per-column groups are
  // K); 30 for one group row (group K, G = 1), below TK only with a K tail (K < TK, not always a
  // power of two): every k of the k-block in row 0
  prm.gshift = w4a16_group_shift(p->group_size, p->k);
  prm.split_k = pl.split_k;
  prm.streamk = pl.stream_k;
  prm.sk_base = pl.sk_base;
  prm.sk_rem = pl.sk_rem;
  prm.kpair = pl.kpair;
  // stream-K: this launch's flag value, and the flags after the partial tiles (one a CTA)
  prm.token = pl.stream_k ? next_token() : 0u;
  prm.flags = pl.stream_k ? (uint32_t *)((char *)p->workspace + (size_t)pl.grid * C::TN * C::TM * sizeof(float))
                          : nullptr;
  prm.prefetch = pl.prefetch;
  prm.act_3d = 0;
  prm.act_3d_tail = 0;
  prm.scale_map = pl.scale_map;
  prm.tail_rows = pl.tail_rows;
  prm.alpha = p->alpha;
  return prm;
}

template <typename T, class C>
static inline int launch(const struct w4a16_launch_params *p, cudaStream_t stream) {
  const w4a16_plan &pl = *p->plan;
  if (!encode_tiled_fn()) return (int)cudaErrorNotSupported;
  Params prm = make_params<C>(p, pl);
  CUtensorMap tm_a, tm_w, tm_a_tail, tm_d, tm_d_tail, tm_s, tm_z;
  if (!activation_maps<T, C>(p, pl.act_3d, pl.tail_rows, &tm_a, &tm_a_tail, &prm.act_3d, &prm.act_3d_tail) ||
      !weight_map<C>(p, &tm_w) || !output_maps<T, C>(p, pl.tail_rows, &tm_d, &tm_d_tail))
    return (int)cudaErrorInvalidValue;
  memset(&tm_s, 0, sizeof(tm_s));
  memset(&tm_z, 0, sizeof(tm_z));
  if (prm.scale_map && !scale_maps<T, C>(p, prm.scale_map >> 8, &tm_s, &tm_z)) {
    // a bulk copy a row instead, except where the last row tile or k-block is part-full: only the
    // map's exact extents give zeros beyond N and the last group row
    if (p->n % (C::TN * C::CN) != 0 || p->k % C::TK != 0) return (int)cudaErrorInvalidValue;
    prm.scale_map = 0;
  }
  auto kern = w4a16_sm90_kernel<T, C, false>;
  cudaError_t err = kernel_attrs<T, C, false>();
  if (err != cudaSuccess) return (int)err;
  if constexpr (C::kScaleChunk > 1) {
    if (prm.scale_map & 2) {
      err = kernel_attrs<T, C, true>();
      if (err != cudaSuccess) return (int)err;
      kern = w4a16_sm90_kernel<T, C, true>;
    }
  }
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[2];
  cfg.gridDim = dim3((unsigned)pl.grid, 1, 1);
  cfg.blockDim = dim3(C::kThreads, 1, 1);
  cfg.dynamicSmemBytes = C::kSmemBytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)pl.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pl.pdl && !p->no_pdl ? 2 : 1;
  err = cudaLaunchKernelEx(&cfg, kern, tm_a, tm_w, tm_d, tm_a_tail, tm_d_tail, tm_s, tm_z, prm);
  if (err != cudaSuccess) return (int)err;
  if (prm.split_k > 1) {
    err = w4a16_splitk_reduce_pdl_launch<T>((const float *)p->workspace, prm.split_k, p->m, p->n, p->alpha,
                                            (const T *)p->bias, (T *)p->d, (int64_t)p->ldd, p->sm_count,
                                            prm.prefetch != 0, pl.pdl, stream);
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
