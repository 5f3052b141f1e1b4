/* profile.c - the profilers: w4a16_profile times every candidate kernel of a problem on random
   inputs, w4a16_grouped_profile every grouped kernel of a grouped GEMM on the caller's buffers
   (timing.h's method for both). */
#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
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

/* The checks both profilers make of their table and options (after their problem's NULL check);
   o receives the options (NULL: zeros, the defaults). */
static w4a16_status check_call(const w4a16_profile_result *results, int requested, const int *returned,
                               const w4a16_profile_options *options, w4a16_profile_options *o) {
  if (!results) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "results is NULL");
  if (!returned) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "returned is NULL");
  if (requested < 1) return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "requested = %d must be >= 1", requested);
  memset(o, 0, sizeof *o);
  if (options) *o = *options;
  if (o->warmup < 0 || o->iterations < 0 || o->rotate_min_bytes < 0)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                      "profile options: warmup = %d, iterations = %d, rotate_min_bytes = %d (each must be >= 0)",
                      o->warmup, o->iterations, o->rotate_min_bytes);
  return W4A16_STATUS_OK;
}

/* rows[i] from tr[i] (flops and bytes a launch); returns how many ran; first_msg: the first failure's */
static size_t fill_rows(row *rows, size_t n, const w4a16_timing_result *tr, double flops, double bytes,
                        char first_msg[320]) {
  size_t ran = 0;
  int failed = 0;
  for (size_t i = 0; i < n; ++i) {
    rows[i].r.status = tr[i].status;
    if (tr[i].status == W4A16_STATUS_OK) {
      rows[i].r.median_us = (float)tr[i].median_us;
      rows[i].r.tflops = (float)(flops / (tr[i].median_us * 1e-6) / 1e12);
      rows[i].r.gbps = (float)(bytes / (tr[i].median_us * 1e-6) / 1e9);
      ++ran;
    } else if (!failed) {
      failed = 1;
      memcpy(first_msg, tr[i].message, 320);
    }
  }
  return ran;
}

/* The table: rows sorted (fastest first, failures after in registry order), the first requested into
   results; OK when one ran, else the first failure's status. */
static w4a16_status finish_table(row *rows, size_t n, size_t ran, const char *first_msg,
                                 w4a16_profile_result *results, int requested, int *returned) {
  qsort(rows, n, sizeof *rows, cmp_rows);
  int k = (size_t)requested < n ? requested : (int)n;
  for (int i = 0; i < k; ++i) results[i] = rows[i].r;
  *returned = k;
  if (ran == 0)
    /* rows are back in registry order (all failed); the first one is the first failure */
    return w4a16_fail(rows[0].r.status, "every candidate (%zu) failed; the first, %s: %s", n, rows[0].r.kernel->name,
                      first_msg);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_profile(const w4a16_problem *problem, const w4a16_profile_options *options,
                           w4a16_profile_result *results, int requested, int *returned) {
  if (returned) *returned = 0;
  if (!problem) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  w4a16_profile_options o;
  w4a16_status st = check_call(results, requested, returned, options, &o);
  if (st != W4A16_STATUS_OK) return st;
  st = w4a16_check_problem(problem);
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
  size_t ran = 0;
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
  if (st == W4A16_STATUS_OK) ran = fill_rows(rows, n, tr, flops, bytes, first_msg);
  free(kernels);
  free(tr);
  if (st != W4A16_STATUS_OK) {
    free(rows);
    w4a16_timing_data_destroy(td);
    return st; /* message set */
  }
  w4a16_timing_data_destroy(td);

  const w4a16_status out = finish_table(rows, n, ran, first_msg, results, requested, returned);
  free(rows);
  return out;
}

/* ------------------------------------------------------------------------- */
/* The grouped profiler                                                      */
/* ------------------------------------------------------------------------- */

#define ROUND256(x) (((x) + 255) & ~(size_t)255)

/* What every grouped candidate's launches share: the caller's arguments (weight copy 0) and the
   rotating copies 1.. in rot, each [W | scales | zeros] with every part rounded up to 256 bytes. */
typedef struct grouped_timing {
  const w4a16_grouped_gemm_args *args;
  const char *rot;
  size_t w_bytes, s_bytes, z_bytes, copy_bytes;
  void *workspace;
  size_t workspace_bytes;
} grouped_timing;

typedef struct grouped_launch {
  const grouped_timing *gt;
  const w4a16_kernel_desc *kernel;
} grouped_launch;

static w4a16_status launch_grouped(void *ctx, int copy, void *stream, char *msg, size_t cap) {
  const grouped_launch *gl = ctx;
  const grouped_timing *gt = gl->gt;
  w4a16_grouped_gemm_args a = *gt->args;
  if (copy > 0) {
    const char *base = gt->rot + (size_t)(copy - 1) * gt->copy_bytes;
    a.w = base;
    a.scales = base + ROUND256(gt->w_bytes);
    if (gt->z_bytes) a.zeros = base + ROUND256(gt->w_bytes) + ROUND256(gt->s_bytes);
  }
  w4a16_status st = w4a16_grouped_gemm(&a, gl->kernel, gt->workspace, gt->workspace_bytes, stream);
  if (st != W4A16_STATUS_OK) snprintf(msg, cap, "%s", w4a16_last_error_message());
  return st;
}

/* copies - 1 copies of the caller's weights, scales and zeros into gt->rot (device to device: the
   first from the caller's buffers, then doubling the copies made) */
static w4a16_status make_copies(const grouped_timing *gt, int copies) {
  if (copies < 2) return W4A16_STATUS_OK;
  char *rot = (char *)gt->rot;
  const w4a16_grouped_gemm_args *a = gt->args;
  const size_t so = ROUND256(gt->w_bytes), zo = so + ROUND256(gt->s_bytes);
  cudaError_t e = cudaMemcpy(rot, a->w, gt->w_bytes, cudaMemcpyDeviceToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(rot + so, a->scales, gt->s_bytes, cudaMemcpyDeviceToDevice);
  if (e == cudaSuccess && gt->z_bytes) e = cudaMemcpy(rot + zo, a->zeros, gt->z_bytes, cudaMemcpyDeviceToDevice);
  for (size_t made = 1, want = (size_t)copies - 1; e == cudaSuccess && made < want;) {
    const size_t more = want - made < made ? want - made : made;
    e = cudaMemcpy(rot + made * gt->copy_bytes, rot, more * gt->copy_bytes, cudaMemcpyDeviceToDevice);
    made += more;
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return w4a16_fail_cuda((int)e, "cudaMemcpy (copies of the caller's weights)");
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_grouped_profile(const w4a16_grouped_gemm_args *args, const w4a16_profile_options *options,
                                   w4a16_profile_result *results, int requested, int *returned) {
  if (returned) *returned = 0;
  if (!args) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "args is NULL");
  w4a16_profile_options o;
  w4a16_status st = check_call(results, requested, returned, options, &o);
  if (st != W4A16_STATUS_OK) return st;
  if ((st = w4a16_grouped_check_args(args)) != W4A16_STATUS_OK) return st;
  /* from here a whole struct: the caller's struct_size bytes (a first-version struct ends before
     flags, which then read 0), so the launches can copy it */
  w4a16_grouped_gemm_args whole;
  memset(&whole, 0, sizeof whole);
  memcpy(&whole, args, args->struct_size);
  args = &whole;
  if (args->rows == 0)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "rows = 0: the grouped GEMM launches nothing, there is nothing "
                                                  "to time");
  if ((st = w4a16_grouped_check_pointers(args)) != W4A16_STATUS_OK) return st;
  w4a16_device_info info;
  if ((st = w4a16_current_device(&info)) != W4A16_STATUS_OK) return st;

  /* candidates: can implement args, built for this compute capability */
  const size_t count = w4a16_grouped_kernel_count();
  size_t n = 0;
  row *rows = calloc(count ? count : 1, sizeof *rows);
  grouped_launch *gl = calloc(count ? count : 1, sizeof *gl);
  w4a16_timing_candidate *cands = calloc(count ? count : 1, sizeof *cands);
  w4a16_timing_result *tr = calloc(count ? count : 1, sizeof *tr);
  grouped_timing gt = {args, NULL, 0, 0, 0, 0, NULL, 0};
  cudaStream_t stream = NULL;
  if (!rows || !gl || !cands || !tr) {
    st = w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "host allocation failed");
    goto done;
  }
  size_t ws_max = 0;
  for (size_t i = 0; i < count; ++i) {
    const w4a16_kernel_desc *kd = w4a16_grouped_kernel_get(i);
    size_t ws = 0;
    if (!kd || info.cc < kd->sm_min || info.cc > kd->sm_max) continue;
    if (w4a16_grouped_can_implement(kd, args) != W4A16_STATUS_OK) continue;
    if (w4a16_grouped_gemm_workspace_size(kd, args, &ws) != W4A16_STATUS_OK) continue;
    if (ws > ws_max) ws_max = ws;
    rows[n].r.kernel = kd;
    rows[n].index = i;
    ++n;
  }
  if (n == 0) {
    st = w4a16_fail(W4A16_STATUS_NO_KERNEL,
                    "no grouped kernel can implement E=%" PRId64 " N=%" PRId64 " K=%" PRId64
                    " %s %s group %d on compute capability %d.%d (%zu grouped kernels registered)",
                    args->experts, args->n, args->k, w4a16_dtype_name(args->dtype), w4a16_quant_mode_name(args->mode),
                    args->group_size, info.cc / 10, info.cc % 10, count);
    goto done;
  }

  /* the caller's weights are copy 0; copies 1.. rotate with it out of L2 */
  const w4a16_problem ep = {.m = 0, .n = args->n, .k = args->k, .group_size = args->group_size, .mode = args->mode,
                            .dtype = args->dtype};
  const size_t experts = (size_t)args->experts;
  gt.w_bytes = experts * (size_t)args->n * (size_t)args->k / 2;
  gt.s_bytes = experts * (size_t)w4a16_group_count(&ep) * (size_t)args->n * 2;
  gt.z_bytes = args->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? gt.s_bytes : 0;
  gt.copy_bytes = ROUND256(gt.w_bytes) + ROUND256(gt.s_bytes) + ROUND256(gt.z_bytes);
  cudaError_t e = cudaDeviceSynchronize(); /* the caller's buffers hold their data before they are copied */
  if (e != cudaSuccess) {
    st = w4a16_fail_cuda((int)e, "cudaDeviceSynchronize");
    goto done;
  }
  int copies = 1;
  void *rot = NULL;
  if ((st = w4a16_timing_alloc_copies(gt.copy_bytes, (size_t)o.rotate_min_bytes, 1, &rot, &copies)) !=
      W4A16_STATUS_OK)
    goto done;
  gt.rot = rot;
  if ((st = make_copies(&gt, copies)) != W4A16_STATUS_OK) goto done;
  if (ws_max && (e = cudaMalloc(&gt.workspace, ws_max)) != cudaSuccess) {
    cudaGetLastError();
    gt.workspace = NULL;
    st = e == cudaErrorMemoryAllocation
             ? w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "cudaMalloc of %zu bytes for the workspace failed", ws_max)
             : w4a16_fail_cuda((int)e, "cudaMalloc (workspace)");
    goto done;
  }
  gt.workspace_bytes = ws_max;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    stream = NULL;
    st = w4a16_fail_cuda((int)e, "cudaStreamCreateWithFlags");
    goto done;
  }

  for (size_t i = 0; i < n; ++i) {
    gl[i] = (grouped_launch){&gt, rows[i].r.kernel};
    cands[i] = (w4a16_timing_candidate){launch_grouped, &gl[i], 0, 0};
  }
  /* every candidate timed in the same rounds (timing.h), as w4a16_profile */
  const w4a16_timing_options to = {o.warmup, o.iterations, 0, 0, 0, 0};
  if ((st = w4a16_time_launches(cands, (int)n, copies, stream, &to, tr)) != W4A16_STATUS_OK) goto done;
  /* an upper bound of the bytes a launch moves: every expert's weights, as if each had rows */
  const double rows_d = (double)args->rows, bytes = (double)(gt.w_bytes + gt.s_bytes + gt.z_bytes) +
                                                    rows_d * (double)args->k * 2.0 + rows_d * (double)args->n * 2.0;
  const double flops = 2.0 * rows_d * (double)args->n * (double)args->k;
  char first_msg[320] = "";
  const size_t ran = fill_rows(rows, n, tr, flops, bytes, first_msg);
  st = finish_table(rows, n, ran, first_msg, results, requested, returned);

done:
  if (stream) {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  cudaFree(gt.workspace);
  cudaFree((void *)gt.rot);
  free(rows);
  free(gl);
  free(cands);
  free(tr);
  return st;
}
