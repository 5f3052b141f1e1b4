// grouped_sm90.cuh - the Hopper tensor-core form of the grouped (mixture-of-experts) GEMM: the sm90
// family's kernel (sm90/sm90_kernel.cuh: TMA, wgmma with the token dimension as wgmma N, a producer
// warpgroup and cooperative consumers) compiled with Cfg::kGrouped, whose persistent walk takes
// (expert, token tile, column tile) units.
//
// Grid: kCtasPerSm CTAs an SM: the host does not know how many units the device offsets give, so
// every CTA builds the unit table in its shared memory (grouped_common.cuh, w4a16_grouped_table) and
// walks units blockIdx.x, + gridDim.x, ... of it (an expert without rows owns none).
// Activations: without a row index by the 2-D map over A [rows, K] from the unit's first grouped row
// (whole token tiles: the rows past the expert's, the next expert's or the map's zeros beyond `rows`,
// only reach wgmma columns that are never stored); with one, gathered by the producer warpgroup's
// gather warps (sm90_producer.cuh, gather_warps) into the same shared layout. TM > 64: an expert's
// last tile with at most 64 (128, below a TM of 256) rows is a narrow unit (Cfg::kNarrowTail): 64
// (128) rows, by the tail map's 64-row boxes, and wgmmas of that N. Weights: the map over the E experts' packed weights as one
// [E N / 16 row blocks] x [K / 64 x 128 words] array (expert e's row blocks from e N / 16); scales
// (zeros): the map over [E G rows] x [N] (expert e's from row e G). A column tile past N reads the next
// expert's rows (the last expert: the map's zeros) and stores nothing there. Epilogue: alpha, the row's
// router scale, conversion, staged through shared memory and written with 16-byte stores to the unit's
// rows of its expert. No split-K, stream-K or K pair.
// Programmatic dependent launch: every thread waits (griddepcontrol.wait) before the offsets are read,
// then lets the next grid launch (sm90_kernel.cuh).
#ifndef W4A16_GROUPED_GROUPED_SM90_CUH
#define W4A16_GROUPED_GROUPED_SM90_CUH

#include "grouped/grouped_common.cuh"
#include "sm90/sm90_launch.cuh"

namespace w4a16_sm90 {

// Params, tensor maps and grid of a grouped launch, and the launch; cudaErrorInvalidValue where a map
// does not encode, E passes the table or the units could pass 2^31.
template <typename T, class C>
static inline int grouped_launch(const struct w4a16_grouped_launch_params *gp, cudaStream_t stream) {
  if (!encode_tiled_fn()) return (int)cudaErrorNotSupported;
  if (gp->experts > C::kMaxExperts) return (int)cudaErrorInvalidValue;
  const long long n_tiles = (gp->n + C::TN - 1) / C::TN;
  const long long units = ((long long)gp->rows / C::TM + gp->experts) * n_tiles;  // an upper bound
  if (units >= (1ll << 31)) return (int)cudaErrorInvalidValue;
  // the dense family's maps on the experts seen as one problem: A [rows, K]; the weights of E N rows;
  // the scales (zeros) as [E G] group rows of N (K as E K), a k-block's rows by one copy
  struct w4a16_launch_params lp = {};
  lp.a = gp->a;
  lp.w = gp->w;
  lp.scales = gp->scales;
  lp.zeros = gp->zeros;
  lp.lda = gp->lda;
  lp.m = gp->rows;
  lp.n = gp->experts * gp->n;
  lp.k = gp->k;
  lp.group_size = gp->group_size;
  struct w4a16_launch_params ls = lp;
  ls.n = gp->n;
  ls.k = gp->experts * gp->k;
  CUtensorMap tm_a, tm_w, tm_d, tm_a_tail, tm_d_tail, tm_s, tm_z;
  int a3d = 0, a3d_tail = 0;
  memset(&tm_d, 0, sizeof(tm_d));
  memset(&tm_d_tail, 0, sizeof(tm_d_tail));
  memset(&tm_z, 0, sizeof(tm_z));
  const int box_rows = gp->group_size < C::TK ? C::TK / gp->group_size : 1;
  const int tail_rows = C::kNarrowTail ? 64 : C::TM;  // the tail map's box: a narrow unit's 64-row boxes
  if (!activation_maps<T, C>(&lp, 0, tail_rows, &tm_a, &tm_a_tail, &a3d, &a3d_tail) || !weight_map<C>(&lp, &tm_w) ||
      !scale_maps<T, C>(&ls, box_rows, &tm_s, &tm_z))
    return (int)cudaErrorInvalidValue;
  // the dense Params of one expert's problem (N, D, alpha) under a plan of whole tiles: no split-K,
  // stream-K or K pair, the scale map's boxes of box_rows group rows, token tiles of TM rows
  struct w4a16_launch_params pp = lp;
  pp.n = gp->n;
  pp.d = gp->d;
  pp.ldd = gp->ldd;
  pp.alpha = gp->alpha;
  w4a16_plan pl = {};
  pl.split_k = 1;
  pl.scale_map = 1 | (box_rows << 8);
  pl.tail_rows = C::TM;
  GroupedParams prm;
  memset(&prm, 0, sizeof(prm));
  static_cast<Params &>(prm) = make_params<C>(&pp, pl);
  prm.gp = *gp;
  cudaError_t err = kernel_attrs<T, C, false>();
  if (err != cudaSuccess) return (int)err;
  auto kern = w4a16_sm90_kernel<T, C, false>;
  static std::atomic<int> pdl_cache[64];
  const bool pdl = !gp->no_pdl && w4a16_debug()->gemv_pdl && w4a16_kernel_image_waits_cached(kern, pdl_cache);
  const int sms = gp->sm_count > 0 ? gp->sm_count : 132;
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3((unsigned)(sms * C::kCtasPerSm), 1, 1);
  cfg.blockDim = dim3(C::kThreads, 1, 1);
  cfg.dynamicSmemBytes = C::kSmemBytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  err = cudaLaunchKernelEx(&cfg, kern, tm_a, tm_w, tm_d, tm_a_tail, tm_d_tail, tm_s, tm_z, prm);
  if (err != cudaSuccess) return (int)err;
  return (int)cudaGetLastError();
}

}  // namespace w4a16_sm90

template <typename T, int MODE, int TN, int TM, int TK, int SCHED, int STAGES, int NC>
static inline int w4a16_gsm90_launch(const struct w4a16_grouped_launch_params *p, cudaStream_t stream) {
  return w4a16_sm90::grouped_launch<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, 1, 1, SCHED, STAGES, NC, true>>(p, stream);
}

template <typename T, int MODE, int TN, int TM, int TK, int SCHED, int STAGES, int NC>
static inline int w4a16_gsm90_probe(void) {
  return w4a16_sm90::probe<T, w4a16_sm90::Cfg<MODE, TN, TM, TK, 1, 1, SCHED, STAGES, NC, true>>();
}

#endif
