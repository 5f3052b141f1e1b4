/* half.c - IEEE binary16 and bfloat16 <-> float, round-to-nearest-even, NaN kept. */
#include <math.h>
#include <string.h>

#include "w4a16/w4a16.h"

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t w4a16_float_to_bf16(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float w4a16_bf16_to_float(uint16_t b) { return u2f((uint32_t)b << 16); }

uint16_t w4a16_float_to_half(float f) {
  uint32_t u = f2u(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);            /* NaN */
  if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);           /* overflow -> inf */
  if (absu < 0x38800000u) {                                              /* subnormal / zero */
    /* value = absf * 2^24 rounded to integer (ties to even) */
    float absf = u2f(absu);
    float scaled = absf * 16777216.0f;                                   /* exact */
    uint32_t q = (uint32_t)nearbyintf(scaled);                           /* RNE by default mode */
    return (uint16_t)(sign | q);
  }
  uint32_t exp = ((absu >> 23) - 112u) << 10;
  uint32_t mant = absu & 0x7fffffu;
  uint32_t h = exp | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h += 1u;
  return (uint16_t)(sign | h);
}

float w4a16_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return u2f(sign | 0x7f800000u | (mant << 13));
  return u2f(sign | ((exp + 112u) << 23) | (mant << 13));
}
