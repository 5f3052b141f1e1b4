/* quantize.c - round-to-nearest 4-bit quantization of host weights (all three modes). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "internal.h"

static float load_weight(const void *w, w4a16_host_type t, size_t i) {
  switch (t) {
  case W4A16_HOST_F32: return ((const float *)w)[i];
  case W4A16_HOST_F16: return w4a16_half_to_float(((const uint16_t *)w)[i]);
  case W4A16_HOST_BF16: return w4a16_bf16_to_float(((const uint16_t *)w)[i]);
  }
  return 0.0f;
}

static uint16_t to_dtype(float f, w4a16_dtype d) {
  return d == W4A16_DTYPE_F16 ? w4a16_float_to_half(f) : w4a16_float_to_bf16(f);
}

static float from_dtype(uint16_t b, w4a16_dtype d) {
  return d == W4A16_DTYPE_F16 ? w4a16_half_to_float(b) : w4a16_bf16_to_float(b);
}

/* scale rounded to dtype, never zero (a zero or denormal-flushed scale becomes the smallest normal) */
static uint16_t scale_bits(float s, w4a16_dtype d) {
  uint16_t b = to_dtype(s, d);
  if (!(from_dtype(b, d) > 0.0f)) b = d == W4A16_DTYPE_F16 ? 0x0400 : 0x0080;
  return b;
}

static int clamp_code(double v) {
  long q = lrint(v);
  return q < 0 ? 0 : q > 15 ? 15 : (int)q;
}

w4a16_status w4a16_quantize(const void *weights, w4a16_host_type wtype, int64_t n, int64_t k,
                            w4a16_quant_mode mode, int group_size, w4a16_dtype dtype, uint8_t *codes,
                            uint16_t *scales, uint16_t *zeros) {
  if (!weights) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "weights is NULL");
  if (!codes) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "codes is NULL");
  if (!scales) return w4a16_fail(W4A16_STATUS_NULL_POINTER, "scales is NULL");
  if (mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS && !zeros)
    return w4a16_fail(W4A16_STATUS_NULL_POINTER, "zeros is NULL with FINEGRAINED_SCALE_AND_ZEROS");
  if (wtype != W4A16_HOST_F32 && wtype != W4A16_HOST_F16 && wtype != W4A16_HOST_BF16)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "weight type %d is not a w4a16_host_type", (int)wtype);
  if (dtype != W4A16_DTYPE_F16 && dtype != W4A16_DTYPE_BF16)
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "dtype %d is not a w4a16_dtype", (int)dtype);
  if (n < 1 || k < 1)
    return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "N = %" PRId64 ", K = %" PRId64 ": both must be >= 1", n, k);
  int64_t g;
  if (mode == W4A16_PER_COLUMN_SCALE_ONLY) {
    if (group_size != 0 && group_size != k)
      return w4a16_fail(W4A16_STATUS_UNSUPPORTED_GROUP_SIZE,
                        "group size %d with PER_COLUMN_SCALE_ONLY: must be 0 or K = %" PRId64, group_size, k);
    g = k;
  } else if (mode == W4A16_FINEGRAINED_SCALE_ONLY || mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS) {
    if (group_size == 0) group_size = (int)(k < INT32_MAX ? k : INT32_MAX); /* one group a column */
    if (group_size != 32 && group_size != 64 && group_size != 128 && group_size != 256 && group_size != k)
      return w4a16_fail(W4A16_STATUS_UNSUPPORTED_GROUP_SIZE,
                        "group size %d is not one of 32, 64, 128, 256, or 0 / K = %" PRId64 " (one group a column)",
                        group_size, k);
    if (k % group_size)
      return w4a16_fail(W4A16_STATUS_INVALID_SHAPE, "K = %" PRId64 " is not a multiple of the group size %d", k,
                        group_size);
    g = group_size;
  } else {
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "quant mode %d is not a w4a16_quant_mode", (int)mode);
  }
  const int64_t groups = k / g;
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      const size_t base = (size_t)row * (size_t)k + (size_t)(gi * g);
      float lo = INFINITY, hi = -INFINITY, amax = 0.0f;
      for (int64_t j = 0; j < g; ++j) {
        float v = load_weight(weights, wtype, base + (size_t)j);
        if (!isfinite(v))
          return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "weight [%" PRId64 ", %" PRId64 "] is not finite", row,
                            gi * g + j);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
        amax = fmaxf(amax, fabsf(v));
      }
      const size_t sidx = (size_t)gi * (size_t)n + (size_t)row;
      if (mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS) {
        uint16_t sb = scale_bits((hi - lo) / 15.0f, dtype);
        uint16_t zb = to_dtype(lo, dtype);
        double s = from_dtype(sb, dtype), z = from_dtype(zb, dtype);
        if (!isfinite(s) || !isfinite(z))
          return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                            "the %s of row %" PRId64 ", group %" PRId64 " (%g) is not representable in %s",
                            isfinite(s) ? "zero point" : "scale", row, gi, isfinite(s) ? (double)lo : (double)(hi - lo) / 15.0,
                            w4a16_dtype_name(dtype));
        scales[sidx] = sb;
        zeros[sidx] = zb;
        for (int64_t j = 0; j < g; ++j)
          codes[base + (size_t)j] = (uint8_t)clamp_code((load_weight(weights, wtype, base + (size_t)j) - z) / s);
      } else {
        uint16_t sb = scale_bits(amax / 7.0f, dtype);
        double s = from_dtype(sb, dtype);
        if (!isfinite(s))
          return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                            "the scale of row %" PRId64 ", group %" PRId64 " (%g) is not representable in %s", row, gi,
                            (double)amax / 7.0, w4a16_dtype_name(dtype));
        scales[sidx] = sb;
        for (int64_t j = 0; j < g; ++j)
          codes[base + (size_t)j] = (uint8_t)clamp_code(load_weight(weights, wtype, base + (size_t)j) / s + 8.0);
      }
    }
  }
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
