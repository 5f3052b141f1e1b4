/* test_half.c - fp16 / bf16 conversions against exact expectations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "test_util.h"

static void test_half_exhaustive_round_trip(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    float f = w4a16_half_to_float((uint16_t)h);
    if (f != f) { /* NaN stays NaN */
      uint16_t back = w4a16_float_to_half(f);
      assert_true((back & 0x7c00u) == 0x7c00u && (back & 0x3ffu) != 0);
      continue;
    }
    assert_int_equal(w4a16_float_to_half(f), h);
  }
}

static void test_half_known_values(void **state) {
  (void)state;
  assert_int_equal(w4a16_float_to_half(1.0f), 0x3c00);
  assert_int_equal(w4a16_float_to_half(-2.0f), 0xc000);
  assert_int_equal(w4a16_float_to_half(65504.0f), 0x7bff);
  assert_int_equal(w4a16_float_to_half(70000.0f), 0x7c00);
  assert_int_equal(w4a16_float_to_half(5.9604645e-08f), 0x0001); /* smallest subnormal */
  assert_int_equal(w4a16_float_to_half(1.0f + 1.0f / 2048.0f), 0x3c00); /* tie to even */
  assert_int_equal(w4a16_float_to_half(1.0f + 3.0f / 2048.0f), 0x3c02); /* tie to even (up) */
  assert_true(w4a16_half_to_float(0x3555) > 0.333f && w4a16_half_to_float(0x3555) < 0.3334f);
}

static void test_half_rounding_random(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("half");
  for (int i = 0; i < 100000; ++i) {
    float f = (float)test_rng_uniform(&r, -70000.0, 70000.0) * (float)pow(2.0, -(double)(i % 30));
    uint16_t h = w4a16_float_to_half(f);
    float back = w4a16_half_to_float(h);
    if (fabsf(f) >= 65520.0f) { assert_true(isinf(back)); continue; }
    /* the nearest representable: neighbours are not closer */
    float up = w4a16_half_to_float((uint16_t)(h + 1)), dn = w4a16_half_to_float((uint16_t)(h - 1));
    if ((h & 0x7fffu) != 0 && (h & 0x7fffu) < 0x7bffu) {
      assert_true(fabsf(back - f) <= fabsf(up - f));
      assert_true(fabsf(back - f) <= fabsf(dn - f));
    }
  }
}

static void test_bf16(void **state) {
  (void)state;
  assert_int_equal(w4a16_float_to_bf16(1.0f), 0x3f80);
  assert_int_equal(w4a16_float_to_bf16(-3.0f), 0xc040);
  assert_true(w4a16_bf16_to_float(0x4308) == 136.0f);
  assert_true(w4a16_bf16_to_float(0x4300) == 128.0f);
  /* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1 */
  assert_int_equal(w4a16_float_to_bf16(1.0f + 1.0f / 256.0f), 0x3f80);
  assert_int_equal(w4a16_float_to_bf16(1.0f + 3.0f / 256.0f), 0x3f82);
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    float f = w4a16_bf16_to_float((uint16_t)b);
    if (f == f) assert_int_equal(w4a16_float_to_bf16(f), b);
  }
  assert_true(isnan(w4a16_bf16_to_float(w4a16_float_to_bf16(NAN))));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_half_exhaustive_round_trip), cmocka_unit_test(test_half_known_values),
      cmocka_unit_test(test_half_rounding_random), cmocka_unit_test(test_bf16)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
