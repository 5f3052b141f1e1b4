/* test_status.c - status names and strings, version, enum names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "w4a16/w4a16.h"

static void test_every_status_has_name_and_string(void **state) {
  (void)state;
  int count = 0;
#define X(name, value, desc)                                                            \
  assert_string_equal(w4a16_status_name(W4A16_STATUS_##name), "W4A16_STATUS_" #name);   \
  assert_string_equal(w4a16_status_string(W4A16_STATUS_##name), desc);                  \
  assert_int_equal((int)W4A16_STATUS_##name, value);                                    \
  ++count;
  W4A16_STATUS_TABLE(X)
#undef X
  assert_int_equal(count, 18);
}

static void test_unknown_status(void **state) {
  (void)state;
  assert_string_equal(w4a16_status_name((w4a16_status)999), "W4A16_STATUS_UNKNOWN");
  assert_non_null(w4a16_status_string((w4a16_status)-5));
  assert_string_equal(w4a16_status_string((w4a16_status)-5), "unknown status value");
}

static void test_stable_values(void **state) {
  (void)state;
  assert_int_equal(W4A16_STATUS_OK, 0);
  assert_int_equal(W4A16_STATUS_ARCH_MISMATCH, 11);
  assert_int_equal(W4A16_STATUS_CUDA_ERROR, 14);
}

static void test_version(void **state) {
  (void)state;
  assert_int_equal(w4a16_version(), W4A16_VERSION_NUMBER);
  assert_string_equal(w4a16_version_string(), W4A16_VERSION_STRING);
  char buf[32];
  snprintf(buf, sizeof buf, "%d.%d.%d", W4A16_VERSION_MAJOR, W4A16_VERSION_MINOR, W4A16_VERSION_PATCH);
  assert_string_equal(buf, W4A16_VERSION_STRING);
}

static void test_enum_names(void **state) {
  (void)state;
  assert_string_equal(w4a16_dtype_name(W4A16_DTYPE_BF16), "bf16");
  assert_string_equal(w4a16_dtype_name(W4A16_DTYPE_F16), "f16");
  assert_string_equal(w4a16_dtype_name((w4a16_dtype)7), "?");
  assert_string_equal(w4a16_quant_mode_name(W4A16_FINEGRAINED_SCALE_AND_ZEROS), "FINEGRAINED_SCALE_AND_ZEROS");
  assert_string_equal(w4a16_quant_mode_name((w4a16_quant_mode)9), "?");
  assert_string_equal(w4a16_family_name(W4A16_FAMILY_SM90), "sm90");
  assert_string_equal(w4a16_schedule_name(W4A16_SCHEDULE_PINGPONG), "pingpong");
  assert_string_equal(w4a16_schedule_name((w4a16_schedule)42), "?");
}

static void test_error_message_names_value(void **state) {
  (void)state;
  assert_null(w4a16_kernel_find("w4a16_no_such_kernel"));
  assert_non_null(strstr(w4a16_last_error_message(), "w4a16_no_such_kernel"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_status_has_name_and_string), cmocka_unit_test(test_unknown_status),
      cmocka_unit_test(test_stable_values),  cmocka_unit_test(test_version),
      cmocka_unit_test(test_enum_names),     cmocka_unit_test(test_error_message_names_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
