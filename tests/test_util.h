/* test_util.h - shared helpers of the tests: random data, problems, float64 comparisons. */
#ifndef W4A16_TEST_UTIL_H
#define W4A16_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "w4a16/w4a16.h"

/* xorshift64*: seeded fresh each run (time + pid-free counter), printed so a failure can be replayed */
typedef struct test_rng { uint64_t s; } test_rng;

/* w4a16_heuristic_query_ex over table for a device of sm_count SMs, compute capability cc and
   mem_gbps GB/s (0: unknown), with the built-in rules */
static inline w4a16_status test_query_table_mem(const w4a16_kernel_desc *table, size_t count, int sm_count, int cc,
                                                int mem_gbps, const w4a16_problem *p, int requested,
                                                w4a16_heuristic_result *out, int *returned) {
  const w4a16_heuristic_query_options o = {.struct_size = sizeof o, .table = table, .count = count,
                                           .sm_count = sm_count, .cc = cc, .mem_gbps = mem_gbps};
  return w4a16_heuristic_query_ex(p, &o, requested, out, returned);
}

#ifdef cmocka_unit_test
/* a cmocka check of a status: got == want and, where needle is not NULL, the library's last error
   message contains it */
static inline void expect_status(w4a16_status got, w4a16_status want, const char *needle) {
  assert_int_equal(got, want);
  if (needle) assert_non_null(strstr(w4a16_last_error_message(), needle));
}
#endif

/* the same for a device of unknown bandwidth */
static inline w4a16_status test_query_table(const w4a16_kernel_desc *table, size_t count, int sm_count, int cc,
                                            const w4a16_problem *p, int requested, w4a16_heuristic_result *out,
                                            int *returned) {
  return test_query_table_mem(table, count, sm_count, cc, 0, p, requested, out, returned);
}

static inline uint64_t test_rng_next(test_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}

/* uniform in [lo, hi) */
static inline double test_rng_uniform(test_rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(test_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline test_rng test_rng_fresh(const char *what) {
  const char *env = getenv("W4A16_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull) ^ (uint64_t)clock();
  if (!seed) seed = 0x1234567;
  fprintf(stderr, "[%s] seed 0x%llx (set W4A16_TEST_SEED to replay)\n", what, (unsigned long long)seed);
  test_rng r = {seed};
  return r;
}

static inline uint16_t test_to_dtype(float f, w4a16_dtype d) {
  return d == W4A16_DTYPE_F16 ? w4a16_float_to_half(f) : w4a16_float_to_bf16(f);
}

static inline double test_from_dtype(uint16_t b, w4a16_dtype d) {
  return d == W4A16_DTYPE_F16 ? w4a16_half_to_float(b) : w4a16_bf16_to_float(b);
}

/* ||x - ref|| / ||ref||, or +inf if any x is NaN */
static inline double test_rel_error(const double *x, const double *ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return INFINITY;
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The largest elementwise error max |x - ref| / (|ref| + rms(ref)), or +inf if any x is NaN: a few
   grossly wrong elements (a misplaced row or column) hardly move the norm-wise error above but are
   of the order of 1 here, where rounding stays at a few units of the dtype's precision */
static inline double test_elem_error(const double *x, const double *ref, size_t n) {
  double ss = 0, worst = 0;
  for (size_t i = 0; i < n; ++i) ss += ref[i] * ref[i];
  const double rms = n ? sqrt(ss / (double)n) : 0;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return INFINITY;
    const double den = fabs(ref[i]) + rms, e = den > 0 ? fabs(x[i] - ref[i]) / den : fabs(x[i] - ref[i]);
    if (e > worst) worst = e;
  }
  return worst;
}

/* perm[0..k) = a random permutation of 0..k-1 (Fisher-Yates) */
static inline void test_permutation(test_rng *r, int32_t *perm, int64_t k) {
  for (int64_t i = 0; i < k; ++i) perm[i] = (int32_t)i;
  for (int64_t i = k - 1; i > 0; --i) {
    const int64_t j = (int64_t)(test_rng_next(r) % (uint64_t)(i + 1));
    const int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

/* A random group scale of either sign, |s| in [0.004, 0.03) */
static inline float test_scale(test_rng *r) {
  const float s = (float)test_rng_uniform(r, 0.004, 0.03);
  return (test_rng_next(r) >> 63) ? -s : s;
}

/* An integer zero point as checkpoints store it: z = -s zq with zq random in 0..15, s (the scale's
   bits in dtype) read back, the product rounded to dtype */
static inline uint16_t test_integer_zero(test_rng *r, uint16_t s, w4a16_dtype dtype) {
  return test_to_dtype(-(float)test_from_dtype(s, dtype) * (float)(test_rng_next(r) & 15u), dtype);
}

static inline w4a16_problem test_problem(int64_t m, int64_t n, int64_t k, int group, w4a16_quant_mode mode,
                                         w4a16_dtype dtype) {
  w4a16_problem p;
  memset(&p, 0, sizeof p);
  p.m = m;
  p.n = n;
  p.k = k;
  p.group_size = group;
  p.mode = mode;
  p.dtype = dtype;
  return p;
}

#endif
