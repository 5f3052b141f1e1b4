/* test_gather_k.c - w4a16_gather_k: out[m, k] = a[m, perm[k]].
 *
 * Without a GPU: every bad argument gets its status (and a message naming it) before any device is
 * asked. On a GPU: random A (rows of lda > K, unaligned to 16 bytes), a random permutation, out
 * between poisoned guard regions and rows of ldo > K; every element of out[0..M) x [0..K) must
 * equal A's element bit for bit (the gather is a copy: an independent host loop is the reference)
 * and nothing else may change; an index outside [0, K) gives a NaN; M = 0 launches nothing. Fresh
 * random data each run (W4A16_TEST_SEED replays); the GPU cases skip without a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "test_cuda_util.h"
#include "test_util.h"

#define GUARD 64 /* poisoned elements before and after out (128 bytes: keeps out 16-byte aligned) */

static const uint16_t kPoison = 0xABCD;

static int have_gpu(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

static void test_bad_arguments(void **state) {
  (void)state;
  /* fake, well-aligned addresses: every check below fails before anything is read */
  const void *a = (const void *)(uintptr_t)0x10000;
  const int32_t *perm = (const int32_t *)(uintptr_t)0x20000;
  void *out = (void *)(uintptr_t)0x40000;
  const w4a16_dtype bf = W4A16_DTYPE_BF16;
  expect_status(w4a16_gather_k(a, 64, perm, 1, 64, (w4a16_dtype)7, out, 64, NULL), W4A16_STATUS_INVALID_VALUE, "dtype 7");
  expect_status(w4a16_gather_k(a, 64, perm, -1, 64, bf, out, 64, NULL), W4A16_STATUS_INVALID_SHAPE, "M = -1");
  expect_status(w4a16_gather_k(a, 64, perm, 1, 0, bf, out, 64, NULL), W4A16_STATUS_INVALID_SHAPE, "K = 0");
  expect_status(w4a16_gather_k(a, 68, perm, 1, 60, bf, out, 64, NULL), W4A16_STATUS_INVALID_SHAPE, "K = 60");
  expect_status(w4a16_gather_k(a, 32, perm, 1, 64, bf, out, 64, NULL), W4A16_STATUS_INVALID_SHAPE, "lda = 32");
  expect_status(w4a16_gather_k(a, 64, perm, 1, 64, bf, out, 56, NULL), W4A16_STATUS_INVALID_SHAPE, "ldo = 56");
  expect_status(w4a16_gather_k(a, 64, perm, 1, 64, bf, out, 68, NULL), W4A16_STATUS_MISALIGNED, "ldo = 68");
  expect_status(w4a16_gather_k(NULL, 64, perm, 1, 64, bf, out, 64, NULL), W4A16_STATUS_NULL_POINTER, "A is NULL");
  expect_status(w4a16_gather_k(a, 64, NULL, 1, 64, bf, out, 64, NULL), W4A16_STATUS_NULL_POINTER, "perm is NULL");
  expect_status(w4a16_gather_k(a, 64, perm, 1, 64, bf, NULL, 64, NULL), W4A16_STATUS_NULL_POINTER, "out is NULL");
  expect_status(w4a16_gather_k((const char *)a + 1, 64, perm, 1, 64, bf, out, 64, NULL), W4A16_STATUS_MISALIGNED, "A pointer");
  expect_status(w4a16_gather_k(a, 64, perm + 1, 1, 64, bf, out, 64, NULL), W4A16_STATUS_MISALIGNED, "perm pointer");
  expect_status(w4a16_gather_k(a, 64, perm, 1, 64, bf, (char *)out + 8, 64, NULL), W4A16_STATUS_MISALIGNED, "out pointer");
  /* out overlapping A: in place, and a partial overlap of the last row */
  expect_status(w4a16_gather_k(a, 64, perm, 2, 64, bf, (void *)a, 64, NULL), W4A16_STATUS_INVALID_VALUE, "overlaps");
  expect_status(w4a16_gather_k(a, 64, perm, 2, 64, bf, (char *)a + 2 * 64 * 2 - 16, 64, NULL),
                W4A16_STATUS_INVALID_VALUE, "overlaps");
  /* M = 0: OK with no pointer read (NULLs are fine) */
  assert_int_equal(w4a16_gather_k(NULL, 64, NULL, 0, 64, bf, NULL, 64, NULL), W4A16_STATUS_OK);
}

/* one case: M x K gathered from rows of lda (A offset by one element: only 2-byte aligned) into
   rows of ldo; bad_index >= 0 puts an out-of-range index at that column */
static void run_case(test_rng *r, int64_t m, int64_t k, int64_t lda, int64_t ldo, int bad_index) {
  const size_t a_elems = (size_t)(m > 0 ? (m - 1) * lda + k : 0) + 1;
  const size_t out_elems = (size_t)(m > 0 ? (m - 1) * ldo + k : 0);
  uint16_t *ha = malloc(a_elems * 2), *hout = malloc((out_elems + 2 * GUARD) * 2);
  int32_t *hperm = malloc((size_t)k * 4);
  assert_non_null(ha);
  assert_non_null(hout);
  assert_non_null(hperm);
  for (size_t i = 0; i < a_elems; ++i) ha[i] = (uint16_t)test_rng_next(r);
  test_permutation(r, hperm, k);
  if (bad_index >= 0) hperm[bad_index] = (bad_index & 1) ? (int32_t)k : -5;
  for (size_t i = 0; i < out_elems + 2 * GUARD; ++i) hout[i] = kPoison;
  uint16_t *da, *dout;
  int32_t *dperm;
  CUDA_OK(cudaMalloc((void **)&da, a_elems * 2 + 16));
  CUDA_OK(cudaMalloc((void **)&dout, (out_elems + 2 * GUARD) * 2));
  CUDA_OK(cudaMalloc((void **)&dperm, (size_t)k * 4));
  CUDA_OK(cudaMemcpy(da, ha, a_elems * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dout, hout, (out_elems + 2 * GUARD) * 2, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dperm, hperm, (size_t)k * 4, cudaMemcpyHostToDevice));
  const uint16_t *a = da + 1; /* the matrix starts one element in */
  assert_int_equal(w4a16_gather_k(a, lda, dperm, m, k, W4A16_DTYPE_BF16, dout + GUARD, ldo, NULL), W4A16_STATUS_OK);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(hout, dout, (out_elems + 2 * GUARD) * 2, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (int i = 0; i < GUARD; ++i) bad += hout[i] != kPoison || hout[GUARD + out_elems + i] != kPoison;
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < ldo && row * ldo + col < (int64_t)out_elems; ++col) {
      const uint16_t got = hout[GUARD + row * ldo + col];
      uint16_t want = kPoison; /* the padding columns of a row stay untouched */
      if (col < k) {
        const int32_t p = hperm[col];
        want = (p >= 0 && p < k) ? ha[1 + row * lda + p] : 0x7fff;
      }
      bad += got != want;
    }
  if (bad)
    fprintf(stderr, "M=%lld K=%lld lda=%lld ldo=%lld bad_index=%d: %zu wrong elements\n", (long long)m,
            (long long)k, (long long)lda, (long long)ldo, bad_index, bad);
  assert_int_equal(bad, 0);
  CUDA_OK(cudaFree(da));
  CUDA_OK(cudaFree(dout));
  CUDA_OK(cudaFree(dperm));
  free(ha);
  free(hout);
  free(hperm);
}

static void test_gpu_gather(void **state) {
  (void)state;
  if (!have_gpu()) skip();
  test_rng r = test_rng_fresh("test_gather_k");
  static const int64_t ms[] = {1, 3, 16, 17, 300};
  static const int64_t ks[] = {8, 64, 136, 4096, 14336};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i)
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; ++j) {
      const int64_t k = ks[j];
      run_case(&r, ms[i], k, k, k, -1);                      /* dense */
      run_case(&r, ms[i], k, k + 3, k + 16, -1);             /* padded rows */
    }
  run_case(&r, 5, 128, 128, 128, 37);  /* an index past K */
  run_case(&r, 5, 128, 130, 136, 64);  /* a negative index */
}

static void test_gpu_m0_untouched(void **state) {
  (void)state;
  if (!have_gpu()) skip();
  uint16_t *dout;
  CUDA_OK(cudaMalloc((void **)&dout, 256));
  CUDA_OK(cudaMemset(dout, 0xAB, 256));
  assert_int_equal(w4a16_gather_k(dout, 64, (const int32_t *)dout, 0, 64, W4A16_DTYPE_F16, dout, 64, NULL),
                   W4A16_STATUS_OK);
  CUDA_OK(cudaDeviceSynchronize());
  unsigned char h[256];
  CUDA_OK(cudaMemcpy(h, dout, 256, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) assert_int_equal(h[i], 0xAB);
  CUDA_OK(cudaFree(dout));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_gpu_gather),
      cmocka_unit_test(test_gpu_m0_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
