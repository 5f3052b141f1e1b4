/* profile.c - w4a16_profile: time every candidate kernel of a problem (timing.h's method). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "timing.h"
#include "w4a16/select.h"

#define DEFAULT_SEED 0x5eedu

typedef struct row {
  w4a16_profile_result r;
  size_t index; /* registry order, for stable ties */
} row;

static int cmp_rows(const void *pa, const void *pb) {
  const row *a = pa, *b = pb;
  int fa = a->r.status != W4A16_STATUS_OK, fb = b->r.status != W4A16_STATUS_OK;
  if (fa != fb) return fa - fb; /* the ones that ran first */
  if (!fa && a->r.median_us != b->r.median_us) return a->r.median_us < b->r.median_us ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

w4a16_status w4a16_profile(const w4a16_problem *problem, const w4a16_profile_options *options,
                           w4a16_profile_result *results, int requested, int *returned) {
  if (returned) *returned = 0;
  if (!problem) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!results) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "results is NULL");
  if (!returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "returned is NULL");
  if (requested < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d must be >= 1", requested);
  w4a16_profile_options o = {0, 0, 0, 0};
  if (options) o = *options;
  if (o.warmup < 0 || o.iterations < 0 || o.rotate_min_bytes < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                      "profile options: warmup = %d, iterations = %d, rotate_min_bytes = %d (each must be >= 0)",
                      o.warmup, o.iterations, o.rotate_min_bytes);
  w4a16_status st = w4a16_check_problem(problem);
  if (st != W4A16_STATUS_OK) return st;
  w4a16_device_info info;
  if ((st = w4a16_current_device(&info)) != W4A16_STATUS_OK) return st;

  /* candidates: can implement the problem, built for this compute capability */
  size_t count = w4a16_kernel_count(), n = 0;
  row *rows = calloc(count ? count : 1, sizeof *rows);
  if (!rows) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation failed");
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *kd = w4a16_kernel_get(i);
    if (!kd || info.cc < kd->sm_min || info.cc > kd->sm_max) continue;
    if (w4a16_can_implement(kd, problem) != W4A16_STATUS_OK) continue;
    rows[n].r.kernel = kd;
    rows[n].index = i;
    ++n;
  }
  if (n == 0) {
    free(rows);
    return w4a16_fail(W4A16_STATUS_NO_KERNEL,
                      "no registered kernel can implement M=%lld N=%lld K=%lld %s %s group %d on compute capability "
                      "%d.%d (%zu kernels registered)",
                      (long long)problem->m, (long long)problem->n, (long long)problem->k,
                      w4a16_dtype_name(problem->dtype), w4a16_quant_mode_name(problem->mode), problem->group_size,
                      info.cc / 10, info.cc % 10, count);
  }

  w4a16_timing_data *td = NULL;
  st = w4a16_timing_data_create(problem, (size_t)o.rotate_min_bytes, o.seed ? o.seed : DEFAULT_SEED, &td);
  if (st != W4A16_STATUS_OK) {
    free(rows);
    return st; /* message set */
  }
  w4a16_timing_options to = {o.warmup, o.iterations, 0, 0, 0, 0};
  const double flops = w4a16_timing_flops(problem), bytes = w4a16_timing_bytes(problem);
  size_t ran = 0, first_fail = n;
  char first_msg[320] = "";
  const w4a16_kernel_desc **kernels = calloc(n, sizeof *kernels);
  w4a16_timing_result *tr = calloc(n, sizeof *tr);
  if (!kernels || !tr) {
    free(kernels);
    free(tr);
    free(rows);
    w4a16_timing_data_destroy(td);
    return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation failed");
  }
  for (size_t i = 0; i < n; ++i) kernels[i] = rows[i].r.kernel;
  /* every candidate timed in the same rounds (timing.h): no candidate profits from its place */
  st = w4a16_timing_data_time_many(td, kernels, (int)n, &to, tr);
  for (size_t i = 0; i < n && st == W4A16_STATUS_OK; ++i) {
    rows[i].r.status = tr[i].status;
    if (tr[i].status == W4A16_STATUS_OK) {
      rows[i].r.median_us = (float)tr[i].median_us;
      rows[i].r.tflops = (float)(flops / (tr[i].median_us * 1e-6) / 1e12);
      rows[i].r.gbps = (float)(bytes / (tr[i].median_us * 1e-6) / 1e9);
      ++ran;
    } else if (first_fail == n) {
      first_fail = i;
      memcpy(first_msg, tr[i].message, sizeof first_msg);
    }
  }
  free(kernels);
  free(tr);
  if (st != W4A16_STATUS_OK) {
    free(rows);
    w4a16_timing_data_destroy(td);
    return st; /* message set */
  }
  w4a16_timing_data_destroy(td);

  qsort(rows, n, sizeof *rows, cmp_rows);
  int k = (size_t)requested < n ? requested : (int)n;
  for (int i = 0; i < k; ++i) results[i] = rows[i].r;
  *returned = k;
  w4a16_status out = W4A16_STATUS_OK;
  if (ran == 0) {
    /* rows are back in registry order (all failed); the first one is the first failure */
    out = w4a16_fail(rows[0].r.status, "every candidate (%zu) failed; the first, %s: %s", n, rows[0].r.kernel->name,
                     first_msg);
  } else {
    w4a16_clear_error();
  }
  free(rows);
  return out;
}
