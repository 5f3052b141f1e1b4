// gather_k.cu - the act-order activation gather, out[m, k] = a[m, perm[k]] (w4a16_gather_k).
//
// A GPTQ act-order checkpoint stores its weight's K columns sorted by group (perm = argsort(g_idx),
// docs/DESIGN.md "Act-order"), so the product needs the activations' columns in that order too.
// The gather is a copy of 2-byte elements (the dtype does not matter): one thread writes one
// 16-byte vector of 8 consecutive output columns of one row, reading its 8 indices as two 16-byte
// loads and the 8 elements one by one (A is small at decode and L2-resident; its rows are not
// 16-byte aligned in general). An index outside [0, K) reads nothing and writes a NaN (0x7fff is a
// NaN in fp16 and bf16), so a bad permutation shows in the result instead of reading outside A.
//
// Programmatic dependent launch (sm_90): the kernel lets its dependent launch at once and reads
// the permutation - constant across the dependency, like the packed weights under w4a16.h's
// ordering contract - before griddepcontrol.wait; A is read after it. The GEMM that follows (a
// decode GEMV issues its first weight copies before its own wait) therefore starts streaming
// weights while this kernel waits for A's producer and copies, instead of after it. The launch
// carries the programmatic attribute only where the device runs an image compiled for compute >= 90
// (common/pdl.cuh: one that holds the wait).
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

#include "common/pdl.cuh"

namespace {

constexpr int kGatherThreads = 256;

__device__ __forceinline__ void w4a16_gather_k_load_perm(const int32_t *perm, int col, int idx[8]) {
  const int4 p0 = __ldg(reinterpret_cast<const int4 *>(perm + col));
  const int4 p1 = __ldg(reinterpret_cast<const int4 *>(perm + col + 4));
  idx[0] = p0.x, idx[1] = p0.y, idx[2] = p0.z, idx[3] = p0.w;
  idx[4] = p1.x, idx[5] = p1.y, idx[6] = p1.z, idx[7] = p1.w;
}

__global__ void __launch_bounds__(kGatherThreads)
w4a16_gather_k_kernel(const uint16_t *__restrict__ a, int64_t lda, const int32_t *__restrict__ perm,
                      int64_t m, int k, uint16_t *__restrict__ out, int64_t ldo) {
  w4a16_griddep_launch_dependents();
  const int vecs = k / 8;  // 8-column output vectors per row
  const int64_t total = m * vecs;
  const int64_t stride = (int64_t)gridDim.x * kGatherThreads;
  int64_t v = (int64_t)blockIdx.x * kGatherThreads + threadIdx.x;
  int idx[8];
  if (v < total) w4a16_gather_k_load_perm(perm, (int)(v % vecs) * 8, idx);  // before the wait
  w4a16_griddep_wait();  // A's producer has completed
  for (; v < total; v += stride) {
    const int64_t row = v / vecs;
    const int col = (int)(v - row * vecs) * 8;
    if (v >= stride) w4a16_gather_k_load_perm(perm, col, idx);  // later vectors of this thread
    const uint16_t *src = a + row * lda;
    uint32_t packed[4];
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
      const uint32_t lo = (unsigned)idx[i] < (unsigned)k ? src[idx[i]] : 0x7fffu;
      const uint32_t hi = (unsigned)idx[i + 1] < (unsigned)k ? src[idx[i + 1]] : 0x7fffu;
      packed[i / 2] = lo | (hi << 16);
    }
    *reinterpret_cast<uint4 *>(out + row * ldo + col) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  }
}

}  // namespace

extern "C" int w4a16_gather_k_launch(const void *a, int64_t lda, const int32_t *perm, int64_t m, int k, void *out,
                                     int64_t ldo, int sm_count, int pdl_allowed, void *stream) {
  static std::atomic<int> image_waits[64];
  return w4a16_launch_grid_stride(w4a16_gather_k_kernel, image_waits, m * (k / 8), kGatherThreads, sm_count,
                                  pdl_allowed, stream, (const uint16_t *)a, lda, perm, m, k, (uint16_t *)out, ldo);
}
