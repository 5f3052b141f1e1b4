/* test_gpu_kernels.c - every registered instantiation against the float64 CPU reference.
 *
 * Cases: both dtypes x every mode and group size (32, 64, 128, 256, per-column) x M in
 * {1..17, 64, 127, 256, 1000} (and per-column zero points at the GEMV sizes, M = 1, 5, 8, 16 with
 * K = 6144; per-column integer zero points, gpu_case.zeros, at M = 3, 17, 100), fresh random data
 * each run (never zeros but in gpu_case.zeros 2's scale-0 column; scales of either sign),
 * padded lda / ldd, bias on and off, random alpha. D is poisoned (NaN bits) before every launch and
 * the workspace filled with garbage; every element of D must be written and nothing past column N
 * of a row, or past the last row, may change. Tolerance: ||D - ref|| / ||ref|| < 2e-3 fp16,
 * < 1e-2 bf16, no NaN (docs/DESIGN.md, "Tests"), and no element off by more than ELEM_TOL units of
 * its dtype's precision relative to |ref| + rms(ref) (test_elem_error).
 * Every kernel x case: can_implement's status is the one the kernel's descriptor implies
 * (expected_status: dtype, mode, N and K blocks, smallest group, a GEMV's M), so that no case is
 * skipped by a wrong refusal; and every kernel runs every group size of its mode that it claims
 * (sm90: 64, 128, 256 at least, issue 3; 32 where the tile allows), the GEMV family as a whole
 * every dtype x mode x group size x M = 1..16 (test_gemv_coverage; in the default set and the full
 * space, not in a build filtered by W4A16_KERNELS / W4A16_EXCLUDE_KERNELS).
 * One cmocka test per kernel; the data and the reference of a case are shared by all kernels.
 * W4A16_TEST_FILTER='pattern' (fnmatch) limits the kernels; W4A16_TEST_TRACE prints each launch before it
 * runs. Exits 77 (ctest: skipped) without a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <fnmatch.h>

#include "test_cuda_util.h"
#include "test_util.h"
#include "w4a16_build_config.h"


/* group size slots: 32, 64, 128, 256, per-column */
enum { N_GROUP_SLOTS = 5 };
static int group_slot(const w4a16_problem *p) {
  if (p->mode == W4A16_PER_COLUMN_SCALE_ONLY || p->group_size == 0 || p->group_size == p->k) return 4;
  return p->group_size == 32 ? 0 : p->group_size == 64 ? 1 : p->group_size == 128 ? 2 : 3;
}
static const int kSlotGroup[N_GROUP_SLOTS] = {32, 64, 128, 256, 0};

typedef struct kernel_result {
  const w4a16_kernel_desc *kernel;
  int runnable; /* passes the architecture guard on this device */
  int cases;
  int failures;
  int ran[N_GROUP_SLOTS]; /* cases run, by group size */
  double worst, worst_elem;
  char first_failure[512];
} kernel_result;

/* GEMV coverage of the family: [dtype][mode][group slot][M - 1] cases run by any GEMV kernel */
static int g_gemv_ran[2][3][N_GROUP_SLOTS][16];
static int g_gemv_built[2][3]; /* GEMV kernels of that dtype x mode runnable here */

/* largest elementwise error, in units of the dtype's precision (2^-11 fp16, 2^-8 bf16) */
#define ELEM_TOL 16.0

static kernel_result *g_results;
static size_t g_count;
static int g_have_gpu;
static int g_trace; /* W4A16_TEST_TRACE: each launch's kernel and case on stderr before it runs */

static int gpu_present(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return e == cudaSuccess && count > 0;
}

static const uint16_t kPoison = 0xFFFF; /* NaN in fp16 and bf16 */

/* The status can_implement must give for kernel kd and a valid problem p, from the descriptor alone
   (w4a16.h: the first violated rule): another dtype or mode; N not a whole number of the kernel's
   N blocks (tile_n x cluster_n, or n_multiple where it takes a part-full last tile) or K of k-blocks
   (tile_k, or k_multiple); a fine-grained group below the kernel's smallest;
   a GEMV kernel's M above its tile_m. */
static w4a16_status expected_status(const w4a16_kernel_desc *kd, const w4a16_problem *p) {
  if (kd->dtype != p->dtype) return W4A16_STATUS_DTYPE_MISMATCH;
  if (kd->mode != p->mode) return W4A16_STATUS_MODE_MISMATCH;
  const int64_t n_block = kd->n_multiple > 0 ? kd->n_multiple : (int64_t)kd->tile_n * (kd->cluster_n > 1 ? kd->cluster_n : 1);
  if (p->n % n_block != 0) return W4A16_STATUS_NOT_SUPPORTED;
  if (p->k % (kd->k_multiple > 0 ? kd->k_multiple : kd->tile_k) != 0) return W4A16_STATUS_NOT_SUPPORTED;
  if (p->mode != W4A16_PER_COLUMN_SCALE_ONLY && p->group_size < kd->min_group) return W4A16_STATUS_UNSUPPORTED_GROUP_SIZE;
  if (kd->family == W4A16_FAMILY_GEMV && p->m > kd->tile_m) return W4A16_STATUS_NOT_SUPPORTED;
  return W4A16_STATUS_OK;
}

static void note_failure(kernel_result *kr, const char *fmt, ...) {
  if (kr->failures++) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kr->first_failure, sizeof kr->first_failure, fmt, ap);
  va_end(ap);
}

typedef struct gpu_case {
  w4a16_problem p;
  float alpha;
  /* zero points (FINEGRAINED_SCALE_AND_ZEROS): 0 random floats; 1 integer zero points z = -s zq, zq in
     0..15, rounded to the dtype (the checkpoints' kind; per column, the sm90 mainloop's integer-offset
     codes); 2 the same but for one float zero (column 5) and one column of scale 0 (column 21, w = z),
     whose tiles take the general zero-point conversion */
  int zeros;
} gpu_case;

/* A case of problem p with the strides, bias and alpha the case loops share: lda padded on odd
   indices, ldd by 8, a bias every bias_every-th index, alpha random in [0.5, 1.5) */
static gpu_case padded_case(test_rng *r, w4a16_problem p, int index, int bias_every) {
  gpu_case c = {0};
  c.p = p;
  c.p.lda = p.k + 8 * (index % 2);
  c.p.ldd = p.n + 8;
  c.p.has_bias = index % bias_every == 0;
  c.alpha = (float)test_rng_uniform(r, 0.5, 1.5);
  return c;
}

static void run_case(test_rng *r, const gpu_case *c, void **ws, size_t *ws_bytes) {
  const w4a16_problem *p = &c->p;
  const int64_t m = p->m, n = p->n, k = p->k, lda = p->lda, ldd = p->ldd;
  const int64_t g = p->mode == W4A16_PER_COLUMN_SCALE_ONLY || p->group_size == 0 ? k : p->group_size, groups = k / g;
  char desc[200];
  snprintf(desc, sizeof desc, "%s %s M=%lld N=%lld K=%lld lda=%lld ldd=%lld group=%lld bias=%d alpha=%.3f zeros=%d",
           w4a16_dtype_name(p->dtype), w4a16_quant_mode_name(p->mode), (long long)m, (long long)n, (long long)k,
           (long long)lda, (long long)ldd, (long long)g, p->has_bias, c->alpha, c->zeros);
  /* every kernel's verdict on the case, against the one its descriptor implies; is any kernel
     interested? (skip the reference otherwise) */
  int wanted = 0;
  for (size_t i = 0; i < g_count; ++i) {
    kernel_result *kr = &g_results[i];
    const w4a16_status st = w4a16_can_implement(kr->kernel, p), want = expected_status(kr->kernel, p);
    if (st != want)
      note_failure(kr, "%s: can_implement gave %s, the descriptor implies %s (%s)", desc, w4a16_status_name(st),
                   w4a16_status_name(want), w4a16_last_error_message());
    if (kr->runnable && st == W4A16_STATUS_OK) wanted = 1;
  }
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
    s[i] = test_to_dtype(test_scale(r), p->dtype);
    z[i] = test_to_dtype((float)test_rng_uniform(r, -0.12, 0.02), p->dtype);
    if (c->zeros != 0) z[i] = test_integer_zero(r, s[i], p->dtype);
  }
  if (c->zeros == 2 && n > 21) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      z[gi * n + 5] = test_to_dtype(-0.0123f, p->dtype);
      s[gi * n + 21] = test_to_dtype(0.0f, p->dtype);
      z[gi * n + 21] = test_to_dtype(0.25f, p->dtype);
    }
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
  const double elem_tol = ELEM_TOL * (p->dtype == W4A16_DTYPE_F16 ? 1.0 / 2048 : 1.0 / 256);
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
    /* garbage in the workspace (its contents before a call must not matter) */
    if (*ws) CUDA_OK(cudaMemset(*ws, (int)(0x5A ^ (kr->cases * 0x3B)) & 0xFF, *ws_bytes));
    if (need > 0) { /* too small a workspace: refused, nothing written */
      w4a16_status st = w4a16_gemm(&args, kr->kernel, *ws, need - 1, NULL);
      assert_int_equal(st, W4A16_STATUS_WORKSPACE_TOO_SMALL);
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaMemcpy(d, dd, sizeof(uint16_t) * d_elems, cudaMemcpyDeviceToHost));
      for (size_t j = 0; j < d_elems; ++j)
        if (d[j] != kPoison) {
          note_failure(kr, "%s: a refused call (workspace too small) wrote D[%zu]", desc, j);
          break;
        }
    }
    if (g_trace) {
      fprintf(stderr, "run %s on %s\n", kr->kernel->name, desc);
      fflush(stderr);
    }
    w4a16_status st = w4a16_gemm(&args, kr->kernel, *ws, *ws_bytes, NULL);
    kr->cases++;
    if (st != W4A16_STATUS_OK) {
      note_failure(kr, "%s: %s: %s", desc, w4a16_status_name(st), w4a16_last_error_message());
      continue;
    }
    kr->ran[group_slot(p)]++;
    if (kr->kernel->family == W4A16_FAMILY_GEMV && m <= 16) g_gemv_ran[p->dtype][p->mode][group_slot(p)][m - 1]++;
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
    const double err = test_rel_error(got, ref, (size_t)(m * n)), elem = test_elem_error(got, ref, (size_t)(m * n));
    if (err > kr->worst || err != err) kr->worst = err;
    if (elem > kr->worst_elem || elem != elem) kr->worst_elem = elem;
    if (!(err < tol) || !(elem < elem_tol) || outside)
      note_failure(kr, "%s: rel error %.3g (tol %.1g), elementwise %.3g (tol %.2g)%s", desc, err, tol, elem, elem_tol,
                   outside ? ", wrote outside D" : "");
  }
  cudaFree(da); cudaFree(dw); cudaFree(ds); cudaFree(dz); cudaFree(db); cudaFree(dd);
  free(a); free(codes); free(s); free(z); free(bias); free(packed); free(d); free(ref); free(got);
}

static int group_setup(void **state) {
  (void)state;
  g_have_gpu = gpu_present();
  if (!g_have_gpu) return 0;
  const char *filter = getenv("W4A16_TEST_FILTER");
  g_trace = getenv("W4A16_TEST_TRACE") != NULL;
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
    if (kr->runnable && k->family == W4A16_FAMILY_GEMV) g_gemv_built[k->dtype][k->mode]++;
  }
  test_rng r = test_rng_fresh("gpu_kernels");
  void *ws = NULL;
  size_t ws_bytes = 0;
  const int all_ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 64, 127, 256, 1000},
            quick_ms[] = {3, 17};
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
          gpu_case c = padded_case(
              &r, test_problem(m, n, k, mode == 0 ? 0 : groups[gi], (w4a16_quant_mode)mode, (w4a16_dtype)dt), index, 3);
          fprintf(stderr, "\rcase %d: %s %s group %d M=%d      ", index, w4a16_dtype_name(c.p.dtype),
                  w4a16_quant_mode_name(c.p.mode), c.p.group_size, m);
          run_case(&r, &c, &ws, &ws_bytes);
        }
  /* N and K tails (kernels with n_multiple / k_multiple: the last row tile part-full, N = 13 x 16;
     the last K tile too, K = 9 x 64), and per-column zero points (group K, not a power of two: on
     the tail kernels at K = 576, on every family at N = 512, K = 1536, and scale-only so too) */
  const int tail_ms[] = {3, 17, 100};
  for (int dt = 0; dt < 2; ++dt)
    for (int v = 0; v < 6; ++v)
      for (int mi = 0; mi < (quick ? 1 : 3); ++mi, ++index) {
        const int m = tail_ms[mi], n = v >= 4 ? 512 : 208, k = v >= 4 ? 1536 : 576;
        const w4a16_quant_mode mode = v == 0              ? W4A16_PER_COLUMN_SCALE_ONLY
                                      : v == 1 || v == 5 ? W4A16_FINEGRAINED_SCALE_ONLY
                                                         : W4A16_FINEGRAINED_SCALE_AND_ZEROS;
        const int group = v == 0 ? 0 : v >= 3 ? k : 64;
        gpu_case c = padded_case(&r, test_problem(m, n, k, group, mode, (w4a16_dtype)dt), index, 2);
        fprintf(stderr, "\rtail case %d: %s %s group %d M=%d      ", index, w4a16_dtype_name(c.p.dtype),
                w4a16_quant_mode_name(c.p.mode), c.p.group_size, m);
        run_case(&r, &c, &ws, &ws_bytes);
      }
  /* per-column integer zero points (gpu_case.zeros 1 and 2: every zero an integer code offset, and all
     but a float zero and a column of scale 0) on the tail kernels at N = 208, K = 576 and on every
     family at N = 512, K = 1536 */
  for (int dt = 0; dt < 2; ++dt)
    for (int v = 0; v < 4; ++v)
      for (int mi = 0; mi < (quick ? 1 : 3); ++mi, ++index) {
        const int m = tail_ms[mi], n = v & 1 ? 512 : 208, k = v & 1 ? 1536 : 576;
        gpu_case c =
            padded_case(&r, test_problem(m, n, k, k, W4A16_FINEGRAINED_SCALE_AND_ZEROS, (w4a16_dtype)dt), index, 2);
        c.zeros = 1 + (v >> 1);
        fprintf(stderr, "\rinteger zero-point case %d: %s kind %d M=%d      ", index, w4a16_dtype_name(c.p.dtype),
                c.zeros, m);
        run_case(&r, &c, &ws, &ws_bytes);
      }
  /* per-column zero points at decode sizes (one scale and zero row through the GEMV kernels' consumers):
     M = 1 (the TMA GEMV's one-token form), 5, 8 (one n8 token block) and 16 (two), K = 6144 (a multiple
     of every GEMV tile_k, not a power of two), N = 512 */
  const int pcz_ms[] = {1, 5, 8, 16};
  for (int dt = 0; dt < 2; ++dt)
    for (int mi = 0; mi < (quick ? 1 : 4); ++mi, ++index) {
      const int m = pcz_ms[mi], n = 512, k = 6144;
      gpu_case c =
          padded_case(&r, test_problem(m, n, k, k, W4A16_FINEGRAINED_SCALE_AND_ZEROS, (w4a16_dtype)dt), index, 2);
      fprintf(stderr, "\rper-column zero-point case %d: %s M=%d      ", index, w4a16_dtype_name(c.p.dtype), m);
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
  fprintf(stderr, "%-56s cases %3d  worst rel error %.3g, elementwise %.3g\n", kr->kernel->name, kr->cases,
          kr->worst, kr->worst_elem);
  if (kr->cases == 0) {
    fprintf(stderr, "%s: no test case exercised this kernel\n", kr->kernel->name);
    fail();
  }
  /* every group size of its mode that the kernel claims ran (W4A16_TEST_QUICK: group 128 only); an
     sm90 kernel claims 64 and up (issue 3: 64, 128, 256 on every instantiation, 32 where the tile
     allows) */
  const w4a16_kernel_desc *kd = kr->kernel;
  if (kd->family == W4A16_FAMILY_SM90 && kd->min_group > 64) {
    fprintf(stderr, "%s: smallest group %d: the sm90 family must run groups of 64\n", kd->name, kd->min_group);
    fail();
  }
  const int quick = getenv("W4A16_TEST_QUICK") != NULL;
  for (int sl = 0; sl < N_GROUP_SLOTS; ++sl) {
    const int is_pc = sl == 4, claims = kd->mode == W4A16_PER_COLUMN_SCALE_ONLY ? is_pc : !is_pc && kSlotGroup[sl] >= kd->min_group;
    if (claims && !kr->ran[sl] && (!quick || is_pc || kSlotGroup[sl] == 128)) {
      fprintf(stderr, "%s: no case of group %d (0: per-column) ran\n", kd->name, kSlotGroup[sl]);
      fail();
    }
  }
  if (kr->failures) {
    fprintf(stderr, "%s: %d of %d cases failed; first: %s\n", kr->kernel->name, kr->failures, kr->cases,
            kr->first_failure);
    fail();
  }
}

/* The GEMV family as a whole (issue 4): for every dtype x mode it is built for, every group size
   of the mode ran at every M = 1..16 on some GEMV kernel (an instantiation may refuse the small
   groups: its smallest group, checked against can_implement above) */
static void test_gemv_coverage(void **state) {
  (void)state;
  if (getenv("W4A16_TEST_FILTER") || getenv("W4A16_TEST_QUICK")) skip(); /* a subset of kernels or cases */
  if (!W4A16_KERNEL_SET_COMPLETE) { /* built with a W4A16_KERNELS / W4A16_EXCLUDE_KERNELS filter */
    fprintf(stderr, "a filtered kernel set need not cover M = 1..16: coverage not checked\n");
    skip();
  }
  int checked = 0;
  for (int dt = 0; dt < 2; ++dt)
    for (int mode = 0; mode < 3; ++mode) {
      if (!g_gemv_built[dt][mode]) continue;
      for (int sl = 0; sl < N_GROUP_SLOTS; ++sl) {
        if ((mode == W4A16_PER_COLUMN_SCALE_ONLY) != (sl == 4)) continue;
        for (int m = 1; m <= 16; ++m) {
          ++checked;
          if (!g_gemv_ran[dt][mode][sl][m - 1])
            fail_msg("no GEMV kernel ran %s %s group %d at M = %d", w4a16_dtype_name((w4a16_dtype)dt),
                     w4a16_quant_mode_name((w4a16_quant_mode)mode), kSlotGroup[sl], m);
        }
      }
    }
  if (!checked) skip();
}

int main(void) {
  group_setup(NULL);
  if (!g_have_gpu) {
    fprintf(stderr, "no CUDA device: GPU kernel tests skipped\n");
    return 77; /* ctest: SKIP_RETURN_CODE */
  }
  if (!g_count) {
    fprintf(stderr, "no kernel matches W4A16_TEST_FILTER\n");
    return 1;
  }
  struct CMUnitTest *tests = calloc(g_count + 1, sizeof *tests);
  for (size_t i = 0; i < g_count; ++i) {
    tests[i].name = g_results[i].kernel->name;
    tests[i].test_func = test_kernel;
    tests[i].initial_state = &g_results[i];
  }
  tests[g_count].name = "gemv_family_coverage";
  tests[g_count].test_func = test_gemv_coverage;
  return _cmocka_run_group_tests("gpu_kernels", tests, g_count + 1, NULL, NULL);
}
