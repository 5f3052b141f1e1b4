/* plan.c - the launch plan (plan.h): split-K, stream-K, the K pair and the sm90 launch's schedule,
   decided once per call. */
#include <limits.h>
#include <stdint.h>

#include "debug.h"
#include "internal.h"

/* the most dynamic shared memory of an sm90 kernel that runs two CTAs per SM (half of the H100's
   227 KB opt-in limit, 232448 bytes, minus the 1 KB per CTA the hardware reserves) */
#define SM90_HALF_SM_SMEM 115712
/* stream-K where the output tiles fill less than this fraction of their waves, over at most this
   many waves, from this M on (H100: at M <= 64 the kernels stream weights at the memory's pace and
   the fixup only costs, 28672x4096 at M = 1..32 loses 14-22 %; from M = 128 it gains up to 20 %) */
#define SM90_STREAMK_EFF 0.85
#define SM90_STREAMK_WAVES 4
#define SM90_STREAMK_MIN_M 65
/* the tile_k 256 tiles (128 rows) from M = 17, also in place of split-K: at M = 32..64 stream-K takes
   10240x8192 from 80 of 132 SMs to all (8 % faster at M = 32 and 64) and 57344x8192 M = 32 10 %
   faster, slower nowhere (H100); the tile_k 128 tiles lose there (28672x4096 M = 16 with 256x16x128
   and M = 64 with 256x64x128: 16-17 % slower) */
#define SM90_STREAMK_MIN_M_K256 17
/* below that M, the tile_k 256 tiles take stream-K (the K pair where it qualifies) where the tiles
   number at least this fraction of the SMs (each tile shared by about two CTAs at most): at M = 1..16
   8192x8192 (64 tiles, K pair) takes 0.89x the time with 128x16x256, 10240x8192 (80) 0.76x,
   57344x8192 0.86-0.93x; with 32-48 tiles the fixups cost up to 26 % (H100) */
#define SM90_STREAMK_SMALL_M_FILL 0.45
/* the largest split W4A16_SM90_SPLIT_SLOTS takes (generator/families/sm90.py MAX_SPLIT_K) */
#define SM90_MAX_SPLIT 12

/* CTA slots of one wave of an sm90 kernel: the register-light tiles run two CTAs per SM, and exactly
   those ask for at most half an SM of shared memory (sm90_config.cuh, Cfg::kCtasPerSm) */
static int64_t sm90_slots(const w4a16_kernel_desc *kd, int sm_count) {
  return (int64_t)sm_count * (kd->smem_bytes <= SM90_HALF_SM_SMEM ? 2 : 1);
}

static int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The split-K rule alone (the stream-K problems are left unsplit by the plan). */
static int split_k_rule(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count) {
  if (kd->split_k <= 1 || sm_count <= 0 || p->m < 1) return 1;
  /* part-full last tiles count (N and K tails: kernels with n_multiple / k_multiple) */
  const int64_t tiles = div_up(p->m, kd->tile_m) * div_up(p->n, kd->tile_n);
  const int64_t k_iters = div_up(p->k, kd->tile_k);
  if (kd->family == W4A16_FAMILY_SM90) {
    /* sm90 slices K unevenly ([z*k_iters/split, (z+1)*k_iters/split) k-blocks), so any split <= k_iters
       works: the largest split whose units still fit in one wave of the persistent grid (tiles * split
       <= its CTA slots), capped by the kernel's split_k */
    const int64_t slots = sm90_slots(kd, sm_count);
    if (tiles >= slots) return 1;
    int64_t s = slots / tiles;
    if (s > kd->split_k) s = kd->split_k;
    if (s > k_iters) s = k_iters;
    return s > 1 ? (int)s : 1;
  }
  if (tiles >= sm_count) return 1;
  /* GEMV: splitting half a wave or more of tiles over a short K costs more than the extra parallelism
     gains (H100: 128 tiles split 2 at K = 4096 was 8% slower, at K = 14336 20% faster) */
  if (kd->family == W4A16_FAMILY_GEMV && tiles * 2 >= sm_count && p->k < 8192) return 1;
  int best = 1;
  for (int s = 2; s <= kd->split_k && s <= k_iters; ++s) {
    if (k_iters % s != 0) continue;
    best = s;
    if (tiles * s >= sm_count) break;
  }
  return best;
}

int w4a16_stream_k_min_m(const w4a16_kernel_desc *kd) {
  const int set = w4a16_debug()->sm90_streamk_min_m;
  if (set >= 0) return set;
  return kd->tile_k >= 256 ? 1 : SM90_STREAMK_MIN_M;
}

/* The stream-K rule (sm90): where the output tiles leave their last wave part-empty and split-K does
   not apply (tile_k 256: in place of split-K too). */
static int stream_k_rule(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count) {
  if (kd->family != W4A16_FAMILY_SM90 || sm_count <= 0 || p->m < 1) return 0;
  const w4a16_debug_settings *dbg = w4a16_debug();
  if (dbg->sm90_streamk == 0) return 0;
  if (p->m < w4a16_stream_k_min_m(kd)) return 0;
  if (dbg->sm90_streamk != 2 && kd->tile_k < 256 && split_k_rule(kd, p, sm_count) > 1) return 0;
  const int64_t cn = kd->cluster_n > 1 ? kd->cluster_n : 1, cm = kd->cluster_m > 1 ? kd->cluster_m : 1;
  const int64_t slots = sm90_slots(kd, sm_count) / (cn * cm);
  const int64_t tiles = div_up(p->m, kd->tile_m * cm) * div_up(p->n, kd->tile_n * cn);
  const int64_t k_iters = div_up(p->k, kd->tile_k);
  if (slots < 1 || tiles % slots == 0 || k_iters < 4) return 0;
  if (kd->tile_k >= 256 && p->m < SM90_STREAMK_MIN_M_K256 && dbg->sm90_streamk_min_m < 0 &&
      (double)tiles < SM90_STREAMK_SMALL_M_FILL * (double)slots)
    return 0;
  const int64_t waves = div_up(tiles, slots);
  const double eff = (double)tiles / (double)(waves * slots);
  if (dbg->sm90_streamk >= 1) return 1;
  return eff < SM90_STREAMK_EFF && waves <= SM90_STREAMK_WAVES;
}

/* The workspace split-K (fp32 partials, [split][M][N]) or stream-K (one fp32 partial tile per CTA slot
   of a wave, then a 32-bit flag per slot) reserves. */
static size_t workspace_bytes(const w4a16_kernel_desc *kd, const w4a16_problem *p, int split, int stream_k,
                              int sm_count) {
  if (stream_k) {
    const size_t ctas = (size_t)sm90_slots(kd, sm_count);
    return ctas * (size_t)kd->tile_n * (size_t)kd->tile_m * sizeof(float) + (ctas * sizeof(uint32_t) + 15) / 16 * 16;
  }
  if (split <= 1) return 0;
  return (size_t)split * (size_t)p->m * (size_t)p->n * sizeof(float);
}

/* ------------------------------------------------------------------------- the sm90 launch */

/* Stream-K's data-parallel tiles a cluster for `tiles` output tiles over g clusters: W = floor((tiles -
   1) / g), so that stream-K takes the last part-wave's tiles (under one tile a cluster), except that
   one wave of them with less than a quarter wave left over goes all to stream-K (W = 0). H100: against
   stream-K over all tiles, 17 of 18 kernel x problem pairs of 1.45-3.4 waves at M = 64..1024 run in
   0.88-0.99x the time; with 160 tiles on 132 SMs (W = 1 cut the 28 left over into pieces of under a
   fifth of a tile) 1.004-1.023x, hence W = 0 there. Also W = 0 for the tiles whose last partial comes
   through the stage ring (ring) where W = 1 would leave stream-K pieces of under 32 k-blocks: each of
   those tiles then has a contributor whose whole part lies inside it, so its owner waits at the end for
   that partial's store, where stream-K over all tiles gives each tile at most one contributor (H100:
   128x256x64 on 6144x4096 M = 1024, pieces of 29 k-blocks, 0.97-0.98x the time). */
static int64_t streamk_dp_tiles(int64_t tiles, int64_t g, int64_t k_iters, int ring) {
  const int mode = w4a16_debug()->sm90_sk_dp;
  if (g < 1 || mode <= 0) return 0;
  int64_t w = (tiles - 1) / g; /* tiles - w g >= 1 */
  if (mode == 1 && w == 1 && 4 * (tiles - g) < g) w = 0;
  if (mode == 1 && w == 1 && ring && (tiles - g) * k_iters < 32 * g) w = 0;
  if (mode == 2 && w > 0) --w;
  return w;
}

/* Params::prefetch: the stages whose weights the producer loads before griddepcontrol.wait, as
   max(2, k-blocks of its first unit / d) (-d), at most STAGES. d = 8: prefetching all stages gains 3-4
   % on the long layers but loses 3-7 % on split-K layers of 16-21 k-blocks a unit (the reduction
   between two GEMMs waits behind those bytes); d = 3 for the 16-token tiles, whose stages are mostly
   weights (H100: 128x16x256 under the K pair and stream-K 0.98-0.99x the time against d = 4, 1.01-1.07x
   with 2, 4 or 8 stages); d = 4 for the 32-token tile_k 256 tiles in a stream-K launch without
   data-parallel tiles (128x32x256 on 10240x8192 at M = 24 / 32 0.974-0.977x). */
static int sm90_prefetch(const w4a16_kernel_desc *kd, int streamk_only) {
  const w4a16_debug_settings *dbg = w4a16_debug();
  if (dbg->sm90_prefetch_set) return dbg->sm90_prefetch;
  return kd->tile_m <= 16 ? -3 : kd->tile_m <= 32 && kd->tile_k == 256 && streamk_only ? -4 : -8;
}

/* Rows of the last token tile's activation and output boxes: where M is not a multiple of TM (and the
   activations are not multicast) that tile moves only its own rows, rounded up to whole 8-row swizzle
   atoms: a box row beyond M is an out-of-bounds row that TMA zero-fills (loads) or drops (stores), and
   those cost as much as real rows or more (H100, boxes of TM rows: 128x64x256 on 28672x4096 takes 50.7
   us at M = 17, 43.6 at M = 33, 33.0 at M = 48). */
static int sm90_tail_rows(const w4a16_kernel_desc *kd, int64_t m) {
  const int cn = kd->cluster_n > 1 ? kd->cluster_n : 1, tm = kd->tile_m;
  const int last = (int)(m % tm); /* rows of the last token tile, 0: a full one */
  if (cn != 1 || last == 0 || !w4a16_debug()->sm90_clip_box) return tm / cn;
  const int r = (last + 7) / 8 * 8;
  return r < tm ? r : tm;
}

/* Params::scale_map. The group scales (zeros), [G = K / group] x [N], come a stage's rows by one copy
   of a 2-D map where a stage holds min_rows rows or more, else by a bulk copy a row (H100: groups of 32
   0.94x the time of a bulk copy a row; at one or two rows 0.94-0.99x on all tiles but the tile_k 256
   tiles of <= 32 tokens, which lose 1.3-3.7 % below four rows). Scale rows by chunks (the tile_k 256
   tiles of <= 32 tokens under the K pair: one unit a CTA): one copy brings the rows of kScaleChunk
   k-blocks into the stage of the chunk's first k-block (each copy costs nearly independently of its
   bytes; H100: 8192x8192 / 8192x28672 at M = 1..32 0.94-0.99x the time, while under stream-K they cost
   5-6 %); the cooperative schedule only (its consumers release the stages in order) and groups of 128
   .. TK (a power of two: the consumers shift). A part-full last row tile or k-block (N, K tails) always
   takes the map, whose exact extents give zeros beyond N and the last group row. */
static int sm90_scale_map(const w4a16_kernel_desc *kd, const w4a16_problem *p, int group,
                          const struct w4a16_sm90_facts *f, int kpair) {
  if (group <= 0) return 0;
  const w4a16_debug_settings *dbg = w4a16_debug();
  const int tk = kd->tile_k, rows_max = tk / 32;
  int box_rows = group < tk ? tk / group : 1, chunked = 0;
  const int chunk_mode = dbg->sm90_schunk;
  if (kd->schedule == W4A16_SCHEDULE_COOPERATIVE && f->scale_chunk > 1 && (kpair ? chunk_mode >= 1 : chunk_mode >= 2) &&
      group >= 128 && group <= tk && (group & (group - 1)) == 0 && f->scale_chunk * (tk / group) <= rows_max) {
    chunked = 1;
    box_rows = f->scale_chunk * (tk / group); /* chunks begin at group boundaries */
  }
  const int cn = kd->cluster_n > 1 ? kd->cluster_n : 1;
  const int tails = p->n % ((int64_t)kd->tile_n * cn) != 0 || p->k % tk != 0;
  const int min_rows = dbg->sm90_s2d_min_rows > 0 ? dbg->sm90_s2d_min_rows : tk >= 256 && kd->tile_m <= 32 ? 4 : 1;
  if (!(chunked || tails || box_rows >= min_rows)) return 0;
  return 1 | (chunked << 1) | (box_rows << 8);
}

/* W4A16_SM90_SPLIT / _SPLIT_SLOTS (debug.h), where the workspace given holds the slices' partials. */
static int sm90_split_override(int split, int64_t tiles, int64_t slots, const w4a16_problem *p, int64_t k_iters,
                               size_t ws_bytes) {
  const w4a16_debug_settings *dbg = w4a16_debug();
  int64_t s = dbg->sm90_split;
  if (s < 1 && dbg->sm90_split_slots) s = tiles >= slots ? 1 : (slots / tiles < SM90_MAX_SPLIT ? slots / tiles : SM90_MAX_SPLIT);
  if (s < 1) return split;
  if (s > k_iters) s = k_iters;
  if (s > 1 && (size_t)s * (size_t)p->m * (size_t)p->n * sizeof(float) > ws_bytes) return split;
  return (int)s;
}

/* The sm90 launch's schedule from the rules' split and stream-K choice and the kernel's facts. */
static void plan_sm90(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sms, size_t ws_bytes,
                      const struct w4a16_sm90_facts *f, w4a16_plan *pl) {
  const int group = (int)w4a16_effective_group(p);
  const int64_t tn = kd->tile_n, tm = kd->tile_m, cn = kd->cluster_n > 1 ? kd->cluster_n : 1,
                cm = kd->cluster_m > 1 ? kd->cluster_m : 1, csize = cn * cm;
  const int64_t k_blocks = div_up(p->k, kd->tile_k); /* the last part-full where TK does not divide K */
  const int64_t n_cl = div_up(p->n, tn * cn), m_cl = div_up(p->m, tm * cm), tiles = n_cl * m_cl;
  const int rule_stream_k = pl->stream_k;
  const w4a16_debug_settings *dbg = w4a16_debug();
  if (sms <= 0) sms = 132;
  if (pl->split_k > k_blocks) pl->split_k = (int)k_blocks; /* every slice needs >= 1 k-block */
  pl->split_k = sm90_split_override(pl->split_k, div_up(p->m, tm) * div_up(p->n, tn), (int64_t)sms * f->ctas_per_sm,
                                    p, k_blocks, ws_bytes);
  pl->stream_k = 0;
  pl->cluster = (int)csize;
  pl->tail_rows = sm90_tail_rows(kd, p->m);
  pl->act_3d = cn == 1 && kd->tile_k > 64 && dbg->sm90_act_3d;
  int64_t clusters = (int64_t)sms * f->ctas_per_sm / csize;
  if (clusters < 1) clusters = 1;
  /* clusters must sit in one GPC: fewer may fit at once than SMs / cluster size, and the persistent
     grid is resident as a whole */
  if (csize > 1 && f->resident_clusters > 0 && clusters > f->resident_clusters) clusters = f->resident_clusters;
  /* The K pair in place of stream-K or of split-K into two slices where two CTAs a tile fill the GPU:
     the tiles pair up with at least 70 % of the SMs and every pair is resident at once (H100: 6144x4096's
     48 tiles at M = 32 / 64 0.97x stream-K's time; 0.92-1.00x split-K's on 17 problems; with 32 tiles
     the halves take 1.3-1.45x stream-K's time). The workspace reserved for split-K goes unused. */
  const int kpair_from = (rule_stream_k && pl->split_k == 1) || (!rule_stream_k && pl->split_k == 2);
  if (f->pair_ok && kpair_from && dbg->sm90_kpair && k_blocks >= 2 && 2 * tiles <= sms && 20 * tiles >= 7 * (int64_t)sms &&
      tiles <= f->resident_pairs) {
    pl->kpair = 1 + (!f->pair_halves ? 0 : dbg->sm90_kpair_lead >= 0 ? dbg->sm90_kpair_lead : f->pair_lead);
    pl->split_k = 1;
    clusters = 2 * tiles; /* CTAs (the kernel's own clusters are 1x1) */
    pl->cluster = 2;
  } else if (rule_stream_k && pl->split_k == 1) {
    /* stream-K where it is safe: the grid is resident as a whole (a cluster that began a tile waits for
       the clusters that finish it) and the workspace holds a partial tile per CTA and the flags */
    const int64_t g = clusters < tiles * k_blocks ? clusters : tiles * k_blocks;
    const int64_t dp = f->streamk_dp ? streamk_dp_tiles(tiles, g, k_blocks, f->streamk_ring) : 0;
    const int64_t iters = (tiles - dp * g) * k_blocks;
    const size_t slots = (size_t)(g * csize * tn * tm) * sizeof(float);
    const int64_t fit = (int64_t)f->resident_ctas_per_sm * sms / csize;
    if (iters <= INT32_MAX && g <= fit && ws_bytes >= slots + (size_t)(g * csize) * sizeof(uint32_t)) {
      pl->stream_k = 1 + (int)dp;
      pl->sk_base = (int)(iters / g);
      pl->sk_rem = (int)(iters % g);
      /* parts that shrink with the CTA index for the tiles of <= 16 and >= 128 tokens where the parts
         hold at least 8 iterations: the first I % G + B one iteration longer, the last B one shorter,
         B = (G - I % G) / 2 (H100: 128x16x256 on 10240x8192 0.983-0.986x the time at M = 1..16;
         128x128x128 on 6144x4096 at M = 192 / 256 0.971-0.979x; 128x64x256 loses 0.4-1.4 % at M = 32) */
      const int64_t skew = (g - iters % g) / 2;
      if ((tm <= 16 || tm >= 128) && dp == 0 && pl->sk_base >= 8 && skew > 0 && dbg->sm90_skew)
        pl->sk_rem = (int)(iters % g + skew) | (int)(skew << 16);
      clusters = g;
    }
  }
  pl->pdl = dbg->sm90_pdl;
  pl->prefetch = pl->pdl ? sm90_prefetch(kd, pl->stream_k == 1) : 0;
  pl->scale_map = sm90_scale_map(kd, p, group, f, pl->kpair);
  const int64_t units = tiles * pl->split_k;
  if (!pl->stream_k && !pl->kpair && clusters > units) clusters = units;
  pl->grid = (int)(pl->kpair ? clusters : clusters * csize);
}

int w4a16_plan_launch(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count, size_t ws_bytes, int flags,
                      w4a16_plan *plan) {
  w4a16_plan *pl = plan;
  *pl = (w4a16_plan){0};
  pl->stream_k = stream_k_rule(kd, p, sm_count);
  pl->split_k = pl->stream_k ? 1 : split_k_rule(kd, p, sm_count);
  pl->workspace_bytes = workspace_bytes(kd, p, pl->split_k, pl->stream_k, sm_count);
  /* act-order: the gathered A after the kernel's part (w4a16_gemm gathers into it where the kernel
     does not gather itself; reserved either way, so that the size does not depend on the device) */
  const size_t gather = p->act_order ? ((size_t)p->m * (size_t)p->k * 2 + 255) / 256 * 256 : 0;
  const size_t kernel_part = gather ? (pl->workspace_bytes + 255) / 256 * 256 : pl->workspace_bytes;
  if ((flags & W4A16_PLAN_FIT_WORKSPACE) && pl->workspace_bytes && kernel_part + gather > ws_bytes) {
    /* a kernel of the runtime's choosing fits the workspace given: without split-K or stream-K it
       needs none */
    pl->split_k = 1;
    pl->stream_k = 0;
    pl->workspace_bytes = 0;
  }
  if (gather) {
    pl->gather_offset = (pl->workspace_bytes + 255) / 256 * 256;
    pl->workspace_bytes = pl->gather_offset + gather;
  }
  if ((flags & W4A16_PLAN_RULES) || kd->family != W4A16_FAMILY_SM90 || !kd->impl || !kd->impl->sm90_facts)
    return 0;
  struct w4a16_sm90_facts f;
  const int e = kd->impl->sm90_facts(sm_count, &f);
  if (e != 0) return e;
  plan_sm90(kd, p, sm_count, ws_bytes, &f, pl);
  return 0;
}
