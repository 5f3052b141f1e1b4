/* test_coverage.c - every shape the API accepts has a kernel (issue 38): in a build of the default
 * set (or the full space), every problem with N % 16 == 0 and K % 64 == 0 up to N, K = 16384
 * (sampled: every small value, the edges, random ones) has at least one kernel that can implement
 * it and that the heuristic picks, at every M (sampled: around every token-tile boundary), in every
 * dtype and mode (fine-grained groups of 64 and 128 where K allows, per-column scales, per-column
 * zero points), on an H100 (sm_90, 132 SMs) and an A100 (sm_80, 108 SMs) where the build has
 * kernels for them. From the registry, can_implement and the heuristic query alone: no GPU needed.
 * A build filtered by W4A16_KERNELS / W4A16_EXCLUDE_KERNELS need not cover every shape: skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "internal.h"
#include "test_util.h"
#include "w4a16_build_config.h"

typedef struct device_model { int cc, sm_count; } device_model;
static const device_model kDevices[] = {{90, 132}, {80, 108}};

/* whether the registry has a kernel for cc */
static int built_for(const w4a16_kernel_desc *t, size_t count, int cc) {
  for (size_t i = 0; i < count; ++i)
    if (cc >= t[i].sm_min && cc <= t[i].sm_max) return 1;
  return 0;
}

/* the first kernel of t that runs on cc and can implement p, or NULL */
static const w4a16_kernel_desc *any_kernel(const w4a16_kernel_desc *t, size_t count, int cc, const w4a16_problem *p) {
  for (size_t i = 0; i < count; ++i)
    if (cc >= t[i].sm_min && cc <= t[i].sm_max && w4a16_can_implement(&t[i], p) == W4A16_STATUS_OK) return &t[i];
  return NULL;
}

static int sorted_unique(int64_t *v, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      int64_t x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  int u = 0;
  for (int i = 0; i < n; ++i)
    if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
  return u;
}

static void test_every_shape_has_a_kernel(void **state) {
  (void)state;
  if (!W4A16_KERNEL_SET_COMPLETE) {
    fprintf(stderr, "a filtered kernel set need not cover every shape: coverage not checked\n");
    skip();
  }
  size_t count;
  const w4a16_kernel_desc *t = w4a16_registry_table(&count);
  test_rng r = test_rng_fresh("coverage");
  int64_t ns[64], ks[64];
  int nn = 0, nk = 0;
  /* N: 16 .. 320 every 16, the largest, and random multiples of 16 */
  for (int64_t n = 16; n <= 320; n += 16) ns[nn++] = n;
  ns[nn++] = 16384;
  ns[nn++] = 16384 - 16;
  ns[nn++] = 14784; /* Qwen2.5-72B gate/up at tensor-parallel 4 */
  ns[nn++] = 10944; /* DeepSeek-V2-Lite at 2 */
  ns[nn++] = 2368;
  while (nn < 48) ns[nn++] = 16 * (1 + (int64_t)(test_rng_next(&r) % 1024));
  /* K: 64 .. 640 every 64, the largest, and random multiples of 64 */
  for (int64_t k = 64; k <= 640; k += 64) ks[nk++] = k;
  ks[nk++] = 16384;
  ks[nk++] = 16384 - 64;
  ks[nk++] = 1408;
  ks[nk++] = 1664;
  while (nk < 24) ks[nk++] = 64 * (1 + (int64_t)(test_rng_next(&r) % 256));
  nn = sorted_unique(ns, nn);
  nk = sorted_unique(ks, nk);
  /* M: around the token tiles (8 .. 256) and the GEMV's limits, and beyond */
  const int64_t ms[] = {1, 2, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097};
  const size_t n_ms = sizeof ms / sizeof ms[0];
  int devices = 0;
  long checked = 0, queried = 0;
  for (size_t d = 0; d < sizeof kDevices / sizeof kDevices[0]; ++d) {
    const device_model dv = kDevices[d];
    if (!built_for(t, count, dv.cc)) continue;
    ++devices;
    for (int dt = 0; dt < 2; ++dt)
      for (int variant = 0; variant < 5; ++variant)
        for (int in = 0; in < nn; ++in)
          for (int ik = 0; ik < nk; ++ik) {
            const int64_t n = ns[in], k = ks[ik];
            /* 0 per-column scales, 1 / 2 fine-grained scales / zeros (group 64), 3 zeros of
               group 128 (where K allows), 4 per-column zero points (group K) */
            w4a16_quant_mode mode = variant == 0   ? W4A16_PER_COLUMN_SCALE_ONLY
                                    : variant == 1 ? W4A16_FINEGRAINED_SCALE_ONLY
                                                   : W4A16_FINEGRAINED_SCALE_AND_ZEROS;
            int group = variant == 0 ? 0 : variant == 3 ? 128 : variant == 4 ? (int)k : 64;
            if (k % (group ? group : 64)) continue;
            for (size_t im = 0; im < n_ms; ++im) {
              w4a16_problem p = test_problem(ms[im], n, k, group, mode, (w4a16_dtype)dt);
              ++checked;
              if (!any_kernel(t, count, dv.cc, &p))
                fail_msg("no kernel for M=%lld N=%lld K=%lld group=%d %s %s on sm_%d", (long long)p.m,
                         (long long)n, (long long)k, group, w4a16_quant_mode_name(mode),
                         w4a16_dtype_name((w4a16_dtype)dt), dv.cc);
              /* the heuristic picks one (a sample: the query ranks every kernel) */
              if ((in + ik + (int)im) % 7 == 0) {
                w4a16_heuristic_result res[1];
                int got = 0;
                ++queried;
                w4a16_status st = test_query_table(t, count, dv.sm_count, dv.cc, &p, 1, res, &got);
                if (st != W4A16_STATUS_OK || got != 1 || w4a16_can_implement(res[0].kernel, &p) != W4A16_STATUS_OK)
                  fail_msg("heuristic: %s (%s) for M=%lld N=%lld K=%lld group=%d %s %s on sm_%d",
                           w4a16_status_name(st), w4a16_last_error_message(), (long long)p.m, (long long)n,
                           (long long)k, group, w4a16_quant_mode_name(mode), w4a16_dtype_name((w4a16_dtype)dt),
                           dv.cc);
              }
            }
          }
  }
  fprintf(stderr, "%ld problems on %d device models have a kernel (%ld heuristic queries)\n", checked, devices,
          queried);
  if (!devices) skip();
}

/* the shapes issue 38 names, refused before: each has a kernel at every M of the list */
static void test_issue_shapes(void **state) {
  (void)state;
  if (!W4A16_KERNEL_SET_COMPLETE) skip();
  size_t count;
  const w4a16_kernel_desc *t = w4a16_registry_table(&count);
  const int64_t shapes[][3] = {{1, 64, 128}, {26, 2368, 1664}, {257, 832, 1408}, {64, 14784, 8192},
                               {1024, 14784, 8192}, {64, 10944, 2048}, {4096, 10944, 2048}};
  int done = 0;
  for (size_t d = 0; d < sizeof kDevices / sizeof kDevices[0]; ++d) {
    if (!built_for(t, count, kDevices[d].cc)) continue;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
      for (int dt = 0; dt < 2; ++dt) {
        w4a16_problem p = test_problem(shapes[i][0], shapes[i][1], shapes[i][2], 128,
                                       W4A16_FINEGRAINED_SCALE_ONLY, (w4a16_dtype)dt);
        w4a16_heuristic_result res[1];
        int got = 0;
        assert_int_equal(test_query_table(t, count, kDevices[d].sm_count, kDevices[d].cc, &p, 1, res, &got),
                         W4A16_STATUS_OK);
        assert_int_equal(got, 1);
        ++done;
      }
  }
  if (!done) skip();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_shape_has_a_kernel),
                                     cmocka_unit_test(test_issue_shapes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
