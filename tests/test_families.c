/* test_families.c - can_implement, workspace size and the launch plan (split-K, stream-K, the K pair)
   on a fake table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "debug.h"
#include "internal.h"
#include "test_util.h"

static const w4a16_kernel_desc fake_sm80 = {
    .name = "fake_sm80", .family = W4A16_FAMILY_SM80, .sm_min = 80, .sm_max = 999, .arch = "sm80",
    .dtype = W4A16_DTYPE_BF16, .mode = W4A16_FINEGRAINED_SCALE_ONLY, .tile_n = 128, .tile_m = 16, .tile_k = 128,
    .cluster_n = 1, .cluster_m = 1, .cluster_k = 1, .schedule = W4A16_SCHEDULE_MULTISTAGE, .stages = 4,
    .split_k = 8, .threads = 128, .smem_bytes = 40000, .min_group = 32, .impl = NULL};
static const w4a16_kernel_desc fake_gemv = {
    .name = "fake_gemv", .family = W4A16_FAMILY_GEMV, .sm_min = 80, .sm_max = 999, .arch = "sm80",
    .dtype = W4A16_DTYPE_F16, .mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS, .tile_n = 64, .tile_m = 8, .tile_k = 64,
    .cluster_n = 1, .cluster_m = 1, .cluster_k = 1, .schedule = W4A16_SCHEDULE_GEMV, .split_k = 1, .threads = 256,
    .min_group = 64};

/* the rules' part of the launch plan (runtime/plan.h) on 132 SMs: what selection and the workspace
   query read */
static w4a16_plan rules_plan(const w4a16_kernel_desc *k, const w4a16_problem *p) {
  w4a16_plan plan;
  assert_int_equal(w4a16_plan_launch(k, p, 132, 0, W4A16_PLAN_RULES, &plan), 0);
  return plan;
}

static void expect(w4a16_status got, w4a16_status want, const char *needle) {
  assert_int_equal(got, want);
  if (needle && !strstr(w4a16_last_error_message(), needle)) {
    fprintf(stderr, "message '%s' does not contain '%s'\n", w4a16_last_error_message(), needle);
    fail();
  }
}

static void test_can_implement_rules(void **state) {
  (void)state;
  w4a16_problem p = test_problem(16, 4096, 4096, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  expect(w4a16_can_implement(&fake_sm80, &p), W4A16_STATUS_OK, NULL);
  expect(w4a16_can_implement(NULL, &p), W4A16_STATUS_NULL_POINTER, "kernel");
  expect(w4a16_can_implement(&fake_sm80, NULL), W4A16_STATUS_NULL_POINTER, "problem");
  w4a16_problem q = p; q.m = -1;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "M = -1");
  q = p; q.m = 0; /* an empty product: every kernel that fits the rest */
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_OK, NULL);
  q = p; q.n = -128;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "N = -128");
  q = p; q.k = 0;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "K = 0");
  q = p; q.n = 4100;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "N = 4100");
  q = p; q.k = 4000;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "K = 4000");
  q = p; q.n = 4096 + 64;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_NOT_SUPPORTED, "N % 128");
  q = p; q.k = 4096 + 64; q.group_size = 64;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_NOT_SUPPORTED, "K % 128");
  q = p; q.lda = 4000;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "lda = 4000");
  q = p; q.lda = 4100;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_MISALIGNED, "lda = 4100");
  q = p; q.ldd = 4097;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_MISALIGNED, "ldd = 4097");
  q = p; q.ldd = 100;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "ldd = 100");
  q = p; q.group_size = 96;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "96");
  q = p; q.group_size = 512; /* neither a listed group nor K */
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "group size 512");
  /* one group a column (0 or K, any K % 64 == 0) in the fine-grained modes too: G = 1 */
  q = p; q.group_size = 0;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_OK, NULL);
  assert_int_equal(w4a16_effective_group(&q), 4096);
  assert_int_equal(w4a16_group_count(&q), 1);
  q = p; q.group_size = 4096;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_OK, NULL);
  q = p; q.k = 1408; q.group_size = 1408; q.lda = 0;
  expect(w4a16_check_problem(&q), W4A16_STATUS_OK, NULL);
  q.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  expect(w4a16_check_problem(&q), W4A16_STATUS_OK, NULL);
  q.group_size = 704;
  expect(w4a16_check_problem(&q), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "group size 704");
  q = p; q.k = 4096 + 128; q.group_size = 256;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "multiple of the group size 256");
  q = p; q.dtype = W4A16_DTYPE_F16;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_DTYPE_MISMATCH, "fake_sm80");
  q = p; q.dtype = (w4a16_dtype)5;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_VALUE, "dtype 5");
  q = p; q.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_MODE_MISMATCH, "FINEGRAINED_SCALE_AND_ZEROS");
  q = p; q.mode = W4A16_PER_COLUMN_SCALE_ONLY; q.group_size = 128;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "PER_COLUMN");
  q = p; q.m = (int64_t)1 << 33;
  expect(w4a16_can_implement(&fake_sm80, &q), W4A16_STATUS_INVALID_SHAPE, "M = 8589934592");
}

static void test_gemv_rules(void **state) {
  (void)state;
  w4a16_problem p = test_problem(8, 4096, 4096, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, W4A16_DTYPE_F16);
  expect(w4a16_can_implement(&fake_gemv, &p), W4A16_STATUS_OK, NULL);
  p.m = 9;
  expect(w4a16_can_implement(&fake_gemv, &p), W4A16_STATUS_NOT_SUPPORTED, "M <= 8");
  p.m = 1; p.group_size = 32;
  expect(w4a16_can_implement(&fake_gemv, &p), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, ">= 64");
}

static void test_cluster_rule(void **state) {
  (void)state;
  w4a16_kernel_desc cl = fake_sm80;
  cl.name = "fake_cluster";
  cl.cluster_n = 2;
  w4a16_problem p = test_problem(64, 128 * 3, 4096, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  expect(w4a16_can_implement(&fake_sm80, &p), W4A16_STATUS_OK, NULL);
  expect(w4a16_can_implement(&cl, &p), W4A16_STATUS_NOT_SUPPORTED, "N % 256");
  p.n = 128 * 4;
  expect(w4a16_can_implement(&cl, &p), W4A16_STATUS_OK, NULL);
}

static void test_split_k_and_workspace(void **state) {
  (void)state;
  /* (N,K) = (4096, 14336), M = 16: 32 output tiles on 132 SMs -> split so tiles * split >= 132 */
  w4a16_problem p = test_problem(16, 4096, 14336, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  int s = rules_plan(&fake_sm80, &p).split_k;
  assert_int_equal((14336 / 128) % s, 0);
  assert_true(s >= 2 && s <= 8);
  size_t bytes = 1;
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)s * 16 * 4096 * sizeof(float));
  /* act-order: the gathered A ([M][K] 2-byte elements, 256-aligned) after the kernel's part */
  p.act_order = 1;
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)s * 16 * 4096 * sizeof(float) + (size_t)16 * 14336 * 2);
  assert_int_equal(rules_plan(&fake_sm80, &p).gather_offset, (size_t)s * 16 * 4096 * sizeof(float));
  p.m = 3; /* 3 x 14336 x 2 = 86016 bytes: 336 x 256 */
  const w4a16_plan p3 = rules_plan(&fake_sm80, &p);
  assert_int_equal(p3.gather_offset % 256, 0);
  assert_int_equal(p3.workspace_bytes - p3.gather_offset, (size_t)86016);
  p.m = 16;
  p.act_order = 0;
  /* enough tiles: no split, no workspace */
  p.n = 57344;
  assert_int_equal(rules_plan(&fake_sm80, &p).split_k, 1);
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, 0);
  p.act_order = 1; /* no kernel part: the gathered A alone, at offset 0 */
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)16 * 14336 * 2);
  assert_int_equal(rules_plan(&fake_sm80, &p).gather_offset, 0);
  p.act_order = 0;
  /* a kernel without split-K never splits */
  w4a16_problem g = test_problem(1, 4096, 4096, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, W4A16_DTYPE_F16);
  assert_int_equal(rules_plan(&fake_gemv, &g).split_k, 1);
  /* GEMV with split-K: no split for half a wave of tiles at K < 8192, a split at long K or few tiles */
  w4a16_kernel_desc gsk = fake_gemv;
  gsk.split_k = 8;
  gsk.tile_n = 32;
  g = test_problem(1, 4096, 4096, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, W4A16_DTYPE_F16); /* 128 tiles */
  assert_int_equal(rules_plan(&gsk, &g).split_k, 1);
  g.k = 14336;
  assert_true(rules_plan(&gsk, &g).split_k > 1);
  g.k = 4096;
  g.n = 1024; /* 32 tiles */
  assert_true(rules_plan(&gsk, &g).split_k > 1);
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, -1, &bytes), W4A16_STATUS_INVALID_VALUE);
  p.dtype = W4A16_DTYPE_F16;
  assert_int_equal(w4a16_workspace_size(&fake_sm80, &p, 132, &bytes), W4A16_STATUS_DTYPE_MISMATCH);
}

/* A kernel that takes part-full last tiles (n_multiple 16, k_multiple 64, as the sm80 family):
   any N % 16, K % 64; its split-K and workspace count the part-full tiles; a kernel without says why */
static void test_tail_rules(void **state) {
  (void)state;
  w4a16_kernel_desc t = fake_sm80;
  t.n_multiple = 16;
  t.k_multiple = 64;
  w4a16_problem p = test_problem(100, 2368, 1664, 64, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  expect(w4a16_can_implement(&fake_sm80, &p), W4A16_STATUS_NOT_SUPPORTED, "N % 128 == 0 (its tile");
  expect(w4a16_can_implement(&t, &p), W4A16_STATUS_OK, NULL);
  p.n = 2048;
  p.k = 192;
  expect(w4a16_can_implement(&fake_sm80, &p), W4A16_STATUS_NOT_SUPPORTED, "K % 128 == 0 (its tile");
  expect(w4a16_can_implement(&t, &p), W4A16_STATUS_OK, NULL);
  p.n = 48;
  p.k = 64;
  expect(w4a16_can_implement(&t, &p), W4A16_STATUS_OK, NULL);
  t.n_multiple = 32;
  expect(w4a16_can_implement(&t, &p), W4A16_STATUS_NOT_SUPPORTED, "N % 32 == 0, N = 48");
  t.n_multiple = 16;
  /* split-K over ceil(K / tile_k) k-tiles: K = 1664 + 64 = 1728 is 13.5 tiles of 128 -> 14 */
  p = test_problem(16, 208, 1728, 64, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16); /* 2 tiles */
  const int s = rules_plan(&t, &p).split_k;
  assert_true(s > 1);
  assert_int_equal(14 % s, 0);
  size_t bytes = 0;
  assert_int_equal(w4a16_workspace_size(&t, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)s * 16 * 208 * sizeof(float));
}

/* an sm90 kernel of the given tile, split-K up to 12, one CTA per SM (more than half an SM of
   shared memory) */
static w4a16_kernel_desc fake_sm90(int tile_n, int tile_m, int tile_k) {
  w4a16_kernel_desc k = fake_sm80;
  k.name = "fake_sm90";
  k.family = W4A16_FAMILY_SM90;
  k.tile_n = tile_n;
  k.tile_m = tile_m;
  k.tile_k = tile_k;
  k.split_k = 12;
  k.smem_bytes = 200000;
  return k;
}

static void test_stream_k_sm90(void **state) {
  (void)state;
  w4a16_kernel_desc k = fake_sm90(128, 256, 64); /* one CTA per SM: 132 slots */
  w4a16_debug_settings *dbg = w4a16_debug_for_tests();
  dbg->sm90_streamk = -1;
  /* (N,K) = (10240, 8192), M = 256: 80 tiles fill 61 % of a wave and no split fits -> stream-K;
     its workspace: a 128x256 fp32 partial tile and a 32-bit flag per CTA slot */
  w4a16_problem p = test_problem(256, 10240, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  size_t bytes = 0;
  assert_int_equal(w4a16_workspace_size(&k, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)132 * 128 * 256 * sizeof(float) + 528);
  /* the waves' fill and count bounds on both sides (132 slots): 120 tiles fill 91 % of a wave (no
     stream-K); 320 tiles, 3 waves at 81 % (stream-K); 530 tiles, 5 waves at 80 % (none) */
  const struct { int64_t m, n; int stream_k; } waves[] = {{256, 15360, 0}, {1024, 10240, 1}, {2560, 6784, 0}};
  for (size_t i = 0; i < sizeof waves / sizeof waves[0]; ++i) {
    w4a16_problem q = test_problem(waves[i].m, waves[i].n, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
    assert_int_equal(rules_plan(&k, &q).stream_k, waves[i].stream_k);
  }
  /* two CTAs per SM: 264 slots, where 80 tiles split 3; at M = 512, 160 tiles take stream-K */
  k.smem_bytes = 100000;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  p.m = 512;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  assert_int_equal(w4a16_workspace_size(&k, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)264 * 128 * 256 * sizeof(float) + 1056);
  p.m = 256;
  k.smem_bytes = 200000;
  /* a 2x1x1 cluster: 66 cluster slots, 40 cluster tiles -> stream-K */
  k.cluster_n = 2;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  k.cluster_n = 1;
  /* W4A16_SM90_STREAMK=0 (debug.h): never (and no workspace) */
  dbg->sm90_streamk = 0;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  assert_int_equal(w4a16_workspace_size(&k, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, 0);
  dbg->sm90_streamk = -1;
  /* whole waves: 8192x8192 at M = 1024 (4 x 64 = 256 tiles: 1.94 waves, 97 %) -> no */
  p.m = 1024;
  p.n = 8192;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  /* ... unless forced (W4A16_SM90_STREAMK=1: wherever a wave is part-empty) */
  dbg->sm90_streamk = 1;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  dbg->sm90_streamk = -1;
  /* 6144x4096 at M = 1024: 192 tiles, 1.45 waves (73 %) -> stream-K */
  p.n = 6144;
  p.k = 4096;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  /* many waves (57344x8192 at M = 4096: 7168 tiles) -> no */
  p.m = 4096;
  p.n = 57344;
  p.k = 8192;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  /* not below M = 65 (memory-bound): 28672x4096 at M = 16 with 256x16 tiles (112 tiles, 85 %) */
  k.tile_n = 256;
  k.tile_m = 16;
  k.tile_k = 128;
  p = test_problem(16, 28672, 4096, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  dbg->sm90_streamk = 1;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  dbg->sm90_streamk = -1;
  /* ... but the 256-k tiles: 10240x8192 at M = 64 with 128x64x256 (80 tiles, 61 %), not with
     128x64x128; below M = 17 only where the tiles number at least 0.45 of the SMs: 10240x8192
     (80 tiles) and 8192x8192 (64: the K pair) at M = 16, not 6144x4096 (48) */
  k.tile_n = 128;
  k.tile_m = 64;
  k.tile_k = 256;
  p = test_problem(64, 10240, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  assert_int_equal(w4a16_stream_k_min_m(&k), 1);
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  p.m = 16;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  p.n = 8192;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  p.n = 6144;
  p.k = 4096;
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  p.m = 17;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  p.n = 10240;
  p.k = 8192;
  p.m = 64;
  k.tile_k = 128;
  assert_int_equal(w4a16_stream_k_min_m(&k), 65);
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  /* ... and in place of split-K: 8192x8192 at M = 64 (64 tiles: split 2 with 128x64x128, stream-K
     with 128x64x256) */
  p.n = 8192;
  assert_int_equal(rules_plan(&k, &p).split_k, 2);
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  k.tile_k = 256;
  assert_int_equal(rules_plan(&k, &p).stream_k, 1);
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  /* W4A16_SM90_STREAMK_MIN_M overrides the smallest M */
  dbg->sm90_streamk_min_m = 80;
  assert_int_equal(w4a16_stream_k_min_m(&k), 80);
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  dbg->sm90_streamk_min_m = -1;
  /* split-K takes the few-tile problems: 8192x8192 at M = 16 with 256-row tiles (32 tiles -> split 4) */
  k.tile_n = 256;
  k.tile_m = 16;
  k.tile_k = 128;
  p = test_problem(16, 8192, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  assert_int_equal(rules_plan(&k, &p).split_k, 4);
  assert_int_equal(rules_plan(&k, &p).stream_k, 0);
  /* other families never */
  p.m = 256;
  p.n = 10240;
  assert_int_equal(rules_plan(&fake_sm80, &p).stream_k, 0);
}

static void test_split_k_sm90(void **state) {
  (void)state;
  w4a16_kernel_desc k = fake_sm90(256, 16, 128);
  size_t bytes = 0;
  /* (N,K) = (10240, 8192), M = 16: 40 tiles -> the largest one-wave split, 3 (64 k-blocks: uneven) */
  w4a16_problem p = test_problem(16, 10240, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  assert_int_equal(rules_plan(&k, &p).split_k, 3);
  assert_int_equal(w4a16_workspace_size(&k, &p, 132, &bytes), W4A16_STATUS_OK);
  assert_int_equal(bytes, (size_t)3 * 16 * 10240 * sizeof(float));
  /* 8192x8192: 32 tiles -> 4 */
  p.n = 8192;
  assert_int_equal(rules_plan(&k, &p).split_k, 4);
  /* one tile: capped by the kernel's split_k (12, not a divisor of 64) */
  p.n = 256;
  assert_int_equal(rules_plan(&k, &p).split_k, 12);
  /* capped by K / tile_k */
  p.k = 1024;
  assert_int_equal(rules_plan(&k, &p).split_k, 8);
  /* 80 tiles: no second slice fits in the wave */
  p.n = 20480;
  p.k = 8192;
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  /* enough tiles */
  p.n = 57344;
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  /* a two-CTAs-per-SM tile (at most half an SM of shared memory) fills 264 slots: 80 tiles of
     128 rows (10240x8192, M = 16) -> 3, where one CTA per SM would give 1 */
  k.smem_bytes = 100000;
  k.tile_n = 128;
  p.n = 10240;
  assert_int_equal(rules_plan(&k, &p).split_k, 3);
  k.smem_bytes = 200000;
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
  /* 160 tiles: more than the SMs, fewer than the two-per-SM slots -> still 1 (264 / 160) */
  k.smem_bytes = 100000;
  k.tile_n = 64;
  assert_int_equal(rules_plan(&k, &p).split_k, 1);
}

/* fake facts of an sm90 kernel for the whole plan: one CTA per SM, the K pair, scale chunks of 3 */
static struct w4a16_sm90_facts g_facts;
static int fake_facts(int sm_count, struct w4a16_sm90_facts *f) {
  (void)sm_count;
  *f = g_facts;
  return 0;
}
static const struct w4a16_kernel_impl fake_sm90_impl = {.sm90_facts = fake_facts};

/* The whole launch plan of an sm90 kernel (the rules refined by the kernel's facts): the K pair where
   two CTAs a tile fill the GPU and every pair is resident, else stream-K where the workspace holds its
   partials, else tile by tile; a selected kernel without workspace runs without either. */
static void test_plan_sm90(void **state) {
  (void)state;
  w4a16_kernel_desc k = fake_sm90(128, 16, 256);
  k.schedule = W4A16_SCHEDULE_COOPERATIVE;
  k.impl = &fake_sm90_impl;
  g_facts = (struct w4a16_sm90_facts){.ctas_per_sm = 1, .pair_ok = 1, .scale_chunk = 3, .resident_pairs = 66,
                                      .resident_ctas_per_sm = 1};
  /* 8192x8192 at M = 16: 64 tiles of 128 rows, stream-K by the rules; the K pair, 128 CTAs in
     clusters of two, scale rows by chunks of 3 k-blocks (6 rows of groups of 128) */
  w4a16_problem p = test_problem(16, 8192, 8192, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16);
  const w4a16_plan rules = rules_plan(&k, &p);
  assert_int_equal(rules.stream_k, 1);
  assert_int_equal(rules.workspace_bytes, (size_t)132 * 128 * 16 * sizeof(float) + 528);
  w4a16_plan pl;
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, rules.workspace_bytes, 0, &pl), 0);
  assert_int_equal(pl.kpair, 1);
  assert_int_equal(pl.stream_k, 0);
  assert_int_equal(pl.split_k, 1);
  assert_int_equal(pl.grid, 128);
  assert_int_equal(pl.cluster, 2);
  assert_int_equal(pl.scale_map, 1 | 2 | 6 << 8);
  assert_int_equal(pl.prefetch, -3);
  assert_int_equal(pl.workspace_bytes, rules.workspace_bytes);
  /* not every pair resident: stream-K over 132 CTAs, 2048 iterations in parts that shrink with the
     CTA index (B = (132 - 2048 % 132) / 2 = 32) */
  g_facts.resident_pairs = 32;
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, rules.workspace_bytes, 0, &pl), 0);
  assert_int_equal(pl.kpair, 0);
  assert_int_equal(pl.stream_k, 1);
  assert_int_equal(pl.grid, 132);
  assert_int_equal(pl.sk_base, 15);
  assert_int_equal(pl.sk_rem, (68 + 32) | 32 << 16);
  assert_int_equal(pl.scale_map, 0); /* no chunks outside the K pair; 2 rows: a bulk copy a row */
  /* W4A16_SM90_SKEW=0 (debug.h): equal parts */
  w4a16_debug_settings *dbg = w4a16_debug_for_tests();
  dbg->sm90_skew = 0;
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, rules.workspace_bytes, 0, &pl), 0);
  assert_int_equal(pl.sk_rem, 68);
  dbg->sm90_skew = 1;
  /* stream-K's partials do not fit the workspace given: tile by tile, a CTA a tile */
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, 0, 0, &pl), 0);
  assert_int_equal(pl.stream_k, 0);
  assert_int_equal(pl.grid, 64);
  assert_int_equal(pl.workspace_bytes, rules.workspace_bytes); /* the caller reports it too small */
  /* ... and a kernel the runtime selected fits the workspace: no reservation */
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, 0, W4A16_PLAN_FIT_WORKSPACE, &pl), 0);
  assert_int_equal(pl.stream_k, 0);
  assert_int_equal(pl.workspace_bytes, 0);
  /* W4A16_SM90_NO_PDL (debug.h): no programmatic launch, no prefetch */
  dbg->sm90_pdl = 0;
  assert_int_equal(w4a16_plan_launch(&k, &p, 132, rules.workspace_bytes, 0, &pl), 0);
  assert_int_equal(pl.pdl, 0);
  assert_int_equal(pl.prefetch, 0);
  dbg->sm90_pdl = 1;
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_can_implement_rules), cmocka_unit_test(test_gemv_rules), cmocka_unit_test(test_cluster_rule),
                                     cmocka_unit_test(test_split_k_and_workspace), cmocka_unit_test(test_tail_rules),
                                     cmocka_unit_test(test_stream_k_sm90),
                                     cmocka_unit_test(test_split_k_sm90), cmocka_unit_test(test_plan_sm90)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
