/* quantize.c - round-to-nearest 4-bit quantization of host weights (all three modes), with an
   optional search of each group's range that minimises the squared error of the dequantized
   weights (GPTQ's "mse" grid: ranges p x [min, max] for p = 1, 1 - 1/grid, ...). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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
  return w4a16_quantize_ex(weights, wtype, n, k, mode, group_size, dtype, NULL, codes, scales, zeros);
}

w4a16_status w4a16_quantize_ex(const void *weights, w4a16_host_type wtype, int64_t n, int64_t k,
                               w4a16_quant_mode mode, int group_size, w4a16_dtype dtype,
                               const w4a16_quantize_options *options, uint8_t *codes, uint16_t *scales,
                               uint16_t *zeros) {
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
  if (options && options->struct_size != sizeof(w4a16_quantize_options))
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                      "options->struct_size is %zu, expected sizeof(w4a16_quantize_options) = %zu",
                      options->struct_size, sizeof(w4a16_quantize_options));
  const int search = options && options->clip_search;
  const int grid = search && options->grid ? options->grid : 100;
  const float shrink = search && options->max_shrink != 0.0f ? options->max_shrink : 0.8f;
  if (search && (grid < 1 || grid > 10000))
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "options->grid = %d: must be 0 (100) or 1..10000", grid);
  if (search && !(shrink > 0.0f && shrink < 1.0f))
    return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "options->max_shrink = %g: must be 0 (0.8) or in (0, 1)",
                      (double)shrink);
  /* the range factors p tried: 1, 1 - 1/grid, ... while i < max_shrink x grid (GPTQ's mse grid) */
  const int tries = (int)(shrink * (float)grid);
  const int candidates = search && tries > 1 ? tries : 1;
  const int zp = mode == W4A16_FINEGRAINED_SCALE_AND_ZEROS;
  const int64_t groups = k / g;
  float *v = malloc(sizeof(float) * (size_t)g);
  if (!v) return w4a16_fail(W4A16_STATUS_OUT_OF_MEMORY, "no memory for a group of %" PRId64 " weights", g);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      const size_t base = (size_t)row * (size_t)k + (size_t)(gi * g);
      float lo = INFINITY, hi = -INFINITY, amax = 0.0f;
      for (int64_t j = 0; j < g; ++j) {
        v[j] = load_weight(weights, wtype, base + (size_t)j);
        if (!isfinite(v[j])) {
          free(v);
          return w4a16_fail(W4A16_STATUS_INVALID_VALUE, "weight [%" PRId64 ", %" PRId64 "] is not finite", row,
                            gi * g + j);
        }
        lo = fminf(lo, v[j]);
        hi = fmaxf(hi, v[j]);
        amax = fmaxf(amax, fabsf(v[j]));
      }
      uint16_t best_s = 0, best_z = 0;
      double best_err = INFINITY;
      for (int c = 0; c < candidates; ++c) {
        const float p = 1.0f - (float)c / (float)grid;
        uint16_t sb, zb = 0;
        if (zp) {
          sb = scale_bits((p * hi - p * lo) / 15.0f, dtype);
          zb = to_dtype(p * lo, dtype);
        } else {
          sb = scale_bits(p * amax / 7.5f, dtype);
        }
        const double s = from_dtype(sb, dtype), z = zp ? from_dtype(zb, dtype) : 0.0;
        if (!isfinite(s) || !isfinite(z)) {
          if (c > 0) continue; /* a shrunken range that overflows: skip it */
          free(v);
          return w4a16_fail(W4A16_STATUS_INVALID_VALUE,
                            "the %s of row %" PRId64 ", group %" PRId64 " (%g) is not representable in %s",
                            isfinite(s) ? "zero point" : "scale", row, gi,
                            !isfinite(s) ? (zp ? (double)(hi - lo) / 15.0 : (double)amax / 7.5) : (double)lo,
                            w4a16_dtype_name(dtype));
        }
        double err = 0.0;
        if (candidates > 1)
          for (int64_t j = 0; j < g; ++j) {
            const int q = zp ? clamp_code((v[j] - z) / s) : clamp_code(v[j] / s + 8.0);
            const double d = (zp ? s * q + z : s * (q - 8)) - v[j];
            err += d * d;
            if (err >= best_err) break; /* already no better: the rest cannot help it */
          }
        if (err < best_err) {
          best_err = err;
          best_s = sb;
          best_z = zb;
        }
      }
      const size_t sidx = (size_t)gi * (size_t)n + (size_t)row;
      const double s = from_dtype(best_s, dtype), z = zp ? from_dtype(best_z, dtype) : 0.0;
      scales[sidx] = best_s;
      if (zp) zeros[sidx] = best_z;
      for (int64_t j = 0; j < g; ++j)
        codes[base + (size_t)j] = (uint8_t)(zp ? clamp_code((v[j] - z) / s) : clamp_code(v[j] / s + 8.0));
    }
  }
  free(v);
  w4a16_clear_error();
  return W4A16_STATUS_OK;
}
