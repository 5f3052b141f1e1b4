/* test_grouped.c - the grouped (mixture-of-experts) GEMM: argument checks (CPU) and every grouped
 * kernel against a per-expert float64 reference (GPU; skipped without one).
 *
 * GPU cases, per dtype x mode (and group size 128, 64 with a K tail, per-column): unequal counts
 * with empty experts, one expert with every row, counts 0..300 over 16 experts, with and without
 * the row gather and the per-row scale, int32 and int64 offsets, rows above offsets[E], per-column
 * integer zero points (gcase.int_zeros). D is
 * poisoned (NaN bits) with guard rows before and after it: every row of a valid expert must match
 * the reference (||D - ref|| / ||ref|| < 2e-3 fp16, < 1e-2 bf16, no NaN), every other row and
 * both guards must keep the poison. The status word (poisoned first) must read 0. Bad offsets
 * (decreasing, past rows) and a bad row index must set their status bits, leave the guards alone
 * and compute the valid experts. W4A16_TEST_FILTER='pattern' (fnmatch) limits the kernels.
 * w4a16_grouped_profile: every bad argument refused by name (CPU); on a GPU, a profiled problem's
 * table (every row a kernel that can implement it, fastest first, each OK) and the product the
 * timed launches leave in D, checked as above.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "test_cuda_util.h"
#include "test_util.h"

#define GUARD_ROWS 4
#define POISON 0xffffu

static w4a16_grouped_gemm_args base_args(void) {
  w4a16_grouped_gemm_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.experts = 4;
  a.rows = 32;
  a.n = 256;
  a.k = 512;
  a.group_size = 128;
  a.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  a.dtype = W4A16_DTYPE_BF16;
  a.alpha = 1.f;
  return a;
}

static void expect(w4a16_status got, w4a16_status want, const char *needle) {
  if (got != want) fprintf(stderr, "got %s (%s), want %s\n", w4a16_status_name(got), w4a16_last_error_message(),
                           w4a16_status_name(want));
  assert_int_equal(got, want);
  if (needle && !strstr(w4a16_last_error_message(), needle)) {
    fprintf(stderr, "message '%s' does not contain '%s'\n", w4a16_last_error_message(), needle);
    fail();
  }
}

/* ---------------------------------------------------------------- CPU: argument checks */

static void test_args(void **state) {
  (void)state;
  w4a16_grouped_gemm_args a = base_args();
  expect(w4a16_grouped_gemm(NULL, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "args");
  a.struct_size = 8;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "struct_size = 8");
  a = base_args();
  a.flags = 2;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "flags = 0x2");
  /* the first version's struct ends before flags: accepted, its flags not read (the call gets as far
     as the pointer checks) */
  a.struct_size = offsetof(w4a16_grouped_gemm_args, flags);
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "A (args->a)");
  a = base_args();
  a.flags = W4A16_GEMM_NO_PDL;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "A (args->a)");
  /* the shape checks every entry shares: a token matrix of more rows than the 32-bit index reaches */
  static const int32_t an_index[1];
  a = base_args();
  a.row_index = an_index;
  a.a_rows = (int64_t)INT32_MAX + 1;
  expect(w4a16_grouped_heuristic_query(&a, 132, 1, (const w4a16_kernel_desc *[1]){NULL}, &(int){0}),
         W4A16_STATUS_INVALID_SHAPE, "a_rows = 2147483648");
  a = base_args();
  const w4a16_kernel_desc *one[1];
  int got = 0;
  expect(w4a16_grouped_heuristic_query(&a, 132, 1, NULL, &got), W4A16_STATUS_NULL_POINTER, "out or returned");
  expect(w4a16_grouped_heuristic_query(&a, -1, 1, one, &got), W4A16_STATUS_INVALID_VALUE, "sm_count = -1");
  expect(w4a16_grouped_can_implement(NULL, &a), W4A16_STATUS_NULL_POINTER, "kernel is NULL");
  if (w4a16_grouped_kernel_count() > 0)
    expect(w4a16_grouped_gemm_workspace_size(w4a16_grouped_kernel_get(0), &a, NULL), W4A16_STATUS_NULL_POINTER,
           "bytes is NULL");
  a = base_args();
  a.experts = 0;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "experts = 0");
  a = base_args();
  a.rows = -1;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "rows = -1");
  a = base_args();
  a.offsets_type = (w4a16_index_type)7;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "offsets_type 7");
  a = base_args();
  a.n = 100;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "N = 100");
  a = base_args();
  a.group_size = 48;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "48");
  /* pointers: checked before any device is asked */
  a = base_args();
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "A (args->a)");
  static _Alignas(16) char buf[256];
  a.a = a.w = a.scales = a.d = buf;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "offsets");
  a.offsets = buf + 2;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "expert offsets");
  a.offsets = buf + 4;
  a.offsets_type = W4A16_INDEX_INT64;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "8-byte");
  a.offsets = buf;
  a.row_scale = (const float *)(buf + 1);
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "row scale");
  a.row_scale = NULL;
  a.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "zeros");
  a.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  a.alpha = NAN;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "alpha");
  /* rows = 0: nothing to do, no pointer looked at */
  a = base_args();
  a.rows = 0;
  expect(w4a16_grouped_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_OK, NULL);
  size_t bytes = 1;
  a = base_args();
  expect(w4a16_grouped_gemm_workspace_size(NULL, &a, &bytes), W4A16_STATUS_OK, NULL);
  assert_int_equal(bytes, 0);
}

/* w4a16_grouped_profile on b refused with want, its message holding needle, and no row returned */
static void expect_profile(const w4a16_grouped_gemm_args *b, w4a16_status want, const char *needle) {
  w4a16_profile_result res[4];
  int got = 7;
  expect(w4a16_grouped_profile(b, NULL, res, 4, &got), want, needle);
  assert_int_equal(got, 0);
}

/* the grouped profiler refuses every bad argument, naming it, before any device is asked */
static void test_profile_args(void **state) {
  (void)state;
  static _Alignas(16) char buf[256];
  w4a16_profile_result res[4];
  int got = 7;
  w4a16_grouped_gemm_args a = base_args();
  a.d = buf;
  a.a = a.w = a.scales = a.offsets = buf;
  expect(w4a16_grouped_profile(NULL, NULL, res, 4, &got), W4A16_STATUS_NULL_POINTER, "args is NULL");
  assert_int_equal(got, 0);
  expect(w4a16_grouped_profile(&a, NULL, NULL, 4, &got), W4A16_STATUS_NULL_POINTER, "results");
  expect(w4a16_grouped_profile(&a, NULL, res, 4, NULL), W4A16_STATUS_NULL_POINTER, "returned");
  expect(w4a16_grouped_profile(&a, NULL, res, 0, &got), W4A16_STATUS_INVALID_VALUE, "requested = 0");
  const w4a16_profile_options bad_opts[] = {{-1, 0, 0, 0}, {0, -2, 0, 0}, {0, 0, -3, 0}};
  const char *bad_opt_names[] = {"warmup = -1", "iterations = -2", "rotate_min_bytes = -3"};
  for (int i = 0; i < 3; ++i)
    expect(w4a16_grouped_profile(&a, &bad_opts[i], res, 4, &got), W4A16_STATUS_INVALID_VALUE, bad_opt_names[i]);
  /* the arguments: as w4a16_grouped_gemm */
  w4a16_grouped_gemm_args b; /* REFUSES: b = a with one edit, refused */
#define REFUSES(edit, want, needle)   \
  do {                                \
    b = a;                            \
    edit;                             \
    expect_profile(&b, want, needle); \
  } while (0)
  REFUSES(b.struct_size = 8, W4A16_STATUS_INVALID_VALUE, "struct_size = 8");
  REFUSES(b.flags = 6, W4A16_STATUS_INVALID_VALUE, "flags = 0x6");
  REFUSES(b.experts = 0, W4A16_STATUS_INVALID_VALUE, "experts = 0");
  REFUSES(b.rows = -1, W4A16_STATUS_INVALID_SHAPE, "rows = -1");
  REFUSES(b.rows = 0, W4A16_STATUS_INVALID_SHAPE, "rows = 0"); /* launches nothing: nothing to time */
  REFUSES(b.offsets_type = (w4a16_index_type)7, W4A16_STATUS_INVALID_VALUE, "offsets_type 7");
  REFUSES(b.n = 100, W4A16_STATUS_INVALID_SHAPE, "N = 100");
  REFUSES(b.group_size = 48, W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "48");
  /* the pointers */
  REFUSES(b.a = NULL, W4A16_STATUS_NULL_POINTER, "A (args->a)");
  REFUSES(b.w = NULL, W4A16_STATUS_NULL_POINTER, "args->w");
  REFUSES(b.scales = NULL, W4A16_STATUS_NULL_POINTER, "args->scales");
  REFUSES(b.d = NULL, W4A16_STATUS_NULL_POINTER, "args->d");
  REFUSES(b.offsets = NULL, W4A16_STATUS_NULL_POINTER, "args->offsets");
  REFUSES(b.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS, W4A16_STATUS_NULL_POINTER, "zeros");
  REFUSES(b.w = buf + 8, W4A16_STATUS_MISALIGNED, "packed weights");
  REFUSES((b.offsets = buf + 4, b.offsets_type = W4A16_INDEX_INT64), W4A16_STATUS_MISALIGNED, "8-byte");
  REFUSES(b.row_index = (const int32_t *)(buf + 2), W4A16_STATUS_MISALIGNED, "row index");
  REFUSES(b.status = (int *)(buf + 1), W4A16_STATUS_MISALIGNED, "status");
  REFUSES(b.alpha = NAN, W4A16_STATUS_INVALID_VALUE, "alpha");
#undef REFUSES
}

static void test_tables(void **state) {
  (void)state;
  /* the grouped kernels sit in their own table: each is grouped, named so, refused by the dense
     checks; the dense kernels are refused by the grouped ones */
  w4a16_grouped_gemm_args a = base_args();
  for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
    assert_int_equal(k->grouped, 1);
    assert_non_null(strstr(k->name, "grouped"));
    assert_ptr_equal(w4a16_grouped_kernel_find(k->name), k);
    w4a16_problem p = test_problem(1, 256, 512, k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128, k->mode, k->dtype);
    expect(w4a16_can_implement(k, &p), W4A16_STATUS_NOT_SUPPORTED, "grouped");
    a.dtype = k->dtype == W4A16_DTYPE_F16 ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
    a.mode = k->mode;
    a.group_size = k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128;
    expect(w4a16_grouped_can_implement(k, &a), W4A16_STATUS_DTYPE_MISMATCH, NULL);
    if (k->family == W4A16_FAMILY_SM90 || k->schedule == W4A16_SCHEDULE_GEMV_TMA) {
      /* the unit table of the Hopper form and of the TMA decode form holds 256 experts */
      a.dtype = k->dtype;
      a.experts = 256;
      expect(w4a16_grouped_can_implement(k, &a), W4A16_STATUS_OK, NULL);
      a.experts = 257;
      expect(w4a16_grouped_can_implement(k, &a), W4A16_STATUS_NOT_SUPPORTED, "at most 256 experts");
      a = base_args();
    }
  }
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    assert_int_equal(k->grouped, 0);
    expect(w4a16_grouped_can_implement(k, &a), W4A16_STATUS_NOT_SUPPORTED, "not a grouped kernel");
  }
  assert_null(w4a16_grouped_kernel_find("w4a16_grouped_nothing"));
  expect(W4A16_STATUS_UNKNOWN_KERNEL, W4A16_STATUS_UNKNOWN_KERNEL, "w4a16_grouped_nothing");
}

/* the heuristic's first pick for a with the given experts, rows and layer (132 SMs) */
static const w4a16_kernel_desc *heuristic_pick(w4a16_grouped_gemm_args *a, int64_t experts, int64_t rows, int64_t n,
                                               int64_t k) {
  const w4a16_kernel_desc *out[1];
  int got = 0;
  a->experts = experts;
  a->rows = rows;
  a->n = n;
  a->k = k;
  expect(w4a16_grouped_heuristic_query(a, 132, 1, out, &got), W4A16_STATUS_OK, NULL);
  assert_int_equal(got, 1);
  return out[0];
}

/* w4a16_grouped_gemm's selection (w4a16_grouped_select: its memo, else the rule) on a described
   device (cc 0: no image probed) picks the heuristic's first for each of a sequence of arguments that
   revisits earlier ones (the memo's answers), and the workspace's room for the gathered rows is part
   of its key: with a row index and 1024 rows an expert the Hopper form's 256-token tile only with room. */
static void test_select_memo(void **state) {
  (void)state;
  w4a16_grouped_gemm_args a = base_args();
  a.experts = 8;
  w4a16_device_info dev = {.ordinal = 0, .cc = 0, .sm_count = 132, .max_smem_optin = 0, .mem_gbps = 0};
  static const int64_t rows[] = {8, 8192, 8, 512, 8192, 512, 2, 8};
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
      a.rows = rows[i];
      const w4a16_kernel_desc *out[1], *kd = NULL;
      int got = 0;
      expect(w4a16_grouped_heuristic_query(&a, 132, 1, out, &got), W4A16_STATUS_OK, NULL);
      expect(w4a16_grouped_select(&a, &dev, 1, &kd), W4A16_STATUS_OK, NULL);
      assert_ptr_equal(kd, out[0]);
    }
  static const int32_t index_marker[1];
  a.row_index = index_marker;
  a.a_rows = 8192;
  a.rows = 8192;
  const w4a16_kernel_desc *room = NULL, *none = NULL, *again = NULL;
  expect(w4a16_grouped_select(&a, &dev, 1, &room), W4A16_STATUS_OK, NULL);
  expect(w4a16_grouped_select(&a, &dev, 0, &none), W4A16_STATUS_OK, NULL);
  expect(w4a16_grouped_select(&a, &dev, 1, &again), W4A16_STATUS_OK, NULL);
  assert_ptr_equal(again, room);
  assert_true(none->family != W4A16_FAMILY_SM90 || none->tile_m < 256);
  if (room->family == W4A16_FAMILY_SM90) assert_int_equal(room->tile_m, 256);
}

static void test_heuristic(void **state) {
  (void)state;
  w4a16_grouped_gemm_args a = base_args();
  const w4a16_kernel_desc *out[8];
  int got = 0;
  expect(w4a16_grouped_heuristic_query(&a, 132, 0, out, &got), W4A16_STATUS_INVALID_VALUE, "requested");
  int have_gemv = 0, have_sm80 = 0, have_sm90 = 0;
  for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
    if (k->dtype != W4A16_DTYPE_BF16 || k->mode != W4A16_FINEGRAINED_SCALE_ONLY) continue;
    have_gemv |= k->family == W4A16_FAMILY_GEMV;
    have_sm80 |= k->family == W4A16_FAMILY_SM80;
    have_sm90 |= k->family == W4A16_FAMILY_SM90;
  }
  if (!have_gemv || !have_sm80) {
    skip();
    return;
  }
  /* decode: 8 rows over 128 experts -> the streaming form; 8192 rows over 8 -> tensor cores (the
     Hopper form where the build has it) */
  a.experts = 128;
  a.rows = 8;
  expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
  assert_true(got >= 1);
  assert_int_equal(out[0]->family, W4A16_FAMILY_GEMV);
  /* the kernels the query dropped left no message, and a refusal after it writes one */
  assert_string_equal(w4a16_last_error_message(), "");
  for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
    if (k->dtype == W4A16_DTYPE_BF16) continue;
    expect(w4a16_grouped_can_implement(k, &a), W4A16_STATUS_DTYPE_MISMATCH, k->name);
    break;
  }
  a.experts = 8;
  a.rows = 8192;
  expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
  assert_int_equal(out[0]->family, have_sm90 ? W4A16_FAMILY_SM90 : W4A16_FAMILY_SM80);
  assert_true(out[0]->tile_m >= 64);
  size_t bytes = 1;
  expect(w4a16_grouped_gemm_workspace_size(NULL, &a, &bytes), W4A16_STATUS_OK, NULL);
  assert_int_equal(bytes, 0);
  static const int32_t index_marker[1];
  if (have_sm90) { /* 1024 rows an expert: the 256-token tile, with a row index on rows gathered first */
    assert_int_equal(out[0]->tile_m, 256);
    expect(w4a16_grouped_gemm_workspace_size(out[0], &a, &bytes), W4A16_STATUS_OK, NULL);
    assert_int_equal(bytes, 0);
    a.row_index = index_marker; /* (the heuristic only asks whether there is one) */
    a.a_rows = 8192;
    expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(out[0]->family, W4A16_FAMILY_SM90);
    assert_int_equal(out[0]->tile_m, 256);
    /* the gathered rows: rows x K x 2 bytes, for that kernel and for the selection's */
    expect(w4a16_grouped_gemm_workspace_size(out[0], &a, &bytes), W4A16_STATUS_OK, NULL);
    assert_int_equal(bytes, (size_t)8192 * 512 * 2);
    bytes = 0;
    expect(w4a16_grouped_gemm_workspace_size(NULL, &a, &bytes), W4A16_STATUS_OK, NULL);
    assert_int_equal(bytes, (size_t)8192 * 512 * 2);
    /* 64 rows an expert: the 64-token tile, 128 of K a stage with the gather warps, 256 without */
    a.rows = 512;
    expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(out[0]->family, W4A16_FAMILY_SM90);
    assert_int_equal(out[0]->tile_m, 64);
    assert_int_equal(out[0]->tile_k, 128);
    expect(w4a16_grouped_gemm_workspace_size(NULL, &a, &bytes), W4A16_STATUS_OK, NULL);
    assert_int_equal(bytes, 0);
    a.row_index = NULL;
    expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(out[0]->tile_m, 64);
    if (w4a16_grouped_kernel_find("w4a16_grouped_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative"))
      assert_int_equal(out[0]->tile_k, 256);
    /* 16 rows an expert on 8 experts of 256 rows (8 units of 256 rows): the sm80-class form's tile
       of 32 tokens */
    a.rows = 128;
    a.row_index = index_marker;
    expect(w4a16_grouped_heuristic_query(&a, 132, 8, out, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(out[0]->family, W4A16_FAMILY_SM80);
    assert_int_equal(out[0]->tile_m, 32);
    /* 16-32 rows an expert: the Hopper form's 32-token tile (four consumer warpgroups) at 16-24 rows
       where the experts with rows times the 256-row column tiles make two units an SM (Mixtral's
       gate and up, Qwen3-30B-A3B's down, DeepSeek-V2-Lite's gate and up at 16 and 24 rows); its
       64-token tile on Mixtral's down (8 experts x 16 column tiles: one round) and other experts
       whose weights outgrow the L2; the sm80-class form on shorter K above 24 rows (DeepSeek's down,
       K = 1408, at 30 rows). A build without the 32-token tile: the Hopper form's nearest. */
    const int have_t32 =
        w4a16_grouped_kernel_find("w4a16_grouped_sm90_bf16_u4_fgs_256x32x128_1x1x1_cooperative_wg4") != NULL;
    static const struct { int64_t experts, rows, n, k; int family, tile_m; } mid[] = {
        {8, 128, 28672, 4096, W4A16_FAMILY_SM90, 32},   {8, 128, 4096, 14336, W4A16_FAMILY_SM90, 64},
        {128, 2048, 2048, 768, W4A16_FAMILY_SM90, 32},  {64, 1536, 2816, 2048, W4A16_FAMILY_SM90, 32},
        {64, 1024, 2816, 2048, W4A16_FAMILY_SM90, 32},  {64, 1920, 2048, 1408, W4A16_FAMILY_SM80, 32},
        {64, 2560, 2816, 2048, W4A16_FAMILY_SM90, 64}};
    for (size_t i = 0; i < sizeof mid / sizeof mid[0]; ++i) {
      const w4a16_kernel_desc *kd = heuristic_pick(&a, mid[i].experts, mid[i].rows, mid[i].n, mid[i].k);
      const int hopper_t32 = mid[i].tile_m == 32 && mid[i].family == W4A16_FAMILY_SM90;
      assert_int_equal(kd->family, mid[i].family);
      if (!hopper_t32 || have_t32) assert_int_equal(kd->tile_m, mid[i].tile_m);
      if (hopper_t32 && have_t32) assert_int_equal(kd->threads, 128 * 5);
    }
    /* 256 rows an expert, rows gathered first: the 256-token tile where one expert's packed weights
       pass 16 MB and its units fill four rounds of 132 SMs (Mixtral's gate_up, N x K / 2 = 56 MB,
       8 x 224 units); the 128-token tile on fewer units (Mixtral's down, 28 MB, 8 x 32 units) and on
       smaller experts (N = 4096, K = 4096: 8 MB). The workspace query without a kernel counts the
       gathered rows wherever the selection may take that tile (any SM count): the first two. */
    a.row_index = index_marker;
    a.a_rows = 2048;
    static const struct { int64_t n, k; int tile_m; size_t bytes; } wide[] = {
        {28672, 4096, 256, 2048 * 4096 * 2}, {4096, 14336, 128, 2048 * 14336 * 2}, {4096, 4096, 128, 0}};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; ++i) {
      const w4a16_kernel_desc *kd = heuristic_pick(&a, 8, 2048, wide[i].n, wide[i].k);
      assert_int_equal(kd->family, W4A16_FAMILY_SM90);
      assert_int_equal(kd->tile_m, wide[i].tile_m);
      expect(w4a16_grouped_gemm_workspace_size(NULL, &a, &bytes), W4A16_STATUS_OK, NULL);
      assert_int_equal(bytes, wide[i].bytes);
    }
    /* above 56 up to 80 rows an expert: the 96-token tile where its units make four rounds of 132
       SMs (Mixtral's gate_up at 64 rows, 8 x 224 units; Qwen3-30B-A3B's gate_up and down at 64
       rows, 128 x 12 and 128 x 16); the 64-token tile at 64 rows on fewer units (Mixtral's down,
       8 x 32) and at 56 rows, the 128-token tile at 96 rows. A build without it: the nearest. */
    const int have_t96 =
        w4a16_grouped_kernel_find("w4a16_grouped_sm90_bf16_u4_fgs_128x96x128_1x1x1_cooperative") != NULL;
    static const struct { int64_t experts, rows, n, k; int tile_m; } t96[] = {
        {8, 512, 28672, 4096, 96},    {128, 8192, 1536, 2048, 96}, {128, 8192, 2048, 768, 96},
        {8, 512, 4096, 14336, 64},    {8, 448, 28672, 4096, 64},   {8, 768, 28672, 4096, 128},
        {8, 640, 28672, 4096, 96}};
    for (size_t i = 0; i < sizeof t96 / sizeof t96[0]; ++i) {
      const w4a16_kernel_desc *kd = heuristic_pick(&a, t96[i].experts, t96[i].rows, t96[i].n, t96[i].k);
      assert_int_equal(kd->family, W4A16_FAMILY_SM90);
      if (t96[i].tile_m != 96 || have_t96) assert_int_equal(kd->tile_m, t96[i].tile_m);
      if (t96[i].tile_m == 96 && !have_t96) assert_int_equal(kd->tile_m, 128);
    }
  }
  /* Each bound of the rule on both of its sides (the shapes: real layers' where one falls there):
     the decode form up to 8 rows a used expert (64 experts, K = 1408: 8 rows, then the sm80-class
     form at 9); the Hopper form above 16 rows where K >= 2048 (20 rows: N = K = 2048), the
     sm80-class form there at K = 1408; the 32-token tile from 16 rows (Qwen3-30B-A3B's gate_up at
     14 rows: the sm80-class form) where its units make two rounds of 132 SMs (40 experts x 8 column
     tiles = 320 units at 20 rows; 24 x 8 = 192: the 64-token tile); the 96-token tile's four rounds
     (8 experts x 64 column tiles = 512 units at 64 rows: the 64-token tile; 8 x 96 = 768: the
     96-token tile); the 256-token tile from 512 rows an expert (64 experts, K = 1408: 448 rows the
     128-token tile), from 256 where the expert passes 16 MB (Mixtral's gate_up at 224 rows: 128)
     and its units make four rounds (N = 8192, K = 4096: 8 x 64 = 512 units at 256 rows: 128;
     N = 12288: 768 units, 256). */
  if (have_sm90) {
    static const struct { int64_t experts, rows, n, k; int family, tile_m; } bounds[] = {
        {64, 512, 2048, 1408, W4A16_FAMILY_GEMV, 0},    {64, 576, 2048, 1408, W4A16_FAMILY_SM80, 32},
        {8, 160, 2048, 2048, W4A16_FAMILY_SM90, 64},    {8, 160, 2048, 1408, W4A16_FAMILY_SM80, 32},
        {128, 1792, 1536, 2048, W4A16_FAMILY_SM80, 32}, {40, 800, 2048, 2048, W4A16_FAMILY_SM90, 32},
        {8, 512, 8192, 4096, W4A16_FAMILY_SM90, 64},    {64, 28672, 2048, 1408, W4A16_FAMILY_SM90, 128},
        {64, 32768, 2048, 1408, W4A16_FAMILY_SM90, 256}, {8, 1792, 28672, 4096, W4A16_FAMILY_SM90, 128},
        {8, 2048, 8192, 4096, W4A16_FAMILY_SM90, 128},  {24, 480, 2048, 2048, W4A16_FAMILY_SM90, 64},
        {8, 512, 12288, 4096, W4A16_FAMILY_SM90, 96},   {8, 2048, 12288, 4096, W4A16_FAMILY_SM90, 256}};
    w4a16_grouped_gemm_args b = base_args();
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; ++i) {
      const w4a16_kernel_desc *kd = heuristic_pick(&b, bounds[i].experts, bounds[i].rows, bounds[i].n, bounds[i].k);
      if ((int)kd->family != bounds[i].family || (bounds[i].tile_m && kd->tile_m != bounds[i].tile_m))
        fprintf(stderr, "bounds[%zu]: E = %lld, rows = %lld, N = %lld, K = %lld picked %s\n", i,
                (long long)bounds[i].experts, (long long)bounds[i].rows, (long long)bounds[i].n,
                (long long)bounds[i].k, kd->name);
      assert_int_equal(kd->family, bounds[i].family);
      if (bounds[i].tile_m) assert_int_equal(kd->tile_m, bounds[i].tile_m);
    }
    /* only the 256-token tile gathers the rows into the workspace first: the 128-token tile needs
       none with a row index */
    const w4a16_kernel_desc *t128 =
        w4a16_grouped_kernel_find("w4a16_grouped_sm90_bf16_u4_fgs_128x128x128_1x1x1_cooperative");
    if (t128) {
      b.experts = 8;
      b.rows = 8192;
      b.n = 4096;
      b.k = 4096;
      b.row_index = index_marker;
      b.a_rows = 4096;
      size_t ws = 1;
      expect(w4a16_grouped_gemm_workspace_size(t128, &b, &ws), W4A16_STATUS_OK, NULL);
      assert_int_equal(ws, 0);
    }
  }
  /* the TMA decode form's column block by K and the balance of its units (the default build's three
     blocks) and its token tile (16 rows on the 64- and 128-row blocks from 1.5 rows a used expert
     where the group allows it, else 8): Mixtral's down at one token (two experts, long K) 32 rows,
     and at four tokens too (8 rows: about 5.3 experts with rows expected, whose 64-row units fall
     unevenly on the CTAs; as 8 experts they would not), DeepSeek-V2-Lite's down (K = 1408) 64 (at
     one token tile 8; at 16 tokens tile 16, with groups of 64 tile 8), Qwen3-30B-A3B's down (K =
     768, not a multiple of 512) 128 (at 4 tokens tile 8, at 16 tile 16) */
  static const struct { int64_t experts, rows, n, k; int group; const char *want; } tma[] = {
      {8, 2, 4096, 14336, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"},
      {8, 8, 4096, 14336, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma"},
      {64, 6, 2048, 1408, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n64_m8_k512_s3_tma"},
      {64, 96, 2048, 1408, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n64_m16_k512_s3_tma"},
      {64, 96, 2048, 1408, 64, "w4a16_grouped_gemv_bf16_u4_fgs_n64_m8_k512_s3_tma"},
      {128, 32, 2048, 768, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n128_m8_k256_s4_tma"},
      {128, 128, 2048, 768, 128, "w4a16_grouped_gemv_bf16_u4_fgs_n128_m16_k256_s4_tma"}};
  int have_tma = 1;
  for (size_t i = 0; i < sizeof tma / sizeof tma[0]; ++i) {
    have_tma &= w4a16_grouped_kernel_find(tma[i].want) != NULL;
  }
  if (!have_tma) return;
  a = base_args();
  for (size_t i = 0; i < sizeof tma / sizeof tma[0]; ++i) {
    a.group_size = tma[i].group;
    assert_string_equal(heuristic_pick(&a, tma[i].experts, tma[i].rows, tma[i].n, tma[i].k)->name, tma[i].want);
  }
  /* the decode forms' column-block bounds on both sides: the 128-row block from two rounds of the
     CTAs (Qwen3-30B-A3B's down at two tokens: about 15 experts x 32 blocks of 64 rows = 1.8 rounds
     of 264: 64 rows); the 32-row block where the 64-row units leave the busiest CTA more than 10 %
     above the mean (10 experts x 64 blocks, K = 4096: 2.4 rounds, the last 0.4 full: 32 rows;
     Mixtral's down at 32 tokens, 8 x 64 = 1.94 rounds: 64 rows); the
     cp.async form (E > 256, beyond the TMA form's table) with the largest block from 1.9 CTAs an SM
     (2 experts x 110 blocks of 128 rows = 220 CTAs, 1.7 an SM: 64 rows) */
  static const struct { int64_t experts, rows, n, k; int tile_n; int tma; } blocks[] = {
      {128, 16, 2048, 768, 64, 1}, {10, 40, 4096, 4096, 32, 1}, {8, 64, 4096, 14336, 64, 1},
      {300, 2, 14080, 4096, 64, 0}};
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i) {
    const w4a16_kernel_desc *kd = heuristic_pick(&a, blocks[i].experts, blocks[i].rows, blocks[i].n, blocks[i].k);
    if (kd->tile_n != blocks[i].tile_n)
      fprintf(stderr, "blocks[%zu]: %s\n", i, kd->name);
    assert_int_equal(kd->family, W4A16_FAMILY_GEMV);
    assert_int_equal(kd->schedule == W4A16_SCHEDULE_GEMV_TMA, blocks[i].tma);
    assert_int_equal(kd->tile_n, blocks[i].tile_n);
  }
}

/* The rule's answers on random arguments (any E, rows, N, K, group, mode, dtype, row index, SM
   count): OK exactly where some grouped kernel of the build implements the arguments, then
   min(requested, those kernels) distinct kernels that each implement them, the first the same
   whatever `requested` asks; NO_KERNEL with none returned where none does. */
static void test_heuristic_random(void **state) {
  (void)state;
  test_rng rng = test_rng_fresh("test_grouped heuristic random");
  static const int groups[] = {0, 32, 64, 128, 256};
  static const w4a16_quant_mode modes[] = {W4A16_PER_COLUMN_SCALE_ONLY, W4A16_FINEGRAINED_SCALE_ONLY,
                                           W4A16_FINEGRAINED_SCALE_AND_ZEROS};
  static int32_t index_marker; /* (the rule only asks whether there is a row index) */
  int ok_runs = 0;
  for (int it = 0; it < 4000; ++it) {
    w4a16_grouped_gemm_args a = base_args();
    a.experts = 1 + (int64_t)(test_rng_next(&rng) % 256);
    a.rows = (int64_t)(test_rng_next(&rng) % 3 ? test_rng_next(&rng) % 2048 : test_rng_next(&rng) % 65536);
    a.n = 16 * (1 + (int64_t)(test_rng_next(&rng) % 1024));
    a.mode = modes[test_rng_next(&rng) % 3];
    a.group_size = a.mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : groups[test_rng_next(&rng) % 5];
    const int64_t k_step = a.group_size > 64 ? a.group_size : 64; /* K: whole groups */
    a.k = k_step * (1 + (int64_t)(test_rng_next(&rng) % (16384 / k_step)));
    a.dtype = test_rng_next(&rng) % 2 ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
    a.row_index = test_rng_next(&rng) % 2 ? &index_marker : NULL;
    const int sm = 1 + (int)(test_rng_next(&rng) % 200);
    const int requested = 1 + (int)(test_rng_next(&rng) % 32); /* above and below the kernels that fit */
    int avail = 0;
    for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i)
      if (w4a16_grouped_can_implement(w4a16_grouped_kernel_get(i), &a) == W4A16_STATUS_OK) ++avail;
    const w4a16_kernel_desc *out[32], *first[1];
    int got = -1, got1 = -1;
    const w4a16_status st = w4a16_grouped_heuristic_query(&a, sm, requested, out, &got);
    if (avail == 0) {
      expect(st, W4A16_STATUS_NO_KERNEL, "no grouped kernel");
      assert_int_equal(got, 0);
      continue;
    }
    expect(st, W4A16_STATUS_OK, NULL);
    assert_int_equal(got, avail < requested ? avail : requested);
    for (int i = 0; i < got; ++i) {
      expect(w4a16_grouped_can_implement(out[i], &a), W4A16_STATUS_OK, NULL);
      for (int j = 0; j < i; ++j) assert_ptr_not_equal(out[i], out[j]);
    }
    expect(w4a16_grouped_heuristic_query(&a, sm, 1, first, &got1), W4A16_STATUS_OK, NULL);
    assert_int_equal(got1, 1);
    assert_ptr_equal(first[0], out[0]);
    ++ok_runs;
  }
  if (w4a16_grouped_kernel_count() > 0) assert_true(ok_runs > 0);
}

/* ---------------------------------------------------------------- GPU: against the reference */

typedef struct gcase {
  const char *name;
  int experts;
  const int *counts;
  int extra_rows; /* rows past offsets[E] (an upper bound larger than the routed rows) */
  int k, group;   /* group 0: per-column */
  int gather, row_scale, off64;
  int n;          /* 0: 256 */
  int int_zeros;  /* integer zero points z = -s zq, zq in 0..15 (the checkpoints' kind; per column, the
                     Hopper form's integer-offset codes, sm90_mainloop.cuh) */
} gcase;

static const int kUnequal[] = {0, 1, 5, 16, 17, 0, 33, 2};
static const int kOne[] = {0, 0, 300, 0};
static const int kSpread[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 127, 300};
/* an expert's last token tile at each width of the narrow units (Cfg::kNarrowTail) around its
   bounds: 64 and 128 rows left of a 256-token tile, 129 (a full-width unit), and after whole tiles */
static const int kTails[] = {64, 65, 128, 129, 0, 256, 320, 356, 513, 600};
static const int kDecode[] = {1, 0, 0, 2, 0, 0, 4, 0, 0, 0, 8, 0, 1, 0, 0, 16};

typedef struct gdata {
  int experts, rows, tokens, n, k, group;
  w4a16_dtype dtype;
  w4a16_quant_mode mode;
  int64_t *off;
  int32_t *idx;
  float *rs;
  uint16_t *a, *scales, *zeros;
  uint8_t *codes, *packed;
  double *ref; /* [rows][n]; NaN for rows of no expert */
  /* device */
  void *d_a, *d_w, *d_s, *d_z, *d_off, *d_idx, *d_rs, *d_d;
  int *d_status;
} gdata;

static void gdata_free(gdata *g) {
  free(g->off); free(g->idx); free(g->rs); free(g->a); free(g->scales); free(g->zeros); free(g->codes);
  free(g->packed); free(g->ref);
  cudaFree(g->d_a); cudaFree(g->d_w); cudaFree(g->d_s); cudaFree(g->d_z); cudaFree(g->d_off); cudaFree(g->d_idx);
  cudaFree(g->d_rs); cudaFree(g->d_d); cudaFree(g->d_status);
  memset(g, 0, sizeof *g);
}

static void gdata_make(gdata *g, const gcase *c, w4a16_dtype dtype, w4a16_quant_mode mode, test_rng *rng) {
  memset(g, 0, sizeof *g);
  g->experts = c->experts;
  g->n = c->n ? c->n : 256;
  g->k = c->k;
  g->group = mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : c->group;
  g->dtype = dtype;
  g->mode = mode;
  const int E = g->experts, N = g->n, K = g->k;
  const int G = g->group ? K / g->group : 1;
  g->off = calloc((size_t)E + 1, sizeof *g->off);
  for (int e = 0; e < E; ++e) g->off[e + 1] = g->off[e] + c->counts[e];
  const int routed = (int)g->off[E];
  g->rows = routed + c->extra_rows;
  g->tokens = c->gather ? routed / 2 + 3 : g->rows;
  g->idx = calloc((size_t)g->rows + 1, sizeof *g->idx);
  for (int r = 0; r < g->rows; ++r) g->idx[r] = (int32_t)(test_rng_next(rng) % (uint64_t)g->tokens);
  g->rs = calloc((size_t)g->rows + 1, sizeof *g->rs);
  for (int r = 0; r < g->rows; ++r) g->rs[r] = (float)test_rng_uniform(rng, 0.1, 1.0);
  g->a = calloc((size_t)g->tokens * K + 8, 2);
  for (size_t i = 0; i < (size_t)g->tokens * K; ++i) g->a[i] = test_to_dtype((float)test_rng_uniform(rng, -1, 1), dtype);
  g->codes = calloc((size_t)E * N * K, 1);
  for (size_t i = 0; i < (size_t)E * N * K; ++i) g->codes[i] = (uint8_t)(test_rng_next(rng) & 15);
  g->scales = calloc((size_t)E * G * N, 2);
  g->zeros = calloc((size_t)E * G * N, 2);
  for (size_t i = 0; i < (size_t)E * G * N; ++i) {
    g->scales[i] = test_to_dtype(test_scale(rng), dtype);
    g->zeros[i] = test_to_dtype((float)test_rng_uniform(rng, -0.1, 0.1), dtype);
    if (c->int_zeros) g->zeros[i] = test_integer_zero(rng, g->scales[i], dtype);
  }
  g->packed = calloc((size_t)E * N * K / 2, 1);
  for (int e = 0; e < E; ++e)
    assert_int_equal(w4a16_pack_weights(g->codes + (size_t)e * N * K, N, K, g->packed + (size_t)e * N * K / 2), 0);
  /* reference: each expert's rows gathered on the host, the library's float64 reference, x row scale */
  g->ref = malloc((size_t)g->rows * N * sizeof(double));
  for (size_t i = 0; i < (size_t)g->rows * N; ++i) g->ref[i] = NAN;
  for (int e = 0; e < E; ++e) {
    const int cnt = c->counts[e];
    if (!cnt) continue;
    uint16_t *ae = malloc((size_t)cnt * K * 2);
    for (int i = 0; i < cnt; ++i) {
      const int r = (int)g->off[e] + i, t = c->gather ? g->idx[r] : r;
      memcpy(ae + (size_t)i * K, g->a + (size_t)t * K, (size_t)K * 2);
    }
    w4a16_problem p = test_problem(cnt, N, K, g->group, mode, dtype);
    assert_int_equal(w4a16_reference_gemm(&p, ae, g->codes + (size_t)e * N * K, g->scales + (size_t)e * G * N,
                                          mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? g->zeros + (size_t)e * G * N : NULL,
                                          NULL, 1.0f, g->ref + (size_t)g->off[e] * N),
                     0);
    if (c->row_scale)
      for (int i = 0; i < cnt; ++i)
        for (int n = 0; n < N; ++n) g->ref[((size_t)g->off[e] + i) * N + n] *= g->rs[g->off[e] + i];
    free(ae);
  }
  CUDA_OK(cudaMalloc(&g->d_a, (size_t)g->tokens * K * 2 + 16));
  CUDA_OK(cudaMemcpy(g->d_a, g->a, (size_t)g->tokens * K * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_w, (size_t)E * N * K / 2));
  CUDA_OK(cudaMemcpy(g->d_w, g->packed, (size_t)E * N * K / 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_s, (size_t)E * G * N * 2));
  CUDA_OK(cudaMemcpy(g->d_s, g->scales, (size_t)E * G * N * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_z, (size_t)E * G * N * 2));
  CUDA_OK(cudaMemcpy(g->d_z, g->zeros, (size_t)E * G * N * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_off, ((size_t)E + 1) * 8));
  if (c->off64) {
    CUDA_OK(cudaMemcpy(g->d_off, g->off, ((size_t)E + 1) * 8, cudaMemcpyHostToDevice));
  } else {
    int32_t *o32 = malloc(((size_t)E + 1) * 4);
    for (int e = 0; e <= E; ++e) o32[e] = (int32_t)g->off[e];
    CUDA_OK(cudaMemcpy(g->d_off, o32, ((size_t)E + 1) * 4, cudaMemcpyHostToDevice));
    free(o32);
  }
  CUDA_OK(cudaMalloc(&g->d_idx, ((size_t)g->rows + 1) * 4));
  CUDA_OK(cudaMemcpy(g->d_idx, g->idx, ((size_t)g->rows + 1) * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_rs, ((size_t)g->rows + 1) * 4));
  CUDA_OK(cudaMemcpy(g->d_rs, g->rs, ((size_t)g->rows + 1) * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&g->d_d, ((size_t)g->rows + 2 * GUARD_ROWS) * N * 2));
  CUDA_OK(cudaMalloc((void **)&g->d_status, sizeof(int)));
}

static w4a16_grouped_gemm_args gdata_args(const gdata *g, const gcase *c) {
  w4a16_grouped_gemm_args a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.experts = g->experts;
  a.rows = g->rows;
  a.n = g->n;
  a.k = g->k;
  a.a_rows = g->tokens;
  a.group_size = g->group;
  a.mode = g->mode;
  a.dtype = g->dtype;
  a.offsets_type = c->off64 ? W4A16_INDEX_INT64 : W4A16_INDEX_INT32;
  a.a = g->d_a;
  a.w = g->d_w;
  a.scales = g->d_s;
  a.zeros = g->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? g->d_z : NULL;
  a.offsets = g->d_off;
  a.row_index = c->gather ? g->d_idx : NULL;
  a.row_scale = c->row_scale ? g->d_rs : NULL;
  a.d = (uint16_t *)g->d_d + (size_t)GUARD_ROWS * g->n;
  a.alpha = 1.f;
  a.status = g->d_status;
  return a;
}

/* poison D and its guards and the status word, run with the workspace the kernel asks for
   (poisoned too; a kernel that needs one is first refused without it and on a workspace 8 bytes
   off its 16-byte alignment), read back D (with guards) and the status */
static int run_case(const gdata *g, const w4a16_grouped_gemm_args *a, const w4a16_kernel_desc *k, uint16_t *h_d,
                    int *status) {
  const size_t total = ((size_t)g->rows + 2 * GUARD_ROWS) * g->n;
  CUDA_OK(cudaMemset(g->d_d, 0xff, total * 2));
  int poison = 12345;
  CUDA_OK(cudaMemcpy(g->d_status, &poison, sizeof poison, cudaMemcpyHostToDevice));
  size_t ws_bytes = 0;
  void *ws = NULL;
  expect(w4a16_grouped_gemm_workspace_size(k, a, &ws_bytes), W4A16_STATUS_OK, NULL);
  if (ws_bytes) {
    if (k) expect(w4a16_grouped_gemm(a, k, NULL, 0, NULL), W4A16_STATUS_WORKSPACE_TOO_SMALL, "workspace");
    CUDA_OK(cudaMalloc(&ws, ws_bytes + 16));
    CUDA_OK(cudaMemset(ws, 0xff, ws_bytes + 16));
    if (k) expect(w4a16_grouped_gemm(a, k, (char *)ws + 8, ws_bytes, NULL), W4A16_STATUS_MISALIGNED, "workspace");
  }
  w4a16_status st = w4a16_grouped_gemm(a, k, ws, ws_bytes, NULL);
  if (st != W4A16_STATUS_OK) {
    fprintf(stderr, "%s: %s %s\n", k ? k->name : "selected", w4a16_status_name(st), w4a16_last_error_message());
    cudaFree(ws);
    return 0;
  }
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaFree(ws));
  CUDA_OK(cudaMemcpy(h_d, g->d_d, total * 2, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(status, g->d_status, sizeof *status, cudaMemcpyDeviceToHost));
  return 1;
}

/* rows of valid experts within tolerance, every other row (and the guards) still poisoned */
static int check_output(const gdata *g, const uint16_t *h_d, const char *what, const char *kname) {
  const int N = g->n;
  const double tol = g->dtype == W4A16_DTYPE_F16 ? 2e-3 : 1e-2;
  for (size_t i = 0; i < (size_t)GUARD_ROWS * N; ++i)
    if (h_d[i] != POISON || h_d[((size_t)GUARD_ROWS + g->rows) * N + i] != POISON) {
      fprintf(stderr, "%s %s: a guard row was written\n", kname, what);
      return 0;
    }
  const uint16_t *d = h_d + (size_t)GUARD_ROWS * N;
  for (int e = 0; e < g->experts; ++e) {
    const int64_t r0 = g->off[e], cnt = g->off[e + 1] - g->off[e];
    if (cnt <= 0) continue;
    double *x = malloc((size_t)cnt * N * sizeof(double));
    for (size_t i = 0; i < (size_t)cnt * N; ++i) x[i] = test_from_dtype(d[(size_t)r0 * N + i], g->dtype);
    const double err = test_rel_error(x, g->ref + (size_t)r0 * N, (size_t)cnt * N);
    free(x);
    if (!(err < tol)) {
      fprintf(stderr, "%s %s: expert %d (%lld rows) error %.3g >= %.3g\n", kname, what, e, (long long)cnt, err, tol);
      return 0;
    }
  }
  for (int r = (int)g->off[g->experts]; r < g->rows; ++r)
    for (int n = 0; n < N; ++n)
      if (d[(size_t)r * N + n] != POISON) {
        fprintf(stderr, "%s %s: row %d past offsets[E] was written\n", kname, what, r);
        return 0;
      }
  return 1;
}

static const char *filter(void) { return getenv("W4A16_TEST_FILTER"); }

static int have_gpu(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n > 0;
}

static void test_kernels(void **state) {
  (void)state;
  if (!have_gpu() || w4a16_grouped_kernel_count() == 0) {
    skip();
    return;
  }
  test_rng rng = test_rng_fresh("test_grouped");
  const gcase cases[] = {
      {"unequal", 8, kUnequal, 0, 512, 128, 0, 0, 0, 0, 0},
      {"unequal gather rowscale i64", 8, kUnequal, 5, 512, 128, 1, 1, 1, 0, 0},
      {"one expert", 4, kOne, 0, 512, 128, 1, 0, 0, 0, 0},
      {"spread 0..300 gather", 16, kSpread, 3, 576, 64, 1, 1, 0, 0, 0},
      {"decode counts", 16, kDecode, 0, 1024, 32, 1, 1, 1, 0, 0},
      /* one group a column (group_size 0 = K) in the group modes */
      {"decode counts per-column", 16, kDecode, 2, 1024, 0, 1, 0, 0, 0, 0},
      /* per-column integer zero points: every token tile width, gathered and in grouped order */
      {"spread 0..300 per-column integer zeros gather", 16, kSpread, 0, 576, 0, 1, 0, 0, 0, 1},
      {"narrow tiles per-column integer zeros rowscale", 10, kTails, 0, 512, 0, 0, 1, 0, 208, 1},
      /* A in grouped order (no gather), an N tail and a K tail of the 128-row tiles */
      {"spread 0..300 rowscale i64 tails", 16, kSpread, 3, 576, 64, 0, 1, 1, 208, 0},
      /* the narrow last tiles of an expert, gathered and in grouped order */
      {"narrow tiles gather", 10, kTails, 0, 512, 128, 1, 0, 0, 0, 0},
      {"narrow tiles rowscale", 10, kTails, 7, 512, 128, 0, 1, 0, 0, 0},
  };
  const w4a16_quant_mode modes[] = {W4A16_PER_COLUMN_SCALE_ONLY, W4A16_FINEGRAINED_SCALE_ONLY,
                                    W4A16_FINEGRAINED_SCALE_AND_ZEROS};
  int ran = 0, failed = 0;
  for (int di = 0; di < 2; ++di)
    for (int mi = 0; mi < 3; ++mi)
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const w4a16_dtype dtype = di ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
        gdata g;
        gdata_make(&g, &cases[ci], dtype, modes[mi], &rng);
        w4a16_grouped_gemm_args a = gdata_args(&g, &cases[ci]);
        const size_t total = ((size_t)g.rows + 2 * GUARD_ROWS) * g.n;
        uint16_t *h_d = malloc(total * 2);
        int candidates = 0; /* kernels of this build that implement the case */
        for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
          const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
          if (k->dtype != dtype || k->mode != modes[mi]) continue;
          if (w4a16_grouped_can_implement(k, &a) != W4A16_STATUS_OK) continue;
          ++candidates;
          if (filter() && fnmatch(filter(), k->name, 0) != 0) continue;
          int status = -1;
          ++ran;
          a.flags = (i & 1) ? W4A16_GEMM_NO_PDL : 0u; /* both launch kinds in every form */
          if (!run_case(&g, &a, k, h_d, &status) || !check_output(&g, h_d, cases[ci].name, k->name) || status != 0) {
            if (status != 0) fprintf(stderr, "%s %s: status %d\n", k->name, cases[ci].name, status);
            ++failed;
          }
        }
        /* the heuristic's choice (kernel NULL), where the build (a subset) has a candidate */
        int status = -1;
        if (candidates > 0 &&
            (!run_case(&g, &a, NULL, h_d, &status) || !check_output(&g, h_d, cases[ci].name, "selected") || status))
          ++failed;
        free(h_d);
        gdata_free(&g);
      }
  fprintf(stderr, "test_grouped: %d kernel runs, %d failed\n", ran, failed);
  assert_int_equal(failed, 0);
  assert_true(ran > 0);
}

/* bad offsets and row indices: the status bits, no write outside D, the valid experts computed */
static void test_bad_offsets(void **state) {
  (void)state;
  if (!have_gpu() || w4a16_grouped_kernel_count() == 0) {
    skip();
    return;
  }
  test_rng rng = test_rng_fresh("test_grouped bad offsets");
  static const int counts[] = {10, 6, 8, 4};
  int failed = 0, ran = 0;
  /* offsets {0, 10, 16, 24, 28}: variants with a decreasing offset, one past rows, a negative one
     (A in grouped order: every form), then a row index past the token matrix (the forms that gather) */
  const int32_t bad[][5] = {{0, 10, 5, 24, 28}, {0, 10, 16, 24, 40}, {-3, 10, 16, 24, 28}};
  const int want[] = {W4A16_GROUPED_BAD_ORDER, W4A16_GROUPED_BAD_RANGE, W4A16_GROUPED_BAD_RANGE};
  for (size_t v = 0; v < 4; ++v) {
    const gcase c = {"bad", 4, counts, 0, 512, 128, v == 3, 0, 0, 0, 0};
    gdata g;
    gdata_make(&g, &c, W4A16_DTYPE_BF16, W4A16_FINEGRAINED_SCALE_ONLY, &rng);
    const size_t total = ((size_t)g.rows + 2 * GUARD_ROWS) * g.n;
    uint16_t *h_d = malloc(total * 2);
    for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
      const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
      if (filter() && fnmatch(filter(), k->name, 0) != 0) continue;
      if (k->dtype != g.dtype || k->mode != g.mode) continue;
      w4a16_grouped_gemm_args a = gdata_args(&g, &c);
      int32_t offs[5] = {0, 10, 16, 24, 28};
      int32_t bad_idx = g.idx[3];
      if (v < 3) {
        memcpy(offs, bad[v], sizeof offs);
      } else { /* a row index past the token matrix: that row reads zeros */
        const int32_t big = 1 << 30;
        CUDA_OK(cudaMemcpy((int32_t *)g.d_idx + 3, &big, 4, cudaMemcpyHostToDevice));
      }
      CUDA_OK(cudaMemcpy(g.d_off, offs, sizeof offs, cudaMemcpyHostToDevice));
      if (w4a16_grouped_can_implement(k, &a) != W4A16_STATUS_OK) continue;
      int status = -1;
      ++ran;
      if (!run_case(&g, &a, k, h_d, &status)) {
        ++failed;
        continue;
      }
      const int expect_status = v < 3 ? want[v] : W4A16_GROUPED_BAD_ROW_INDEX;
      if (status != expect_status) {
        fprintf(stderr, "%s bad variant %zu: status %d, want %d\n", k->name, v, status, expect_status);
        ++failed;
      }
      for (size_t j = 0; j < (size_t)GUARD_ROWS * g.n; ++j)
        if (h_d[j] != POISON || h_d[((size_t)GUARD_ROWS + g.rows) * g.n + j] != POISON) {
          fprintf(stderr, "%s bad variant %zu: a guard row was written\n", k->name, v);
          ++failed;
          break;
        }
      /* rows [ok_lo, ok_hi) of valid experts (per the good offsets' reference), rows [po_lo, po_hi)
         of skipped experts still poisoned, and (v 3) row 3 of the bad index zeros */
      const int ok[4][2][2] = {{{0, 5}, {24, 28}}, {{0, 24}, {0, 0}}, {{10, 28}, {0, 0}}, {{0, 3}, {4, 28}}};
      const int po[4][2] = {{0, 0}, {24, 28}, {0, 10}, {0, 0}};
      const uint16_t *d = h_d + (size_t)GUARD_ROWS * g.n;
      for (int q = 0; q < 2; ++q)
        for (int r = ok[v][q][0]; r < ok[v][q][1]; ++r) {
          double x[256] = {0};
          for (int n = 0; n < g.n; ++n) x[n] = test_from_dtype(d[(size_t)r * g.n + n], g.dtype);
          const double err = test_rel_error(x, g.ref + (size_t)r * g.n, (size_t)g.n);
          if (!(err < 1e-2)) {
            fprintf(stderr, "%s bad variant %zu: row %d error %.3g\n", k->name, v, r, err);
            ++failed;
            break;
          }
        }
      for (int r = po[v][0]; r < po[v][1]; ++r)
        for (int n = 0; n < g.n; ++n)
          if (d[(size_t)r * g.n + n] != POISON) {
            fprintf(stderr, "%s bad variant %zu: row %d of a skipped expert was written\n", k->name, v, r);
            ++failed;
            r = po[v][1];
            break;
          }
      if (v == 3)
        for (int n = 0; n < g.n; ++n)
          if (test_from_dtype(d[(size_t)3 * g.n + n], g.dtype) != 0.0) {
            fprintf(stderr, "%s: the row of a bad index is not zero\n", k->name);
            ++failed;
            break;
          }
      if (v == 3) CUDA_OK(cudaMemcpy((int32_t *)g.d_idx + 3, &bad_idx, 4, cudaMemcpyHostToDevice));
    }
    free(h_d);
    gdata_free(&g);
  }
  fprintf(stderr, "test_grouped bad offsets: %d runs, %d failed\n", ran, failed);
  assert_int_equal(failed, 0);
}

/* the grouped profiler on a caller's problem: every row a kernel that can implement it, fastest
   first, each OK; the timed launches leave the product in D (the guards and the rows past offsets[E]
   untouched) and 0 in the status word */
static void test_profile(void **state) {
  (void)state;
  if (!have_gpu() || w4a16_grouped_kernel_count() == 0) {
    skip();
    return;
  }
  int dev = 0, major = 0, minor = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  const int cc = major * 10 + minor;
  test_rng rng = test_rng_fresh("test_grouped profile");
  /* unequal counts with empty experts, per-row scales, rows above offsets[E]; the row gather but in the
     first kind (whose candidates then include the forms that cannot gather) */
  const struct { w4a16_dtype dtype; w4a16_quant_mode mode; } kinds[] = {
      {W4A16_DTYPE_BF16, W4A16_FINEGRAINED_SCALE_ONLY},
      {W4A16_DTYPE_F16, W4A16_FINEGRAINED_SCALE_AND_ZEROS},
      {W4A16_DTYPE_BF16, W4A16_PER_COLUMN_SCALE_ONLY}};
  /* a few copies of the weights (4 MiB), short rounds: the method, not a measurement */
  const w4a16_profile_options opts = {2, 3, 4 << 20, 0};
  int profiled = 0;
  for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ++ki) {
    const gcase c = {"profile", 8, kUnequal, 5, 512, 128, ki != 0, 1, 0, 0, 0};
    gdata g;
    gdata_make(&g, &c, kinds[ki].dtype, kinds[ki].mode, &rng);
    w4a16_grouped_gemm_args a = gdata_args(&g, &c);
    int want = 0;
    for (size_t i = 0; i < w4a16_grouped_kernel_count(); ++i) {
      const w4a16_kernel_desc *k = w4a16_grouped_kernel_get(i);
      if (cc >= k->sm_min && cc <= k->sm_max && w4a16_grouped_can_implement(k, &a) == W4A16_STATUS_OK) ++want;
    }
    const size_t total = ((size_t)g.rows + 2 * GUARD_ROWS) * g.n;
    CUDA_OK(cudaMemset(g.d_d, 0xff, total * 2));
    const int poison = 12345;
    CUDA_OK(cudaMemcpy(g.d_status, &poison, sizeof poison, cudaMemcpyHostToDevice));
    w4a16_profile_result res[64];
    int got = -1;
    const w4a16_status st = w4a16_grouped_profile(&a, &opts, res, 64, &got);
    if (want == 0) { /* a build without kernels of this dtype and mode */
      expect(st, W4A16_STATUS_NO_KERNEL, "no grouped kernel");
      assert_int_equal(got, 0);
      gdata_free(&g);
      continue;
    }
    expect(st, W4A16_STATUS_OK, NULL);
    assert_int_equal(got, want < 64 ? want : 64);
    for (int i = 0; i < got; ++i) {
      fprintf(stderr, "  %-56s %s %8.2f us %7.3f TFLOP/s %7.1f GB/s\n", res[i].kernel->name,
              w4a16_status_name(res[i].status), (double)res[i].median_us, (double)res[i].tflops,
              (double)res[i].gbps);
      expect(w4a16_grouped_can_implement(res[i].kernel, &a), W4A16_STATUS_OK, NULL);
      assert_int_equal(res[i].status, W4A16_STATUS_OK);
      assert_true(res[i].median_us > 0.f && res[i].tflops > 0.f && res[i].gbps > 0.f);
      if (i > 0) assert_true(res[i - 1].median_us <= res[i].median_us);
    }
    uint16_t *h_d = malloc(total * 2);
    int status = -1;
    CUDA_OK(cudaMemcpy(h_d, g.d_d, total * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&status, g.d_status, sizeof status, cudaMemcpyDeviceToHost));
    assert_true(check_output(&g, h_d, "after w4a16_grouped_profile", "profiled"));
    assert_int_equal(status, 0);
    /* requested below the candidates: the fastest ones, the table still complete */
    expect(w4a16_grouped_profile(&a, &opts, res, 1, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(got, 1);
    assert_int_equal(res[0].status, W4A16_STATUS_OK);
    /* a first-version struct (ending before flags) in a buffer of just its size: profiled and run,
       nothing read past it (the profiler copies struct_size bytes) */
    const size_t v1 = offsetof(w4a16_grouped_gemm_args, flags);
    unsigned char *old = malloc(v1);
    memcpy(old, &a, v1);
    const size_t v1_size = v1;
    memcpy(old, &v1_size, sizeof v1_size); /* struct_size is the first field */
    expect(w4a16_grouped_profile((const w4a16_grouped_gemm_args *)old, &opts, res, 1, &got), W4A16_STATUS_OK, NULL);
    assert_int_equal(got, 1);
    CUDA_OK(cudaMemset(g.d_d, 0xff, total * 2));
    expect(w4a16_grouped_gemm((const w4a16_grouped_gemm_args *)old, NULL, NULL, 0, NULL), W4A16_STATUS_OK, NULL);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h_d, g.d_d, total * 2, cudaMemcpyDeviceToHost));
    assert_true(check_output(&g, h_d, "first-version args", "selected"));
    free(old);
    free(h_d);
    gdata_free(&g);
    ++profiled;
  }
  if (!profiled) skip();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_args),
      cmocka_unit_test(test_profile_args),
      cmocka_unit_test(test_tables),
      cmocka_unit_test(test_heuristic),
      cmocka_unit_test(test_heuristic_random),
      cmocka_unit_test(test_select_memo),
      cmocka_unit_test(test_kernels),
      cmocka_unit_test(test_bad_offsets),
      cmocka_unit_test(test_profile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
