/* grouped.c - the grouped (mixture-of-experts) GEMM: its kernel table, argument checks, heuristic
   and launch (include/w4a16/w4a16.h, "Grouped GEMM"). The host never reads the device offsets. */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GROUPED_MAX_EXPERTS 65535 /* the decode form's grid.y */
#define GROUPED_MAX_DEVICES 64
/* the decode form while the rows average at most this many a used expert (one pass of 8 or 16
   rows for most experts); above, the tensor-core form reads each expert's weights once per token
   tile (H100, bench/moe_bench.py: Mixtral at T = 64, 16 rows an expert, 1.6x slower in the decode
   form than the dense loop) */
#define GROUPED_DECODE_ROWS 8
/* the TMA decode form's 16-row token tile from this many rows a used expert expected (grouped_rank) */
#define GROUPED_TILE16_ROWS 1.5
/* the experts of the unit table of the Hopper form (Cfg::kMaxExperts, sm90/sm90_config.cuh) and of
   the TMA decode form (W4A16_GGEMV_TMA_MAX_EXPERTS, grouped/grouped_gemv_tma.cuh) */
#define GROUPED_TABLE_MAX_EXPERTS 256
/* The Hopper form above GROUPED_SM90_MIN_ROWS rows a used expert (below, the sm80-class form's
   32-token tile wastes less on small experts: H100, bench/moe_bench.py --sweep, Qwen3-30B-A3B at 16
   rows an expert 0.78-0.90x the Hopper form's time on uniform routing), above
   GROUPED_SM90_MID_ROWS where K is at least GROUPED_SM90_LONG_K (enough k-blocks a unit to fill the
   Hopper form's pipeline: DeepSeek-V2-Lite's gate and up at 24 and 30 rows an expert 0.83-0.98x the
   sm80-class form's time, Qwen3-30B-A3B's at 20 0.94x on Zipf routing, 1.04x on uniform; the down
   GEMMs, K = 768 and 1408, stay with the sm80-class form: Qwen3's at 20 rows 1.09-1.21x), and from
   GROUPED_SM90_MIN_ROWS_BIG rows on where one expert's packed weights pass GROUPED_L2_EXPERT_BYTES:
   an expert with more rows than a token tile reads its weights once a tile, from HBM once they
   outgrow the L2, so on skewed routing the 64-token tile reads Mixtral's experts fewer times
   (Mixtral at 16 rows an expert, Zipf routing: 0.77-0.91x the sm80-class 32-token tile's time;
   uniform 0.99-1.03x). Its token tile: 64 up to GROUPED_SM90_NARROW_ROWS rows an expert (Mixtral
   and Qwen3-30B-A3B at 64, H100 --sweep: 0.81-0.96x the time of the 128-token tile, whose narrow
   tails run its experts of at most 64 rows 64 wide, on Zipf routing, 1.01-1.02x on uniform), 128 of K a
   stage where the gather warps feed it and 256 without (Mixtral: 0.89-0.96x the other depth's time
   each); 128 above; 256 from sm90_wide_rows() on: GROUPED_SM90_WIDE_ROWS rows an expert
   (Mixtral down at 1024 rows an expert: 0.99x the time of 128; with the in-kernel row gather
   1.24x, whose warps feed 256 tokens worst, so with a row index on rows gathered first:
   GROUPED_GATHER_FIRST_TILE), and GROUPED_SM90_WIDE_ROWS_BIG where one expert's packed weights
   pass GROUPED_L2_EXPERT_BYTES and the 256-token units (experts with rows expected x token tiles
   of 256 an expert x column tiles of 128 rows) fill at least GROUPED_SM90_WIDE_WAVES rounds of one
   CTA an SM: each token tile reads its expert's weights (from HBM past the L2) and converts them,
   so the wider tile halves both, while its units are half as many, so the last round's imbalance
   weighs more where there are few. H100, bench/moe_bench.py through the op, Mixtral at 256 rows an
   expert, rows gathered first, against the 128-token tile: gate_up (13.6 rounds) 0.94-0.95x the
   time; down (1.9 rounds) 1.00x uniform, 1.02x Zipf. */
/* The Hopper form's 96-token tile (128x96x128; an expert's last tile of at most 64 rows narrow) above
   GROUPED_SM90_T96_MIN_ROWS up to GROUPED_SM90_T96_MAX_ROWS rows a used expert where its units
   (experts with rows expected x ceil(rows a used expert / 96) x column tiles of 128 rows) fill at
   least GROUPED_SM90_T96_WAVES rounds of one CTA an SM. Under uniform routing about half the experts
   pass 64 rows at 64 rows an expert, and the 64-token tile reads their weights twice where the
   96-token tile reads them once. H100, bench/moe_bench.py --sweep at 64 rows an expert, against the
   rule's 64-token tile: uniform routing 0.88x the time on Mixtral-8x7B gate_up (13.6 rounds) and
   down (1.9 rounds), 0.87-0.88x on Qwen3-30B-A3B's (11.6, 15.5); Zipf routing, whose small experts
   run narrow in a tile of five stages where the 64-token tile has eight (128 of K) or four of 256,
   1.02x (Mixtral gate_up), 1.04-1.07x (Qwen3), and 1.15x on Mixtral's down, whose few long units
   (112 k-blocks) leave the last round part-empty: the rounds bound keeps the 64-token tile there. The
   bounds (not measured): at 56 rows an expert about one expert in seven passes 64 rows (the
   binomial's spread, about the square root of the mean), at 80 about one in thirty passes 96. */
#define GROUPED_SM90_T96_MIN_ROWS 56
#define GROUPED_SM90_T96_MAX_ROWS 80
#define GROUPED_SM90_T96_WAVES 4.0
/* The Hopper form's kernels of a token tile of at least GROUPED_GATHER_FIRST_TILE rows take a row
   index by gathering A into the workspace first (runtime/cuda/gather_rows.cu) and then reading it
   in grouped order by the activation map, where the workspace has room (grouped_gather_bytes): the
   gather warps feed that tile worst (see above), and the separate gather costs one more pass over
   the gathered rows (read and written once: at Mixtral's gate_up at T = 4096, 64 MB each way, about
   40 us at the stream bandwidth against a GEMM of about 3 ms). */
#define GROUPED_GATHER_FIRST_TILE 256
#define GROUPED_SM90_MIN_ROWS 32
#define GROUPED_SM90_MIN_ROWS_BIG 16
#define GROUPED_SM90_MID_ROWS 16
#define GROUPED_SM90_LONG_K 2048
#define GROUPED_SM90_NARROW_ROWS 64
#define GROUPED_SM90_WIDE_ROWS 512
#define GROUPED_SM90_WIDE_ROWS_BIG 256
#define GROUPED_SM90_WIDE_WAVES 4.0
#define GROUPED_L2_EXPERT_BYTES (16.0 * 1024 * 1024)
/* The Hopper form's 32-token tile (256 weight rows, four consumer warpgroups) from
   GROUPED_SM90_T32_MIN_ROWS to GROUPED_SM90_T32_MAX_ROWS rows a used expert, where its units (the
   experts with rows expected x column tiles of 256 rows) fill at least GROUPED_SM90_T32_WAVES rounds
   of one CTA an SM: at 16-24 rows an expert it does half the 64-token tile's tensor-core work and
   stays one pass over most experts' weights (uniform top-k routing: at 24 rows an expert about
   4 % of the experts pass 32). H100, bench/moe_bench.py --sweep, against the rule's pick before (the
   64-token Hopper tile or the sm80-class 32-token tile): Mixtral-8x7B gate_up at 16 rows 0.91x
   (uniform) / 1.01x (Zipf), Qwen3-30B-A3B at 16 rows 0.91-0.95x, DeepSeek-V2-Lite at 24 rows 0.93-0.98x
   but gate_up on Zipf 1.07x. Mixtral's down at 16 rows has 128 such units, one round: 0.78x on
   uniform routing, but 1.29x on Zipf, whose busiest expert's second token tile starts a second round
   of 112 k-blocks a unit; the waves bound keeps the 64-token tile there. The two-warpgroup 256x32x128
   took 1.02-1.13x the four's time at 16-24 rows an expert. */
#define GROUPED_SM90_T32_MIN_ROWS 16
#define GROUPED_SM90_T32_MAX_ROWS 24
#define GROUPED_SM90_T32_WAVES 2.0

size_t w4a16_grouped_kernel_count(void) {
  size_t n;
  w4a16_grouped_registry_table(&n);
  return n;
}

const w4a16_kernel_desc *w4a16_grouped_kernel_get(size_t i) {
  size_t n;
  const w4a16_kernel_desc *t = w4a16_grouped_registry_table(&n);
  return i < n ? &t[i] : NULL;
}

const w4a16_kernel_desc *w4a16_grouped_kernel_find(const char *name) {
  if (!name) {
    w4a16_fail(W4A16_STATUS_NULL_POINTER, "w4a16_grouped_kernel_find: name is NULL");
    return NULL;
  }
  size_t n;
  const w4a16_kernel_desc *t = w4a16_grouped_registry_table(&n);
  for (size_t i = 0; i < n; ++i)
    if (strcmp(t[i].name, name) == 0) return &t[i];
  w4a16_fail(W4A16_STATUS_UNKNOWN_KERNEL, "no registered grouped kernel is named '%s'", name);
  return NULL;
}

/* struct_size of the first w4a16_grouped_gemm_args, which ended at status (flags read as 0) */
#define GROUPED_ARGS_V1_SIZE offsetof(w4a16_grouped_gemm_args, flags)

/* args->flags where the caller's struct has them, else 0 (a first-version struct ends before) */
static unsigned grouped_flags(const w4a16_grouped_gemm_args *a) {
  return a->struct_size > GROUPED_ARGS_V1_SIZE ? a->flags : 0u;
}

/* the problem one expert poses (M = 0: the shape, stride and group checks without a row count) */
static w4a16_problem expert_problem(const w4a16_grouped_gemm_args *a) {
  w4a16_problem p = {.m = 0, .n = a->n, .k = a->k, .lda = a->lda, .ldd = a->ldd, .group_size = a->group_size,
                     .mode = a->mode, .dtype = a->dtype, .has_bias = 0};
  return p;
}

w4a16_status w4a16_grouped_check_args(const w4a16_grouped_gemm_args *a) {
  if (!a) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "args is NULL");
  if (a->struct_size != sizeof(w4a16_grouped_gemm_args) && a->struct_size != GROUPED_ARGS_V1_SIZE)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                      "args->struct_size = %zu is neither sizeof(w4a16_grouped_gemm_args) = %zu nor the first "
                      "version's %zu",
                      a->struct_size, sizeof(w4a16_grouped_gemm_args), GROUPED_ARGS_V1_SIZE);
  w4a16_status st = w4a16_check_gemm_flags(grouped_flags(a));
  if (st != W4A16_STATUS_OK) return st;
  if (a->experts < 1 || a->experts > GROUPED_MAX_EXPERTS)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "experts = %" PRId64 " is out of range [1, %d]", a->experts,
                      GROUPED_MAX_EXPERTS);
  if (a->rows < 0 || a->rows > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "rows = %" PRId64 " is out of range [0, 2^31)", a->rows);
  if (a->row_index && (a->a_rows < 0 || a->a_rows > INT32_MAX))
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "a_rows = %" PRId64 " is out of range [0, 2^31)", a->a_rows);
  if (a->offsets_type != W4A16_INDEX_INT32 && a->offsets_type != W4A16_INDEX_INT64)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "offsets_type %d is not a w4a16_index_type", (int)a->offsets_type);
  w4a16_problem p = expert_problem(a);
  return w4a16_check_problem_m(&p, 0);
}

w4a16_status w4a16_grouped_can_implement(const w4a16_kernel_desc *kd, const w4a16_grouped_gemm_args *args) {
  if (!kd) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernel is NULL");
  w4a16_status st = w4a16_grouped_check_args(args);
  if (st != W4A16_STATUS_OK) return st;
  if (!kd->grouped)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s is not a grouped kernel (w4a16_grouped_kernel_get lists them)",
                      kd->name);
  /* the Hopper form and the TMA decode form walk a table of the experts in shared memory
     (grouped/grouped_sm90.cuh, grouped/grouped_gemv_tma.cuh) */
  if ((kd->family == W4A16_FAMILY_SM90 || kd->schedule == W4A16_SCHEDULE_GEMV_TMA) &&
      args->experts > GROUPED_TABLE_MAX_EXPERTS)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s takes at most %d experts; experts = %" PRId64, kd->name,
                      GROUPED_TABLE_MAX_EXPERTS, args->experts);
  /* the dense rules of its tile (dtype, mode, N and K multiples, group) on one expert's problem */
  w4a16_kernel_desc dense = *kd;
  dense.grouped = 0;
  w4a16_problem p = expert_problem(args);
  return w4a16_can_implement(&dense, &p);
}

/* Whether kd gathers A through args' row index before it runs (GROUPED_GATHER_FIRST_TILE) */
static int gathers_first(const w4a16_kernel_desc *kd, const w4a16_grouped_gemm_args *a) {
  return a->row_index && kd->family == W4A16_FAMILY_SM90 && kd->tile_m >= GROUPED_GATHER_FIRST_TILE;
}

/* The workspace of the gathered rows: rows x K elements of 2 bytes, rounded up to 256 bytes */
static size_t grouped_gather_bytes(const w4a16_grouped_gemm_args *a) {
  return ((size_t)a->rows * (size_t)a->k * 2u + 255u) / 256u * 256u;
}

/* The experts with rows expected where the rows pick experts independently and uniformly,
   E (1 - (1 - 1/E)^rows) (top-k routing picks k distinct experts a token: within 10 % on the
   benchmark's models) */
static double experts_used_expected(const w4a16_grouped_gemm_args *a) {
  const double e = (double)a->experts, rows = (double)(a->rows > 0 ? a->rows : 1);
  return e * (1.0 - pow(1.0 - 1.0 / e, rows));
}

/* The rows a used expert averages: rows / min(E, rows) (at least 1) */
static double rows_per_expert(const w4a16_grouped_gemm_args *a) {
  const int64_t used = a->experts < a->rows ? a->experts : (a->rows > 0 ? a->rows : 1);
  return (double)(a->rows > 0 ? a->rows : 1) / (double)used;
}

/* Whether one expert's packed weights, N x K / 2 bytes, pass GROUPED_L2_EXPERT_BYTES */
static int expert_past_l2(const w4a16_grouped_gemm_args *a) {
  return (double)a->n * (double)a->k / 2.0 >= GROUPED_L2_EXPERT_BYTES;
}

/* The Hopper form's units of a token tile: used_est experts with rows (experts_used_expected) x
   ceil(per_expert / token_tile) token tiles an expert x ceil(N / col_tile) column tiles; its rule
   holds where they make enough rounds of one CTA an SM */
static double sm90_units(const w4a16_grouped_gemm_args *a, double used_est, double per_expert, int token_tile,
                         int col_tile) {
  return used_est * ceil(per_expert / token_tile) * (double)((a->n + col_tile - 1) / col_tile);
}

/* The fewest rows a used expert from which the Hopper form may take its 256-token tile
   (GROUPED_SM90_WIDE_ROWS, GROUPED_SM90_WIDE_ROWS_BIG; grouped_rank adds the rounds bound there) */
static double sm90_wide_rows(const w4a16_grouped_gemm_args *a) {
  return expert_past_l2(a) ? GROUPED_SM90_WIDE_ROWS_BIG : GROUPED_SM90_WIDE_ROWS;
}

w4a16_status w4a16_grouped_gemm_workspace_size(const w4a16_kernel_desc *kd, const w4a16_grouped_gemm_args *args,
                                               size_t *bytes) {
  if (!bytes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "bytes is NULL");
  *bytes = 0;
  w4a16_status st = kd ? w4a16_grouped_can_implement(kd, args) : w4a16_grouped_check_args(args);
  if (st != W4A16_STATUS_OK) return st;
  /* kernel NULL: what the selection may pick on any device (the rule's 256-token tile, which the
     device then may lack) */
  if (kd ? gathers_first(kd, args)
         : args->row_index && rows_per_expert(args) >= sm90_wide_rows(args))
    *bytes = grouped_gather_bytes(args);
  w4a16_clear_error();
  return W4A16_STATUS_OK; /* no grouped kernel splits K */
}

/* probe results per (device, grouped kernel): 0 unknown, 1 runs, 2 no image */
static atomic_schar *g_probe;
static size_t g_probe_kernels;
static pthread_once_t g_probe_once = PTHREAD_ONCE_INIT;

static void probe_init(void) {
  size_t n;
  w4a16_grouped_registry_table(&n);
  g_probe = calloc(n * GROUPED_MAX_DEVICES + 1, sizeof *g_probe);
  g_probe_kernels = g_probe ? n : 0;
}

/* OK where kd runs on the device info describes (compute capability, shared memory, an image) */
static w4a16_status runs_here(const w4a16_kernel_desc *kd, const w4a16_device_info *info) {
  if (info->cc < kd->sm_min || info->cc > kd->sm_max)
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH, "kernel %s was built for %s; the device is sm_%d", kd->name, kd->arch,
                      info->cc);
  if (kd->smem_bytes > info->max_smem_optin)
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH, "kernel %s needs %d bytes of shared memory per block; the device allows %d",
                      kd->name, kd->smem_bytes, info->max_smem_optin);
  if (!kd->impl || !kd->impl->probe || !kd->impl->grouped_launch)
    return w4a16_fail(W4A16_STATUS_NOT_SUPPORTED, "kernel %s has no compiled grouped implementation", kd->name);
  pthread_once(&g_probe_once, probe_init);
  size_t count;
  const w4a16_kernel_desc *table = w4a16_grouped_registry_table(&count);
  atomic_schar *slot = NULL;
  if (g_probe && kd >= table && kd < table + count && info->ordinal >= 0 && info->ordinal < GROUPED_MAX_DEVICES)
    slot = &g_probe[(size_t)info->ordinal * g_probe_kernels + (size_t)(kd - table)];
  int state = slot ? atomic_load(slot) : 0;
  if (state == 0) {
    int e = kd->impl->probe();
    if (e != 0) cudaGetLastError();
    state = e == 0 ? 1 : 2;
    if (slot) atomic_store(slot, (signed char)state);
  }
  if (state == 2)
    return w4a16_fail(W4A16_STATUS_ARCH_MISMATCH, "kernel %s (%s) has no machine code or PTX for the device sm_%d",
                      kd->name, kd->arch, info->cc);
  return W4A16_STATUS_OK;
}

/* rank key of kd for args (smaller first): the rule of w4a16_grouped_heuristic_query; gather_room:
   the workspace holds the gathered rows (grouped_gather_bytes) */
static double grouped_rank(const w4a16_kernel_desc *kd, const w4a16_grouped_gemm_args *a, int sm_count,
                           int gather_room) {
  const int64_t used = a->experts < a->rows ? a->experts : (a->rows > 0 ? a->rows : 1);
  const double per_expert = rows_per_expert(a);
  const int decode = per_expert <= GROUPED_DECODE_ROWS;
  if (kd->family == W4A16_FAMILY_GEMV && kd->schedule == W4A16_SCHEDULE_GEMV_TMA) {
    /* the TMA decode form (sm_90) ahead of the cp.async one, ranked by its stage (16 KB of weights:
       the 8 KB ones took about 1.6x the time a byte), then its column block, then its token tile.
       The column block by K and the balance of its units (expert, tile_n rows, 8 of its rows) over
       the CTAs (two an SM), from an H100 sweep (bench/moe_bench.py --sweep, the three models, T <=
       16; each choice within 5 % of the best of the three blocks but on one skewed routing): 64
       rows; 128 (256 of K a stage) where K is a multiple of 256 but not of 512 (the 64-row block's
       last stage would be half empty) and the 128-row units still give every CTA one; 32 where K >=
       4096 and the 64-row units leave the busiest CTA 10 % above the mean (long units: the balance
       of the last round pays more than a unit's fixed costs). The units count the experts with rows
       expected (experts_used_expected; min(E, rows) would count Mixtral's 4.5 experts at T = 4 as
       8). The token tile: 16 on the 64- and 128-row blocks from GROUPED_TILE16_ROWS rows a used
       expert expected, which serves an expert's 9-16 rows in one pass over its weights and a unit
       of at most 8 nearly at the cost of the 8-row tile (it skips the second token block; H100
       sweep, 1.5-4 rows a used expert: 0.85-1.03x tile 8's time); 8 below (about one row a used
       expert, where a unit's fixed costs weigh most: on Qwen3-30B-A3B and DeepSeek-V2-Lite at T = 1
       and 4, timed against the dense loop, tile 16 took 1.06x tile 8's time, geomean, 0.96-1.12x;
       two runs, H100, where Mixtral's unchanged kernels took 0.99-1.04x), on the 32-row block
       (whose 16-row kernels have 8 KB stages) and where the 16-row kernels are not built (groups
       below 128; spills); 4 measured no faster at one row an expert. */
    if (!decode) return 1e9 + kd->tile_n;
    const double rows = (double)(a->rows > 0 ? a->rows : 1);
    const double used_est = experts_used_expected(a);
    const double chunks = ceil(rows / (used_est > 1.0 ? used_est : 1.0) / 8.0);
    const double u64 = used_est * chunks * (double)((a->n + 63) / 64) / (2.0 * (sm_count > 0 ? sm_count : 132));
    const int want = a->k % 512 != 0 && a->k % 256 == 0 && u64 >= 2.0    ? 128
                     : a->k >= 4096 && ceil(u64) > 1.1 * u64 ? 32
                                                               : 64;
    const double block = kd->tile_n == want ? 0.0 : kd->tile_n == 64 ? 1.0 : 2.0;
    const int want_m = want == 32 || rows < GROUPED_TILE16_ROWS * used_est ? 8 : 16;
    return 500.0 + (kd->tile_n * kd->tile_k == 32768 ? 0.0 : 100.0) + 10.0 * block +
           (kd->tile_m == want_m ? 0.0 : kd->tile_m == 8 ? 1.0 : 2.0) + (double)kd->stages / 1000.0;
  }
  if (kd->family == W4A16_FAMILY_GEMV) {
    if (!decode) return 1e9 + kd->tile_n;
    /* the largest column block that still gives about two CTAs an SM (1.9: 256 CTAs on 132 SMs
       run as well as more, smaller ones; H100, bench/moe_bench.py --sweep); else the smallest */
    const double ctas = (double)used * (double)(a->n / kd->tile_n);
    if (ctas >= 1.9 * sm_count) return 1000.0 - kd->tile_n;
    return 2000.0 + kd->tile_n;
  }
  if (kd->family == W4A16_FAMILY_SM90) {
    const int big = expert_past_l2(a);
    const double used_est = experts_used_expected(a);
    const double sms = sm_count > 0 ? sm_count : 132;
    const int t32 = per_expert >= GROUPED_SM90_T32_MIN_ROWS && per_expert <= GROUPED_SM90_T32_MAX_ROWS &&
                    sm90_units(a, used_est, per_expert, 32, 256) >= GROUPED_SM90_T32_WAVES * sms;
    const int hopper = t32 || (big ? per_expert >= GROUPED_SM90_MIN_ROWS_BIG
                                   : per_expert > (a->k >= GROUPED_SM90_LONG_K ? GROUPED_SM90_MID_ROWS
                                                                               : GROUPED_SM90_MIN_ROWS));
    if (decode || !hopper)
      return (decode ? 2e6 : 5000.0) + kd->tile_m;
    const int wide = per_expert >= GROUPED_SM90_WIDE_ROWS ||
                     (per_expert >= sm90_wide_rows(a) &&
                      sm90_units(a, used_est, per_expert, 256, 128) >= GROUPED_SM90_WIDE_WAVES * sms);
    const int t96 = per_expert > GROUPED_SM90_T96_MIN_ROWS && per_expert <= GROUPED_SM90_T96_MAX_ROWS &&
                    sm90_units(a, used_est, per_expert, 96, 128) >= GROUPED_SM90_T96_WAVES * sms;
    const double want = t32                                                        ? 32.0
                        : t96                                                      ? 96.0
                        : per_expert <= GROUPED_SM90_NARROW_ROWS                   ? 64.0
                        : (!a->row_index || gather_room) && wide                   ? 256.0
                                                                                   : 128.0;
    const int want_k = want == 64.0 ? (a->row_index ? 128 : 256) : kd->tile_k;
    /* the nearest token tile, the wanted depth, four consumer warpgroups (the 32-token tile's), the
       narrower column tile */
    return 2000.0 + 100.0 * (kd->tile_m >= want ? kd->tile_m / want : want / kd->tile_m) +
           (kd->tile_k == want_k ? 0.0 : 10.0) + (kd->threads == 128 * 5 ? 0.0 : 1.0) + kd->tile_n / 1024.0;
  }
  /* sm80-class tensor-core: the token tile nearest the rows an expert (padding against reuse), then
     the column tile that fills the SMs */
  const double tile_cost = (double)kd->tile_m >= per_expert ? (double)kd->tile_m / per_expert : per_expert / kd->tile_m;
  const double tiles = (double)used * ceil(per_expert / kd->tile_m) *
                       (double)((a->n + kd->tile_n - 1) / kd->tile_n);
  const double fill = tiles >= sm_count ? 0.0 : 1.0 - tiles / sm_count;
  return (decode ? 1e6 : 3000.0) + 100.0 * tile_cost + 10.0 * fill + kd->tile_n / 1024.0;
}

static w4a16_status query(const w4a16_grouped_gemm_args *args, const w4a16_device_info *dev, int gather_room,
                          int requested, const w4a16_kernel_desc *out[], int *returned) {
  size_t count;
  const w4a16_kernel_desc *table = w4a16_grouped_registry_table(&count);
  int n = 0;
  const w4a16_kernel_desc *best[64];
  double key[64];
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *kd = &table[i];
    w4a16_quiet_begin();
    const int ok = w4a16_grouped_can_implement(kd, args) == W4A16_STATUS_OK &&
                   (!dev->cc || runs_here(kd, dev) == W4A16_STATUS_OK);
    w4a16_quiet_end();
    if (!ok) continue;
    const double k = grouped_rank(kd, args, dev->sm_count, gather_room);
    int j = n < 64 ? n++ : 64;
    if (j == 64) {
      if (k >= key[63]) continue;
      j = 63;
    }
    while (j > 0 && key[j - 1] > k) {
      key[j] = key[j - 1];
      best[j] = best[j - 1];
      --j;
    }
    key[j] = k;
    best[j] = kd;
  }
  *returned = 0;
  if (n == 0)
    return w4a16_fail(W4A16_STATUS_NO_KERNEL,
                      "no grouped kernel of this library can run N=%" PRId64 " K=%" PRId64 " group=%d %s %s on the device sm_%d",
                      args->n, args->k, args->group_size, w4a16_quant_mode_name(args->mode),
                      w4a16_dtype_name(args->dtype), dev->cc);
  for (int i = 0; i < n && i < requested; ++i) out[i] = best[i];
  *returned = n < requested ? n : requested;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_grouped_heuristic_query(const w4a16_grouped_gemm_args *args, int sm_count, int requested,
                                           const w4a16_kernel_desc *out[], int *returned) {
  if (!out || !returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "out or returned is NULL");
  *returned = 0;
  if (requested < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d is below 1", requested);
  if (sm_count < 0) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "sm_count = %d is negative", sm_count);
  w4a16_status st = w4a16_grouped_check_args(args);
  if (st != W4A16_STATUS_OK) return st;
  w4a16_device_info dev = {0};
  if (sm_count == 0) {
    if ((st = w4a16_current_device(&dev)) != W4A16_STATUS_OK) return st;
  } else {
    dev.sm_count = sm_count; /* a device described, not asked: every architecture's kernels rank */
  }
  return query(args, &dev, 1, requested, out, returned);
}

/* The memo of w4a16_grouped_gemm's selections: the fields of args that the query reads, whether
   the workspace holds the gathered rows, and the device -> the kernel (the rule depends on nothing
   else: no generation) */
static w4a16_memo g_grouped_memo = W4A16_MEMO_INIT;

w4a16_status w4a16_grouped_select(const w4a16_grouped_gemm_args *args, const w4a16_device_info *dev, int gather_room,
                                  const w4a16_kernel_desc **kernel) {
  uint64_t key[W4A16_MEMO_WORDS];
  W4A16_MEMO_KEY(key, args->experts, args->rows, args->n, args->k, args->lda, args->ldd, args->group_size,
                 args->mode, args->dtype, args->row_index != NULL, gather_room, dev->sm_count, dev->cc, dev->ordinal);
  if ((*kernel = w4a16_memo_get(&g_grouped_memo, key, 0, NULL)) != NULL) return W4A16_STATUS_OK;
  const w4a16_kernel_desc *best[1];
  int got = 0;
  const w4a16_status st = query(args, dev, gather_room, 1, best, &got);
  if (st != W4A16_STATUS_OK) return st;
  *kernel = best[0];
  w4a16_memo_put(&g_grouped_memo, key, 0, best[0], 0);
  return W4A16_STATUS_OK;
}

static int misaligned(const void *p, uintptr_t to) { return ((uintptr_t)p & (to - 1)) != 0; }

w4a16_status w4a16_grouped_check_pointers(const w4a16_grouped_gemm_args *a) {
  if (!a->a) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "A (args->a) is NULL");
  if (!a->w) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "packed weights (args->w) are NULL");
  if (!a->scales) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "scales (args->scales) are NULL");
  if (!a->d) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "D (args->d) is NULL");
  if (!a->offsets) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "expert offsets (args->offsets) are NULL");
  if (a->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !a->zeros)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "zeros (args->zeros) are NULL with FINEGRAINED_SCALE_AND_ZEROS");
  struct { const void *ptr; uintptr_t align; const char *name; } ptrs[] = {
      {a->a, 16, "A"}, {a->w, 16, "packed weights"}, {a->scales, 16, "scales"}, {a->d, 16, "D"},
      {a->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? a->zeros : NULL, 16, "zeros"},
      {a->offsets, a->offsets_type == W4A16_INDEX_INT64 ? 8 : 4, "expert offsets"},
      {a->row_index, 4, "row index"}, {a->row_scale, 4, "row scale"}, {a->status, 4, "status"}};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i)
    if (ptrs[i].ptr && misaligned(ptrs[i].ptr, ptrs[i].align))
      return w4a16_fail(W4A16_STATUS_MISALIGNED, "%s pointer %p is not %u-byte aligned", ptrs[i].name, ptrs[i].ptr,
                        (unsigned)ptrs[i].align);
  if (a->alpha != a->alpha) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "alpha is NaN");
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_grouped_gemm(const w4a16_grouped_gemm_args *args, const w4a16_kernel_desc *kernel, void *workspace,
                                size_t workspace_bytes, void *stream) {
  w4a16_status st = kernel ? w4a16_grouped_can_implement(kernel, args) : w4a16_grouped_check_args(args);
  if (st != W4A16_STATUS_OK) return st;
  if (args->rows == 0) {
    w4a16_clear_error();
    return W4A16_STATUS_OK;
  }
  if ((st = w4a16_grouped_check_pointers(args)) != W4A16_STATUS_OK) return st;
  w4a16_device_info dev;
  if ((st = w4a16_current_device(&dev)) != W4A16_STATUS_OK) return st;
  const int gather_room = args->row_index && workspace && workspace_bytes >= grouped_gather_bytes(args);
  if (!kernel) {
    if ((st = w4a16_grouped_select(args, &dev, gather_room, &kernel)) != W4A16_STATUS_OK) return st;
  } else if ((st = runs_here(kernel, &dev)) != W4A16_STATUS_OK) {
    return st;
  } else if (gathers_first(kernel, args) && !gather_room) {
    return w4a16_fail(W4A16_STATUS_WORKSPACE_TOO_SMALL,
                      "kernel %s gathers the %" PRId64 " rows through the row index into %zu bytes of workspace, "
                      "got %zu%s",
                      kernel->name, args->rows, grouped_gather_bytes(args), workspace ? workspace_bytes : 0,
                      workspace ? "" : " (NULL)");
  }
  const int gather_first = gather_room && gathers_first(kernel, args);
  if (gather_first && misaligned(workspace, 16))
    return w4a16_fail(W4A16_STATUS_MISALIGNED, "workspace pointer %p is not 16-byte aligned", workspace);
  struct w4a16_grouped_launch_params lp = {
      .a = args->a, .w = args->w, .scales = args->scales,
      .zeros = args->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? args->zeros : NULL, .offsets = args->offsets,
      .row_index = args->row_index, .row_scale = args->row_scale, .d = args->d, .status = args->status,
      .lda = args->lda ? args->lda : args->k, .ldd = args->ldd ? args->ldd : args->n, .experts = (int)args->experts,
      .rows = (int)args->rows, .a_rows = args->row_index ? (int)args->a_rows : (int)args->rows, .n = (int)args->n,
      .k = (int)args->k, .group_size = args->group_size == 0 ? (int)args->k : args->group_size,
      .offsets64 = args->offsets_type == W4A16_INDEX_INT64, .alpha = args->alpha, .sm_count = dev.sm_count,
      .no_pdl = (grouped_flags(args) & W4A16_GEMM_NO_PDL) != 0};
  if (gather_first) {
    /* A in grouped order into the workspace, then the kernel on it; the row index stays for the
       status word. The kernel follows one of this library's, so it may launch programmatically. */
    int e = w4a16_gather_rows_launch(args->a, lp.lda, args->row_index, lp.rows, lp.a_rows, lp.k, workspace,
                                     dev.sm_count, !lp.no_pdl, stream);
    if (e != 0) return w4a16_fail_cuda(e, "w4a16_gather_rows launch");
    lp.a = workspace;
    lp.lda = lp.k;
    lp.a_gathered = 1;
    lp.no_pdl = 0;
  }
  int e = kernel->impl->grouped_launch(&lp, stream);
  if (e != 0) return w4a16_fail_cuda(e, kernel->name);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
