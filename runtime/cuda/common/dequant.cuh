// dequant.cuh - int4 -> fp16/bf16 conversion of one packed word (docs/LAYOUT.md).
//
// A packed 32-bit word holds 8 codes q in nibble order [e0,e2,e4,e6,e1,e3,e5,e7].
// u4x8_to_f16x8<SUB> / u4x8_to_bf16x8<SUB> return the four register pairs
// (e0,e1) (e2,e3) (e4,e5) (e6,e7) as 32-bit words holding (q - SUB) exactly,
// SUB = 8 for the symmetric modes, 0 for the zero-point mode.
// Method: OR the nibble under a magic exponent so the 16-bit float equals
// MAGIC + q exactly (fp16: 1024 + q, 0x6400; bf16: 128 + q, 0x4300), then one
// packed subtraction of (MAGIC + SUB). Shared by every family: plain integer and
// packed-float instructions available from sm80 on.
#ifndef W4A16_COMMON_DEQUANT_CUH
#define W4A16_COMMON_DEQUANT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

// The shift that turns k into its scale (zero) group row, k >> shift: log2(group) for the fine-grained
// groups (powers of two); 30 for one group row (group >= K: per-column scales, or zero points with
// group_size = K, where K need not be a power of two; k >> 30 is row 0 for every k <= W4A16_MAX_K).
// Shared by every family's host side and the kernels that derive it themselves.
static __host__ __device__ __forceinline__ int w4a16_group_shift(int group, int k) {
  if (group >= k) return 30;
  int s = 0;
  while (s < 30 && (1 << (s + 1)) <= group) ++s;
  return s;
}

// d = (a & b) | c in one instruction
static __device__ __forceinline__ uint32_t w4a16_lop3_and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <int SUB>
static __device__ __forceinline__ void w4a16_u4x8_to_f16x8(uint32_t w, uint32_t out[4]) {
  // fp16 1024 + SUB and 64 + SUB (the high nibble comes scaled by 16: 1024 + 16 q)
  const uint32_t kLoSub = (SUB == 8) ? 0x64086408u : 0x64006400u;  // 1032 / 1024
  const uint32_t kHiMul = 0x2c002c00u;                              // 1/16
  const uint32_t kHiSub = (SUB == 8) ? 0xd480d480u : 0xd400d400u;  // -72 / -64
  const uint32_t magic = 0x64006400u;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint32_t v = w >> (8 * h);
    uint32_t lo = w4a16_lop3_and_or(v, 0x000f000fu, magic);
    uint32_t hi = w4a16_lop3_and_or(v, 0x00f000f0u, magic);
    __half2 l = __hsub2(*reinterpret_cast<__half2 *>(&lo), *reinterpret_cast<const __half2 *>(&kLoSub));
    __half2 u = __hfma2(*reinterpret_cast<__half2 *>(&hi), *reinterpret_cast<const __half2 *>(&kHiMul),
                        *reinterpret_cast<const __half2 *>(&kHiSub));
    out[2 * h] = *reinterpret_cast<uint32_t *>(&l);
    out[2 * h + 1] = *reinterpret_cast<uint32_t *>(&u);
  }
}

template <int SUB>
static __device__ __forceinline__ void w4a16_u4x8_to_bf16x8(uint32_t w, uint32_t out[4]) {
  const uint32_t magic = 0x43004300u;                               // bf16 128
  const uint32_t kSub = (SUB == 8) ? 0x43084308u : 0x43004300u;     // 136 / 128
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t v = w4a16_lop3_and_or(w >> (4 * i), 0x000f000fu, magic);
    __nv_bfloat162 r = __hsub2(*reinterpret_cast<__nv_bfloat162 *>(&v),
                               *reinterpret_cast<const __nv_bfloat162 *>(&kSub));
    out[i] = *reinterpret_cast<uint32_t *>(&r);
  }
}

// The bf16 codes biased by the magic number, 128 + q, exact (no subtraction): for kernels that
// remove the bias inside their tensor-core accumulation instead (gemv.cuh: one extra mma with
// a constant -(128 + SUB) fragment per k16 step replaces four packed subtractions per word).
static __device__ __forceinline__ void w4a16_u4x8_to_bf16x8_biased(uint32_t w, uint32_t out[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = w4a16_lop3_and_or(w >> (4 * i), 0x000f000fu, 0x43004300u);
}

// The same for fp16: 1024 + q, exact (the sm90 family's post-scaled mainloop removes the bias
// with one more wgmma against a constant -(1024 + 8) fragment).
static __device__ __forceinline__ void w4a16_u4x8_to_f16x8_biased(uint32_t w, uint32_t out[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = w4a16_lop3_and_or(w >> (4 * i), 0x000f000fu, 0x64006400u);
}

// Per-column zero points as integer code offsets. With one zero point z and scale s a column and
// zq = -z / s, w = s q + z = s (q - zq); where zq is an integer r (GPTQ, AWQ and compressed-tensors
// checkpoints store integer zero points, z = -s zq), the codes come exact as q - r in one packed
// subtraction per register, MAGIC + q (one lop3) less MAGIC + r (both exact for |r| <= 120), and s is
// applied to the accumulator. w4a16_pcol_integer: r = -z / s rounded, and whether -z / s is r up to
// the rounding of z to the activation dtype (2^-8 of |r| for bf16, 2^-11 for fp16) with |r| <= 120;
// false for s = 0 and for an offset that is not finite. The quotient by __fdividef (2 ulp, no call
// to the IEEE division's slow path, whose registers spill in the sm90 consumers), which is exact
// enough for the test but returns 0 for |s| > 2^126: such scales are refused.
template <bool BF16>
static __device__ __forceinline__ bool w4a16_pcol_integer(float s, float z, float *r) {
  const float c = __fdividef(-z, s);
  *r = rintf(c);
  const float tol = (BF16 ? 0x1p-8f : 0x1p-11f) * fabsf(*r) + 0x1p-20f;
  return s != 0.f && fabsf(s) < 0x1p126f && isfinite(c) && fabsf(c - *r) <= tol && fabsf(*r) <= 120.f;
}

// The packed constant that takes integer offset r off the codes of row h of an A fragment's row
// pair (h = 0: the registers 0 and 2, the low nibbles of w4a16_u4x8_*_less; h = 1: 1 and 3): bf16
// 128 + r for both; fp16 1024 + r for row 0 and -(64 + r) for row 1, whose high nibbles come as
// 1024 + 16 q and are scaled by 1/16 in the same instruction.
template <bool BF16>
static __device__ __forceinline__ uint32_t w4a16_pcol_offset(float r, int h) {
  uint16_t bits;
  if (BF16) {
    const __nv_bfloat16 v = __float2bfloat16_rn(128.f + r);
    bits = *reinterpret_cast<const uint16_t *>(&v);
  } else {
    const __half v = __float2half_rn(h == 0 ? 1024.f + r : -(64.f + r));
    bits = *reinterpret_cast<const uint16_t *>(&v);
  }
  return (uint32_t)bits | (uint32_t)bits << 16;
}

// The codes of one packed word less the integer offsets of its two rows, exact: out[0], out[2]
// q - r0 of row 0 and out[1], out[3] q - r1 of row 1 (the register order of u4x8_to_*x8), with
// c0 = w4a16_pcol_offset(r0, 0) and c1 = w4a16_pcol_offset(r1, 1). Two instructions a register
// (fp16: the high nibbles scaled in the subtracting fma), the cost of the symmetric conversion.
static __device__ __forceinline__ void w4a16_u4x8_to_f16x8_less(uint32_t w, uint32_t c0, uint32_t c1,
                                                                 uint32_t out[4]) {
  const uint32_t kHiMul = 0x2c002c00u;  // 1/16
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint32_t v = w >> (8 * h);
    uint32_t lo = w4a16_lop3_and_or(v, 0x000f000fu, 0x64006400u);
    uint32_t hi = w4a16_lop3_and_or(v, 0x00f000f0u, 0x64006400u);
    __half2 l = __hsub2(*reinterpret_cast<__half2 *>(&lo), *reinterpret_cast<const __half2 *>(&c0));
    __half2 u = __hfma2(*reinterpret_cast<__half2 *>(&hi), *reinterpret_cast<const __half2 *>(&kHiMul),
                        *reinterpret_cast<const __half2 *>(&c1));
    out[2 * h] = *reinterpret_cast<uint32_t *>(&l);
    out[2 * h + 1] = *reinterpret_cast<uint32_t *>(&u);
  }
}

static __device__ __forceinline__ void w4a16_u4x8_to_bf16x8_less(uint32_t w, uint32_t c0, uint32_t c1,
                                                                  uint32_t out[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t v = w4a16_lop3_and_or(w >> (4 * i), 0x000f000fu, 0x43004300u);
    const uint32_t c = (i & 1) ? c1 : c0;
    __nv_bfloat162 r = __hsub2(*reinterpret_cast<__nv_bfloat162 *>(&v), *reinterpret_cast<const __nv_bfloat162 *>(&c));
    out[i] = *reinterpret_cast<uint32_t *>(&r);
  }
}

#endif
