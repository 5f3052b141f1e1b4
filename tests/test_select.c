/* test_select.c - the heuristic on a fake registry: the rule matcher on small rule tables of the
   test's own (every condition of w4a16_heuristic_rule, inclusive bounds, first match, tier order,
   the fallback tier), the architecture filter, never a kernel that cannot implement the problem,
   the cost model, the waves efficiency, argument checks (no GPU needed); and, on a GPU, selection
   through the config cache and w4a16_gemm with no kernel. Tests that use the built-in rule table
   check only what every valid table gives (the ranking invariants, a well-formed table); its
   quality (heuristics/rules.tsv) is tested by replaying committed profiles
   (tests/python/test_heuristic_replay.py), so nothing here names its rows. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include "debug.h"
#include "select_internal.h"
#include "test_util.h"

#define K_(nm, fam, smlo, smhi, dt, md, tn, tm, tk, st, sk)                                                 \
  {.name = nm, .family = fam, .sm_min = smlo, .sm_max = smhi, .arch = (smlo == 90 ? "sm90a" : "sm80"),   \
   .dtype = dt, .mode = md, .tile_n = tn, .tile_m = tm, .tile_k = tk, .cluster_n = 1, .cluster_m = 1,     \
   .cluster_k = 1, .schedule = (fam == W4A16_FAMILY_GEMV ? (smlo == 90 ? W4A16_SCHEDULE_GEMV_TMA : W4A16_SCHEDULE_GEMV) \
                                : fam == W4A16_FAMILY_SM90 ? W4A16_SCHEDULE_PINGPONG                      \
                                                           : W4A16_SCHEDULE_MULTISTAGE),                  \
   .stages = st, .split_k = sk,                                                                           \
   .threads = (fam == W4A16_FAMILY_SM90 ? 384 : fam == W4A16_FAMILY_GEMV ? 256 : 128),                   \
   .smem_bytes = (fam == W4A16_FAMILY_SM90 ? 200000 : 40000), .min_group = 32, .impl = NULL}

/* an sm90 256x32x128 cooperative kernel with four consumer warpgroups (640 threads), 8 stages */
#define K4_(nm, dt, md)                                                                                     \
  {.name = nm, .family = W4A16_FAMILY_SM90, .sm_min = 90, .sm_max = 90, .arch = "sm90a", .dtype = dt,     \
   .mode = md, .tile_n = 256, .tile_m = 32, .tile_k = 128, .cluster_n = 1, .cluster_m = 1,               \
   .cluster_k = 1, .schedule = W4A16_SCHEDULE_COOPERATIVE, .stages = 8, .split_k = 12, .threads = 640,     \
   .smem_bytes = 200000, .min_group = 32, .impl = NULL}

/* a bf16 TMA GEMV kernel (sm90a) that takes fine-grained groups of at least `mg` only (tile_m 16) */
#define KG_(nm, md, tn, tm, tk, st, mg)                                                                     \
  {.name = nm, .family = W4A16_FAMILY_GEMV, .sm_min = 90, .sm_max = 90, .arch = "sm90a",                  \
   .dtype = W4A16_DTYPE_BF16, .mode = md, .tile_n = tn, .tile_m = tm, .tile_k = tk, .cluster_n = 1,       \
   .cluster_m = 1, .cluster_k = 1, .schedule = W4A16_SCHEDULE_GEMV_TMA, .stages = st, .split_k = 1,       \
   .threads = 256, .smem_bytes = 40000, .min_group = mg, .impl = NULL}

#define BF W4A16_DTYPE_BF16
#define FH W4A16_DTYPE_F16
#define FGS W4A16_FINEGRAINED_SCALE_ONLY
#define FGSZ W4A16_FINEGRAINED_SCALE_AND_ZEROS
#define GEMV W4A16_FAMILY_GEMV
#define S80 W4A16_FAMILY_SM80
#define S90 W4A16_FAMILY_SM90

/* a fake registry, sorted by name like the generated one; impl == NULL */
static const w4a16_kernel_desc fake[] = {
    K_("w4a16_gemv_bf16_u4_fgs_n128_m8_k256_s4_tma", GEMV, 90, 90, BF, FGS, 128, 8, 256, 4, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s2_tma", GEMV, 90, 90, BF, FGS, 16, 8, 1024, 2, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_sk8", GEMV, 80, 999, BF, FGS, 16, 8, 1024, 4, 8),
    K_("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_tma", GEMV, 90, 90, BF, FGS, 16, 8, 1024, 4, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n16_m8_k512_s4_sk8", GEMV, 80, 999, BF, FGS, 16, 8, 512, 4, 8),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s2_tma", GEMV, 90, 90, BF, FGS, 32, 16, 1024, 2, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s3_tma", GEMV, 90, 90, BF, FGS, 32, 16, 1024, 3, 1),
    KG_("w4a16_gemv_bf16_u4_fgs_n32_m16_k512_s4_tma", FGS, 32, 16, 512, 4, 128),
    KG_("w4a16_gemv_bf16_u4_fgsz_n32_m16_k512_s4_tma", FGSZ, 32, 16, 512, 4, 128),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m16_k256_s8_sk1", GEMV, 80, 999, BF, FGS, 32, 16, 256, 8, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m16_k256_s8_sk8", GEMV, 80, 999, BF, FGS, 32, 16, 256, 8, 8),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma", GEMV, 90, 90, BF, FGS, 32, 4, 1024, 4, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma", GEMV, 90, 90, BF, FGS, 32, 8, 1024, 3, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n64_m16_k512_s3_tma", GEMV, 90, 90, BF, FGS, 64, 16, 512, 3, 1),
    K_("w4a16_gemv_bf16_u4_fgs_n64_m8_k128_s4_sk1", GEMV, 80, 999, BF, FGS, 64, 8, 128, 4, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n16_m4_k2048_s3_tma", GEMV, 90, 90, BF, FGSZ, 16, 4, 2048, 3, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n16_m8_k1024_s2_tma", GEMV, 90, 90, BF, FGSZ, 16, 8, 1024, 2, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n16_m8_k1024_s4_tma", GEMV, 90, 90, BF, FGSZ, 16, 8, 1024, 4, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n32_m16_k1024_s2_tma", GEMV, 90, 90, BF, FGSZ, 32, 16, 1024, 2, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n32_m16_k1024_s3_tma", GEMV, 90, 90, BF, FGSZ, 32, 16, 1024, 3, 1),
    K_("w4a16_gemv_bf16_u4_fgsz_n32_m8_k1024_s3_tma", GEMV, 90, 90, BF, FGSZ, 32, 8, 1024, 3, 1),
    K_("w4a16_sm80_bf16_u4_fgs_128x128x64_s3", S80, 80, 999, BF, FGS, 128, 128, 64, 3, 16),
    K_("w4a16_sm80_bf16_u4_fgs_128x16x128_s4", S80, 80, 999, BF, FGS, 128, 16, 128, 4, 16),
    K_("w4a16_sm80_bf16_u4_fgs_128x64x64_s3", S80, 80, 999, BF, FGS, 128, 64, 64, 3, 16),
    K_("w4a16_sm80_bf16_u4_fgs_256x128x64_s3", S80, 80, 999, BF, FGS, 256, 128, 64, 3, 16),
    K_("w4a16_sm80_bf16_u4_fgs_64x32x64_s4", S80, 80, 999, BF, FGS, 64, 32, 64, 4, 16),
    K_("w4a16_sm80_bf16_u4_fgsz_128x16x128_s4", S80, 80, 999, BF, FGSZ, 128, 16, 128, 4, 16),
    K_("w4a16_sm80_f16_u4_fgs_128x16x128_s4", S80, 80, 999, FH, FGS, 128, 16, 128, 4, 16),
    K_("w4a16_sm90_bf16_u4_fgs_128x128x128_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 128, 128, 4, 1),
    K_("w4a16_sm90_bf16_u4_fgs_128x128x64_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 128, 64, 4, 1),
    K_("w4a16_sm90_bf16_u4_fgs_128x16x128_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 16, 128, 8, 12),
    K_("w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 16, 256, 8, 12),
    K_("w4a16_sm90_bf16_u4_fgs_128x16x64_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 16, 64, 6, 1),
    K_("w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 256, 64, 4, 1),
    K_("w4a16_sm90_bf16_u4_fgs_128x32x256_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 32, 256, 6, 12),
    K_("w4a16_sm90_bf16_u4_fgs_128x64x64_1x1x1_pingpong", S90, 90, 90, BF, FGS, 128, 64, 64, 5, 1),
    K_("w4a16_sm90_bf16_u4_fgs_256x128x64_1x1x1_pingpong", S90, 90, 90, BF, FGS, 256, 128, 64, 4, 1),
    K_("w4a16_sm90_bf16_u4_fgs_256x16x128_1x1x1_pingpong", S90, 90, 90, BF, FGS, 256, 16, 128, 8, 12),
    K4_("w4a16_sm90_bf16_u4_fgs_256x32x128_1x1x1_cooperative_wg4", BF, FGS),
    K_("w4a16_sm90_bf16_u4_fgs_256x32x128_1x1x1_pingpong", S90, 90, 90, BF, FGS, 256, 32, 128, 8, 12),
    K_("w4a16_sm90_bf16_u4_fgsz_128x16x256_1x1x1_pingpong", S90, 90, 90, BF, FGSZ, 128, 16, 256, 8, 12),
    K_("w4a16_sm90_bf16_u4_fgsz_128x32x256_1x1x1_pingpong", S90, 90, 90, BF, FGSZ, 128, 32, 256, 6, 12),
    K_("w4a16_sm90_bf16_u4_fgsz_128x64x256_1x1x1_pingpong", S90, 90, 90, BF, FGSZ, 128, 64, 256, 4, 12),
    K_("w4a16_sm90_bf16_u4_fgsz_256x16x128_1x1x1_pingpong", S90, 90, 90, BF, FGSZ, 256, 16, 128, 8, 12),
    K4_("w4a16_sm90_bf16_u4_fgsz_256x32x128_1x1x1_cooperative_wg4", BF, FGSZ),
    K_("w4a16_sm90_bf16_u4_fgsz_256x32x128_1x1x1_pingpong", S90, 90, 90, BF, FGSZ, 256, 32, 128, 8, 12),
    K_("w4a16_sm90_f16_u4_fgs_128x16x128_1x1x1_pingpong", S90, 90, 90, FH, FGS, 128, 16, 128, 8, 12),
    K_("w4a16_sm90_f16_u4_fgs_128x16x256_1x1x1_pingpong", S90, 90, 90, FH, FGS, 128, 16, 256, 8, 12),
};
#define NFAKE (sizeof fake / sizeof fake[0])
#define SM80_128X16X128 "w4a16_sm80_bf16_u4_fgs_128x16x128_s4"
#define SM90_128X128X64 "w4a16_sm90_bf16_u4_fgs_128x128x64_1x1x1_pingpong"
#define SM90_128X16X64 "w4a16_sm90_bf16_u4_fgs_128x16x64_1x1x1_pingpong"
#define SM90_128X256X64 "w4a16_sm90_bf16_u4_fgs_128x256x64_1x1x1_pingpong"

/* the fake kernel of that name (the tests name kernels, so that the table can grow) */
static const w4a16_kernel_desc *fake_named(const char *name) {
  for (size_t i = 0; i < NFAKE; ++i)
    if (strcmp(fake[i].name, name) == 0) return &fake[i];
  fail_msg("no fake kernel %s", name);
  return NULL;
}

static w4a16_problem bf16_problem(int64_t m, int64_t n, int64_t k) {
  return test_problem(m, n, k, 128, FGS, BF);
}

static int query(int sm, int cc, const w4a16_problem *p, w4a16_heuristic_result *out, int requested) {
  int n = -1;
  w4a16_status st = test_query_table(fake, NFAKE, sm, cc, p, requested, out, &n);
  assert_int_equal(st, W4A16_STATUS_OK);
  assert_true(n >= 1 && n <= requested);
  return n;
}

/* w4a16_heuristic_query_ex over table with the caller's rules[0 .. nrules) (rules NULL and nrules 0:
   no rule at all, every kernel in the fallback tier) on a device of sm SMs, compute capability cc
   and mem_gbps GB/s */
static w4a16_status query_rules(const w4a16_heuristic_rule *rules, size_t nrules, const w4a16_kernel_desc *table,
                                size_t count, int sm, int cc, int mem_gbps, const w4a16_problem *p, int requested,
                                w4a16_heuristic_result *out, int *returned) {
  static const w4a16_heuristic_rule unused = {.name = "unused"}; /* non-NULL rules: not the built-in table */
  assert_true(rules != NULL || nrules == 0);
  const w4a16_heuristic_query_options o = {.struct_size = sizeof o, .table = table, .count = count,
                                           .rules = rules ? rules : &unused, .rule_count = nrules,
                                           .sm_count = sm, .cc = cc, .mem_gbps = mem_gbps};
  return w4a16_heuristic_query_ex(p, &o, requested, out, returned);
}

/* every returned kernel can implement the problem, runs on cc, names the rule of its tier (rules NULL:
   the built-in table), and the order is (tier, estimate) */
static void check_ranking_rules(const w4a16_heuristic_rule *rules, size_t nrules, const w4a16_kernel_desc *table,
                                size_t count, const w4a16_problem *p, int cc, const w4a16_heuristic_result *r,
                                int n) {
  if (!rules) rules = w4a16_heuristic_rules(&nrules);
  for (int i = 0; i < n; ++i) {
    assert_true(r[i].kernel >= table && r[i].kernel < table + count);
    assert_int_equal(w4a16_can_implement(r[i].kernel, p), W4A16_STATUS_OK);
    assert_true(cc >= r[i].kernel->sm_min && cc <= r[i].kernel->sm_max);
    assert_non_null(r[i].rule);
    assert_true(r[i].waves_efficiency > 0.0f && r[i].waves_efficiency <= 1.0f + 1e-6f);
    assert_true(r[i].estimated_us > 0.0f);
    assert_true(r[i].split_k >= 1);
    if (r[i].rule_index < 0)
      assert_string_equal(r[i].rule, "fallback");
    else {
      assert_true((size_t)r[i].rule_index < nrules);
      assert_string_equal(r[i].rule, rules[r[i].rule_index].name);
    }
    if (r[i].split_k > 1)
      assert_true(r[i].workspace_bytes >= (size_t)r[i].split_k * (size_t)p->m * (size_t)p->n * sizeof(float));
    if (i > 0) {
      int ta = r[i - 1].rule_index < 0 ? 1 << 20 : r[i - 1].rule_index;
      int tb = r[i].rule_index < 0 ? 1 << 20 : r[i].rule_index;
      assert_true(ta <= tb);
      if (ta == tb) assert_true(r[i - 1].estimated_us <= r[i].estimated_us);
    }
  }
}

static void check_ranking_in(const w4a16_kernel_desc *table, size_t count, const w4a16_problem *p, int cc,
                             const w4a16_heuristic_result *r, int n) {
  check_ranking_rules(NULL, 0, table, count, p, cc, r, n);
}

static void check_ranking(const w4a16_problem *p, int cc, const w4a16_heuristic_result *r, int n) {
  check_ranking_in(fake, NFAKE, p, cc, r, n);
}

/* query_rules over the fake registry, which must return at least one kernel; the ranking checked */
static int query_fake_rules(const w4a16_heuristic_rule *rules, size_t nrules, int sm, int cc, int mem_gbps,
                            const w4a16_problem *p, w4a16_heuristic_result *out, int requested) {
  int n = -1;
  assert_int_equal(query_rules(rules, nrules, fake, NFAKE, sm, cc, mem_gbps, p, requested, out, &n), W4A16_STATUS_OK);
  assert_true(n >= 1 && n <= requested);
  check_ranking_rules(rules, nrules, fake, NFAKE, p, cc, out, n);
  return n;
}

static size_t implementable(const w4a16_problem *p, int cc) {
  size_t n = 0;
  for (size_t i = 0; i < NFAKE; ++i)
    if (cc >= fake[i].sm_min && cc <= fake[i].sm_max && w4a16_can_implement(&fake[i], p) == W4A16_STATUS_OK) ++n;
  return n;
}

/* a rule's M range, inclusive at both ends: the decode rule's GEMV tier at M = 1..16, the 16-row
   sm80 tile's rule up to M = 64 and the large-tile rule from M = 65 (cc 8.9: no sm90a kernel) */
static void test_rule_m_range(void **state) {
  (void)state;
  const w4a16_heuristic_rule rules[] = {
      {.name = "decode", .m_min = 1, .m_max = 16, .cc_min = 80, .family = GEMV},
      {.name = "small-m", .m_min = 1, .m_max = 64, .cc_min = 80, .family = S80, .tile_m_max = 16},
      {.name = "large-m", .m_min = 65, .cc_min = 80, .family = S80, .tile_m_min = 64},
  };
  w4a16_heuristic_result r[NFAKE];
  for (int64_t m = 1; m <= 80; ++m) {
    w4a16_problem p = bf16_problem(m, 4096, 4096);
    int n = query_fake_rules(rules, 3, 128, 89, 0, &p, r, (int)NFAKE);
    assert_int_equal((size_t)n, implementable(&p, 89));
    const int first = m <= 16 ? 0 : m <= 64 ? 1 : 2;
    assert_int_equal(r[0].rule_index, first);
    for (int i = 0; i < n; ++i) {
      const w4a16_kernel_desc *kd = r[i].kernel;
      int want = -1; /* the rule this kernel must be ranked by */
      if (kd->family == GEMV && m <= 16)
        want = 0;
      else if (kd->family == S80 && kd->tile_m <= 16 && m <= 64)
        want = 1;
      else if (kd->family == S80 && kd->tile_m >= 64 && m >= 65)
        want = 2;
      assert_int_equal(r[i].rule_index, want);
      if (kd->family == GEMV) assert_true(kd->tile_m >= m);
    }
  }
}

/* a rule's compute capability range, inclusive: the Hopper rule takes the sm90 kernels on cc 9.0 only,
   the Ampere rule the sm80 ones on cc 8.0 .. 8.9; elsewhere (and for every other kernel) the
   fallback tier */
static void test_rule_cc_range(void **state) {
  (void)state;
  const w4a16_heuristic_rule rules[] = {
      {.name = "hopper", .m_min = 1, .cc_min = 90, .cc_max = 90, .family = S90},
      {.name = "ampere", .m_min = 1, .cc_min = 80, .cc_max = 89, .family = S80},
  };
  w4a16_heuristic_result r[NFAKE];
  const int64_t ms[] = {32, 64, 256, 1024, 4096};
  const int ccs[] = {80, 86, 89, 90, 100};
  for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; ++c) {
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i) {
      w4a16_problem p = bf16_problem(ms[i], 8192, 8192);
      int n = query_fake_rules(rules, 2, ccs[c] == 90 ? 132 : 108, ccs[c], 0, &p, r, (int)NFAKE);
      assert_int_equal((size_t)n, implementable(&p, ccs[c]));
      const int want_first = ccs[c] == 90 ? 0 : ccs[c] < 90 ? 1 : -1;
      assert_int_equal(r[0].rule_index, want_first);
      for (int j = 0; j < n; ++j) {
        const int fam = (int)r[j].kernel->family;
        const int want = ccs[c] == 90 && fam == S90 ? 0 : ccs[c] < 90 && fam == S80 ? 1 : -1;
        assert_int_equal(r[j].rule_index, want);
      }
    }
  }
}

/* a rule's cluster_min keeps the kernels of smaller clusters (1x1x1 counts as 1) out of its tier */
static void test_rule_cluster_min(void **state) {
  (void)state;
  w4a16_kernel_desc one = *fake_named(SM90_128X256X64), two = one, four = one;
  two.name = "w4a16_sm90_bf16_u4_fgs_128x256x64_2x1x1_pingpong";
  two.cluster_n = 2;
  four.name = "w4a16_sm90_bf16_u4_fgs_128x256x64_2x2x1_pingpong";
  four.cluster_n = four.cluster_m = 2;
  const w4a16_kernel_desc table[3] = {one, two, four};
  w4a16_problem p = bf16_problem(256, 8192, 8192); /* where the cost model ranks 1x1x1 first */
  w4a16_heuristic_result r[3];
  int n = 0;
  w4a16_heuristic_rule rule = {.name = "clusters", .m_min = 1, .cc_min = 80, .family = -1, .cluster_min = 2};
  assert_int_equal(query_rules(&rule, 1, table, 3, 132, 90, 0, &p, 3, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 3);
  assert_string_equal(r[0].rule, "clusters");
  assert_string_equal(r[1].rule, "clusters");
  assert_true(r[0].kernel->cluster_n * r[0].kernel->cluster_m >= 2 && r[1].kernel->cluster_n * r[1].kernel->cluster_m >= 2);
  assert_string_equal(r[2].rule, "fallback");
  assert_int_equal(r[2].kernel->cluster_n, 1);
  /* with cluster_max: exactly two CTAs */
  rule.cluster_max = 2;
  assert_int_equal(query_rules(&rule, 1, table, 3, 132, 90, 0, &p, 3, r, &n), W4A16_STATUS_OK);
  assert_string_equal(r[0].rule, "clusters");
  assert_int_equal(r[0].kernel->cluster_n, 2);
  assert_int_equal(r[0].kernel->cluster_m, 1);
  assert_string_equal(r[1].rule, "fallback");
  assert_string_equal(r[2].rule, "fallback");
}

static void test_arch_filter(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  /* sm80 / sm89: no sm90a kernel, ever */
  int ccs[] = {80, 86, 89};
  for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; ++c) {
    for (int64_t m = 1; m <= 4096; m *= 4) {
      w4a16_problem p = bf16_problem(m, 4096, 4096);
      int n = query(108, ccs[c], &p, r, (int)NFAKE);
      for (int i = 0; i < n; ++i) assert_int_not_equal(r[i].kernel->family, W4A16_FAMILY_SM90);
      check_ranking(&p, ccs[c], r, n);
    }
  }
  /* sm100: sm80-class kernels (PTX forward) but no sm90a */
  w4a16_problem p = bf16_problem(64, 4096, 4096);
  int n = query(148, 100, &p, r, (int)NFAKE);
  for (int i = 0; i < n; ++i) assert_int_not_equal(r[i].kernel->family, W4A16_FAMILY_SM90);
  /* sm75: nothing */
  int got = 7;
  assert_int_equal(test_query_table(fake, NFAKE, 40, 75, &p, 4, r, &got), W4A16_STATUS_NO_KERNEL);
  assert_int_equal(got, 0);
  assert_true(strlen(w4a16_last_error_message()) > 0);
}

/* dtype and mode: only kernels of the problem's dtype and mode */
static void test_dtype_and_mode(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  w4a16_problem p = test_problem(16, 4096, 4096, 64, FGSZ, BF);
  int n = query(132, 90, &p, r, (int)NFAKE);
  assert_int_equal(n, 9); /* the sm80, six sm90 and two 16-token GEMV zero-point kernels (the other GEMV ones
                             stop at M = 8 or take groups of 128 and up) */
  for (int i = 0; i < n; ++i) {
    assert_int_equal(r[i].kernel->mode, FGSZ);
    assert_int_equal(r[i].kernel->dtype, BF);
  }
  p = test_problem(16, 4096, 4096, 64, FGS, FH);
  n = query(132, 90, &p, r, (int)NFAKE);
  assert_int_equal(n, 3); /* the fp16 sm80 128x16x128 and sm90 128x16x128, 128x16x256 */
  int have_sm80 = 0;
  for (int i = 0; i < n; ++i) {
    assert_int_equal(r[i].kernel->mode, FGS);
    assert_int_equal(r[i].kernel->dtype, FH);
    have_sm80 |= strcmp(r[i].kernel->name, "w4a16_sm80_f16_u4_fgs_128x16x128_s4") == 0;
  }
  assert_true(have_sm80);
  /* per-column: no kernel of that mode in the fake table */
  p = test_problem(16, 4096, 4096, 0, W4A16_PER_COLUMN_SCALE_ONLY, BF);
  int got = 3;
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 4, r, &got), W4A16_STATUS_NO_KERNEL);
  assert_int_equal(got, 0);
}

/* kernels the cost model cannot tell apart (same tile, same estimate) rank the deeper pipeline
   first, whatever their order in the table */
static void test_tie_prefers_more_stages(void **state) {
  (void)state;
  w4a16_kernel_desc two[2] = {*fake_named(SM80_128X16X128), *fake_named(SM80_128X16X128)};
  two[0].name = "w4a16_sm80_bf16_u4_fgs_128x16x128_s3";
  two[0].stages = 3;
  two[1].name = "w4a16_sm80_bf16_u4_fgs_128x16x128_s4";
  two[1].stages = 4;
  w4a16_problem p = bf16_problem(16, 4096, 4096);
  assert_float_equal(w4a16_heuristic_estimate_us(&two[0], &p, 132, 1, NULL),
                     w4a16_heuristic_estimate_us(&two[1], &p, 132, 1, NULL), 0.0f);
  w4a16_heuristic_result r[2];
  int n = 0;
  assert_int_equal(query_rules(NULL, 0, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[1]);
  assert_ptr_equal(r[1].kernel, &two[0]);
  /* and within a rule's tier */
  const w4a16_heuristic_rule any = {.name = "any", .m_min = 1, .cc_min = 80, .family = -1};
  assert_int_equal(query_rules(&any, 1, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[1]);
  assert_string_equal(r[1].rule, "any");
}

/* the fallback tier: every kernel that no rule ranks (here one of a family the rules do not know, and
   an sm90 kernel the cost model puts ahead of the ranked sm80 one) comes back, after every rule's
   tier, ordered by the cost model */
static void test_fallback(void **state) {
  (void)state;
  w4a16_kernel_desc future = *fake_named(SM80_128X16X128);
  future.name = "w4a16_sm100_bf16_u4_fgs_128x16x128";
  future.family = (w4a16_family)3;
  const w4a16_heuristic_rule rules[] = {{.name = "sm80-family", .m_min = 1, .cc_min = 80, .family = S80},
                                        {.name = "gemv-family", .m_min = 1, .cc_min = 80, .family = GEMV}};
  w4a16_heuristic_result r[4];
  int n = 0;
  w4a16_problem p = bf16_problem(64, 4096, 4096);
  assert_int_equal(query_rules(rules, 2, &future, 1, 132, 90, 0, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_ptr_equal(r[0].kernel, &future);
  assert_int_equal(r[0].rule_index, -1);
  assert_string_equal(r[0].rule, "fallback");
  /* the built-in table too returns such a kernel */
  assert_int_equal(test_query_table(&future, 1, 132, 90, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_ptr_equal(r[0].kernel, &future);
  /* beside a ranked kernel, the fallback tier comes last, even where the model puts it first */
  const w4a16_kernel_desc three[3] = {future, *fake_named(SM90_128X16X64), *fake_named(SM80_128X16X128)};
  assert_true(w4a16_heuristic_estimate_us(&three[1], &p, 132, 1, NULL) <
              w4a16_heuristic_estimate_us(&three[2], &p, 132, 1, NULL));
  assert_int_equal(query_rules(rules, 2, three, 3, 132, 90, 0, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 3);
  assert_ptr_equal(r[0].kernel, &three[2]);
  assert_string_equal(r[0].rule, "sm80-family");
  assert_int_equal(r[0].rule_index, 0);
  for (int i = 1; i < 3; ++i) {
    assert_true(r[i].kernel == &three[0] || r[i].kernel == &three[1]);
    assert_string_equal(r[i].rule, "fallback");
    assert_int_equal(r[i].rule_index, -1);
  }
  assert_true(r[1].estimated_us <= r[2].estimated_us);
  check_ranking_rules(rules, 2, three, 3, &p, 90, r, n);
  /* no rule at all: everything is fallback, ordered by the model alone */
  assert_int_equal(query_rules(NULL, 0, three, 3, 132, 90, 0, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 3);
  int at_sm90 = -1, at_sm80 = -1;
  for (int i = 0; i < 3; ++i) {
    assert_string_equal(r[i].rule, "fallback");
    if (r[i].kernel == &three[1]) at_sm90 = i;
    if (r[i].kernel == &three[2]) at_sm80 = i;
    if (i > 0) assert_true(r[i - 1].estimated_us <= r[i].estimated_us);
  }
  assert_true(at_sm90 >= 0 && at_sm80 > at_sm90);
}

/* no kernel's tile divides N: NO_KERNEL with a message, nothing returned */
static void test_no_kernel(void **state) {
  (void)state;
  w4a16_heuristic_result r[4];
  int n = 5;
  w4a16_problem p = bf16_problem(64, 48, 4096); /* N % 16 == 0 but no tile_n divides 48 */
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 4, r, &n), W4A16_STATUS_NO_KERNEL);
  assert_int_equal(n, 0);
  assert_non_null(strstr(w4a16_last_error_message(), "N=48"));
  /* the ranking loop's refusals were not recorded, and a refusal after it is */
  assert_null(strstr(w4a16_last_error_message(), fake[0].name));
  assert_int_not_equal(w4a16_can_implement(&fake[0], &p), W4A16_STATUS_OK);
  assert_non_null(strstr(w4a16_last_error_message(), fake[0].name));
  /* an empty table */
  assert_int_equal(test_query_table(NULL, 0, 132, 90, &p, 4, r, &n), W4A16_STATUS_NO_KERNEL);
}

static void test_arguments(void **state) {
  (void)state;
  w4a16_heuristic_result r[4];
  int n = 9;
  w4a16_problem p = bf16_problem(64, 4096, 4096);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, NULL, 4, r, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(n, 0);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 4, NULL, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 4, r, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(test_query_table(NULL, 3, 132, 90, &p, 4, r, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 0, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "requested"));
  assert_int_equal(test_query_table(fake, NFAKE, 0, 90, &p, 4, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "sm_count"));
  assert_int_equal(test_query_table(fake, NFAKE, 132, 0, &p, 4, r, &n), W4A16_STATUS_INVALID_VALUE);
  w4a16_problem bad = bf16_problem(-1, 4096, 4096);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &bad, 4, r, &n), W4A16_STATUS_INVALID_SHAPE);
  /* M = 0 (a no-op for w4a16_gemm): ranked as M = 1, unsplit, no workspace */
  w4a16_problem empty = bf16_problem(0, 4096, 4096), one = bf16_problem(1, 4096, 4096);
  w4a16_heuristic_result r1[4];
  int n1 = 0;
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &empty, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &one, 4, r1, &n1), W4A16_STATUS_OK);
  assert_int_equal(n, n1);
  for (int i = 0; i < n; ++i) {
    assert_ptr_equal(r[i].kernel, r1[i].kernel);
    assert_int_equal(r[i].split_k, 1);
    assert_int_equal(r[i].workspace_bytes, 0);
  }
  bad = bf16_problem(16, 4096, 4000);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &bad, 4, r, &n), W4A16_STATUS_INVALID_SHAPE);
  bad = test_problem(16, 4096, 4096, 48, FGS, BF);
  assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &bad, 4, r, &n),
                   W4A16_STATUS_UNSUPPORTED_GROUP_SIZE);
  /* the options themselves */
  assert_int_equal(w4a16_heuristic_query_ex(&p, NULL, 4, r, &n), W4A16_STATUS_NULL_POINTER);
  w4a16_heuristic_query_options o = {.struct_size = sizeof o - 4, .table = fake, .count = NFAKE, .sm_count = 132, .cc = 90};
  assert_int_equal(w4a16_heuristic_query_ex(&p, &o, 4, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "struct_size"));
  o.struct_size = sizeof o;
  o.rule_count = 2;
  assert_int_equal(w4a16_heuristic_query_ex(&p, &o, 4, r, &n), W4A16_STATUS_NULL_POINTER);
  assert_non_null(strstr(w4a16_last_error_message(), "rule_count = 2"));
  /* a caller's rule table: its one rule names the tier of the kernels it matches */
  const w4a16_heuristic_rule mine = {.name = "mine", .family = W4A16_FAMILY_SM80};
  o.rules = &mine;
  o.rule_count = 1;
  assert_int_equal(w4a16_heuristic_query_ex(&p, &o, 4, r, &n), W4A16_STATUS_OK);
  assert_true(n >= 1);
  assert_string_equal(r[0].rule, "mine");
  assert_int_equal(r[0].rule_index, 0);
  assert_int_equal(r[0].kernel->family, W4A16_FAMILY_SM80);
  o.rules = NULL;
  o.rule_count = 0;
  expect_status(w4a16_heuristic_query_ex(NULL, &o, 4, r, &n), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  expect_status(w4a16_heuristic_query_ex(&p, &o, 4, NULL, &n), W4A16_STATUS_NULL_POINTER, "out is NULL");
  expect_status(w4a16_heuristic_query_ex(&p, &o, 4, r, NULL), W4A16_STATUS_NULL_POINTER, "returned is NULL");
  /* the registry variant checks its arguments before looking for a GPU */
  expect_status(w4a16_heuristic_query(NULL, 4, r, &n), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  assert_int_equal(w4a16_heuristic_query(&p, 0, r, &n), W4A16_STATUS_INVALID_VALUE);
  expect_status(w4a16_heuristic_query(&p, 4, NULL, &n), W4A16_STATUS_NULL_POINTER, "out or returned is NULL");
  expect_status(w4a16_heuristic_query(&p, 4, r, NULL), W4A16_STATUS_NULL_POINTER, "out or returned is NULL");
  /* so do select, tune and profile */
  const w4a16_kernel_desc *kd = &fake[0];
  expect_status(w4a16_select(NULL, &kd, NULL), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  assert_null(kd);
  expect_status(w4a16_select(&p, NULL, NULL), W4A16_STATUS_NULL_POINTER, "kernel is NULL");
  w4a16_profile_result pr[2];
  n = 5;
  expect_status(w4a16_tune(NULL, NULL, pr, 2, &n), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  assert_int_equal(n, 0);
  n = 5;
  expect_status(w4a16_profile(NULL, NULL, pr, 2, &n), W4A16_STATUS_NULL_POINTER, "problem is NULL");
  assert_int_equal(n, 0);
  expect_status(w4a16_profile(&p, NULL, NULL, 2, &n), W4A16_STATUS_NULL_POINTER, "results is NULL");
  expect_status(w4a16_profile(&p, NULL, pr, 2, NULL), W4A16_STATUS_NULL_POINTER, "returned is NULL");
}

/* requested < available: the first results of a full query, in the same order */
static void test_requested_prefix(void **state) {
  (void)state;
  w4a16_heuristic_result all[NFAKE], few[3];
  w4a16_problem p = bf16_problem(256, 4096, 4096);
  int n = query(132, 90, &p, all, (int)NFAKE);
  assert_true(n > 3);
  int m = query(132, 90, &p, few, 3);
  assert_int_equal(m, 3);
  for (int i = 0; i < 3; ++i) assert_ptr_equal(few[i].kernel, all[i].kernel);
}

/* waves efficiency = ctas / (ceil(ctas / sm) * sm), ctas = ceil(M / tile_m) * N / tile_n * split */
static void test_waves_efficiency(void **state) {
  (void)state;
  const w4a16_kernel_desc *kd = fake_named(SM90_128X128X64); /* sm90 128x128, no split-K */
  assert_int_equal(kd->tile_m, 128);
  assert_int_equal(kd->split_k, 1);
  float we = 0;
  w4a16_problem p = bf16_problem(200, 4096, 4096); /* 2 x 32 = 64 CTAs on 132 SMs */
  w4a16_debug_for_tests()->sm90_streamk = 0; /* W4A16_SM90_STREAMK=0 (runtime/debug.h) */
  float t = w4a16_heuristic_estimate_us(kd, &p, 132, 1, &we);
  assert_true(t > 0);
  assert_float_equal(we, 64.0f / 132.0f, 1e-5f);
  /* ... which the runtime runs stream-K (the iterations spread over the whole wave): efficiency 1,
     and faster than the half-empty wave */
  w4a16_debug_for_tests()->sm90_streamk = -1;
  float t_sk = w4a16_heuristic_estimate_us(kd, &p, 132, 1, &we);
  assert_float_equal(we, 1.0f, 1e-6f);
  assert_true(t_sk < t);
  p = bf16_problem(4096, 8448, 4096); /* 32 x 66 = 2112 CTAs = 16 full waves of 132 */
  w4a16_heuristic_estimate_us(kd, &p, 132, 1, &we);
  assert_float_equal(we, 1.0f, 1e-6f);
  p = bf16_problem(4096, 4224, 4096); /* 32 x 33 = 1056 = 8 waves exactly */
  w4a16_heuristic_estimate_us(kd, &p, 132, 1, &we);
  assert_float_equal(we, 1.0f, 1e-6f);
  p = bf16_problem(4096, 4352, 4096); /* 32 x 34 = 1088 -> 9 waves: 1088 / 1188 */
  w4a16_heuristic_estimate_us(kd, &p, 132, 1, &we);
  assert_float_equal(we, 1088.0f / 1188.0f, 1e-5f);
  /* split-K multiplies the CTAs */
  p = bf16_problem(16, 4096, 4096);
  w4a16_heuristic_estimate_us(fake_named(SM80_128X16X128), &p, 132, 4, &we); /* 1 x 32 x 4 = 128 */
  assert_float_equal(we, 128.0f / 132.0f, 1e-5f);
}

/* the cost model: more work does not cost less (within one decomposition: stream-K, which the
   runtime takes from M = 65, is off here); a tile that wastes most of its M costs more */
static void test_estimate_monotone(void **state) {
  (void)state;
  w4a16_debug_for_tests()->sm90_streamk = 0;
  for (size_t i = 0; i < NFAKE; ++i) {
    const w4a16_kernel_desc *kd = &fake[i];
    double prev = 0;
    for (int64_t m = 1; m <= 8192; m *= 2) {
      w4a16_problem p = bf16_problem(m, 8192, 8192);
      float t = w4a16_heuristic_estimate_us(kd, &p, 132, 1, NULL);
      assert_true(t > 0);
      /* more CTAs can draw more bandwidth, so a step may cost slightly less; never much less */
      assert_true(t >= 0.95 * prev);
      prev = t;
    }
  }
  w4a16_debug_for_tests()->sm90_streamk = -1;
  /* M = 16 on a 128-row tile vs a 16-row tile of the same family */
  w4a16_problem p = bf16_problem(16, 28672, 4096);
  float big = w4a16_heuristic_estimate_us(fake_named(SM90_128X128X64), &p, 132, 1, NULL);
  float small = w4a16_heuristic_estimate_us(fake_named(SM90_128X16X64), &p, 132, 1, NULL);
  assert_true(small < big);
  /* large M: the 128x128 tile beats 128x16 */
  p = bf16_problem(4096, 28672, 4096);
  big = w4a16_heuristic_estimate_us(fake_named(SM90_128X128X64), &p, 132, 1, NULL);
  small = w4a16_heuristic_estimate_us(fake_named(SM90_128X16X64), &p, 132, 1, NULL);
  assert_true(big < small);
}

/* clusters: a 2x1x1 cluster (activation tile multicast) costs a fixed few microseconds and saves
   half the activation reads, so the cost model ranks it behind 1x1x1 at M = 256 and ahead at
   M = 4096 (as measured on an H100) */
static void test_estimate_cluster(void **state) {
  (void)state;
  w4a16_kernel_desc one = *fake_named(SM90_128X256X64), two = *fake_named(SM90_128X256X64); /* sm90 128x256x64 */
  assert_int_equal(one.tile_m, 256);
  two.name = "w4a16_sm90_bf16_u4_fgs_128x256x64_2x1x1_pingpong";
  two.cluster_n = 2;
  w4a16_problem p = bf16_problem(256, 8192, 8192);
  assert_true(w4a16_heuristic_estimate_us(&two, &p, 132, 1, NULL) > w4a16_heuristic_estimate_us(&one, &p, 132, 1, NULL));
  p = bf16_problem(4096, 8192, 8192);
  assert_true(w4a16_heuristic_estimate_us(&two, &p, 132, 1, NULL) < w4a16_heuristic_estimate_us(&one, &p, 132, 1, NULL));
  /* ranking by the model alone (no rule) follows it, and a rule's cluster_max keeps the 2x1x1 kernel
     out of its tier where the model would rank it first */
  const w4a16_kernel_desc pair[2] = {one, two};
  w4a16_heuristic_result r[2];
  int n = 0;
  assert_int_equal(query_rules(NULL, 0, pair, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_int_equal(r[0].kernel->cluster_n, 2);
  p = bf16_problem(256, 8192, 8192);
  assert_int_equal(query_rules(NULL, 0, pair, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(r[0].kernel->cluster_n, 1);
  p = bf16_problem(200, 57344, 8192);
  assert_true(w4a16_heuristic_estimate_us(&two, &p, 132, 1, NULL) < w4a16_heuristic_estimate_us(&one, &p, 132, 1, NULL));
  /* a rule's cluster_max counts every CTA of the cluster */
  w4a16_heuristic_rule rule = {.name = "no-clusters", .m_min = 1, .cc_min = 80, .family = -1, .cluster_max = 1};
  assert_int_equal(query_rules(&rule, 1, pair, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_string_equal(r[0].rule, "no-clusters");
  assert_int_equal(r[0].kernel->cluster_n, 1);
  assert_string_equal(r[1].rule, "fallback");
}

/* tiers: a kernel belongs to the first rule it matches, and tiers rank in table order whatever the cost
   model says (here the rule of the 16-row tile comes first though the model ranks the 128-row tile
   ahead at M = 4096); rule_index is the index in the caller's table, rules that match nothing included */
static void test_rule_order(void **state) {
  (void)state;
  const w4a16_kernel_desc two[2] = {*fake_named(SM80_128X16X128), *fake_named("w4a16_sm80_bf16_u4_fgs_128x128x64_s3")};
  w4a16_problem p = bf16_problem(4096, 8192, 8192);
  assert_true(w4a16_heuristic_estimate_us(&two[1], &p, 108, 1, NULL) < w4a16_heuristic_estimate_us(&two[0], &p, 108, 1, NULL));
  const w4a16_heuristic_rule narrow_first[] = {
      {.name = "narrow", .m_min = 1, .cc_min = 80, .family = S80, .tile_m_max = 16},
      {.name = "any", .m_min = 1, .cc_min = 80, .family = -1},
  };
  w4a16_heuristic_result r[2];
  int n = 0;
  assert_int_equal(query_rules(narrow_first, 2, two, 2, 108, 80, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[0]);
  assert_string_equal(r[0].rule, "narrow");
  assert_int_equal(r[0].rule_index, 0);
  assert_ptr_equal(r[1].kernel, &two[1]);
  assert_string_equal(r[1].rule, "any");
  assert_int_equal(r[1].rule_index, 1);
  /* the other order: "any" takes both, "narrow" none; the model orders the one tier */
  const w4a16_heuristic_rule any_first[] = {narrow_first[1], narrow_first[0]};
  assert_int_equal(query_rules(any_first, 2, two, 2, 108, 80, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[1]);
  assert_ptr_equal(r[1].kernel, &two[0]);
  for (int i = 0; i < 2; ++i) {
    assert_string_equal(r[i].rule, "any");
    assert_int_equal(r[i].rule_index, 0);
  }
  /* rules whose problem ranges miss come first in the table: the indices are still table indices */
  const w4a16_heuristic_rule later[] = {
      {.name = "decode", .m_min = 1, .m_max = 16, .cc_min = 80, .family = -1},
      {.name = "hopper", .m_min = 1, .cc_min = 90, .family = -1},
      narrow_first[0],
  };
  assert_int_equal(query_rules(later, 3, two, 2, 108, 80, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_ptr_equal(r[0].kernel, &two[0]);
  assert_string_equal(r[0].rule, "narrow");
  assert_int_equal(r[0].rule_index, 2);
  assert_int_equal(r[1].rule_index, -1);
  assert_string_equal(r[1].rule, "fallback");
}

/* the matcher against a reference written from w4a16_heuristic_rule's documentation: random tables of
   one to four rules of one to four conditions each (any field; bounds drawn at or next to the
   problem's, device's or a candidate kernel's value, so that each holds or fails), random problems
   and devices over the fake registry; every returned kernel's rule is the first rule it matches */
static int ref_in(int64_t v, int64_t lo, int64_t hi) { return v >= lo && (hi == 0 || v <= hi); }

static int ref_rule_matches(const w4a16_heuristic_rule *r, const w4a16_kernel_desc *kd, const w4a16_problem *p, int sm,
                            int cc, int mem_gbps, float waves_eff) {
  const int64_t group = p->mode == W4A16_PER_COLUMN_SCALE_ONLY || p->group_size == 0 ? p->k : p->group_size;
  const int cluster = kd->cluster_n * kd->cluster_m * kd->cluster_k;
  return ref_in(p->m, r->m_min, r->m_max) && ref_in(p->n, r->n_min, r->n_max) && ref_in(p->k, r->k_min, r->k_max) &&
         ref_in(sm, r->sm_count_min, r->sm_count_max) && ref_in(cc, r->cc_min, r->cc_max) &&
         ref_in(mem_gbps, r->mem_gbps_min, r->mem_gbps_max) && (r->modes == 0 || (r->modes >> p->mode) & 1u) &&
         (r->dtypes == 0 || (r->dtypes >> p->dtype) & 1u) && (r->group_max == 0 || group <= r->group_max) &&
         (r->family == -1 || r->family == (int)kd->family) && ref_in(kd->tile_m, r->tile_m_min, r->tile_m_max) &&
         ref_in(kd->tile_n, r->tile_n_min, r->tile_n_max) && ref_in(kd->tile_k, r->tile_k_min, r->tile_k_max) &&
         ref_in(kd->stages, r->stages_min, r->stages_max) && ref_in(kd->threads, r->threads_min, r->threads_max) &&
         (r->schedules == 0 || (r->schedules >> kd->schedule) & 1u) &&
         (r->cluster_max == 0 || cluster <= r->cluster_max) && cluster >= r->cluster_min &&
         (r->m_tiles_max == 0 || (p->m + kd->tile_m - 1) / kd->tile_m <= r->m_tiles_max) &&
         waves_eff >= r->min_waves_eff;
}

/* a bound for value v: v or a neighbour of it, either side (at least 1) */
static int64_t ref_bound(test_rng *rng, int64_t v) {
  const int64_t steps[] = {-1, 0, 0, 1};
  const int64_t b = v + steps[test_rng_next(rng) % 4] * (v / 4 > 1 ? v / 4 : 1);
  return b > 0 ? b : 1;
}

static void test_rule_matcher_reference(void **state) {
  (void)state;
  test_rng rng = test_rng_fresh("test_select rule matcher");
  static const int groups[] = {32, 64, 128, 256};
  static const int ccs[] = {80, 89, 90, 100};
  static const int mems[] = {0, 2039, 3352, 4814};
  w4a16_heuristic_result r[NFAKE];
  int ranked = 0, fell_back = 0;
  for (int it = 0; it < 2000; ++it) {
    const int64_t ms[] = {1, 2, 4, 8, 16, 64, 256, 1024};
    w4a16_problem p = test_problem(ms[test_rng_next(&rng) % 8] + (int64_t)(test_rng_next(&rng) % 3), 4096 << (test_rng_next(&rng) % 3),
                                   4096 << (test_rng_next(&rng) % 2), groups[test_rng_next(&rng) % 4],
                                   test_rng_next(&rng) % 3 ? FGS : FGSZ, test_rng_next(&rng) % 3 ? BF : FH);
    const int cc = ccs[test_rng_next(&rng) % 4], sm = cc == 90 ? 132 : 108, mem = mems[test_rng_next(&rng) % 4];
    if (implementable(&p, cc) == 0) continue;
    /* the rules: drawn around a kernel that can implement the problem, so that many hold */
    const w4a16_kernel_desc *kd = NULL;
    while (!kd) {
      const w4a16_kernel_desc *c = &fake[test_rng_next(&rng) % NFAKE];
      if (cc >= c->sm_min && cc <= c->sm_max && w4a16_can_implement(c, &p) == W4A16_STATUS_OK) kd = c;
    }
    w4a16_heuristic_rule rules[4];
    const char *names[4] = {"r0", "r1", "r2", "r3"};
    const size_t nrules = 1 + test_rng_next(&rng) % 4;
    for (size_t i = 0; i < nrules; ++i) {
      /* one to four conditions, the others open */
      w4a16_heuristic_rule *x = &rules[i];
      memset(x, 0, sizeof *x);
      x->name = names[i];
      x->family = -1;
      const int nconds = 1 + (int)(test_rng_next(&rng) % 4);
      for (int c = 0; c < nconds; ++c) {
        switch (test_rng_next(&rng) % 27) {
        case 0: x->m_min = ref_bound(&rng, p.m); break;
        case 1: x->m_max = ref_bound(&rng, p.m); break;
        case 2: x->n_min = ref_bound(&rng, p.n); break;
        case 3: x->n_max = ref_bound(&rng, p.n); break;
        case 4: x->k_min = ref_bound(&rng, p.k); break;
        case 5: x->k_max = ref_bound(&rng, p.k); break;
        case 6: x->sm_count_min = (int)ref_bound(&rng, sm); break;
        case 7: x->sm_count_max = (int)ref_bound(&rng, sm); break;
        case 8: x->cc_min = (int)ref_bound(&rng, cc); break;
        case 9: x->cc_max = (int)ref_bound(&rng, cc); break;
        case 10: x->mem_gbps_min = (int)ref_bound(&rng, mem ? mem : 3352); break;
        case 11: x->mem_gbps_max = (int)ref_bound(&rng, mem ? mem : 3352); break;
        case 12: x->family = (int)(test_rng_next(&rng) % 2 ? kd->family : test_rng_next(&rng) % 3); break;
        case 13: x->tile_m_min = (int)ref_bound(&rng, kd->tile_m); x->tile_m_max = (int)ref_bound(&rng, kd->tile_m); break;
        case 14: x->tile_n_min = (int)ref_bound(&rng, kd->tile_n); break;
        case 15: x->tile_n_max = (int)ref_bound(&rng, kd->tile_n); break;
        case 16: x->tile_k_min = (int)ref_bound(&rng, kd->tile_k); x->tile_k_max = (int)ref_bound(&rng, kd->tile_k); break;
        case 17: x->stages_min = (int)ref_bound(&rng, kd->stages); x->stages_max = (int)ref_bound(&rng, kd->stages); break;
        case 18: x->threads_min = (int)ref_bound(&rng, kd->threads); x->threads_max = (int)ref_bound(&rng, kd->threads); break;
        case 19: x->m_tiles_max = (int)ref_bound(&rng, (p.m + kd->tile_m - 1) / kd->tile_m); break;
        case 20: x->min_waves_eff = (float)test_rng_uniform(&rng, 0.0, 1.0); break;
        case 21: x->group_max = (int)ref_bound(&rng, p.group_size); break;
        case 22: x->cluster_min = 1 + (int)(test_rng_next(&rng) % 2); break;
        case 23: x->cluster_max = 1 + (int)(test_rng_next(&rng) % 2); break;
        case 24: {
          const unsigned bits = (unsigned)(test_rng_next(&rng) % 3);
          x->modes = bits == 0 ? 1u << p.mode : bits == 1 ? ~(1u << p.mode) & 7u : 7u;
          break;
        }
        case 25: x->dtypes = 1u + (unsigned)(test_rng_next(&rng) % 3); break;
        default: {
          const unsigned bits = (unsigned)(test_rng_next(&rng) % 3);
          x->schedules = bits == 0 ? 1u << kd->schedule : bits == 1 ? ~(1u << kd->schedule) & 31u : 31u;
          break;
        }
        }
      }
    }
    int n = 0;
    assert_int_equal(query_rules(rules, nrules, fake, NFAKE, sm, cc, mem, &p, (int)NFAKE, r, &n), W4A16_STATUS_OK);
    assert_int_equal((size_t)n, implementable(&p, cc));
    check_ranking_rules(rules, nrules, fake, NFAKE, &p, cc, r, n);
    for (int i = 0; i < n; ++i) {
      int want = -1;
      for (size_t j = 0; j < nrules && want < 0; ++j)
        if (ref_rule_matches(&rules[j], r[i].kernel, &p, sm, cc, mem, r[i].waves_efficiency)) want = (int)j;
      if (want != r[i].rule_index)
        fail_msg("%s: rule %d, the reference says %d (M=%lld N=%lld K=%lld cc %d mem %d)", r[i].kernel->name,
                 r[i].rule_index, want, (long long)p.m, (long long)p.n, (long long)p.k, cc, mem);
      if (want >= 0)
        ++ranked;
      else
        ++fell_back;
    }
  }
  /* both outcomes were exercised often */
  fprintf(stderr, "[test_select rule matcher] %d kernels ranked by a rule, %d fallback\n", ranked, fell_back);
  assert_true(ranked > 1000 && fell_back > 1000);
}

/* custom rule tables: N and M-tile conditions, the waves efficiency bound, the SM count range */
static void test_custom_rules(void **state) {
  (void)state;
  const w4a16_heuristic_rule rules[] = {
      {.name = "wide-n", .m_min = 1, .n_min = 16384, .cc_min = 80, .family = S80, .tile_n_min = 256},
      {.name = "full-waves", .m_min = 1, .cc_min = 80, .family = S80, .tile_m_min = 64, .min_waves_eff = 0.95f},
      {.name = "one-m-tile", .m_min = 1, .m_max = 64, .cc_min = 80, .family = -1, .m_tiles_max = 1},
  };
  w4a16_heuristic_result r[NFAKE];
  const struct {
    int64_t m, n;
  } shapes[] = {{512, 16384}, {512, 4096}, {48, 16384}, {48, 4096}, {16, 4096}, {64, 4096}, {65, 4096}, {64, 2048}};
  int seen_any[3] = {0, 0, 0};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    w4a16_problem p = bf16_problem(shapes[s].m, shapes[s].n, 4096);
    int n = query_fake_rules(rules, 3, 132, 80, 0, &p, r, (int)NFAKE);
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
      const w4a16_kernel_desc *kd = r[i].kernel;
      int want = -1;
      if (p.n >= 16384 && kd->family == S80 && kd->tile_n >= 256)
        want = 0;
      else if (kd->family == S80 && kd->tile_m >= 64 && r[i].waves_efficiency >= 0.95f)
        want = 1;
      else if (p.m <= 64 && kd->tile_m >= p.m)
        want = 2;
      if (r[i].rule_index != want)
        fail_msg("%s at M=%lld N=%lld: rule %d, expected %d", kd->name, (long long)p.m, (long long)p.n, r[i].rule_index,
                 want);
      if (want >= 0) seen[want] = 1;
    }
    assert_int_equal(seen[0], p.n >= 16384);
    for (int t = 0; t < 3; ++t) seen_any[t] += seen[t];
  }
  /* every rule's tier was met */
  for (int t = 0; t < 3; ++t)
    if (seen_any[t] == 0) fail_msg("no kernel in the tier of %s", rules[t].name);
  /* sm_count range */
  w4a16_problem p = bf16_problem(512, 4096, 4096);
  int n = 0;
  const w4a16_heuristic_rule small_gpu[] = {
      {.name = "small-gpu", .m_min = 1, .sm_count_min = 1, .sm_count_max = 60, .cc_min = 80, .family = S80,
       .tile_m_max = 16}};
  n = query_fake_rules(small_gpu, 1, 46, 86, 0, &p, r, (int)NFAKE);
  assert_string_equal(r[0].rule, "small-gpu");
  assert_int_equal(r[0].kernel->tile_m, 16);
  n = query_fake_rules(small_gpu, 1, 60, 86, 0, &p, r, (int)NFAKE);
  assert_string_equal(r[0].rule, "small-gpu");
  n = query_fake_rules(small_gpu, 1, 61, 86, 0, &p, r, (int)NFAKE);
  for (int i = 0; i < n; ++i) assert_string_equal(r[i].rule, "fallback");
}

/* query_rules on a 132-SM cc 9.0 device of unknown bandwidth returns exactly two kernels: first, then
   second, in the tiers of the rules named */
static void expect_two(const w4a16_heuristic_rule *rules, size_t nrules, const w4a16_kernel_desc *table, size_t count,
                       const w4a16_problem *p, const w4a16_kernel_desc *first, const char *first_rule,
                       const w4a16_kernel_desc *second, const char *second_rule) {
  w4a16_heuristic_result r[3];
  int n = 0;
  assert_int_equal(query_rules(rules, nrules, table, count, 132, 90, 0, p, 3, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, first);
  assert_string_equal(r[0].rule, first_rule);
  assert_ptr_equal(r[1].kernel, second);
  assert_string_equal(r[1].rule, second_rule);
}

/* a rule's dtypes mask keys it on the problem's dtype: with the same two GEMV classes in both dtypes, an
   fp16-only rule for the 4-token tile ahead of a rule for the 8-token one takes the fp16 4-token kernel
   first for an fp16 problem, while for bf16 the 8-token kernel leads and the 4-token one is fallback */
static void test_rule_dtypes(void **state) {
  (void)state;
  w4a16_kernel_desc t[4] = {*fake_named("w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma"),
                            *fake_named("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma")};
  t[2] = t[0];
  t[3] = t[1];
  t[2].name = "w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma";
  t[3].name = "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma";
  t[2].dtype = t[3].dtype = W4A16_DTYPE_F16;
  const w4a16_heuristic_rule rules[] = {
      {.name = "f16-m4", .m_min = 1, .cc_min = 80, .family = GEMV, .tile_m_max = 4, .dtypes = 1u << W4A16_DTYPE_F16},
      {.name = "m8", .m_min = 1, .cc_min = 80, .family = GEMV, .tile_m_min = 8},
  };
  for (int64_t m = 1; m <= 4; ++m) {
    w4a16_problem p = test_problem(m, 8192, 8192, 128, FGS, FH);
    expect_two(rules, 2, t, 4, &p, &t[2], "f16-m4", &t[3], "m8");
    p.dtype = W4A16_DTYPE_BF16;
    expect_two(rules, 2, t, 4, &p, &t[1], "m8", &t[0], "fallback");
  }
  w4a16_heuristic_result r[4];
  int n = 0;
  /* a mask of both dtypes, or none, takes either; a mask of the other dtype alone takes neither */
  const unsigned masks[] = {0u, (1u << W4A16_DTYPE_F16) | (1u << W4A16_DTYPE_BF16), 1u << W4A16_DTYPE_BF16,
                            1u << W4A16_DTYPE_F16};
  const w4a16_dtype dts[] = {FH, BF};
  for (size_t i = 0; i < sizeof masks / sizeof masks[0]; ++i) {
    for (size_t d = 0; d < 2; ++d) {
      const w4a16_heuristic_rule rule = {.name = "masked", .m_min = 1, .cc_min = 80, .family = -1, .dtypes = masks[i]};
      w4a16_problem p = test_problem(2, 8192, 8192, 128, FGS, dts[d]);
      assert_int_equal(query_rules(&rule, 1, t, 4, 132, 90, 0, &p, 4, r, &n), W4A16_STATUS_OK);
      assert_int_equal(n, 2);
      const int matches = masks[i] == 0 || ((masks[i] >> (unsigned)dts[d]) & 1u) != 0;
      for (int j = 0; j < n; ++j) {
        assert_int_equal(r[j].kernel->dtype, dts[d]);
        assert_string_equal(r[j].rule, matches ? "masked" : "fallback");
      }
    }
  }
}

/* the device's DRAM bandwidth (mem_gbps_min / _max, inclusive): rows for a fast-memory device (4500 GB/s
   and up: an H200 reports 4814), one of them fp16-only, ahead of a row bounded from above (a 3352 GB/s
   H100), over three GEMV classes in both dtypes. A device of unknown bandwidth (0) matches no row with
   a lower bound, so it takes the H100's picks */
static void test_rule_mem_gbps(void **state) {
  (void)state;
  w4a16_kernel_desc t[6] = {*fake_named("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"),
                            *fake_named("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s2_tma"),
                            *fake_named("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_tma")};
  t[1].name = "w4a16_gemv_bf16_u4_fgs_n16_m8_k2048_s2_tma";
  t[1].tile_k = 2048;
  for (int i = 0; i < 3; ++i) {
    t[3 + i] = t[i];
    t[3 + i].dtype = W4A16_DTYPE_F16;
  }
  t[3].name = "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma";
  t[4].name = "w4a16_gemv_f16_u4_fgs_n16_m8_k2048_s2_tma";
  t[5].name = "w4a16_gemv_f16_u4_fgs_n16_m8_k1024_s4_tma";
  const w4a16_heuristic_rule rules[] = {
      {.name = "fast-f16", .m_min = 1, .m_max = 8, .cc_min = 90, .family = GEMV, .tile_n_max = 16, .tile_k_max = 1024,
       .dtypes = 1u << W4A16_DTYPE_F16, .mem_gbps_min = 4500},
      {.name = "fast", .m_min = 1, .m_max = 8, .cc_min = 90, .family = GEMV, .tile_n_min = 32, .mem_gbps_min = 4500},
      {.name = "slow", .m_min = 1, .m_max = 8, .cc_min = 90, .family = GEMV, .tile_k_min = 2048, .mem_gbps_max = 4000},
  };
  /* per dtype (0 = fp16, 1 = bf16) and device bandwidth: the kernels best first (offsets into t of the
     dtype's three) and the rule of each; "" = fallback */
  const struct {
    int mem_gbps;
    int f16_order[3];
    const char *f16_rules[3];
    int bf16_order[2];
    const char *bf16_rules[2];
  } cases[] = {
      {4814, {2, 0, -1}, {"fast-f16", "fast", ""}, {0, -1}, {"fast", ""}},
      {4500, {2, 0, -1}, {"fast-f16", "fast", ""}, {0, -1}, {"fast", ""}},
      {4499, {-1, -1, -1}, {"", "", ""}, {-1, -1}, {"", ""}},
      {4001, {-1, -1, -1}, {"", "", ""}, {-1, -1}, {"", ""}},
      {4000, {1, -1, -1}, {"slow", "", ""}, {1, -1}, {"slow", ""}},
      {3352, {1, -1, -1}, {"slow", "", ""}, {1, -1}, {"slow", ""}},
      {0, {1, -1, -1}, {"slow", "", ""}, {1, -1}, {"slow", ""}},
  };
  w4a16_heuristic_result r[6];
  int n = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    for (int64_t m = 1; m <= 8; m += 7) {
      for (int d = 0; d < 2; ++d) {
        const w4a16_kernel_desc *mine = d == 0 ? &t[3] : &t[0];
        w4a16_problem p = test_problem(m, 4096, 8192, 128, FGS, d == 0 ? FH : BF);
        assert_int_equal(query_rules(rules, 3, t, 6, 132, 90, cases[c].mem_gbps, &p, 6, r, &n), W4A16_STATUS_OK);
        assert_int_equal(n, 3);
        check_ranking_rules(rules, 3, t, 6, &p, 90, r, n);
        const int nfixed = d == 0 ? 3 : 2;
        for (int j = 0; j < nfixed; ++j) {
          const int at = d == 0 ? cases[c].f16_order[j] : cases[c].bf16_order[j];
          const char *rule = d == 0 ? cases[c].f16_rules[j] : cases[c].bf16_rules[j];
          if (at >= 0) assert_ptr_equal(r[j].kernel, mine + at);
          assert_string_equal(r[j].rule, rule[0] ? rule : "fallback");
        }
      }
    }
  }
  /* one bound at a time, inclusive; 0 (unknown) is below every lower bound and within every upper one */
  const w4a16_heuristic_rule fast = {.name = "fast-memory", .m_min = 1, .cc_min = 80, .family = -1, .mem_gbps_min = 4500};
  const w4a16_heuristic_rule slow = {.name = "slow-memory", .m_min = 1, .cc_min = 80, .family = -1, .mem_gbps_max = 4000};
  const struct {
    const w4a16_heuristic_rule *rule;
    int mem_gbps;
    int matches;
  } bounds[] = {{&fast, 4915, 1}, {&fast, 4500, 1}, {&fast, 4499, 0}, {&fast, 3352, 0}, {&fast, 0, 0},
                {&slow, 3352, 1}, {&slow, 4000, 1}, {&slow, 4001, 0}, {&slow, 0, 1}};
  w4a16_heuristic_result all[NFAKE];
  w4a16_problem p = bf16_problem(2, 8192, 8192);
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; ++i) {
    n = query_fake_rules(bounds[i].rule, 1, 132, 90, bounds[i].mem_gbps, &p, all, (int)NFAKE);
    assert_true(n >= 2);
    for (int j = 0; j < n; ++j) assert_string_equal(all[j].rule, bounds[i].matches ? bounds[i].rule->name : "fallback");
  }
  /* a negative bandwidth is refused, named, and nothing is returned */
  n = 7;
  assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, -1, &p, 4, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(n, 0);
  assert_non_null(strstr(w4a16_last_error_message(), "mem_gbps = -1"));
}

/* a rule's schedules mask (a bit per w4a16_schedule) on two GEMV kernels of the same tiles and stages, the
   sm_90 TMA-streaming one and the register-staged one: a rule for the schedule the cost model ranks
   second puts it first; a mask of both keeps the model's order in one tier; a mask of another schedule
   takes neither; rows keyed on M choose per M */
static void test_rule_schedules(void **state) {
  (void)state;
  const w4a16_kernel_desc two[2] = {*fake_named("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_tma"),
                                    *fake_named("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_sk8")};
  assert_int_equal(two[0].schedule, W4A16_SCHEDULE_GEMV_TMA);
  assert_int_equal(two[1].schedule, W4A16_SCHEDULE_GEMV);
  const unsigned tma = 1u << W4A16_SCHEDULE_GEMV_TMA, staged = 1u << W4A16_SCHEDULE_GEMV;
  w4a16_heuristic_result r[2];
  int n = 0;
  for (int64_t m = 1; m <= 8; ++m) {
    w4a16_problem p = bf16_problem(m, 4096, 4096);
    assert_int_equal(query_rules(NULL, 0, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_int_equal(n, 2);
    const w4a16_kernel_desc *model_second = r[1].kernel;
    const w4a16_heuristic_rule second = {.name = "second", .m_min = 1, .cc_min = 80, .family = GEMV,
                                         .schedules = model_second->schedule == W4A16_SCHEDULE_GEMV ? staged : tma};
    assert_int_equal(query_rules(&second, 1, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_ptr_equal(r[0].kernel, model_second);
    assert_string_equal(r[0].rule, "second");
    assert_string_equal(r[1].rule, "fallback");
    const w4a16_heuristic_rule both = {.name = "both", .m_min = 1, .cc_min = 80, .family = GEMV, .schedules = tma | staged};
    assert_int_equal(query_rules(&both, 1, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_ptr_not_equal(r[0].kernel, model_second);
    assert_string_equal(r[0].rule, "both");
    assert_string_equal(r[1].rule, "both");
    const w4a16_heuristic_rule other = {.name = "pingpong", .m_min = 1, .cc_min = 80, .family = -1,
                                        .schedules = 1u << W4A16_SCHEDULE_PINGPONG};
    assert_int_equal(query_rules(&other, 1, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, "fallback");
    assert_string_equal(r[1].rule, "fallback");
    /* the register-staged kernel up to M = 4, the TMA one above */
    const w4a16_heuristic_rule per_m[] = {
        {.name = "staged-m1-4", .m_min = 1, .m_max = 4, .cc_min = 80, .family = GEMV, .schedules = staged},
        {.name = "tma", .m_min = 1, .cc_min = 80, .family = GEMV, .schedules = tma}};
    assert_int_equal(query_rules(per_m, 2, two, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_ptr_equal(r[0].kernel, m <= 4 ? &two[1] : &two[0]);
    assert_string_equal(r[0].rule, m <= 4 ? "staged-m1-4" : "tma");
    assert_string_equal(r[1].rule, m <= 4 ? "tma" : "fallback");
  }
  /* over the fake registry: a staged-only rule's tier holds the register-staged GEMV kernels only */
  const w4a16_heuristic_rule rules[] = {
      {.name = "staged-gemv", .m_min = 1, .cc_min = 80, .family = GEMV, .schedules = staged}};
  w4a16_heuristic_result all[NFAKE];
  w4a16_problem p = bf16_problem(4, 4096, 4096);
  n = query_fake_rules(rules, 1, 132, 90, 0, &p, all, (int)NFAKE);
  int tier = 0;
  for (int i = 0; i < n; ++i) {
    if (all[i].rule_index == 0) {
      ++tier;
      assert_int_equal(all[i].kernel->schedule, W4A16_SCHEDULE_GEMV);
    } else {
      assert_true(all[i].kernel->family != GEMV || all[i].kernel->schedule != W4A16_SCHEDULE_GEMV);
    }
  }
  assert_true(tier >= 2);
}

/* a rule's group_max holds for the fine-grained group sizes; a per-column problem (group_size 0
   or K) is a group of K, so a "groups of at most 64" row does not take it */
static void test_group_max_per_column(void **state) {
  (void)state;
  w4a16_kernel_desc one[2] = {*fake_named(SM80_128X16X128), *fake_named(SM80_128X16X128)}; /* sm80 128x16x128 */
  one[0].name = "w4a16_sm80_bf16_u4_fgs_128x16x128_s4";
  one[1].name = "w4a16_sm80_bf16_u4_pc_128x16x128_s4";
  one[1].mode = W4A16_PER_COLUMN_SCALE_ONLY;
  const w4a16_heuristic_rule rules[] = {{.name = "small-groups", .m_min = 1, .cc_min = 80, .family = -1, .group_max = 64}};
  w4a16_heuristic_result r[2];
  int n = 0;
  w4a16_problem p = test_problem(16, 4096, 4096, 64, FGS, BF);
  assert_int_equal(query_rules(rules, 1, one, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_string_equal(r[0].rule, "small-groups");
  p = test_problem(16, 4096, 4096, 0, W4A16_PER_COLUMN_SCALE_ONLY, BF);
  assert_int_equal(query_rules(rules, 1, one, 2, 132, 90, 0, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_int_equal(r[0].kernel->mode, W4A16_PER_COLUMN_SCALE_ONLY);
  assert_string_equal(r[0].rule, "fallback");
}

/* the built-in table: named, unique, consistent ranges, known families */
static void test_builtin_rules(void **state) {
  (void)state;
  size_t n = 0;
  const w4a16_heuristic_rule *rules = w4a16_heuristic_rules(&n);
  assert_non_null(rules);
  assert_true(n >= 3);
  for (size_t i = 0; i < n; ++i) {
    const w4a16_heuristic_rule *r = &rules[i];
    assert_non_null(r->name);
    assert_string_not_equal(r->name, "fallback");
    for (size_t j = 0; j < i; ++j) assert_string_not_equal(r->name, rules[j].name);
    assert_true(r->m_min >= 1);
    assert_true(r->m_max == 0 || r->m_max >= r->m_min);
    assert_true(r->n_max == 0 || r->n_max >= r->n_min);
    assert_true(r->k_max == 0 || r->k_max >= r->k_min);
    assert_true(r->sm_count_max == 0 || r->sm_count_max >= r->sm_count_min);
    assert_true(r->cc_max == 0 || r->cc_max >= r->cc_min);
    assert_true(r->tile_m_max == 0 || r->tile_m_max >= r->tile_m_min);
    assert_true(r->tile_n_max == 0 || r->tile_n_max >= r->tile_n_min);
    assert_true(r->family == -1 || (r->family >= 0 && r->family <= 2));
    assert_true(r->min_waves_eff >= 0.0f && r->min_waves_eff <= 1.0f);
  }
}

/* random problems and devices: the ranking invariants always hold */
static void test_random_problems(void **state) {
  (void)state;
  test_rng rng = test_rng_fresh("test_select random problems");
  static const int groups[] = {32, 64, 128, 256};
  static const int ccs[] = {80, 86, 89, 90, 100};
  w4a16_heuristic_result r[NFAKE];
  for (int it = 0; it < 3000; ++it) {
    int64_t m = 1 + (int64_t)(test_rng_next(&rng) % 9000);
    int64_t n = 16 * (1 + (int64_t)(test_rng_next(&rng) % 4096));
    int64_t k = 256 * (1 + (int64_t)(test_rng_next(&rng) % 128));
    w4a16_quant_mode mode = test_rng_next(&rng) % 4 ? FGS : FGSZ;
    w4a16_dtype dt = test_rng_next(&rng) % 4 ? BF : FH;
    w4a16_problem p = test_problem(m, n, k, groups[test_rng_next(&rng) % 4], mode, dt);
    int cc = ccs[test_rng_next(&rng) % 5];
    int sm = 1 + (int)(test_rng_next(&rng) % 200);
    int requested = 1 + (int)(test_rng_next(&rng) % NFAKE);
    int got = -1;
    w4a16_status st = test_query_table(fake, NFAKE, sm, cc, &p, requested, r, &got);
    size_t avail = implementable(&p, cc);
    if (avail == 0) {
      assert_int_equal(st, W4A16_STATUS_NO_KERNEL);
      assert_int_equal(got, 0);
      continue;
    }
    assert_int_equal(st, W4A16_STATUS_OK);
    assert_int_equal((size_t)got, avail < (size_t)requested ? avail : (size_t)requested);
    check_ranking(&p, cc, r, got);
  }
}

/* the real registry: without a GPU a clean NO_DEVICE, with one OK or NO_KERNEL */
static void test_registry_query(void **state) {
  (void)state;
  w4a16_heuristic_result r[8];
  int n = -1;
  w4a16_problem p = bf16_problem(16, 4096, 4096);
  w4a16_status st = w4a16_heuristic_query(&p, 8, r, &n);
  assert_true(st == W4A16_STATUS_OK || st == W4A16_STATUS_NO_DEVICE || st == W4A16_STATUS_NO_KERNEL ||
              st == W4A16_STATUS_CUDA_ERROR);
  if (st == W4A16_STATUS_OK) {
    assert_true(n >= 1);
    for (int i = 0; i < n; ++i) assert_int_equal(w4a16_can_implement(r[i].kernel, &p), W4A16_STATUS_OK);
  } else {
    assert_int_equal(n, 0);
  }
}

/* on a GPU: w4a16_select uses the heuristic, then the config cache once an entry is
   stored (the memo follows), and w4a16_gemm with no kernel runs what it selects */
static void test_select_on_device(void **state) {
  (void)state;
  w4a16_problem p = bf16_problem(16, 4096, 4096);
  const w4a16_kernel_desc *kd = NULL;
  w4a16_selection_source src = W4A16_SELECTED_BY_CACHE;
  w4a16_status st = w4a16_select(&p, &kd, &src);
  if (st == W4A16_STATUS_NO_DEVICE || st == W4A16_STATUS_NO_KERNEL) {
    fprintf(stderr, "[test_select] %s: %s - skipped\n", w4a16_status_name(st), w4a16_last_error_message());
    skip();
  }
  assert_int_equal(st, W4A16_STATUS_OK);
  assert_non_null(kd);
  assert_int_equal(src, W4A16_SELECTED_BY_HEURISTIC);
  w4a16_heuristic_result r[64];
  int n = 0;
  assert_int_equal(w4a16_heuristic_query(&p, 64, r, &n), W4A16_STATUS_OK);
  assert_ptr_equal(r[0].kernel, kd);
  fprintf(stderr, "[test_select] heuristic: %s (%s)\n", kd->name, r[0].rule);

  /* run it: w4a16_gemm(args, NULL, ...) */
  size_t ws = 0;
  assert_int_equal(w4a16_workspace_size(kd, &p, 0, &ws), W4A16_STATUS_OK);
  void *a = NULL, *w = NULL, *sc = NULL, *d = NULL, *wsp = NULL;
  assert_int_equal(cudaMalloc(&a, (size_t)p.m * p.k * 2), cudaSuccess);
  assert_int_equal(cudaMalloc(&w, (size_t)p.n * p.k / 2), cudaSuccess);
  assert_int_equal(cudaMalloc(&sc, (size_t)(p.k / 128) * p.n * 2), cudaSuccess);
  assert_int_equal(cudaMalloc(&d, (size_t)p.m * p.n * 2), cudaSuccess);
  if (ws) assert_int_equal(cudaMalloc(&wsp, ws), cudaSuccess);
  cudaMemset(a, 0, (size_t)p.m * p.k * 2);
  cudaMemset(w, 0x88, (size_t)p.n * p.k / 2);
  cudaMemset(sc, 0, (size_t)(p.k / 128) * p.n * 2);
  w4a16_gemm_args args;
  memset(&args, 0, sizeof args);
  args.problem = p;
  args.a = a;
  args.w = w;
  args.scales = sc;
  args.d = d;
  args.alpha = 1.0f;
  st = w4a16_gemm(&args, NULL, wsp, ws, NULL);
  if (st != W4A16_STATUS_OK) fprintf(stderr, "w4a16_gemm: %s\n", w4a16_last_error_message());
  assert_int_equal(st, W4A16_STATUS_OK);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);

  /* store the heuristic's last candidate for this key: selection follows the cache,
     for every M of the bucket (9..16) */
  if (n >= 2) {
    w4a16_config_cache *cache = w4a16_config_cache_default();
    assert_non_null(cache);
    const w4a16_kernel_desc *pick[1] = {r[n - 1].kernel};
    assert_int_equal(w4a16_config_cache_store(cache, &p, pick, 1), W4A16_STATUS_OK);
    for (int64_t m = 9; m <= 16; ++m) {
      w4a16_problem q = bf16_problem(m, 4096, 4096);
      assert_int_equal(w4a16_select(&q, &kd, &src), W4A16_STATUS_OK);
      assert_ptr_equal(kd, r[n - 1].kernel);
      assert_int_equal(src, W4A16_SELECTED_BY_CACHE);
    }
    size_t ws2 = 0;
    assert_int_equal(w4a16_workspace_size(kd, &p, 0, &ws2), W4A16_STATUS_OK);
    void *wsp2 = NULL;
    if (ws2) assert_int_equal(cudaMalloc(&wsp2, ws2), cudaSuccess);
    assert_int_equal(w4a16_gemm(&args, NULL, wsp2, ws2, NULL), W4A16_STATUS_OK);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(wsp2);
    /* another bucket is untouched */
    w4a16_problem q = bf16_problem(17, 4096, 4096);
    assert_int_equal(w4a16_select(&q, &kd, &src), W4A16_STATUS_OK);
    assert_int_equal(src, W4A16_SELECTED_BY_HEURISTIC);
  }
  cudaFree(a);
  cudaFree(w);
  cudaFree(sc);
  cudaFree(d);
  cudaFree(wsp);
}

/* The memo of selections (internal.h, w4a16_memo): a stored key answers its kernel and source, in its
   generation only; a key that differs in its last word, or one never stored, answers NULL; storing a
   key again replaces its kernel; of many keys stored one after another each answers right after its
   store (a full probe window replaces a slot, never the key just stored). */
static void test_memo(void **state) {
  (void)state;
  static w4a16_memo m = W4A16_MEMO_INIT;
  const w4a16_kernel_desc *k0 = w4a16_kernel_get(0), *k1 = w4a16_kernel_get(1);
  assert_non_null(k0);
  assert_non_null(k1);
  uint64_t key[W4A16_MEMO_WORDS] = {0};
  key[0] = 64;
  key[W4A16_MEMO_WORDS - 1] = 7;
  int src = -1;
  assert_null(w4a16_memo_get(&m, key, 1, &src));
  assert_int_equal(src, -1);
  w4a16_memo_put(&m, key, 1, k0, 2);
  assert_ptr_equal(w4a16_memo_get(&m, key, 1, &src), k0);
  assert_int_equal(src, 2);
  assert_null(w4a16_memo_get(&m, key, 2, NULL));
  key[W4A16_MEMO_WORDS - 1] = 8;
  assert_null(w4a16_memo_get(&m, key, 1, NULL));
  key[W4A16_MEMO_WORDS - 1] = 7;
  w4a16_memo_put(&m, key, 1, k1, 0);
  assert_ptr_equal(w4a16_memo_get(&m, key, 1, &src), k1);
  assert_int_equal(src, 0);
  int found = 0;
  for (int i = 0; i < 4 * W4A16_MEMO_SIZE; ++i) {
    key[1] = (uint64_t)i;
    w4a16_memo_put(&m, key, 1, (i & 1) ? k1 : k0, i & 3);
    assert_ptr_equal(w4a16_memo_get(&m, key, 1, &src), (i & 1) ? k1 : k0);
    assert_int_equal(src, i & 3);
  }
  for (int i = 0; i < 4 * W4A16_MEMO_SIZE; ++i) {
    key[1] = (uint64_t)i;
    const w4a16_kernel_desc *kd = w4a16_memo_get(&m, key, 1, NULL);
    if (kd) assert_ptr_equal(kd, (i & 1) ? k1 : k0);
    found += kd != NULL;
  }
  assert_true(found > 0 && found <= W4A16_MEMO_SIZE);
}

int main(void) {
  /* the process-wide config cache of test_select_on_device: a scratch file */
  char dir[] = "/tmp/w4a16_test_select_XXXXXX", path[128];
  if (!mkdtemp(dir)) return 1;
  snprintf(path, sizeof path, "%s/configs.tsv", dir);
  setenv("W4A16_CACHE_PATH", path, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rule_m_range),       cmocka_unit_test(test_rule_cc_range),    cmocka_unit_test(test_arch_filter),
      cmocka_unit_test(test_dtype_and_mode),     cmocka_unit_test(test_fallback), cmocka_unit_test(test_tie_prefers_more_stages),
      cmocka_unit_test(test_no_kernel),          cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_requested_prefix),   cmocka_unit_test(test_waves_efficiency),
      cmocka_unit_test(test_estimate_monotone),  cmocka_unit_test(test_estimate_cluster),
      cmocka_unit_test(test_custom_rules),       cmocka_unit_test(test_rule_order),
      cmocka_unit_test(test_rule_matcher_reference),
      cmocka_unit_test(test_rule_schedules),     cmocka_unit_test(test_rule_cluster_min), cmocka_unit_test(test_rule_dtypes),
      cmocka_unit_test(test_rule_mem_gbps), cmocka_unit_test(test_group_max_per_column),
      cmocka_unit_test(test_builtin_rules),      cmocka_unit_test(test_random_problems),
      cmocka_unit_test(test_registry_query),     cmocka_unit_test(test_select_on_device),
      cmocka_unit_test(test_memo),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char lock[160];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(path);
  unlink(lock);
  rmdir(dir);
  return rc;
}
