/* test_gpu_gemv.c - GPU tests of the decode path (the GEMV family, and the sm90 family's split-K,
 * which decode-sized problems use), beyond test_gpu_kernels:
 *   split-K determinism   every kernel that may split K (all families), on a shape where the runtime
 *                         splits: three launches (the workspace refilled with other garbage
 *                         between them: its contents before a call must not matter) give the
 *                         same bits
 *   graph capture         a launch captured in a CUDA graph and replayed three times (D poisoned
 *                         before each replay, so a replay that writes nothing fails) gives the
 *                         same bits as a direct launch (no allocation, no synchronization on the
 *                         call path)
 *   long K                Llama-sized K (14336) against the float64 reference, M = 1 and tile_m,
 *                         one CTA row of N (tile_n); zero points in groups of 128 and per column
 *   per-column zeros      zero points per column: float ones with columns where -z / s is no finite
 *                         value of the dtype (s = 0, a tiny s), integer ones (z = -s zq), and integer
 *                         ones but for one float zero; every zero-point GEMV kernel, each consumer
 *   TMA launch plan       every TMA GEMV kernel on fewer units than SMs whose weights go out before
 *                         the wait: the whole shared-memory carveout, the grid padded to a whole
 *                         number of CTAs per SM, and the result against the reference
 *   stream-K              every sm90 kernel on a problem of about 1.3 waves of tiles (the runtime
 *                         takes stream-K) against the float64 reference of sampled columns (the
 *                         first and last of every tile among them), and the same bits over two
 *                         differently garbage-filled workspaces, with groups of 128 and where
 *                         they differ in kind, of 256 (a part may begin inside a group) and 32;
 *                         the same at about 2.4 waves (the tiles of >= 64 tokens run two waves of
 *                         them tile by tile first) and at a sixth of a wave (many contributors)
 *   launch order          every kernel (all families), two launches back to back on one stream,
 *                         the second reading the first's D as its A and sharing its workspace:
 *                         the same bits as with the host waiting between them (the kernels may
 *                         start before the one before ends, w4a16.h "Ordering")
 *   unsplit GEMV          the GEMV kernels that may split K, on a wave of row blocks where the
 *                         runtime does not: its direct store, against the reference
 *   selected workspace    kernel NULL: w4a16_workspace_size sizes the selected kernel's workspace,
 *                         and w4a16_gemm runs correctly with it and with none
 *   threads               six host threads, released together, each running its own problem (two of
 *                         them the same one) through kernel NULL on its own stream: the first calls
 *                         of the process (selection, device and probe records, function attributes)
 *                         race, and every result matches the reference (first in the binary)
 *   act-order             every GEMV kernel and the selection with a column permutation (a_perm):
 *                         the reference of A[:, perm]; the row gathered in the TMA kernel at M = 1
 *                         (the workspace untouched) or into the workspace; a bad index gives NaN
 *   context reset         every kernel (all families) against the reference before and after
 *                         cudaDeviceReset, and the TMA launch plan after it (the function attributes
 *                         are set once per context)
 * W4A16_TEST_FILTER='pattern' (fnmatch) limits the kernels. Exits 77 (ctest: skipped) without a GPU.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <fnmatch.h>
#include <pthread.h>

#include "debug.h"
#include "internal.h" /* w4a16_plan_launch */
#include "w4a16/select.h"
#include "test_util.h"

#define CUDA_OK(x)                                                                                  \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) fail_msg("%s:%d: %s: %s", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
  } while (0)

static int gpu_present(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return e == cudaSuccess && count > 0;
}

static int sm_count(void) {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 0;
  return n;
}

/* GEMV kernels (and, with sm90 = 1, the sm90 family's; sm90 = 2: every family's) that pass the
   filter and run on this device */
static int selected_in(const w4a16_kernel_desc *k, int sm90) {
  const char *filter = getenv("W4A16_TEST_FILTER");
  if (k->family != W4A16_FAMILY_GEMV && !(sm90 && k->family == W4A16_FAMILY_SM90) && sm90 < 2) return 0;
  if (filter && fnmatch(filter, k->name, 0) != 0) return 0;
  int dev = 0, maj = 0, min = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&min, cudaDevAttrComputeCapabilityMinor, dev);
  return maj * 10 + min >= k->sm_min && maj * 10 + min <= k->sm_max;
}
static int selected(const w4a16_kernel_desc *k) { return selected_in(k, 0); }

/* host and device data of one problem (random codes, scales, zeros, bias, A) */
typedef struct gemv_data {
  w4a16_problem p;
  uint16_t *a, *s, *z, *bias;
  uint8_t *codes;
  void *da, *dw, *ds, *dz, *db, *dd;
  size_t d_bytes;
} gemv_data;

static void data_create(gemv_data *g, test_rng *r, const w4a16_problem *p) {
  memset(g, 0, sizeof *g);
  g->p = *p;
  const int64_t m = p->m, n = p->n, k = p->k, lda = p->lda ? p->lda : k, ldd = p->ldd ? p->ldd : n;
  const int64_t groups = p->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 1 : k / p->group_size;
  g->a = malloc(sizeof(uint16_t) * (size_t)(m * lda));
  g->codes = malloc((size_t)(n * k));
  g->s = malloc(sizeof(uint16_t) * (size_t)(groups * n));
  g->z = malloc(sizeof(uint16_t) * (size_t)(groups * n));
  g->bias = malloc(sizeof(uint16_t) * (size_t)n);
  assert_non_null(g->a);
  assert_non_null(g->codes);
  for (int64_t i = 0; i < m * lda; ++i) g->a[i] = test_to_dtype((float)test_rng_uniform(r, -1, 1), p->dtype);
  for (int64_t i = 0; i < n * k; ++i) g->codes[i] = (uint8_t)(test_rng_next(r) & 15u);
  for (int64_t i = 0; i < groups * n; ++i) {
    g->s[i] = test_to_dtype(test_scale(r), p->dtype);
    g->z[i] = test_to_dtype((float)test_rng_uniform(r, -0.12, 0.02), p->dtype);
  }
  for (int64_t i = 0; i < n; ++i) g->bias[i] = test_to_dtype((float)test_rng_uniform(r, -0.5, 0.5), p->dtype);
  size_t packed_bytes = 0;
  assert_int_equal(w4a16_packed_size(n, k, &packed_bytes), W4A16_STATUS_OK);
  uint8_t *packed = malloc(packed_bytes);
  assert_non_null(packed);
  assert_int_equal(w4a16_pack_weights(g->codes, n, k, packed), W4A16_STATUS_OK);
  g->d_bytes = sizeof(uint16_t) * (size_t)(m * ldd);
  CUDA_OK(cudaMalloc(&g->da, sizeof(uint16_t) * (size_t)(m * lda)));
  CUDA_OK(cudaMalloc(&g->dw, packed_bytes));
  CUDA_OK(cudaMalloc(&g->ds, sizeof(uint16_t) * (size_t)(groups * n)));
  CUDA_OK(cudaMalloc(&g->dz, sizeof(uint16_t) * (size_t)(groups * n)));
  CUDA_OK(cudaMalloc(&g->db, sizeof(uint16_t) * (size_t)n));
  CUDA_OK(cudaMalloc(&g->dd, g->d_bytes));
  CUDA_OK(cudaMemcpy(g->da, g->a, sizeof(uint16_t) * (size_t)(m * lda), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(g->dw, packed, packed_bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(g->ds, g->s, sizeof(uint16_t) * (size_t)(groups * n), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(g->dz, g->z, sizeof(uint16_t) * (size_t)(groups * n), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(g->db, g->bias, sizeof(uint16_t) * (size_t)n, cudaMemcpyHostToDevice));
  free(packed);
}

static void data_destroy(gemv_data *g) {
  cudaFree(g->da); cudaFree(g->dw); cudaFree(g->ds); cudaFree(g->dz); cudaFree(g->db); cudaFree(g->dd);
  free(g->a); free(g->codes); free(g->s); free(g->z); free(g->bias);
}

static w4a16_gemm_args data_args(const gemv_data *g, float alpha) {
  w4a16_gemm_args args = {.problem = g->p, .a = g->da, .w = g->dw, .scales = g->ds,
                          .zeros = g->p.mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? g->dz : NULL,
                          .bias = g->p.has_bias ? g->db : NULL, .d = g->dd, .alpha = alpha};
  return args;
}

/* run kernel once on stream; D poisoned first; returns D's bits (malloc'ed) */
static uint16_t *run_bits(const gemv_data *g, const w4a16_kernel_desc *k, void *ws, size_t ws_bytes, int ws_fill) {
  w4a16_gemm_args args = data_args(g, 0.75f);
  CUDA_OK(cudaMemset(g->dd, 0xFF, g->d_bytes));
  if (ws) CUDA_OK(cudaMemset(ws, ws_fill, ws_bytes));
  w4a16_status st = w4a16_gemm(&args, k, ws, ws_bytes, NULL);
  if (st != W4A16_STATUS_OK) fail_msg("%s: %s: %s", k->name, w4a16_status_name(st), w4a16_last_error_message());
  CUDA_OK(cudaDeviceSynchronize());
  uint16_t *out = malloc(g->d_bytes);
  CUDA_OK(cudaMemcpy(out, g->dd, g->d_bytes, cudaMemcpyDeviceToHost));
  return out;
}

static void test_splitk_deterministic(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_splitk");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 2) || k->split_k <= 1) continue;
    const int ms[2] = {1, k->tile_m};
    for (int mi = 0; mi < 2; ++mi) {
      /* few output tiles and a long K: the runtime splits */
      w4a16_problem p = test_problem(ms[mi], 2 * k->tile_n, 4096, k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 64,
                                     k->mode, k->dtype);
      p.has_bias = 1;
      p.ldd = p.n + 8;
      size_t ws_bytes = 0;
      assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
      assert_true(ws_bytes > 0); /* the shape must make the runtime split */
      gemv_data g;
      data_create(&g, &r, &p);
      void *ws = NULL;
      CUDA_OK(cudaMalloc(&ws, ws_bytes));
      uint16_t *one = run_bits(&g, k, ws, ws_bytes, 0x00);
      const int fills[2] = {0x7F, 0xFF};
      for (int f = 0; f < 2; ++f) {
        uint16_t *two = run_bits(&g, k, ws, ws_bytes, fills[f]);
        for (int64_t row = 0; row < p.m; ++row)
          if (memcmp(one + row * p.ldd, two + row * p.ldd, sizeof(uint16_t) * (size_t)p.n) != 0)
            fail_msg("%s: M=%d: split-K result differs between runs (workspace filled with 0x%02X, row %lld)",
                     k->name, ms[mi], fills[f], (long long)row);
        free(two);
      }
      free(one);
      cudaFree(ws);
      data_destroy(&g);
      ++tested;
    }
  }
  if (!tested) skip();
}

/* D's bits d of g's problem (alpha 0.75, no bias) against the float64 reference; fails with who and
   what where the relative error is over the dtype's tolerance */
static void expect_reference(const gemv_data *g, const uint16_t *d, const char *who, const char *what) {
  const w4a16_problem *p = &g->p;
  const size_t count = (size_t)(p->m * p->n);
  double *ref = malloc(sizeof(double) * count), *got = malloc(sizeof(double) * count);
  assert_non_null(ref);
  assert_non_null(got);
  assert_int_equal(w4a16_reference_gemm(p, g->a, g->codes, g->s, g->z, NULL, 0.75f, ref), W4A16_STATUS_OK);
  for (size_t e = 0; e < count; ++e) got[e] = test_from_dtype(d[e], p->dtype);
  const double err = test_rel_error(got, ref, count), tol = p->dtype == W4A16_DTYPE_F16 ? 2e-3 : 1e-2;
  free(ref);
  free(got);
  if (!(err < tol))
    fail_msg("%s: M=%lld N=%lld K=%lld%s: rel error %.3g (tol %.1g)", who, (long long)p->m, (long long)p->n,
             (long long)p->k, what, err, tol);
}

/* g's GEMM with kernel k captured on a new stream (returned) into *graph */
static cudaStream_t capture_gemm(const gemv_data *g, const w4a16_kernel_desc *k, void *ws, size_t ws_bytes,
                                 cudaGraph_t *graph) {
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  w4a16_gemm_args args = data_args(g, 0.75f);
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  w4a16_status st = w4a16_gemm(&args, k, ws, ws_bytes, stream);
  cudaError_t ce = cudaStreamEndCapture(stream, graph);
  if (st != W4A16_STATUS_OK) fail_msg("%s: captured launch: %s: %s", k->name, w4a16_status_name(st), w4a16_last_error_message());
  if (ce != cudaSuccess) fail_msg("%s: capture failed: %s", k->name, cudaGetErrorString(ce));
  return stream;
}

static void test_graph_capture(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_graph");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 1)) continue;
    w4a16_problem p = test_problem(k->tile_m, 2 * k->tile_n, 2048, k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128,
                                   k->mode, k->dtype);
    size_t ws_bytes = 0;
    assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
    gemv_data g;
    data_create(&g, &r, &p);
    void *ws = NULL;
    if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
    uint16_t *direct = run_bits(&g, k, ws, ws_bytes, 0x00);

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStream_t stream = capture_gemm(&g, k, ws, ws_bytes, &graph);
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    uint16_t *replayed = malloc(g.d_bytes);
    for (int rep = 0; rep < 3; ++rep) {
      CUDA_OK(cudaMemsetAsync(g.dd, 0xFF, g.d_bytes, stream));
      CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaStreamSynchronize(stream));
      CUDA_OK(cudaMemcpy(replayed, g.dd, g.d_bytes, cudaMemcpyDeviceToHost));
      if (memcmp(direct, replayed, g.d_bytes) != 0)
        fail_msg("%s: graph replay %d differs from a direct launch", k->name, rep + 1);
    }
    free(direct);
    free(replayed);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    if (ws) cudaFree(ws);
    data_destroy(&g);
    ++tested;
  }
  if (!tested) skip();
}

static void test_long_k(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_long_k");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected(k)) continue;
    /* M = 1 and tile_m; zero points also per column (group = K) at both */
    const int ms[4] = {1, k->tile_m, 1, k->tile_m};
    for (int mi = 0; mi < (k->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? 4 : 2); ++mi) {
      w4a16_problem p = test_problem(ms[mi], k->tile_n, 14336,
                                     k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : mi >= 2 ? 14336 : 128, k->mode,
                                     k->dtype);
      if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
      size_t ws_bytes = 0;
      assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
      gemv_data g;
      data_create(&g, &r, &p);
      void *ws = NULL;
      if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
      uint16_t *d = run_bits(&g, k, ws, ws_bytes, 0x00);
      expect_reference(&g, d, k->name, "");
      free(d);
      if (ws) cudaFree(ws);
      data_destroy(&g);
      ++tested;
    }
  }
  if (!tested) skip();
}

/* One act-order call of g's problem through kernel k (NULL: selection) with permutation perm (host, K)
   and args.flags = flags: D poisoned and the workspace poisoned (0xAB) first; D against the float64
   reference of A's columns gathered on the host, or, with bad (an index of perm outside [0, K)), every
   element of D NaN.
   Returns 1 where the workspace came back untouched (the kernel gathered the row itself). */
static const char *name_of(const w4a16_kernel_desc *k) { return k ? k->name : "kernel NULL"; }

static int run_act_order(gemv_data *g, const w4a16_kernel_desc *k, const int32_t *perm, int bad, unsigned flags,
                         const char *what) {
  const w4a16_problem *p = &g->p;
  const int64_t m = p->m, kk = p->k, lda = p->lda ? p->lda : kk;
  const char *name = name_of(k);
  int32_t *dperm = NULL;
  CUDA_OK(cudaMalloc((void **)&dperm, sizeof(int32_t) * (size_t)kk));
  CUDA_OK(cudaMemcpy(dperm, perm, sizeof(int32_t) * (size_t)kk, cudaMemcpyHostToDevice));
  size_t ws_bytes = 0;
  assert_int_equal(w4a16_workspace_size(k, p, 0, &ws_bytes), W4A16_STATUS_OK);
  assert_true(ws_bytes >= (size_t)(m * kk * 2));
  void *ws = NULL;
  CUDA_OK(cudaMalloc(&ws, ws_bytes));
  CUDA_OK(cudaMemset(ws, 0xAB, ws_bytes));
  CUDA_OK(cudaMemset(g->dd, 0xFF, g->d_bytes));
  w4a16_gemm_args args = data_args(g, 0.75f);
  args.a_perm = dperm;
  args.flags = flags;
  const w4a16_status st = w4a16_gemm(&args, k, ws, ws_bytes, NULL);
  if (st != W4A16_STATUS_OK) fail_msg("%s: act-order: %s: %s", name, w4a16_status_name(st), w4a16_last_error_message());
  CUDA_OK(cudaDeviceSynchronize());
  uint16_t *d = malloc(g->d_bytes);
  unsigned char *wsb = malloc(ws_bytes);
  assert_non_null(d);
  assert_non_null(wsb);
  CUDA_OK(cudaMemcpy(d, g->dd, g->d_bytes, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(wsb, ws, ws_bytes, cudaMemcpyDeviceToHost));
  int untouched = 1;
  for (size_t e = 0; e < ws_bytes && untouched; ++e) untouched = wsb[e] == 0xAB;
  if (bad) {
    for (int64_t e = 0; e < m * p->n; ++e) {
      const double v = test_from_dtype(d[e], p->dtype);
      if (v == v) fail_msg("%s: act-order with an index outside [0, K)%s: D[%lld] = %g, not NaN", name, what, (long long)e, v);
    }
  } else {
    gemv_data gathered = *g; /* the same problem on A[:, perm], gathered here */
    gathered.p.act_order = 0;
    gathered.p.lda = 0;
    gathered.a = malloc(sizeof(uint16_t) * (size_t)(m * kk));
    assert_non_null(gathered.a);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < kk; ++c) gathered.a[r * kk + c] = g->a[r * lda + perm[c]];
    expect_reference(&gathered, d, name, what);
    free(gathered.a);
  }
  free(d);
  free(wsb);
  cudaFree(ws);
  cudaFree(dperm);
  return untouched;
}

/* Act-order (problem.act_order, args.a_perm): every GEMV kernel at M = 1 and tile_m, K = 4096 and 14336,
   groups of 128 (and 32, and per column where the kernel takes them), a fresh random permutation, A of
   lda > K; then kernel NULL (selection: GEMV, sm90 or sm80 by M) at M = 1, 5, 16, 64, 256. Against the
   float64 reference of A[:, perm], each call twice: with args.flags 0 (the gather into the workspace,
   which the poisoned workspace shows written), and with W4A16_GEMM_NO_PDL, where at M = 1 the TMA GEMV
   kernels (tile_m <= 8) with groups >= 128 and K = 4096 gather the row in the kernel (the workspace
   untouched) and every other call still gathers into it (W4A16_GEMV_TMA_PERM unset: debug.h). A
   permutation with one index outside [0, K) makes every element of D NaN, in the kernel's gather and
   in the workspace's. */
static void test_act_order(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_act_order");
  int tested = 0, fused = 0;
  /* the runtime's own choice, whatever W4A16_GEMV_TMA_PERM the environment gave (restored at the end) */
  w4a16_debug_settings *dbg = w4a16_debug_for_tests();
  const int env_perm = dbg->gemv_tma_perm;
  dbg->gemv_tma_perm = -1;
  const size_t count = w4a16_kernel_count();
  for (size_t i = 0; i <= count + 1; ++i) {
    const w4a16_kernel_desc *k = i < count ? w4a16_kernel_get(i) : NULL;
    if (k && !selected(k)) continue;
    const w4a16_quant_mode mode = k ? k->mode : i == count ? W4A16_FINEGRAINED_SCALE_ONLY : W4A16_FINEGRAINED_SCALE_AND_ZEROS;
    const w4a16_dtype dtype = k ? k->dtype : i == count ? W4A16_DTYPE_BF16 : W4A16_DTYPE_F16;
    const int64_t ms_k[2] = {1, k ? k->tile_m : 1}, ms_sel[5] = {1, 5, 16, 64, 256};
    const int nm = k ? 2 : 5;
    for (int ki = 0; ki < 2; ++ki)
      for (int gi = 0; gi < 3; ++gi)
        for (int mi = 0; mi < nm; ++mi) {
          const int64_t kk = ki ? 14336 : 4096;
          /* per column: group 0 for PER_COLUMN_SCALE_ONLY, K for per-column zero points */
          const int group = mode == W4A16_PER_COLUMN_SCALE_ONLY ? (gi ? -1 : 0)
                            : gi == 0                         ? 128
                            : gi == 1                         ? 32
                                                              : (int)kk;
          if (group < 0 || (!k && (ki || gi))) continue;
          const int64_t m = k ? ms_k[mi] : ms_sel[mi];
          if (k && mi && m == 1) continue;
          w4a16_problem p = test_problem(m, k ? 2 * (int64_t)k->tile_n : 4096, kk, group, mode, dtype);
          p.lda = kk + 24;
          p.act_order = 1;
          if (k && w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
          gemv_data g;
          data_create(&g, &r, &p);
          int32_t *perm = malloc(sizeof(int32_t) * (size_t)kk);
          assert_non_null(perm);
          test_permutation(&r, perm, kk);
          char what[64];
          snprintf(what, sizeof what, " group %d act-order", group);
          /* flags 0 (programmatic launch): every call gathers into the workspace */
          if (run_act_order(&g, k, perm, 0, 0u, what)) fail_msg("%s: the workspace was not written", name_of(k));
          const int expect_fused = k && k->schedule == W4A16_SCHEDULE_GEMV_TMA && k->tile_m <= 8 && m == 1 &&
                                   kk == 4096 && group >= 128 && group < kk && mode != W4A16_PER_COLUMN_SCALE_ONLY;
          /* W4A16_GEMM_NO_PDL: the in-kernel gather where the kernel can */
          const int untouched = run_act_order(&g, k, perm, 0, W4A16_GEMM_NO_PDL, " (W4A16_GEMM_NO_PDL)");
          if (k && kk == 4096 && untouched != expect_fused)
            fail_msg("%s: M=%lld group %d: the workspace was %s, expected the row gathered %s", k->name,
                     (long long)m, group, untouched ? "untouched" : "written", expect_fused ? "in the kernel" : "into it");
          fused += untouched;
          if (kk == 4096 && (group == 128 || group == kk || mode == W4A16_PER_COLUMN_SCALE_ONLY)) {
            perm[(test_rng_next(&r) % (uint64_t)kk)] = (int32_t)(kk + 5); /* one index past K */
            (void)run_act_order(&g, k, perm, 1, W4A16_GEMM_NO_PDL, " (W4A16_GEMM_NO_PDL)");
            (void)run_act_order(&g, k, perm, 1, 0u, what);
          }
          free(perm);
          data_destroy(&g);
          ++tested;
        }
  }
  dbg->gemv_tma_perm = env_perm;
  print_message("act-order: %d runs, %d of them gathered in the kernel\n", tested, fused);
  if (!tested) skip();
}

/* Per-column zero points (group = K), three kinds of zeros: (0) random float zeros and columns whose
   offset -z / s is no finite value of the activation dtype: a column of scale 0 (w = z), one of a tiny
   scale (|z / s| past fp16's range; in bf16 an ordinary column), which the TMA GEMV runs through the
   activation-sum correction; (1) integer zero points z = -s zq, zq in 0..15, rounded to the dtype (the
   checkpoints' kind: the per-column consumer's integer-offset path); (2) the same but for one float
   zero in the first row block (that warp takes the general path). Every GEMV kernel of the zero-point
   mode, M = 1 and tile_m, through the launch's rule and each of the TMA consumers (W4A16_GEMV_TMA_PCZ,
   debug.h), against the float64 reference norm-wise and elementwise (one wrong column hardly moves
   the norm). */
static void test_pcol_zeros(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_pcol_zeros");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected(k) || k->mode != W4A16_FINEGRAINED_SCALE_AND_ZEROS) continue;
    const int ms[2] = {1, k->tile_m};
    for (int c = 0; c < 24; ++c) {
      /* how: the rule, the per-column consumer, the group one, the per-column one without integers */
      const int mi = c & 1, how = (c >> 1) & 3, kind = c >> 3;
      w4a16_problem p = test_problem(ms[mi], 2 * k->tile_n, 4096, 4096, k->mode, k->dtype);
      if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
      size_t ws_bytes = 0;
      assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
      gemv_data g;
      data_create(&g, &r, &p);
      /* column 3: s = 0, w = z; column 10 (row g + 8 of the first row block): the smallest normal
         fp16 scale with z = 8 (|z / s| = 131072, past fp16's 65504); column n - 1: z = 0 */
      if (kind == 0) {
        g.s[3] = test_to_dtype(0.0f, p.dtype);
        g.z[3] = test_to_dtype(0.25f, p.dtype);
        g.s[10] = test_to_dtype(6.103515625e-05f, p.dtype);
        g.z[10] = test_to_dtype(8.0f, p.dtype);
        g.z[p.n - 1] = test_to_dtype(0.0f, p.dtype);
      } else {
        for (int64_t j = 0; j < p.n; ++j)
          g.z[j] = test_integer_zero(&r, g.s[j], p.dtype);
        if (kind == 2) g.z[5] = test_to_dtype(-0.0123f, p.dtype);
      }
      CUDA_OK(cudaMemcpy(g.ds, g.s, sizeof(uint16_t) * (size_t)p.n, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(g.dz, g.z, sizeof(uint16_t) * (size_t)p.n, cudaMemcpyHostToDevice));
      void *ws = NULL;
      if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
      w4a16_debug_for_tests()->gemv_pcz = how;
      uint16_t *d = run_bits(&g, k, ws, ws_bytes, 0x00);
      w4a16_debug_for_tests()->gemv_pcz = 0;
      char what[96];
      snprintf(what, sizeof what, " (per-column zero points of kind %d, consumer %d)", kind, how);
      expect_reference(&g, d, k->name, what);
      const size_t count = (size_t)(p.m * p.n);
      double *ref = malloc(sizeof(double) * count), *got = malloc(sizeof(double) * count);
      assert_non_null(ref);
      assert_non_null(got);
      assert_int_equal(w4a16_reference_gemm(&p, g.a, g.codes, g.s, g.z, NULL, 0.75f, ref), W4A16_STATUS_OK);
      for (size_t e = 0; e < count; ++e) got[e] = test_from_dtype(d[e], p.dtype);
      const double err = test_elem_error(got, ref, count), tol = p.dtype == W4A16_DTYPE_F16 ? 2e-2 : 5e-2;
      if (!(err < tol))
        fail_msg("%s: M=%lld N=%lld: per-column zero points of kind %d (consumer %d): elementwise error %.3g "
                 "(tol %.1g)", k->name, (long long)p.m, (long long)p.n, kind, how, err, tol);
      free(ref);
      free(got);
      free(d);
      if (ws) cudaFree(ws);
      data_destroy(&g);
      ++tested;
    }
  }
  if (!tested) skip();
}

/* The TMA GEMV's launch plan (runtime/cuda/gemv/gemv_tma_launch.cuh, w4a16_gemv_tma_launch_variant): on
   a problem of fewer units (tile_n rows over all of K) than SMs whose weights fit the stages issued before the wait
   (K = tile_k x stages), the launch, captured in a graph, asks for the SM's whole shared-memory carveout
   and pads its grid to a whole number of CTAs per SM, more than the units; the CTAs past the last unit
   write nothing (the replay's D, poisoned first, against the float64 reference), at M = 1 and tile_m. */
static int check_tma_plan(const w4a16_kernel_desc *k, test_rng *r, int sms) {
  const int units = sms > 8 ? sms - 4 : 1;
  const int ms[2] = {1, k->tile_m};
  int tested = 0;
  for (int mi = 0; mi < 2; ++mi) {
    w4a16_problem p = test_problem(ms[mi], (int64_t)k->tile_n * units, (int64_t)k->tile_k * k->stages,
                                   k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128, k->mode, k->dtype);
    if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) fail_msg("%s: cannot implement M=%d N=%lld K=%lld", k->name,
                                                                ms[mi], (long long)p.n, (long long)p.k);
    gemv_data g;
    data_create(&g, r, &p);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStream_t stream = capture_gemm(&g, k, NULL, 0, &graph);
    cudaGraphNode_t nodes[8];
    size_t n_nodes = 8;
    CUDA_OK(cudaGraphGetNodes(graph, nodes, &n_nodes));
    int kernels = 0;
    for (size_t j = 0; j < n_nodes; ++j) {
      enum cudaGraphNodeType type;
      CUDA_OK(cudaGraphNodeGetType(nodes[j], &type));
      if (type != cudaGraphNodeTypeKernel) continue;
      ++kernels;
      struct cudaKernelNodeParams kp;
      CUDA_OK(cudaGraphKernelNodeGetParams(nodes[j], &kp));
      struct cudaFuncAttributes fa;
      CUDA_OK(cudaFuncGetAttributes(&fa, kp.func));
      if (fa.preferredShmemCarveout != (int)cudaSharedmemCarveoutMaxShared)
        fail_msg("%s: M=%d: carveout preference %d, not the whole shared memory", k->name, ms[mi],
                 fa.preferredShmemCarveout);
      if (kp.gridDim.x % (unsigned)sms != 0 || (int)kp.gridDim.x <= units)
        fail_msg("%s: M=%d: grid of %u CTAs for %d units on %d SMs: not padded to a whole number per SM", k->name,
                 ms[mi], kp.gridDim.x, units, sms);
    }
    assert_int_equal(kernels, 1);
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_OK(cudaMemsetAsync(g.dd, 0xFF, g.d_bytes, stream));
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    uint16_t *d = malloc(g.d_bytes);
    CUDA_OK(cudaMemcpy(d, g.dd, g.d_bytes, cudaMemcpyDeviceToHost));
    expect_reference(&g, d, k->name, " (graph replay, padded grid)");
    free(d);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    data_destroy(&g);
    ++tested;
  }
  return tested;
}

static void test_tma_launch_plan(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_tma_plan");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (selected(k) && k->schedule == W4A16_SCHEDULE_GEMV_TMA) tested += check_tma_plan(k, &r, sms);
  }
  if (!tested) skip();
}

/* An sm90 test problem of kernel k's dtype and mode: M = rows, N = n, K = 1280 (five k-blocks of 256)
   for tile_k 256, else 1152 (nine of 128, 18 of 64), groups of 128 (per-column: none), a bias, and
   D rows padded (ldd = N + 8). */
static w4a16_problem sm90_case(const w4a16_kernel_desc *k, int rows, int64_t n) {
  w4a16_problem p = test_problem(rows, n, k->tile_k == 256 ? 1280 : 1152,
                                 k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128, k->mode, k->dtype);
  p.has_bias = 1;
  p.ldd = p.n + 8;
  return p;
}

/* Runs problem p (bias, ldd set) through kernel k twice over workspaces of different garbage:
   every element of D must be written (D poisoned), the two runs must give the same bits, and all M
   rows x sampled columns (the first and last of every tile_n block, and 64 random ones) must match
   the float64 reference of those columns. `what` names the schedule in failure messages; split:
   the problem must (1) or must not (0) take a workspace. */
static void check_two_runs_ws(const w4a16_kernel_desc *k, const w4a16_problem *pp, test_rng *rr, const char *what,
                              int split) {
  const w4a16_problem p = *pp;
  test_rng r = *rr;
  const int sms = sm_count();
  size_t ws_bytes = 0;
  assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
  if ((ws_bytes > 0) != split)
    fail_msg("%s: %s M=%lld N=%lld K=%lld: workspace %zu bytes, the case needs %s", k->name, what, (long long)p.m,
             (long long)p.n, (long long)p.k, ws_bytes, split ? "some" : "none");
  gemv_data g;
  data_create(&g, &r, &p);
  void *ws = NULL;
  if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
  uint16_t *one = run_bits(&g, k, ws, ws_bytes, 0xFF);
  uint16_t *two = run_bits(&g, k, ws, ws_bytes, 0x00);
  const int64_t m = p.m, n = p.n, kk = p.k, groups = p.mode == W4A16_PER_COLUMN_SCALE_ONLY ? 1 : kk / p.group_size;
  for (int64_t row = 0; row < m; ++row) {
    if (memcmp(one + row * p.ldd, two + row * p.ldd, sizeof(uint16_t) * (size_t)n) != 0)
      fail_msg("%s: %s result differs between runs (row %lld)", k->name, what, (long long)row);
    for (int64_t col = 0; col < n; ++col)
      if (one[row * p.ldd + col] == 0xFFFF) fail_msg("%s: D[%lld][%lld] not written", k->name, (long long)row, (long long)col);
  }
  /* the reference of the sampled columns: the problem restricted to them (a fixup or store that
     goes wrong does so for a whole tile: every tile_n block's first and last columns) */
  const int64_t blocks = n / k->tile_n;
  const int NS = (int)((2 * blocks + 64 + 15) / 16 * 16); /* the reference's N: a multiple of 16 */
  int64_t *cols = malloc(sizeof(int64_t) * (size_t)NS);
  for (int64_t b = 0; b < blocks; ++b) {
    cols[2 * b] = b * k->tile_n;
    cols[2 * b + 1] = b * k->tile_n + k->tile_n - 1;
  }
  for (int c = (int)(2 * blocks); c < NS; ++c) cols[c] = (int64_t)(test_rng_next(&r) % (uint64_t)n);
  w4a16_problem q = p;
  q.n = NS;
  q.ldd = 0;
  uint8_t *codes = malloc((size_t)(NS * kk));
  uint16_t *s = malloc(sizeof(uint16_t) * (size_t)(groups * NS)), *z = malloc(sizeof(uint16_t) * (size_t)(groups * NS));
  uint16_t *bias = malloc(sizeof(uint16_t) * NS);
  double *ref = malloc(sizeof(double) * (size_t)(m * NS)), *got = malloc(sizeof(double) * (size_t)(m * NS));
  for (int c = 0; c < NS; ++c) {
    memcpy(codes + (size_t)c * kk, g.codes + (size_t)cols[c] * kk, (size_t)kk);
    for (int64_t gi = 0; gi < groups; ++gi) {
      s[gi * NS + c] = g.s[gi * n + cols[c]];
      z[gi * NS + c] = g.z[gi * n + cols[c]];
    }
    bias[c] = g.bias[cols[c]];
  }
  assert_int_equal(w4a16_reference_gemm(&q, g.a, codes, s, z, bias, 0.75f, ref), W4A16_STATUS_OK);
  for (int64_t row = 0; row < m; ++row)
    for (int c = 0; c < NS; ++c) got[row * NS + c] = test_from_dtype(one[row * p.ldd + cols[c]], p.dtype);
  const double err = test_rel_error(got, ref, (size_t)(m * NS));
  const double tol = p.dtype == W4A16_DTYPE_F16 ? 2e-3 : 1e-2;
  if (!(err < tol))
    fail_msg("%s: %s M=%lld N=%lld K=%lld: rel error %.3g (tol %.1g)", k->name, what, (long long)m, (long long)n,
             (long long)kk, err, tol);
  free(codes); free(s); free(z); free(bias); free(ref); free(got); free(one); free(two); free(cols);
  if (ws) cudaFree(ws);
  data_destroy(&g);
  *rr = r;
}

static void check_two_runs(const w4a16_kernel_desc *k, const w4a16_problem *pp, test_rng *rr, const char *what) {
  check_two_runs_ws(k, pp, rr, what, 1);
}

/* The rules' part of the launch plan of kernel k on p (runtime/plan.h): split-K and stream-K. */
static w4a16_plan rules_plan(const w4a16_kernel_desc *k, const w4a16_problem *p, int sms) {
  w4a16_plan plan;
  assert_int_equal(w4a16_plan_launch(k, p, sms, 0, W4A16_PLAN_RULES, &plan), 0);
  return plan;
}

/* The launch plan w4a16_gemm follows for k on p with the workspace the runtime reserves (what
   check_two_runs ran): the schedule a launch runs, the K pair and stream-K's parts included. */
static w4a16_plan launch_plan(const w4a16_kernel_desc *k, const w4a16_problem *p, int sms) {
  w4a16_plan plan;
  assert_int_equal(w4a16_plan_launch(k, p, sms, rules_plan(k, p, sms).workspace_bytes, 0, &plan), 0);
  return plan;
}

/* M for the stream-K and K-pair cases of kernel k: `tiles` cluster rows of tokens (cluster_m cm),
   the last one part-full (short by 9 rows where the tile has 16 or more: a tail box below the tile),
   and at least stream-K's smallest M */
static int part_full_rows(const w4a16_kernel_desc *k, int cm, int tiles) {
  const int min_m = w4a16_stream_k_min_m(k), rows = tiles * k->tile_m * cm - (k->tile_m >= 16 ? 9 : 3);
  return rows > min_m ? rows : min_m;
}

/* The slots of a wave of sm90 kernel k in clusters: two CTAs per SM for the tiles of at most half an
   SM of shared memory (runtime/plan.c, SM90_HALF_SM_SMEM) */
static int cluster_slots(const w4a16_kernel_desc *k, int sms) {
  const int cn = k->cluster_n > 1 ? k->cluster_n : 1, cm = k->cluster_m > 1 ? k->cluster_m : 1;
  return sms * (k->smem_bytes <= 115712 ? 2 : 1) / (cn * cm);
}

/* The stream-K case of sm90 kernel k for test_stream_k*: num / den waves of cluster tiles (rounded
   up, at least one), two rows of them along M from stream-K's smallest M (65; 1 for tile_k 256),
   the last one partial. Returns 0 where k cannot implement it. */
static int stream_k_case(const w4a16_kernel_desc *k, int sms, int num, int den, w4a16_problem *p) {
  const int cn = k->cluster_n > 1 ? k->cluster_n : 1, cm = k->cluster_m > 1 ? k->cluster_m : 1;
  const int slots = cluster_slots(k, sms);
  const int rows = part_full_rows(k, cm, 2);
  const int m_cl = (rows + k->tile_m * cm - 1) / (k->tile_m * cm);
  int n_cl = (slots * num / den + m_cl - 1) / m_cl;
  if (n_cl < 1) n_cl = 1;
  /* K = 1152 (9 k-blocks of 128, 18 of 64) for uneven parts; 1280 (5 of 256) for tile_k 256 */
  *p = sm90_case(k, rows, (int64_t)n_cl * k->tile_n * cn);
  return w4a16_can_implement(k, p) == W4A16_STATUS_OK;
}

/* For every selected sm90 kernel, a problem whose output tiles fill about num / den waves, where the
   runtime chooses stream-K (asserted: the test must exercise it), M in its range
   (w4a16_stream_k_min_m: from 65; for tile_k 256 from 1, below 17 where the tiles are many) and not a
   multiple of the tile (the last token tile short by 9 rows: a tail box below the tile), K giving
   uneven parts. Every element of D must be written (D poisoned); all M rows x 256 sampled columns
   (the first and last too) against the float64 reference of those columns; a second run over a
   workspace filled with other garbage gives the same bits. */
static void stream_k_waves(int num, int den, const char *seed, const char *what, int all_groups) {
  test_rng r = test_rng_fresh(seed);
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 1) || k->family != W4A16_FAMILY_SM90) continue;
    w4a16_problem p;
    if (!stream_k_case(k, sms, num, den, &p)) continue;
    /* groups of 128; with all_groups also 256 where a k-block is shorter (a part may begin
       inside a group) and 32 (several groups a k-block) where the kernel takes them */
    const int groups[3] = {128, k->tile_k < 256 ? 256 : 0, k->min_group <= 32 ? 32 : 0};
    for (int gi = 0; gi < (all_groups && k->mode != W4A16_PER_COLUMN_SCALE_ONLY ? 3 : 1); ++gi) {
      if (!groups[gi]) continue;
      w4a16_problem q = p;
      if (k->mode != W4A16_PER_COLUMN_SCALE_ONLY) q.group_size = groups[gi];
      q.k = (q.k + groups[gi] - 1) / groups[gi] * groups[gi]; /* 1152 -> 1280 for groups of 256 */
      if (w4a16_can_implement(k, &q) != W4A16_STATUS_OK) continue;
      if (rules_plan(k, &q, sms).stream_k != 1)
        fail_msg("%s: M=%lld N=%lld K=%lld group %d does not take stream-K", k->name, (long long)q.m,
                 (long long)q.n, (long long)q.k, q.group_size);
      check_two_runs(k, &q, &r, what);
      if (launch_plan(k, &q, sms).stream_k < 1) /* the plan's residency and workspace checks fell back */
        fail_msg("%s: M=%lld N=%lld K=%lld: the launch ran tile by tile, not stream-K", k->name, (long long)q.m,
                 (long long)q.n, (long long)q.k);
      ++tested;
    }
  }
  if (!tested) skip();
}

/* Stream-K (sm90) over about 1.3 waves of output tiles (the tiles of >= 64 tokens run the first
   wave tile by tile, except the 128x256 tiles, whose last partial comes through the stage ring:
   their short stream-K pieces here make them share all tiles by stream-K; runtime/cuda/sm90/
   plan.c streamk_dp_tiles, sm90_config.cuh Cfg::kStreamKRing) */
static void test_stream_k(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  stream_k_waves(13, 10, "sm90_stream_k", "stream-K", 1);
}

/* Stream-K over about 2.4 waves: the tiles of >= 64 tokens run two waves of tiles tile by tile
   before the stream-K part (Params::streamk = 3; the 128x256 tiles' last partials through the ring) */
static void test_stream_k_waves(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  stream_k_waves(12, 5, "sm90_stream_k_waves", "stream-K after data-parallel tiles", 0);
}

/* Stream-K with many contributors a tile: for every selected sm90 kernel that takes stream-K there
   (the tile_k 256 tiles), about a sixth of a wave of output tiles (fewer than the K pair takes), so
   that each tile's k-blocks are cut among five or six clusters and its owner waits for, and adds,
   four or five partials (the owners' parallel flag waits and the partials read two at a time,
   runtime/cuda/sm90/gemm_sm90.cuh) */
static void test_stream_k_many(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("sm90_stream_k_many");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 1) || k->family != W4A16_FAMILY_SM90) continue;
    /* a sixth of a wave; the tile_k 128 / 64 tiles take split-K with this few tiles
       (runtime/plan.c) */
    w4a16_problem p;
    if (!stream_k_case(k, sms, 1, 6, &p) || rules_plan(k, &p, sms).stream_k != 1) continue;
    check_two_runs(k, &p, &r, "stream-K, many contributors");
    if (launch_plan(k, &p, sms).stream_k < 1) fail_msg("%s: the launch ran tile by tile, not stream-K", k->name);
    ++tested;
  }
  if (!tested) skip();
}

/* Stream-K parts that shrink with the CTA index (gemm_sm90.cuh sk_start: for the tiles of <= 16 and
   >= 128 tokens where the parts hold 8 or more iterations, the first parts one k-block longer and the
   last B one shorter): for every selected sm90 kernel that takes stream-K on about 0.6 of a wave of
   tiles of 24 k-blocks (about 14 a part), every tile's owner must add the right contributors'
   partials, and the tiles of <= 16 and >= 128 tokens must have run skewed parts (B > 0, unless
   W4A16_SM90_SKEW=0), the others equal ones. */
static void test_stream_k_skew(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("sm90_stream_k_skew");
  const int sms = sm_count();
  const int off = !w4a16_debug()->sm90_skew; /* W4A16_SM90_SKEW=0 (runtime/debug.h) */
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 1) || k->family != W4A16_FAMILY_SM90) continue;
    const int cn = k->cluster_n > 1 ? k->cluster_n : 1, cm = k->cluster_m > 1 ? k->cluster_m : 1;
    const int slots = cluster_slots(k, sms);
    const int rows = part_full_rows(k, cm, 1);
    const int m_cl = (rows + k->tile_m * cm - 1) / (k->tile_m * cm);
    const int n_cl = (slots * 3 / 5 + m_cl - 1) / m_cl;
    w4a16_problem p = sm90_case(k, rows, (int64_t)n_cl * k->tile_n * cn);
    p.k = (int64_t)24 * k->tile_k;
    if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK || rules_plan(k, &p, sms).stream_k != 1) continue;
    check_two_runs(k, &p, &r, "stream-K, skewed parts");
    const w4a16_plan pl = launch_plan(k, &p, sms);
    if (pl.stream_k != 1) continue; /* data-parallel tiles first, or the plan fell back */
    /* the plan's rule, from the parts: g of them over the tiles' iterations */
    const long long iters = (long long)n_cl * m_cl * 24, g = slots < iters ? slots : iters;
    const int skewed = !off && (k->tile_m <= 16 || k->tile_m >= 128) && iters / g >= 8 && (g - iters % g) / 2 > 0;
    if ((pl.sk_rem >> 16 > 0) != skewed)
      fail_msg("%s: M=%lld N=%lld K=%lld: stream-K ran with %s parts", k->name, (long long)p.m, (long long)p.n,
               (long long)p.k, pl.sk_rem >> 16 > 0 ? "skewed" : "equal");
    ++tested;
  }
  if (!tested) skip();
}

/* The K-pair mode of the sm90 family (runtime/cuda/sm90/gemm_sm90.cuh Params::kpair: where stream-K
   or split-K into two slices would run and two CTAs a tile fill 70-100 % of the SMs, the two CTAs of
   a cluster split the tile's K and rank 1 hands its accumulators to rank 0 through shared memory, a
   stage or, for the large tiles, half into rank 0's epilogue buffer and half into its ring, rank 0
   a few k-blocks ahead): for every selected sm90 kernel, sms / 2 output tiles (one row of them along
   M, the last rows of the token tile empty), K of an odd number of k-blocks (uneven halves) where
   tile_k >= 128. Kernels the mode does not apply to (clusters, pingpong, tiles whose accumulators
   exceed the ring) run the same problem by stream-K or split-K. The fine-grained modes also run
   groups of 256 and a K of 13 k-blocks of at least 128: the tile_k 256 tiles of <= 32 tokens bring
   the scale rows of several k-blocks by one copy there (Params::scale_map, chunks of Cfg::kScaleChunk
   k-blocks), and these put chunk ends inside and at the end of each half. Every kernel also runs a K
   of four k-blocks, where 128x256x64's lead of four leaves rank 1 one (kpair_rank0_kblocks' clamp). */
static void test_k_pair(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("sm90_k_pair");
  const int sms = sm_count();
  int tested = 0, paired = 0, coop = 0, paired4 = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 1) || k->family != W4A16_FAMILY_SM90) continue;
    const int cn = k->cluster_n > 1 ? k->cluster_n : 1, cm = k->cluster_m > 1 ? k->cluster_m : 1;
    const int rows = part_full_rows(k, cm, 1);
    const int m_cl = (rows + k->tile_m * cm - 1) / (k->tile_m * cm);
    const int n_cl = sms / 2 / (m_cl * cn * cm) > 0 ? sms / 2 / (m_cl * cn * cm) : 1;
    w4a16_problem p = sm90_case(k, rows, (int64_t)n_cl * k->tile_n * cn);
    if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
    if (rules_plan(k, &p, sms).stream_k != 1 && rules_plan(k, &p, sms).split_k != 2) continue;
    check_two_runs(k, &p, &r, "K pair");
    ++tested;
    coop += k->schedule == W4A16_SCHEDULE_COOPERATIVE && cn * cm == 1;
    const w4a16_plan pl = launch_plan(k, &p, sms);
    if (pl.kpair) {
      ++paired;
      if (cn * cm != 1 || k->schedule != W4A16_SCHEDULE_COOPERATIVE)
        fail_msg("%s: the K pair ran on a %dx%d cluster / %s schedule", k->name, cn, cm, w4a16_schedule_name(k->schedule));
    } else if (pl.stream_k < 1 && pl.split_k != 2) {
      fail_msg("%s: neither the K pair nor stream-K nor split 2 ran", k->name);
    }
    w4a16_problem q = p;
    q.k = 4 * k->tile_k;
    if (w4a16_can_implement(k, &q) == W4A16_STATUS_OK) {
      check_two_runs(k, &q, &r, "K pair, 4 k-blocks");
      paired4 += launch_plan(k, &q, sms).kpair != 0;
    }
    if (k->mode == W4A16_PER_COLUMN_SCALE_ONLY) continue;
    q = p;
    q.group_size = 256;
    q.k = 1280;
    if (w4a16_can_implement(k, &q) == W4A16_STATUS_OK) check_two_runs(k, &q, &r, "K pair, groups of 256");
    q = p;
    q.k = 13 * (k->tile_k > 128 ? k->tile_k : 128);
    if (w4a16_can_implement(k, &q) == W4A16_STATUS_OK) check_two_runs(k, &q, &r, "K pair, 13 k-blocks");
  }
  if (!tested) skip();
  fprintf(stderr, "K pair: %d of %d kernels (%d cooperative 1x1x1), %d at 4 k-blocks\n", paired, tested, coop, paired4);
  if (coop && !paired) fail_msg("no cooperative 1x1x1 kernel ran the K pair");
  if (paired && !paired4) fail_msg("no kernel ran the K pair at 4 k-blocks");
}

/* Launch order: for every selected kernel (all families), GEMM 1 (M x 1024 x 32768: long, so that
   the next launch's CTAs start while it runs) and GEMM 2 (M x 512 x 1024) whose A is GEMM 1's D,
   sharing one workspace, back to back on one stream, must give GEMM 2 the same bits as when the host
   waits between them. The kernels may start while the kernel before them on the stream runs
   (programmatic dependent launch: w4a16.h "Ordering"); one that read A, or touched the workspace,
   before waiting for it would read GEMM 1's D before it is written: the buffer holds other finite
   garbage before each run (a producer that issues the first stages' activation copies before
   griddepcontrol.wait fails here). A third run launches GEMM 2 with W4A16_GEMM_NO_PDL (plain stream
   order), which must give the same bits. M: the GEMV kernels'
   tile_m, else tile_m - 3 (a part-full token tile). The data of a dtype x mode is made once. */
enum { LO_ROWS = 256, LO_N1 = 1024, LO_K1 = 32768, LO_N2 = 512 };
static void test_launch_order(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("launch_order");
  const int sms = sm_count();
  int tested = 0;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gemv_data g1[2][3], g2[2][3];
  int made[2][3] = {{0}};
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 2)) continue;
    const int m = k->family == W4A16_FAMILY_GEMV || k->tile_m <= 8 ? k->tile_m : k->tile_m - 3;
    const int g = k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128;
    w4a16_problem p1 = test_problem(m, LO_N1, LO_K1, g, k->mode, k->dtype);
    w4a16_problem p2 = test_problem(m, LO_N2, LO_N1, g, k->mode, k->dtype);
    p2.has_bias = 1;
    if (m > LO_ROWS || w4a16_can_implement(k, &p1) != W4A16_STATUS_OK || w4a16_can_implement(k, &p2) != W4A16_STATUS_OK)
      continue;
    gemv_data *d1 = &g1[k->dtype][k->mode], *d2 = &g2[k->dtype][k->mode];
    if (!made[k->dtype][k->mode]) { /* LO_ROWS rows; a kernel's problem uses the first m */
      w4a16_problem q1 = p1, q2 = p2;
      q1.m = q2.m = LO_ROWS;
      data_create(d1, &r, &q1);
      data_create(d2, &r, &q2);
      made[k->dtype][k->mode] = 1;
    }
    size_t ws1 = 0, ws2 = 0;
    assert_int_equal(w4a16_workspace_size(k, &p1, sms, &ws1), W4A16_STATUS_OK);
    assert_int_equal(w4a16_workspace_size(k, &p2, sms, &ws2), W4A16_STATUS_OK);
    const size_t ws_bytes = ws1 > ws2 ? ws1 : ws2, b1 = sizeof(uint16_t) * (size_t)(m * LO_N1),
                 b2 = sizeof(uint16_t) * (size_t)(m * LO_N2);
    void *ws = NULL;
    if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
    w4a16_gemm_args a1 = data_args(d1, 0.5f), a2 = data_args(d2, 0.75f);
    a1.problem = p1;
    a2.problem = p2;
    a2.a = d1->dd; /* A of GEMM 2 = D of GEMM 1 (lda = LO_N1) */
    uint16_t *want = malloc(b2), *got = malloc(b2), *d1a = malloc(b1), *d1b = malloc(b1);
    for (int run = 0; run < 3; ++run) {
      a2.flags = run == 2 ? W4A16_GEMM_NO_PDL : 0u;
      /* finite garbage in D 1 (fp16 1.05 / bf16 0.0115, then 2.1 / 3.0), D 2 poisoned */
      CUDA_OK(cudaMemset(d1->dd, run ? 0x40 : 0x3C, b1));
      CUDA_OK(cudaMemset(d2->dd, 0xFF, b2));
      if (ws) CUDA_OK(cudaMemset(ws, run ? 0xA5 : 0x00, ws_bytes));
      CUDA_OK(cudaDeviceSynchronize());
      w4a16_status st = w4a16_gemm(&a1, k, ws, ws_bytes, stream);
      if (st != W4A16_STATUS_OK) fail_msg("%s: GEMM 1: %s: %s", k->name, w4a16_status_name(st), w4a16_last_error_message());
      if (run == 0) CUDA_OK(cudaStreamSynchronize(stream)); /* the host waits: the order the second run must match */
      st = w4a16_gemm(&a2, k, ws, ws_bytes, stream);
      if (st != W4A16_STATUS_OK) fail_msg("%s: GEMM 2: %s: %s", k->name, w4a16_status_name(st), w4a16_last_error_message());
      CUDA_OK(cudaStreamSynchronize(stream));
      CUDA_OK(cudaMemcpy(run ? got : want, d2->dd, b2, cudaMemcpyDeviceToHost));
      CUDA_OK(cudaMemcpy(run ? d1b : d1a, d1->dd, b1, cudaMemcpyDeviceToHost));
      if (run == 0) {
        for (size_t e = 0; e < b2 / 2; ++e)
          if (want[e] == 0xFFFF) fail_msg("%s: M=%d: GEMM 2 left D[%zu] unwritten", k->name, m, e);
        continue;
      }
      if (memcmp(d1a, d1b, b1) != 0) fail_msg("%s: M=%d: GEMM 1's D differs between the runs", k->name, m);
      if (memcmp(want, got, b2) != 0)
        fail_msg("%s: M=%d: GEMM 2 launched right behind GEMM 1%s differs from GEMM 2 after it (read A or the "
                 "workspace before GEMM 1 finished?)", k->name, m, run == 2 ? " (W4A16_GEMM_NO_PDL)" : "");
    }
    free(want); free(got); free(d1a); free(d1b);
    if (ws) cudaFree(ws);
    ++tested;
  }
  for (int dt = 0; dt < 2; ++dt)
    for (int mode = 0; mode < 3; ++mode)
      if (made[dt][mode]) {
        data_destroy(&g1[dt][mode]);
        data_destroy(&g2[dt][mode]);
      }
  cudaStreamDestroy(stream);
  if (!tested) skip();
}

/* The GEMV kernels that may split K, on a problem where the runtime does not (a wave of row blocks
   or more, K = 4096): the unsplit path's direct store (alpha, bias, conversion) against the
   reference of sampled columns, twice (the same bits), M = 1 and tile_m */
static void test_gemv_unsplit(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("gemv_unsplit");
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected(k) || k->split_k <= 1) continue;
    const int ms[2] = {1, k->tile_m};
    for (int mi = 0; mi < (k->tile_m > 1 ? 2 : 1); ++mi) {
      w4a16_problem p = test_problem(ms[mi], (int64_t)(sms + 2) * k->tile_n, 4096,
                                     k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128, k->mode, k->dtype);
      p.has_bias = 1;
      p.ldd = p.n + 8;
      if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
      if (rules_plan(k, &p, sms).split_k != 1)
        fail_msg("%s: M=%lld N=%lld K=%lld still splits", k->name, (long long)p.m, (long long)p.n, (long long)p.k);
      check_two_runs_ws(k, &p, &r, "unsplit GEMV", 0);
      ++tested;
    }
  }
  if (!tested) skip();
}

/* Selection and the workspace (kernel NULL): w4a16_workspace_size(NULL, ...) sizes the kernel that
   w4a16_gemm(NULL) selects (a stream-K or split-K one on these problems of few output tiles), and
   w4a16_gemm(NULL) with a smaller workspace (none) still runs, unsplit, correctly */
static void test_selected_workspace(void **state) {
  (void)state;
  if (!gpu_present() || getenv("W4A16_TEST_FILTER")) skip();
  test_rng r = test_rng_fresh("selected_workspace");
  const int ms[3] = {1, 32, 256};
  int split = 0;
  for (int dt = 0; dt < 2; ++dt)
    for (int mi = 0; mi < 3; ++mi) {
      w4a16_problem p = test_problem(ms[mi], 4096, 4096, 128, W4A16_FINEGRAINED_SCALE_ONLY, (w4a16_dtype)dt);
      const w4a16_kernel_desc *sel = NULL;
      if (w4a16_select(&p, &sel, NULL) != W4A16_STATUS_OK) continue; /* no kernel of that dtype built */
      size_t need = 0, direct = 0;
      assert_int_equal(w4a16_workspace_size(NULL, &p, 0, &need), W4A16_STATUS_OK);
      assert_int_equal(w4a16_workspace_size(sel, &p, 0, &direct), W4A16_STATUS_OK);
      if (need != direct) fail_msg("M=%d: workspace_size(NULL) %zu, of the selected %s %zu", ms[mi], need, sel->name, direct);
      split += need > 0;
      gemv_data g;
      data_create(&g, &r, &p);
      w4a16_gemm_args args = data_args(&g, 0.75f);
      uint16_t *d = malloc(g.d_bytes);
      void *ws = NULL;
      if (need) CUDA_OK(cudaMalloc(&ws, need));
      for (int with = 0; with < 2; ++with) { /* without a workspace, then with the one sized */
        CUDA_OK(cudaMemset(g.dd, 0xFF, g.d_bytes));
        if (ws) CUDA_OK(cudaMemset(ws, 0xA5, need));
        w4a16_status st = w4a16_gemm(&args, NULL, with ? ws : NULL, with ? need : 0, NULL);
        if (st != W4A16_STATUS_OK) fail_msg("M=%d: %s: %s", ms[mi], w4a16_status_name(st), w4a16_last_error_message());
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(d, g.dd, g.d_bytes, cudaMemcpyDeviceToHost));
        expect_reference(&g, d, sel->name, with ? ", the sized workspace (kernel NULL)" : ", no workspace (kernel NULL)");
      }
      if (ws) cudaFree(ws);
      free(d);
      data_destroy(&g);
    }
  fprintf(stderr, "selected kernels needing a workspace: %d of 6 problems\n", split);
}

/* One worker of test_threads: its problem's data (made by the main thread: cmocka's checks are not for
   other threads); after the common start, a workspace of its own sized by w4a16_workspace_size(NULL)
   (the selection's first call for its problem), ten launches of w4a16_gemm(kernel NULL) on its own
   stream, D poisoned before each, then D copied back. Workers record statuses; the main thread
   checks. */
typedef struct thread_job {
  gemv_data g;
  void *ws;
  size_t ws_bytes;
  pthread_barrier_t *start;
  w4a16_status st;
  cudaError_t ce;
  char msg[256];
  uint16_t *d;
} thread_job;

static void *thread_worker(void *arg) {
  thread_job *j = arg;
  cudaStream_t s = NULL;
  w4a16_gemm_args args = data_args(&j->g, 0.75f);
  pthread_barrier_wait(j->start);
  j->st = w4a16_workspace_size(NULL, &j->g.p, 0, &j->ws_bytes);
  if (j->st != W4A16_STATUS_OK) snprintf(j->msg, sizeof j->msg, "workspace size: %s", w4a16_last_error_message());
  if (j->st == W4A16_STATUS_OK && j->ws_bytes) j->ce = cudaMalloc(&j->ws, j->ws_bytes);
  if (j->ce == cudaSuccess) j->ce = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int it = 0; it < 10 && j->ce == cudaSuccess && j->st == W4A16_STATUS_OK; ++it) {
    j->ce = cudaMemsetAsync(j->g.dd, 0xFF, j->g.d_bytes, s);
    if (j->ce == cudaSuccess) j->st = w4a16_gemm(&args, NULL, j->ws, j->ws_bytes, s);
    if (j->st != W4A16_STATUS_OK) snprintf(j->msg, sizeof j->msg, "%s", w4a16_last_error_message());
  }
  if (j->ce == cudaSuccess) j->ce = cudaStreamSynchronize(s);
  if (j->ce == cudaSuccess) j->ce = cudaMemcpy(j->d, j->g.dd, j->g.d_bytes, cudaMemcpyDeviceToHost);
  if (s) cudaStreamDestroy(s);
  return NULL;
}

/* whether this build has a kernel for p that runs on this device (what kernel NULL can select from),
   asked without the selection itself, whose first calls test_threads wants to race */
static int build_serves(const w4a16_problem *p) {
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (selected_in(k, 2) && w4a16_can_implement(k, p) == W4A16_STATUS_OK) return 1;
  }
  return 0;
}

static void test_threads(void **state) {
  (void)state;
  if (!gpu_present() || getenv("W4A16_TEST_FILTER")) skip();
  enum { T = 6 };
  /* M, N, K: decode (two threads on one problem), small-batch and prefill sizes; bf16 and fp16 alternate */
  const int64_t shape[T][3] = {{1, 4096, 2048}, {1, 4096, 2048}, {4, 2048, 4096}, {16, 2048, 2048},
                               {64, 2048, 2048}, {128, 1024, 2048}};
  test_rng r = test_rng_fresh("threads");
  thread_job jobs[T];
  pthread_t tid[T];
  pthread_barrier_t start;
  w4a16_problem probs[T];
  int runs[T], n = 0; /* a build of a kernel subset (W4A16_KERNELS) may serve only some problems */
  for (int t = 0; t < T; ++t) {
    const w4a16_dtype dt = t % 2 ? W4A16_DTYPE_F16 : W4A16_DTYPE_BF16;
    probs[t] = test_problem(shape[t][0], shape[t][1], shape[t][2], 128, W4A16_FINEGRAINED_SCALE_ONLY,
                            t == 1 ? W4A16_DTYPE_BF16 : dt); /* threads 0 and 1: the same problem */
    runs[t] = build_serves(&probs[t]);
    n += runs[t];
  }
  if (n < 2) {
    fprintf(stderr, "this build serves %d of the %d threads' problems\n", n, T);
    skip();
  }
  assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)n), 0);
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < T; ++t) {
    if (!runs[t]) continue;
    thread_job *j = &jobs[t];
    data_create(&j->g, &r, &probs[t]);
    j->d = malloc(j->g.d_bytes);
    assert_non_null(j->d);
    j->start = &start;
    j->st = W4A16_STATUS_OK;
    j->ce = cudaSuccess;
  }
  for (int t = 0; t < T; ++t)
    if (runs[t]) assert_int_equal(pthread_create(&tid[t], NULL, thread_worker, &jobs[t]), 0);
  for (int t = 0; t < T; ++t)
    if (runs[t]) pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&start);
  if (n < T) fprintf(stderr, "this build serves %d of the %d threads' problems; the others did not run\n", n, T);
  for (int t = 0; t < T; ++t) {
    if (!runs[t]) continue;
    thread_job *j = &jobs[t];
    char who[64];
    snprintf(who, sizeof who, "thread %d (kernel NULL)", t);
    if (j->st != W4A16_STATUS_OK) fail_msg("%s: %s: %s", who, w4a16_status_name(j->st), j->msg);
    if (j->ce != cudaSuccess) fail_msg("%s: %s", who, cudaGetErrorString(j->ce));
    expect_reference(&j->g, j->d, who, "");
    free(j->d);
    if (j->ws) cudaFree(j->ws);
    data_destroy(&j->g);
  }
}

/* every kernel (all families) once on a small problem (M = 1, N = 2 tile_n, K = 2048), D poisoned,
   against the float64 reference; returns how many ran */
static int run_every_kernel(test_rng *r, const char *when) {
  const int sms = sm_count();
  int tested = 0;
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (!selected_in(k, 2)) continue;
    w4a16_problem p = test_problem(1, 2 * k->tile_n, 2048, k->mode == W4A16_PER_COLUMN_SCALE_ONLY ? 0 : 128, k->mode,
                                   k->dtype);
    if (w4a16_can_implement(k, &p) != W4A16_STATUS_OK) continue;
    size_t ws_bytes = 0;
    assert_int_equal(w4a16_workspace_size(k, &p, sms, &ws_bytes), W4A16_STATUS_OK);
    gemv_data g;
    data_create(&g, r, &p);
    void *ws = NULL;
    if (ws_bytes) CUDA_OK(cudaMalloc(&ws, ws_bytes));
    uint16_t *d = run_bits(&g, k, ws, ws_bytes, 0x5A);
    expect_reference(&g, d, k->name, when);
    free(d);
    if (ws) cudaFree(ws);
    data_destroy(&g);
    ++tested;
  }
  return tested;
}

/* The kernels' function attributes (maximum dynamic shared memory, the TMA GEMV's carveout) are set
   once per CUDA context (runtime/cuda/common/func_attr.cuh). cudaDeviceReset gives the next calls a
   new primary context with the defaults, where a launch of more than 48 KB of dynamic shared memory
   fails unless they are set again: every kernel runs before and after a reset against the reference,
   then the first TMA GEMV kernel's launch plan again (its carveout attribute in the new context). Last
   in the binary: the reset frees every allocation. (With CUDA 13's runtime, which applies attributes
   set earlier to a function again when the new context loads it, a record kept once per process
   passes too. What this guards is the result after a reset.) */
static void test_context_reset(void **state) {
  (void)state;
  if (!gpu_present()) skip();
  test_rng r = test_rng_fresh("context_reset");
  const int before = run_every_kernel(&r, " (before cudaDeviceReset)");
  CUDA_OK(cudaDeviceReset());
  const int after = run_every_kernel(&r, " (after cudaDeviceReset)");
  assert_int_equal(before, after);
  if (!before) skip();
  const int sms = sm_count();
  for (size_t i = 0; i < w4a16_kernel_count(); ++i) {
    const w4a16_kernel_desc *k = w4a16_kernel_get(i);
    if (selected(k) && k->schedule == W4A16_SCHEDULE_GEMV_TMA) {
      check_tma_plan(k, &r, sms);
      break;
    }
  }
}

int main(void) {
  if (!gpu_present()) {
    fprintf(stderr, "no CUDA device: GPU tests skipped\n");
    return 77; /* ctest: SKIP_RETURN_CODE */
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads), /* first: the process's first calls race */
      cmocka_unit_test(test_splitk_deterministic),
      cmocka_unit_test(test_graph_capture),
      cmocka_unit_test(test_long_k),
      cmocka_unit_test(test_pcol_zeros),
      cmocka_unit_test(test_act_order),
      cmocka_unit_test(test_tma_launch_plan),
      cmocka_unit_test(test_stream_k),
      cmocka_unit_test(test_stream_k_waves),
      cmocka_unit_test(test_k_pair),
      cmocka_unit_test(test_stream_k_many),
      cmocka_unit_test(test_stream_k_skew),
      cmocka_unit_test(test_launch_order),
      cmocka_unit_test(test_gemv_unsplit),
      cmocka_unit_test(test_selected_workspace),
      cmocka_unit_test(test_context_reset), /* last: it resets the device */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
