// gather_rows.cu - the grouped GEMM's row gather, out[r, :] = a[row_index[r], :] for r < rows
// (runtime/grouped.c: before a Hopper-form kernel whose token tile the in-kernel gather feeds worst).
//
// A mixture-of-experts layer's first GEMM reads each token's row once per expert the router chose,
// in expert order: row r of the grouped problem is token row_index[r]. The gather is a copy of
// 2-byte elements (the dtype does not matter): one thread writes one 16-byte vector of 8
// consecutive columns of one output row, read as one 16-byte load (A is 16-byte aligned and its
// row stride lda a multiple of 8 elements: w4a16_grouped_check_pointers, the dense problem's lda
// rule). An index outside [0, a_rows) reads nothing and writes zeros, as the in-kernel gather does
// (sm90/sm90_producer.cuh, gather_warps); the GEMM's status word reports it (grouped_common.cuh).
// Rows past offsets[E] are gathered too (their indices are not the caller's to keep valid: they read
// zeros where out of range), so the kernel never reads the offsets.
//
// Programmatic dependent launch (sm_90): the kernel lets its dependent launch at once (the GEMM
// after it waits for its completion before it reads anything) and waits for the kernel before it
// before reading the row index or A.
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

#include "common/pdl.cuh"

namespace {

constexpr int kRowGatherThreads = 256;

__global__ void __launch_bounds__(kRowGatherThreads)
w4a16_gather_rows_kernel(const uint16_t *__restrict__ a, int64_t lda, const int32_t *__restrict__ row_index,
                         int64_t rows, int a_rows, int k, uint16_t *__restrict__ out) {
  w4a16_griddep_launch_dependents();
  w4a16_griddep_wait();  // the row index's and A's producers have completed
  const int vecs = k / 8;  // 8-column vectors a row
  const int64_t total = rows * vecs;
  const int64_t stride = (int64_t)gridDim.x * kRowGatherThreads;
  for (int64_t v = (int64_t)blockIdx.x * kRowGatherThreads + threadIdx.x; v < total; v += stride) {
    const int64_t r = v / vecs;
    const int col = (int)(v - r * vecs) * 8;
    const int t = __ldg(row_index + r);
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (t >= 0 && t < a_rows) x = __ldg(reinterpret_cast<const uint4 *>(a + (int64_t)t * lda + col));
    *reinterpret_cast<uint4 *>(out + r * (int64_t)k + col) = x;
  }
}

}  // namespace

extern "C" int w4a16_gather_rows_launch(const void *a, int64_t lda, const int32_t *row_index, int64_t rows,
                                        int a_rows, int k, void *out, int sm_count, int pdl_allowed,
                                        void *stream) {
  static std::atomic<int> image_waits[64];
  return w4a16_launch_grid_stride(w4a16_gather_rows_kernel, image_waits, rows * (k / 8), kRowGatherThreads,
                                  sm_count, pdl_allowed, stream, (const uint16_t *)a, lda, row_index, rows, a_rows,
                                  k, (uint16_t *)out);
}
