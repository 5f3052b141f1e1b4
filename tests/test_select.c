/* test_select.c - the heuristic on a fake registry: rule tiers, the architecture
   filter, never a kernel that cannot implement the problem, the fallback, the
   waves efficiency, argument checks (no GPU needed); and, on a GPU, selection
   through the config cache and w4a16_gemm with no kernel. The quality of the built-in
   rule table (heuristics/rules.tsv) is tested by replaying committed profiles
   (tests/python/test_heuristic_replay.py), not by pinning the rows each problem meets. */
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

/* every returned kernel can implement the problem, runs on cc, and the order is (tier, estimate) */
static void check_ranking_in(const w4a16_kernel_desc *table, size_t count, const w4a16_problem *p, int cc,
                             const w4a16_heuristic_result *r, int n) {
  size_t nrules;
  w4a16_heuristic_rules(&nrules);
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
    else
      assert_true((size_t)r[i].rule_index < nrules);
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

static void check_ranking(const w4a16_problem *p, int cc, const w4a16_heuristic_result *r, int n) {
  check_ranking_in(fake, NFAKE, p, cc, r, n);
}

static size_t implementable(const w4a16_problem *p, int cc) {
  size_t n = 0;
  for (size_t i = 0; i < NFAKE; ++i)
    if (cc >= fake[i].sm_min && cc <= fake[i].sm_max && w4a16_can_implement(&fake[i], p) == W4A16_STATUS_OK) ++n;
  return n;
}

static void test_decode_picks_gemv(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  /* the generic rules (a device the H100 table does not cover: cc 8.9) */
  for (int64_t m = 1; m <= 16; ++m) {
    w4a16_problem p = bf16_problem(m, 4096, 4096);
    int n = query(128, 89, &p, r, (int)NFAKE);
    assert_int_equal(r[0].kernel->family, W4A16_FAMILY_GEMV);
    assert_string_equal(r[0].rule, "decode-gemv");
    assert_true(r[0].kernel->tile_m >= m);
    check_ranking(&p, 89, r, n);
    assert_int_equal((size_t)n, implementable(&p, 89));
  }
}

static void test_hopper_prefers_sm90(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  int64_t ms[] = {32, 64, 256, 1024, 4096};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i) {
    w4a16_problem p = bf16_problem(ms[i], 8192, 8192);
    int n = query(132, 90, &p, r, (int)NFAKE);
    assert_int_equal(r[0].kernel->family, W4A16_FAMILY_SM90);
    /* the H100 table where the fake registry has its class, else the generic sm90 tiers */
    assert_true(strncmp(r[0].rule, "sm90", 4) == 0 || strncmp(r[0].rule, "h100-", 5) == 0);
    check_ranking(&p, 90, r, n);
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
  assert_int_equal(w4a16_heuristic_query_rules(&rule, 1, table, 3, 132, 90, 0, NULL, &p, 3, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 3);
  assert_string_equal(r[0].rule, "clusters");
  assert_string_equal(r[1].rule, "clusters");
  assert_true(r[0].kernel->cluster_n * r[0].kernel->cluster_m >= 2 && r[1].kernel->cluster_n * r[1].kernel->cluster_m >= 2);
  assert_string_equal(r[2].rule, "fallback");
  assert_int_equal(r[2].kernel->cluster_n, 1);
  /* with cluster_max: exactly two CTAs */
  rule.cluster_max = 2;
  assert_int_equal(w4a16_heuristic_query_rules(&rule, 1, table, 3, 132, 90, 0, NULL, &p, 3, r, &n), W4A16_STATUS_OK);
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

static void test_small_m_on_ampere(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  w4a16_problem p = bf16_problem(32, 4096, 4096);
  int n = query(108, 80, &p, r, (int)NFAKE);
  assert_int_equal(r[0].kernel->family, W4A16_FAMILY_SM80);
  assert_true(strncmp(r[0].rule, "sm80", 4) == 0);
  check_ranking(&p, 80, r, n);
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
  assert_int_equal(test_query_table(two, 2, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[1]);
  assert_ptr_equal(r[1].kernel, &two[0]);
}

/* a kernel no rule ranks (a family the rule table does not know yet) still comes back, last */
static void test_fallback(void **state) {
  (void)state;
  w4a16_kernel_desc future = *fake_named(SM80_128X16X128);
  future.name = "w4a16_sm100_bf16_u4_fgs_128x16x128";
  future.family = (w4a16_family)3;
  w4a16_heuristic_result r[4];
  int n = 0;
  w4a16_problem p = bf16_problem(64, 4096, 4096);
  assert_int_equal(test_query_table(&future, 1, 132, 90, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_ptr_equal(r[0].kernel, &future);
  assert_int_equal(r[0].rule_index, -1);
  assert_string_equal(r[0].rule, "fallback");
  /* beside a ranked kernel, the fallback tier comes last */
  const w4a16_kernel_desc two[2] = {future, *fake_named(SM80_128X16X128)};
  assert_int_equal(test_query_table(two, 2, 132, 90, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_ptr_equal(r[0].kernel, &two[1]);
  assert_true(r[0].rule_index >= 0);
  assert_ptr_equal(r[1].kernel, &two[0]);
  assert_string_equal(r[1].rule, "fallback");
  check_ranking_in(two, 2, &p, 90, r, n);
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
  /* the registry variant checks its arguments before looking for a GPU */
  assert_int_equal(w4a16_heuristic_query(NULL, 4, r, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_heuristic_query(&p, 0, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(w4a16_heuristic_query(&p, 4, NULL, &n), W4A16_STATUS_NULL_POINTER);
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
  /* and the H100 table takes it there, within the 128x256x64 class */
  const w4a16_kernel_desc pair[2] = {one, two};
  w4a16_heuristic_result r[2];
  int n = 0;
  assert_int_equal(test_query_table(pair, 2, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_int_equal(r[0].kernel->cluster_n, 2);
  p = bf16_problem(256, 8192, 8192);
  assert_int_equal(test_query_table(pair, 2, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(r[0].kernel->cluster_n, 1);
  /* the widest layer at M = 129..256: rows with cluster_max 1 keep the 2x1x1 kernel out of their tier,
     though the cost model alone would rank it first at M = 200 (M = 385..512 takes it:
     test_h100_m257_split) */
  const int64_t ms[2] = {200, 256};
  for (int i = 0; i < 2; ++i) {
    p = bf16_problem(ms[i], 57344, 8192);
    assert_int_equal(test_query_table(pair, 2, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].kernel->cluster_n, 1);
    assert_non_null(strstr(r[0].rule, "-n16385-up"));
    assert_null(strstr(r[1].rule, "-n16385-up"));
  }
  p = bf16_problem(200, 57344, 8192);
  assert_true(w4a16_heuristic_estimate_us(&two, &p, 132, 1, NULL) < w4a16_heuristic_estimate_us(&one, &p, 132, 1, NULL));
  /* a rule's cluster_max counts every CTA of the cluster */
  w4a16_heuristic_rule rule = {.name = "no-clusters", .m_min = 1, .cc_min = 80, .family = -1, .cluster_max = 1};
  assert_int_equal(w4a16_heuristic_query_rules(&rule, 1, pair, 2, 132, 90, 0, NULL, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_string_equal(r[0].rule, "no-clusters");
  assert_int_equal(r[0].kernel->cluster_n, 1);
  assert_string_not_equal(r[1].rule, "no-clusters");
}

/* custom rule tables through the internal entry point: ranges, tiers, waves */
static void test_custom_rules(void **state) {
  (void)state;
  const w4a16_heuristic_rule rules[] = {
      {.name = "wide-n", .m_min = 1, .n_min = 16384, .cc_min = 80, .family = S80, .tile_n_min = 256},
      {.name = "full-waves", .m_min = 1, .cc_min = 80, .family = -1, .min_waves_eff = 0.95f},
      {.name = "one-m-tile", .m_min = 1, .m_max = 64, .cc_min = 80, .family = -1, .m_tiles_max = 1},
  };
  w4a16_heuristic_result r[NFAKE];
  int n = 0;
  w4a16_problem p = bf16_problem(512, 16384, 4096);
  assert_int_equal(w4a16_heuristic_query_rules(rules, 3, fake, NFAKE, 132, 80, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  assert_string_equal(r[0].rule, "wide-n");
  assert_int_equal(r[0].kernel->tile_n, 256);
  for (int i = 0; i < n; ++i) {
    if (r[i].rule_index == 1) assert_true(r[i].waves_efficiency >= 0.95f);
    if (r[i].rule_index == 2) assert_true(r[i].kernel->tile_m >= 512);
  }
  /* N below the wide-n range: that rule does not apply */
  p = bf16_problem(512, 4096, 4096);
  assert_int_equal(w4a16_heuristic_query_rules(rules, 3, fake, NFAKE, 132, 80, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  for (int i = 0; i < n; ++i) assert_int_not_equal(r[i].rule_index, 0);
  /* sm_count range */
  const w4a16_heuristic_rule small_gpu[] = {
      {.name = "small-gpu", .m_min = 1, .sm_count_min = 1, .sm_count_max = 60, .cc_min = 80, .family = S80,
       .tile_m_max = 16}};
  assert_int_equal(w4a16_heuristic_query_rules(small_gpu, 1, fake, NFAKE, 46, 86, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  assert_string_equal(r[0].rule, "small-gpu");
  assert_int_equal(r[0].kernel->tile_m, 16);
  assert_int_equal(w4a16_heuristic_query_rules(small_gpu, 1, fake, NFAKE, 132, 90, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  for (int i = 0; i < n; ++i) assert_string_equal(r[i].rule, "fallback");
  /* no rules at all: everything is fallback, ordered by the model */
  assert_int_equal(w4a16_heuristic_query_rules(NULL, 0, fake, NFAKE, 132, 90, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  check_ranking(&p, 90, r, n);
}

/* a rule's dtypes column keys it on the problem's dtype: fp16 scale-only at M = 2..4 on 8192x8192 takes
   the 4-token TMA GEMV 32x4x1024 ("-f16" rows), bf16 the primary row's 32x8x1024,
   although both kernels exist in both dtypes */
static void test_rule_dtypes(void **state) {
  (void)state;
  w4a16_kernel_desc t[4] = {*fake_named("w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma"),
                            *fake_named("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma")};
  t[2] = t[0];
  t[3] = t[1];
  t[2].name = "w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma";
  t[3].name = "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma";
  t[2].dtype = t[3].dtype = W4A16_DTYPE_F16;
  w4a16_heuristic_result r[4];
  int n = 0;
  for (int64_t m = 2; m <= 4; ++m) {
    w4a16_problem p = test_problem(m, 8192, 8192, 128, FGS, FH);
    assert_int_equal(test_query_table(t, 4, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, m == 2 ? "h100-m2-2-n6145-8448-f16" : "h100-m3-4-n6145-8448-f16");
    assert_string_equal(r[0].kernel->name, "w4a16_gemv_f16_u4_fgs_n32_m4_k1024_s4_tma");
    p.dtype = W4A16_DTYPE_BF16;
    assert_int_equal(test_query_table(t, 4, 132, 90, &p, 2, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, m == 2 ? "h100-m2-2-n6145-16384" : "h100-m3-4-n6145-16384");
    assert_string_equal(r[0].kernel->name, "w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma");
    for (int i = 0; i < n; ++i) assert_null(strstr(r[i].rule, "-f16"));
  }
  /* a custom table: the dtype bit decides */
  w4a16_heuristic_rule rule = {.name = "fp16-only", .m_min = 1, .cc_min = 80, .family = -1,
                               .dtypes = 1u << W4A16_DTYPE_F16};
  w4a16_problem p = test_problem(2, 8192, 8192, 128, FGS, FH);
  assert_int_equal(w4a16_heuristic_query_rules(&rule, 1, t, 4, 132, 90, 0, NULL, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_string_equal(r[0].rule, "fp16-only");
  p.dtype = W4A16_DTYPE_BF16;
  assert_int_equal(w4a16_heuristic_query_rules(&rule, 1, t, 4, 132, 90, 0, NULL, &p, 4, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 2);
  assert_string_equal(r[0].rule, "fallback");
  assert_string_equal(r[1].rule, "fallback");
}

/* the device's DRAM bandwidth (mem_gbps_min / _max): the H200 rows (4500 GB/s
   and up) hold on an H200 (4915) and on no H100 (3352) or device of unknown bandwidth (0, which
   test_query_table passes); a custom row bounded from above matches the unknown one */
static void test_rule_mem_gbps(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  int n = 0;
  typedef struct {
    int64_t m, n, k;
    w4a16_quant_mode mode;
    const char *h200_rule, *h200_kernel;
  } mem_case;
  const mem_case cases[] = {
      {1, 8192, 8192, FGS, "h200-m1-1-n6145-8192-k0-8192", "w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"},
      {2, 10240, 8192, FGSZ, "h200-m2-8-n6145-16384-k0-8192", "w4a16_gemv_bf16_u4_fgsz_n32_m8_k1024_s3_tma"},
      {2, 10240, 8192, FGS, "h200-m2-8-n6145-16384-k0-8192", "w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"},
      {2, 57344, 8192, FGS, "h200-m1-8-n16385-up", "w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"},
      {1, 4096, 4096, FGSZ, "h200-m1-4-n3585-4096-k0-8192-zp-pc", "w4a16_gemv_bf16_u4_fgsz_n16_m8_k1024_s2_tma"},
      {12, 4096, 4096, FGS, "h200-m9-16-n0-4096-k0-8192", "w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s2_tma"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    w4a16_problem p = test_problem(cases[i].m, cases[i].n, cases[i].k, 128, cases[i].mode, BF);
    assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, 4915, &p, 4, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, cases[i].h200_rule);
    assert_string_equal(r[0].kernel->name, cases[i].h200_kernel);
    check_ranking(&p, 90, r, n);
    /* an H100, and a device of unknown bandwidth, take the H100 rows: the same pick both ways */
    w4a16_heuristic_result h100[4], unknown[4];
    int nh = 0, nu = 0;
    assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, 3352, &p, 4, h100, &nh), W4A16_STATUS_OK);
    assert_int_equal(test_query_table(fake, NFAKE, 132, 90, &p, 4, unknown, &nu), W4A16_STATUS_OK);
    assert_int_equal(nh, nu);
    for (int j = 0; j < nh; ++j) {
      assert_null(strstr(h100[j].rule, "h200-"));
      assert_ptr_equal(h100[j].kernel, unknown[j].kernel);
    }
    assert_string_not_equal(h100[0].kernel->name, cases[i].h200_kernel);
  }
  /* bf16 scale-only at M = 9..16 on 57344x8192: 64x16x512 on both, by the H200 row on an H200 */
  w4a16_problem p = bf16_problem(16, 57344, 8192);
  assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, 4915, &p, 1, r, &n), W4A16_STATUS_OK);
  assert_string_equal(r[0].rule, "h200-m9-16-n16385-up-k4097-up");
  assert_string_equal(r[0].kernel->name, "w4a16_gemv_bf16_u4_fgs_n64_m16_k512_s3_tma");
  /* fp16 at M = 5..8 on 4096x14336: 32x8x1024 on an H200 (a dtype-keyed H200 row), bf16 not */
  w4a16_kernel_desc t[4] = {*fake_named("w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"),
                            *fake_named("w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s2_tma")};
  t[1].name = "w4a16_gemv_bf16_u4_fgs_n16_m8_k2048_s2_tma";
  t[1].tile_k = 2048;
  t[2] = t[0];
  t[3] = t[1];
  t[2].name = "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma";
  t[3].name = "w4a16_gemv_f16_u4_fgs_n16_m8_k2048_s2_tma";
  t[2].dtype = t[3].dtype = W4A16_DTYPE_F16;
  for (int64_t m = 5; m <= 8; ++m) {
    w4a16_problem q = test_problem(m, 4096, 14336, 128, FGS, FH);
    assert_int_equal(test_query_table_mem(t, 4, 132, 90, 4915, &q, 2, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, "h200-m5-8-n0-6144-k8193-up-f16");
    assert_string_equal(r[0].kernel->name, "w4a16_gemv_f16_u4_fgs_n32_m8_k1024_s3_tma");
    q.dtype = W4A16_DTYPE_BF16;
    assert_int_equal(test_query_table_mem(t, 4, 132, 90, 4915, &q, 2, r, &n), W4A16_STATUS_OK);
    assert_string_equal(r[0].rule, "h100-m5-8-n0-6144-k8193-up");
    assert_string_equal(r[0].kernel->name, "w4a16_gemv_bf16_u4_fgs_n16_m8_k2048_s2_tma");
  }
  /* M = 5..8 on 8192x28672 (K > 8192) and decode on 6144x4096 keep the H100 rows on an H200 */
  p = bf16_problem(8, 8192, 28672);
  assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, 4915, &p, 1, r, &n), W4A16_STATUS_OK);
  assert_true(strncmp(r[0].rule, "h100-", 5) == 0);
  p = bf16_problem(2, 6144, 4096);
  assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, 4915, &p, 1, r, &n), W4A16_STATUS_OK);
  assert_true(strncmp(r[0].rule, "h100-", 5) == 0);
  /* custom rows: the bounds decide, inclusive; 0 (unknown) is below every lower bound */
  const w4a16_heuristic_rule fast = {.name = "fast-memory", .m_min = 1, .cc_min = 80, .family = -1, .mem_gbps_min = 4500};
  const w4a16_heuristic_rule slow = {.name = "slow-memory", .m_min = 1, .cc_min = 80, .family = -1, .mem_gbps_max = 4000};
  const struct {
    const w4a16_heuristic_rule *rule;
    int mem_gbps;
    int matches;
  } bounds[] = {{&fast, 4915, 1}, {&fast, 4500, 1}, {&fast, 4499, 0}, {&fast, 3352, 0}, {&fast, 0, 0},
                {&slow, 3352, 1}, {&slow, 4000, 1}, {&slow, 4001, 0}, {&slow, 0, 1}};
  p = bf16_problem(2, 8192, 8192);
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; ++i) {
    assert_int_equal(w4a16_heuristic_query_rules(bounds[i].rule, 1, fake, NFAKE, 132, 90, bounds[i].mem_gbps, NULL, &p,
                                                 (int)NFAKE, r, &n),
                     W4A16_STATUS_OK);
    assert_true(n >= 2);
    assert_string_equal(r[0].rule, bounds[i].matches ? bounds[i].rule->name : "fallback");
  }
  /* a negative bandwidth is refused, named, and nothing is returned */
  n = 7;
  assert_int_equal(test_query_table_mem(fake, NFAKE, 132, 90, -1, &p, 4, r, &n), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(n, 0);
  assert_non_null(strstr(w4a16_last_error_message(), "mem_gbps = -1"));
}

/* a rule's schedules mask: on the H100 at M = 2..4 on 4096x4096 the first pick is the 4-stage TMA GEMV,
   not the register-staged kernel of the same tiles and stages (which the cost model ranks first
   among the two), and not the 2-stage TMA kernel the wider K range's row takes; at K = 8192 that
   row applies again. A custom rule with a mask keeps a tier to its schedules. */
static void test_rule_schedules(void **state) {
  (void)state;
  w4a16_heuristic_result r[NFAKE];
  for (int64_t m = 2; m <= 4; ++m) {
    w4a16_problem p = bf16_problem(m, 4096, 4096);
    int n = query(132, 90, &p, r, (int)NFAKE);
    assert_string_equal(r[0].kernel->name, "w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s4_tma");
    assert_string_equal(r[0].rule, m == 2 ? "h100-m2-2-n3585-4096-k0-4096" : "h100-m3-4-n3585-4096-k0-4096");
    check_ranking(&p, 90, r, n);
  }
  w4a16_problem p = bf16_problem(4, 4096, 8192);
  query(132, 90, &p, r, (int)NFAKE);
  assert_string_equal(r[0].kernel->name, "w4a16_gemv_bf16_u4_fgs_n16_m8_k1024_s2_tma");
  assert_string_equal(r[0].rule, "h100-m3-4-n0-4096-k0-8192");
  const w4a16_heuristic_rule rules[] = {
      {.name = "staged-gemv", .m_min = 1, .cc_min = 80, .family = GEMV, .schedules = 1u << W4A16_SCHEDULE_GEMV}};
  int n = 0;
  p = bf16_problem(4, 4096, 4096);
  assert_int_equal(w4a16_heuristic_query_rules(rules, 1, fake, NFAKE, 132, 90, 0, NULL, &p, (int)NFAKE, r, &n),
                   W4A16_STATUS_OK);
  int tier = 0;
  for (int i = 0; i < n; ++i) {
    if (r[i].rule_index == 0) {
      ++tier;
      assert_int_equal(r[i].kernel->schedule, W4A16_SCHEDULE_GEMV);
    } else {
      assert_true(r[i].kernel->family != GEMV || r[i].kernel->schedule != W4A16_SCHEDULE_GEMV);
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
  assert_int_equal(w4a16_heuristic_query_rules(rules, 1, one, 2, 132, 90, 0, NULL, &p, 2, r, &n), W4A16_STATUS_OK);
  assert_int_equal(n, 1);
  assert_string_equal(r[0].rule, "small-groups");
  p = test_problem(16, 4096, 4096, 0, W4A16_PER_COLUMN_SCALE_ONLY, BF);
  assert_int_equal(w4a16_heuristic_query_rules(rules, 1, one, 2, 132, 90, 0, NULL, &p, 2, r, &n), W4A16_STATUS_OK);
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

int main(void) {
  /* the process-wide config cache of test_select_on_device: a scratch file */
  char dir[] = "/tmp/w4a16_test_select_XXXXXX", path[128];
  if (!mkdtemp(dir)) return 1;
  snprintf(path, sizeof path, "%s/configs.tsv", dir);
  setenv("W4A16_CACHE_PATH", path, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decode_picks_gemv),  cmocka_unit_test(test_hopper_prefers_sm90), cmocka_unit_test(test_arch_filter),        cmocka_unit_test(test_small_m_on_ampere),
      cmocka_unit_test(test_dtype_and_mode),     cmocka_unit_test(test_fallback), cmocka_unit_test(test_tie_prefers_more_stages),
      cmocka_unit_test(test_no_kernel),          cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_requested_prefix),   cmocka_unit_test(test_waves_efficiency),
      cmocka_unit_test(test_estimate_monotone),  cmocka_unit_test(test_estimate_cluster),
      cmocka_unit_test(test_custom_rules),
      cmocka_unit_test(test_rule_schedules),     cmocka_unit_test(test_rule_cluster_min), cmocka_unit_test(test_rule_dtypes),
      cmocka_unit_test(test_rule_mem_gbps), cmocka_unit_test(test_group_max_per_column),
      cmocka_unit_test(test_builtin_rules),      cmocka_unit_test(test_random_problems),
      cmocka_unit_test(test_registry_query),     cmocka_unit_test(test_select_on_device),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char lock[160];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(path);
  unlink(lock);
  rmdir(dir);
  return rc;
}
