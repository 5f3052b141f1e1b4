/* select.c - the heuristic (rule table + cost model), selection for w4a16_gemm
   and w4a16_tune. The rule table is generated from heuristics/rules.tsv, the config
   cache lives in cache.c and the log callback in log.c. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_internal.h"

/* ------------------------------------------------------------------------- */
/* The rule table                                                            */
/* ------------------------------------------------------------------------- */

/* The built-in rules live in heuristics/rules.tsv, one row per rule with a note on
   what it is for; the generator renders them into heuristic_rules.c
   (w4a16_builtin_rules). Rules are tried in order; a kernel belongs to the first
   rule whose problem / device ranges hold and whose kernel conditions it meets. A
   rule's kernels form a tier; tiers rank in table order, the cost model below
   orders each tier, and every other kernel that can implement the problem follows
   in the "fallback" tier. */
#define ANY_FAMILY (-1)
#define N_RULES w4a16_builtin_rule_count

const w4a16_heuristic_rule *w4a16_heuristic_rules(size_t *count) {
  if (count) *count = N_RULES;
  return w4a16_builtin_rules;
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
   M = 1024 / 4096 under sustained load; with the halved
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

/* The estimate of kd on p with the launch plan's split-K and stream-K (the rules' part, plan.h). */
static float estimate_plan(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count, const w4a16_plan *plan,
                           float *waves_eff) {
  const int split = plan->split_k, stream_k = plan->stream_k != 0;
  const family_model *fm = ((int)kd->family >= 0 && (int)kd->family <= 2) ? &g_models[kd->family] : &g_models[0];
  double M = (double)p->m, N = (double)p->n, K = (double)p->k, S = sm_count > 0 ? sm_count : 1;
  double mt = div_up(M, kd->tile_m), nt = div_up(N, kd->tile_n); /* a part-full last tile counts whole */
  if (nt < 1) nt = 1;
  double ctas = mt * nt * split;
  /* stream-K (sm90, where the plan takes it): the tiles' K iterations spread evenly over the grid, so
     every wave is full (fractional waves of work) and the cut tiles pay a fixup */
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

float w4a16_heuristic_estimate_us(const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm_count, int split,
                                  float *waves_eff) {
  w4a16_plan plan;
  w4a16_plan_launch(kd, p, sm_count, 0, W4A16_PLAN_RULES, &plan);
  plan.split_k = split < 1 ? 1 : split;
  return estimate_plan(kd, p, sm_count, &plan, waves_eff);
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
   one CTA per SM on the H100), then the name */
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
    /* (the probe last: it loads the kernel's module, once per kernel and device) */
    w4a16_quiet_begin();
    const int ok =
        w4a16_can_implement(kd, p) == W4A16_STATUS_OK && (!dev || w4a16_kernel_runs_here(kd, dev) == W4A16_STATUS_OK);
    w4a16_quiet_end();
    if (!ok) continue;
    candidate *x = &c[nc++];
    x->kd = kd;
    w4a16_plan plan; /* the rules' part of the launch plan: split-K and stream-K */
    w4a16_plan_launch(kd, p, sm_count, 0, W4A16_PLAN_RULES, &plan);
    x->split = plan.split_k;
    x->est = estimate_plan(kd, p, sm_count, &plan, &x->waves_eff);
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

w4a16_status w4a16_heuristic_query_ex(const w4a16_problem *problem, const w4a16_heuristic_query_options *o,
                                      int requested, w4a16_heuristic_result out[], int *returned) {
  if (returned) *returned = 0;
  if (!o) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "options is NULL");
  if (o->struct_size != sizeof(w4a16_heuristic_query_options))
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                      "options->struct_size is %zu, expected sizeof(w4a16_heuristic_query_options) = %zu",
                      o->struct_size, sizeof(w4a16_heuristic_query_options));
  const w4a16_heuristic_rule *rules = o->rules ? o->rules : w4a16_builtin_rules;
  const size_t nrules = o->rules ? o->rule_count : (size_t)N_RULES;
  if (!o->rules && o->rule_count)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "options->rules is NULL with rule_count = %zu", o->rule_count);
  return w4a16_heuristic_query_rules(rules, nrules, o->table, o->count, o->sm_count, o->cc, o->mem_gbps, NULL, problem,
                                     requested, out, returned);
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
  return w4a16_heuristic_query_rules(w4a16_builtin_rules, N_RULES, table, count, dev.sm_count, dev.cc, dev.mem_gbps, &dev, problem,
                                     requested, out, returned);
}

/* ------------------------------------------------------------------------- */
/* Selection (w4a16_gemm with kernel == NULL)                                */
/* ------------------------------------------------------------------------- */

/* The memo of selections: problem + device -> kernel, so the hot path does no query. */
static w4a16_memo g_memo = W4A16_MEMO_INIT;

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
  if (w4a16_heuristic_query_rules(w4a16_builtin_rules, N_RULES, table, count, dev->sm_count, dev->cc, dev->mem_gbps, dev, p, 1, &r,
                                 &n) != W4A16_STATUS_OK ||
      n < 1)
    return NULL;
  *source = W4A16_SELECTED_BY_HEURISTIC;
  return r.kernel;
}

static const w4a16_kernel_desc *select_on(const w4a16_problem *p, const w4a16_device_info *dev,
                                          w4a16_selection_source *source) {
  const unsigned gen = w4a16_cache_generation();
  uint64_t key[W4A16_MEMO_WORDS];
  W4A16_MEMO_KEY(key, p->m, p->n, p->k, p->lda, p->ldd, p->group_size, p->mode, p->dtype, p->has_bias != 0,
                 dev->sm_count, dev->cc, dev->ordinal);
  int src_memo = 0;
  const w4a16_kernel_desc *kd = w4a16_memo_get(&g_memo, key, gen, &src_memo);
  if (kd) {
    *source = (w4a16_selection_source)src_memo;
    return kd;
  }
  /* not under the memo's lock: the query may log, open the cache and probe kernels */
  w4a16_selection_source src = W4A16_SELECTED_BY_HEURISTIC;
  kd = select_uncached(p, dev, &src);
  if (!kd) return NULL;
  *source = src;
  w4a16_memo_put(&g_memo, key, gen, kd, (int)src);
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
