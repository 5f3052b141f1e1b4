/* gather_k.c - w4a16_gather_k: validate, then launch the act-order gather (cuda/gather_k.cu). */
#include <inttypes.h>

#include "internal.h"

w4a16_status w4a16_gather_k(const void *a, int64_t lda, const int32_t *perm, int64_t m, int64_t k,
                            w4a16_dtype dtype, void *out, int64_t ldo, void *stream) {
  if (dtype != W4A16_DTYPE_F16 && dtype != W4A16_DTYPE_BF16)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "dtype %d is neither F16 nor BF16", (int)dtype);
  if (m < 0) return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "M = %" PRId64 " is negative", m);
  if (k <= 0 || k % 8 || k > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " must be a positive multiple of 8 below 2^31", k);
  if (lda < k) return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "lda = %" PRId64 " is below K = %" PRId64, lda, k);
  if (ldo < k) return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "ldo = %" PRId64 " is below K = %" PRId64, ldo, k);
  if (ldo % 8) return w4a16_fail(W4A16_STATUS_MISALIGNED, "ldo = %" PRId64 " is not a multiple of 8", ldo);
  if (m == 0) { /* nothing to gather: nothing launched, no pointer read */
    w4a16_clear_error();
    return W4A16_STATUS_OK;
  }
  if (!a) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "A is NULL");
  if (!perm) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "perm is NULL");
  if (!out) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "out is NULL");
  if ((uintptr_t)a & 1u) return w4a16_fail(W4A16_STATUS_MISALIGNED, "A pointer %p is not 2-byte aligned", a);
  if ((uintptr_t)perm & 15u)
    return w4a16_fail(W4A16_STATUS_MISALIGNED, "perm pointer %p is not 16-byte aligned", (const void *)perm);
  if ((uintptr_t)out & 15u) return w4a16_fail(W4A16_STATUS_MISALIGNED, "out pointer %p is not 16-byte aligned", out);
  /* the bytes each matrix spans (its last row ends at K) must not overlap: the gather reads A
     while it writes out */
  const uintptr_t a0 = (uintptr_t)a, a1 = a0 + (uintptr_t)(((m - 1) * lda + k) * 2);
  const uintptr_t o0 = (uintptr_t)out, o1 = o0 + (uintptr_t)(((m - 1) * ldo + k) * 2);
  if (a0 < o1 && o0 < a1)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "out [%p, %p) overlaps A [%p, %p): the gather is not in place",
                      (void *)o0, (void *)o1, (void *)a0, (void *)a1);
  w4a16_device_info dev;
  w4a16_status st = w4a16_current_device(&dev);
  if (st != W4A16_STATUS_OK) return st;
  const int e = w4a16_gather_k_launch(a, lda, perm, m, (int)k, out, ldo, dev.sm_count, 1, stream);
  if (e) return w4a16_fail_cuda(e, "w4a16_gather_k launch");
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
