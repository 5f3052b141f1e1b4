/* pack.c - logical [N,K] codes <-> the packed layout of docs/LAYOUT.md. */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

/* nibble position p holds fragment element kOrder[p] */
static const int kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/* row (within the 16-row tile) and col (within the k16 sub-tile) of fragment element e of lane l */
static void element_coord(int lane, int e, int *row, int *col) {
  const int g = lane / 4, t = lane % 4;
  *row = g + 8 * ((e >> 1) & 1);
  *col = 2 * t + (e & 1) + 8 * (e >> 2);
}

static w4a16_status check_shape(int64_t n, int64_t k) {
  if (n < 16 || n % 16 != 0 || n > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "N = %" PRId64 " must be a positive multiple of 16", n);
  if (k < 64 || k % 64 != 0 || k > INT32_MAX)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " must be a positive multiple of 64", k);
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_packed_size(int64_t n, int64_t k, size_t *bytes) {
  if (!bytes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "bytes is NULL");
  w4a16_status st = check_shape(n, k);
  if (st != W4A16_STATUS_OK) return st;
  *bytes = (size_t)n * (size_t)k / 2;
  return W4A16_STATUS_OK;
}

/* byte offset of the word (nt, kt, lane, j) */
static size_t word_offset(int64_t k, int64_t nt, int64_t kt, int lane, int j) {
  return ((size_t)(nt * (k / 64) + kt)) * 512u + (size_t)lane * 16u + (size_t)j * 4u;
}

w4a16_status w4a16_pack_weights(const uint8_t *codes, int64_t n, int64_t k, void *packed) {
  if (!codes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "codes is NULL");
  if (!packed) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "packed is NULL");
  w4a16_status st = check_shape(n, k);
  if (st != W4A16_STATUS_OK) return st;
  for (size_t i = 0; i < (size_t)n * (size_t)k; ++i)
    if (codes[i] > 15)
      return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "code [%zu, %zu] = %u is not in [0, 15]", i / (size_t)k,
                        i % (size_t)k, codes[i]);
  uint8_t *out = packed;
  for (int64_t nt = 0; nt < n / 16; ++nt)
    for (int64_t kt = 0; kt < k / 64; ++kt)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 4; ++j) {
          uint32_t word = 0;
          for (int p = 0; p < 8; ++p) {
            int row, col;
            element_coord(lane, kOrder[p], &row, &col);
            const size_t idx = (size_t)(nt * 16 + row) * (size_t)k + (size_t)(kt * 64 + 16 * j + col);
            word |= (uint32_t)codes[idx] << (4 * p);
          }
          uint8_t *dst = out + word_offset(k, nt, kt, lane, j);
          for (int b = 0; b < 4; ++b) dst[b] = (uint8_t)(word >> (8 * b)); /* little-endian */
        }
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}

w4a16_status w4a16_unpack_weights(const void *packed, int64_t n, int64_t k, uint8_t *codes) {
  if (!packed) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "packed is NULL");
  if (!codes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "codes is NULL");
  w4a16_status st = check_shape(n, k);
  if (st != W4A16_STATUS_OK) return st;
  const uint8_t *in = packed;
  for (int64_t nt = 0; nt < n / 16; ++nt)
    for (int64_t kt = 0; kt < k / 64; ++kt)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 4; ++j) {
          const uint8_t *src = in + word_offset(k, nt, kt, lane, j);
          const uint32_t word = (uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
                                (uint32_t)src[3] << 24;
          for (int p = 0; p < 8; ++p) {
            int row, col;
            element_coord(lane, kOrder[p], &row, &col);
            codes[(size_t)(nt * 16 + row) * (size_t)k + (size_t)(kt * 64 + 16 * j + col)] =
                (uint8_t)((word >> (4 * p)) & 15u);
          }
        }
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
