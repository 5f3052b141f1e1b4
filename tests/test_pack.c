/* test_pack.c - packing: round trips, the documented layout bit by bit, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_util.h"

static void test_round_trip_random(void **state) {
  (void)state;
  test_rng r = test_rng_fresh("pack");
  const int64_t shapes[][2] = {{16, 64}, {32, 128}, {48, 192}, {256, 512}, {64, 4096}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    int64_t n = shapes[s][0], k = shapes[s][1];
    size_t bytes;
    assert_int_equal(w4a16_packed_size(n, k, &bytes), W4A16_STATUS_OK);
    assert_int_equal(bytes, (size_t)(n * k / 2));
    uint8_t *codes = malloc((size_t)(n * k)), *back = malloc((size_t)(n * k));
    uint8_t *packed = malloc(bytes);
    for (int64_t i = 0; i < n * k; ++i) codes[i] = (uint8_t)(test_rng_next(&r) & 15u);
    memset(back, 0xee, (size_t)(n * k));
    assert_int_equal(w4a16_pack_weights(codes, n, k, packed), W4A16_STATUS_OK);
    assert_int_equal(w4a16_unpack_weights(packed, n, k, back), W4A16_STATUS_OK);
    assert_memory_equal(codes, back, (size_t)(n * k));
    free(codes); free(back); free(packed);
  }
}

/* docs/LAYOUT.md, written out independently: tile (nt,kt) at ((nt*K/64)+kt)*512, lane l at l*16,
   word j covers k16 sub-tile j, nibble p holds element order[p] of the m16n8k16 A fragment. */
static void test_layout_matches_documentation(void **state) {
  (void)state;
  const int64_t n = 32, k = 128;
  uint8_t codes[32 * 128];
  test_rng r = test_rng_fresh("layout");
  for (int i = 0; i < n * k; ++i) codes[i] = (uint8_t)(test_rng_next(&r) & 15u);
  uint8_t packed[32 * 128 / 2];
  assert_int_equal(w4a16_pack_weights(codes, n, k, packed), W4A16_STATUS_OK);
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  /* element e of lane l: rows g / g+8, cols 2t,2t+1 / +8 (PTX ISA m16n8k16 A fragment) */
  const int row_of[8] = {0, 0, 8, 8, 0, 0, 8, 8}, col_of[8] = {0, 1, 0, 1, 8, 9, 8, 9};
  for (int nt = 0; nt < 2; ++nt)
    for (int kt = 0; kt < 2; ++kt)
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 4; ++j)
          for (int p = 0; p < 8; ++p) {
            const int e = order[p];
            const int row = nt * 16 + l / 4 + row_of[e];
            const int col = kt * 64 + 16 * j + 2 * (l % 4) + col_of[e];
            const size_t byte = (size_t)((nt * 2 + kt) * 512 + l * 16 + j * 4 + p / 2);
            const int nib = (p & 1) ? packed[byte] >> 4 : packed[byte] & 15;
            assert_int_equal(nib, codes[row * k + col]);
          }
}

static void test_bad_input(void **state) {
  (void)state;
  uint8_t codes[16 * 64] = {0};
  uint8_t packed[16 * 64 / 2];
  size_t bytes;
  assert_int_equal(w4a16_pack_weights(NULL, 16, 64, packed), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_pack_weights(codes, 16, 64, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_pack_weights(codes, 15, 64, packed), W4A16_STATUS_INVALID_SHAPE);
  assert_non_null(strstr(w4a16_last_error_message(), "N = 15"));
  assert_int_equal(w4a16_pack_weights(codes, 16, 96, packed), W4A16_STATUS_INVALID_SHAPE);
  assert_non_null(strstr(w4a16_last_error_message(), "K = 96"));
  assert_int_equal(w4a16_pack_weights(codes, 0, 64, packed), W4A16_STATUS_INVALID_SHAPE);
  assert_int_equal(w4a16_pack_weights(codes, -16, 64, packed), W4A16_STATUS_INVALID_SHAPE);
  assert_int_equal(w4a16_unpack_weights(NULL, 16, 64, codes), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_unpack_weights(packed, 16, 64, NULL), W4A16_STATUS_NULL_POINTER);
  assert_non_null(strstr(w4a16_last_error_message(), "codes"));
  assert_int_equal(w4a16_packed_size(16, 64, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_packed_size(16, 10, &bytes), W4A16_STATUS_INVALID_SHAPE);
  codes[5 * 64 + 7] = 16;
  memset(packed, 0x5a, sizeof packed);
  assert_int_equal(w4a16_pack_weights(codes, 16, 64, packed), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "[5, 7] = 16"));
  for (size_t i = 0; i < sizeof packed; ++i) assert_int_equal(packed[i], 0x5a); /* nothing written */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip_random),
                                     cmocka_unit_test(test_layout_matches_documentation),
                                     cmocka_unit_test(test_bad_input)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
