/* reference.c - the CPU reference GEMM, float64 accumulation (independent of the kernels). */
#include <stdlib.h>

#include "internal.h"

static double val(uint16_t b, w4a16_dtype d) {
  return d == W4A16_DTYPE_F16 ? (double)w4a16_half_to_float(b) : (double)w4a16_bf16_to_float(b);
}

w4a16_status w4a16_reference_gemm(const w4a16_problem *p, const uint16_t *a, const uint8_t *codes,
                                  const uint16_t *scales, const uint16_t *zeros, const uint16_t *bias, float alpha,
                                  double *d) {
  if (!p) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "problem is NULL");
  if (!a || !codes || !scales || !d)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "reference: A, codes, scales and D must not be NULL");
  if (p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !zeros)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "reference: zeros are NULL with FINEGRAINED_SCALE_AND_ZEROS");
  if (p->has_bias && !bias) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "reference: has_bias but bias is NULL");
  w4a16_status st = w4a16_check_problem_m(p, 0);
  if (st != W4A16_STATUS_OK) return st;
  if (p->m == 0) { /* an empty product */
    w4a16_clear_error();
    return W4A16_STATUS_OK;
  }
  const int64_t m = p->m, n = p->n, k = p->k, lda = p->lda ? p->lda : k;
  const int64_t g = w4a16_effective_group(p);
  double *wrow = malloc((size_t)k * sizeof *wrow);
  double *acol = malloc((size_t)(m * k) * sizeof *acol);
  if (!wrow || !acol) {
    free(wrow);
    free(acol);
    return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "reference: out of host memory");
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) acol[i * k + kk] = val(a[i * lda + kk], p->dtype);
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t kk = 0; kk < k; ++kk) {
      const size_t sidx = (size_t)(kk / g) * (size_t)n + (size_t)col;
      const double s = val(scales[sidx], p->dtype);
      const double q = codes[col * k + kk];
      wrow[kk] = p->mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS ? s * q + val(zeros[sidx], p->dtype) : s * (q - 8.0);
    }
    const double b = p->has_bias ? val(bias[col], p->dtype) : 0.0;
    for (int64_t i = 0; i < m; ++i) {
      double acc = 0.0;
      const double *ar = acol + i * k;
      for (int64_t kk = 0; kk < k; ++kk) acc += ar[kk] * wrow[kk];
      d[i * n + col] = (double)alpha * acc + b;
    }
  }
  free(wrow);
  free(acol);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
