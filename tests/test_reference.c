/* test_reference.c - the CPU reference against a naive float64 product and a hand-made case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_util.h"

/* naive: dequantize W fully, then sum over k for each (m, n) in a different loop order */
static void naive(const w4a16_problem *p, const uint16_t *a, const uint8_t *codes, const uint16_t *s,
                  const uint16_t *z, const uint16_t *bias, float alpha, double *d) {
  const int64_t g = p->mode == W4A16_PER_COLUMN_SCALE_ONLY ? p->k : p->group_size;
  const int64_t lda = p->lda ? p->lda : p->k;
  for (int64_t i = 0; i < p->m * p->n; ++i) d[i] = 0;
  for (int64_t kk = 0; kk < p->k; ++kk)
    for (int64_t col = 0; col < p->n; ++col) {
      double sc = test_from_dtype(s[(kk / g) * p->n + col], p->dtype);
      double w = p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS
                     ? sc * codes[col * p->k + kk] + test_from_dtype(z[(kk / g) * p->n + col], p->dtype)
                     : sc * ((double)codes[col * p->k + kk] - 8);
      for (int64_t row = 0; row < p->m; ++row) d[row * p->n + col] += test_from_dtype(a[row * lda + kk], p->dtype) * w;
    }
  for (int64_t row = 0; row < p->m; ++row)
    for (int64_t col = 0; col < p->n; ++col)
      d[row * p->n + col] = alpha * d[row * p->n + col] + (bias ? test_from_dtype(bias[col], p->dtype) : 0);
}

static void test_against_naive(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("reference");
  for (int mode = 0; mode < 3; ++mode)
    for (int dt = 0; dt < 2; ++dt) {
      w4a16_problem p = test_problem(7, 32, 256, mode == 0 ? 0 : 64, (w4a16_quant_mode)mode, (w4a16_dtype)dt);
      p.lda = 264;
      p.has_bias = dt;
      const int64_t groups = mode == 0 ? 1 : 4;
      uint16_t *a = malloc(2 * 7 * 264), s[4 * 32], z[4 * 32], bias[32];
      uint8_t *codes = malloc(32 * 256);
      for (int i = 0; i < 7 * 264; ++i) a[i] = test_to_dtype((float)test_rng_uniform(&r, -1, 1), p.dtype);
      for (int i = 0; i < 32 * 256; ++i) codes[i] = (uint8_t)(test_rng_next(&r) & 15);
      for (int i = 0; i < groups * 32; ++i) {
        s[i] = test_to_dtype((float)test_rng_uniform(&r, 0.01, 0.1), p.dtype);
        z[i] = test_to_dtype((float)test_rng_uniform(&r, -0.5, 0.5), p.dtype);
      }
      for (int i = 0; i < 32; ++i) bias[i] = test_to_dtype((float)test_rng_uniform(&r, -1, 1), p.dtype);
      double d1[7 * 32], d2[7 * 32];
      assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, z, p.has_bias ? bias : NULL, 0.75f, d1), W4A16_STATUS_OK);
      naive(&p, a, codes, s, z, p.has_bias ? bias : NULL, 0.75f, d2);
      for (int i = 0; i < 7 * 32; ++i) assert_true(fabs(d1[i] - d2[i]) <= 1e-12 * (1 + fabs(d2[i])));
      free(a); free(codes);
    }
}

/* one row worked out by hand: q = 9 everywhere, s = 0.5, A = 1 -> each output = K * 0.5 * (9 - 8) = 32 */
static void test_hand_case(void **state) {
  (void)state;
  w4a16_problem p = test_problem(1, 16, 64, 0, W4A16_PER_COLUMN_SCALE_ONLY, W4A16_DTYPE_F16);
  uint16_t a[64], s[16];
  uint8_t codes[16 * 64];
  for (int i = 0; i < 64; ++i) a[i] = w4a16_float_to_half(1.0f);
  for (int i = 0; i < 16 * 64; ++i) codes[i] = 9;
  for (int i = 0; i < 16; ++i) s[i] = w4a16_float_to_half(0.5f);
  double d[16];
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, NULL, NULL, 2.0f, d), W4A16_STATUS_OK);
  for (int i = 0; i < 16; ++i) assert_true(d[i] == 64.0);
  /* zero-point mode: w = s*q + z with q = 9, s = 0.5, z = -4.5 -> 0 */
  uint16_t z[16];
  for (int i = 0; i < 16; ++i) z[i] = w4a16_float_to_half(-4.5f);
  p.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  p.group_size = 64;
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, z, NULL, 1.0f, d), W4A16_STATUS_OK);
  for (int i = 0; i < 16; ++i) assert_true(d[i] == 0.0);
}

static void test_bad_input(void **state) {
  (void)state;
  w4a16_problem p = test_problem(1, 16, 64, 32, W4A16_FINEGRAINED_SCALE_AND_ZEROS, W4A16_DTYPE_F16);
  uint16_t a[64] = {0}, s[32] = {0};
  uint8_t codes[16 * 64] = {0};
  double d[16];
  assert_int_equal(w4a16_reference_gemm(NULL, a, codes, s, s, NULL, 1, d), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, NULL, NULL, 1, d), W4A16_STATUS_NULL_POINTER);
  p.has_bias = 1;
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, s, NULL, 1, d), W4A16_STATUS_NULL_POINTER);
  p.has_bias = 0;
  p.group_size = 20;
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, s, NULL, 1, d), W4A16_STATUS_UNSUPPORTED_GROUP_SIZE);
  p.group_size = 32;
  p.m = -1;
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, s, NULL, 1, d), W4A16_STATUS_INVALID_SHAPE);
  p.m = 0; /* an empty product: nothing written */
  d[0] = 12345.0;
  assert_int_equal(w4a16_reference_gemm(&p, a, codes, s, s, NULL, 1, d), W4A16_STATUS_OK);
  assert_true(d[0] == 12345.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_naive), cmocka_unit_test(test_hand_case),
                                     cmocka_unit_test(test_bad_input)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
