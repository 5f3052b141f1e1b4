/* select.c - the heuristic (rule table + cost model), selection for w4a16_gemm,
   w4a16_tune, and the log callback. The config cache lives in cache.c. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_internal.h"

/* ------------------------------------------------------------------------- */
/* Logging                                                                   */
/* ------------------------------------------------------------------------- */

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static w4a16_log_fn g_log_fn;
static void *g_log_user;
static pthread_once_t g_log_once = PTHREAD_ONCE_INIT;
static int g_log_min = W4A16_LOG_WARNING; /* default sink's threshold; 4 = off */

const char *w4a16_log_level_name(w4a16_log_level level) {
  switch (level) {
  case W4A16_LOG_DEBUG: return "debug";
  case W4A16_LOG_INFO: return "info";
  case W4A16_LOG_WARNING: return "warning";
  case W4A16_LOG_ERROR: return "error";
  }
  return "?";
}

static void log_init(void) {
  const char *e = getenv("W4A16_LOG_LEVEL");
  if (!e || !*e) return;
  static const char *names[] = {"debug", "info", "warning", "error", "off"};
  for (int i = 0; i < 5; ++i)
    if (strcmp(e, names[i]) == 0) g_log_min = i;
}

void w4a16_set_log_callback(w4a16_log_fn fn, void *user) {
  pthread_mutex_lock(&g_log_mu);
  g_log_fn = fn;
  g_log_user = user;
  pthread_mutex_unlock(&g_log_mu);
}

void w4a16_log(w4a16_log_level level, const char *fmt, ...) {
  pthread_once(&g_log_once, log_init);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the callback is called under the lock: w4a16_set_log_callback() returning
     means the previous callback is no longer running (callbacks must not log) */
  pthread_mutex_lock(&g_log_mu);
  if (g_log_fn)
    g_log_fn(level, msg, g_log_user);
  else if ((int)level >= g_log_min)
    fprintf(stderr, "w4a16: %s: %s\n", w4a16_log_level_name(level), msg);
  pthread_mutex_unlock(&g_log_mu);
}

/* ------------------------------------------------------------------------- */
/* The rule table                                                            */
/* ------------------------------------------------------------------------- */

/*
 * Rules, tried in order; a kernel belongs to the first rule whose problem/device
 * ranges hold and whose kernel conditions it meets. A rule's kernels form a tier;
 * tiers rank in table order, the cost model orders each tier, and every other
 * kernel that can implement the problem follows in the "fallback" tier.
 *
 * Columns: name,
 *   m_min, m_max, n_min, n_max, k_min, k_max, sm_count_min, sm_count_max, cc_min, cc_max,
 *   family, tile_m_min, tile_m_max, tile_n_min, tile_n_max, stages_min, stages_max,
 *   m_tiles_max, min_waves_eff, tile_k_min, tile_k_max, modes, group_max, threads_min, threads_max,
 *   cluster_max, schedules, cluster_min, dtypes, mem_gbps_min, mem_gbps_max
 * (max 0 = unbounded; family -1 = any). Initial values, to be fitted against
 * `w4a16 tune --compare-heuristic --dump` on the device (docs/PERFORMANCE.md).
 */
#define ANY_FAMILY (-1)
static const w4a16_heuristic_rule g_rules[] = {
    /* H200 (cc 9.0, 132 SMs, 4.9 TB/s: mem_gbps_min 4500, above the H100 NVL's 4.0), decode: the TMA GEMV classes that run ahead
       of the H100 rows' picks on a profile of the built-in table's picks on an H200 (twenty-eighth
       session, docs/runs/session28/h200: the eight Llama-3 layers at M = 1, 2, 4, 8, 16; bf16 / fp16
       scale-only, bf16 zero points, bf16 per-column, groups of 128). At the higher bandwidth the
       8-token 32x8x1024 (3 stages) leads at M = 1 on 8192x8192 (the H100 rows' 32x4x1024 1.05x
       behind), at M = 2..8 on N = 6145..16384, K <= 8192 (1.01-1.03x) and at M = 1..8 on N > 16384
       (the H100 rows' 16x4x2048 / 16x8x2048 1.01-1.06x behind); the 2-stage 16-token 32x16x1024 at
       M = 9..16 on N <= 4096, K <= 8192 (the 3-stage one 1.03x behind); on 4096x4096 at M = 1..4 the
       2-stage 16x8x1024 for zero points and per-column scales (a "-zp-pc" row: 16x8x2048 1.03-1.07x
       behind at M = 1). Scale-only groups there keep the H100 rows: the 4-token 32x4x1024 ran 1.04-1.23x
       ahead of their 16x8 kernels among the eight layers but 1.16-1.24x behind them on 4096x4096
       profiled alone (docs/runs/session28/h200d), as on the H100. Then a second H200 profile (docs/runs/session28/h200b, M = 1..6, 8,
       12, 16): fp16 at M = 5..8 on K > 8192, N <= 6144 (4096x14336) takes 32x8x1024 too (16x8x2048
       1.04-1.07x behind; bf16 keeps it, 1.01-1.06x ahead there), and scale-only / per-column groups at
       M = 9..16 on N > 16384, K > 4096 (57344x8192) the 64x16x512 (3 stages; the H100 rows' 32x16x1024
       1.05-1.09x behind for scale-only, 1.14x for per-column; zero points keep the sm80 128x16x128).
       Elsewhere the H100 rows below
       hold (their picks within 1.5 % of the best on the H200's profile at M >= 32). Rows before every
       H100 row: groups of 32 / 64 take them too (not profiled on an H200). */
    {"h200-m1-1-n6145-8192-k0-8192", 1, 1, 6145, 8192, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    {"h200-m2-8-n6145-16384-k0-8192", 2, 8, 6145, 16384, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    {"h200-m1-8-n16385-up", 1, 8, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    {"h200-m1-4-n3585-4096-k0-8192-zp-pc", 1, 4, 3585, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, (1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    {"h200-m5-8-n0-6144-k8193-up-f16", 5, 8, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0,
     0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 1u << W4A16_DTYPE_F16, 4500, 0},
    {"h200-m9-16-n16385-up-k4097-up", 9, 16, 16385, 0, 4097, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 64, 64, 3, 3, 0, 0.0f, 512, 512, (1u << W4A16_FINEGRAINED_SCALE_ONLY) | (1u << W4A16_PER_COLUMN_SCALE_ONLY),
     0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    {"h200-m9-16-n0-4096-k0-8192", 9, 16, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 2, 2, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 4500, 0},
    /* H100 / H200 SXM (cc 9.0, 132 SMs): the kernel class (family, tile_n, tile_m, tile_k) per M
       bucket and N range (the narrow layers also by K), fitted by tools/fit_heuristic.py to a
       profile of the default kernels (the GEMV TMA schedule and the sm90 early weight reads
       included) on the eight Llama-3 layers (bf16, fgs, group 128; w4a16 tune
       --compare-heuristic --dump, 2026-11-24; five rows of M >= 257 refitted to two profiles of
       the seventh session's build, whose sm90 kernels run stream-K where a wave is part-empty:
       docs/runs/session7/heur/dump_a.tsv, dump_b.tsv; M <= 16 from two profiles of the fifth session's
       build (docs/runs/session5/final/dump_a.tsv, dump_b.tsv; the GEMV TMA kernels with 8 KB
       stages; the narrow short-K layers split at N = 4096, and a class narrowed to one stage
       count where its members' estimates tie: stages_min = stages_max), the other rows of M >= 17 (unchanged since
       the fourth session) jointly from its two final profiles (docs/runs/session4/final3/)
       and eight profiles of the same sm90 kernels
       (docs/runs/session4/final/, final2/); within a class the cost model picks, then the
       deeper pipeline (candidate_cmp). A row named "...-alt" follows its primary row with the class to
       use where the primary class cannot implement the problem (zero points, groups below a
       kernel's min_group, ...): fitted by tools/fit_heuristic_alt.py on profiles of seven other
       dtype / mode / group combinations (docs/runs/session5/modes/). A row named "...-zp" comes
       right before its primary row and holds for zero-point problems only (modes =
       1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS): the class that is faster than the primary's for
       zero points (tools/fit_heuristic_alt.py --zp on zero-point profiles of the sixth session's
       build, whose GEMV TMA kernels take zero points in the specialized consumer:
       docs/runs/session6/zpm16/dump_*_a.tsv; dump_bf16_fgsz_128_b.tsv held out). A row named
       "...-g64" comes before both and holds for groups of at most 64 (group_max = 64;
       tools/fit_heuristic_alt.py --g64 on docs/runs/session6/g3264/dump_*.tsv). Eighth session:
       the eight primary rows of M = 17..64 take the sm90 tile_k 256 classes (128x32x256,
       128x64x256), which run stream-K from M = 17 (runtime/families.c; tools/fit_heuristic.py on
       docs/runs/session8/sk17/dump_a.tsv, dump_b.tsv) and take zero points too, except M = 17..32 on
       N > 6144, where two "-zp" rows keep 256x32x128 for them (tools/fit_heuristic_alt.py --zp on
       docs/runs/session8/sk17/dump_zp.tsv); the "-zp" row of M = 17..32 on N <= 6144 is gone, and
       the "-alt" rows of M = 33..64 (128x64x128) now only serve builds without 128x64x256; groups of
       32 / 64 at M = 17..32: the "-g64" row of N <= 6144 is gone (128x32x256 1.14-1.16x faster there),
       two on N > 6144 keep 256x32x128 (tools/fit_heuristic_alt.py --g64 on
       docs/runs/session8/modes/dump_*.tsv; 128x32x256 was up to 1.16x slower at group 32). A class absent
       from the build matches nothing and the generic rules below decide. Ninth session: M = 97..128
       on N <= 6144, K <= 8192 takes 128x64x256 (two token tiles, stream-K) before the 128x128x128
       row of M = 65..128 (6144x4096 M = 128: 15.8 against 17.6 µs, 4096x4096 12.2 against 12.4;
       at M = 96 128x128x128 stays ahead: docs/runs/session9/final/dump.tsv, halves/). Tenth session:
       M = 17..32 on N > 16384, K <= 4096 (28672x4096), scale-only groups, takes 256x32x128 with four
       consumer warpgroups (threads 640, "_wg4"; M = 32: 26.1 against 28.4 us for 128x32x256 at group
       128, 27.6 against 29.0 at group 64, 29.7 against 30.0 for the two-warpgroup 256x32x128 at group
       32; with zero points the two-warpgroup 256x32x128 of the "-zp" row stays 1.03-1.09x ahead:
       docs/runs/session10/final/); the rows that bound no threads keep the two-warpgroup kernels
       (candidate_cmp: fewer threads first). With the last token tile's boxes clipped to its rows
       (sm90, tenth session) the primary rows of M = 257..512 split at 384: 128x128x128 up to 384 on
       every layer (up to 1.25x ahead of the 256-token class, 8192x28672 M = 384), the 256-token
       class (128x256x64) above, now also on N > 16384 (1.06-1.15x ahead at M = 448 / 512; profile
       docs/runs/session10/heur/dump_m257.tsv). The 256-token rows of M = 129..256 and 385..512 take no
       cluster kernels (cluster_max 1): 128x256x64 2x1x1 ran 0.97-1.36x the time of 1x1x1 there on
       every layer (bf16, group 128; docs/runs/session10/heur/, and 0.98-1.10x in the sixth session's
       docs/runs/session6/cl_default/), while the cost model let its halved activation reads win on
       the widest layers; from M = 513 the cluster rows stay as they were. Twelfth session: the
       "-g64" and "-zp" rows of M = 17..32 on N > 6144 are gone (128x32x256, sped up by the 2-D
       scale copy, the descriptor add and the 3-D tail copy, ran 1.10-1.29x ahead of their
       256x32x128 at groups of 32 / 64 and with zero points), and the M = 9..16 "-alt" row of
       N = 6145..16384 names the 128-row 16-token tiles (128x16x256 with the K pair 1.16-1.19x ahead
       of 256x16x128 on 8192x8192); w4a16 tune --replay on the profiles of this build
       (docs/runs/session12/heur4/: bf16 group 64, f16 group 32, f16 zero points, bf16 per-column,
       M = 1..128; and final2/heur.tsv): 47-48 of 48 and 88 of 88 within 10 %. Thirteenth session:
       with the one-row scale map (s2d_min_rows) 128x16x128 runs 1.07-1.10x ahead of the "-alt" row's
       128x16x256 on 10240x8192 at M = 16 for groups of 32 / 64 (80 tiles: split-K where 8192x8192's
       64 take the K pair), so the "-g64" row of N = 9217..16384 names it for scale-only groups <= 64
       (docs/runs/session13/heur: replayed 47 -> 48 of 48 for bf16 group 64, 47 of 48 for f16 group
       32, the others unchanged). The alternate rows refitted by tools/fit_heuristic_alt.py on this
       session's profiles (docs/runs/session13/heur, heur_g64row: groups of 32 / 64, zero points,
       per-column, M = 1..128): M = 9..16 takes sm90 128x16x128 on N <= 6144 with K > 8192 (was GEMV
       64x16x256) and on N = 4097..6144 (was 256x32x128), sm90 256x16x128 on N > 16384 (was sm80
       128x16x128), and M = 1 on N = 6145..16384 GEMV TMA 16x4x2048 (was sm90 256x16x128); replayed:
       bf16 group 64 worst 1.097 -> 1.066, the M = 9..16 profiles 23 -> 24 of 24 (bf16 group 64) and
       worst 1.084 -> 1.029 (f16 group 32). Fourteenth session: the table had only seen the eight
       Llama-3 layers; on 29 layers of other models (Llama-3.2-1B / 3B, Phi-3-mini, Qwen2.5-7B / 14B /
       32B / 72B, Gemma-2-9B, Llama-2-7B / 13B, Mixtral; docs/runs/session14/gen_a, gen_b) it kept
       74 % of bf16 group-128 problems at M = 1..256 within 10 % of the profiled best (worst 1.82x),
       56 % with zero points: where K is not a multiple of the primary GEMV TMA class's tile_k (1024 /
       2048; K = 3584, 11008, 13824, 18944, 29568) the primary rows had no "-alt" and the generic
       "decode-gemv" rule picked. Added: rows for the small layers (N <= 3584, K <= 8192) and the
       middle-width short-K layers (N = 6145..16384, K <= 6144), which hold none of the eight, before
       the rows of their M bucket (tools/fit_heuristic.py --extra: a primary class and its "-alt"
       class, at M <= 8 also an "-alt2" class, fitted together: GEMV TMA 16x4x2048 where 2048
       divides K, else 32x8x1024, else 16x8x512 at M = 1, say); "-alt" rows for the M <= 16 rows and three others
       (tools/fit_heuristic_alt.py on those profiles and the thirteenth session's mode profiles; a
       present alternate is kept unless the new class is clearly better); "-zp" and "-g64" rows
       (--zp / --g64 on zero-point and group-64 profiles of the same layers); and the four-warpgroup
       row of M = 17..32 holds only where its 256-row tiles fill 75 % of a wave (37888x3584: 148
       tiles, 1.48x slower than 128x32x256). Replayed (w4a16 tune --replay) on a third profile
       taken after the fit (docs/runs/session14/live1): other layers bf16 group 128 193 -> 239 of
       261 (worst 1.82 -> 1.30), zero points 81 -> 124 of 145 (worst 2.12 -> 1.40), groups of 64
       93 -> 129 of 145 (worst 1.79 -> 1.38); the eight layers unchanged (72 / 72, 88 / 88, the
       mode profiles 191 / 192 and 165 / 168). Seventeenth session: rows for M = 2 and 3..4 on
       N = 3585..4096, K <= 4096 take the 4-stage TMA GEMV (the schedules column tells it from the
       register-staged kernel of the same tiles and stages), which, since the TMA GEMV lets the next
       kernel's CTA beside two of its own there (gemv_tma.cuh), runs 4096x4096 in 4.35 µs against
       the 2-stage class's 4.56-4.60 (H100, docs/runs/session17/final/heur.tsv): replayed on that
       profile, worst 1.054 -> 1.039, 64 of 64 within 10 % either way. Nineteenth session: the rows
       of M = 513..2048 had not followed the 128x256x64 class's gains since the seventh session (M =
       1025..2048 on N > 6144 picked 128x128x128, 1.12-1.18x behind it; M = 513..640 on the narrow
       layers 128x256x64, 1.12-1.20x behind 128x128x128; the cost model's 2x1x1 cluster on the widest
       layers 1.15-1.33x behind 1x1x1): split at 768 (and the narrow long-K layers at 1536), the
       256-token rows of N > 6144 without clusters (cluster_max 1; likewise their "-g64" / "-zp" rows,
       and the N > 16384 "-g64" row from M = 769), chosen from two bf16 group-128 profiles of M =
       320..2048 (H100, docs/runs/session19/heur/dump_a.tsv, dump_b.tsv: replayed 74 / 73 -> 88 / 88
       of 88 within 10 %) and checked on M values they were not chosen on (docs/runs/session19/heur2:
       M = 576..1792 bf16 45 -> 53 of 56; M = 640 / 1024 / 1536 f16 16 -> 24, per-column 15 -> 24 of
       24; zero points 16 -> 24 and groups of 64 15 -> 24 of 24, whose rows' changes were read off
       these two profiles). Twenty-fifth session: a row for M = 9..16 on N = 4097..6144, K <= 4096
       (6144x4096 of the eight) takes the TMA GEMV with 8 KB stages, four of them (32x16x512), added to
       the default set for it (scale-only and per-column): at M = 16, bf16 group 128, 7.49-7.53 against
       7.74-7.78 us for the row after it (32x16x1024); w4a16 tune --compare-heuristic at M = 9 / 12 / 16
       (H100, docs/runs/session25/g16, g16b): bf16 scale-only the best (7.31-7.46 us), bf16 per-column
       2-3 % ahead of 32x16x1024, fp16 scale-only 1.035-1.049x behind it (the table has no dtype
       column; within the 10 % bar). Twenty-sixth session (profiles timed in rounds, runtime/timing.h;
       zero points, bf16 and f16 group 128, the eight layers at M = 2..16, two runs each:
       docs/runs/session26/zp): 79-84 % of those problems were within 10 % of the profiled best. Added
       "-zp" rows: M = 2 and 3..4 on N = 3585..4096, K <= 4096 take the 2-stage TMA GEMV 16x8x1024 (the
       scale-only rows' 4-stage kernel 1.11-1.13x behind it with zero points); M = 9..16 on N <= 6144,
       K = 8193..16384 the 3-stage TMA GEMV 32x16x1024 (4096x14336: the "-zp" row's sm90 128x16x256
       1.07-1.13x behind, once the GEMV's launch stopped letting the next kernel's CTA beside its one
       CTA per SM, gemv_tma.cuh; on session 14's 5120x27648 the GEMV 1.5x behind, so larger K and K
       that 1024 does not divide keep the 128x16x256 row after it); M = 9..16
       on N = 6145..16384 takes sm90 128x16x256 at every K (was K <= 6144: 10240x8192 and 8192x28672
       picked the GEMV 32x16x1024, 1.11-1.16x behind). Replayed: those profiles 100 % within 10 % (worst
       1.07), the zero-point profiles of the fourteenth session (other layers) unchanged, 198 of 225.
       Groups of 32 / 64 on profiles in rounds (bf16 group 64, f16 group 32, the eight layers at M = 1,
       2, 4, ..., 4096; docs/runs/session26/modes): the "-g64" row of M = 2 on N > 16384 (register-staged
       GEMV 32x8x512) ran 1.10-1.35x behind the primary row's TMA GEMV 16x4x2048 (1.01-1.02x of the
       best): gone; the "-g64" rows of M = 2 and 3..4 on N <= 4096, K <= 8192 take the TMA GEMV 32x4x1024
       (was 16x8x2048: 1.18-1.21x behind at groups of 32, within 1 % at 64). Replayed: 102 / 100 -> 104 /
       104 of 104. On the thirteenth and fourteenth sessions' group profiles 4096x4096 M = 4 now reads
       1.26-1.29x: those profiles timed 32x4x1024 at 5.4-5.7 us, before its launch stopped letting the
       next kernel's CTA beside its one CTA per SM (gemv_tma.cuh, this session; 4.30 us now).
       Twenty-seventh session, on the twenty-sixth's profiles in rounds (bf16 / f16 scale-only, bf16
       per-column, zero points, groups of 32 / 64; docs/runs/session26/rounds, modes, zp2) and this
       session's at M = 544..768, 1024..2048 (docs/runs/session27/heur, heur2): 128x256x64 2x1x1 ran
       0.97-0.995x the time of 1x1x1 at M = 1024 and 2048 on every layer but 4096x4096 at M = 1024
       (1.014-1.027x), where rows with cluster_max 1 or the cost model kept 1x1x1; and at M = 704..768
       the 256-token tiles (three a launch against six of 128) ran 1.03-1.21x ahead of the 128x128x128
       that the M = 513..768 rows named (M = 544..640, five 128-token tiles, keep it on N <= 6144 and
       N > 16384). Now: M = 641..1024 takes 128x256x64, M = 513..1024 on N = 6145..16384 and on K > 8192
       too; all of them and M = 1025..2048 on N <= 6144, K <= 8192 the 2x1x1 kernel (cluster_min 2, a new
       column), but N <= 4096, K <= 8192 (the cost model: 1x1x1); the other M = 1025..2048 rows lost
       cluster_max 1 (the cost model picks 2x1x1 there); "-zp" rows keep 1x1x1 at M = 769..1024 on
       N > 6144 and on K > 8192 (2x1x1 1.01-1.03x behind there with zero points). Zero points and
       per-column scales at M = 17..32 on N > 16384, K <= 4096 take the two-warpgroup 256x32x128 (a
       "-zp-pc" row: 1.02-1.03x ahead of the primary row's 128x32x256 in bf16 zero points, 1.10-1.11x in
       fp16, per-column 1.08x / 1.04x). Replayed: M = 544..768 from
       83-85 % to 100 % within 10 % (geomean 1.004, worst 1.08: 8192x8192 at M = 640, where 128x128x128
       stays ahead), M = 1024 / 2048 geomean 1.0006 / 1.0005 (worst 1.011), 28672x4096 M = 32 fp16 zero
       points 1.11 -> 1.00; the thirteenth session's sequential large-M profile (timed one kernel after
       the other, which favoured whichever ran first) reads 34 -> 32 of 40.
       Then profiles at M = 40..64 and 320..512 (docs/runs/session27/heur4): from M = 385 the 256-token
       class's 2x1x1 kernel on N = 4097..6144 (K <= 8192; 6144x4096 1.025-1.08x ahead of 128x128x128) and
       on N > 6144 (was 1x1x1 by cluster_max 1: 1.02-1.04x behind), zero points included; the "-zp" row
       of N = 6145..16384 starts at M = 385 (at M = 320..384 its 256-token tiles ran 1.08-1.23x behind the
       scale-only row's 128x128x128); M = 257..320 on N > 16384 takes 128x64x256 (five 64-token tiles
       against three of 128: 1.02-1.07x ahead at M = 320); M = 33..64 on N <= 4096 (was 3584) takes
       128x32x256 (4096x4096 at M = 64 1.04-1.07x ahead of 128x64x256, within 1.6 % at M = 40..56).
       Replayed on that profile: 60-64 -> 64 of 64 each (worst 1.23 -> 1.02).
       Decode, on the twenty-sixth session's profiles in rounds: M = 2..4 on N = 8449..16384 (more 32-row
       units than two CTAs an SM hold; 10240x8192) take the 4-stage TMA GEMV 32x4x1024 (the primary
       row's 32x8x1024 1.03-1.09x behind it in every dtype / mode but bf16 groups of 128, 1.025x); on
       8192x8192 the two are within 4 % either way (bf16 prefers 32x8, fp16 32x4), so N <= 8448 keeps
       the row. Zero points at M = 1 on N > 16384 lost their "-zp" row (TMA GEMV 128x8x256: 1.035-1.093x
       behind the scale-only row's 16x4x2048, bf16 and fp16, after the launch change of the twenty-sixth
       session). Per-column scales at M = 2..4 on N = 3585..4096, K <= 4096 take the zero points' 2-stage
       TMA GEMV 16x8x1024 (the "-zp-pc" rows; the scale-only rows' 4-stage one 1.04-1.13x behind in bf16
       and fp16). Replayed: M <= 16 geomean 1.0083 -> 1.0055, 37 -> 23 of 280 over 1.02 (before the
       per-column change). A dtype column (dtypes, after cluster_min): fp16 scale-only takes the 4-token
       TMA GEMV 32x4x1024 at M = 2..4 on N = 6145..8448 too (8192x8192: 1.035-1.051x ahead of 32x8x1024
       in four fp16 profiles, bf16 0.96-0.98x behind it) and the 3-stage 32x8x1024 at M = 5..8 on
       N = 3585..4096, K <= 8192 (4096x4096: 1.031-1.053x ahead of 16x8x1024 in three fp16 profiles;
       bf16 keeps 16x8x1024). On K > 8192 and N <= 6144 (4096x14336) the 256-token 2x1x1 kernel from
       M = 1153 (was 1537; profiles at M = 1088..1536, docs/runs/session27/heur9: 128x128x128 1.012-1.061x
       behind it at M = 1216..1536, within 1 % at 1088..1152).
       Twenty-eighth session: M = 513..640 on N = 6145..8192, K <= 8192 (8192x8192) takes 128x128x128
       (five 128-token tiles, 320 tiles of 64 weight rows, against three 256-token tiles padded to M =
       768: 1.025-1.08x ahead of the 256-token 2x1x1 kernel in bf16 / fp16 scale-only and bf16 zero
       points at M = 544..640, docs/runs/session27/heur2; from M = 704 2x1x1 leads by 1.07-1.12x); on
       10240x8192 and 8192x28672 the 256-token row stays (1.00-1.08x ahead). M = 9..16 on N = 3585..4096,
       K <= 4096 (4096x4096): scale-only and per-column groups take 6144x4096's 32x16x512 (4 stages),
       zero points the 2-stage 32x16x1024 (a "-zp" row); the row after them, whose tie-break picked the
       3-stage 32x16x1024, ran 1.037-1.070x behind (geomean; three profiles at M = 9..16, bf16 / fp16
       scale-only and per-column, bf16 zero points: docs/runs/session28/h100b), a lead since the
       twenty-sixth session's launch change (docs/runs/session26/final). Decode rows from a profile at
       M = 1..16 (docs/runs/session28/h100dec), each lead seen in earlier profiles too: 4096x4096 at
       M = 1 takes the 8-token 32x8x1024 (3 stages) for scale-only and per-column groups (16x8x2048
       1.03-1.07x behind; docs/runs/session27/heur3, heur7; on 4096x4096 profiled alone, h100dec2, the
       16x8 kernels lead it by 1-2 %), and bf16 scale-only at M = 9..16 on N > 16384, K > 4096
       (57344x8192) the 64x16x512 (3 stages; 32x16x1024 1.03-1.05x behind, 1.007x profiled alone; fp16
       and per-column keep it, 64x16x512 1.07-1.09x behind there). Not taken: fp16 scale-only at M = 2..4
       on 4096x4096 with the 4-stage 32x4x1024, which leads the 16x8 kernels by 1.03-1.08x among the
       eight layers but trails them by 1.17-1.26x profiled alone (h100dec2: bimodal, 4.2 or 5.0 us). */
    {"h100-m1-1-n0-3584-k0-8192", 1, 1, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n0-3584-k0-8192-alt", 1, 1, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n0-3584-k0-8192-alt2", 1, 1, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n6145-16384-k0-6144", 1, 1, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n6145-16384-k0-6144-alt", 1, 1, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n0-6144-k8193-up", 1, 1, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n0-6144-k8193-up-alt", 1, 1, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n6145-16384-zp", 1, 1, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n6145-16384", 1, 1, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n6145-16384-alt", 1, 1, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n16385-up", 1, 1, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n16385-up-alt", 1, 1, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n3585-4096-k0-8192-fgs-pc", 1, 1, 3585, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024,
     (1u << W4A16_FINEGRAINED_SCALE_ONLY) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m1-1-n0-4096-k0-8192", 1, 1, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n4097-6144-k0-8192", 1, 1, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1-1-n4097-6144-k0-8192-alt", 1, 1, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-3584-k0-8192", 2, 2, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-3584-k0-8192-alt", 2, 2, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-3584-k0-8192-alt2", 2, 2, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n6145-16384-k0-6144", 2, 2, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n6145-16384-k0-6144-alt", 2, 2, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-6144-k8193-up", 2, 2, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-6144-k8193-up-alt", 2, 2, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n6145-16384-zp", 2, 2, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n6145-8448-f16", 2, 2, 6145, 8448, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 4, 4, 0, 0.0f, 1024, 1024, 1u << W4A16_FINEGRAINED_SCALE_ONLY, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 1u << W4A16_DTYPE_F16, 0, 0},
    {"h100-m2-2-n8449-16384", 2, 2, 8449, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 4, 4, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m2-2-n6145-16384", 2, 2, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n6145-16384-alt", 2, 2, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n16385-up", 2, 2, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n16385-up-alt", 2, 2, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n0-4096-k0-8192-g64", 2, 2, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 64, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m2-2-n3585-4096-k0-4096-zp-pc", 2, 2, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, (1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m2-2-n3585-4096-k0-4096", 2, 2, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 4, 4, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m2-2-n0-4096-k0-8192", 2, 2, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n4097-6144-k0-8192", 2, 2, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2-2-n4097-6144-k0-8192-alt", 2, 2, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-3584-k0-8192", 3, 4, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-3584-k0-8192-alt", 3, 4, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-3584-k0-8192-alt2", 3, 4, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 512, 512, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n6145-16384-k0-6144", 3, 4, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n6145-16384-k0-6144-alt", 3, 4, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-6144-k8193-up", 3, 4, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-6144-k8193-up-alt", 3, 4, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n6145-8448-f16", 3, 4, 6145, 8448, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 4, 4, 0, 0.0f, 1024, 1024, 1u << W4A16_FINEGRAINED_SCALE_ONLY, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 1u << W4A16_DTYPE_F16, 0, 0},
    {"h100-m3-4-n8449-16384", 3, 4, 8449, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 4, 4, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m3-4-n6145-16384", 3, 4, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n6145-16384-alt", 3, 4, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n16385-up", 3, 4, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n16385-up-alt", 3, 4, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n0-4096-k0-8192-g64", 3, 4, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 4, 4, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 64, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m3-4-n3585-4096-k0-4096-zp-pc", 3, 4, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, (1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m3-4-n3585-4096-k0-4096", 3, 4, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 4, 4, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m3-4-n0-4096-k0-8192", 3, 4, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n4097-6144-k0-8192", 3, 4, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m3-4-n4097-6144-k0-8192-alt", 3, 4, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n0-3584-k0-8192", 5, 8, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n0-3584-k0-8192-alt", 5, 8, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n0-3584-k0-8192-alt2", 5, 8, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n6145-16384-k0-6144", 5, 8, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n6145-16384-k0-6144-alt", 5, 8, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n6145-16384-k0-6144-alt2", 5, 8, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n0-6144-k8193-up", 5, 8, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n0-6144-k8193-up-alt", 5, 8, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n6145-16384", 5, 8, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n6145-16384-alt", 5, 8, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n16385-up", 5, 8, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 0, 0, 0, 0.0f, 2048, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n16385-up-alt", 5, 8, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n3585-4096-k0-8192-f16", 5, 8, 3585, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 1u << W4A16_FINEGRAINED_SCALE_ONLY, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 1u << W4A16_DTYPE_F16, 0, 0},
    {"h100-m5-8-n0-4096-k0-8192", 5, 8, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 16, 16, 2, 2, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n4097-6144-k0-8192", 5, 8, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 8, 8, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m5-8-n4097-6144-k0-8192-alt", 5, 8, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-3584-k0-8192", 9, 16, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-3584-k0-8192-alt", 9, 16, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n6145-16384-zp", 9, 16, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n6145-16384-k0-6144", 9, 16, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n6145-16384-k0-6144-alt", 9, 16, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-6144-k8193-16384-zp", 9, 16, 0, 6144, 8193, 16384, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0,
     1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m9-16-n0-6144-k8193-up-zp", 9, 16, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-6144-k8193-up", 9, 16, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-6144-k8193-up-alt", 9, 16, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n9217-16384-g64", 9, 16, 9217, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 1u << W4A16_FINEGRAINED_SCALE_ONLY, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n6145-16384", 9, 16, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 2, 2, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n6145-16384-alt", 9, 16, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n16385-up-k4097-up-bf16", 9, 16, 16385, 0, 4097, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 64, 64, 3, 3, 0, 0.0f, 512, 512,
     1u << W4A16_FINEGRAINED_SCALE_ONLY, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 1u << W4A16_DTYPE_BF16, 0, 0},
    {"h100-m9-16-n16385-up-zp", 9, 16, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM80, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n16385-up", 9, 16, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 3, 3, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n16385-up-alt", 9, 16, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM80, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n3585-4096-k0-4096-zp", 9, 16, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 2, 2, 0, 0.0f, 1024, 1024,
     1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m9-16-n3585-4096-k0-4096", 9, 16, 3585, 4096, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 4, 4, 0, 0.0f, 512, 512,
     (1u << W4A16_FINEGRAINED_SCALE_ONLY) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m9-16-n0-4096-k0-8192", 9, 16, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n0-4096-k0-8192-alt", 9, 16, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n4097-6144-k0-8192-g64", 9, 16, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n4097-6144-k0-4096", 9, 16, 4097, 6144, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 4, 4, 0, 0.0f, 512, 512,
     (1u << W4A16_FINEGRAINED_SCALE_ONLY) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 0, 0, 0, 1u << W4A16_SCHEDULE_GEMV_TMA, 0, 0, 0, 0},
    {"h100-m9-16-n4097-6144-k0-8192", 9, 16, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_GEMV, 16, 16, 32, 32, 0, 0, 0, 0.0f, 1024, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m9-16-n4097-6144-k0-8192-alt", 9, 16, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 16, 16, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n0-3584-k0-8192", 17, 32, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n6145-16384-k0-6144", 17, 32, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n0-6144-k0-8192", 17, 32, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n0-6144-k8193-up", 17, 32, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n6145-16384", 17, 32, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n6145-16384-alt", 17, 32, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n16385-up-k0-4096-wg4", 17, 32, 16385, 0, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 256, 256, 0, 0, 0, 0.75f, 128, 128, 1u << W4A16_FINEGRAINED_SCALE_ONLY, 0, 640, 640, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n16385-up-k0-4096-zp-pc", 17, 32, 16385, 0, 0, 4096, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 256, 256, 0, 0, 0, 0.0f, 128, 128, (1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS) | (1u << W4A16_PER_COLUMN_SCALE_ONLY), 0, 384, 384, 0, 0, 0, 0, 0, 0},
    {"h100-m17-32-n16385-up", 17, 32, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n0-4096-k0-8192", 33, 64, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 32, 32, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n6145-16384-k0-6144", 33, 64, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n0-6144-k0-8192", 33, 64, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n0-6144-k0-8192-alt", 33, 64, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n0-6144-k8193-up", 33, 64, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n0-6144-k8193-up-alt", 33, 64, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n6145-16384", 33, 64, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n6145-16384-alt", 33, 64, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 256, 256, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n16385-up", 33, 64, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m33-64-n16385-up-alt", 33, 64, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m97-128-n0-6144-k0-8192", 97, 128, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n0-3584-k0-8192", 65, 128, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n6145-16384-k0-6144", 65, 128, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n0-6144-k0-8192", 65, 128, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n0-6144-k8193-up", 65, 128, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n6145-16384", 65, 128, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m65-128-n16385-up", 65, 128, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m129-256-n0-3584-k0-8192", 129, 256, 0, 3584, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m129-256-n6145-16384-k0-6144", 129, 256, 6145, 16384, 0, 6144, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m129-256-n0-6144-k0-8192", 129, 256, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m129-256-n0-6144-k8193-up", 129, 256, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m129-256-n6145-16384", 129, 256, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m129-256-n16385-up", 129, 256, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m257-512-n0-6144-k0-8192-g64", 257, 512, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m385-512-n4097-6144-k0-8192", 385, 512, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m257-512-n0-6144-k0-8192", 257, 512, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m257-384-n0-6144-k8193-up", 257, 384, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m385-512-n0-6144-k8193-up", 385, 512, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m257-512-n6145-16384-g64", 257, 512, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m385-512-n6145-16384-zp", 385, 512, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m257-384-n6145-16384", 257, 384, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m385-512-n6145-16384", 385, 512, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m257-320-n16385-up", 257, 320, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 64, 64, 128, 128, 0, 0, 0, 0.0f, 256, 256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m257-384-n16385-up", 257, 384, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m385-512-n16385-up", 385, 512, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m513-640-n0-6144-k0-8192", 513, 640, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m641-1024-n4097-6144-k0-8192", 641, 1024, 4097, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m641-1024-n0-4096-k0-8192", 641, 1024, 0, 4096, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m769-1024-n0-6144-k8193-up-zp", 769, 1024, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m513-1024-n0-6144-k8193-up", 513, 1024, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m513-640-n6145-8192-k0-8192", 513, 640, 6145, 8192, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m769-1024-n6145-16384-zp", 769, 1024, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {"h100-m513-1024-n6145-16384", 513, 1024, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m513-640-n16385-up", 513, 640, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m641-1024-n16385-up", 641, 1024, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m1025-2048-n0-6144-k0-8192", 1025, 2048, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m1025-1152-n0-6144-k8193-up", 1025, 1152, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 128, 128, 128, 128, 0, 0, 0, 0.0f, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1153-2048-n0-6144-k8193-up", 1153, 2048, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0},
    {"h100-m1025-2048-n6145-16384-g64", 1025, 2048, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1025-2048-n6145-16384-zp", 1025, 2048, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 1u << W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1025-2048-n6145-16384", 1025, 2048, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m1025-2048-n16385-up", 1025, 2048, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2049-up-n0-6144-k0-8192", 2049, 0, 0, 6144, 0, 8192, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2049-up-n0-6144-k8193-up", 2049, 0, 0, 6144, 8193, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2049-up-n6145-16384", 2049, 0, 6145, 16384, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"h100-m2049-up-n16385-up", 2049, 0, 16385, 0, 0, 0, 132, 132, 90, 90, W4A16_FAMILY_SM90, 256, 256, 128, 128, 0, 0, 0, 0.0f, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* generic rules, any device */
    /* decode: the GEMV family (tile_m = the largest M it handles, one pass over the weights) */
    {"decode-gemv", 1, 16, 0, 0, 0, 0, 0, 0, 80, 0, W4A16_FAMILY_GEMV, 0, 0, 0, 0, 0, 0, 1, 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* Hopper: wgmma kernels whose output tiles fill at least half of the last wave */
    {"sm90-waves", 1, 0, 0, 0, 0, 0, 0, 0, 90, 90, W4A16_FAMILY_SM90, 0, 0, 0, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* mma.sync kernels that fill the machine (split-K included) before poorly filled wgmma */
    {"sm80-waves", 1, 0, 0, 0, 0, 0, 0, 0, 80, 0, W4A16_FAMILY_SM80, 0, 0, 0, 0, 0, 0, 0, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm90", 1, 0, 0, 0, 0, 0, 0, 0, 90, 90, W4A16_FAMILY_SM90, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"sm80", 1, 0, 0, 0, 0, 0, 0, 0, 80, 0, W4A16_FAMILY_SM80, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};
#define N_RULES (sizeof g_rules / sizeof g_rules[0])

const w4a16_heuristic_rule *w4a16_heuristic_rules(size_t *count) {
  if (count) *count = N_RULES;
  return g_rules;
}

static int in_range64(int64_t v, int64_t lo, int64_t hi) { return v >= lo && (hi == 0 || v <= hi); }

static int rule_matches_problem(const w4a16_heuristic_rule *r, const w4a16_problem *p, int sm_count, int cc,
                                int mem_gbps) {
  return in_range64(p->m, r->m_min, r->m_max) && in_range64(p->n, r->n_min, r->n_max) &&
         in_range64(p->k, r->k_min, r->k_max) && in_range64(sm_count, r->sm_count_min, r->sm_count_max) &&
         in_range64(cc, r->cc_min, r->cc_max) && in_range64(mem_gbps, r->mem_gbps_min, r->mem_gbps_max) &&
         (r->modes == 0 || ((unsigned)p->mode < 32u && ((r->modes >> (unsigned)p->mode) & 1u) != 0)) &&
         (r->dtypes == 0 || ((unsigned)p->dtype < 32u && ((r->dtypes >> (unsigned)p->dtype) & 1u) != 0)) &&
         (r->group_max == 0 || w4a16_effective_group(p) <= r->group_max);  /* per-column: K */
}

static int rule_matches_kernel(const w4a16_heuristic_rule *r, const w4a16_kernel_desc *kd,
                               const w4a16_problem *p, float waves_eff) {
  if (r->family != ANY_FAMILY && (int)kd->family != r->family) return 0;
  if (!in_range64(kd->tile_m, r->tile_m_min, r->tile_m_max)) return 0;
  if (!in_range64(kd->tile_n, r->tile_n_min, r->tile_n_max)) return 0;
  if (!in_range64(kd->stages, r->stages_min, r->stages_max)) return 0;
  if (!in_range64(kd->tile_k, r->tile_k_min, r->tile_k_max)) return 0;
  if (!in_range64(kd->threads, r->threads_min, r->threads_max)) return 0;
  if (r->schedules != 0 && ((unsigned)kd->schedule >= 32u || ((r->schedules >> (unsigned)kd->schedule) & 1u) == 0))
    return 0;
  if (r->cluster_max > 0 || r->cluster_min > 0) {
    const int cl = (kd->cluster_n > 1 ? kd->cluster_n : 1) * (kd->cluster_m > 1 ? kd->cluster_m : 1) *
                   (kd->cluster_k > 1 ? kd->cluster_k : 1);
    if (r->cluster_max > 0 && cl > r->cluster_max) return 0;
    if (cl < r->cluster_min) return 0;
  }
  if (r->m_tiles_max > 0 && (p->m + kd->tile_m - 1) / kd->tile_m > r->m_tiles_max) return 0;
  if (waves_eff < r->min_waves_eff) return 0;
  return 1;
}

/* ------------------------------------------------------------------------- */
/* The cost model                                                            */
/* ------------------------------------------------------------------------- */

/*
 * Per-family throughput, as data. H100 SXM-like values scaled per SM:
 *  tflops_per_sm    dense fp16/bf16 math one SM reaches with the family's
 *                   largest tiles (dequantization included)
 *  m_half, n_half   tile_m / tile_n at which operand traffic and dequantization
 *                   cost half of that (efficiency t / (t + half))
 *  regs_per_thread  estimate for the occupancy (CTAs resident per SM)
 *  wave_us          fixed cost of each wave (prologue, pipeline fill, epilogue)
 */
typedef struct family_model {
  float tflops_per_sm, m_half, n_half;
  int regs_per_thread;
  float wave_us;
} family_model;

static const family_model g_models[3] = {
    [W4A16_FAMILY_SM80] = {3.0f, 8.0f, 16.0f, 168, 1.2f},
    [W4A16_FAMILY_SM90] = {5.0f, 16.0f, 32.0f, 170, 1.0f}, /* 384 threads: one CTA per SM */
    [W4A16_FAMILY_GEMV] = {2.0f, 4.0f, 0.0f, 64, 0.6f},
};

#define HBM_BYTES_PER_US_PER_SM 22700.0 /* ~3.0 TB/s over 132 SMs */
#define SM_BW_BOOST 2.5                  /* an SM alone can draw this many times its share */
#define L2_OVER_HBM 3.5                  /* activations re-read from L2 at this speedup */
#define WEIGHT_REREAD_COST 0.25          /* extra M tiles re-read weights mostly from L2 */
#define SPLITK_REDUCE_US 2.0             /* the separate reduce kernel's launch */
#define STREAMK_FIXUP_US 3.0             /* stream-K: partial tiles written, waited for and added */
/* a thread-block cluster's fixed cost (cluster launch, CTAs paced by the shared stages): measured
   on the H100, 128x256x64 2x1x1 against 1x1x1 lost 2-7 % at M = 256 / 512 and won 2.5-5 % at
   M = 1024 / 4096 under sustained load (docs/PERFORMANCE.md, sixth session); with the halved
   activation reads below, a few microseconds put the crossover near M = 1024 */
#define CLUSTER_FIXED_US 5.0
#define SMEM_PER_SM (228.0 * 1024)

static double div_up(double a, double b) { return ceil(a / b); }

/* CTAs of kd resident on one SM (shared memory, registers, threads), 1..8 */
static int occupancy(const w4a16_kernel_desc *kd, const family_model *fm) {
  int threads = kd->threads > 0 ? kd->threads : 128;
  double occ = 8;
  if (kd->smem_bytes > 0) occ = fmin(occ, floor(SMEM_PER_SM / (kd->smem_bytes + 1024.0)));
  occ = fmin(occ, floor(65536.0 / ((double)threads * fm->regs_per_thread)));
  occ = fmin(occ, floor(2048.0 / threads));
  return occ < 1 ? 1 : (int)occ;
}

float w4a16_heuristic_estimate_us(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count, int split,
                                  float *waves_eff) {
  const family_model *fm = ((int)kd->family >= 0 && (int)kd->family <= 2) ? &g_models[kd->family] : &g_models[0];
  if (split < 1) split = 1;
  double M = (double)p->m, N = (double)p->n, K = (double)p->k, S = sm_count > 0 ? sm_count : 1;
  double mt = div_up(M, kd->tile_m), nt = div_up(N, kd->tile_n); /* a part-full last tile counts whole */
  if (nt < 1) nt = 1;
  double ctas = mt * nt * split;
  /* stream-K (sm90, where the runtime takes it): the tiles' K iterations spread evenly over the
     grid, so every wave is full (fractional waves of work) and the cut tiles pay a fixup */
  const int stream_k = w4a16_choose_stream_k(kd, p, sm_count);
  if (waves_eff) *waves_eff = stream_k ? 1.0f : (float)(ctas / (div_up(ctas, S) * S));

  /* CTAs per SM in a full wave, and the waves */
  double per_sm = fmin(occupancy(kd, fm), div_up(ctas, S));
  double slots = S * per_sm;
  double waves = stream_k ? ctas / slots : div_up(ctas, slots);
  double full_waves = stream_k ? ctas / slots : floor(ctas / slots);
  double tail = stream_k ? 0 : ctas - full_waves * slots;

  /* memory: weights (+ scales, zeros) once per M tile, activations from L2, output */
  /* a cluster of cluster_n CTAs along N reads each activation tile once (TMA multicast), and
     one of cluster_m CTAs along M each weight tile */
  const double cn = kd->cluster_n > 1 ? kd->cluster_n : 1, cm = kd->cluster_m > 1 ? kd->cluster_m : 1;
  double group = (double)(p->mode == W4A16_PER_COLUMN_SCALE_ONLY || p->group_size <= 0 ? p->k : p->group_size);
  double wbytes = N * K / 2 + N * (K / group) * 2 * (p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 2 : 1);
  wbytes *= 1.0 + (mt - 1) * WEIGHT_REREAD_COST / cm;
  double abytes = M * K * 2 * nt / L2_OVER_HBM / cn;
  double obytes = M * N * 2 + (split > 1 ? M * N * 4.0 * split * 2 : 0);
  double bytes_per_cta = (wbytes + abytes + obytes) / ctas;
  double bw = HBM_BYTES_PER_US_PER_SM * S;
  double t_mem = full_waves * slots * bytes_per_cta / bw;
  if (tail > 0) {
    double frac = tail / slots * SM_BW_BOOST;
    t_mem += tail * bytes_per_cta / (bw * (frac < 1 ? frac : 1));
  }

  /* math: padded tiles at the family's per-SM rate, shared by the CTAs on an SM,
     discounted for small tiles */
  double eff = (kd->tile_m / (kd->tile_m + fm->m_half)) * (kd->tile_n / (kd->tile_n + fm->n_half));
  double flops_per_cta = 2.0 * kd->tile_m * kd->tile_n * (K / split);
  double t_math = waves * per_sm * flops_per_cta / (fm->tflops_per_sm * 1e6 * eff);

  double t = (t_mem > t_math ? t_mem : t_math) + 0.1 * (t_mem > t_math ? t_math : t_mem);
  t += ceil(waves) * fm->wave_us;
  if (split > 1) t += SPLITK_REDUCE_US;
  if (stream_k) t += STREAMK_FIXUP_US;
  if (cn * cm > 1) t += CLUSTER_FIXED_US;
  return (float)t;
}

/* ------------------------------------------------------------------------- */
/* The query                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct candidate {
  const w4a16_kernel_desc *kd;
  int tier; /* rule index, nrules for fallback */
  int split;
  float waves_eff, est;
} candidate;

/* rule tier, then the cost model's estimate; on equal estimates the deeper pipeline (more bytes
   in flight where the CTAs are too few to overlap each other's latency: the GEMV TMA kernels of
   one CTA per SM, H100, docs/PERFORMANCE.md), then the name */
static int candidate_cmp(const void *pa, const void *pb) {
  const candidate *a = pa, *b = pb;
  if (a->tier != b->tier) return a->tier < b->tier ? -1 : 1;
  if (a->est != b->est) return a->est < b->est ? -1 : 1;
  if (a->kd->stages != b->kd->stages) return a->kd->stages > b->kd->stages ? -1 : 1;
  /* the two-consumer-warpgroup sm90 kernel before the four of the same tile: the rows that do not
     bound threads were fitted before the four existed */
  if (a->kd->threads != b->kd->threads) return a->kd->threads < b->kd->threads ? -1 : 1;
  return strcmp(a->kd->name, b->kd->name);
}

w4a16_status w4a16_heuristic_query_rules(const w4a16_heuristic_rule *rules, size_t nrules,
                                         const w4a16_kernel_desc *table, size_t count, int sm_count, int cc,
                                         int mem_gbps, const w4a16_device_info *dev, const w4a16_problem *p,
                                         int requested, w4a16_heuristic_result out[], int *returned) {
  if (returned) *returned = 0;
  if (!p) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "returned is NULL");
  if (!out) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "out is NULL");
  if (!table && count) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "table is NULL");
  if (!rules && nrules) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "rules is NULL");
  if (requested < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d is less than 1", requested);
  if (sm_count < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "sm_count = %d is less than 1", sm_count);
  if (cc < 10) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "compute capability %d is not major*10+minor", cc);
  if (mem_gbps < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "mem_gbps = %d is negative (0 = unknown bandwidth)", mem_gbps);
  w4a16_status st = w4a16_check_problem_m(p, 0);
  if (st != W4A16_STATUS_OK) return st;
  /* M = 0 (an empty product, which w4a16_gemm runs as a no-op): the kernels are ranked as for M = 1,
     with no split and no workspace */
  const w4a16_problem *prob = p;
  const int empty = p->m == 0;
  w4a16_problem one;
  if (empty) {
    one = *p;
    one.m = 1;
    p = &one;
  }

  candidate stack_buf[256];
  candidate *c = count <= 256 ? stack_buf : malloc(count * sizeof *c);
  if (!c) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "heuristic: %zu candidates", count);
  size_t nc = 0, arch_ok = 0;
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *kd = &table[i];
    if (!kd->name || cc < kd->sm_min || cc > kd->sm_max) continue;
    ++arch_ok;
    if (w4a16_can_implement(kd, p) != W4A16_STATUS_OK) continue;
    /* last: the probe loads the kernel's module (once per kernel and device) */
    if (dev && w4a16_kernel_runs_here(kd, dev) != W4A16_STATUS_OK) continue;
    candidate *x = &c[nc++];
    x->kd = kd;
    x->split = w4a16_choose_split_k(kd, p, sm_count);
    x->est = w4a16_heuristic_estimate_us(kd, p, sm_count, x->split, &x->waves_eff);
    x->tier = (int)nrules;
    for (size_t r = 0; r < nrules; ++r)
      if (rule_matches_problem(&rules[r], p, sm_count, cc, mem_gbps) && rule_matches_kernel(&rules[r], kd, p, x->waves_eff)) {
        x->tier = (int)r;
        break;
      }
  }
  if (nc == 0) {
    if (c != stack_buf) free(c);
    return w4a16_fail(W4A16_STATUS_NO_KERNEL,
                      "no kernel can implement M=%" PRId64 " N=%" PRId64 " K=%" PRId64
                      " group=%d %s %s on sm_%d (%zu of %zu kernels cover its compute capability)",
                      p->m, p->n, p->k, p->group_size, w4a16_quant_mode_name(p->mode), w4a16_dtype_name(p->dtype),
                      cc, arch_ok, count);
  }
  qsort(c, nc, sizeof *c, candidate_cmp);
  int n = (int)(nc < (size_t)requested ? nc : (size_t)requested);
  for (int i = 0; i < n; ++i) {
    w4a16_heuristic_result *r = &out[i];
    r->kernel = c[i].kd;
    r->split_k = empty ? 1 : c[i].split;
    r->workspace_bytes = 0;
    w4a16_workspace_size(c[i].kd, prob, sm_count, &r->workspace_bytes); /* the runtime's own formula */
    r->waves_efficiency = c[i].waves_eff;
    r->estimated_us = c[i].est;
    r->rule_index = c[i].tier < (int)nrules ? c[i].tier : -1;
    r->rule = r->rule_index >= 0 && rules[r->rule_index].name ? rules[r->rule_index].name : "fallback";
  }
  if (c != stack_buf) free(c);
  *returned = n;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_heuristic_query_table(const w4a16_kernel_desc *table, size_t count, int sm_count, int cc,
                                         const w4a16_problem *problem, int requested, w4a16_heuristic_result out[],
                                         int *returned) {
  return w4a16_heuristic_query_table_mem(table, count, sm_count, cc, 0, problem, requested, out, returned);
}

w4a16_status w4a16_heuristic_query_table_mem(const w4a16_kernel_desc *table, size_t count, int sm_count, int cc,
                                             int mem_gbps, const w4a16_problem *problem, int requested,
                                             w4a16_heuristic_result out[], int *returned) {
  return w4a16_heuristic_query_rules(g_rules, N_RULES, table, count, sm_count, cc, mem_gbps, NULL, problem, requested,
                                     out, returned);
}

w4a16_status w4a16_heuristic_query(const w4a16_problem *problem, int requested, w4a16_heuristic_result out[],
                                   int *returned) {
  if (returned) *returned = 0;
  if (!problem) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!out || !returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "out or returned is NULL");
  if (requested < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d is less than 1", requested);
  w4a16_device_info dev;
  w4a16_status st = w4a16_current_device(&dev);
  if (st != W4A16_STATUS_OK) return st;
  size_t count;
  const w4a16_kernel_desc *table = w4a16_registry_table(&count);
  return w4a16_heuristic_query_rules(g_rules, N_RULES, table, count, dev.sm_count, dev.cc, dev.mem_gbps, &dev, problem,
                                     requested, out, returned);
}

/* ------------------------------------------------------------------------- */
/* Selection (w4a16_gemm with kernel == NULL)                                */
/* ------------------------------------------------------------------------- */

/* A small memo: problem + device -> kernel, so the hot path does no query. */
typedef struct memo_entry {
  w4a16_problem p;
  int sm_count, cc, ordinal;
  unsigned generation;
  int used;
  w4a16_selection_source source;
  const w4a16_kernel_desc *kd;
} memo_entry;

#define MEMO_SIZE 1024
#define MEMO_PROBE 8
static memo_entry g_memo[MEMO_SIZE];
static pthread_mutex_t g_memo_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t memo_hash(const w4a16_problem *p, int sm_count, int cc, int ordinal) {
  uint64_t v[] = {(uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->k, (uint64_t)p->lda, (uint64_t)p->ldd,
                  (uint64_t)p->group_size, (uint64_t)p->mode, (uint64_t)p->dtype, (uint64_t)(p->has_bias != 0),
                  (uint64_t)sm_count, (uint64_t)cc, (uint64_t)ordinal};
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
    h ^= v[i];
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

static int memo_same(const memo_entry *e, const w4a16_problem *p, int sm_count, int cc, int ordinal) {
  return e->used && e->p.m == p->m && e->p.n == p->n && e->p.k == p->k && e->p.lda == p->lda && e->p.ldd == p->ldd &&
         e->p.group_size == p->group_size && e->p.mode == p->mode && e->p.dtype == p->dtype &&
         (e->p.has_bias != 0) == (p->has_bias != 0) && e->sm_count == sm_count && e->cc == cc &&
         e->ordinal == ordinal;
}

static const w4a16_kernel_desc *select_uncached(const w4a16_problem *p, const w4a16_device_info *dev,
                                                w4a16_selection_source *source) {
  w4a16_config_cache *cache = w4a16_config_cache_default();
  if (cache) {
    const w4a16_kernel_desc *ks[16];
    int n = 0;
    if (w4a16_config_cache_lookup(cache, p, ks, 16, &n) == W4A16_STATUS_OK) {
      for (int i = 0; i < n; ++i)
        if (w4a16_can_implement(ks[i], p) == W4A16_STATUS_OK && w4a16_kernel_runs_here(ks[i], dev) == W4A16_STATUS_OK) {
          *source = W4A16_SELECTED_BY_CACHE;
          return ks[i];
        }
      w4a16_log(W4A16_LOG_INFO, "config cache entry for M=%" PRId64 " N=%" PRId64 " K=%" PRId64
                " names no kernel that can run it here; using the heuristic", p->m, p->n, p->k);
    }
  }
  size_t count;
  const w4a16_kernel_desc *table = w4a16_registry_table(&count);
  w4a16_heuristic_result r;
  int n = 0;
  if (w4a16_heuristic_query_rules(g_rules, N_RULES, table, count, dev->sm_count, dev->cc, dev->mem_gbps, dev, p, 1, &r,
                                 &n) != W4A16_STATUS_OK ||
      n < 1)
    return NULL;
  *source = W4A16_SELECTED_BY_HEURISTIC;
  return r.kernel;
}

static const w4a16_kernel_desc *select_on(const w4a16_problem *p, const w4a16_device_info *dev,
                                          w4a16_selection_source *source) {
  unsigned gen = w4a16_cache_generation();
  uint64_t h = memo_hash(p, dev->sm_count, dev->cc, dev->ordinal);
  pthread_mutex_lock(&g_memo_mu);
  for (int i = 0; i < MEMO_PROBE; ++i) {
    memo_entry *e = &g_memo[(h + (uint64_t)i) % MEMO_SIZE];
    if (memo_same(e, p, dev->sm_count, dev->cc, dev->ordinal) && e->generation == gen) {
      const w4a16_kernel_desc *kd = e->kd;
      *source = e->source;
      pthread_mutex_unlock(&g_memo_mu);
      return kd;
    }
  }
  pthread_mutex_unlock(&g_memo_mu);

  /* not under the lock: the query may log, open the cache and probe kernels */
  w4a16_selection_source src = W4A16_SELECTED_BY_HEURISTIC;
  const w4a16_kernel_desc *kd = select_uncached(p, dev, &src);
  if (!kd) return NULL;
  *source = src;

  pthread_mutex_lock(&g_memo_mu);
  memo_entry *slot = &g_memo[h % MEMO_SIZE];
  for (int i = 0; i < MEMO_PROBE; ++i) {
    memo_entry *e = &g_memo[(h + (uint64_t)i) % MEMO_SIZE];
    if (!e->used || memo_same(e, p, dev->sm_count, dev->cc, dev->ordinal) || e->generation != gen) {
      slot = e;
      break;
    }
  }
  slot->p = *p;
  slot->sm_count = dev->sm_count;
  slot->cc = dev->cc;
  slot->ordinal = dev->ordinal;
  slot->generation = gen;
  slot->source = src;
  slot->kd = kd;
  slot->used = 1;
  pthread_mutex_unlock(&g_memo_mu);
  return kd;
}

const w4a16_kernel_desc *w4a16_select_kernel(const w4a16_problem *problem, const w4a16_device_info *dev) {
  w4a16_selection_source src;
  const w4a16_kernel_desc *kd = select_on(problem, dev, &src);
  if (kd) w4a16_clear_error();
  return kd;
}

w4a16_status w4a16_select(const w4a16_problem *problem, const w4a16_kernel_desc **kernel,
                          w4a16_selection_source *source) {
  if (kernel) *kernel = NULL;
  if (!problem) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!kernel) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "kernel is NULL");
  w4a16_status st = w4a16_check_problem(problem);
  if (st != W4A16_STATUS_OK) return st;
  w4a16_device_info dev;
  if ((st = w4a16_current_device(&dev)) != W4A16_STATUS_OK) return st;
  w4a16_selection_source src = W4A16_SELECTED_BY_HEURISTIC;
  const w4a16_kernel_desc *kd = select_on(problem, &dev, &src);
  if (!kd) {
    if (w4a16_last_error_message()[0] == '\0')
      w4a16_fail(W4A16_STATUS_NO_KERNEL, "no kernel can run M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " here",
                 problem->m, problem->n, problem->k);
    return W4A16_STATUS_NO_KERNEL;
  }
  *kernel = kd;
  if (source) *source = src;
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

/* ------------------------------------------------------------------------- */
/* Tuning: profile one problem and store the ranking                         */
/* ------------------------------------------------------------------------- */

#define TUNE_KEEP 16

w4a16_status w4a16_tune(const w4a16_problem *problem, const w4a16_profile_options *options,
                        w4a16_profile_result *results, int requested, int *returned) {
  if (returned) *returned = 0;
  if (!problem) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (results && requested < 1)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d is less than 1", requested);
  size_t count;
  w4a16_registry_table(&count);
  int cap = (int)(count > 0 ? count : 1);
  if (results && requested > cap) cap = requested;
  w4a16_profile_result *all = calloc((size_t)cap, sizeof *all);
  if (!all) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "tune: %d profile rows", cap);
  int n = 0;
  w4a16_status st = w4a16_profile(problem, options, all, cap, &n);
  if (st != W4A16_STATUS_OK) {
    free(all);
    return st;
  }
  const w4a16_kernel_desc *best[TUNE_KEEP];
  int nb = 0;
  for (int i = 0; i < n && nb < TUNE_KEEP; ++i)
    if (all[i].status == W4A16_STATUS_OK && all[i].kernel) best[nb++] = all[i].kernel;
  w4a16_status store = W4A16_STATUS_OK;
  if (nb > 0) {
    w4a16_config_cache *cache = w4a16_config_cache_default();
    if (!cache) {
      store = W4A16_STATUS_IO_ERROR;
      w4a16_log(W4A16_LOG_WARNING, "tune: no config cache could be opened; the result is not stored");
    } else {
      store = w4a16_config_cache_store(cache, problem, best, nb);
    }
  }
  if (results) {
    int k = n < requested ? n : requested;
    memcpy(results, all, (size_t)k * sizeof *all);
    if (returned) *returned = k;
  }
  free(all);
  if (store != W4A16_STATUS_OK) return store; /* message set by the store */
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
