/* test_gemm_args.c - every bad argument of w4a16_gemm returns its status and a message naming the
   bad value, before anything touches the device; the architecture guard on fake devices. */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "internal.h"
#include "test_util.h"

/* host buffers standing in for device pointers: every check below fails before any dereference */
static alignas(16) unsigned char buf[6][64];

static const w4a16_kernel_desc *some_kernel(void) { return w4a16_kernel_get(0); }

static w4a16_gemm_args valid_args(void) {
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a;
  memset(&a, 0, sizeof a);
  /* a group the kernel takes (the TMA GEMVs of tile_m 16 start at 128) */
  const int group = k->min_group > 64 ? k->min_group : 64;
  a.problem = test_problem(3, (int64_t)k->tile_n * 2, (int64_t)k->tile_k * 4, group, k->mode, k->dtype);
  if (k->mode == W4A16_PER_COLUMN_SCALE_ONLY) a.problem.group_size = 0;
  if (k->family == W4A16_FAMILY_GEMV && a.problem.m > k->tile_m) a.problem.m = k->tile_m;
  a.a = buf[0]; a.w = buf[1]; a.scales = buf[2]; a.zeros = buf[3]; a.d = buf[4];
  a.alpha = 1.0f;
  return a;
}

static void expect(w4a16_status got, w4a16_status want, const char *needle) {
  if (got != want)
    fprintf(stderr, "got %s (%s), want %s\n", w4a16_status_name(got), w4a16_last_error_message(),
            w4a16_status_name(want));
  assert_int_equal(got, want);
  if (needle && !strstr(w4a16_last_error_message(), needle)) {
    fprintf(stderr, "message '%s' does not contain '%s'\n", w4a16_last_error_message(), needle);
    fail();
  }
}

static void test_null_pointers(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  expect(w4a16_gemm(NULL, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "args");
  w4a16_gemm_args a = valid_args();
  a.a = NULL;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "A");
  a = valid_args(); a.w = NULL;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "weights");
  a = valid_args(); a.scales = NULL;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "scales");
  a = valid_args(); a.d = NULL;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "D");
  a = valid_args(); a.problem.has_bias = 1;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "bias");
  a = valid_args(); a.bias = buf[5];
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "has_bias");
  a = valid_args(); a.problem.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS; a.zeros = NULL;
  expect(w4a16_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "zeros");
  a = valid_args(); a.problem.act_order = 1;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NULL_POINTER, "a_perm is NULL");
  a = valid_args(); a.a_perm = (const int32_t *)(const void *)buf[5];
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "act_order is 0");
  a = valid_args(); a.problem.act_order = 1; a.a_perm = (const int32_t *)(const void *)(buf[5] + 4);
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "a_perm pointer");
  a = valid_args(); a.alpha = NAN;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "alpha is NaN");
  a = valid_args(); a.problem.mode = (w4a16_quant_mode)7;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "quant mode 7");
  a = valid_args(); a.problem.mode = W4A16_PER_COLUMN_SCALE_ONLY; a.problem.group_size = 0; a.problem.k = 96;
  a.problem.lda = 96;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "K = 96 is not a multiple of 64");
}

/* flags: W4A16_GEMM_NO_PDL is the only bit; any other is refused, naming the value */
static void test_flags(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a = valid_args();
  a.flags = 2u;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "flags = 0x2");
  a.flags = W4A16_GEMM_NO_PDL | 0x80000000u;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_VALUE, "flags = 0x80000001");
}

static void test_shapes(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  const int64_t bad_m[] = {-1, INT64_MIN}, bad_nk[] = {0, -64};
  for (int i = 0; i < 2; ++i) {
    w4a16_gemm_args a = valid_args();
    a.problem.m = bad_m[i];
    expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "M = ");
    a = valid_args(); a.problem.n = bad_nk[i];
    expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "N = ");
    a = valid_args(); a.problem.k = bad_nk[i];
    expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "K = ");
  }
  /* beyond the kernels' 32-bit offsets: K above W4A16_MAX_K (a per-column K of 2^30 hung the sm90
     launch), lda / ldd of 2^31 or more */
  const int64_t huge_k[] = {(int64_t)W4A16_MAX_K + 64, (int64_t)1 << 30, INT32_MAX - 63};
  for (int i = 0; i < 3; ++i) {
    w4a16_gemm_args a = valid_args();
    a.problem.k = huge_k[i];
    a.problem.lda = 0;
    expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "K = ");
    a.problem.mode = W4A16_PER_COLUMN_SCALE_ONLY;
    a.problem.group_size = 0;
    expect(w4a16_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "K = ");
  }
  w4a16_gemm_args a = valid_args();
  a.problem.lda = (int64_t)1 << 31;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "lda = 2147483648");
  a = valid_args();
  a.problem.ldd = ((int64_t)1 << 40) + 8;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "ldd = ");
  a = valid_args();
  /* keeps K % 64 == 0 and K a multiple of the group; breaks K % tile_k for tile_k > the group */
  a.problem.k += a.problem.group_size > 0 ? a.problem.group_size : 64 * 3;
  /* (a kernel with a K tail, k_multiple 64, takes it) */
  if (k->tile_k > 64 && k->k_multiple != 64)
    expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_NOT_SUPPORTED, "K %");
}

static void test_misaligned(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a = valid_args();
  a.a = buf[0] + 2;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "A pointer");
  a = valid_args(); a.w = buf[1] + 8;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "packed weights pointer");
  a = valid_args(); a.scales = buf[2] + 4;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "scales pointer");
  a = valid_args(); a.d = buf[4] + 2;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "D pointer");
  a = valid_args(); a.problem.lda = a.problem.k + 4;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "lda");
  a = valid_args(); a.problem.ldd = a.problem.n + 2;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MISALIGNED, "ldd");
}

static void test_groups(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a = valid_args();
  a.problem.mode = W4A16_FINEGRAINED_SCALE_ONLY;
  a.problem.group_size = 100;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE, "100");
  a.problem.group_size = 256;
  a.problem.k = 256 * 3 + 128; /* a multiple of 64, not of 256 */
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "group size 256");
}

static void test_kernel_mismatch(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a = valid_args();
  a.problem.dtype = k->dtype == W4A16_DTYPE_F16 ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_DTYPE_MISMATCH, k->name);
  a = valid_args();
  a.problem.mode = k->mode == W4A16_FINEGRAINED_SCALE_ONLY ? W4A16_FINEGRAINED_SCALE_AND_ZEROS
                                                            : W4A16_FINEGRAINED_SCALE_ONLY;
  a.problem.group_size = 64;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_MODE_MISMATCH, k->name);
  assert_null(w4a16_kernel_find("w4a16_sm99_f16_u4_fgs_1x1x1_s9"));
  assert_non_null(strstr(w4a16_last_error_message(), "w4a16_sm99_f16_u4_fgs_1x1x1_s9"));
}

/* The failure this project exists to avoid: an sm90a kernel asked to run on sm120 is refused with both
   architectures named, never launched. */
static void test_arch_guard_on_fake_devices(void **state) {
  (void)state;
  const w4a16_kernel_desc hopper = {.name = "fake_sm90a", .family = W4A16_FAMILY_SM90, .sm_min = 90, .sm_max = 90,
                                    .arch = "sm90a", .tile_n = 128, .tile_m = 64, .tile_k = 64, .split_k = 1,
                                    .threads = 384, .smem_bytes = 1000, .min_group = 32, .impl = NULL};
  w4a16_device_info sm120 = {0, 120, 170, 101376, 1792}, sm80 = {0, 80, 108, 166912, 1555},
                    sm90 = {0, 90, 132, 232448, 3352};
  expect(w4a16_kernel_runs_here(&hopper, &sm120), W4A16_STATUS_ARCH_MISMATCH, "sm90a");
  assert_non_null(strstr(w4a16_last_error_message(), "sm_120"));
  expect(w4a16_kernel_runs_here(&hopper, &sm80), W4A16_STATUS_ARCH_MISMATCH, "sm_80");
  expect(w4a16_kernel_runs_here(&hopper, &sm90), W4A16_STATUS_NOT_SUPPORTED, "no compiled implementation");
  w4a16_kernel_desc big = hopper;
  big.smem_bytes = 200000;
  expect(w4a16_kernel_runs_here(&big, &(w4a16_device_info){0, 90, 132, 101376, 3352}), W4A16_STATUS_ARCH_MISMATCH,
         "200000");
  /* every real sm90a kernel is refused on sm_120 and on sm_80 */
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (k->family != W4A16_FAMILY_SM90) continue;
    expect(w4a16_kernel_runs_here(k, &sm120), W4A16_STATUS_ARCH_MISMATCH, k->name);
    expect(w4a16_kernel_runs_here(k, &sm80), W4A16_STATUS_ARCH_MISMATCH, k->name);
  }
}

/* M = 0, an empty batch: OK at once, nothing launched or read (A and D may be NULL), no device asked
   (this also runs on machines without a GPU), no workspace; the kernel given must still fit the rest */
static void test_empty_m(void **state) {
  (void)state;
  const w4a16_kernel_desc *k = some_kernel();
  w4a16_gemm_args a = valid_args();
  a.problem.m = 0;
  a.a = NULL;
  a.d = NULL;
  expect(w4a16_gemm(&a, k, NULL, 0, NULL), W4A16_STATUS_OK, NULL);
  assert_string_equal(w4a16_last_error_message(), "");
  expect(w4a16_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_OK, NULL);
  expect(w4a16_can_implement(k, &a.problem), W4A16_STATUS_OK, NULL);
  size_t bytes = 99;
  expect(w4a16_workspace_size(k, &a.problem, 0, &bytes), W4A16_STATUS_OK, NULL);
  assert_int_equal(bytes, 0);
  bytes = 99;
  expect(w4a16_workspace_size(NULL, &a.problem, 0, &bytes), W4A16_STATUS_OK, NULL);
  assert_int_equal(bytes, 0);
  /* the other checks still apply */
  w4a16_gemm_args b = a;
  b.problem.dtype = k->dtype == W4A16_DTYPE_F16 ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
  expect(w4a16_gemm(&b, k, NULL, 0, NULL), W4A16_STATUS_DTYPE_MISMATCH, k->name);
  b = a;
  b.problem.n = 40;
  expect(w4a16_gemm(&b, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "N = 40");
  b = a;
  b.problem.m = -1;
  expect(w4a16_gemm(&b, NULL, NULL, 0, NULL), W4A16_STATUS_INVALID_SHAPE, "M = -1");
  /* the heuristic ranks the kernels as for M = 1, unsplit and without workspace */
  size_t count;
  const w4a16_kernel_desc *table = w4a16_registry_table(&count);
  w4a16_heuristic_result r[4];
  int n = 0;
  expect(test_query_table(table, count, 132, k->sm_min, &a.problem, 4, r, &n), W4A16_STATUS_OK, NULL);
  assert_true(n >= 1);
  for (int i = 0; i < n; ++i) {
    assert_int_equal(r[i].split_k, 1);
    assert_int_equal(r[i].workspace_bytes, 0);
  }
  w4a16_problem one = a.problem;
  one.m = 1;
  w4a16_heuristic_result r1[1];
  int n1 = 0;
  expect(test_query_table(table, count, 132, k->sm_min, &one, 1, r1, &n1), W4A16_STATUS_OK, NULL);
  assert_ptr_equal(r[0].kernel, r1[0].kernel);
}

static void test_no_device(void **state) {
  (void)state;
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) skip();
  cudaGetLastError();
  w4a16_gemm_args a = valid_args();
  expect(w4a16_gemm(&a, some_kernel(), NULL, 0, NULL), W4A16_STATUS_NO_DEVICE, "no CUDA device");
  expect(w4a16_gemm(&a, NULL, NULL, 0, NULL), W4A16_STATUS_NO_DEVICE, "no CUDA device");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_pointers), cmocka_unit_test(test_flags), cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_misaligned), cmocka_unit_test(test_groups), cmocka_unit_test(test_kernel_mismatch),
      cmocka_unit_test(test_arch_guard_on_fake_devices), cmocka_unit_test(test_empty_m),
      cmocka_unit_test(test_no_device)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
