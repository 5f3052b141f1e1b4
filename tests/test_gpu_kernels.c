/* test_gpu_kernels.c - every registered instantiation against the float64 CPU reference.
 *
 * Cases: both dtypes x every mode and group size (32, 64, 128, 256, per-column) x M in
 * {1..8, 11, 16, 17, 127, 1000}, fresh random data each run (never zeros), padded lda / ldd,
 * bias on and off, random alpha. D is poisoned (NaN bits) before every launch; every element
 * of D must be written and nothing past column N of a row, or past the last row, may change.
 * Tolerance ||D - ref|| / ||ref||: < 2e-3 fp16, < 1e-2 bf16, no NaN (DESIGN.md section 6).
 * One cmocka test per kernel; the data and the reference of a case are shared by all kernels.
 * W4A16_TEST_FILTER='pattern' (fnmatch) limits the kernels. Skips cleanly without a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <fnmatch.h>

#include "test_util.h"

#define CUDA_OK(x)                                                                                  \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));           \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

typedef struct kernel_result {
  const w4a16_kernel_desc *kernel;
  int runnable; /* passes the architecture guard on this device */
  int cases;
  int failures;
  double worst;
  char first_failure[512];
} kernel_result;

static kernel_result *g_results;
static size_t g_count;
static int g_have_gpu;

static int gpu_present(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return e == cudaSuccess && count > 0;
}

static const uint16_t kPoison = 0xFFFF; /* NaN in fp16 and bf16 */

typedef struct gpu_case {
  w4a16_problem p;
  float alpha;
} gpu_case;

static void run_case(test_rng *r, const gpu_case *c, void **ws, size_t *ws_bytes) {
  const w4a16_problem *p = &c->p;
  const int64_t m = p->m, n = p->n, k = p->k, lda = p->lda, ldd = p->ldd;
  const int64_t g = p->mode == W4A16_PER_COLUMN_SCALE_ONLY ? k : p->group_size, groups = k / g;
  /* is any kernel interested? (skip the reference otherwise) */
  int wanted = 0;
  for (size_t i = 0; i < g_count; ++i)
    if (g_results[i].runnable && w4a16_can_implement(g_results[i].kernel, p) == W4A16_STATUS_OK) wanted = 1;
  if (!wanted) return;

  uint16_t *a = malloc(sizeof(uint16_t) * (size_t)(m * lda));
  uint8_t *codes = malloc((size_t)(n * k));
  uint16_t *s = malloc(sizeof(uint16_t) * (size_t)(groups * n)), *z = malloc(sizeof(uint16_t) * (size_t)(groups * n));
  uint16_t *bias = malloc(sizeof(uint16_t) * (size_t)n);
  size_t packed_bytes;
  assert_int_equal(w4a16_packed_size(n, k, &packed_bytes), W4A16_STATUS_OK);
  uint8_t *packed = malloc(packed_bytes);
  const size_t d_elems = (size_t)(m * ldd) + 64; /* + a guard past the last row */
  uint16_t *d = malloc(sizeof(uint16_t) * d_elems);
  double *ref = malloc(sizeof(double) * (size_t)(m * n)), *got = malloc(sizeof(double) * (size_t)(m * n));
  for (int64_t i = 0; i < m * lda; ++i) a[i] = test_to_dtype((float)test_rng_uniform(r, -1, 1), p->dtype);
  for (int64_t i = 0; i < n * k; ++i) codes[i] = (uint8_t)(test_rng_next(r) & 15u);
  for (int64_t i = 0; i < groups * n; ++i) {
    s[i] = test_to_dtype((float)test_rng_uniform(r, 0.004, 0.03), p->dtype);
    z[i] = test_to_dtype((float)test_rng_uniform(r, -0.12, 0.02), p->dtype);
  }
  for (int64_t i = 0; i < n; ++i) bias[i] = test_to_dtype((float)test_rng_uniform(r, -0.5, 0.5), p->dtype);
  assert_int_equal(w4a16_pack_weights(codes, n, k, packed), W4A16_STATUS_OK);
  assert_int_equal(w4a16_reference_gemm(p, a, codes, s, z, p->has_bias ? bias : NULL, c->alpha, ref), W4A16_STATUS_OK);

  void *da, *dw, *ds, *dz, *db, *dd;
  CUDA_OK(cudaMalloc(&da, sizeof(uint16_t) * (size_t)(m * lda)));
  CUDA_OK(cudaMalloc(&dw, packed_bytes));
  CUDA_OK(cudaMalloc(&ds, sizeof(uint16_t) * (size_t)(groups * n)));
  CUDA_OK(cudaMalloc(&dz, sizeof(uint16_t) * (size_t)(groups * n)));
  CUDA_OK(cudaMalloc(&db, sizeof(uint16_t) * (size_t)n));
  CUDA_OK(cudaMalloc(&dd, sizeof(uint16_t) * d_elems));
  CUDA_OK(cudaMemcpy(da, a, sizeof(uint16_t) * (size_t)(m * lda), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dw, packed, packed_bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(ds, s, sizeof(uint16_t) * (size_t)(groups * n), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dz, z, sizeof(uint16_t) * (size_t)(groups * n), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(db, bias, sizeof(uint16_t) * (size_t)n, cudaMemcpyHostToDevice));

  w4a16_gemm_args args = {.problem = *p, .a = da, .w = dw, .scales = ds,
                          .zeros = p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? dz : NULL,
                          .bias = p->has_bias ? db : NULL, .d = dd, .alpha = c->alpha};
  const double tol = p->dtype == W4A16_DTYPE_F16 ? 2e-3 : 1e-2;
  for (size_t i = 0; i < g_count; ++i) {
    kernel_result *kr = &g_results[i];
    if (!kr->runnable || w4a16_can_implement(kr->kernel, p) != W4A16_STATUS_OK) continue;
    size_t need = 0;
    assert_int_equal(w4a16_workspace_size(kr->kernel, p, 0, &need), W4A16_STATUS_OK);
    if (need > *ws_bytes) {
      if (*ws) CUDA_OK(cudaFree(*ws));
      CUDA_OK(cudaMalloc(ws, need));
      *ws_bytes = need;
    }
    CUDA_OK(cudaMemset(dd, 0xFF, sizeof(uint16_t) * d_elems));
    if (need > 0) { /* too small a workspace: refused, nothing written */
      w4a16_status st = w4a16_gemm(&args, kr->kernel, *ws, need - 1, NULL);
      assert_int_equal(st, W4A16_STATUS_WORKSPACE_TOO_SMALL);
    }
    w4a16_status st = w4a16_gemm(&args, kr->kernel, *ws, *ws_bytes, NULL);
    char desc[200];
    snprintf(desc, sizeof desc, "M=%lld N=%lld K=%lld lda=%lld ldd=%lld group=%lld bias=%d alpha=%.3f",
             (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldd, (long long)g, p->has_bias,
             c->alpha);
    kr->cases++;
    if (st != W4A16_STATUS_OK) {
      if (!kr->failures++)
        snprintf(kr->first_failure, sizeof kr->first_failure, "%s: %s: %s", desc, w4a16_status_name(st),
                 w4a16_last_error_message());
      continue;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      fprintf(stderr, "FATAL: kernel %s failed on %s: %s\n", kr->kernel->name, desc, cudaGetErrorString(e));
      exit(1);
    }
    CUDA_OK(cudaMemcpy(d, dd, sizeof(uint16_t) * d_elems, cudaMemcpyDeviceToHost));
    int outside = 0;
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) got[row * n + col] = test_from_dtype(d[row * ldd + col], p->dtype);
      for (int64_t col = n; col < ldd; ++col) outside |= d[row * ldd + col] != kPoison;
    }
    for (size_t j = (size_t)(m * ldd); j < d_elems; ++j) outside |= d[j] != kPoison;
    const double err = test_rel_error(got, ref, (size_t)(m * n));
    if (err > kr->worst || err != err) kr->worst = err;
    if (!(err < tol) || outside) {
      if (!kr->failures++)
        snprintf(kr->first_failure, sizeof kr->first_failure, "%s: rel error %.3g (tol %.1g)%s", desc, err, tol,
                 outside ? ", wrote outside D" : "");
    }
  }
  cudaFree(da); cudaFree(dw); cudaFree(ds); cudaFree(dz); cudaFree(db); cudaFree(dd);
  free(a); free(codes); free(s); free(z); free(bias); free(packed); free(d); free(ref); free(got);
}

static int group_setup(void **state) {
  (void)state;
  g_have_gpu = gpu_present();
  if (!g_have_gpu) return 0;
  const char *filter = getenv("W4A16_TEST_FILTER");
  g_results = calloc(w4a16_kernel_count(), sizeof *g_results);
  int cc_major = 0, cc_minor = 0, dev = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_OK(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
  const int cc = cc_major * 10 + cc_minor;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (filter && fnmatch(filter, k->name, 0) != 0) continue;
    kernel_result *kr = &g_results[g_count++];
    kr->kernel = k;
    kr->runnable = cc >= k->sm_min && cc <= k->sm_max;
  }
  test_rng r = test_rng_fresh("gpu_kernels");
  void *ws = NULL;
  size_t ws_bytes = 0;
  const int all_ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 127, 1000}, quick_ms[] = {3, 17};
  const int all_groups[] = {32, 64, 128, 256}, quick_groups[] = {128};
  /* W4A16_TEST_QUICK: a few cases per kernel (for compute-sanitizer runs) */
  const int quick = getenv("W4A16_TEST_QUICK") != NULL;
  const int *ms = quick ? quick_ms : all_ms, *groups = quick ? quick_groups : all_groups;
  const size_t n_ms = quick ? 2 : sizeof all_ms / sizeof all_ms[0];
  const int n_groups = quick ? 1 : 4;
  int index = 0;
  for (int dt = 0; dt < 2; ++dt)
    for (int mode = 0; mode < 3; ++mode)
      for (int gi = 0; gi < (mode == 0 ? 1 : n_groups); ++gi)
        for (size_t mi = 0; mi < n_ms; ++mi, ++index) {
          const int m = ms[mi];
          /* small M: a long K over few output tiles (exercises split-K, and wraps the
             shared-memory ring of the GEMV TMA kernels: 4 stages of K = 2048 or more), N
             alternating 256 / 512 (the 2x1x1 / 2x2x1 clusters of 256-row sm90 tiles cover 512
             rows: with N = 256 only they never met a small M); large M: wider N */
          const int n = m <= 17 ? (index % 2 ? 512 : 256) : 512, k = m <= 17 ? 8192 : 1024;
          gpu_case c;
          c.p = test_problem(m, n, k, mode == 0 ? 0 : groups[gi], (w4a16_quant_mode)mode, (w4a16_dtype)dt);
          c.p.lda = k + 8 * (index % 2);
          c.p.ldd = n + 8;
          c.p.has_bias = index % 3 == 0;
          c.alpha = (float)test_rng_uniform(&r, 0.5, 1.5);
          fprintf(stderr, "\rcase %d: %s %s group %d M=%d      ", index, w4a16_dtype_name(c.p.dtype),
                  w4a16_quant_mode_name(c.p.mode), c.p.group_size, m);
          run_case(&r, &c, &ws, &ws_bytes);
        }
  fprintf(stderr, "\n");
  if (ws) cudaFree(ws);
  return 0;
}

static void test_kernel(void **state) {
  kernel_result *kr = *state;
  if (!g_have_gpu) skip();
  if (!kr->runnable) {
    fprintf(stderr, "%s: built for %s, not this device\n", kr->kernel->name, kr->kernel->arch);
    skip();
  }
  fprintf(stderr, "%-56s cases %3d  worst rel error %.3g\n", kr->kernel->name, kr->cases, kr->worst);
  if (kr->cases == 0) {
    fprintf(stderr, "%s: no test case exercised this kernel\n", kr->kernel->name);
    fail();
  }
  if (kr->failures) {
    fprintf(stderr, "%s: %d of %d cases failed; first: %s\n", kr->kernel->name, kr->failures, kr->cases,
            kr->first_failure);
    fail();
  }
}

static void test_no_gpu(void **state) {
  (void)state;
  if (!g_have_gpu) skip();
}

int main(void) {
  group_setup(NULL);
  if (!g_have_gpu) {
    const struct CMUnitTest none[] = {cmocka_unit_test(test_no_gpu)};
    fprintf(stderr, "no CUDA device: GPU kernel tests skipped\n");
    return cmocka_run_group_tests_name("gpu_kernels", none, NULL, NULL);
  }
  struct CMUnitTest *tests = calloc(g_count ? g_count : 1, sizeof *tests);
  for (size_t i = 0; i < g_count; ++i) {
    tests[i].name = g_results[i].kernel->name;
    tests[i].test_func = test_kernel;
    tests[i].initial_state = &g_results[i];
  }
  if (!g_count) {
    fprintf(stderr, "no kernel matches W4A16_TEST_FILTER\n");
    return 1;
  }
  return _cmocka_run_group_tests("gpu_kernels", tests, g_count, NULL, NULL);
}
