/* test_timing.c - the timing method (runtime/timing.c) and w4a16_profile (runtime/profile.c).
   GPU tests: the binary exits 77 (skipped) where no GPU is present. */
#include <cuda_runtime_api.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "timing.h"
#include "w4a16/select.h"
#include "w4a16/w4a16.h"

/* ---- pure helpers (no GPU) ---- */

static void test_copies(void **state) {
  (void)state;
  assert_int_equal(w4a16_timing_copies(10 << 20, 200 << 20, (size_t)1 << 40), 20);
  assert_int_equal(w4a16_timing_copies(30 << 20, 200 << 20, (size_t)1 << 40), 7); /* ceil */
  assert_int_equal(w4a16_timing_copies((size_t)1 << 30, 200 << 20, (size_t)1 << 40), 1);
  assert_int_equal(w4a16_timing_copies(10 << 20, 200 << 20, 50 << 20), 5); /* memory bound */
  assert_int_equal(w4a16_timing_copies(10 << 20, 200 << 20, 1 << 20), 1);  /* at least one */
  assert_int_equal(w4a16_timing_copies(0, 200 << 20, 1 << 20), 1);
}

static void test_bytes_flops(void **state) {
  (void)state;
  w4a16_problem p = {16, 57344, 8192, 0, 0, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16, 0, 0};
  assert_true(w4a16_timing_flops(&p) == 2.0 * 16 * 57344 * 8192);
  double want = 57344.0 * 8192 / 2 + 64.0 * 57344 * 2 + 16.0 * 8192 * 2 + 16.0 * 57344 * 2;
  assert_true(w4a16_timing_bytes(&p) == want);
  p.mode = W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  assert_true(w4a16_timing_bytes(&p) == want + 64.0 * 57344 * 2);
  p.mode = W4A16_PER_COLUMN_SCALE_ONLY;
  p.group_size = 0;
  p.has_bias = 1;
  assert_true(w4a16_timing_bytes(&p) == 57344.0 * 8192 / 2 + 57344.0 * 2 + 16.0 * 8192 * 2 + 16.0 * 57344 * 2 +
                                            57344.0 * 2);
  assert_int_equal(w4a16_timing_copy_bytes(&p), 57344 * 8192 / 2 + 57344 * 2);
}

static void test_profile_bad_args(void **state) {
  (void)state;
  w4a16_problem p = {16, 4096, 4096, 0, 0, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16, 0, 0};
  w4a16_profile_result r[4];
  int n = 99;
  assert_int_equal(w4a16_profile(NULL, NULL, r, 4, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(n, 0);
  assert_int_equal(w4a16_profile(&p, NULL, NULL, 4, &n), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_profile(&p, NULL, r, 4, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_profile(&p, NULL, r, 0, &n), W4A16_STATUS_INVALID_VALUE);
  assert_true(strstr(w4a16_last_error_message(), "requested") != NULL);
  w4a16_profile_options o = {-1, 0, 0, 0};
  assert_int_equal(w4a16_profile(&p, &o, r, 4, &n), W4A16_STATUS_INVALID_VALUE);
  p.k = 100; /* not a multiple of 64 */
  assert_int_equal(w4a16_profile(&p, NULL, r, 4, &n), W4A16_STATUS_INVALID_SHAPE);
}

/* w4a16_time_launches' bad arguments: a status and a message, before any CUDA call */
static void test_rounds_bad_args(void **state) {
  (void)state;
  int ctx = 0;
  w4a16_timing_candidate cand[1] = {{NULL, &ctx, 0, 0}};
  w4a16_timing_result r[1];
  assert_int_equal(w4a16_time_launches(NULL, 1, 1, NULL, NULL, r), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_time_launches(cand, 1, 1, NULL, NULL, NULL), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_time_launches(cand, 0, 1, NULL, NULL, r), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "n = 0"));
  const w4a16_timing_options eager = {0, 0, 0, 0, 0, 1}; /* eager timing is one candidate at a time */
  assert_int_equal(w4a16_time_launches(cand, 1, 1, NULL, &eager, r), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "eager"));
  const w4a16_kernel_desc *k0 = w4a16_kernel_get(0);
  assert_int_equal(w4a16_timing_data_time_with(NULL, &k0, 1, NULL, 0, NULL, r), W4A16_STATUS_NULL_POINTER);
}

/* ---- GPU ---- */

typedef struct memset_ctx {
  char *buf;
  size_t bytes; /* per copy */
  int calls;
  int fail_at; /* call index that fails (-1 none) */
  int malloc_inside;
  size_t stride; /* bytes between copies (0: bytes) */
} memset_ctx;

static w4a16_status memset_launch(void *vctx, int copy, void *stream, char *msg, size_t cap) {
  memset_ctx *c = vctx;
  if (c->fail_at >= 0 && c->calls++ == c->fail_at) {
    snprintf(msg, cap, "deliberate failure");
    return W4A16_STATUS_NOT_SUPPORTED;
  }
  if (c->malloc_inside) { /* not allowed while capturing (ThreadLocal mode) */
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, 256);
    if (e != cudaSuccess) {
      snprintf(msg, cap, "cudaMalloc: %s", cudaGetErrorString(e));
      return W4A16_STATUS_CUDA_ERROR;
    }
    cudaFree(p);
  }
  const size_t stride = c->stride ? c->stride : c->bytes;
  cudaError_t e = cudaMemsetAsync(c->buf + (size_t)copy * stride, copy + 1, c->bytes, (cudaStream_t)stream);
  if (e != cudaSuccess) {
    snprintf(msg, cap, "cudaMemsetAsync: %s", cudaGetErrorString(e));
    return W4A16_STATUS_CUDA_ERROR;
  }
  return W4A16_STATUS_OK;
}

static void test_time_memset(void **state) {
  (void)state;
  memset_ctx c = {NULL, (size_t)16 << 20, 0, -1, 0, 0};
  int copies = w4a16_timing_copies(c.bytes, 0, (size_t)4 << 30);
  assert_true(copies >= 2); /* 16 MB copies against a >= 8 MB L2 */
  assert_int_equal(cudaMalloc((void **)&c.buf, (size_t)copies * c.bytes), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  w4a16_timing_result r;
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, NULL, &r), W4A16_STATUS_OK);
  double gbps = c.bytes / (r.median_us * 1e-6) / 1e9;
  fprintf(stderr, "[timing] memset 16 MB x %d copies: median %.2f us (min %.2f max %.2f), %.0f GB/s, %d launches "
                  "per replay, %d samples\n",
          copies, r.median_us, r.min_us, r.max_us, gbps, r.launches, r.samples);
  assert_true(r.median_us > 0 && r.min_us <= r.median_us && r.median_us <= r.max_us);
  assert_true(r.launches >= copies);
  assert_int_equal(r.samples, 10);
  assert_true(gbps < 20000.0); /* no faster than any HBM; L2 was left */
  assert_string_equal(r.message, "");

  /* a failing launch is reported with its status and message */
  c.calls = 0;
  c.fail_at = 0;
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, NULL, &r), W4A16_STATUS_NOT_SUPPORTED);
  assert_non_null(strstr(r.message, "deliberate failure"));
  c.calls = 0;
  c.fail_at = 7; /* during capture (check + 5 warm-up launches come first) */
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, NULL, &r), W4A16_STATUS_NOT_SUPPORTED);
  assert_non_null(strstr(r.message, "capture"));
  /* a launch that allocates cannot be captured: reported, not crashed */
  c.fail_at = -1;
  c.malloc_inside = 1;
  w4a16_time_launch(memset_launch, &c, copies, s, NULL, &r);
  fprintf(stderr, "[timing] allocating launch: %s: %s\n", w4a16_status_name(r.status), r.message);
  assert_true(r.status == W4A16_STATUS_OK || r.message[0] != '\0');
  /* and the stream still works afterwards */
  c.malloc_inside = 0;
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, NULL, &r), W4A16_STATUS_OK);
  cudaStreamDestroy(s);
  cudaFree(c.buf);
}

/* Eager timing (options.eager): every sample issues the graph's launch count by the host (the launch
   function's calls add up), the host's time a launch is reported, the stream runs no faster than the
   host issues (a 256-byte memset: microseconds of GPU time against the host's call), and a launch
   that fails during the eager samples is reported with its status and message */
static void test_time_eager(void **state) {
  (void)state;
  memset_ctx c = {NULL, (size_t)16 << 20, 0, 1 << 30, 0, 0}; /* fail_at far away: calls are counted */
  int copies = w4a16_timing_copies(c.bytes, 0, (size_t)4 << 30);
  assert_int_equal(cudaMalloc((void **)&c.buf, (size_t)copies * c.bytes), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  w4a16_timing_options o = {2, 7, 0, 0, 0, 1};
  w4a16_timing_result r;
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, &o, &r), W4A16_STATUS_OK);
  fprintf(stderr, "[timing] eager memset 16 MB x %d copies: stream %.2f us a launch (min %.2f max %.2f), host %.2f us "
                  "a call, %d launches a sample\n",
          copies, r.median_us, r.min_us, r.max_us, r.host_us, r.launches);
  assert_int_equal(r.samples, 7);
  assert_int_equal(c.calls, 1 + 2 + r.launches + 7 * r.launches); /* checked, warm-up, capture, samples */
  assert_true(r.min_us > 0 && r.min_us <= r.median_us && r.median_us <= r.max_us);
  assert_true(r.host_us > 0);
  assert_true(c.bytes / (r.median_us * 1e-6) / 1e9 < 20000.0);
  assert_string_equal(r.message, "");
  /* graph replays report no host time */
  o.eager = 0;
  assert_int_equal(w4a16_time_launch(memset_launch, &c, copies, s, &o, &r), W4A16_STATUS_OK);
  assert_true(r.host_us == 0.0);

  memset_ctx tiny = {c.buf, 256, 0, 1 << 30, 0, 0};
  const w4a16_timing_options ot = {2, 7, 1e6, 64, 0, 1}; /* 64 launches a sample, whatever the estimate */
  assert_int_equal(w4a16_time_launch(memset_launch, &tiny, 1, s, &ot, &r), W4A16_STATUS_OK);
  assert_int_equal(r.launches, 64);
  fprintf(stderr, "[timing] eager memset 256 bytes: stream %.2f us a launch, host %.2f us a call, %d launches\n",
          r.median_us, r.host_us, r.launches);
  assert_true(r.host_us > 0 && r.median_us >= 0.5 * r.host_us);

  /* a failure among the eager launches: its status and message */
  tiny.calls = 0;
  tiny.fail_at = 1 + 2 + 64 + 3; /* the fourth launch of the first eager sample */
  assert_int_equal(w4a16_time_launch(memset_launch, &tiny, 1, s, &ot, &r), W4A16_STATUS_NOT_SUPPORTED);
  assert_non_null(strstr(r.message, "eager launch"));
  assert_non_null(strstr(r.message, "deliberate failure"));
  cudaStreamDestroy(s);
  cudaFree(c.buf);
}

/* w4a16_time_launches: each candidate's result in its own slot (a memset of half the bytes takes
   less time than the whole one, listed after it), a failing candidate reported and not timed */
static void test_time_rounds(void **state) {
  (void)state;
  const size_t bytes = (size_t)16 << 20;
  int copies = w4a16_timing_copies(bytes, 0, (size_t)4 << 30);
  char *buf = NULL;
  assert_int_equal(cudaMalloc((void **)&buf, (size_t)copies * bytes), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  memset_ctx c[3] = {{buf, bytes, 0, -1, 0, 0}, {buf, bytes / 4, 0, 0, 0, bytes}, {buf, bytes / 2, 0, -1, 0, bytes}};
  /* the third rotates over two copies of its own (a candidate's copies field) */
  w4a16_timing_candidate cand[3] = {{memset_launch, &c[0], 0, 0}, {memset_launch, &c[1], 0, 0}, {memset_launch, &c[2], 2, 0}};
  w4a16_timing_result r[3];
  w4a16_timing_options o = {2, 7, 0, 0, 0, 0};
  assert_int_equal(w4a16_time_launches(cand, 3, copies, s, &o, r), W4A16_STATUS_OK);
  for (int i = 0; i < 3; ++i)
    fprintf(stderr, "[timing] rounds, candidate %d (%zu bytes): %s median %.2f us (min %.2f max %.2f), %d launches, "
                    "%d samples %s\n",
            i, c[i].bytes, w4a16_status_name(r[i].status), r[i].median_us, r[i].min_us, r[i].max_us, r[i].launches,
            r[i].samples, r[i].message);
  assert_int_equal(r[1].status, W4A16_STATUS_NOT_SUPPORTED);
  assert_non_null(strstr(r[1].message, "deliberate failure"));
  assert_int_equal(r[1].samples, 0);
  for (int i = 0; i < 3; i += 2) {
    assert_int_equal(r[i].status, W4A16_STATUS_OK);
    assert_int_equal(r[i].samples, 7);
    assert_int_equal(r[i].copies, i == 2 ? 2 : copies);
    assert_true(r[i].launches >= r[i].copies && r[i].launches % r[i].copies == 0);
    assert_true(r[i].min_us > 0 && r[i].min_us <= r[i].median_us && r[i].median_us <= r[i].max_us);
    assert_string_equal(r[i].message, "");
  }
  assert_true(r[2].median_us < 0.8 * r[0].median_us); /* half the bytes */
  assert_true(c[2].bytes / (r[2].median_us * 1e-6) / 1e9 < 20000.0);

  cudaStreamDestroy(s);
  cudaFree(buf);
}

/* w4a16_timing_data_time_with: a W4A16 kernel and an extra candidate on its own buffer (a memset over
   two copies, as a reference library's launch would be) in the same rounds, each result in its slot */
static void test_time_with_extra(void **state) {
  (void)state;
  w4a16_problem p = {16, 4096, 4096, 0, 0, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16, 0, 0};
  w4a16_heuristic_result h[1];
  int nh = 0;
  if (w4a16_heuristic_query(&p, 1, h, &nh) != W4A16_STATUS_OK || nh < 1) {
    fprintf(stderr, "[timing] no kernel for bf16 fgs g128 in this build: %s\n", w4a16_last_error_message());
    return;
  }
  w4a16_timing_data *td = NULL;
  assert_int_equal(w4a16_timing_data_create(&p, 0, 5, &td), W4A16_STATUS_OK);
  const size_t bytes = (size_t)8 << 20;
  char *buf = NULL;
  assert_int_equal(cudaMalloc((void **)&buf, 2 * bytes), cudaSuccess);
  memset_ctx c = {buf, bytes, 0, -1, 0, 0};
  w4a16_timing_candidate extra = {memset_launch, &c, 2, 1};
  w4a16_timing_result r[2];
  w4a16_timing_options o = {2, 5, 0, 0, 0, 0};
  const w4a16_kernel_desc *kd = h[0].kernel;
  /* bad extra arguments: a status and a message, nothing timed */
  assert_int_equal(w4a16_timing_data_time_with(td, &kd, 1, NULL, 1, &o, r), W4A16_STATUS_NULL_POINTER);
  assert_int_equal(w4a16_timing_data_time_with(td, &kd, 1, &extra, -1, &o, r), W4A16_STATUS_INVALID_VALUE);
  assert_non_null(strstr(w4a16_last_error_message(), "-1 extra"));
  assert_int_equal(c.calls, 0);
  assert_int_equal(w4a16_timing_data_time_with(td, &kd, 1, &extra, 1, &o, r), W4A16_STATUS_OK);
  fprintf(stderr, "[timing] with extra: %s %.2f us (%d copies); memset %.2f us (%d copies)\n", kd->name,
          r[0].median_us, r[0].copies, r[1].median_us, r[1].copies);
  assert_int_equal(r[0].status, W4A16_STATUS_OK);
  assert_int_equal(r[1].status, W4A16_STATUS_OK);
  assert_int_equal(r[0].copies, w4a16_timing_data_copies(td));
  assert_int_equal(r[1].copies, 2);
  assert_int_equal(r[0].samples, 5);
  assert_int_equal(r[1].samples, 5);
  assert_true(r[0].median_us > 0 && r[1].median_us > 0);
  w4a16_timing_data_destroy(td);
  cudaFree(buf);
}

static void test_profile_ranked(void **state) {
  (void)state;
  w4a16_problem p = {16, 4096, 4096, 0, 0, 128, W4A16_FINEGRAINED_SCALE_ONLY, W4A16_DTYPE_BF16, 0, 0};
  w4a16_profile_result r[64];
  int n = 0;
  w4a16_profile_options o = {2, 5, 0, 7};
  w4a16_status st = w4a16_profile(&p, &o, r, 64, &n);
  if (st == W4A16_STATUS_NO_KERNEL) {
    fprintf(stderr, "[profile] no kernel for bf16 fgs g128 in this build: %s\n", w4a16_last_error_message());
    assert_int_equal(n, 0);
    return;
  }
  assert_int_equal(st, W4A16_STATUS_OK);
  assert_true(n >= 1);
  for (int i = 0; i < n; ++i) {
    fprintf(stderr, "[profile] %2d %-48s %-28s %9.2f us %8.2f TFLOP/s %8.1f GB/s\n", i + 1, r[i].kernel->name,
            w4a16_status_name(r[i].status), r[i].median_us, r[i].tflops, r[i].gbps);
    assert_non_null(r[i].kernel);
    if (r[i].status == W4A16_STATUS_OK) {
      assert_true(r[i].median_us > 0 && r[i].tflops > 0 && r[i].gbps > 0);
      if (i > 0) {
        assert_int_equal(r[i - 1].status, W4A16_STATUS_OK);
        assert_true(r[i - 1].median_us <= r[i].median_us);
      }
    }
  }
  assert_int_equal(r[0].status, W4A16_STATUS_OK);
  /* requested 1: just the fastest */
  w4a16_profile_result one;
  int n1 = 0;
  assert_int_equal(w4a16_profile(&p, &o, &one, 1, &n1), W4A16_STATUS_OK);
  assert_int_equal(n1, 1);
  assert_int_equal(one.status, W4A16_STATUS_OK);
}

int main(void) {
  const struct CMUnitTest cpu[] = {
      cmocka_unit_test(test_copies),
      cmocka_unit_test(test_bytes_flops),
      cmocka_unit_test(test_profile_bad_args),
      cmocka_unit_test(test_rounds_bad_args),
  };
  int failed = cmocka_run_group_tests_name("timing_cpu", cpu, NULL, NULL);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    fprintf(stderr, "no GPU: the GPU tests of the timing method are skipped\n");
    return failed ? 1 : 77;
  }
  const struct CMUnitTest gpu[] = {
      cmocka_unit_test(test_time_memset),
      cmocka_unit_test(test_time_rounds),
      cmocka_unit_test(test_time_eager),
      cmocka_unit_test(test_time_with_extra),
      cmocka_unit_test(test_profile_ranked),
  };
  failed += cmocka_run_group_tests_name("timing_gpu", gpu, NULL, NULL);
  return failed ? 1 : 0;
}
