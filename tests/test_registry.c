/* test_registry.c - the generated table: sorted, unique, fields agree with names, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "test_util.h"

static void test_sorted_unique_and_findable(void **state) {
  (void)state;
  size_t n = w4a16_kernel_count();
  assert_true(n > 0);
  for (size_t i = 0; i < n; ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    assert_non_null(k);
    assert_non_null(k->impl);
    assert_ptr_equal(w4a16_kernel_find(k->name), k);
    if (i) assert_true(strcmp(w4a16_kernel_get(i - 1)->name, k->name) < 0);
  }
  assert_null(w4a16_kernel_get(n));
  assert_null(w4a16_kernel_find("w4a16_sm80_bf16_u4_fgs_1x1x1_s1"));
  assert_null(w4a16_kernel_find(NULL));
}

/* the name is the identity: its fields are the descriptor's fields */
static void test_fields_agree_with_name(void **state) {
  (void)state;
  static const char *modes[] = {"pc", "fgs", "fgsz"};
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "w4a16_%s_%s_u4_%s_", w4a16_family_name(k->family), w4a16_dtype_name(k->dtype),
             modes[k->mode]);
    assert_memory_equal(k->name, prefix, strlen(prefix));
    if (k->family != W4A16_FAMILY_GEMV) {
      char tile[64];
      snprintf(tile, sizeof tile, "_%dx%dx%d_", k->tile_n, k->tile_m, k->tile_k);
      assert_non_null(strstr(k->name, tile));
    }
    if (k->family == W4A16_FAMILY_GEMV) {
      char tile[64];
      snprintf(tile, sizeof tile, "_n%d_m%d_k%d_", k->tile_n, k->tile_m, k->tile_k);
      assert_non_null(strstr(k->name, tile));
    }
    /* the sm90 family and the GEMV TMA schedule are sm_90a-only; everything else runs from sm_80 */
    if (k->family == W4A16_FAMILY_SM90 || k->schedule == W4A16_SCHEDULE_GEMV_TMA) {
      assert_int_equal(k->sm_min, 90);
      assert_int_equal(k->sm_max, 90);
      assert_string_equal(k->arch, "sm90a");
      assert_non_null(strstr(k->name, w4a16_schedule_name(k->schedule)));
    } else {
      assert_int_equal(k->sm_min, 80);
      assert_string_equal(k->arch, "sm80");
    }
    assert_true(k->threads > 0 && k->threads <= 1024 && k->threads % 32 == 0);
    assert_true(k->tile_n % 16 == 0 && k->tile_k % 64 == 0);
    assert_true(k->split_k >= 1);
  }
}

static void test_fingerprint(void **state) {
  (void)state;
  uint64_t f = w4a16_registry_fingerprint();
  assert_true(f != 0);
  assert_true(f == w4a16_registry_fingerprint());
  /* FNV-1a over "name\n" for every name, recomputed here */
  uint64_t h = 14695981039346656037ull; /* the FNV-1a 64-bit offset basis */
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    for (const char *s = w4a16_kernel_get(i)->name; *s; ++s) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    h ^= '\n';
    h *= 1099511628211ull;
  }
  assert_true(h == f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_sorted_unique_and_findable),
                                     cmocka_unit_test(test_fields_agree_with_name), cmocka_unit_test(test_fingerprint)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
