/* test_quantize.c - round-to-nearest quantization: every mode and group size, the range search, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_util.h"

static void check_mode_k(test_rng *r, w4a16_quant_mode mode, int group, w4a16_dtype dtype, int64_t k) {
  const int64_t n = 48;
  const int g = mode == W4A16_PER_COLUMN_SCALE_ONLY || group == 0 ? (int)k : group;
  const int64_t groups = k / g;
  float *w = malloc(sizeof(float) * (size_t)(n * k));
  uint8_t *codes = malloc((size_t)(n * k));
  uint16_t *s = malloc(sizeof(uint16_t) * (size_t)(groups * n)), *z = malloc(sizeof(uint16_t) * (size_t)(groups * n));
  for (int64_t i = 0; i < n * k; ++i) w[i] = (float)test_rng_uniform(r, -1.0, 1.0) * (float)(1 + (i / k) % 5);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, n, k, mode, mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : group,
                                  dtype, codes, s, z),
                   W4A16_STATUS_OK);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t gi = 0; gi < groups; ++gi) {
      const double sc = test_from_dtype(s[gi * n + row], dtype);
      const double zz = mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? test_from_dtype(z[gi * n + row], dtype) : 0;
      double amax = 0, lo = 1e30, hi = -1e30;
      for (int64_t j = gi * g; j < (gi + 1) * g; ++j) {
        double v = w[row * k + j];
        amax = fmax(amax, fabs(v)); lo = fmin(lo, v); hi = fmax(hi, v);
      }
      const double rel = dtype == W4A16_DTYPE_F16 ? 1e-3 : 8e-3; /* scale rounded to dtype */
      if (mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS) {
        assert_true(fabs(sc - (hi - lo) / 15) <= rel * (hi - lo) / 15);
        assert_true(fabs(zz - lo) <= rel * fabs(lo) + 1e-12);
      } else {
        assert_true(fabs(sc - amax / 7.5) <= rel * amax / 7.5);
      }
      for (int64_t j = gi * g; j < (gi + 1) * g; ++j) {
        const int q = codes[row * k + j];
        assert_true(q >= 0 && q <= 15);
        const double deq = mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? sc * q + zz : sc * (q - 8);
        const double err = fabs(deq - w[row * k + j]);
        /* round to nearest: within half a step, plus the rounding of s and z to dtype */
        assert_true(err <= 0.5 * sc + 16 * rel * sc + rel * fabs(zz) + 1e-9);
        /* and no other code is strictly closer */
        for (int q2 = 0; q2 < 16; ++q2) {
          const double d2 = mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? sc * q2 + zz : sc * (q2 - 8);
          assert_true(err <= fabs(d2 - w[row * k + j]) + 1e-6 * sc);
        }
      }
    }
  free(w); free(codes); free(s); free(z);
}

static void check_mode(test_rng *r, w4a16_quant_mode mode, int group, w4a16_dtype dtype) {
  check_mode_k(r, mode, group, dtype, 512);
}

static void test_all_modes_groups(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("quantize");
  const int groups[] = {32, 64, 128, 256};
  for (int d = 0; d < 2; ++d) {
    check_mode(&r, W4A16_PER_COLUMN_SCALE_ONLY, 0, (w4a16_dtype)d);
    for (int i = 0; i < 4; ++i) {
      check_mode(&r, W4A16_FINEGRAINED_SCALE_ONLY, groups[i], (w4a16_dtype)d);
      check_mode(&r, W4A16_FINEGRAINED_SCALE_AND_ZEROS, groups[i], (w4a16_dtype)d);
    }
    /* one group a column (group_size 0 or K, any K % 64 == 0): per-column zero points */
    check_mode_k(&r, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 0, (w4a16_dtype)d, 1408);
    check_mode_k(&r, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 1408, (w4a16_dtype)d, 1408);
    check_mode_k(&r, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 512, (w4a16_dtype)d, 512);
    check_mode_k(&r, W4A16_FINEGRAINED_SCALE_ONLY, 192, (w4a16_dtype)d, 192);
  }
}

static void test_host_types_agree(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("quantize-types");
  enum { N = 16, K = 128 };
  float wf[N * K];
  uint16_t wb[N * K];
  for (int i = 0; i < N * K; ++i) {
    wb[i] = w4a16_float_to_bf16((float)test_rng_uniform(&r, -2, 2));
    wf[i] = w4a16_bf16_to_float(wb[i]); /* the same values in both host types */
  }
  uint8_t c1[N * K], c2[N * K];
  uint16_t s1[N * K / 64], s2[N * K / 64];
  assert_int_equal(w4a16_quantize(wf, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, c1,
                                  s1, NULL), W4A16_STATUS_OK);
  assert_int_equal(w4a16_quantize(wb, W4A16_HOST_BF16, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, c2,
                                  s2, NULL), W4A16_STATUS_OK);
  assert_memory_equal(c1, c2, sizeof c1);
  assert_memory_equal(s1, s2, sizeof s1);
}

static void test_constant_group_gives_finite_scale(void **state) {
  (void)state;
  float w[16 * 64];
  for (int i = 0; i < 16 * 64; ++i) w[i] = 0.0f;
  uint8_t c[16 * 64];
  uint16_t s[16], z[16];
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 64, W4A16_DTYPE_F16,
                                  c, s, z), W4A16_STATUS_OK);
  for (int i = 0; i < 16; ++i) assert_true(w4a16_half_to_float(s[i]) > 0.0f);
}

static void test_bad_input(void **state) {
  (void)state;
  float w[16 * 64] = {0};
  uint8_t c[16 * 64];
  uint16_t s[64], z[64];
  assert_int_equal(w4a16_quantize(NULL, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 32, W4A16_DTYPE_F16, c,
                                  s, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, NULL,
                                  s, z), W4A16_STATUS_NULL_POINTER);
  assert_non_null(strstr(w4a16_last_error_message(), "codes"));
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c,
                                  NULL, z), W4A16_STATUS_NULL_POINTER);
  assert_non_null(strstr(w4a16_last_error_message(), "scales"));
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, (w4a16_dtype)5, c, s,
                                  z), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "dtype 5"));
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 0, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_INVALID_SHAPE);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 48, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE);
  assert_non_null(strstr(w4a16_last_error_message(), "48"));
  /* 512 is neither a listed group nor K */
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 1024, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 512, W4A16_DTYPE_F16,
                                  c, s, z), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 96, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_INVALID_SHAPE);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_PER_COLUMN_SCALE_ONLY, 32, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE);
  assert_int_equal(w4a16_quantize(w, (w4a16_host_type)5, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c,
                                  s, z), W4A16_STATUS_INVALID_VALUE);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, (w4a16_quant_mode)3, 32, W4A16_DTYPE_F16, c, s, z),
                   W4A16_STATUS_INVALID_VALUE);
  w[70] = NAN;
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "[1, 6]"));
  /* a group whose scale (|w| / 7.5) or zero point (min w) overflows fp16: refused, not infinite */
  w[70] = 0.0f;
  w[64 + 3] = 6.0e5f; /* row 1, group 0 */
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_ONLY, 32, W4A16_DTYPE_F16, c, s,
                                  z), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "scale of row 1, group 0"));
  w[64 + 3] = 0.0f;
  w[5 * 64 + 40] = -7.0e4f; /* row 5, group 1 */
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 32, W4A16_DTYPE_F16, c,
                                  s, z), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "zero point of row 5, group 1"));
  /* bf16 holds them */
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, 16, 64, W4A16_FINEGRAINED_SCALE_AND_ZEROS, 32, W4A16_DTYPE_BF16, c,
                                  s, z), W4A16_STATUS_OK);
}

/* squared error of the dequantized [n, k] weights against w, per group, into err[g * n + row] */
static void group_errors(const float *w, const uint8_t *c, const uint16_t *s, const uint16_t *z, int64_t n,
                         int64_t k, int g, int zp, w4a16_dtype dt, double *err) {
  for (int64_t row = 0; row < n; ++row)
    for (int64_t gi = 0; gi < k / g; ++gi) {
      const double sc = test_from_dtype(s[gi * n + row], dt), zz = zp ? test_from_dtype(z[gi * n + row], dt) : 0;
      double e = 0;
      for (int64_t j = gi * g; j < (gi + 1) * g; ++j) {
        const double d = (zp ? sc * c[row * k + j] + zz : sc * (c[row * k + j] - 8)) - w[row * k + j];
        e += d * d;
      }
      err[gi * n + row] = e;
    }
}

static void test_clip_search(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("quantize-clip");
  enum { N = 32, K = 512 };
  float *w = malloc(sizeof(float) * N * K);
  /* Laplace-like weights: a few large ones per group, where clipping pays */
  for (int i = 0; i < N * K; ++i) {
    double u = test_rng_uniform(&r, 1e-6, 1.0);
    w[i] = (float)(log(u) * (test_rng_uniform(&r, -1, 1) < 0 ? -0.02 : 0.02));
  }
  uint8_t *c0 = malloc(N * K), *c1 = malloc(N * K);
  uint16_t s0[N * K / 32], s1[N * K / 32], z0[N * K / 32], z1[N * K / 32];
  double e0[N * K / 32], e1[N * K / 32];
  const int groups[] = {32, 128, K};
  for (int d = 0; d < 2; ++d)
    for (int zp = 0; zp < 2; ++zp)
      for (int gi = 0; gi < 3; ++gi) {
        const int g = groups[gi];
        const w4a16_quant_mode mode = zp ? W4A16_FINEGRAINED_SCALE_AND_ZEROS : W4A16_FINEGRAINED_SCALE_ONLY;
        const w4a16_dtype dt = (w4a16_dtype)d;
        w4a16_quantize_options o = {.struct_size = sizeof o, .clip_search = 1};
        assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, N, K, mode, g, dt, c0, s0, z0), W4A16_STATUS_OK);
        assert_int_equal(w4a16_quantize_ex(w, W4A16_HOST_F32, N, K, mode, g, dt, &o, c1, s1, z1), W4A16_STATUS_OK);
        group_errors(w, c0, s0, z0, N, K, g, zp, dt, e0);
        group_errors(w, c1, s1, z1, N, K, g, zp, dt, e1);
        double t0 = 0, t1 = 0;
        for (int i = 0; i < N * (K / g); ++i) {
          assert_true(e1[i] <= e0[i] * (1 + 1e-12)); /* p = 1 is a candidate: never worse */
          t0 += e0[i];
          t1 += e1[i];
          /* the kept range is p x the plain one for a p of the grid, 0.2 < p <= 1 */
          const double ratio = test_from_dtype(s1[i], dt) / test_from_dtype(s0[i], dt);
          assert_true(ratio > 0.19 && ratio < 1.01);
        }
        assert_true(t1 < 0.97 * t0); /* heavy tails: clipping must pay */
        /* and each code is the nearest for its group's kept scale and zero */
        for (int64_t row = 0; row < N; ++row)
          for (int64_t j = 0; j < K; ++j) {
            const int64_t gi2 = j / g;
            const double sc = test_from_dtype(s1[gi2 * N + row], dt);
            const double zz = zp ? test_from_dtype(z1[gi2 * N + row], dt) : 0;
            const int q = c1[row * K + j];
            const double err = fabs((zp ? sc * q + zz : sc * (q - 8)) - w[row * K + j]);
            for (int q2 = 0; q2 < 16; ++q2)
              assert_true(err <= fabs((zp ? sc * q2 + zz : sc * (q2 - 8)) - w[row * K + j]) + 1e-6 * sc);
          }
      }
  /* options NULL and clip_search 0 are the plain rule */
  w4a16_quantize_options off = {.struct_size = sizeof off};
  assert_int_equal(w4a16_quantize_ex(w, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, &off,
                                     c1, s1, NULL), W4A16_STATUS_OK);
  assert_int_equal(w4a16_quantize(w, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, c0, s0,
                                  NULL), W4A16_STATUS_OK);
  assert_memory_equal(c0, c1, N * K);
  assert_memory_equal(s0, s1, sizeof(uint16_t) * N * K / 64);
  /* bad options are named */
  w4a16_quantize_options bad = {.struct_size = sizeof bad + 8, .clip_search = 1};
  assert_int_equal(w4a16_quantize_ex(w, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, &bad,
                                     c1, s1, NULL), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "struct_size"));
  bad = (w4a16_quantize_options){.struct_size = sizeof bad, .clip_search = 1, .grid = -3};
  assert_int_equal(w4a16_quantize_ex(w, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, &bad,
                                     c1, s1, NULL), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "grid = -3"));
  bad = (w4a16_quantize_options){.struct_size = sizeof bad, .clip_search = 1, .max_shrink = 1.5f};
  assert_int_equal(w4a16_quantize_ex(w, W4A16_HOST_F32, N, K, W4A16_FINEGRAINED_SCALE_ONLY, 64, W4A16_DTYPE_BF16, &bad,
                                     c1, s1, NULL), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "max_shrink = 1.5"));
  free(w); free(c0); free(c1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_modes_groups), cmocka_unit_test(test_host_types_agree),
      cmocka_unit_test(test_constant_group_gives_finite_scale), cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_clip_search)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
